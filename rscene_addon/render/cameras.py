"""One Cycles render per camera per frame, decoded into arrays (what each product's layers hold, their
units and files: ``products.table``; the files are written by ``products.write``).

Every camera sensor gets a temporary Blender camera (:class:`CameraRig`) whose lens, sensor, shift
and the scene's resolution and pixel aspect reproduce its ``K`` exactly
(``CameraIntrinsics.blender_camera_params``), or, for an orthographic camera, whose ``ortho_scale``
and resolution reproduce its view (``OrthographicIntrinsics``), placed each frame at the sensor's
pose. Cycles writes Combined, Z, Normal and Object Index passes to one 32-bit multilayer EXR, read
back with Blender's OpenImageIO; RGB goes through the scene's view transform (Blender applies it only
when saving, so it is saved as PNG and read back).

With ``exact_ids`` (the default) depth, ids and normals come from one ray cast through every pixel
centre (:mod:`.geometry_pass`) and Cycles renders only RGB (Combined), anti-aliased with the scene's
pixel filter; a run without ``rgb`` (or ``cryptomatte``) renders nothing in Cycles. Otherwise they come
from Cycles' passes, i.e. from the first, jittered sample of each pixel.

The opt-in ``cryptomatte`` product: Cycles' Cryptomatte object pass decoded by
``products.cryptomatte`` into our instance ids, rendered with a 1-pixel box filter, so a coverage is
the area fraction of the pixel (estimated from the samples). The manifest's ``metadata.cryptomatte``
maps each object's hash to its name, instance id and entity path. Objects of an instanced collection
share the instanced object's name (Cryptomatte hashes names), so they are not told apart: their ranks
get id -1 (the hard ``instance`` image still tells them apart).
"""
from __future__ import annotations

import contextlib
import os
import sys
import uuid

import bpy
import numpy as np
from mathutils import Matrix

from ..base.spatial import R_RAISIM_FROM_OPENCV
from ..sensors.intrinsics import CameraIntrinsics, OrthographicIntrinsics
from ..sensors.pixel_truth import visibility
from ..products import cryptomatte
from . import compat, exr
from .ids import GEOMETRY_TYPES
from .poses import RAISIM_TO_GL
from ..products.segmentation import boxes_2d
from ..products.table import products_needing

__all__ = ["BACKGROUND_DEPTH", "CameraRenderer", "CameraRig", "intrinsics_of_blender_camera"]

BACKGROUND_DEPTH = 1.0e9  # Cycles writes 1e10 in the Z pass where a ray hits nothing
RAISIM_TO_CV = np.eye(4)
RAISIM_TO_CV[:3, :3] = R_RAISIM_FROM_OPENCV


def intrinsics_of_blender_camera(cam_ob, bl_scene, percentage=None) -> CameraIntrinsics | OrthographicIntrinsics:
    """What Blender renders for a camera object at the scene's output resolution (at ``percentage``
    instead of the scene's resolution % when given): K of a perspective camera, or the view of an
    orthographic one (square pixels, no shift, the scale on the larger side, as
    :class:`OrthographicIntrinsics` describes; other orthographic set-ups are refused)."""
    data, r = cam_ob.data, bl_scene.render
    percentage = r.resolution_percentage if percentage is None else percentage
    width = int(r.resolution_x * percentage / 100)
    height = int(r.resolution_y * percentage / 100)
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
            # RGB only: the render result is read through colour management by rgb_image(), no EXR
            bpy.ops.render.render(write_still=False, scene=sc.name)
            return {"cycles": True, "exr": None, "cryptomatte": None, "channels": 4}
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
            return {"cycles": True, "exr": exr_path, "cryptomatte": crypto, "channels": channels}
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
            "cycles": True,
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
        return bool(products_needing("cycles", spec.products)
                    or (self.cycles_passes and products_needing("pixel_truth", spec.products)))

    def rgb_image(self) -> np.ndarray:
        """The last render's Combined pass through the scene's colour management, ``(H, W, 3)`` uint8 or
        uint16 (Blender saves it as PNG, read back: the view transform is applied only on saving)."""
        bits = self.options.rgb_bit_depth
        compat.set_png(self.bl_scene.render.image_settings, bits, compression=0)  # read back at once
        tmp = _tmp_name(self.tmp_dir, "rgb", "png")
        try:
            _render_result_image().save_render(tmp, scene=self.bl_scene)
            return exr.read_image(tmp, "uint8" if bits == 8 else "uint16")[..., :3]
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    # -- arrays ------------------------------------------------------------------------------------

    def layers(self, spec, frame: int, rendered: dict, boxes_3d=None) -> dict:
        """``{layer: value}`` of ``spec``'s products from one frame's Cycles and ray-cast results (what
        ``products.write.write_frame`` writes; layer names and formats: ``products.table``)."""
        products = spec.products
        out = {}
        if "rgb" in products and rendered.get("cycles"):
            out["rgb"] = self.rgb_image()
        if "depth" in products:
            out["depth"] = rendered["depth"].astype(np.float32)
        if "segmentation" in products:
            out["instance"], out["semantic"] = self.entities.table.decode(rendered["index"])
            out["instances"] = {"frame": frame, "instances": self.instance_listing(
                out["instance"], boxes_3d or {}, rendered.get("amodal"))}
        if "normal" in products:
            out["normal"] = rendered["normal"]
        if "cryptomatte" in products and rendered.get("cryptomatte") is not None:
            out["cryptomatte_id"], out["cryptomatte_coverage"] = rendered["cryptomatte"]
        for key in ("flow_forward", "flow_backward", "object_coords", "nocs", "amodal", "material"):
            if key in rendered:
                out[key] = rendered[key]
        exr_path = rendered.get("exr")
        if "passes" in products and exr_path:
            k = spec.intrinsics
            out["passes"] = {"path": exr_path, "shape": (k.height, k.width, rendered["channels"])}
        return out

    def discard(self, rendered: dict) -> None:
        """Remove the frame's temporary EXR unless a writer moved it away."""
        exr_path = rendered.get("exr")
        if exr_path and os.path.exists(exr_path):
            os.unlink(exr_path)

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
        extended = amodal[2] if amodal is not None and len(amodal) > 2 else {}
        if amodal is not None:
            for iid, mask in zip(amodal[0], amodal[1]):
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
            if any(m.static for m in members):  # ground, terrain, static bodies: annotations skip them
                entry["static"] = True
            if len(members) == 1 and members[0].primitive:
                entry["primitive"] = members[0].primitive
            if amodal is not None:
                count_image, box_all = full.get(iid, (box["pixels"], None))
                # BOP counts the silhouette on a canvas 3x the image (render.geometry_pass.amodal)
                count_all, bbox_obj = extended.get(iid, (count_image, None))
                entry.update(px_count_all=count_all, px_count_all_in_image=count_image,
                             px_count_visib=box["pixels"], visib_fract=visibility(box["pixels"], count_all),
                             bbox2d_amodal=box_all["bbox"] if box_all else box["bbox"])
                if bbox_obj is not None:
                    entry["bbox_obj"] = bbox_obj
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
