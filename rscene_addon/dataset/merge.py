"""The dataset manifest: every complete unit's render manifest merged per scene variation, paths made
relative to the dataset folder, and the failures listed (pure).

Each ``datasets`` entry is ``render.outputs.merge_manifests`` of the variation's unit manifests (K,
OpenGL projection, per-frame extrinsics, files with shape/dtype/units, the segmentation id map), with
every output path prefixed by its unit folder. ``complete`` is true only when no unit failed or is
missing.
"""
from __future__ import annotations

import os

from ..products.outputs import merge_manifests
from .store import read_json

__all__ = ["DATASET_FORMAT", "dataset_manifest"]

DATASET_FORMAT = "rscene_dataset"


def _prefixed(manifest: dict, folder: str) -> dict:
    for sensor in manifest.get("sensors", {}).values():
        for frame in sensor.get("frames", []):
            for output in frame.get("outputs", []):
                output["path"] = f"{folder}/{output['path']}"
    return manifest


def dataset_manifest(job, store, bakes, units, failures: dict) -> dict:
    """``failures`` maps a unit id (or a bake key) to its error text."""
    entries, problems = [], []
    by_bake: dict = {}
    for unit in units:
        by_bake.setdefault(unit.bake.key, []).append(unit)
    done = 0
    for bake in bakes:
        parts, unit_ids = [], []
        for unit in by_bake.get(bake.key, []):
            record = store.unit_record(unit)
            if record is None:
                continue
            manifest = read_json(os.path.join(store.unit_dir(unit), record["manifest"]))
            if manifest is None:
                problems.append({"unit": unit.id, "error": "unit manifest missing or unreadable"})
                continue
            parts.append(_prefixed(manifest, unit.folder))
            unit_ids.append(unit.id)
        done += len(unit_ids)
        entry = {"scene": bake.scene.name, "source": bake.scene.path, "variation": bake.variation.name,
                 "seed": bake.variation.seed, "units": unit_ids, "manifest": None}
        if parts:
            try:
                entry["manifest"] = merge_manifests(parts)
            except ValueError as exc:
                problems.append({"unit": bake.key, "error": f"unit manifests do not merge: {exc}"})
        entries.append(entry)
    failed = []
    for unit in units:
        if unit.id in failures:
            failed.append({"unit": unit.id, "scene": unit.bake.scene.name, "source": unit.bake.scene.path,
                           "variation": unit.bake.variation.name, "frames": list(unit.frames),
                           "error": failures[unit.id]})
    failed += problems
    return {"format": DATASET_FORMAT, "version": 1, "job": os.path.abspath(job.path), "settings": job.settings(),
            "units": {"total": len(units), "complete": done, "failed": len(failed)},
            "complete": done == len(units) and not problems, "datasets": entries, "failures": failed}
