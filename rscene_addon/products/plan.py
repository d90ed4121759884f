"""What to render: one :class:`SensorSpec` per ``camera``/``sensor`` record, and the run's options (pure).

A spec says which *products* a sensor makes (``rgb``, ``depth``, ``segmentation``, ``normal``,
``lidar``, ``imu``), its intrinsics, noise, mount pose and lidar pattern, all read from the record
here so the Blender side never parses fields. Products by kind:

==================  ===================================================================
``camera`` record   rgb, depth, segmentation, normal (one Cycles render makes them all)
sensor ``rgb``      rgb (+ segmentation with ``segmentation=true``)
sensor ``depth``    depth (+ segmentation)
sensor ``rgb_depth`` rgb, depth (+ segmentation)
sensor ``segmentation`` segmentation
sensor ``lidar``    lidar
sensor ``imu``      imu
Blender camera      rgb, depth, segmentation, normal
==================  ===================================================================

``force_torque`` and unknown kinds make nothing (the caller is told). Every product, its aliases and
whether it is opt-in come from the product table (:mod:`.table`): an image sensor makes the opt-in
ones (flow, object_coords, amodal, material) that ``RenderOptions.products`` names, ``cryptomatte``
when ``RenderOptions.cryptomatte`` asks for it (and ``products``, if given, includes it) and
``passes`` with ``RenderOptions.keep_exr``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from . import table
from ..sensors.intrinsics import CameraIntrinsics, OrthographicIntrinsics
from ..sensors.manifest import safe_sensor_name

__all__ = [
    "CAMERA_PRODUCTS", "PRESET_SAMPLES", "PRODUCTS", "RenderOptions", "SensorSpec",
    "parse_products", "parse_resolution", "resized", "samples_for_preset", "select_specs", "spec_from_camera_record",
    "spec_from_sensor_record", "specs_from_document", "unmade_products",
]

CAMERA_PRODUCTS = table.camera_defaults()  # rgb, depth, segmentation, normal
_SENSOR_PRODUCTS = {
    "rgb": ("rgb",),
    "depth": ("depth",),
    "rgb_depth": ("rgb", "depth"),
    "segmentation": ("segmentation",),
    "lidar": ("lidar",),
    "imu": ("imu",),
}
OPT_IN_IMAGE_PRODUCTS = tuple(p.name for p in table.PRODUCTS.values() if p.sensor == "camera" and p.opt_in)
IMAGE_PRODUCTS = frozenset(p.name for p in table.PRODUCTS.values() if p.sensor == "camera")
PRODUCTS = frozenset(table.PRODUCTS)
# asked for by name (--products); cryptomatte and passes are switched on by their own options
_NAMED_OPT_IN = tuple(p for p in OPT_IN_IMAGE_PRODUCTS if p not in ("cryptomatte", "passes"))


def parse_products(value) -> frozenset | None:
    """Product names (comma text or iterable, aliases allowed) -> canonical set; None/"" -> None."""
    if value is None or value == "":
        return None
    names = split_names(value) if isinstance(value, str) else [str(v).strip() for v in value]
    return frozenset(table.canonical(name) for name in names)
CRYPTOMATTE_LEVELS = (2, 16)  # Blender's range for view_layer.pass_cryptomatte_depth

# rayrai_render preset -> Cycles samples per pixel (before the caller's cap). rayrai's presets are
# raster quality levels; these are the path-tracing budgets that look comparable on CPU.
PRESET_SAMPLES = {"fast": 16, "balanced": 64, "high": 256, "ultra": 1024, "custom": 128}


def samples_for_preset(preset: str | None, cap: int | None = None, fallback: int = 64) -> int:
    """Samples for a rayrai preset name (``fallback`` when unknown/None), capped by ``cap`` (>= 1)."""
    samples = PRESET_SAMPLES.get(str(preset).lower(), fallback) if preset else fallback
    if cap is not None:
        if int(cap) < 1:
            raise ValueError(f"samples must be at least 1, got {cap}")
        samples = min(samples, int(cap))
    return max(1, int(samples))


@dataclass
class RenderOptions:
    """Run-wide settings (defaults suit CPU rendering).

    ``samples`` caps the preset's samples; ``exact_ids`` takes depth, ids and normals from one ray cast
    through every pixel centre (``render.geometry_pass``) while Cycles renders RGB anti-aliased with
    the scene's pixel filter; ``False`` takes them from Cycles' passes (its first, jittered sample:
    about 1 in 1,700 edge pixels then takes a neighbour's id). ``products`` restricts what is made
    and switches on the opt-in ones (e.g. ``{"depth", "segmentation", "flow"}``: no RGB, no Cycles
    render at all); aliases are accepted (see :func:`parse_products`); ``range_image`` adds Euclidean
    range next to planar depth; ``keep_exr`` keeps Cycles' multilayer EXR (layer ``passes``); ``lidar_formats`` picks the point
    cloud files; ``rgb_bit_depth`` is 8 or 16; ``raycaster`` is the lidar's ray casting backend
    (``"auto"``: Embree when the ``embreex`` wheel imports, else ``"bvh"``; see ``render.caster``).
    ``cryptomatte`` > 0 adds the ``cryptomatte`` product to every image sensor: Cycles' Cryptomatte
    object pass with that many ranks (levels, 2..16) per pixel, rendered with a 1-pixel box filter so
    that a coverage is the pixel's area fraction (RGB then uses that filter too). ``seed`` (a dataset
    variation) gives every noisy sensor the seed ``sensors.noise.variation_seed(noiseSeed, seed)``.
    """

    samples: int | None = None
    rgb_bit_depth: int = 8
    denoise: bool = False
    device: str = "CPU"
    exact_ids: bool = True
    range_image: bool = False
    keep_exr: bool = False
    lidar_formats: tuple = ("npy", "ply", "pcd")
    products: frozenset | None = None
    persistent_data: bool = True
    raycaster: str = "auto"
    cryptomatte: int = 0
    seed: int | None = None  # a dataset variation's seed: mixed into every sensor's noise seed
    threads: int | None = None  # Cycles render threads (None: Blender's automatic, every core)
    annotate_static: bool = False  # COCO/BOP: annotate static background (ground, terrain, static bodies) too
    resolution: tuple | None = None  # (W, H) px for every image sensor, K scaled with the pixel grid
    scale: float | None = None  # percent of each image sensor's own size (Blender's resolution %)
    previews: bool = False  # colourised PNGs beside depth, ids, normals and flow (layers ``*_preview``)
    # every product ``products`` names must be made by a chosen sensor (the command line), else the run
    # fails naming them; False: ``products`` filters what sensors make (the panel's switches), only
    # COCO/BOP must still find a camera making what they read
    require_products: bool = True

    def __post_init__(self) -> None:
        if self.resolution is not None:
            self.resolution = parse_resolution(self.resolution)
        if self.scale is not None:
            self.scale = float(self.scale)
            if not (0.0 < self.scale <= 10000.0 and math.isfinite(self.scale)):
                raise ValueError(f"scale must be a percentage in (0, 10000], got {self.scale:g}")
            if self.resolution is not None:
                raise ValueError("give either a resolution or a scale, not both")
        if self.rgb_bit_depth not in (8, 16):
            raise ValueError(f"rgb_bit_depth must be 8 or 16, got {self.rgb_bit_depth}")
        if self.threads is not None and int(self.threads) < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")
        if self.samples is not None and int(self.samples) < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        unknown = set(self.lidar_formats) - {"npy", "ply", "pcd"}
        if unknown:
            raise ValueError(f"unknown lidar formats {sorted(unknown)}; use npy, ply, pcd")
        if self.products is not None:
            self.products = parse_products(self.products) or frozenset()
        if self.raycaster not in ("auto", "embree", "bvh"):
            raise ValueError(f"unknown raycaster {self.raycaster!r}; use auto, embree, bvh")
        lo, hi = CRYPTOMATTE_LEVELS
        if self.cryptomatte and not lo <= int(self.cryptomatte) <= hi:
            raise ValueError(f"cryptomatte levels must be 0 (off) or {lo}..{hi}, got {self.cryptomatte}")

    @property
    def rgb_jpeg(self) -> bool:
        """RGB also as JPEG (the ``rgb.jpg`` layer): BOP's train_pbr images are JPEG."""
        return bool(self.products and "bop" in self.products)

    def opt_in_products(self) -> tuple:
        """Opt-in products these options ask for."""
        chosen = ("cryptomatte",) if self.cryptomatte else ()
        chosen += ("passes",) if self.keep_exr else ()
        return chosen + tuple(p for p in _NAMED_OPT_IN if self.products and p in self.products)


