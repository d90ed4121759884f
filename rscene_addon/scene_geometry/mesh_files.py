"""Mesh files and ``.rasset`` descriptors, read once for Blender and the simulator alike.

``read_mesh(path)`` returns ``(vertices (V, 3) float64, triangles (T, 3) int64)`` for OBJ, STL (ASCII
and binary), PLY (ASCII and binary) and COLLADA (``.dae``: its visual scene in metres, Z up) files,
vertices in file order (STL corners are welded). Other
formats (glTF, FBX, ...) raise ``MeshFormatError``; the simulator then falls back to a box.
``read_rasset(path)`` parses a ``.rasset`` XML descriptor: its visual file and its collision shapes.
Malformed input raises ``MeshFormatError`` (a ``ValueError``) naming the file; callers warn and go on.
"""
from __future__ import annotations

import io
import os
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from ..base import files

MESH_EXTENSIONS = (".obj", ".stl", ".ply", ".dae")


class MeshFormatError(ValueError):
    pass


# Malformed content surfaces from the parsers below as one of these; read_mesh/read_rasset name the file.
_MALFORMED = (ValueError, IndexError, KeyError, StopIteration, OverflowError, struct.error, UnicodeError,
              MemoryError)


def read_mesh(path: str) -> tuple[np.ndarray, np.ndarray]:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".dae":
        from .collada import read_collada
        mesh = read_collada(path)
        return mesh.vertices, mesh.triangles
    readers = {".obj": _read_obj, ".stl": _read_stl, ".ply": _read_ply}
    if ext not in readers:
        raise MeshFormatError(f"unsupported mesh format {ext!r} (OBJ, STL, PLY and COLLADA are read)")
    try:
        verts, tris = readers[ext](path)
    except MeshFormatError:
        raise
    except files.FileRefused as exc:  # a FIFO, a device, a folder, an oversized file: refused unread
        raise MeshFormatError(f"{path}: {exc.strerror}") from None
    except _MALFORMED as exc:
        raise MeshFormatError(f"{path}: malformed {ext[1:].upper()} file: {type(exc).__name__}: "
                              f"{str(exc)[:200]}") from None
    if not np.isfinite(verts).all():
        raise MeshFormatError(f"{path}: a vertex coordinate is not a finite number")
    if tris.size and (tris.min() < 0 or tris.max() >= len(verts)):
        raise MeshFormatError(f"{path}: a face refers to a vertex that does not exist "
                              f"({len(verts)} vertices)")
    return verts, tris


def _read_obj(path: str):
    verts: list[list[float]] = []
    tris: list[tuple[int, int, int]] = []
    with io.StringIO(files.read_text(path), newline=None) as fh:  # universal newlines, as open() reads
        for line in fh:
            if line.startswith("v "):
                parts = line.split()
                verts.append([float(parts[1]), float(parts[2]), float(parts[3])])
            elif line.startswith("f "):
                idx = []
                for token in line.split()[1:]:
                    i = int(token.split("/")[0])
                    idx.append(i - 1 if i > 0 else len(verts) + i)
                for k in range(1, len(idx) - 1):
                    tris.append((idx[0], idx[k], idx[k + 1]))
    if not verts:
        raise MeshFormatError(f"{path}: no vertices")
    return np.array(verts, dtype=np.float64), np.array(tris, dtype=np.int64).reshape(-1, 3)


def _read_stl(path: str):
    data = files.read_bytes(path)
    if len(data) >= 84:
        (count,) = struct.unpack_from("<I", data, 80)
        if 84 + 50 * count == len(data):
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=count, offset=84)
            v = rec["v"].reshape(-1, 3).astype(np.float64)
            return _weld(v)
    text = data.decode("ascii", errors="replace")
    vals = [line.split()[1:4] for line in text.splitlines() if line.strip().startswith("vertex")]
    if not vals:
        raise MeshFormatError(f"{path}: no STL facets")
    return _weld(np.array(vals, dtype=np.float64))


def _weld(corners: np.ndarray):
    verts, inverse = np.unique(corners, axis=0, return_inverse=True)
    return verts, inverse.reshape(-1, 3).astype(np.int64)


_PLY_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
              "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
              "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}


