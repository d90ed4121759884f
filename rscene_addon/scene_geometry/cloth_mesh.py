"""A ``deformable`` record's cloth: its mesh (from the file, or a generated grid) and its pinned vertices.

``pinnedVertices`` index this mesh, so Blender's object and the simulator's particles must be the same
vertices in the same order: both take them from :func:`cloth_mesh`. A mesh file is read with
:func:`.mesh_files.read_mesh` (OBJ, STL, PLY; polygons as triangle fans, vertices in file order). Without a
file (or when it cannot be read) the cloth is a flat square of ``CLOTH_SIZE`` metres with
``particleSpacing`` between vertices, ``MIN_GRID_SIDE``..``MAX_GRID_SIDE`` vertices a side (the upper bound
keeps the simulator's XPBD solve interactive).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.fields import Fields
from .mesh_files import MeshFormatError, read_mesh

CLOTH_SIZE = 1.0
MIN_GRID_SIDE = 3
MAX_GRID_SIDE = 41


@dataclass
class ClothMesh:
    """Vertices (V, 3) in the record's own frame, triangles (T, 3), the valid pinned vertex indices."""

    vertices: np.ndarray
    faces: np.ndarray
    pinned: np.ndarray
    from_file: bool
    warnings: list[str] = field(default_factory=list)


def grid_side(spacing: float, size: float = CLOTH_SIZE) -> int:
    """Vertices along one side of the generated cloth square."""
    return int(np.clip(round(size / max(spacing, 1e-3)) + 1, MIN_GRID_SIDE, MAX_GRID_SIDE))


def cloth_grid(side: int, size: float = CLOTH_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """A flat square, centred, in the z = 0 plane: vertex ``j * side + i`` at column ``i``, row ``j``."""
    xs = np.linspace(-size / 2, size / 2, side)
    X, Y = np.meshgrid(xs, xs)
    verts = np.stack((X.ravel(), Y.ravel(), np.zeros(X.size)), axis=1)
    i = np.arange(side * side).reshape(side, side)
    a, b, c, d = i[:-1, :-1], i[:-1, 1:], i[1:, :-1], i[1:, 1:]
    faces = np.stack((np.stack((a, b, d), -1), np.stack((a, d, c), -1)), axis=2).reshape(-1, 3)
    return verts, faces.astype(np.int64)


def cloth_mesh(record, resolve) -> ClothMesh:
    """The cloth of a ``deformable`` record; ``resolve(ref)`` turns its ``meshPath`` into a file path."""
    f = Fields(record)
    path = f.text("path", "deformable")
    warnings: list[str] = []
    ref = f.text("meshPath", "")
    verts = faces = None
    if ref:
        file = resolve(ref)
        try:
            verts, faces = read_mesh(file)
        except (MeshFormatError, OSError, ValueError) as exc:
            warnings.append(f"{path}: cloth mesh {file}: {exc}; using a generated {CLOTH_SIZE:g} m grid")
            verts = faces = None
    from_file = verts is not None and len(faces) > 0
    if not from_file:
        spacing = f.num("particleSpacing", 0.05)
        side = grid_side(spacing)
        if side != round(CLOTH_SIZE / max(spacing, 1e-3)) + 1:
            warnings.append(f"{path}: particleSpacing {spacing:g} gives a {side} x {side} vertex grid "
                            f"({MIN_GRID_SIDE}..{MAX_GRID_SIDE} a side)")
        verts, faces = cloth_grid(side)
    pins = f.numbers("pinnedVertices").astype(np.int64)
    valid = np.unique(pins[(pins >= 0) & (pins < len(verts))])
    if len(valid) != len(np.unique(pins)):
        warnings.append(f"{path}: {len(np.unique(pins)) - len(valid)} pinned vertices are out of range")
    return ClothMesh(verts, faces, valid, from_file, warnings)