@dataclass(frozen=True)
class SensorSpec:
    """One sensor to render. ``name`` is the manifest/folder name (a record path, or a Blender camera's
    object name); ``source`` is ``"camera"`` / ``"sensor"`` (records, ``uid`` = index in the source
    document's items) or ``"blender"`` (``object_name``). Mount pose: RaiSim frame (+x forward,
    +z up), metres and w,x,y,z, relative to the parent body's unscaled frame (or the world)."""

    name: str
    kind: str
    source: str
    products: tuple
    uid: int = -1
    record_id: str = ""
    object_name: str = ""
    enabled: bool = True
    intrinsics: CameraIntrinsics | OrthographicIntrinsics | None = None
    near: float = 0.05
    far: float = 100.0
    noise_mean: float = 0.0
    noise_stddev: float = 0.0
    noise_seed: int = 0
    update_rate: float = 30.0
    parent: str = ""
    mount_position: tuple = (0.0, 0.0, 0.0)
    mount_quaternion: tuple = (1.0, 0.0, 0.0, 0.0)
    lidar: dict = field(default_factory=dict)
    notes: tuple = ()  # warnings about how the record is rendered
    native_size: tuple = ()  # (W, H) of the record/camera when rendered at another size (--resolution, --scale)

    @property
    def folder(self) -> str:
        return safe_sensor_name(self.name)

    @property
    def is_camera(self) -> bool:
        return any(p in IMAGE_PRODUCTS for p in self.products)

    @property
    def has_noise(self) -> bool:
        return self.noise_stddev > 0.0 or self.noise_mean != 0.0

    def manifest_kind(self) -> str:
        return self.kind

    def properties(self) -> dict:
        """Plain values for the manifest's sensor entry."""
        props = {"source": self.source, "products": list(self.products), "update_rate_hz": self.update_rate}
        if self.record_id:
            props["record_id"] = self.record_id
        if self.parent:
            props["parent"] = self.parent
        if self.source == "sensor":
            props["mount_position"] = list(self.mount_position)
            props["mount_quaternion_wxyz"] = list(self.mount_quaternion)
        if self.has_noise or self.noise_seed:
            props["noise"] = {"mean": self.noise_mean, "stddev": self.noise_stddev, "seed": self.noise_seed}
        if self.lidar:
            props["lidar"] = dict(self.lidar)
        if self.native_size:
            props["native_resolution"] = list(self.native_size)
        return props

    def with_products(self, allowed, opt_in=()) -> SensorSpec:
        """Products restricted to ``allowed`` (None: all), plus the ``opt_in`` image products when this
        sensor renders images."""
        products = self.products
        if any(p in IMAGE_PRODUCTS for p in products):
            products = products + tuple(p for p in opt_in if p in OPT_IN_IMAGE_PRODUCTS and p not in products)
        if allowed is not None:  # keep_exr keeps Cycles' file whatever products were named
            products = tuple(p for p in products if p in allowed or p == "passes")
        return self if products == self.products else replace(self, products=products)


