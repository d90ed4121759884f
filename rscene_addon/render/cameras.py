"""One Cycles render per camera per frame, decoded into RGB, depth, ids and normals.

Every camera sensor gets a temporary Blender camera (:class:`CameraRig`) whose lens, sensor, shift
and the scene's resolution and pixel aspect reproduce its ``K`` exactly
(``CameraIntrinsics.blender_camera_params``), or, for an orthographic camera, whose ``ortho_scale``
and resolution reproduce its view (``OrthographicIntrinsics``), placed each frame at the sensor's
pose. Cycles writes Combined, Z, Normal and Object Index passes to one 32-bit multilayer EXR, read
back with Blender's OpenImageIO. Outputs (``{sensor}/{layer}_{frame:05d}.{ext}``):

============  =====  =================  =========================================================
layer         ext    array              meaning
============  =====  =================  =========================================================
``rgb``       png    (H, W, 3) uint8/16 display-referred colour: the scene's view transform/look
``depth``     npy    (H, W) float32     planar depth along the optical axis (m); background +inf
                                        (orthographic: from the camera's plane, along the rays)
``depth``     exr    (H, W) float32     the same, channel ``Z``
``range``     npy    (H, W) float32     distance to the camera centre (m); only on request
                                        (orthographic: equal to depth, the rays are parallel)
``instance``  npy    (H, W) int32       instance id per pixel; background -1
``semantic``  npy    (H, W) int32       class id per pixel; background and unlabelled 0
``instances`` json   (N,)               visible instances: ids, paths, class, colour, 2D/3D boxes
``normal``    npy    (H, W, 3) float32  unit surface normal in the OpenCV camera frame; background 0
``passes``    exr    (H, W, C) float32  Cycles' multilayer EXR as rendered (``keep_exr`` only)
============  =====  =================  =========================================================

Opt-in geometric products (``RenderOptions.products`` names them; :mod:`.geometry_pass`):

=================  =====  =================  ====================================================
``flow_forward``   npy    (H, W, 2) float32  px, u right / v down: the point seen through the pixel
                                             centre at frame t + step, minus the centre (camera and
                                             rigid object motion; NaN where undefined)
``flow_backward``  npy    (H, W, 2) float32  the same towards frame t - step
``object_coords``  npy    (H, W, 3) float32  m, the hit point in its entity's frame; background NaN
``nocs``           npy    (H, W, 3) float32  the same normalised by the entity's box, in [0, 1]^3
``amodal``         npz    ids (N,), masks    every instance's unoccluded silhouette (bool); the
                          (N, H, W)          instances JSON gains ``px_count_all``,
                                             ``px_count_visib``, ``visib_fract`` (BOP)
=================  =====  =================  ====================================================

The opt-in ``cryptomatte`` product (``RenderOptions.cryptomatte`` = K levels) writes
``cryptomatte_id`` npy (H, W, K) int32, the instance id of each coverage rank (-1 none), and
``cryptomatte_coverage`` npy (H, W, K) float32, the fraction of the pixel each rank covers, largest
first: Cycles' Cryptomatte object pass decoded by :mod:`.cryptomatte` into our instance ids, rendered
with a 1-pixel box filter, so a coverage is the area fraction of the pixel (estimated from the
samples). The manifest's ``metadata.cryptomatte`` maps each object's hash to its name, instance id
and entity path. Objects of an instanced collection share the instanced object's name (Cryptomatte
hashes names), so they are not told apart: their ranks get id -1 (the hard ``instance`` image still
tells them apart).

With ``exact_ids`` (the default) depth, ids and normals come from one ray cast through every pixel
centre (:mod:`.geometry_pass`) and Cycles renders only RGB (Combined), anti-aliased with the scene's
pixel filter; a run without ``rgb`` (or ``cryptomatte``) renders nothing in Cycles. Otherwise they come
from Cycles' passes, i.e. from the first, jittered sample of each pixel.
Noise (``noiseMean``/``noiseStddev``/``noiseSeed`` of a sensor record) is added to ``rgb`` in
display units (0..1 of full scale) and to ``depth`` in metres, seeded per frame; the EXR stays clean.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid

import bpy
import numpy as np
from mathutils import Matrix

from ..base.atomic import write_text_atomic
from ..base.spatial import R_RAISIM_FROM_OPENCV
from ..sensors.intrinsics import CameraIntrinsics, OrthographicIntrinsics
from ..sensors.noise import add_depth_noise, add_image_noise
from ..sensors.pixel_truth import visibility
from ..sensors.writers import write_npy
from ..products import cryptomatte
from . import compat, exr
from .ids import GEOMETRY_TYPES
from .poses import RAISIM_TO_GL
from ..products.segmentation import boxes_2d

__all__ = ["BACKGROUND_DEPTH", "CameraRenderer", "CameraRig", "intrinsics_of_blender_camera"]

BACKGROUND_DEPTH = 1.0e9  # Cycles writes 1e10 in the Z pass where a ray hits nothing
RAISIM_TO_CV = np.eye(4)
RAISIM_TO_CV[:3, :3] = R_RAISIM_FROM_OPENCV


def intrinsics_of_blender_camera(cam_ob, bl_scene) -> CameraIntrinsics | OrthographicIntrinsics:
    """What Blender renders for a camera object at the scene's output resolution: K of a perspective
    camera, or the view of an orthographic one (square pixels, no shift, the scale on the larger
    side, as :class:`OrthographicIntrinsics` describes; other orthographic set-ups are refused)."""
    data, r = cam_ob.data, bl_scene.render
    width = int(r.resolution_x * r.resolution_percentage / 100)
    height = int(r.resolution_y * r.resolution_percentage / 100)
    if data.type == "ORTHO":
        larger = "HORIZONTAL" if width >= height else "VERTICAL"
        if (r.pixel_aspect_x != r.pixel_aspect_y or data.shift_x or data.shift_y
                or data.sensor_fit not in ("AUTO", larger)):
            raise ValueError(f"orthographic camera {cam_ob.name!r}: only square pixels, no lens shift and "
                             "the scale across the larger image side are supported")
        return OrthographicIntrinsics(width, height, data.ortho_scale)
    if data.type != "PERSP":
        raise ValueError(f"camera {cam_ob.name!r} is {data.type}: only perspective and orthographic "
                         "cameras are rendered")
    return CameraIntrinsics.from_blender_params(
        data.lens, data.sensor_width, data.sensor_height, data.sensor_fit, data.shift_x, data.shift_y,
        width, height, r.pixel_aspect_x, r.pixel_aspect_y)


class CameraRig:
    """A temporary camera object reproducing ``spec.intrinsics`` exactly (removed by ``state``): a
    perspective camera for a ``K``, an orthographic one for :class:`OrthographicIntrinsics`."""

    def __init__(self, spec, bl_scene, state) -> None:
        self.spec = spec
        params = spec.intrinsics.blender_camera_params()
        data = state.keep(bpy.data.cameras.new(f"rscene render {spec.name}"))
        for attr, value in params.camera_settings().items():
            setattr(data, attr, value)
        data.clip_start = max(float(spec.near), 1e-6)
        data.clip_end = max(float(spec.far), data.clip_start * 1.001)
        self.object = state.keep(bpy.data.objects.new(f"rscene render {spec.name}", data))
        bl_scene.collection.objects.link(self.object)
        self.render_settings = params.render_settings()

    def apply(self, bl_scene) -> None:
        """Make this the scene's camera, with its resolution and pixel aspect."""
        for attr, value in self.render_settings.items():
            setattr(bl_scene.render, attr, value)
        bl_scene.camera = self.object

    def place(self, sensor_to_world) -> None:
        """Pose the camera: ``sensor_to_world`` is the RaiSim sensor frame's 4x4 world pose."""
        self.object.matrix_world = Matrix((np.asarray(sensor_to_world) @ RAISIM_TO_GL).tolist())


