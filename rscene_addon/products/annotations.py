"""COCO and BOP files from a finished render folder (pure: reads the manifest and arrays, no Blender).

Reads what the renderer wrote (``render/cameras.py``): per camera frame ``instance_{frame}.npy``
(int32 ids, background -1), ``instances_{frame}.json`` (per visible instance its ``class_id`` and, for
one object, ``bbox3d.corners``: its oriented box in the world), ``depth_{frame}.npy`` (planar m, +inf
background), ``rgb_{frame}.png``, and when amodal masks were rendered ``amodal_{frame}.npz`` (``ids``
(N,) int32, ``masks`` (N, H, W) bool: each instance's full silhouette); from the manifest K
(``sensors[name].intrinsics.K``), the per-frame ``camera_to_world_opencv`` and the class names
(``metadata.segmentation.classes``).

Writes

* COCO (:mod:`.coco`): ``{sensor}/coco_instances.json`` next to the sensor's RGB files;
* BOP (:mod:`.bop`): one scene per perspective camera, ``bop/train_pbr/{scene:06d}/`` with
  ``scene_camera.json``, ``scene_gt.json``, ``scene_gt_info.json``, ``rgb/``, ``depth/``,
  ``mask_visib/`` and (amodal masks rendered) ``mask/``; image id = frame number, object id = instance
  id; ``bop/rscene_bop.json`` maps scenes to sensors and objects to entities (paths, class, model box
  size in mm) and holds the notes. Without amodal masks ``mask/`` and the numbers that need the full
  silhouette are not written (never a copy of the visible mask), and the notes say so. An instance
  made of several objects has no single pose and is left out of BOP (noted).
"""
from __future__ import annotations

import json
import os
import shutil

import numpy as np

from ..formats.png import encode_grey
from ..scene_geometry.mesh_files import read_mesh
from . import bop, coco, table
from ..base.atomic import write_bytes_atomic, write_text_atomic

__all__ = ["PRODUCTS", "export_annotations", "load_manifest", "requested", "with_needed_products"]

PRODUCTS = tuple(p.name for p in table.PRODUCTS.values() if p.sensor == "folder")  # coco, bop
NEEDS = {name: table.PRODUCTS[name].reads for name in PRODUCTS}  # the render products they read
BOP_SPLIT = "train_pbr"


def requested(products) -> tuple[str, ...]:
    """The annotation products (``coco``, ``bop``) named in a render's product set (None: none)."""
    return tuple(p for p in PRODUCTS if products and p in products)


def with_needed_products(products):
    """``products`` plus the render products the annotation products in it read (None stays None)."""
    if products is None:
        return None
    out = set(products)
    for name in requested(products):
        out.update(NEEDS[name])
    return frozenset(out)


def load_manifest(out_dir: str) -> dict:
    path = os.path.join(out_dir, "manifest.json")
    if not os.path.exists(path):
        raise OSError(f"{out_dir}: no manifest.json (a render output folder has one; chunked runs write "
                      "manifest_chunkK-of-N.json files, pass them merged)")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def _dump(data) -> str:
    return json.dumps(data, sort_keys=True, allow_nan=False) + "\n"