def _read_ply(path: str):
    data = files.read_bytes(path)
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise MeshFormatError(f"{path}: not a PLY file")
    header = data[:end].decode("ascii", errors="replace").splitlines()
    body_start = data.index(b"\n", end) + 1
    fmt = "ascii"
    elements: list[tuple[str, int, list]] = []
    for line in header:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "format":
            fmt = parts[1]
        elif parts[0] == "element":
            count = int(parts[2])
            if not 0 <= count <= len(data):  # every row takes at least a byte
                raise MeshFormatError(f"{path}: element {parts[1]} count {parts[2]} does not fit the file")
            elements.append((parts[1], count, []))
        elif parts[0] == "property" and elements:
            elements[-1][2].append(parts[1:])
    verts = None
    faces: list[list[int]] = []
    if fmt == "ascii":
        tokens = data[body_start:].split()
        pos = 0
        for name, count, props in elements:
            rows = []
            for _ in range(count):
                row = []
                for prop in props:
                    if prop[0] == "list":
                        n = int(tokens[pos])
                        pos += 1
                        row.append([int(float(t)) for t in tokens[pos:pos + n]])
                        pos += n
                    else:
                        row.append(float(tokens[pos]))
                        pos += 1
                rows.append(row)
            verts, faces = _ply_collect(name, props, rows, verts, faces)
    else:
        endian = "<" if "little" in fmt else ">"
        pos = body_start
        for name, count, props in elements:
            if all(p[0] != "list" for p in props):
                dtype = np.dtype([(p[1], endian + _PLY_TYPES[p[0]]) for p in props])
                arr = np.frombuffer(data, dtype=dtype, count=count, offset=pos)
                pos += dtype.itemsize * count
                if name == "vertex":
                    verts = np.stack([arr["x"], arr["y"], arr["z"]], axis=1).astype(np.float64)
                continue
            rows = []
            for _ in range(count):
                row = []
                for prop in props:
                    if prop[0] == "list":
                        ct = np.dtype(endian + _PLY_TYPES[prop[1]])
                        it = np.dtype(endian + _PLY_TYPES[prop[2]])
                        n = int(np.frombuffer(data, ct, 1, pos)[0])
                        pos += ct.itemsize
                        row.append(np.frombuffer(data, it, n, pos).astype(np.int64).tolist())
                        pos += it.itemsize * n
                    else:
                        t = np.dtype(endian + _PLY_TYPES[prop[0]])
                        row.append(float(np.frombuffer(data, t, 1, pos)[0]))
                        pos += t.itemsize
                rows.append(row)
            verts, faces = _ply_collect(name, props, rows, verts, faces)
    if verts is None or len(verts) == 0:
        raise MeshFormatError(f"{path}: no vertices")
    tris = [(f[0], f[k], f[k + 1]) for f in faces for k in range(1, len(f) - 1)]
    return np.asarray(verts, dtype=np.float64), np.array(tris, dtype=np.int64).reshape(-1, 3)


def _ply_collect(name, props, rows, verts, faces):
    names = [p[-1] for p in props]
    if name == "vertex":
        ix, iy, iz = names.index("x"), names.index("y"), names.index("z")
        verts = np.array([[r[ix], r[iy], r[iz]] for r in rows], dtype=np.float64)
    elif name == "face":
        li = next(i for i, p in enumerate(props) if p[0] == "list")
        faces = [r[li] for r in rows]
    return verts, faces


# ---------------------------------------------------------------------------------------------------------
# .rasset


@dataclass
class RassetShape:
    """One collision shape of a descriptor, in the mesh's local frame."""

    type: str  # box, sphere, cylinder, capsule, convex_mesh
    size: tuple = (0.0, 0.0, 0.0)  # box: full side lengths
    radius: float = 0.0
    height: float = 0.0
    file: str = ""  # convex_mesh: absolute path
    position: tuple = (0.0, 0.0, 0.0)
    quaternion: tuple = (1.0, 0.0, 0.0, 0.0)


@dataclass
class Rasset:
    """A ``.rasset`` descriptor: the visual mesh file (absolute, or ``""``) and the collision shapes."""

    visual: str
    shapes: list[RassetShape]


def read_rasset(path: str) -> Rasset:
    """A ``.rasset`` descriptor (paths resolved relative to the descriptor)."""
    try:
        return _read_rasset(path)
    except ET.ParseError as exc:
        raise MeshFormatError(f"{path}:{exc.position[0]}: XML syntax error: {exc}") from None
    except MeshFormatError:
        raise
    except files.FileRefused as exc:
        raise MeshFormatError(f"{path}: {exc.strerror}") from None
    except _MALFORMED as exc:
        raise MeshFormatError(f"{path}: malformed .rasset: {str(exc)[:200]}") from None


def _read_rasset(path: str) -> Rasset:
    root = ET.fromstring(files.read_bytes(path))
    if root.tag != "rasset":
        raise MeshFormatError(f"{path}: root element is <{root.tag}>, not <rasset>")
    base = os.path.dirname(os.path.abspath(path))
    visual = root.find("visual")
    visual_file = visual.get("file") if visual is not None else None
    shapes = []
    for el in root.iter("collision"):
        kind = (el.get("type") or "").strip().lower()

        def nums(key, n, default):
            raw = el.get(key)
            if raw is None:
                return default
            vals = tuple(float(t) for t in raw.replace(",", " ").split())
            if len(vals) != n:
                raise MeshFormatError(f"{path}: {key}={raw!r} needs {n} numbers")
            return vals

        shape = RassetShape(type=kind, position=nums("position", 3, (0.0, 0.0, 0.0)),
                            quaternion=nums("quaternion", 4, (1.0, 0.0, 0.0, 0.0)))
        if kind == "box":
            shape.size = nums("size", 3, None)
            if shape.size is None:
                raise MeshFormatError(f"{path}: box collision without size")
        elif kind == "sphere":
            shape.radius = float(el.get("radius", "nan"))
        elif kind in ("cylinder", "capsule"):
            shape.radius = float(el.get("radius", "nan"))
            shape.height = float(el.get("height", "nan"))
        elif kind in ("convex_mesh", "convex", "mesh"):
            shape.type = "convex_mesh"
            shape.file = os.path.normpath(os.path.join(base, el.get("file", "")))
        else:
            raise MeshFormatError(f"{path}: unknown collision type {kind!r}")
        if not (np.isfinite(shape.radius) and np.isfinite(shape.height)):
            raise MeshFormatError(f"{path}: {kind} collision needs radius (and height)")
        shapes.append(shape)
    return Rasset(os.path.normpath(os.path.join(base, visual_file)) if visual_file else "", shapes)
