"""COLLADA (``.dae``) meshes, read through pycollada for Blender and the simulator alike.

``read_collada(path) -> ColladaMesh``: every triangle the file's visual scene instantiates (``triangles``,
``polylist`` and ``polygons``, triangulated as fans), with the node tree's transforms applied, scaled to
metres by ``<unit meter>`` and turned Z-up from ``<up_axis>``; per-corner normals and UVs where the file
has them; one material per triangle (diffuse colour, or the image texture beside the file). Line sets are
skipped. A file with no visual scene gives its geometries as they are.

Why pycollada (0.9.3, pure Python, shipped as a wheel): it reads every corpus robot mesh (Laikago,
ANYmal C: 67k triangles) in about 0.5 s of CPU, which a hand-written parser would not beat by enough to
carry its own bugs. Transparency is ignored: exporters disagree on its sense (Laikago's meshes say
``transparency 0`` and mean opaque), and robots are opaque.

Malformed files raise ``MeshFormatError`` naming the file.
"""
from __future__ import annotations

import io
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from ..base import files
from .mesh_files import MeshFormatError

# up_axis -> rotation taking that axis to +Z, as Blender's own COLLADA importer did (a right-handed turn).
_UP_TO_Z = {
    "Z_UP": np.eye(3),
    "Y_UP": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),   # +90 deg about X
    "X_UP": np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),   # -90 deg about Y
}
_DEFAULT_RGBA = (0.8, 0.8, 0.8, 1.0)


@dataclass(frozen=True)
class ColladaMaterial:
    name: str
    rgba: tuple[float, float, float, float] = _DEFAULT_RGBA
    texture: str = ""          # absolute path of the diffuse image ('' if none; may not exist)


@dataclass
class ColladaMesh:
    """Triangles of one ``.dae`` file in metres, Z up. Shapes: ``vertices (V, 3)`` float64,
    ``triangles (T, 3)`` int64, ``normals (T, 3, 3)`` and ``uvs (T, 3, 2)`` float32 per corner or None,
    ``material_index (T,)`` int32 into ``materials``."""
    path: str
    vertices: np.ndarray
    triangles: np.ndarray
    material_index: np.ndarray
    materials: list[ColladaMaterial] = field(default_factory=list)
    normals: np.ndarray | None = None
    uvs: np.ndarray | None = None


def _collada():
    try:
        import collada  # noqa: PLC0415 - optional until a .dae file is read
    except ImportError:
        raise MeshFormatError("reading COLLADA (.dae) needs pycollada, which the extension ships as a wheel; "
                              "it is not installed in this Python") from None
    return collada


def read_collada(path: str) -> ColladaMesh:
    try:   # a regular file under the readers' size cap, read once (a FIFO or /dev/zero is refused unread)
        data = files.read_bytes(path)
    except OSError as exc:
        raise MeshFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    collada = _collada()
    ignore = [collada.common.DaeUnsupportedError, collada.common.DaeBrokenRefError]
    try:
        with warnings.catch_warnings():   # pycollada builds numpy.matrix objects: not ours to fix
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            warnings.filterwarnings("ignore", category=DeprecationWarning, module="collada")
            doc = collada.Collada(io.BytesIO(data), ignore=ignore)
            return _mesh(path, doc, collada)
    except MeshFormatError:
        raise
    except (collada.common.DaeError, ET.ParseError, ValueError, IndexError, KeyError, TypeError,
            AttributeError, OverflowError, MemoryError) as exc:
        raise MeshFormatError(f"{path}: malformed COLLADA file: {type(exc).__name__}: {str(exc)[:200]}") from None


def _bound_primitives(doc):
    """(primitive, material or None) for every primitive the visual scene instantiates, transformed."""
    if doc.scene is not None:
        for geometry in doc.scene.objects("geometry"):
            for prim in geometry.primitives():
                yield prim, prim.material
        return
    for geometry in doc.geometries:
        for prim in geometry.primitives:
            yield prim, None


def _triangles_of(prim, collada):
    if isinstance(prim, (collada.triangleset.TriangleSet, collada.triangleset.BoundTriangleSet)):
        return prim
    if hasattr(prim, "triangleset"):   # polylist, polygons (bound or not)
        return prim.triangleset()
    return None                        # lines


