"""The render manifest: :class:`sensors.manifest.Manifest` with several files per layer, chunk-aware
names and merging (pure).

``sensors.manifest.Manifest`` keys a frame's outputs by layer, but a lidar frame writes the same
layer as ``.npy``, ``.ply`` and ``.pcd`` and depth goes to ``.npy`` and ``.exr``; :class:`RenderManifest`
keys them by ``layer.ext`` instead (each entry also gets ``"ext"``). Lidar and IMU frames get a
``sensor_to_world`` pose (RaiSim sensor frame: +x forward, +z up) instead of camera extrinsics.

Chunks (names: :mod:`.chunks`): a run over ``--chunk K/N`` writes ``manifest_chunkK-of-N.json``, a full run ``manifest.json``.
Data files of different chunks never collide (frame numbers are in the names), and
:func:`merge_manifests` of all chunk manifests equals the full run's manifest.
"""
from __future__ import annotations

import json

import numpy as np

from ..sensors import manifest as _manifest
from ..sensors.manifest import Manifest, output_path

__all__ = ["RenderManifest", "merge_manifests"]

RUN_ONLY_METADATA = ("chunk", "frames", "complete")


class RenderManifest(Manifest):
    """A :class:`Manifest` whose frame outputs are keyed by ``layer.ext``."""

    def add_output(self, sensor: str, frame: int, layer: str, ext: str, shape, dtype, units: str) -> str:
        path = output_path(sensor, layer, frame, ext)
        outputs = self._frame(sensor, frame)["outputs"]
        key = f"{layer}.{ext}"
        if key in outputs:
            raise ValueError(f"{sensor!r} frame {frame} already has a {key!r} output")
        outputs[key] = {
            "layer": layer,
            "ext": ext,
            "path": path,
            "shape": [int(n) for n in shape],
            "dtype": _manifest._dtype_description(dtype),
            "units": str(units),
        }
        return path

    def add_sensor_pose(self, sensor: str, frame: int, sensor_to_world, time: float | None = None) -> None:
        """A lidar/IMU frame's pose at the frame's start (4x4, RaiSim sensor frame to world)."""
        t = np.asarray(sensor_to_world, dtype=np.float64)
        if t.shape != (4, 4):
            raise ValueError(f"sensor_to_world must be 4x4, got {t.shape}")
        entry = self._frame(sensor, frame)
        entry["sensor_to_world"] = t
        if time is not None:
            entry["time"] = float(time)

    def files(self) -> list[str]:
        """Every output path, sorted."""
        data = self.to_dict()
        return sorted(o["path"] for s in data["sensors"].values() for f in s["frames"] for o in f["outputs"])


def _strip_run(metadata: dict) -> dict:
    return {k: v for k, v in metadata.items() if k not in RUN_ONLY_METADATA}


def merge_manifests(manifests) -> dict:
    """One manifest dict from several chunk manifests (dicts or JSON paths) of the same scene.

    Sensors are united, frames concatenated and sorted; ``metadata.frames`` becomes the sorted union,
    ``chunk`` is dropped and ``complete`` is true only if every part was complete. Raises if the
    parts disagree on a sensor's description or list a frame twice.
    """
    parts = []
    for m in manifests:
        if isinstance(m, dict):
            parts.append(m)
        else:
            with open(m, encoding="utf-8") as f:
                parts.append(json.load(f))
    if not parts:
        raise ValueError("nothing to merge")
    merged = {k: v for k, v in parts[0].items() if k not in ("sensors", "metadata")}
    metadata = _strip_run(parts[0].get("metadata", {}))
    frames, complete, sensors = set(), True, {}
    for part in parts:
        if _strip_run(part.get("metadata", {})) != metadata:
            raise ValueError("manifests come from different scenes or settings")
        frames.update(part.get("metadata", {}).get("frames", []))
        complete = complete and part.get("metadata", {}).get("complete", True)
        for name, entry in part["sensors"].items():
            head = {k: v for k, v in entry.items() if k != "frames"}
            if name not in sensors:
                sensors[name] = {**head, "frames": {}}
            elif {k: v for k, v in sensors[name].items() if k != "frames"} != head:
                raise ValueError(f"sensor {name!r} differs between manifests")
            for frame in entry["frames"]:
                if frame["frame"] in sensors[name]["frames"]:
                    raise ValueError(f"sensor {name!r} frame {frame['frame']} is in two manifests")
                sensors[name]["frames"][frame["frame"]] = frame
    for entry in sensors.values():
        entry["frames"] = [entry["frames"][k] for k in sorted(entry["frames"])]
    metadata["frames"] = sorted(frames)
    metadata["complete"] = bool(complete)
    merged["metadata"] = metadata
    merged["sensors"] = sensors
    return merged