def _float(record, name: str, default: float = 0.0) -> float:
    value = record.get(name)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


def spec_from_camera_record(record, uid: int) -> SensorSpec:
    """A ``camera`` record: K from ``verticalFov`` (and ``horizontalFov`` when > 0); with
    ``projection=orthographic`` an orthographic view ``orthoScale`` metres across the image's larger
    dimension (Blender's ``ortho_scale``; the fields of view are then unused)."""
    width, height = int(record.get("width")), int(record.get("height"))
    notes = ()
    if str(record.get("projection") or "").lower().startswith("ortho"):
        intrinsics = OrthographicIntrinsics(width, height, _float(record, "orthoScale", 10.0))
    else:
        intrinsics = CameraIntrinsics.from_fov(width, height, _float(record, "verticalFov", 60.0),
                                               _float(record, "horizontalFov"))
    return SensorSpec(
        name=record.path, kind="camera", source="camera", products=CAMERA_PRODUCTS, uid=uid,
        record_id=record.id or "", enabled=bool(record.get("enabled")), intrinsics=intrinsics,
        near=_float(record, "near", 0.05), far=_float(record, "far", 100.0),
        mount_position=tuple(record.get("position")), mount_quaternion=tuple(record.get("quaternion")),
        notes=notes,
    )


def spec_from_sensor_record(record, uid: int) -> SensorSpec:
    """A ``sensor`` record: calibration wins over the field of view (see ``CameraIntrinsics``)."""
    kind = str(record.get("kind") or "rgb").lower()
    products = _SENSOR_PRODUCTS.get(kind, ())
    notes = () if products else (f"{record.path}: sensor kind {kind!r} is not rendered",)
    if kind in ("rgb", "depth", "rgb_depth") and record.get("segmentation"):
        products = products + ("segmentation",)
    common = dict(
        name=record.path, kind=kind, source="sensor", products=products, uid=uid, record_id=record.id or "",
        enabled=bool(record.get("enabled")), noise_mean=_float(record, "noiseMean"),
        noise_stddev=max(_float(record, "noiseStddev"), 0.0), noise_seed=int(record.get("noiseSeed") or 0),
        update_rate=_float(record, "updateRate", 30.0), parent=str(record.get("parent") or ""),
        mount_position=tuple(record.get("position")), mount_quaternion=tuple(record.get("quaternion")),
        near=_float(record, "nearPlane", 0.05), far=_float(record, "farPlane", 100.0),
    )
    intrinsics = None
    lidar = {}
    if any(p in IMAGE_PRODUCTS for p in products):
        intrinsics = CameraIntrinsics.from_sensor_fields(
            int(record.get("width")), int(record.get("height")), _float(record, "verticalFov", 60.0),
            _float(record, "horizontalFov"), _float(record, "calibrationFx"), _float(record, "calibrationFy"),
            _float(record, "calibrationCx"), _float(record, "calibrationCy"))
    if kind == "lidar":
        hfov = _float(record, "horizontalFov")
        lidar = {
            "channels": int(record.get("lidarChannels") or 0),
            "samples_per_revolution": int(record.get("lidarSamples") or 0),
            "vertical_fov_deg": _float(record, "lidarVerticalFov"),
            "horizontal_fov_deg": hfov if 0.0 < hfov <= 360.0 else 360.0,
            "min_range": max(_float(record, "lidarMinRange"), 0.0),
            "max_range": _float(record, "lidarMaxRange"),
        }
    return SensorSpec(intrinsics=intrinsics, lidar=lidar, notes=notes, **common)


