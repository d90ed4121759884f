"""``export-annotations``: COCO and/or BOP files from a finished render folder (plain Python, no bpy)."""
from __future__ import annotations

import glob
import json
import os

from ..products.outputs import merge_manifests
from ..products.annotations import export_annotations


def export_folder(out_dir: str, coco: bool, bop: bool, sensors=None, annotate_static: bool = False) -> int:
    """Annotate ``out_dir`` (its manifest.json, or its chunk manifests merged); neither flag: both.
    Returns the exit status; errors are printed with the file they concern."""
    out = out_dir
    manifest = None
    if not os.path.exists(os.path.join(out, "manifest.json")):
        chunks = sorted(glob.glob(os.path.join(out, "manifest_chunk*-of-*.json")))
        if chunks:  # a chunked run: annotate the chunks together
            try:
                manifest = merge_manifests(chunks)
            except json.JSONDecodeError as exc:
                print(f"error: a chunk manifest in {out} is not valid JSON (line {exc.lineno}: {exc.msg})")
                return 1
    both = not (coco or bop)
    try:
        export_annotations(out, coco or both, bop or both, manifest=manifest, sensors=sensors,
                           report=lambda line: print(line, flush=True), annotate_static=annotate_static)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}")
        return 1
    return 0
