"""Mesh datablocks from numpy arrays: primitives at RaiSim's sizes, height-map grids, point sets.

Everything goes through ``foreach_set`` (no per-vertex Python, no bpy.ops). Primitive geometry is
generated in numpy; ``PrimitiveCache`` makes identical primitives share one mesh datablock.
"""
from __future__ import annotations

import math

import bpy
import numpy as np

SEGMENTS = 32
RINGS = 16


def mesh_from_arrays(name: str, vertices: np.ndarray, faces: np.ndarray | list, smooth: bool = False,
                     validate: bool = True):
    """A mesh from (V,3) vertices and faces: an (F,k) array or a list of index sequences. ``validate=False``
    keeps every face as given (the caller has checked the indices)."""
    mesh = bpy.data.meshes.new(name)
    vertices = np.asarray(vertices, dtype=np.float32).reshape(-1, 3)
    if isinstance(faces, np.ndarray):
        sizes = np.full(len(faces), faces.shape[1] if faces.ndim == 2 else 0, dtype=np.int32)
        loops = faces.reshape(-1).astype(np.int32)
    else:
        sizes = np.array([len(f) for f in faces], dtype=np.int32)
        loops = np.array([i for f in faces for i in f], dtype=np.int32)
    starts = np.zeros(len(sizes), dtype=np.int32)
    if len(sizes):
        starts[1:] = np.cumsum(sizes)[:-1]
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", vertices.ravel())
    mesh.loops.add(len(loops))
    mesh.loops.foreach_set("vertex_index", loops)
    mesh.polygons.add(len(sizes))
    mesh.polygons.foreach_set("loop_start", starts)
    mesh.update(calc_edges=True)
    if validate:
        mesh.validate(clean_customdata=False)
    if len(sizes):  # set both ways: new polygons are smooth by default since Blender 4.1
        mesh.polygons.foreach_set("use_smooth", np.full(len(sizes), smooth, dtype=bool))
    return mesh


def mesh_from_triangles(name: str, vertices: np.ndarray, triangles: np.ndarray, normals=None, uvs=None,
                        material_index=None):
    """A triangle mesh with optional per-corner ``normals (T, 3, 3)`` (custom split normals, so the file's
    shading survives), per-corner ``uvs (T, 3, 2)`` (layer "UVMap") and per-triangle ``material_index``."""
    # not validated: the reader checked the indices, and validate() would drop a file's duplicate faces
    # (ANYmal's face.dae has one), breaking the one-to-one match of triangles, UVs and normals
    mesh = mesh_from_arrays(name, vertices, np.asarray(triangles, dtype=np.int64).reshape(-1, 3),
                            smooth=normals is not None, validate=False)
    if uvs is not None and len(mesh.loops) == 3 * len(triangles):
        layer = mesh.uv_layers.new(name="UVMap")
        layer.data.foreach_set("uv", np.asarray(uvs, dtype=np.float32).ravel())
    if material_index is not None and len(mesh.polygons) == len(triangles):
        mesh.polygons.foreach_set("material_index", np.asarray(material_index, dtype=np.int32))
    if normals is not None and len(mesh.loops) == 3 * len(triangles):
        n = np.asarray(normals, dtype=np.float32).reshape(-1, 3)
        length = np.linalg.norm(n, axis=1, keepdims=True)
        n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
        mesh.normals_split_custom_set(n.tolist())   # 4.5x faster than handing it the array
    return mesh


def box_geometry(size=(1.0, 1.0, 1.0)):
    sx, sy, sz = (s / 2.0 for s in size)
    v = np.array([[-sx, -sy, -sz], [sx, -sy, -sz], [sx, sy, -sz], [-sx, sy, -sz],
                  [-sx, -sy, sz], [sx, -sy, sz], [sx, sy, sz], [-sx, sy, sz]])
    f = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])
    return v, f


def plane_geometry(size=(1.0, 1.0)):
    sx, sy = size[0] / 2.0, size[1] / 2.0
    return np.array([[-sx, -sy, 0], [sx, -sy, 0], [sx, sy, 0], [-sx, sy, 0]], dtype=float), np.array([[0, 1, 2, 3]])


def _ring(radius: float, z: float) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, SEGMENTS, endpoint=False)
    return np.stack([radius * np.cos(a), radius * np.sin(a), np.full(SEGMENTS, z)], axis=1)