def specs_from_document(doc) -> list[SensorSpec]:
    """Specs for every ``camera`` and ``sensor`` record of a parsed document (enabled or not), in file
    order; ``uid`` is the record's index in ``doc.items`` (what the importer stores as ``ob.rscene.uid``)."""
    specs = []
    for uid, item in enumerate(doc.items):
        tag = getattr(item, "tag", None)
        if tag == "camera":
            specs.append(spec_from_camera_record(item, uid))
        elif tag == "sensor":
            specs.append(spec_from_sensor_record(item, uid))
    return specs


def _keys(spec: SensorSpec) -> set[str]:
    keys = {spec.name, spec.folder}
    if spec.record_id:
        keys.add(spec.record_id)
    if spec.object_name:
        keys.add(spec.object_name)
    base = spec.name.rstrip("/").rsplit("/", 1)[-1]
    if base:
        keys.add(base)
    return keys


def select_specs(specs: list[SensorSpec], names=None) -> tuple[list[SensorSpec], list[str]]:
    """Pick specs: all enabled ones that make something when ``names`` is None/empty; otherwise each
    name (path, folder name, record id or last path segment) picks its specs, disabled or not.
    Returns ``(chosen in the order of specs, names that matched nothing)``."""
    if not names:
        return [s for s in specs if s.enabled and s.products], []
    wanted = [n.strip() for n in names if n and n.strip()]
    chosen, unmatched = set(), []
    for name in wanted:
        hits = [i for i, s in enumerate(specs) if name in _keys(s)]
        exact = [i for i in hits if specs[i].name == name]
        hits = exact or hits
        if not hits:
            unmatched.append(name)
        chosen.update(hits)
    return [s for i, s in enumerate(specs) if i in chosen], unmatched


