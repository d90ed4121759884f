"""A mesh carried inside its record: the ``meshVertices`` / ``meshIndices`` keys of an ``object`` record (or of
a ``compound_child``, a part of a compound).

CoppeliaSim's simple XML may inline a shape's mesh (``<vertices>x y z ...</vertices>``, ``<indices>`` three per
triangle) instead of naming a file; its reader keeps them as these two keys (comma-separated numbers), so
the triangles live in the scene model and travel through ``.rscene`` files. Blender builds its mesh from
them and the simulator its hull, both through :func:`inline_mesh`, so the two views see one geometry.
"""
from __future__ import annotations

import numpy as np

from ..model.values import decode_text
from .mesh_files import MeshFormatError

VERTICES_KEY, INDICES_KEY = "meshVertices", "meshIndices"


def _label(record) -> str:
    """The record's path, or for a compound part ``compound_child of <compound>``."""
    if record.path:
        return record.path
    owner = record.get("compound") if record.schema is not None and record.schema.field("compound") else None
    return f"{record.tag} of {owner}" if owner else record.tag


def has_inline_mesh(record) -> bool:
    return bool(record.raw_keys.get(VERTICES_KEY, "-") not in ("", "-"))


def _numbers(record, key: str) -> np.ndarray:
    try:
        text = decode_text(record.raw_keys.get(key, ""))
        return np.array(text.replace(",", " ").split(), dtype=np.float64)
    except ValueError:
        raise MeshFormatError(f"{_label(record)}: {key} is not a list of numbers") from None


def inline_mesh(record) -> tuple[np.ndarray, np.ndarray] | None:
    """``(vertices (V, 3) float64, triangles (T, 3) int64)`` in the record's own frame, in the order the
    file gives them, or None when the record carries no mesh of its own. Malformed lists raise
    ``MeshFormatError`` naming the record (callers warn and fall back, as for a bad mesh file)."""
    if not has_inline_mesh(record):
        return None
    vertices, indices = _numbers(record, VERTICES_KEY), _numbers(record, INDICES_KEY)
    if vertices.size == 0 or vertices.size % 3 or indices.size % 3:
        raise MeshFormatError(f"{_label(record)}: {VERTICES_KEY} needs x y z per vertex ({vertices.size} numbers) "
                              f"and {INDICES_KEY} three per triangle ({indices.size} numbers)")
    if not np.isfinite(vertices).all():
        raise MeshFormatError(f"{_label(record)}: a vertex coordinate is not a finite number")
    count = vertices.size // 3
    if indices.size and (indices.min() < 0 or indices.max() >= count or not (indices == np.round(indices)).all()):
        raise MeshFormatError(f"{_label(record)}: a triangle names a vertex that does not exist ({count} vertices)")
    return vertices.reshape(-1, 3), indices.astype(np.int64).reshape(-1, 3)


__all__ = ["INDICES_KEY", "VERTICES_KEY", "has_inline_mesh", "inline_mesh"]
