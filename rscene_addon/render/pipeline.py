"""The render run: plan sensors, read poses, then per frame render cameras, sweep lidars, sample IMUs.

:class:`RenderJob` does the work as a generator (one step per camera render, lidar frame or IMU
frame) so the operator can drive it from a timer and cancel between steps; :func:`render_scene` runs
it to the end. Whatever happens (error, cancel), the scene's settings, pass indices, frame and
active camera are restored, temporary objects removed, and the manifest of what was written saved.

Which records: those of the scene's last import (``scene.rscene.source``). A ``camera`` record keeps
its record's intrinsics (the Blender camera object only gives the pose). Limits: lidar rays and 3D
boxes use the viewport-evaluated scene (objects hidden in the viewport are unseen, modifiers at their
viewport levels), while Cycles renders the render-evaluated scene; the importer keeps both alike.
Output frame ``f`` covers scene time ``[t(f), t(f + 1))`` also for stepped frame ranges.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time

import bpy
import numpy as np

from ..blender import sources as source_texts
from ..products.chunks import parse_frame_range
from ..sensors.imu import simulate_imu
from ..sensors.noise import add_gaussian_noise, variation_seed
from ..products.table import products_needing
from ..products.write import write_frame, write_models
from ..products import plan as plan_mod
from . import robot_sensors
from .cameras import RAISIM_TO_CV, CameraRenderer, CameraRig, boxes_3d, intrinsics_of_blender_camera
from .caster import CasterCache, TriangleGatherer
from .geometry_pass import GeometryPass, camera_products, needs_geometry
from .ids import EntityIndex
from .models import instance_models
from ..products.chunks import manifest_filename
from ..products.outputs import RenderManifest
from .poses import PoseTable, source_for
from .raycast import pattern_for, sweep
from .scene_state import SceneState
from ..products.timing import FrameClock, pose_to_pq, tick_range

__all__ = ["RenderJob", "load_document", "render_scene"]



def load_document(bl_scene):
    """The parsed source document of the scene's last import (``scene.rscene.source``), or None."""
    props = getattr(bl_scene, "rscene", None)
    return source_texts.document(props.source if props is not None else "")  # parsed once per Text revision


def _objects_by_uid(bl_scene, source: str) -> dict:
    out = {}
    if not source or not hasattr(bpy.types.Object, "rscene"):
        return out
    for ob in bl_scene.objects:
        if ob.rscene.source == source and ob.rscene.uid >= 0:
            out.setdefault(ob.rscene.uid, ob)
    return out


def _blender_camera_spec(ob, bl_scene) -> plan_mod.SensorSpec:
    k = intrinsics_of_blender_camera(ob, bl_scene, percentage=100)  # the run's scale is applied in _plan
    return plan_mod.SensorSpec(name=ob.name, kind="camera", source="blender",
                               products=plan_mod.CAMERA_PRODUCTS, object_name=ob.name, intrinsics=k,
                               near=ob.data.clip_start, far=ob.data.clip_end)


def _frames(bl_scene, frames) -> list[int]:
    if frames is None:
        return list(range(bl_scene.frame_start, bl_scene.frame_end + 1, max(bl_scene.frame_step, 1)))
    if isinstance(frames, str):
        return list(parse_frame_range(frames))
    if isinstance(frames, int):
        return [frames]
    return [int(f) for f in frames]


def _frame_step(bl_scene, given, frames: list[int]) -> int:
    """Frames between consecutive rendered frames (flow goes from f to f +- step): a range's step, the
    common difference of a list, the scene's frame step for its own range, else 1."""
    if isinstance(given, range):
        return abs(given.step)
    if given is None:
        return max(bl_scene.frame_step, 1)
    if isinstance(given, str):
        return abs(parse_frame_range(given).step)
    steps = {b - a for a, b in zip(frames, frames[1:])}
    return steps.pop() if len(steps) == 1 and min(steps) > 0 else 1


