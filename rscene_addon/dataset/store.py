"""The dataset folder: where units and bakes go, and how a unit becomes complete (pure, filesystem).

A unit is written into a hidden scratch folder beside its place (``.tmp-<name>-<pid>-<random>``) and
renamed into place only when every file and its ``unit.json`` are written: a folder at a unit's place is
complete by construction, and a killed run leaves only scratch folders, which the next run deletes.
``unit.json`` holds the unit's fingerprint: a unit made by another job (other scene bytes, seed or
settings) does not count as complete and is made again.

Layout::

    OUT/job.json                                   the job as last run (settings, units)
    OUT/bakes/<scene>/<variation>/scene.blend      the scene simulated and baked (local runs)
    OUT/<scene>/<variation>/chunk0001-of-0006/     one unit: {sensor}/{layer}_{frame}.{ext},
                                                   manifest_chunk1-of-6.json, unit.json, log.txt
    OUT/dataset.json                               the merged manifest and the failures
"""
from __future__ import annotations

import json
import os
import shutil
import uuid

from ..base.atomic import write_text_atomic

__all__ = ["UNIT_FILE", "DatasetStore", "publish", "scratch_beside", "scratch_owner"]

UNIT_FILE = "unit.json"
SCRATCH_PREFIX = ".tmp-"


def scratch_beside(final: str) -> str:
    """A new empty scratch folder in ``final``'s parent (same filesystem, so the rename is atomic)."""
    parent, name = os.path.split(os.path.abspath(final))
    os.makedirs(parent, exist_ok=True)
    path = os.path.join(parent, f"{SCRATCH_PREFIX}{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.mkdir(path)
    return path


def scratch_owner(entry: str) -> tuple[str, int] | None:
    """``(final folder name, pid)`` of a scratch folder's name (:func:`scratch_beside`, or an old folder
    :func:`publish` moved aside), else None."""
    if not entry.startswith(SCRATCH_PREFIX):
        return None
    body = entry[len(SCRATCH_PREFIX):].removesuffix("-old")
    name, _, rest = body.rpartition("-")  # the random part
    name, _, pid = name.rpartition("-")
    if not name or not pid.isdigit() or len(rest) != 8:
        return None
    return name, int(pid)


def publish(scratch: str, final: str) -> None:
    """Rename the finished ``scratch`` folder to ``final``, replacing an older folder there. If another
    process published the same (deterministic) folder first, ours is dropped."""
    if os.path.isdir(final):
        parent, name = os.path.split(os.path.abspath(final))
        stale = os.path.join(parent, f"{SCRATCH_PREFIX}{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}-old")
        try:
            os.rename(final, stale)
        except FileNotFoundError:
            stale = None
        if stale:
            shutil.rmtree(stale, ignore_errors=True)
    try:
        os.rename(scratch, final)
    except OSError:
        if not os.path.isdir(final):
            raise
        shutil.rmtree(scratch, ignore_errors=True)


def publish_bake(scratch: str, final: str, fingerprint: str) -> None:
    """:func:`publish` for a bake, unless ``final`` already holds this very bake (another process, or
    a slice of the same job, made it first and may be rendering from it): then ours is dropped."""
    record = read_json(os.path.join(final, "bake.json"))
    if isinstance(record, dict) and record.get("fingerprint") == fingerprint:
        shutil.rmtree(scratch, ignore_errors=True)
        return
    publish(scratch, final)


def read_json(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def write_json(path: str, value) -> None:
    """Write ``value`` as JSON atomically (``base.atomic``)."""
    write_text_atomic(path, json.dumps(value, indent=1, sort_keys=True) + "\n")


class DatasetStore:
    def __init__(self, out_dir: str) -> None:
        self.root = os.path.abspath(out_dir)

    def unit_dir(self, unit) -> str:
        return os.path.join(self.root, *unit.folder.split("/"))

    def bake_dir(self, bake) -> str:
        return os.path.join(self.root, "bakes", *bake.key.split("/"))

    def unit_record(self, unit) -> dict | None:
        """The ``unit.json`` of a complete unit that matches ``unit``'s fingerprint, else None."""
        record = read_json(os.path.join(self.unit_dir(unit), UNIT_FILE))
        if isinstance(record, dict) and record.get("fingerprint") == unit.fingerprint:
            return record
        return None

    def bake_ready(self, bake) -> bool:
        record = read_json(os.path.join(self.bake_dir(bake), "bake.json"))
        return isinstance(record, dict) and record.get("fingerprint") == bake.fingerprint

    def remove_scratch(self, finals) -> list[str]:
        """Delete the scratch folders that killed runs left beside ``finals`` (final unit or bake
        folders); returns them. One directory listing per parent folder, a set lookup per entry: the
        work grows with the folders named, not with the dataset around them."""
        removed = []
        by_parent: dict = {}
        for final in finals:
            parent, name = os.path.split(final)
            by_parent.setdefault(parent, set()).add(name)
        for parent, names in by_parent.items():
            try:
                entries = os.listdir(parent)
            except FileNotFoundError:
                continue
            for entry in entries:
                owner = scratch_owner(entry)
                if owner is not None and owner[0] in names:
                    shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
                    removed.append(os.path.join(parent, entry))
        return sorted(removed)

    def job_record(self) -> dict | None:
        return read_json(os.path.join(self.root, "job.json"))

    def write_job_record(self, record: dict) -> None:
        os.makedirs(self.root, exist_ok=True)
        write_json(os.path.join(self.root, "job.json"), record)