def _material(mat, doc_dir: str, collada) -> ColladaMaterial:
    name = str(getattr(mat, "name", None) or getattr(mat, "id", "") or "material")
    effect = getattr(mat, "effect", None)
    diffuse = getattr(effect, "diffuse", None)
    if isinstance(diffuse, collada.material.Map):
        image = diffuse.sampler.surface.image
        ref = str(getattr(image, "path", "") or "")
        if ref.startswith("file://"):
            ref = ref[len("file://"):]
        texture = os.path.normpath(os.path.join(doc_dir, ref)) if ref else ""
        return ColladaMaterial(name, _DEFAULT_RGBA, texture)
    if isinstance(diffuse, tuple) and len(diffuse) >= 3:
        rgba = tuple(float(c) for c in diffuse[:4]) + (1.0,) * (4 - len(diffuse[:4]))
        return ColladaMaterial(name, tuple(min(max(c, 0.0), 1.0) for c in rgba))
    return ColladaMaterial(name)


def _mesh(path: str, doc, collada) -> ColladaMesh:
    unit = float(doc.assetInfo.unitmeter or 1.0) if doc.assetInfo is not None else 1.0
    up = str(doc.assetInfo.upaxis or "Y_UP") if doc.assetInfo is not None else "Y_UP"
    if not np.isfinite(unit) or unit <= 0.0:
        raise MeshFormatError(f"{path}: <unit meter> {unit} is not a positive number")
    to_z = _UP_TO_Z.get(up, _UP_TO_Z["Y_UP"]) * unit
    doc_dir = os.path.dirname(os.path.abspath(path))

    materials: list[ColladaMaterial] = []
    material_slot: dict[int, int] = {}
    verts, tris, mats, normals, uvs = [], [], [], [], []
    any_normals = any_uvs = False
    offset = 0
    for prim, mat in _bound_primitives(doc):
        tset = _triangles_of(prim, collada)
        if tset is None or len(tset) == 0:
            continue
        vidx = np.asarray(tset.vertex_index, dtype=np.int64).reshape(-1, 3)
        used, local = np.unique(vidx, return_inverse=True)
        verts.append(np.asarray(tset.vertex, dtype=np.float64)[used] @ to_z.T)
        tris.append(local.reshape(-1, 3) + offset)
        offset += len(used)
        if mat is not None and id(mat) not in material_slot:
            material_slot[id(mat)] = len(materials)
            materials.append(_material(mat, doc_dir, collada))
        mats.append(np.full(len(vidx), material_slot.get(id(mat), -1), dtype=np.int32))
        if tset.normal is not None and tset.normal_index is not None and len(tset.normal):
            n = np.asarray(tset.normal, dtype=np.float64)[np.asarray(tset.normal_index).reshape(-1, 3)]
            normals.append((n @ _UP_TO_Z.get(up, _UP_TO_Z["Y_UP"]).T).astype(np.float32))
            any_normals = True
        else:
            normals.append(None)
        if tset.texcoordset and tset.texcoord_indexset and len(tset.texcoordset[0]):
            uv = np.asarray(tset.texcoordset[0], dtype=np.float64)[:, :2]
            uvs.append(uv[np.asarray(tset.texcoord_indexset[0]).reshape(-1, 3)].astype(np.float32))
            any_uvs = True
        else:
            uvs.append(None)
    if not tris:
        raise MeshFormatError(f"{path}: no triangles in the COLLADA file's scene")
    mat_index = np.concatenate(mats)
    if (mat_index < 0).any():   # primitives without a bound material share a default one
        mat_index[mat_index < 0] = len(materials)
        materials.append(ColladaMaterial("default"))
    counts = [len(t) for t in tris]
    vertices = np.concatenate(verts)
    if not np.isfinite(vertices).all():
        raise MeshFormatError(f"{path}: a vertex coordinate is not a finite number")
    return ColladaMesh(
        path=path, vertices=vertices, triangles=np.concatenate(tris), material_index=mat_index,
        materials=materials,
        normals=_per_corner(normals, counts, 3, np.array([0.0, 0.0, 1.0])) if any_normals else None,
        uvs=_per_corner(uvs, counts, 2, np.zeros(2)) if any_uvs else None)


def _per_corner(parts, counts, width: int, fill) -> np.ndarray:
    """Concatenate per-primitive (n, 3, width) arrays; a primitive without them gets ``fill``."""
    return np.concatenate([p if p is not None else np.broadcast_to(fill, (n, 3, width)).astype(np.float32)
                           for p, n in zip(parts, counts)])