class RenderJob:
    """One run. ``steps()`` yields the fraction done after each unit of work; ``result`` then holds
    what :func:`render_scene` returns."""

    def __init__(self, bl_scene, out_dir, frames=None, samples=None, sensors=None, options=None, chunk=None,
                 report=None) -> None:
        self.bl_scene = bl_scene
        self.out_dir = os.path.abspath(os.fspath(out_dir))
        self.frames = _frames(bl_scene, frames)
        self.flow_step = _frame_step(bl_scene, frames, self.frames)
        self.options = options or plan_mod.RenderOptions()
        if samples is not None:
            self.options = dataclasses.replace(self.options, samples=int(samples))
        self.chunk = chunk
        self.warnings: list[str] = []
        self._report = report
        self.status = ""
        self.doc = load_document(bl_scene)
        self.specs = self._plan(plan_mod.split_names(sensors))
        self.clock = FrameClock(bl_scene.frame_start, bl_scene.render.fps, bl_scene.render.fps_base)
        # Blender stores gravity as float32: take the shortest decimal that round-trips it (-9.81, not
        # -9.8100004196167)
        self.gravity = tuple(float(np.format_float_positional(np.float32(g), unique=True))
                             for g in bl_scene.gravity)
        self.result: dict = {}

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._report:
            self._report("WARNING", message)

    # -- planning ----------------------------------------------------------------------------------

    def _plan(self, names: list[str]) -> list:
        record_specs = plan_mod.specs_from_document(self.doc) if self.doc is not None else []
        source = self.bl_scene.rscene.source if hasattr(self.bl_scene, "rscene") else ""
        self.objects_by_uid = _objects_by_uid(self.bl_scene, source)
        specs = record_specs + robot_sensors.robot_specs(self.bl_scene)  # + the robots' own (URDF sensor sets)
        chosen, unmatched = plan_mod.select_specs(specs, names)
        for name in unmatched:
            ob = bpy.data.objects.get(name)
            if ob is None or ob.type != "CAMERA":
                raise ValueError(f"unknown sensor {name!r}: not a camera/sensor record path or id, nor a "
                                 "Blender camera object")
            props = getattr(ob, "rscene", None)
            if props is not None and props.kind == "camera" and props.uid >= 0:
                chosen += [s for s in specs if s.uid == props.uid and s not in chosen]
            else:
                chosen.append(_blender_camera_spec(ob, self.bl_scene))
        camera = self.bl_scene.camera
        if not names and not record_specs and camera is not None and camera.type == "CAMERA":
            chosen.append(_blender_camera_spec(camera, self.bl_scene))
        result = []
        percent = self.bl_scene.render.resolution_percentage
        for spec in chosen:
            # records keep their own size unless told; a Blender camera follows the scene's resolution %
            spec = plan_mod.resized(spec, self.options, percent if spec.source == "blender" else 100.0)
            for note in spec.notes:
                self.warn(note)
            if not spec.products:
                continue
            spec = spec.with_products(self.options.products, self.options.opt_in_products())
            if self.options.seed is not None:
                spec = dataclasses.replace(spec, noise_seed=variation_seed(spec.noise_seed, self.options.seed))
            if spec.products:
                result.append(spec)
        for spec in result:
            if spec.kind == "lidar" and pattern_for(spec) is None:
                self.warn(f"{spec.name}: lidar needs lidarChannels, lidarSamples and updateRate > 0; skipped")
            if spec.kind == "imu" and spec.update_rate <= 0:
                self.warn(f"{spec.name}: IMU needs updateRate > 0; skipped")
        result = [s for s in result if not (s.kind == "lidar" and pattern_for(s) is None)
                  and not (s.kind == "imu" and s.update_rate <= 0)]
        missing = plan_mod.unmade_products(self.options, result)
        if missing:  # never a silent drop: the caller asked for something this selection cannot make
            made = "; ".join(f"{s.name} ({s.kind}): {', '.join(s.products)}" for s in result) or "none"
            raise ValueError("cannot make " + "; ".join(f"{p} ({why})" for p, why in missing.items())
                             + f". Sensors chosen and what they make: {made}")
        return result

    def frames_read(self, frames) -> set:
        """The scene frames a run over ``frames`` reads: each frame, the next for a lidar sweep, the
        frames around it for an IMU, one frame step either side for flow."""
        lidars = any(s.kind == "lidar" for s in self.specs)
        imus = any(s.kind == "imu" for s in self.specs)
        flow = any("flow" in s.products for s in self.specs if s.is_camera)
        step = self.flow_step
        needed = set()
        for f in frames:
            needed.add(f)
            if lidars:
                needed.add(f + 1)
            if imus:
                needed.update((f - 1, f + 1, f + 2))
            if flow:
                needed.update((f - step, f + step))
        return needed

    def _samples(self) -> int:
        if self.doc is not None:
            preset = self.doc.setting("rayrai_render").get("preset")
            return plan_mod.samples_for_preset(preset, self.options.samples)
        base = int(self.bl_scene.cycles.samples)
        return min(base, self.options.samples) if self.options.samples else base

    def _view_layer(self):
        context_layer = getattr(bpy.context, "view_layer", None)
        if context_layer is not None and bpy.context.scene == self.bl_scene:
            return context_layer
        return next((v for v in self.bl_scene.view_layers if v.use), self.bl_scene.view_layers[0])

    # -- the run -----------------------------------------------------------------------------------

    def run(self, progress=None, cancel=None) -> dict:
        steps = self.steps()
        for fraction in steps:
            if progress is not None:
                progress(fraction, self.status)
            if cancel is not None and cancel():
                steps.close()
                self.result["cancelled"] = True
                break
        return self.result

    def steps(self):
        sc = self.bl_scene
        cameras = [s for s in self.specs if s.is_camera]
        lidars = [s for s in self.specs if s.kind == "lidar"]
        imus = [s for s in self.specs if s.kind == "imu"]
        total = max(1, len(self.frames) * (len(cameras) + len(lidars) + len(imus)))
        done = 0
        state = SceneState()
        frame_before, subframe_before = sc.frame_current, sc.frame_subframe
        os.makedirs(self.out_dir, exist_ok=True)
        tmp_dir = tempfile.mkdtemp(prefix=".rscene-render-", dir=self.out_dir)
        samples = self._samples()
        # coverage needs samples spread over the pixel: Cryptomatte takes a box filter over exact ids
        cryptomatte = self.options.cryptomatte if any("cryptomatte" in s.products for s in cameras) else 0
        exact_ids = bool(self.options.exact_ids)  # depth, ids, normals from pixel-centre ray casts
        geometric = [s for s in cameras if needs_geometry(s, exact_ids)]
        flow = any("flow" in s.products for s in cameras)
        step = self.flow_step
        manifest = RenderManifest()
        written: list[str] = []
        timings = {"camera_render_s": [], "ground_truth_s": [], "lidar_s": [], "imu_s": [], "frame_s": []}
        complete = False
        self.result = {"out_dir": self.out_dir, "frames": list(self.frames), "sensors": {}, "files": written,
                       "warnings": self.warnings, "timings": timings, "cancelled": False, "manifest": None}
        try:
            view_layer = self._view_layer()
            entities = EntityIndex(sc, self.doc)
            if not exact_ids and any("segmentation" in s.products for s in cameras):
                entities.assign_pass_indices(state, self.warn)  # Cycles' object index pass gives the ids
            renderer = None
            if cameras:
                renderer = CameraRenderer(sc, view_layer, state, self.options, entities, samples, exact_ids,
                                          self.out_dir, tmp_dir, self._report, cryptomatte)
            geometry = GeometryPass(entities, self.options.raycaster) if geometric else None
            rigs = {s.name: CameraRig(s, sc, state) for s in cameras}
            casters = CasterCache(self.options.raycaster)  # lidar geometry, rebuilt only when it changes
            owner_casters = robot_sensors.OwnerCasters(self.options.raycaster)  # without a sensor's mount
            gather = TriangleGatherer()  # meshes that cannot change are read once per run
            sources = {s.name: robot_sensors.pose_source(s) or source_for(s, self.doc, self.objects_by_uid, self.warn)
                       for s in self.specs}
            owners = {name: robot_sensors.owner_objects(s, sources[name]) for name, s in
                      ((s.name, s) for s in self.specs)}  # what each sensor's rays pass through
            poses = PoseTable(sources)
            self._register_sensors(manifest, cameras, lidars, imus)
            manifest.metadata.update(self._metadata(samples, renderer, entities, cameras, geometric))
            if renderer is not None and cryptomatte:
                manifest.metadata["cryptomatte"] = renderer.cryptomatte_metadata()
            units = self._units(cameras)
            want_models = bool(cameras) and "bop" in (self.options.products or ())
            if geometric and any("material" in s.products for s in cameras):
                manifest.metadata["materials"] = {str(i): name for i, name in enumerate(geometry.materials)}
            self.status = "reading sensor poses"
            poses.sample(sc, self.frames_read(self.frames))
            yield 0.0
            for frame in self.frames:
                frame_t0 = time.perf_counter()
                neighbours = {}
                if flow:  # the parts' matrices one step before and after (each frame read once)
                    for g in (frame + step, frame - step):
                        neighbours[g] = geometry.part_matrices(g, lambda g=g: self._evaluated_at(g, view_layer))
                sc.frame_set(frame)
                t_start = self.clock.time(frame)
                depsgraph = self._depsgraph(view_layer)
                if want_models:  # BOP models, once: the meshes do not change for rigid instances
                    want_models = False
                    models = instance_models(depsgraph, entities, self.options.annotate_static)
                    written.extend(write_models(self.out_dir, models))
                boxes = None
                if any("segmentation" in s.products for s in cameras):
                    boxes = boxes_3d(depsgraph, entities)
                frame_geometry = None
                for spec in cameras:
                    self.status = f"frame {frame}: {spec.name}"
                    pose = poses.get(spec.name, frame)
                    t0 = time.perf_counter()
                    rendered = renderer.render(rigs[spec.name], frame, pose) if renderer.needs_cycles(spec) else {}
                    if spec in geometric:
                        t1 = time.perf_counter()
                        if frame_geometry is None:
                            frame_geometry = geometry.gather(depsgraph)
                        motion = None
                        if "flow" in spec.products:
                            motion = (step, *((poses.get(spec.name, g) @ RAISIM_TO_CV, neighbours[g])
                                              for g in (frame + step, frame - step)))
                        rendered.update(camera_products(geometry.excluding(frame_geometry, owners[spec.name]), spec, pose @ RAISIM_TO_CV, exact_ids,
                                                        bpy.data.objects, motion))
                        timings["ground_truth_s"].append(time.perf_counter() - t1)
                    timings["camera_render_s"].append(time.perf_counter() - t0)
                    manifest.add_frame(spec.name, frame, camera_to_world=pose @ RAISIM_TO_CV, time=t_start)
                    arrays = renderer.layers(spec, frame, rendered, boxes)
                    self._record(spec, frame, write_frame(self.out_dir, manifest, spec, frame, arrays, self.options,
                                                          units), written)
                    renderer.discard(rendered)
                    done += 1
                    yield done / total
                if lidars:
                    t0 = time.perf_counter()
                    shared = []  # the whole scene's caster, built when a sensor mounted on nothing needs it

                    def scene_caster():
                        if not shared:
                            shared.append(casters.caster_for(gather(depsgraph, entities)))
                        return shared[0]
                    for spec in lidars:
                        self.status = f"frame {frame}: {spec.name}"
                        caster = owner_casters.caster(owners[spec.name], depsgraph, entities, scene_caster)
                        manifest.metadata["lidar_raycaster"] = caster.name
                        self._lidar_frame(spec, frame, caster, poses, manifest, written)
                        done += 1
                        yield done / total
                    timings["lidar_s"].append(time.perf_counter() - t0)
                for spec in imus:
                    self.status = f"frame {frame}: {spec.name}"
                    t0 = time.perf_counter()
                    self._imu_frame(spec, frame, poses, manifest, written, self.gravity)
                    timings["imu_s"].append(time.perf_counter() - t0)
                    done += 1
                    yield done / total
                timings["frame_s"].append(time.perf_counter() - frame_t0)
            complete = True
            self.status = "done"
        finally:
            state.restore()
            sc.frame_set(frame_before, subframe=subframe_before)
            shutil.rmtree(tmp_dir, ignore_errors=True)
            manifest.metadata["complete"] = complete
            path = os.path.join(self.out_dir, manifest_filename(self.chunk))
            manifest.write(path)
            self.result["manifest"] = path
            self.result["cancelled"] = not complete

    def _units(self, cameras) -> dict:
        """The run's values in the product table's units texts."""
        amodal = any("amodal" in s.products for s in cameras)
        return {
            "bits": self.options.rgb_bit_depth, "view": self.bl_scene.view_settings.view_transform,
            "step": self.flow_step,
            "amodal_note": "; with amodal: px_count_all (unoccluded silhouette on a canvas 3x the image, as "
                           "BOP counts it; orthographic cameras: in the image), px_count_all_in_image, "
                           "px_count_visib, visib_fract = visib/all (BOP), bbox_obj [x, y, w, h] (BOP, may reach "
                           "outside the image), bbox2d_amodal; hidden instances listed with bbox2d null"
                           if amodal else "",
            "passes_note": "" if self.options.exact_ids else ", Depth m, Normal world, Object Index",
        }

    def _evaluated_at(self, frame: int, view_layer):
        self.bl_scene.frame_set(frame)
        return self._depsgraph(view_layer)

    def _depsgraph(self, view_layer):
        if bpy.context.scene == self.bl_scene and getattr(bpy.context, "view_layer", None) == view_layer:
            return bpy.context.evaluated_depsgraph_get()
        view_layer.update()
        return view_layer.depsgraph

    def _record(self, spec, frame: int, paths: list[str], written: list[str]) -> None:
        written.extend(paths)
        per_sensor = self.result["sensors"].setdefault(spec.name, {})
        per_frame = per_sensor.setdefault(frame, {})
        for rel in paths:
            stem, ext = os.path.basename(rel).rsplit(".", 1)
            per_frame[f"{stem.rsplit('_', 1)[0]}.{ext}"] = os.path.join(self.out_dir, *rel.split("/"))

    def _register_sensors(self, manifest, cameras, lidars, imus) -> None:
        for spec in cameras:
            manifest.add_sensor(spec.name, spec.kind, spec.intrinsics, spec.near, spec.far, spec.properties())
        for spec in lidars:
            props = spec.properties()
            pattern = pattern_for(spec)
            props["pattern"] = {
                "channels": pattern.channels, "samples_per_revolution": pattern.samples_per_revolution,
                "elevations_deg": pattern.elevations_deg(), "horizontal_fov_deg": pattern.horizontal_fov_deg,
                "update_rate_hz": pattern.update_rate_hz, "ray_order": "column * channels + ring",
                "sensor_frame": "+x forward, +y left, +z up",
            }
            manifest.add_sensor(spec.name, "lidar", properties=props)
        for spec in imus:
            manifest.add_sensor(spec.name, "imu", properties=spec.properties())

    def _metadata(self, samples: int, renderer, entities, cameras, geometric) -> dict:
        sc = self.bl_scene
        cycles = renderer is not None and any(renderer.needs_cycles(s) for s in cameras)
        meta = {
            "generator": "rscene_addon.render",
            "blender": bpy.app.version_string,
            "scene": self.doc.path if self.doc is not None else (bpy.data.filepath or sc.name),
            "engine": "CYCLES" if cycles else None,
            "device": renderer.device if cycles else None,
            "device_backend": renderer.backend if cycles else None,
            "samples": samples,
            "denoise": bool(self.options.denoise),
            "filter_width_px": renderer.filter_width if cycles else None,
            "fps": self.clock.rate,
            "frame_start": self.clock.frame_start,
            "time": "t = (frame - frame_start) / fps; frame f covers [t(f), t(f + 1))",
            "frames": list(self.frames),
            "segmentation": entities.table.id_map(),
            "gravity": list(self.gravity),
        }
        if geometric:
            meta["pixel_truth"] = self._pixel_truth_metadata(cameras)
        if self.options.seed is not None:
            meta["variation_seed"] = int(self.options.seed)
        if self.chunk is not None:
            meta["chunk"] = f"{self.chunk[0]}/{self.chunk[1]}"
        return meta

    def _pixel_truth_metadata(self, cameras) -> dict:
        exact = bool(self.options.exact_ids)
        products = {p for s in cameras for p in s.products}
        meta = {
            "source": "one ray cast through every pixel centre against the evaluated scene's triangles, "
                      "starting at the near plane; hit distance refined in float64 on the triangle hit",
            "raycaster": self.options.raycaster,
            "from_ray_casts": sorted((products_needing("pixel_truth", products) if exact else set())
                                     | products_needing("rays", products)),
        }
        if exact and "normal" in products:
            meta["normal"] = "corner (shading) normals interpolated at the hit, facing the camera"
        if "flow" in products:
            meta["flow"] = {
                "units": "px", "axes": "u right, v down (image columns, rows)",
                "forward": f"frame t -> t + {self.flow_step}", "backward": f"frame t -> t - {self.flow_step}",
                "definition": "projection at the other frame of the 3D point seen through the pixel centre, "
                              "moved rigidly with its part (camera and object motion), minus the pixel "
                              "centre; background: directions at infinity (perspective; NaN orthographic); "
                              "NaN where the point is gone or behind the camera; occlusion is not checked",
                "step_frames": self.flow_step,
            }
        if "object_coords" in products:
            meta["object_coords"] = {
                "units": "m", "frame": "the entity's node object world frame without scale",
                "nocs": "(p - box centre) / box diagonal + 0.5, tight box of the entity's geometry in its "
                        "frame at that frame (Wang et al. 2019), in [0, 1]^3",
            }
        if "amodal" in products:
            meta["amodal"] = {
                "file": "{sensor}/amodal_{frame:05d}.npz: ids (N,) int32, masks (N, H, W) bool",
                "definition": "pixel centres whose ray hits the instance when cast against it alone",
                "visib_fract": "px_count_visib / px_count_all (BOP), in the instances JSON",
                "px_count_all": "the silhouette's pixels on a canvas 3x the image with the image in its middle "
                                "(BOP's calc_gt_info.py), perspective cameras; orthographic: inside the image",
            }
        return meta

    # -- lidar and IMU -----------------------------------------------------------------------------

    def _lidar_frame(self, spec, frame: int, caster, poses, manifest, written) -> None:
        pattern = pattern_for(spec)
        t0, t1 = self.clock.window(frame)
        pose0, pose1 = poses.get(spec.name, frame), poses.get(spec.name, frame + 1)
        noise = (spec.noise_mean, spec.noise_stddev, spec.noise_seed, frame) if spec.has_noise else None
        points = sweep(caster, pattern, t0, t1, pose0, pose1, spec.lidar["min_range"],
                       spec.lidar["max_range"], noise)
        manifest.add_sensor_pose(spec.name, frame, pose0, time=t0)
        comments = (f"rscene lidar {spec.name} frame {frame}", "points in the sensor frame at firing time (m)")
        arrays = {"points": {"points": points, "comments": comments}}
        self._record(spec, frame, write_frame(self.out_dir, manifest, spec, frame, arrays, self.options), written)

    def _imu_frame(self, spec, frame: int, poses, manifest, written, gravity) -> None:
        t0, t1 = self.clock.window(frame)
        frames = [frame - 1, frame, frame + 1, frame + 2]
        times = np.array([self.clock.time(f) for f in frames])
        pq = [pose_to_pq(poses.get(spec.name, f)) for f in frames]
        positions = np.array([a for a, _ in pq])
        quats = np.array([b for _, b in pq])
        ticks = tick_range(t0, t1, spec.update_rate)
        if len(ticks):
            readings = simulate_imu(times, positions, quats, spec.update_rate, gravity=tuple(gravity),
                                    t_start=ticks[0] / spec.update_rate, t_end=ticks[-1] / spec.update_rate)
            t, force, gyro = readings.time, readings.specific_force, readings.angular_velocity
            if spec.has_noise:
                force = add_gaussian_noise(force, spec.noise_mean, spec.noise_stddev, spec.noise_seed, frame,
                                           "imu_accel")
                gyro = add_gaussian_noise(gyro, spec.noise_mean, spec.noise_stddev, spec.noise_seed, frame,
                                          "imu_gyro")
        else:
            t, force, gyro = np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3))
        manifest.add_sensor_pose(spec.name, frame, poses.get(spec.name, frame), time=t0)
        arrays = {"imu": (t, force, gyro)}
        self._record(spec, frame, write_frame(self.out_dir, manifest, spec, frame, arrays, self.options), written)


