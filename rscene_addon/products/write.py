"""Writers: one sensor frame's ``{layer: value}`` into files and manifest entries, through the table (pure).

The Blender side returns arrays; this module alone decides file formats, adds the sensor record's
noise (``noiseMean``/``noiseStddev``/``noiseSeed``, seeded per frame), writes the preview PNGs
(:mod:`.preview`) and fills the manifest. A writer
is ``(ext, write(path, value), describe(value) -> (shape, dtype))``; :data:`WRITERS` holds them all.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from ..base.atomic import atomic_open, write_bytes_atomic, write_text_atomic
from ..formats.png import encode_image
from ..sensors.noise import add_depth_noise, add_image_noise
from ..sensors.writers import write_imu_csv, write_npy, write_pcd, write_ply
from .bop import model_ply
from .exr_file import write_exr
from .jpeg import encode_jpeg
from .preview import UNITS as PREVIEW_UNITS
from .preview import preview
from .table import PRODUCTS

__all__ = ["DEPTH_EXR_CHANNEL", "MODELS_FOLDER", "WRITERS", "Writer", "write_frame", "write_models"]

MODELS_FOLDER = "bop/models"  # BOP's models/ of the run's BOP dataset (annotations.BOP_SPLIT beside it)

JPEG_QUALITY = 95  # BOP's PBR images are JPEG; the units text of rgb.jpg states it
DEPTH_EXR_CHANNEL = "Y"  # OpenCV reads a one-channel EXR only as Y (grey) or R/G/B; "Z" reads as zeros


@dataclass(frozen=True)
class Writer:
    ext: str
    write: object  # (path, value) -> None
    describe: object = None  # value -> (shape, dtype); None: the array's own


def _array_shape(value):
    a = np.asarray(value)
    return a.shape, a.dtype


def _write_png(path, image) -> None:
    image = np.asarray(image)
    # zlib level 1: Blender's default PNG compression (15%) is about that; level 6 took 2.6x the CPU
    # time for 3% smaller files (640 x 480 RGB)
    write_bytes_atomic(path, encode_image(image, 16 if image.dtype == np.uint16 else 8, level=1), durable=False)


def _write_json(path, value) -> None:
    write_text_atomic(path, json.dumps(value, sort_keys=True, allow_nan=False) + "\n", durable=False)


def _write_npz(path, value) -> None:
    ids, masks = value[0], value[1]
    with atomic_open(path, "wb", durable=False) as f:
        np.savez_compressed(f, ids=np.asarray(ids, np.int32), masks=np.asarray(masks, bool))


def _write_points(kind):
    def write(path, value):
        points, comments = value["points"], value.get("comments", ())
        if kind == "npy":
            write_npy(path, points)
        elif kind == "ply":
            write_ply(path, points, comments=comments)
        else:  # the points are in the sensor frame: the viewpoint is that frame's origin (identity)
            write_pcd(path, points)
    return write


def _move(path, value) -> None:
    os.replace(value["path"], path)


WRITERS = {
    "npy": Writer("npy", write_npy),
    "exr": Writer("exr", lambda path, depth: write_exr(path, {DEPTH_EXR_CHANNEL: depth})),
    "png": Writer("png", _write_png),
    "jpg": Writer("jpg", lambda path, image: write_bytes_atomic(path, encode_jpeg(image, JPEG_QUALITY), durable=False),
                  lambda image: ((*np.asarray(image).shape[:2], 3), np.dtype(np.uint8))),
    "json": Writer("json", _write_json, lambda v: ((len(v["instances"]),), np.dtype(object))),
    "npz": Writer("npz", _write_npz, lambda v: (np.asarray(v[1]).shape, np.dtype(bool))),
    "points.npy": Writer("npy", _write_points("npy"), lambda v: _array_shape(v["points"])),
    "points.ply": Writer("ply", _write_points("ply"), lambda v: _array_shape(v["points"])),
    "points.pcd": Writer("pcd", _write_points("pcd"), lambda v: _array_shape(v["points"])),
    "csv": Writer("csv", lambda path, v: write_imu_csv(path, *v), lambda v: ((len(v[0]), 7), np.float64)),
    "move": Writer("exr", _move, lambda v: (tuple(v["shape"]), np.dtype(np.float32))),
}


def _noisy(kind: str, value, spec, frame: int):
    if kind == "image":
        full_scale = float(np.iinfo(value.dtype).max)
        return add_image_noise(value, spec.noise_mean * full_scale, spec.noise_stddev * full_scale,
                               spec.noise_seed, frame, "rgb")
    return add_depth_noise(value, spec.noise_mean, spec.noise_stddev, spec.noise_seed, frame, "depth")


def _derived(layer: str, arrays: dict, spec):
    """Layers computed from others here rather than by the renderer."""
    if layer == "range" and "depth" in arrays:
        return spec.intrinsics.depth_to_range(arrays["depth"]).astype(np.float32)
    return None


def write_frame(out_dir: str, manifest, spec, frame: int, arrays: dict, options, units: dict | None = None
                ) -> list[str]:
    """Write the layers of ``spec.products`` found in ``arrays`` for ``frame``; returns the relative paths.

    ``arrays`` maps a layer name to its value (an array, or what the layer's writer takes); a layer
    whose ``option`` is off in ``options`` is skipped, and so is a product that made nothing this frame
    (e.g. Cryptomatte without a Cycles render). ``units`` fills the ``{fields}`` of the table's units.
    """
    fields = {"bits": 8, "view": "", "step": 1, "amodal_note": "", "passes_note": "", **(units or {})}
    written = []
    for name in spec.products:
        for layer in PRODUCTS[name].layers:
            if layer.option and not getattr(options, layer.option, False):
                continue
            value = arrays.get(layer.name)
            if value is None:
                value = _derived(layer.name, arrays, spec)
            if value is None:
                continue
            if layer.noise and spec.has_noise:
                value = _noisy(layer.noise, value, spec, frame)
            writer = WRITERS[layer.writer]
            if layer.writer.startswith("points.") and writer.ext not in options.lidar_formats:
                continue
            shape, dtype = (writer.describe or _array_shape)(value)
            rel = manifest.add_output(spec.name, frame, layer.name, writer.ext, shape, dtype,
                                      layer.units.format_map(fields))
            full = os.path.join(out_dir, *rel.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            writer.write(full, value)
            written.append(rel)
            if layer.preview and getattr(options, "previews", False):  # a picture of what was just written
                written.append(_write_preview(out_dir, manifest, spec.name, frame, layer, value))
    return written


def _write_preview(out_dir: str, manifest, sensor: str, frame: int, layer, value) -> str:
    image = preview(layer.preview, value)
    rel = manifest.add_output(sensor, frame, f"{layer.name}_preview", "png", image.shape, image.dtype,
                              PREVIEW_UNITS[layer.preview])
    _write_png(os.path.join(out_dir, *rel.split("/")), image)
    return rel


def write_models(out_dir: str, models: dict) -> list[str]:
    """BOP models ``{obj_id: (vertices (V, 3) m in the model frame, triangles (T, 3), primitive)}`` as
    ``bop/models/obj_{obj_id:06d}.ply`` in mm; returns the relative paths. Every chunk of a run writes
    the same files (atomically), and ``annotations`` adds ``models_info.json`` from them."""
    written = []
    for obj_id, (vertices, triangles, _primitive) in sorted(models.items()):
        rel = f"{MODELS_FOLDER}/obj_{int(obj_id):06d}.ply"
        write_bytes_atomic(os.path.join(out_dir, *rel.split("/")),
                           model_ply(np.asarray(vertices) * 1000.0, triangles), durable=False)
        written.append(rel)
    return written
