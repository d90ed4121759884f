"""Helpers the format converters share: extra keys, unique paths, warnings, materials, file references.

Values a format has but the ``.rscene`` schema does not are stored as extra ``key=value`` fields on the
record (the codec keeps unknown keys and writes them back). ``set_extra`` encodes them like documented keys
(numbers shortest, vectors comma-separated, flags ``true``/``false``); the ``extra_*`` readers decode them
back from the raw text, whether or not a later schema types them.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

import numpy as np

from ..model import Diagnostic, Record, Scene, new_record
from ..model.values import decode_text, encode_number

__all__ = [
    "FILE_REFERENCE_FIELDS",
    "PathAllocator",
    "color_material",
    "encode_extra",
    "extra",
    "extra_flag",
    "extra_list",
    "extra_number",
    "extra_text",
    "extra_vec",
    "leaf_name",
    "rebase_references",
    "sanitize_name",
    "set_extra",
    "warn",
]


def _encode(value) -> str:
    kind = type(value)
    if kind is str:  # the common cases first, by exact type
        return value
    if kind is float:
        return encode_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return encode_number(float(value))
    if isinstance(value, str):
        return value
    values = np.asarray(value)
    if values.dtype.kind in "OUS":
        return ";".join(str(v) for v in values.ravel())
    values = values.astype(np.float64)
    if values.ndim == 2:
        return ";".join(",".join(encode_number(v) for v in row) for row in values.tolist())
    return ",".join(encode_number(v) for v in values.ravel().tolist())


def encode_extra(value) -> str:
    """The text ``set_extra`` stores for an undocumented key (give it to ``new_record`` to skip the set)."""
    return _encode(value)


def set_extra(record: Record, name: str, value) -> None:
    """Store ``value`` under ``name``: a typed set for a documented key, else an encoded extra key.

    ``None`` leaves the record unchanged. For a documented key the value goes through the key's own type.
    """
    if value is None:
        return
    schema = record.schema
    field = schema._index.get(name) if schema is not None else None
    if field is not None:
        try:
            record.set(name, value)
        except (TypeError, ValueError):
            record.set(name, field.type.decode(_encode(value)))
        return
    record.set(name, _encode(value))


def extra_text(record: Record, name: str, default: str | None = None) -> str | None:
    raw = record.raw_keys.get(name)
    if raw is None:
        return default
    return decode_text(raw)


def extra(record: Record, name: str, default=None):
    """The typed value of a documented key, or the decoded text of an extra key."""
    if record.schema is not None and record.schema.field(name) is not None:
        return record.get(name) if name in record.raw_keys else default
    return extra_text(record, name, default)


_SPLIT = re.compile(r"[,;\s]+")


def _numbers(text: str) -> list[float]:
    parts = [p for p in _SPLIT.split(text.strip()) if p]
    return [float(p) for p in parts]


def extra_number(record: Record, name: str, default: float | None = None) -> float | None:
    text = extra_text(record, name)
    if text in (None, ""):
        return default
    try:
        value = float(text)
    except ValueError:
        return default
    return value if math.isfinite(value) else default


def extra_vec(record: Record, name: str, n: int | None = None, default=None):
    text = extra_text(record, name)
    if text in (None, ""):
        return default
    try:
        values = _numbers(text)
    except ValueError:
        return default
    if n is not None and len(values) != n:
        return default
    return tuple(values)


def extra_list(record: Record, name: str) -> np.ndarray:
    text = extra_text(record, name)
    if not text:
        return np.zeros(0)
    try:
        return np.array(_numbers(text), dtype=np.float64)
    except ValueError:
        return np.zeros(0)


def extra_flag(record: Record, name: str, default: bool | None = None) -> bool | None:
    text = extra_text(record, name)
    if text is None or text == "":
        return default
    low = text.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    return default


def leaf_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] if path else ""


def sanitize_name(name: str, fallback: str) -> str:
    """A usable path component: no slashes, no surrounding space, never empty."""
    name = (name or "").strip().replace("/", "_")
    return name or fallback


class PathAllocator:
    """Unique node paths under a root: a repeated name gets ``_1``, ``_2``... appended."""

    def __init__(self, root: str = "/World"):
        self.root = root.rstrip("/")
        self.used: set[str] = set()
        # per base path, the suffix last given: paths are never released, so the first free suffix is not
        # below it (a file of 10^5 actors of one name took a walk of every earlier suffix each: quadratic)
        self._suffix: dict[str, int] = {}

    def take(self, name: str, parent: str | None = None) -> str:
        base = f"{(parent or self.root).rstrip('/')}/{name}"
        path, n = base, 0
        if path in self.used:
            n = self._suffix.get(base, 0)
            path = base if n == 0 else f"{base}_{n}"
            while path in self.used:
                n += 1
                path = f"{base}_{n}"
            self._suffix[base] = n
        self.used.add(path)
        return path


def record_label(record: Record) -> str:
    """How a record is named in a warning: its path, else its name or id, else its tag."""
    if record.schema is not None:
        if record.schema.field("path") is not None:
            return str(record.path)
        if record.tag == "contact_material":
            return f"{record.get('materialA')}/{record.get('materialB')}"
        for name in ("name", "id"):
            if record.schema.field(name) is not None and record.get(name):
                return str(record.get(name))
    return record.tag


def loss_warnings(fmt: str, dropped: dict[str, list[str]]) -> list[str]:
    """One warning per kind of record a format cannot hold: ``<fmt> cannot hold 3 light record(s): ...``."""
    out = []
    for what, labels in dropped.items():
        shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
        out.append(f"{fmt} cannot hold {len(labels)} {what} record(s): {shown}")
    return out


def warn(scene: Scene, file: str, line: int, tag: str, message: str) -> None:
    scene.warnings.append(Diagnostic(file, line, tag, message, "warning"))


def color_material(scene: Scene, rgba: Sequence[float], cache: dict, prefix: str = "color") -> str:
    """The id of a ``material`` record with base color ``rgba`` (created once per distinct color)."""
    rgba = tuple(float(v) for v in rgba) + (1.0,) * (4 - len(rgba))
    key = tuple(round(v, 9) for v in rgba)
    if key in cache:
        return cache[key]
    name = prefix + "_" + "_".join(encode_number(round(v, 6)).replace("-", "m").replace(".", "p") for v in rgba)
    scene.add(new_record("material", name=name, color=rgba, metallic=0.0, roughness=0.55))
    cache[key] = name
    return name


def material_color(scene: Scene, name: str) -> tuple[float, float, float, float] | None:
    """The base color of the ``material`` whose id or name is ``name``, or None."""
    if not name:
        return None
    for record in scene.of("material"):
        if name in (record.get("name"), record.get("id")):
            return tuple(record.get("color"))
    return None


# -- file references ------------------------------------------------------------------------------------

# (tag, field) of every file reference the converters read or write. Documented fields and extra keys.
FILE_REFERENCE_FIELDS: tuple[tuple[str, str], ...] = (
    ("object", "mesh"), ("object", "renderMeshPath"), ("object", "collisionMeshPath"),
    ("compound_child", "mesh"),
    ("articulated_resource", "sourcePath"), ("articulated_resource", "resourceDirectory"),
    ("articulated", "sourcePath"), ("articulated", "resourceDirectory"),
    ("terrain_region", "sourcePath"), ("instanced_visual", "meshPath"),
    ("object", "airsimConfig"), ("compound", "airsimConfig"),
)
_MULTI = {"airsimConfig"}  # several files separated by ';'


def _is_abs(path: str) -> bool:
    return path.startswith("/") or bool(re.match(r"^[A-Za-z]:[\\/]", path))


def _rebase(ref: str, resolve, new_dir: str) -> str:
    if not ref or _is_abs(ref):
        return ref
    target = os.path.normpath(resolve(ref))
    if os.path.normpath(os.path.join(new_dir, ref)) == target or not os.path.exists(target):
        return ref  # already right, or a missing file (left as written; its reader reported it)
    try:
        return os.path.relpath(target, new_dir).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return target


def rebase_references(scene: Scene, old_dir: str, new_dir: str, dry_run: bool = False) -> int:
    """Rewrite relative file references so they point at the same files from ``new_dir``.

    A reference that already resolves to the same file from ``new_dir``, or names a file that does not
    exist, is left as written (so converting a scene into its own folder changes nothing). Returns the number of references that (would) change;
    ``dry_run`` only counts them.
    """
    old_dir, new_dir = os.path.abspath(old_dir), os.path.abspath(new_dir)
    if old_dir == new_dir:
        return 0
    if scene.path and os.path.dirname(os.path.abspath(scene.path)) == old_dir:
        resolve = scene.resolve  # relative references may also resolve under asset_root
    else:
        def resolve(ref: str) -> str:
            return os.path.join(old_dir, ref)
    fields: dict[str, list[str]] = {}
    for tag, name in FILE_REFERENCE_FIELDS:
        fields.setdefault(tag, []).append(name)
    changed = 0
    for record in scene.records:
        for name in fields.get(record.tag, ()):
            if record.schema and record.schema.field(name) and not record.has(name):
                continue
            value = record.get(name) if record.schema and record.schema.field(name) else extra_text(record, name)
            if not value or not isinstance(value, str):
                continue
            parts = value.split(";") if name in _MULTI else [value]
            moved = [_rebase(part, resolve, new_dir) for part in parts]
            count = sum(1 for a, b in zip(parts, moved) if a != b)
            if count and not dry_run:
                set_extra(record, name, ";".join(moved))
            changed += count
    return changed

