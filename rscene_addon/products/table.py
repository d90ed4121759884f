"""The product table: every product a render can make, in one place (pure).

A *product* is what a user asks for (``--products rgb,depth,flow``); it makes one or more *layers*,
each a file per sensor and frame at ``{sensor}/{layer}_{frame:05d}.{ext}``. Every other place reads
this table: the planner (which products exist, aliases, which are opt-in, which sensors make them),
the Blender side (what work a product needs: a Cycles render, the pixel-centre ray cast, neighbouring
frames), the writers (:mod:`.write`: format, units, noise) and the docs (``docs/ground_truth.md``).

The Blender side (``render/``) returns ``{layer: value}`` per camera and frame; :func:`.write.write_frame`
writes the layers of the sensor's products found there (and, with ``previews``, a picture of each layer
that names a ``preview``). Adding a product is one row here, its producer
on the Blender side (a key in the returned dict) and, when no existing writer fits, a writer in
:mod:`.write`. ``material`` below is an example: a row, the material index per triangle in
``render/geometry_pass.py``, and the ``npy`` writer.

``needs`` (what the renderer must do for it):

* ``cycles`` a Cycles render of the frame;
* ``pixel_truth`` the per-pixel truth: one ray cast through every pixel centre (``exact_ids``, the
  default) or Cycles' own passes (``--soft-ids``);
* ``rays`` the pixel-centre ray cast always (geometric products);
* ``motion`` the scene one frame step before and after.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALIASES", "Layer", "PRODUCTS", "Product", "camera_defaults", "canonical", "products_needing",
]


@dataclass(frozen=True)
class Layer:
    """One file per frame: ``name`` (file stem), ``writer`` (a key of ``write.WRITERS``, which fixes the
    extension), ``units`` (for the manifest; ``{fields}`` filled from the run: ``bits``, ``view``,
    ``step``), ``noise`` (``"image"``/``"depth"``: the sensor record's noise is added before writing),
    ``option`` (a ``RenderOptions`` attribute that must be true, e.g. ``range_image``), ``layout``
    (what the array is, for the docs), ``preview`` (a colour mapping of :mod:`.preview`: with
    ``RenderOptions.previews`` the layer also writes ``{name}_preview`` as an 8-bit RGB PNG)."""

    name: str
    writer: str
    units: str
    layout: str = ""
    noise: str | None = None
    option: str | None = None
    preview: str | None = None


@dataclass(frozen=True)
class Product:
    """A row: ``name``, the ``sensor`` kind that makes it (``camera``, ``lidar``, ``imu``; ``folder``
    = written from a finished render folder), its ``layers``, ``needs`` (see the module note),
    ``opt_in`` (an image sensor makes it only when asked), ``aliases`` and, for folder products, the
    render products it ``reads``."""

    name: str
    sensor: str
    layers: tuple = ()
    needs: frozenset = frozenset()
    opt_in: bool = False
    aliases: tuple = ()
    reads: tuple = ()
    summary: str = ""
    label: str = ""  # the render panel's switch

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " ").title())


_LIDAR_UNITS = ("x y z m in the sensor frame at firing time, intensity |cos incidence|, t s (scene time), "
                "ring 0 = lowest, object_id instance id (-1 none), range m (with the record's noise)")

_ROWS = (
    Product("rgb", "camera", label="RGB", needs=frozenset({"cycles"}), aliases=("color",),
            summary="colour through the scene's view transform (PNG)",
            layers=(Layer("rgb", "png", "display-referred RGB, {bits}-bit, view transform {view!r}",
                          "(H, W, 3) uint8 or uint16", noise="image"),
                    Layer("rgb", "jpg", "the same pixels (8-bit) as baseline JPEG, quality 95, 4:4:4 (BOP's "
                          "train_pbr images)", "(H, W, 3) uint8", noise="image", option="rgb_jpeg"))),
    Product("depth", "camera", needs=frozenset({"pixel_truth"}),
            summary="planar depth along the optical axis (m)",
            layers=(Layer("depth", "npy", "m, planar depth along +z (OpenCV); background +inf",
                          "(H, W) float32", noise="depth", preview="depth"),
                    Layer("depth", "exr", "m, planar depth, channel Y (OpenCV reads it); background +inf; "
                          "without noise", "(H, W) float32"),
                    Layer("range", "npy", "m, distance to the camera centre; background +inf",
                          "(H, W) float32", option="range_image"))),
    Product("segmentation", "camera", label="IDs", needs=frozenset({"pixel_truth"}),
            aliases=("ids", "instance", "semantic"),
            summary="instance and class ids per pixel, visible instances with 2D/3D boxes",
            layers=(Layer("instance", "npy", "instance id; background -1", "(H, W) int32", preview="instance"),
                    Layer("semantic", "npy", "class id; background/unlabelled 0", "(H, W) int32",
                          preview="class"),
                    Layer("instances", "json", "bbox2d px [x0, y0, x1, y1) top-left origin; bbox3d m world"
                          "{amodal_note}", "(N,) visible instances"))),
    Product("normal", "camera", label="Normals", needs=frozenset({"pixel_truth"}), aliases=("normals",),
            summary="unit surface normal in the OpenCV camera frame",
            layers=(Layer("normal", "npy", "unit normal, OpenCV camera frame; background 0",
                          "(H, W, 3) float32", preview="normal"),)),
    Product("cryptomatte", "camera", needs=frozenset({"cycles"}), opt_in=True,
            summary="anti-aliased per-instance coverage (Cycles' Cryptomatte, --cryptomatte K)",
            layers=(Layer("cryptomatte_id", "npy", "instance id per coverage rank; -1 none or not an entity",
                          "(H, W, K) int32"),
                    Layer("cryptomatte_coverage", "npy", "fraction of the pixel covered per rank, largest "
                          "first (1 px box filter)", "(H, W, K) float32"))),
    Product("flow", "camera", needs=frozenset({"rays", "motion"}), opt_in=True, aliases=("optical_flow",),
            summary="forward and backward optical flow (px)",
            layers=(Layer("flow_forward", "npy", "px (u right, v down): where the point seen in this pixel's "
                          "centre is at frame + {step}, minus the pixel centre; camera and object motion; "
                          "background at infinity; NaN where undefined", "(H, W, 2) float32", preview="flow"),
                    Layer("flow_backward", "npy", "px (u right, v down): where the point seen in this pixel's "
                          "centre is at frame - {step}, minus the pixel centre; camera and object motion; "
                          "background at infinity; NaN where undefined", "(H, W, 2) float32", preview="flow"))),
    Product("object_coords", "camera", label="Object Coords", needs=frozenset({"rays"}), opt_in=True,
            aliases=("object_coordinates", "nocs", "coords"),
            summary="object coordinates (m) and NOCS per pixel",
            layers=(Layer("object_coords", "npy", "m, the pixel's hit point in its object's frame (node "
                          "object, unscaled); background NaN", "(H, W, 3) float32"),
                    Layer("nocs", "npy", "NOCS in [0, 1]: object coordinates centred on the object's tight "
                          "box, divided by its diagonal, + 0.5; background NaN", "(H, W, 3) float32"))),
    Product("amodal", "camera", needs=frozenset({"rays"}), opt_in=True, aliases=("amodal_masks", "visibility"),
            summary="every instance's unoccluded silhouette; BOP visibility in the instances JSON",
            layers=(Layer("amodal", "npz", "npz: ids (N,) int32 instance ids, masks (N, H, W) bool "
                          "unoccluded silhouettes at pixel centres", "ids (N,), masks (N, H, W) bool"),)),
    Product("material", "camera", needs=frozenset({"rays"}), opt_in=True, aliases=("material_id",),
            summary="surface material per pixel (ids in metadata.materials)",
            layers=(Layer("material", "npy", "material id (metadata.materials); background and no "
                          "material -1", "(H, W) int32"),)),
    Product("lidar", "lidar", summary="point clouds per sweep (npy, PLY, PCD)",
            layers=tuple(Layer("points", f"points.{ext}", _LIDAR_UNITS, layout) for ext, layout in (
                ("npy", "(N,) structured: x y z intensity t ring object_id range"),
                ("ply", "(N,) binary little-endian PLY, the same fields"),
                ("pcd", "(N,) binary PCD, the same fields; VIEWPOINT identity (the sensor frame)")))),
    Product("imu", "imu", label="IMU", summary="specific force and angular velocity per tick (CSV)",
            layers=(Layer("imu", "csv", "time s, specific force m/s^2 (sensor frame), angular velocity rad/s "
                          "(sensor frame)", "(M, 7) float64"),)),
    Product("passes", "camera", needs=frozenset({"cycles"}), opt_in=True,
            summary="Cycles' multilayer EXR as rendered (--keep-exr)",
            layers=(Layer("passes", "move", "Cycles passes (Combined linear RGBA{passes_note})",
                          "(H, W, C) float32"),)),
    Product("coco", "folder", label="COCO", reads=("rgb", "segmentation"),
            summary="COCO instances JSON per camera, written after the frames"),
    Product("bop", "folder", label="BOP", reads=("rgb", "depth", "segmentation"),
            summary="BOP train_pbr scenes, models and models_info, written after the frames"),
)

PRODUCTS: dict[str, Product] = {row.name: row for row in _ROWS}
ALIASES: dict[str, str] = {alias: row.name for row in _ROWS for alias in row.aliases}


def canonical(name: str) -> str:
    """A product name or alias -> the product's name; raises ``ValueError`` naming the choices."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in PRODUCTS:
        raise ValueError(f"unknown product {name!r}; use {', '.join(sorted(set(PRODUCTS) | set(ALIASES)))}")
    return key


def camera_defaults() -> tuple:
    """What a camera makes unless told otherwise: the camera products that are not opt-in."""
    return tuple(p.name for p in _ROWS if p.sensor == "camera" and not p.opt_in)


def products_needing(need: str, among=None) -> set:
    """Names of the products (of ``among``, default all) with ``need`` in their needs."""
    names = PRODUCTS if among is None else among
    return {n for n in names if n in PRODUCTS and need in PRODUCTS[n].needs}