def _stack_rings(rings: list[np.ndarray], bottom, top):
    """Side quads between consecutive rings, with optional pole vertices (or cap polygons)."""
    verts = [np.asarray(r) for r in rings]
    faces: list = []
    n = SEGMENTS
    for i in range(len(rings) - 1):
        a, b = i * n, (i + 1) * n
        for j in range(n):
            k = (j + 1) % n
            faces.append((a + j, a + k, b + k, b + j))
    count = len(rings) * n
    if bottom is not None:
        verts.append(np.array([bottom]))
        faces += [(count, (j + 1) % n, j) for j in range(n)]
        count += 1
    else:
        faces.append(tuple(reversed(range(n))))
    if top is not None:
        verts.append(np.array([top]))
        base = (len(rings) - 1) * n
        faces += [(base + j, base + (j + 1) % n, count) for j in range(n)]
    else:
        faces.append(tuple((len(rings) - 1) * n + j for j in range(n)))
    return np.concatenate(verts), faces


def sphere_geometry(radius: float):
    rings = []
    for i in range(1, RINGS):
        phi = math.pi * i / RINGS - math.pi / 2
        rings.append(_ring(radius * math.cos(phi), radius * math.sin(phi)))
    return _stack_rings(rings, (0, 0, -radius), (0, 0, radius))


def cylinder_geometry(radius: float, height: float):
    return _stack_rings([_ring(radius, -height / 2), _ring(radius, height / 2)], None, None)


def capsule_geometry(radius: float, height: float):
    """``height`` is the distance between the hemisphere centres, as in RaiSim."""
    half = RINGS // 2
    rings = []
    for i in range(1, half + 1):
        phi = -math.pi / 2 + (math.pi / 2) * i / half
        rings.append(_ring(radius * math.cos(phi), -height / 2 + radius * math.sin(phi)))
    for i in range(0, half):
        phi = (math.pi / 2) * i / half
        rings.append(_ring(radius * math.cos(phi), height / 2 + radius * math.sin(phi)))
    return _stack_rings(rings, (0, 0, -height / 2 - radius), (0, 0, height / 2 + radius))


def grid_geometry(xs: int, ys: int, x_size: float, y_size: float, heights: np.ndarray):
    """Height-map grid: vertex (x, y) is index y*xs + x, as the ``heights`` list is ordered."""
    gx = np.linspace(-x_size / 2.0, x_size / 2.0, xs)
    gy = np.linspace(-y_size / 2.0, y_size / 2.0, ys)
    X, Y = np.meshgrid(gx, gy)  # (ys, xs): row y, column x
    Z = np.zeros_like(X) if heights is None or len(heights) == 0 else np.asarray(heights).reshape(ys, xs)
    verts = np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)
    i = np.arange(xs * ys).reshape(ys, xs)
    faces = np.stack([i[:-1, :-1], i[:-1, 1:], i[1:, 1:], i[1:, :-1]], axis=-1).reshape(-1, 4)
    return verts, faces


class PrimitiveCache:
    """One mesh datablock per distinct primitive shape, size and material (identical primitives share it).

    A ``material`` goes on the mesh's own slot, as Blender's linked duplicates and the glTF importer have
    it: the objects sharing the mesh need no slot of their own (a user can still give one object its own
    material with an Object-linked slot, which export reads the same way)."""

    def __init__(self, created: list):
        self.meshes: dict[tuple, bpy.types.Mesh] = {}
        self.created = created

    def get(self, kind: str, *dims: float, material=None):
        key = (kind, material, *[round(float(d), 9) for d in dims]) if dims else (kind, material)
        mesh = self.meshes.get(key)
        if mesh is None:
            verts, faces = GEOMETRY[kind](*dims)
            label = kind if not dims else f"{kind}_" + "x".join(f"{d:g}" for d in dims)
            mesh = mesh_from_arrays(f"rscene_{label}", verts, faces, smooth=kind in ("sphere", "cylinder", "capsule"))
            if material is not None:
                mesh.materials.append(material)
            self.created.append(mesh)
            self.meshes[key] = mesh
        return mesh


GEOMETRY = {
    "box": lambda: box_geometry(),
    "ground": lambda: plane_geometry((1.0, 1.0)),
    "sphere": sphere_geometry,
    "cylinder": cylinder_geometry,
    "capsule": capsule_geometry,
    "box_sized": lambda x, y, z: box_geometry((x, y, z)),
}
