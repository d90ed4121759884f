"""An Embree scene whose objects move without a rebuild: one geometry per scene instance ("part").

``embreex`` builds a scene from one triangle soup, copying it element by element through Python, and
cannot change it afterwards, so a scene whose rigid bodies move had to be built again every frame.
Embree itself can do better, and the ``embreex`` wheel ships the Embree 4 library: this module calls
it through ``ctypes`` for what ``embreex`` does not expose, and keeps ``embreex``'s batched ray loop
(``EmbreeScene.run``) for the casting.

* Every part (one instance of the evaluated scene) is its own Embree geometry over *shared* buffers:
  world-space float32 vertices and the mesh's own triangle indices, in numpy arrays owned here.
* The scene is flagged dynamic, so Embree keeps one BVH per geometry plus a top-level BVH over them.
  When a part moves, its vertices are rewritten in place (the same float64 -> float32 arithmetic as a
  fresh build), the geometry is committed again (its BVH refitted, topology kept) and only the top
  level is rebuilt at the scene's commit. Parts that did not move cost nothing.
* Hits come back as ``(geomID, primID)``; ``triangle = first triangle of the part + primID`` is the
  row of the frame's triangle soup, in the same order as ``caster.SceneTriangles`` assembles it.

``embreex`` keeps the scene handle in a C field with no Python accessor; :func:`api` finds it next to
the public ``is_committed`` field (by writing two marker values and looking for them in the object's
memory) and checks it (the scene's flags read back through Embree must be the robust flag the scene
was made with). Where anything of this is not as expected (another ``embreex`` layout, a library that
cannot be found) :func:`api` returns None and the caster falls back to a full build per change.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

__all__ = ["PartsScene", "api"]

_TRIANGLE = 0  # RTC_GEOMETRY_TYPE_TRIANGLE
_INDEX, _VERTEX = 0, 1  # RTC_BUFFER_TYPE_*
_UINT3, _FLOAT3 = 0x5003, 0x9003  # RTC_FORMAT_*
_DYNAMIC, _ROBUST = 1 << 0, 1 << 2  # RTC_SCENE_FLAG_*
_LOW, _REFIT = 0, 3  # RTC_BUILD_QUALITY_LOW; RTC_BUILD_QUALITY_REFIT: a committed change keeps the topology and refits the BVH
_MARKS = (0x3A5C7E11, 0x1B2D4F60)


class _Api:
    """The Embree 4 functions used here, and the way to an ``EmbreeScene``'s handle."""

    def __init__(self, lib, handle_offset: int) -> None:
        self.lib = lib
        self.handle_offset = handle_offset

    def scene_handle(self, scene) -> int:
        return ctypes.c_void_p.from_address(id(scene) + self.handle_offset).value


def _library_paths() -> list[str]:
    import embreex
    package = os.path.dirname(os.path.abspath(embreex.__file__))
    found = []
    # Linux (auditwheel): embreex.libs/libembree4-<hash>.so.4; Windows (delvewheel): embreex.libs/embree4.dll;
    # macOS (delocate): embreex/.dylibs/libembree4.4.dylib
    for folder in (os.path.join(os.path.dirname(package), "embreex.libs"), os.path.join(package, ".dylibs")):
        found += sorted(glob.glob(os.path.join(folder, "*embree4*")))
    return found


# embreex releases whose EmbreeScene layout was checked (the wheel the extension ships is pinned): with
# another release the handle is not looked for at all (no guessing in unknown memory), full builds then.
CHECKED_EMBREEX = ("4.4.0.post1",)


def _load():
    import embreex
    from embreex import rtcore_scene
    if getattr(embreex, "__version__", None) not in CHECKED_EMBREEX:
        raise ImportError(f"embreex {getattr(embreex, '__version__', '?')}: scene layout not checked")
    vp, uint, size = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name, restype, argtypes in (
                ("rtcGetSceneFlags", ctypes.c_int, [vp]),
                ("rtcSetSceneFlags", None, [vp, ctypes.c_int]),
                ("rtcSetSceneBuildQuality", None, [vp, ctypes.c_int]),
                ("rtcGetSceneDevice", vp, [vp]),
                ("rtcGetDeviceError", ctypes.c_int, [vp]),
                ("rtcNewGeometry", vp, [vp, ctypes.c_int]),
                ("rtcSetSharedGeometryBuffer", None, [vp, ctypes.c_int, uint, ctypes.c_int, vp, size, size, size]),
                ("rtcSetGeometryBuildQuality", None, [vp, ctypes.c_int]),
                ("rtcCommitGeometry", None, [vp]),
                ("rtcAttachGeometry", uint, [vp, vp]),
                ("rtcReleaseGeometry", None, [vp]),
                ("rtcUpdateGeometryBuffer", None, [vp, ctypes.c_int, uint])):
            fn = getattr(lib, name, None)
            if fn is None:
                break
            fn.restype, fn.argtypes = restype, argtypes
        else:
            offset = _handle_offset(rtcore_scene.EmbreeScene(robust=True), lib)
            if offset is not None:
                return _Api(lib, offset)
    return None


