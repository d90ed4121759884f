"""The dataset's index: ``dataset.json`` (a small summary) and ``units.jsonl`` (one line per complete
unit), written from the plan in one streaming pass (pure, filesystem).

Per-unit manifests stay in their unit folders; the index only says where they are, so its size and
the time to write it grow with the number of units (~200 bytes each), never with their frames, and a
reader streams it line by line (:func:`rscene_addon.dataset.load`). ``units.jsonl`` lines follow the
plan's order (scene, variation, chunk)::

    {"unit": "s/seed1/chunk0002-of-0006", "scene": "s", "variation": "seed1", "seed": 1,
     "frames": [9, ..., 16], "manifest": "s/seed1/chunk0002-of-0006/manifest_chunk2-of-6.json"}

``dataset.json``: format, version, job, settings, unit counts, ``complete`` (no unit failed or
missing), ``index`` (the JSONL file's name) and the failures with their errors.
"""
from __future__ import annotations

import json
import os

from .store import write_json

__all__ = ["DATASET_FORMAT", "INDEX_NAME", "DATASET_VERSION", "index_line", "write_index"]

DATASET_FORMAT = "rscene_dataset"
DATASET_VERSION = 2
INDEX_NAME = "units.jsonl"


def index_line(unit) -> dict:
    variation = unit.bake.variation
    return {"unit": unit.id, "scene": unit.bake.scene.name, "variation": variation.name, "seed": variation.seed,
            "frames": list(unit.frames), "manifest": f"{unit.folder}/{unit.manifest_name}"}


def write_index(job, store, units, is_complete, failures: dict) -> dict:
    """Write ``units.jsonl`` (the units for which ``is_complete(unit)`` holds, in ``units``' order) and
    ``dataset.json``; returns the summary. ``failures`` maps a unit id to its error text."""
    path = os.path.join(store.root, INDEX_NAME)
    tmp = f"{path}.{os.getpid()}.tmp"
    done = 0
    failed = []
    with open(tmp, "w", encoding="utf-8") as handle:
        for unit in units:
            if is_complete(unit):
                handle.write(json.dumps(index_line(unit), separators=(",", ":")) + "\n")
                done += 1
            elif unit.id in failures:
                failed.append({"unit": unit.id, "scene": unit.bake.scene.name, "source": unit.bake.scene.path,
                               "variation": unit.bake.variation.name, "frames": list(unit.frames),
                               "error": failures[unit.id]})
    os.replace(tmp, path)
    summary = {"format": DATASET_FORMAT, "version": DATASET_VERSION, "job": os.path.abspath(job.path),
               "settings": job.settings(), "index": INDEX_NAME,
               "scenes": len(job.scenes), "variations": sum(len(s.variations) for s in job.scenes),
               "units": {"total": len(units), "complete": done, "failed": len(failed)},
               "complete": done == len(units), "failures": failed}
    write_json(os.path.join(store.root, "dataset.json"), summary)
    return summary