def parse_resolution(value) -> tuple[int, int]:
    """``"320x240"`` or ``(320, 240)`` -> ``(320, 240)``; raises ``ValueError`` naming the form."""
    try:
        if isinstance(value, str):
            w, h = value.lower().replace("*", "x").split("x")
        else:
            w, h = value
        size = (int(w), int(h))
    except (TypeError, ValueError):
        raise ValueError(f"resolution must be WIDTHxHEIGHT in pixels, e.g. 320x240, got {value!r}") from None
    if min(size) < 1 or max(size) > 65536:
        raise ValueError(f"resolution must be 1..65536 pixels each way, got {size[0]}x{size[1]}")
    return size


def resized(spec: SensorSpec, options: RenderOptions, percent: float = 100.0) -> SensorSpec:
    """``spec`` at ``options.resolution`` or at ``options.scale`` % of its own size (None: ``percent``,
    a Blender camera's own resolution %); sizes at a percentage are truncated as Blender does
    (``int(W * pct / 100)``). K follows the pixel grid (``CameraIntrinsics.resized``); a perspective
    view whose aspect ratio changes gets a note (non-square pixels)."""
    k = spec.intrinsics
    if k is None:
        return spec
    if options.resolution is not None:
        size = options.resolution
    else:
        pct = options.scale if options.scale is not None else percent
        size = (max(1, int(k.width * pct / 100)), max(1, int(k.height * pct / 100)))
    if size == (k.width, k.height):
        return spec
    try:
        scaled = k.resized(*size)
    except ValueError as exc:
        raise ValueError(f"{spec.name}: {exc}") from None
    notes = spec.notes
    if getattr(scaled, "projection", "") == "perspective" and \
            abs(scaled.fx / scaled.fy - k.fx / k.fy) > 1e-3 * (k.fx / k.fy):
        notes = notes + (f"{spec.name}: {k.width}x{k.height} rendered at {size[0]}x{size[1]}: same view, "
                         f"non-square pixels (fx/fy = {scaled.fx / scaled.fy:.4g})",)
    return replace(spec, intrinsics=scaled, notes=notes, native_size=spec.native_size or (k.width, k.height))


def unmade_products(options: RenderOptions, specs) -> dict[str, str]:
    """Products ``options.products`` names that none of ``specs`` (after :meth:`SensorSpec.with_products`)
    makes: ``{product: why}``; empty when every one is made (or nothing was named). With
    ``options.require_products`` off only COCO/BOP are checked."""
    if not options.products:
        return {}
    made = {p for s in specs for p in s.products}
    missing = {}
    for name in sorted(options.products):
        row = table.PRODUCTS[name]
        if row.sensor != "folder" and not options.require_products:
            continue
        if row.sensor == "folder":
            need = row.reads  # one camera must make all it reads
            if not any(all(p in s.products for p in need) for s in specs):
                missing[name] = f"needs a camera making {' and '.join(need)}"
        elif name not in made:
            if name == "cryptomatte" and not options.cryptomatte:
                missing[name] = "switched on by --cryptomatte LEVELS"
            else:
                missing[name] = f"no chosen sensor makes it ({row.sensor} product)"
    return missing


def split_names(value) -> list[str]:
    """``"a,b" -> ["a", "b"]``; lists are split element-wise; None -> []."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    out = []
    for item in value:
        out.extend(part.strip() for part in str(item).split(",") if part.strip())
    return out