def _handle_offset(scene, lib) -> int | None:
    """Where an ``EmbreeScene`` keeps its ``RTCScene``: the pointer declared just before the public
    ``is_committed`` int. Found by marker values, then checked through Embree."""
    size = type(scene).__basicsize__
    if size < 24:
        return None
    ints = []
    for mark in _MARKS:
        scene.is_committed = mark
        ints.append([ctypes.c_int.from_address(id(scene) + k).value for k in range(0, size - 3, 4)])
    scene.is_committed = 0
    places = [4 * k for k in range(len(ints[0])) if (ints[0][k], ints[1][k]) == _MARKS]
    if len(places) != 1 or places[0] < 24:  # after the object header and before the int: the handle
        return None
    offset = places[0] - 8
    handle = ctypes.c_void_p.from_address(id(scene) + offset).value
    if not handle or lib.rtcGetSceneFlags(handle) != _ROBUST or not lib.rtcGetSceneDevice(handle):
        return None
    return offset


_API: list = []


def api() -> _Api | None:
    """The Embree functions and the scene handle's place, or None where they cannot be had (found once)."""
    if not _API:
        try:
            _API.append(_load())
        except (ImportError, OSError, AttributeError, ValueError):
            _API.append(None)
    return _API[0]


class PartsScene:
    """A robust, dynamic Embree scene with one geometry per part over buffers held here.

    ``parts``: ``((local vertices (V, 3), faces (F, 3) int), ...)`` as the triangle gatherer makes
    them; parts without faces get no geometry. The caller writes the world vertices of part ``k`` into
    ``vertices[first_vertex[k]:first_vertex[k + 1]]`` (float32), then calls :meth:`build` once and,
    after moving parts, :meth:`touch` and :meth:`commit`."""

    def __init__(self, parts, embree_api: _Api) -> None:
        from embreex import rtcore_scene
        self.api = embree_api
        self.parts = parts
        counts_v = np.array([len(p[0][0]) for p in parts], dtype=np.int64)
        counts_t = np.array([len(p[0][1]) for p in parts], dtype=np.int64)
        self.first_vertex = np.concatenate([[0], np.cumsum(counts_v)])
        self.first_triangle = np.concatenate([[0], np.cumsum(counts_t)])
        # one extra row: Embree reads vertices 16 bytes at a time, the last one too
        self.vertices = np.zeros((int(self.first_vertex[-1]) + 1, 3), dtype=np.float32)
        self.indices = np.zeros((int(self.first_triangle[-1]), 3), dtype=np.uint32)
        self.scene = rtcore_scene.EmbreeScene(robust=True)
        self.geometries: list = [None] * len(parts)
        self._geometry_first = np.zeros(1, dtype=np.int64)

    def build(self) -> None:
        """Make the geometries over the buffers as they are now, and the scene's BVHs."""
        lib = self.api.lib
        handle = self.api.scene_handle(self.scene)
        lib.rtcSetSceneFlags(handle, _ROBUST | _DYNAMIC)
        # a LOW quality scene is what makes Embree build two levels (one BVH per geometry, built with the
        # geometry's own quality, under a top-level BVH): a commit then redoes only the changed geometries
        lib.rtcSetSceneBuildQuality(handle, _LOW)
        device = lib.rtcGetSceneDevice(handle)
        geometry_first = []
        for k, ((local, faces), *_rest) in enumerate(self.parts):
            if not len(faces):
                continue
            v0, t0 = int(self.first_vertex[k]), int(self.first_triangle[k])
            self.indices[t0:t0 + len(faces)] = faces
            geom = lib.rtcNewGeometry(device, _TRIANGLE)
            lib.rtcSetSharedGeometryBuffer(geom, _VERTEX, 0, _FLOAT3, self.vertices.ctypes.data, 12 * v0, 12,
                                           len(local))
            lib.rtcSetSharedGeometryBuffer(geom, _INDEX, 0, _UINT3, self.indices.ctypes.data, 12 * t0, 12,
                                           len(faces))
            lib.rtcSetGeometryBuildQuality(geom, _REFIT)
            lib.rtcCommitGeometry(geom)
            if lib.rtcAttachGeometry(handle, geom) != len(geometry_first):
                raise RuntimeError("Embree numbered a geometry out of order")
            lib.rtcReleaseGeometry(geom)  # the scene holds it from now on (and so its handle stays valid)
            self.geometries[k] = geom
            geometry_first.append(t0)
        # first triangle row per geometry id; a miss (id -1) reads the extra last entry
        self._geometry_first = np.array(geometry_first + [0], dtype=np.int64)
        if lib.rtcGetDeviceError(device):
            raise RuntimeError("Embree refused the scene's geometry")
        self.commit()

    def touch(self, ks) -> None:
        """Parts ``ks`` have new vertices in the buffer: have Embree refit them at the next commit."""
        lib = self.api.lib
        for k in ks:
            geom = self.geometries[k]
            if geom is not None:
                lib.rtcUpdateGeometryBuffer(geom, _VERTEX, 0)
                lib.rtcCommitGeometry(geom)
        self.scene.is_committed = 0

    def commit(self) -> None:
        """Build what changed now, single-threaded, before any cast (``run`` commits a changed scene)."""
        self.scene.run(np.zeros((1, 3), np.float32), np.array([[0.0, 0.0, 1.0]], np.float32), dists=0.0)

    def run(self, origins, directions, far: float) -> tuple[np.ndarray, np.ndarray]:
        """``(triangle (N,) int64, -1 on a miss; tfar (N,) float32)`` of float32 rays."""
        result = self.scene.run(origins, directions, dists=far, output=1)
        geom = result["geomID"]
        triangle = np.where(geom >= 0, self._geometry_first[geom] + result["primID"], -1)
        return triangle, result["tfar"]
