"""Reading a dataset: ``rscene_addon.dataset.load(DIR)`` streams its frames with calibration and arrays
(pure: numpy and this package's own readers, no bpy).

::

    from rscene_addon import dataset
    data = dataset.load("data")
    for frame in data.frames(sensor="/World/Camera"):
        depth = frame.read("depth.npy")          # (H, W) float32, metres
        K, pose = frame.K, frame.camera_to_world  # 3x3 OpenCV, 4x4 OpenCV camera -> world

It reads ``units.jsonl`` line by line and one unit manifest at a time: memory stays that of one unit
whatever the size of the dataset. Frames come in the index's order (scene, variation, frame), each
sensor's frames of a unit together.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from ..products.outputs import merge_manifests
from ..sensors.writers import read_pcd, read_ply
from .index import DATASET_FORMAT, INDEX_NAME

__all__ = ["Dataset", "DatasetError", "Frame", "load", "read_output"]


class DatasetError(ValueError):
    """A folder that is not a readable dataset (names the file and what is wrong)."""


def read_output(path: str) -> np.ndarray:
    """One output file as an array: ``.npy`` (numpy), ``.csv`` (IMU: ``(M, 7)`` float64 in the header's
    column order, time first), ``.ply``/``.pcd`` (lidar points, structured). PNG and EXR need an image
    library (imageio, OpenImageIO): read ``Frame.paths[...]`` with it."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return np.load(path, allow_pickle=False)
    if ext == ".csv":
        return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=np.float64)
    if ext == ".ply":
        return read_ply(path)
    if ext == ".pcd":
        return read_pcd(path)
    raise DatasetError(f"{path}: no array reader for {ext} files here; open it with an image library")


@dataclass
class Frame:
    """One sensor's frame: where it was, how it projects, and its files (absolute paths by
    ``layer.ext``, e.g. ``"depth.npy"``). ``K`` (3x3) and ``resolution`` for perspective cameras;
    ``camera_to_world`` (4x4, OpenCV camera) for cameras, ``sensor_to_world`` for lidar and IMU."""

    scene: str
    variation: str
    seed: int | None
    unit: str
    sensor: str
    kind: str
    frame: int
    time: float | None
    K: np.ndarray | None
    resolution: tuple | None
    camera_to_world: np.ndarray | None
    sensor_to_world: np.ndarray | None
    paths: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)   # layer.ext -> shape, dtype, units as the manifest says

    def read(self, key: str) -> np.ndarray:
        """The array of output ``key`` (``"depth.npy"``, ``"points.ply"``, ...)."""
        if key not in self.paths:
            raise KeyError(f"{self.sensor} frame {self.frame} has no output {key!r} (has {sorted(self.paths)})")
        return read_output(self.paths[key])

    def arrays(self) -> dict:
        """Every output this module can read, by key (PNG and EXR left out)."""
        return {k: read_output(p) for k, p in self.paths.items()
                if os.path.splitext(p)[1].lower() in (".npy", ".csv", ".ply", ".pcd")}


def _key(output: dict) -> str:
    return f"{output.get('layer', '')}.{output.get('ext') or os.path.splitext(output['path'])[1][1:]}"


def _matrix(value):
    return None if value is None else np.asarray(value, dtype=np.float64)


class Dataset:
    def __init__(self, root: str, info: dict) -> None:
        self.root, self.info = root, info

    @property
    def complete(self) -> bool:
        return bool(self.info.get("complete"))

    def units(self):
        """The index's lines (dicts: unit, scene, variation, seed, frames, manifest), streamed."""
        path = os.path.join(self.root, self.info.get("index", INDEX_NAME))
        try:
            handle = open(path, encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"{path}: cannot read the index: {exc.strerror or exc}") from None
        with handle:
            for number, line in enumerate(handle, 1):
                try:
                    yield json.loads(line)
                except ValueError as exc:
                    raise DatasetError(f"{path}:{number}: not a JSON line: {exc}") from None

    def unit_manifest(self, entry: dict) -> dict:
        path = os.path.join(self.root, *entry["manifest"].split("/"))
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: unit {entry['unit']}'s manifest is unreadable: {exc}") from None

    def frames(self, sensor: str | None = None, scene: str | None = None):
        """Every frame (:class:`Frame`) of every complete unit; ``sensor``/``scene`` pick one."""
        for entry in self.units():
            if scene is not None and entry["scene"] != scene:
                continue
            manifest = self.unit_manifest(entry)
            folder = os.path.join(self.root, *entry["unit"].split("/"))
            for name, info in sorted(manifest.get("sensors", {}).items()):
                if sensor is not None and name != sensor:
                    continue
                intrinsics = info.get("intrinsics") or {}
                for item in info.get("frames", []):
                    outputs = {_key(o): o for o in item.get("outputs", [])}
                    yield Frame(scene=entry["scene"], variation=entry["variation"], seed=entry.get("seed"),
                                unit=entry["unit"], sensor=name, kind=info.get("kind", ""), frame=item["frame"],
                                time=item.get("time"), K=_matrix(intrinsics.get("K")),
                                resolution=tuple(info["resolution"]) if info.get("resolution") else None,
                                camera_to_world=_matrix(item.get("camera_to_world_opencv")),
                                sensor_to_world=_matrix(item.get("sensor_to_world")),
                                paths={k: os.path.join(folder, *o["path"].split("/")) for k, o in outputs.items()},
                                outputs={k: {f: o.get(f) for f in ("shape", "dtype", "units")}
                                         for k, o in outputs.items()})

    __iter__ = frames

    def manifest(self, scene: str, variation: str) -> dict:
        """One scene variation's unit manifests merged (``products.outputs.merge_manifests``), output
        paths relative to the dataset folder: what ``dataset.json`` held for it before version 2."""
        parts = []
        for entry in self.units():
            if parts and (entry["scene"], entry["variation"]) != (scene, variation):
                break  # the index keeps a variation's units together: the rest is someone else's
            if entry["scene"] == scene and entry["variation"] == variation:
                part = self.unit_manifest(entry)
                for info in part.get("sensors", {}).values():
                    for item in info.get("frames", []):
                        for output in item.get("outputs", []):
                            output["path"] = f"{entry['unit']}/{output['path']}"
                parts.append(part)
        if not parts:
            raise DatasetError(f"{self.root}: no complete unit of {scene}/{variation}")
        return merge_manifests(parts)


def load(folder) -> Dataset:
    """The dataset in ``folder`` (written by ``python -m rscene_addon dataset``)."""
    root = os.path.abspath(folder)
    path = os.path.join(root, "dataset.json")
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc} (not a dataset folder?)") from None
    except ValueError as exc:
        raise DatasetError(f"{path}: not JSON: {exc}") from None
    if not isinstance(info, dict) or info.get("format") != DATASET_FORMAT:
        raise DatasetError(f"{path}: not an rscene dataset (format {info.get('format') if isinstance(info, dict) else None!r})")
    if "index" not in info:
        raise DatasetError(f"{path}: written by an older version (no unit index): rerun the same "
                           "`python -m rscene_addon dataset JOB --out DIR` to write it (complete units are kept)")
    return Dataset(root, info)