class _Frame:
    """One camera frame's files, read on demand."""

    def __init__(self, out_dir: str, sensor: str, folder: str, entry: dict) -> None:
        self.out_dir, self.sensor, self.folder = out_dir, sensor, folder
        self.number = int(entry["frame"])
        self.entry = entry
        self.outputs = {f"{o['layer']}.{o.get('ext', o['path'].rsplit('.', 1)[-1])}": o["path"]
                        for o in entry.get("outputs", [])}

    def where(self, key: str) -> str | None:
        """Absolute path of output ``layer.ext`` (from the manifest, else its standard name if present)."""
        rel = self.outputs.get(key)
        if rel is None:
            layer, ext = key.split(".")
            rel = f"{self.folder}/{layer}_{self.number:05d}.{ext}"
            if not os.path.exists(os.path.join(self.out_dir, *rel.split("/"))):
                return None
        return os.path.join(self.out_dir, *rel.split("/"))

    def need(self, key: str) -> str:
        path = self.where(key)
        if path is None or not os.path.exists(path):
            raise OSError(f"{self.sensor} frame {self.number}: {key} missing (render with segmentation"
                          f"{' and depth' if key.startswith('depth') else ''})")
        return path

    def instance(self) -> np.ndarray:
        path = self.need("instance.npy")
        image = np.load(path)
        if image.ndim != 2:
            raise ValueError(f"{path}: instance image must be (H, W), got {image.shape}")
        return image

    def listing(self) -> list[dict]:
        path = self.need("instances.json")
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)["instances"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not an instances file ({exc})") from None

    def amodal(self, shape) -> dict[int, np.ndarray] | None:
        path = self.where("amodal.npz")
        if path is None or not os.path.exists(path):
            return None
        with np.load(path) as data:
            ids, masks = np.asarray(data["ids"]), np.asarray(data["masks"], dtype=bool)
        if masks.shape != (len(ids),) + tuple(shape):
            raise ValueError(f"{path}: masks {masks.shape} do not match ids ({len(ids)}) x image {tuple(shape)}")
        return {int(i): m for i, m in zip(ids, masks)}


def _camera_frames(out_dir: str, manifest: dict, wanted) -> list[tuple[str, dict, list[_Frame]]]:
    out = []
    for name, sensor in manifest.get("sensors", {}).items():
        if sensor.get("kind") in ("lidar", "imu") or "resolution" not in sensor:
            continue
        if wanted and name not in wanted and sensor.get("folder") not in wanted:
            continue
        frames = [_Frame(out_dir, name, sensor["folder"], f) for f in sensor.get("frames", [])]
        frames = [f for f in frames if f.where("instance.npy") is not None]
        if frames:
            out.append((name, sensor, frames))
    return out


def export_annotations(out_dir, coco_files: bool = True, bop_files: bool = True, manifest: dict | None = None,
                       sensors=None, report=print, annotate_static: bool = False) -> dict:
    """Write COCO and/or BOP for every camera sensor of a render folder that has instance images.

    ``manifest``: the run's manifest dict (default: ``out_dir/manifest.json``); ``sensors``: names or
    folders to limit to. ``report(line)`` gets progress and notes. Returns ``{"coco": [paths],
    "bop": [scene folders], "notes": [...]}``. Static background (ground, terrain, bodies marked static:
    ``"static"`` in the instances JSON) is left out unless ``annotate_static``. Raises OSError/ValueError
    naming the file at fault."""
    out_dir = os.path.abspath(os.fspath(out_dir))
    manifest = manifest if manifest is not None else load_manifest(out_dir)
    classes = manifest.get("metadata", {}).get("segmentation", {}).get("classes", {"0": ""})
    cameras = _camera_frames(out_dir, manifest, set(sensors or ()))
    result: dict = {"coco": [], "bop": [], "notes": []}
    if not cameras:
        result["notes"].append("no camera sensor with instance images: nothing to annotate")
        report(f"annotations: {result['notes'][-1]}")
        return result
    bop_writer = _BopDataset(out_dir, report, annotate_static) if bop_files else None
    for name, sensor, frames in cameras:
        if coco_files:
            result["coco"].append(_write_coco(out_dir, name, sensor, frames, classes, annotate_static))
            report(f"annotations: COCO {os.path.relpath(result['coco'][-1], out_dir)} ({len(frames)} images)")
        if bop_writer is not None:
            folder = bop_writer.add_scene(name, sensor, frames)
            if folder:
                result["bop"].append(folder)
    if bop_writer is not None:
        bop_writer.finish()
        result["notes"].extend(bop_writer.notes)
    return result


# -- COCO ------------------------------------------------------------------------------------------

def _static_ids(listing: list[dict]) -> list[int]:
    return [int(e["id"]) for e in listing if e.get("static")]


def _write_coco(out_dir: str, name: str, sensor: dict, frames: list[_Frame], classes: dict,
                annotate_static: bool = False) -> str:
    width, height = (int(v) for v in sensor["resolution"])
    images, annotations, unlabelled = [], [], False
    for frame in frames:
        instance = frame.instance()
        if instance.shape != (height, width):
            raise ValueError(f"{frame.need('instance.npy')}: shape {instance.shape}, manifest says "
                             f"{(height, width)}")
        listing = frame.listing()
        class_of = {int(e["id"]): int(e.get("class_id") or 0) for e in listing}
        if not annotate_static:  # background, not an object: its pixels count as background
            instance = np.where(np.isin(instance, _static_ids(listing)), -1, instance)
        rgb = frame.where("rgb.png")
        image_file = rgb if rgb is not None else frame.need("instance.npy")
        images.append({"id": frame.number, "file_name": os.path.basename(image_file), "width": width,
                       "height": height, "frame": frame.number})
        for ann in coco.instance_annotations(instance, class_of, classes):
            unlabelled |= ann["category_id"] not in {int(k) for k in classes if int(k) > 0}
            annotations.append({"id": len(annotations) + 1, "image_id": frame.number, **ann})
    document = {
        "info": {"description": f"rscene_addon render, sensor {name}", "version": "1.0",
                 "segmentation": "compressed RLE (column-major), exact per-pixel instance ids",
                 "file_names": "relative to this file's folder"},
        "licenses": [],
        "images": images,
        "annotations": annotations,
        "categories": coco.categories(classes, unlabelled),
    }
    path = os.path.join(out_dir, sensor["folder"], "coco_instances.json")
    write_text_atomic(path, _dump(document))
    return path


# -- BOP -------------------------------------------------------------------------------------------

class _BopDataset:
    """BOP scenes under ``out_dir/bop/train_pbr``, one per camera, and the dataset's info file."""

    def __init__(self, out_dir: str, report, annotate_static: bool = False) -> None:
        self.root = os.path.join(out_dir, "bop")
        self.report = report
        self.annotate_static = annotate_static
        self.scenes: dict[str, dict] = {}
        self.objects: dict[int, dict] = {}
        self.notes: list[str] = []
        self.coco: dict[str, tuple] = {}  # scene folder -> (images, annotations) for scene_gt_coco.json

    def note(self, text: str) -> None:
        self.notes.append(text)
        self.report(f"annotations: BOP: {text}")

    def add_scene(self, name: str, sensor: dict, frames: list[_Frame]) -> str | None:
        intrinsics = sensor.get("intrinsics")
        if sensor.get("projection") != "perspective" or not intrinsics:
            self.note(f"{name}: not a perspective camera (BOP needs K); skipped")
            return None
        scene_id = len(self.scenes)
        folder = os.path.join(self.root, BOP_SPLIT, f"{scene_id:06d}")
        K = np.asarray(intrinsics["K"], dtype=np.float64)
        cameras, gts, infos = {}, {}, {}
        amodal_frames, skipped, static, in_image_only = 0, set(), set(), 0
        coco_images, coco_annotations = [], []
        for frame in frames:
            if frame.number < 0:
                raise ValueError(f"{name} frame {frame.number}: BOP image ids cannot be negative")
            c2w = frame.entry.get("camera_to_world_opencv")
            if c2w is None:
                raise ValueError(f"{name} frame {frame.number}: the manifest has no camera_to_world_opencv")
            im = f"{frame.number:06d}"
            depth_m = np.load(frame.need("depth.npy"))
            scale = bop.choose_depth_scale(depth_m)
            depth_values = bop.depth_png(depth_m, scale)
            write_bytes_atomic(os.path.join(folder, "depth", f"{im}.png"), encode_grey(depth_values, 16))
            rgb = frame.where("rgb.jpg") or frame.where("rgb.png")
            if rgb is not None:
                ext = rgb.rsplit(".", 1)[-1]
                _link_or_copy(rgb, os.path.join(folder, "rgb", f"{im}.{ext}"))
                coco_images.append({"id": frame.number, "file_name": f"rgb/{im}.{ext}",
                                    "width": int(sensor["resolution"][0]), "height": int(sensor["resolution"][1])})
            cameras[str(frame.number)] = bop.camera_entry(K, c2w, scale)
            instance = frame.instance()
            amodal = frame.amodal(instance.shape)
            amodal_frames += amodal is not None
            gts[str(frame.number)], infos[str(frame.number)] = [], []
            for entry in sorted(frame.listing(), key=lambda e: int(e["id"])):
                iid = int(entry["id"])
                if entry.get("static") and not self.annotate_static:
                    static.add(iid)
                    continue
                pose = self._pose(entry)
                if pose is None or iid < 1:
                    skipped.add(iid)
                    continue
                rotation, centre, size = pose
                self._object(iid, entry, size)
                gt_id = len(gts[str(frame.number)])
                gts[str(frame.number)].append(bop.gt_entry(iid, rotation, centre, c2w))
                visible = instance == iid
                full = amodal.get(iid) if amodal is not None else None
                if amodal is not None and full is None:
                    raise ValueError(f"{frame.where('amodal.npz')}: no amodal mask for visible instance {iid}")
                extended = (entry["px_count_all"], entry["bbox_obj"]) if "bbox_obj" in entry else None
                info = bop.gt_info_entry(visible, full, depth_values, extended)
                in_image_only += full is not None and extended is None
                infos[str(frame.number)].append(info)
                if info["px_count_visib"] > 0 and rgb is not None:  # calc_gt_coco.py's annotation
                    coco_annotations.append(bop.coco_annotation(len(coco_annotations) + 1, frame.number, iid,
                                                                visible, full, info))
                stem = f"{im}_{gt_id:06d}.png"
                write_bytes_atomic(os.path.join(folder, "mask_visib", stem),
                                   encode_grey(bop.mask_png_values(visible), 8))
                if full is not None:
                    write_bytes_atomic(os.path.join(folder, "mask", stem), encode_grey(bop.mask_png_values(full), 8))
        for file_name, data in (("scene_camera.json", cameras), ("scene_gt.json", gts),
                                ("scene_gt_info.json", infos)):
            write_text_atomic(os.path.join(folder, file_name), _dump(data))
        amodal_all = amodal_frames == len(frames)
        if not amodal_all:
            self.note(f"{name}: amodal masks were not rendered for {len(frames) - amodal_frames} of "
                      f"{len(frames)} frames: mask/, bbox_obj, px_count_all, px_count_valid and visib_fract "
                      "are left out there (only mask_visib/ is written)")
        if in_image_only:
            self.note(f"{name}: px_count_all, bbox_obj and visib_fract count the silhouette inside the image "
                      f"only for {in_image_only} annotations (BOP counts a canvas 3x the image; an object partly "
                      "outside the frame then gets a visib_fract that is too high)")
        if static:
            self.note(f"{name}: static background {sorted(static)} (ground, terrain, static bodies) is not an "
                      "object: left out (render with --annotate-static to keep it)")
        if coco_images:
            self.coco[folder] = (coco_images, coco_annotations)
        if skipped:
            self.note(f"{name}: instances {sorted(skipped)} have no single rigid pose (several objects, or a "
                      "mirrored/sheared transform, or id < 1): left out of scene_gt")
        self.scenes[f"{scene_id:06d}"] = {"sensor": name, "folder": sensor["folder"], "frames": len(frames),
                                          "amodal_masks": amodal_all}
        self.report(f"annotations: BOP scene {scene_id:06d} <- {name} ({len(frames)} images)")
        return folder

    @staticmethod
    def _pose(entry: dict):
        corners = (entry.get("bbox3d") or {}).get("corners")
        return bop.pose_from_box_corners(corners) if corners is not None else None

    def _object(self, iid: int, entry: dict, size) -> None:
        size_mm = [round(float(s) * 1000.0, 6) for s in size]
        known = self.objects.setdefault(iid, {"paths": entry.get("paths", []), "class": entry.get("class"),
                                              "class_id": entry.get("class_id"), "size_mm": size_mm,
                                              "primitive": entry.get("primitive", "")})
        if not np.allclose(known["size_mm"], size_mm, rtol=1e-5, atol=1e-3):
            known.setdefault("note", "size changes between frames (scaled or deformed)")

    def _models_info(self) -> None:
        """``models/models_info.json`` from the model PLYs the render wrote (``products.write.write_models``)."""
        infos, missing = {}, []
        for iid, known in sorted(self.objects.items()):
            path = os.path.join(self.root, "models", f"obj_{iid:06d}.ply")
            if not os.path.exists(path):
                missing.append(iid)
                continue
            vertices, _ = read_mesh(path)
            infos[str(iid)] = bop.model_info(vertices, known.get("primitive") or "")
        if infos:
            write_text_atomic(os.path.join(self.root, "models", "models_info.json"), _dump(infos))
        if missing:
            self.note(f"objects {missing} have no model PLY (render with --products bop writes models/): "
                      "left out of models_info.json")

    def _scene_gt_coco(self) -> None:
        categories = [{"id": iid, "name": str(iid), "supercategory": "rscene"} for iid in sorted(self.objects)]
        for folder, (images, entries) in self.coco.items():
            about = f"rscene_addon BOP {BOP_SPLIT}, as the BOP toolkit's calc_gt_coco.py writes it"
            document = {"info": {"description": about}, "licenses": [], "categories": categories,
                        "images": images, "annotations": entries}
            write_text_atomic(os.path.join(folder, "scene_gt_coco.json"), _dump(document))

    def finish(self) -> None:
        self._models_info()
        self._scene_gt_coco()
        info = {
            "format": "BOP (thodan/bop_toolkit docs/bop_datasets_format.md), split " + BOP_SPLIT,
            "scenes": self.scenes,
            "objects": {str(k): v for k, v in sorted(self.objects.items())},
            "model_frame": "the object's own axes, origin at the centre of its bounding box, mm, its scale "
                           "applied (models/obj_XXXXXX.ply); size_mm = bounding box edge lengths",
            "px_count_all": "pixels of the unoccluded silhouette on a canvas 3x the image with the image in its "
                            "middle, as BOP's calc_gt_info.py counts them; bbox_obj likewise (may reach outside "
                            "the image); px_count_valid inside the image (the notes list any exceptions)",
            "static": "static background is annotated" if self.annotate_static else
                      "static background (ground, terrain, static bodies) is not an object",
            "image_id": "frame number",
            "obj_id": "instance id",
            "notes": self.notes,
        }
        write_text_atomic(os.path.join(self.root, "rscene_bop.json"), _dump(info))


def _link_or_copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.exists(dst):
        os.unlink(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