def render_scene(bl_scene, out_dir, frames=None, samples=None, sensors=None, progress=None, cancel=None, *,
                 options=None, chunk=None, report=None) -> dict:
    """Render every chosen sensor over ``frames`` into ``out_dir``; returns what was written.

    ``frames``: iterable of frame numbers, ``"1-48"``-style text, or None (the scene's range).
    ``samples`` caps Cycles samples (the rayrai_render preset sets them otherwise). ``sensors``: names
    (comma list or list) of records (path, id, last path segment) or Blender camera objects; None: every
    enabled camera and sensor record (the scene camera if the scene came from no .rscene).
    ``progress(fraction, message)`` is called after each step; ``cancel()`` returning True stops the
    run between steps. ``options``: :class:`~.plan.RenderOptions`; ``chunk``: ``(K, N)`` names the
    manifest ``manifest_chunkK-of-N.json``; ``report(level, message)`` receives warnings.

    Returns ``{"out_dir", "manifest" (path), "files" (relative paths written), "sensors" ({name:
    {frame: {"layer.ext": absolute path}}}), "frames", "warnings", "timings" (seconds: per camera
    render (ray-cast products included), per camera's ray-cast products, per lidar frame, per IMU
    frame, per frame), "cancelled"}``.
    """
    job = RenderJob(bl_scene, out_dir, frames, samples, sensors, options, chunk, report)
    return job.run(progress, cancel)