def _tmp_name(folder: str, stem: str, ext: str) -> str:
    return os.path.join(folder, f".{stem}.{uuid.uuid4().hex}.tmp.{ext}")


@contextlib.contextmanager
def _quiet_stdout():
    """Cycles prints ``Saved: '<our temporary EXR>'`` from C for every still it writes: keep this
    process's stdout (file descriptor 1) away from it while it renders; stderr stays."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable stdout (e.g. a GUI without a console)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _render_result_image():
    for image in bpy.data.images:
        if image.type == "RENDER_RESULT":
            return image
    raise RuntimeError("Blender has no render result after rendering")


class CameraRenderer:
    """Renders camera sensors with Cycles; scene-wide settings go through ``state`` (restored later)."""

    def __init__(self, bl_scene, view_layer, state, options, entities, samples: int, exact_ids: bool,
                 out_dir: str, tmp_dir: str, report=None, cryptomatte_levels: int = 0) -> None:
        self.bl_scene = bl_scene
        self.view_layer = view_layer
        self.state = state
        self.options = options
        self.entities = entities
        self.out_dir = out_dir
        self.tmp_dir = tmp_dir
        self.report = report or (lambda level, message: None)
        self.samples = samples
        # exact ids: depth, ids and normals come from pixel-centre ray casts (geometry_pass), Cycles
        # renders RGB only, anti-aliased with the scene's filter
        self.cycles_passes = not exact_ids
        self.filter_width = float(bl_scene.cycles.filter_width)
        self.gpu_announced = False
        self.cryptomatte_levels = int(cryptomatte_levels)
        if self.cryptomatte_levels:
            self.filter_width = 1.0  # a box one pixel wide: samples uniform over the pixel's area
            self.crypto_objects = self._crypto_objects()
            self.crypto_table = cryptomatte.object_table(
                {name: entry["instance_id"] for name, entry in self.crypto_objects.items()})
        self._configure()

    def _configure(self) -> None:
        sc, st = self.bl_scene, self.state
        r = sc.render
        st.set(r, "engine", "CYCLES")
        cycles = sc.cycles
        st.set(cycles, "device", cycles.device)
        self.device, self.backend = compat.configure_device(sc, self.options.device, self.report)
        st.set_many(cycles, {"samples": self.samples, "use_denoising": bool(self.options.denoise),
                             "filter_width": self.filter_width})
        st.set_many(r, {
            "use_compositing": False, "use_sequencer": False, "use_border": False,
            "use_motion_blur": False, "use_persistent_data": bool(self.options.persistent_data),
            "filepath": r.filepath, "use_file_extension": True,
            "resolution_x": r.resolution_x, "resolution_y": r.resolution_y,
            "resolution_percentage": r.resolution_percentage,
            "pixel_aspect_x": r.pixel_aspect_x, "pixel_aspect_y": r.pixel_aspect_y,
        })
        if self.options.threads:  # several render processes share the machine's cores
            st.set_many(r, {"threads_mode": "FIXED", "threads": int(self.options.threads)})
        st.set(sc, "camera", sc.camera)
        for layer in sc.view_layers:
            st.set(layer, "use", layer == self.view_layer)
        vl = self.view_layer
        for attr in ("use_pass_combined", "use_pass_z", "use_pass_normal", "use_pass_object_index"):
            st.set(vl, attr, getattr(vl, attr))
        compat.enable_passes(vl)
        if not self.cycles_passes:  # RGB only: no work for passes the ray casts replace
            vl.use_pass_z = vl.use_pass_normal = vl.use_pass_object_index = False
        if self.cryptomatte_levels:
            st.set(cycles, "pixel_filter_type", "BOX")
            for attr in ("use_pass_cryptomatte_object", "pass_cryptomatte_depth"):
                st.set(vl, attr, getattr(vl, attr))
            vl.use_pass_cryptomatte_object = True
            vl.pass_cryptomatte_depth = self.cryptomatte_levels
        im = r.image_settings
        for attr in ("media_type", "file_format", "color_mode", "color_depth", "exr_codec", "compression",
                     "use_exr_interleave"):
            if hasattr(im, attr):
                st.set(im, attr, getattr(im, attr))

    # -- one render --------------------------------------------------------------------------------

    def render(self, rig: CameraRig, frame: int, sensor_to_world) -> dict:
        """Render the current frame through ``rig``; returns the decoded arrays and the EXR path."""
        sc = self.bl_scene
        rig.apply(sc)
        rig.place(sensor_to_world)
        if self.device == "GPU" and not self.gpu_announced:
            self.gpu_announced = True
            self.report("INFO", f"first GPU render ({self.backend}): compiling GPU kernels, once per driver: "
                                "minutes")
        if not (self.cycles_passes or self.cryptomatte_levels or self.options.keep_exr):
            # RGB only: the render result is saved as PNG by write(), no EXR written or read
            bpy.ops.render.render(write_still=False, scene=sc.name)
            return {"exr": None, "cryptomatte": None, "channels": 4}
        exr_path = _tmp_name(self.tmp_dir, "passes", "exr")
        sc.render.filepath = exr_path
        compat.set_multilayer_exr(sc.render.image_settings)
        with _quiet_stdout():
            bpy.ops.render.render(write_still=True, scene=sc.name)
        if not os.path.exists(exr_path):
            raise RuntimeError(f"Cycles did not write {exr_path}")
        names: dict = {}
        passes = exr.read_passes(exr_path, self.view_layer.name, names)
        channels = sum(a.shape[-1] for a in passes.values())
        crypto = self._cryptomatte(passes, names, exr_path)
        if not self.cycles_passes:
            return {"exr": exr_path, "cryptomatte": crypto, "channels": channels}
        wanted = (compat.PASS_DEPTH, compat.PASS_NORMAL, compat.PASS_OBJECT_INDEX)
        missing = [p for p in wanted if p not in passes]
        if missing:
            raise RuntimeError(f"render passes {missing} missing from {exr_path}")
        depth = passes[compat.PASS_DEPTH][..., 0].astype(np.float32)
        background = ~(depth < BACKGROUND_DEPTH)
        depth[background] = np.inf
        rotation_cv = (np.asarray(sensor_to_world) @ RAISIM_TO_CV)[:3, :3]
        normal = passes[compat.PASS_NORMAL][..., :3].astype(np.float64) @ rotation_cv  # R^T n per pixel
        norm = np.linalg.norm(normal, axis=-1, keepdims=True)
        normal = np.where(norm > 1e-12, normal / np.where(norm > 1e-12, norm, 1.0), 0.0)
        normal[background] = 0.0
        return {
            "exr": exr_path,
            "cryptomatte": crypto,
            "channels": channels,
            "depth": depth,
            "index": passes[compat.PASS_OBJECT_INDEX][..., 0],
            "normal": normal.astype(np.float32),
        }

    def _cryptomatte(self, passes: dict, names: dict, exr_path: str):
        if not self.cryptomatte_levels:
            return None
        layers = cryptomatte.layer_names(self.cryptomatte_levels)
        lost = [name for name in layers if names.get(name) != ["r", "g", "b", "a"]]
        if lost:
            raise RuntimeError(f"Cryptomatte layers {lost} missing from {exr_path}")
        return cryptomatte.decode([passes[name] for name in layers], self.cryptomatte_levels, self.crypto_table)

    def needs_cycles(self, spec) -> bool:
        """Whether ``spec``'s products need a Cycles render this frame (annotation-only runs do not)."""
        products = set(spec.products)
        return bool(products & {"rgb", "cryptomatte"}
                    or (self.cycles_passes and products & {"depth", "segmentation", "normal"})
                    or self.options.keep_exr)

    def save_rgb(self, path: str) -> None:
        """Save the last render's Combined pass as PNG through the scene's colour management."""
        compat.set_png(self.bl_scene.render.image_settings, self.options.rgb_bit_depth)
        tmp = _tmp_name(os.path.dirname(path), "rgb", "png")
        try:
            _render_result_image().save_render(tmp, scene=self.bl_scene)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    # -- files -------------------------------------------------------------------------------------

    def write(self, spec, frame: int, rendered: dict, manifest, boxes_3d=None) -> list[str]:
        """Write ``spec``'s products for one rendered frame; returns the relative paths written."""
        k = spec.intrinsics
        h, w = k.height, k.width
        written = []

        def target(layer, ext, shape, dtype, units):
            rel = manifest.add_output(spec.name, frame, layer, ext, shape, dtype, units)
            full = os.path.join(self.out_dir, *rel.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            written.append(rel)
            return full

        products = spec.products
        if "rgb" in products:
            bits = self.options.rgb_bit_depth
            dtype = np.uint8 if bits == 8 else np.uint16
            path = target("rgb", "png", (h, w, 3), dtype, f"display-referred RGB, {bits}-bit, view transform "
                          f"{self.bl_scene.view_settings.view_transform!r}")
            self.save_rgb(path)
            if spec.has_noise:
                image = exr.read_image(path, "uint8" if bits == 8 else "uint16")
                full_scale = float(np.iinfo(dtype).max)
                noisy = add_image_noise(image, spec.noise_mean * full_scale, spec.noise_stddev * full_scale,
                                        spec.noise_seed, frame, "rgb")
                tmp = _tmp_name(os.path.dirname(path), "rgb", "png")
                exr.write_image(tmp, noisy, ("R", "G", "B"), "uint8" if bits == 8 else "uint16")
                os.replace(tmp, path)
        if "depth" in products:
            depth = rendered["depth"]
            if spec.has_noise:
                depth = add_depth_noise(depth, spec.noise_mean, spec.noise_stddev, spec.noise_seed, frame,
                                        "depth")
            write_npy(target("depth", "npy", (h, w), np.float32, "m, planar depth along +z (OpenCV); "
                             "background +inf"), depth.astype(np.float32))
            path = target("depth", "exr", (h, w), np.float32, "m, planar depth, channel Z; background +inf")
            tmp = _tmp_name(os.path.dirname(path), "depth", "exr")
            exr.write_image(tmp, depth.astype(np.float32), ("Z",), "float")
            os.replace(tmp, path)
            if self.options.range_image:
                write_npy(target("range", "npy", (h, w), np.float32, "m, distance to the camera centre; "
                                 "background +inf"), k.depth_to_range(depth).astype(np.float32))
        if "segmentation" in products:
            instance, semantic = self.entities.table.decode(rendered["index"])
            write_npy(target("instance", "npy", (h, w), np.int32, "instance id; background -1"), instance)
            write_npy(target("semantic", "npy", (h, w), np.int32, "class id; background/unlabelled 0"),
                      semantic)
            listing = self.instance_listing(instance, boxes_3d or {}, rendered.get("amodal"))
            path = target("instances", "json", (len(listing),), np.dtype(object),
                          "bbox2d px [x0, y0, x1, y1) top-left origin; bbox3d m world"
                          + ("; with amodal: px_count_all (unoccluded pixels), px_count_visib, visib_fract = "
                             "visib/all (BOP), bbox2d_amodal; hidden instances listed with bbox2d null"
                             if rendered.get("amodal") is not None else ""))
            write_text_atomic(path, json.dumps({"frame": frame, "instances": listing}, sort_keys=True,
                                               allow_nan=False) + "\n")
        if "normal" in products:
            write_npy(target("normal", "npy", (h, w, 3), np.float32, "unit normal, OpenCV camera frame; "
                             "background 0"), rendered["normal"])
        if "cryptomatte" in products and rendered.get("cryptomatte") is not None:
            ids, coverage = rendered["cryptomatte"]
            levels = ids.shape[-1]
            write_npy(target("cryptomatte_id", "npy", (h, w, levels), np.int32, "instance id per coverage "
                             "rank; -1 none or not an entity"), ids)
            write_npy(target("cryptomatte_coverage", "npy", (h, w, levels), np.float32, "fraction of the "
                             "pixel covered per rank, largest first (1 px box filter)"), coverage)
        if "flow" in products and "flow_forward" in rendered:
            step = rendered["flow_step"]
            for layer, sign in (("flow_forward", "+"), ("flow_backward", "-")):
                write_npy(target(layer, "npy", (h, w, 2), np.float32, f"px (u right, v down): where the point "
                                 f"seen in this pixel's centre is at frame {sign} {step}, minus the pixel centre; "
                                 "camera and object motion; background at infinity; NaN where undefined"),
                          rendered[layer])
        if "object_coords" in products and "object_coords" in rendered:
            write_npy(target("object_coords", "npy", (h, w, 3), np.float32, "m, the pixel's hit point in "
                             "its object's frame (node object, unscaled); background NaN"),
                      rendered["object_coords"])
            write_npy(target("nocs", "npy", (h, w, 3), np.float32, "NOCS in [0, 1]: object coordinates "
                             "centred on the object's tight box, divided by its diagonal, + 0.5; background "
                             "NaN"), rendered["nocs"])
        if "amodal" in products and rendered.get("amodal") is not None:
            ids, masks = rendered["amodal"]
            path = target("amodal", "npz", (len(ids), h, w), np.bool_, "npz: ids (N,) int32 instance ids, "
                          "masks (N, H, W) bool unoccluded silhouettes at pixel centres")
            tmp = _tmp_name(os.path.dirname(path), "amodal", "npz")
            try:
                with open(tmp, "wb") as f:
                    np.savez_compressed(f, ids=np.asarray(ids, np.int32), masks=np.asarray(masks, bool))
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        exr_path = rendered.get("exr")
        if self.options.keep_exr and exr_path:
            path = target("passes", "exr", (h, w, rendered["channels"]), np.float32,
                          "Cycles passes (Combined linear RGBA" + (", Depth m, Normal world, Object Index)"
                                                                   if self.cycles_passes else ")"))
            os.replace(exr_path, path)
        elif exr_path and os.path.exists(exr_path):
            os.unlink(exr_path)
        return written

    def _crypto_objects(self) -> dict[str, dict]:
        """``{object name: {"instance_id", "path"}}`` of every object that renders as an entity's part."""
        table = self.entities.table
        by_key = {e.key: e for e in table.entities}
        out = {}
        for name, key in sorted(self.entities.key_of_object.items()):
            ob = bpy.data.objects.get(name)
            if ob is None or ob.type not in GEOMETRY_TYPES:
                continue
            entity = by_key[key]
            out[name] = {"instance_id": int(table.instance_id[key]), "path": entity.path or entity.name}
        return out

    def cryptomatte_metadata(self) -> dict:
        """The run's Cryptomatte settings and ``objects``: ``{hash hex: {name, instance_id, path}}``."""
        objects = {f"{cryptomatte.murmur3_32(name):08x}": {"name": name, **entry}
                   for name, entry in self.crypto_objects.items()}
        return {"levels": self.cryptomatte_levels, "pixel_filter": "BOX", "filter_width_px": 1.0,
                "hash": "MurmurHash3_32 of the object name (Cryptomatte object pass)", "objects": objects}

    def instance_listing(self, instance, boxes_3d: dict, amodal=None) -> list[dict]:
        """Visible instances of an instance image: id, paths, class, colour, 2D box, pixels, 3D box.
        With ``amodal`` ``(ids, masks)`` every instance in view (hidden ones too) with its visibility."""
        table = self.entities.table
        by_id: dict[int, list] = {}
        for e in table.entities:
            by_id.setdefault(table.instance_id[e.key], []).append(e)
        listing = []
        boxes = boxes_2d(instance)
        full = {}
        if amodal is not None:
            for iid, mask in zip(*amodal):
                full[int(iid)] = (int(mask.sum()), boxes_2d(np.where(mask, 0, -1)).get(0))
                boxes.setdefault(int(iid), {"bbox": None, "pixels": 0})
        for iid, box in sorted(boxes.items()):
            members = by_id.get(iid, [])
            classes = sorted({m.semantic_class for m in members})
            entry = {
                "id": iid,
                "paths": [m.path or m.name for m in members],
                "class": classes[0] if len(classes) == 1 else classes,
                "class_id": table.class_id[members[0].key] if members else 0,
                "color": list(table.color(members[0].key)) if members else None,
                "bbox2d": box["bbox"],
                "pixels": box["pixels"],
            }
            if amodal is not None:
                count_all, box_all = full.get(iid, (box["pixels"], None))
                entry.update(px_count_all=count_all, px_count_visib=box["pixels"],
                             visib_fract=visibility(box["pixels"], count_all),
                             bbox2d_amodal=box_all["bbox"] if box_all else box["bbox"])
            box3d = boxes_3d.get(iid)
            if box3d is not None:
                entry["bbox3d"] = box3d
            listing.append(entry)
        return listing


def boxes_3d(depsgraph, entities) -> dict[int, dict]:
    """World-space 3D boxes per instance id at the evaluated frame: ``corners`` (8 x 3: the oriented
    bounding box when one object makes the instance, else its axis-aligned box) and ``min``/``max``."""
    corners: dict[int, list] = {}
    for inst in depsgraph.object_instances:
        ob = inst.object
        if ob.type not in ("MESH", "CURVE", "SURFACE", "META", "FONT", "CURVES", "POINTCLOUD", "VOLUME"):
            continue
        owner = inst.parent.original if inst.is_instance and inst.parent is not None else ob.original
        if owner.hide_render:
            continue
        iid = entities.instance_id_for(owner)
        if iid < 0 and entities.key_for(owner) is None:
            continue
        m = np.array(inst.matrix_world, dtype=np.float64)
        local = np.array([tuple(c) for c in ob.bound_box], dtype=np.float64)
        corners.setdefault(iid, []).append(local @ m[:3, :3].T + m[:3, 3])
    out = {}
    for iid, parts in corners.items():
        pts = np.concatenate(parts)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        if len(parts) == 1:
            box = parts[0]
        else:
            box = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])
        out[iid] = {"corners": np.round(box, 9).tolist(), "min": lo.tolist(), "max": hi.tolist()}
    return out
