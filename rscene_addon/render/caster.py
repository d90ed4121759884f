"""Batched ray casting against the evaluated scene: one interface, two backends.

:func:`scene_triangles` gathers the world-space triangles of everything that renders (every
render-visible mesh, modifier result and instance of the evaluated depsgraph) and the instance id of
each triangle. A caster built on them answers ``cast(origins (N, 3), directions (N, 3), max_distance)``
with a :class:`Hits` of arrays, never asking Python for one call per ray:

``"embree"``  Intel Embree through the ``embreex`` wheel the extension ships (``blender_manifest.toml``
              ``wheels``); one call into C per slice of the batch, slices cast in threads.
``"bvh"``     ``mathutils.bvhtree.BVHTree`` over the same triangles, one C call per ray from a tight
              loop: the fallback where ``embreex`` cannot be imported (a platform without a wheel).

Both use single-precision geometry (Blender stores vertices as float32 and Embree intersects in
float32), so their distances agree to a few 1e-6 of the distance. :class:`CasterCache` keeps one
caster over frames while the geometry does not change. Over a run, :class:`TriangleGatherer` keeps the
triangles per instance (:class:`PartedTriangles`); with them the Embree backend keeps one geometry per
instance (:class:`PartsCaster`, :mod:`.embree_parts`) and, when bodies move, rewrites and refits only
what moved instead of building the scene again.
"""
from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass

import numpy as np

from .ids import GEOMETRY_TYPES

__all__ = ["BACKENDS", "BVHCaster", "CasterCache", "EmbreeCaster", "Hits", "PartedTriangles", "PartsCaster",
           "SceneTriangles", "TriangleGatherer", "available_backends", "embree_available", "excluded", "make_caster",
           "run_in_slices", "scene_triangles", "worker_count"]


@dataclass(frozen=True)
class SceneTriangles:
    """World-space triangle soup: ``vertices (V, 3) float64``, ``triangles (T, 3) int64`` (indices into
    ``vertices``), ``object_ids (T,) int32`` (instance id of each triangle's entity, -1 none)."""

    vertices: np.ndarray
    triangles: np.ndarray
    object_ids: np.ndarray

    def __len__(self) -> int:
        return len(self.triangles)

    def normals(self) -> np.ndarray:
        """Unit normals ``(T, 3)`` in winding order (right hand); NaN for degenerate triangles."""
        v = self.vertices[self.triangles]
        n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
        with np.errstate(invalid="ignore", divide="ignore"):
            return n / np.linalg.norm(n, axis=1, keepdims=True)


class PartedTriangles:
    """A frame's triangles kept per instance: ``parts`` is a list of ``((local vertices (V, 3) float64,
    faces (F, 3) int64), matrix (4, 4) float64, object id, static mesh)``. Reads as the
    :class:`SceneTriangles` soup (``vertices``, ``triangles``, ``object_ids``: parts in order, those
    without faces left out), which is assembled only when first asked for."""

    def __init__(self, parts: list) -> None:
        self.parts = parts

    @functools.cached_property
    def soup(self) -> SceneTriangles:
        return _world_triangles(self.parts)

    vertices = property(lambda self: self.soup.vertices)
    triangles = property(lambda self: self.soup.triangles)
    object_ids = property(lambda self: self.soup.object_ids)

    def __len__(self) -> int:
        return sum(len(arrays[1]) for arrays, *_ in self.parts)

    def normals(self) -> np.ndarray:
        return self.soup.normals()


@dataclass(frozen=True)
class Hits:
    """Nearest hits of N rays: ``distance (N,)`` float64 along the unit direction (inf on a miss),
    ``normal (N, 3)`` float32 unit geometric normal of the triangle hit in world space, oriented as its
    winding gives (NaN on a miss), ``triangle (N,)`` int32 index into :class:`SceneTriangles` (-1 on a
    miss) and ``object_id (N,)`` int32 (-1 on a miss)."""

    distance: np.ndarray
    normal: np.ndarray
    triangle: np.ndarray
    object_id: np.ndarray

    @classmethod
    def misses(cls, n: int) -> Hits:
        return cls(np.full(n, np.inf), np.full((n, 3), np.nan, dtype=np.float32),
                   np.full(n, -1, dtype=np.int32), np.full(n, -1, dtype=np.int32))


def _mesh_arrays(ob) -> tuple[np.ndarray, np.ndarray]:
    """``(vertices (V, 3) float64 local, triangles (T, 3) int64)`` of an evaluated object."""
    cleanup = False
    if ob.type == "MESH":
        mesh = ob.data
    else:
        mesh = ob.to_mesh()
        cleanup = True
    try:
        if mesh is None:
            return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
        verts = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", verts)
        tris = mesh.loop_triangles
        faces = np.empty(len(tris) * 3, dtype=np.int32)
        tris.foreach_get("vertices", faces)
        return verts.reshape(-1, 3).astype(np.float64), faces.reshape(-1, 3).astype(np.int64)
    finally:
        if cleanup:
            ob.to_mesh_clear()


def _static_mesh_key(ob) -> int | None:
    """The original mesh's pointer when an evaluated object's geometry is that mesh and nothing can
    change it while frames play (no modifiers, shape keys, animated mesh data or edit mode), else None."""
    original = ob.original
    if original is None or original.type != "MESH" or original.modifiers or original.mode == "EDIT":
        return None
    mesh = original.data
    if mesh is None or mesh.shape_keys is not None or mesh.animation_data is not None:
        return None
    return mesh.as_pointer()


class TriangleGatherer:
    """:func:`scene_triangles` frame after frame within one run, as :class:`PartedTriangles`.

    Meshes that cannot change while the frames play (see ``_static_mesh_key``) are read from Blender
    once; every other geometry is read each frame. A frame whose instances all have the matrices, ids
    and local geometry they had last frame gives back the last frame's triangles themselves, which
    :class:`CasterCache` takes as unchanged without comparing them. Make a new one per run: the user may
    edit meshes between runs."""

    def __init__(self, keep_static: bool = True, exclude: frozenset = frozenset()) -> None:
        self.mesh_reads = 0  # meshes read from Blender so far
        self.exclude = frozenset(exclude)  # object names left out (a sensor's own mount: see excluded)
        self._static: dict[int, tuple] | None = {} if keep_static else None
        self._last: PartedTriangles | None = None  # the last frame's

    def __call__(self, depsgraph, entities) -> PartedTriangles:
        frame_meshes: dict[int, tuple] = {}
        parts = []
        for inst in depsgraph.object_instances:
            ob = inst.object
            if ob.type not in GEOMETRY_TYPES:
                continue
            owner = inst.parent.original if inst.is_instance and inst.parent is not None else ob.original
            if owner.hide_render or (not inst.is_instance and ob.original.hide_render):
                continue
            if self.exclude and excluded(inst, self.exclude):
                continue
            static = _static_mesh_key(ob) if self._static is not None else None
            if static is not None:
                arrays, cache, key = self._static.get(static), self._static, static
            else:  # instances of one evaluated mesh share its arrays within the frame
                key = ob.data.as_pointer() if ob.type == "MESH" and ob.data is not None else None
                arrays, cache = (frame_meshes.get(key) if key is not None else None), frame_meshes
            if arrays is None:
                arrays = _mesh_arrays(ob)
                self.mesh_reads += 1
                if key is not None:
                    cache[key] = arrays
            parts.append((arrays, np.array(inst.matrix_world, dtype=np.float64), entities.instance_id_for(owner),
                          static is not None))
        if self._last is not None and _same_parts(self._last.parts, parts):
            return self._last
        self._last = PartedTriangles(parts)
        return self._last


def excluded(inst, names: frozenset) -> bool:
    """Whether an evaluated instance belongs to one of the objects ``names`` (the object itself, or the
    object instancing it): how a sensor ignores the body it is mounted on, as RaiSim's objectId does."""
    if inst.object.original.name in names:
        return True
    return bool(inst.is_instance and inst.parent is not None and inst.parent.original.name in names)


def _same_parts(last: list, parts: list) -> bool:
    """Whether two frames' instances give the same triangles: same matrices and ids, and the same local
    geometry (the very arrays for meshes read once, equal arrays for what was read again)."""
    if len(last) != len(parts):
        return False
    return all(id0 == id1 and np.array_equal(m0, m1) and _same_local(arrays0, arrays1, static1)
               for (arrays0, m0, id0, _), (arrays1, m1, id1, static1) in zip(last, parts))


def _same_local(arrays0, arrays1, static1: bool) -> bool:
    return arrays0 is arrays1 or (not static1 and np.array_equal(arrays0[0], arrays1[0])
                                  and np.array_equal(arrays0[1], arrays1[1]))


def _world_triangles(parts) -> SceneTriangles:
    """One soup from ``((local vertices, faces), matrix, id, static)`` per instance."""
    verts, tris, ids = [], [], []
    count = 0
    for (local, faces), m, object_id, _ in parts:
        if not len(faces):
            continue
        verts.append(local @ m[:3, :3].T + m[:3, 3])
        tris.append(faces + count)
        ids.append(np.full(len(faces), object_id, dtype=np.int32))
        count += len(local)
    return SceneTriangles(np.concatenate(verts) if verts else np.zeros((0, 3)),
                          np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64),
                          np.concatenate(ids) if ids else np.zeros(0, dtype=np.int32))


def scene_triangles(depsgraph, entities) -> SceneTriangles:
    """World-space triangles of every render-visible evaluated instance of ``depsgraph``, with the
    instance id ``entities`` (:class:`~.ids.EntityIndex`) gives each triangle's owner (one frame; a run
    of frames uses a :class:`TriangleGatherer`)."""
    return TriangleGatherer(keep_static=False)(depsgraph, entities).soup


class _Tables:
    """Per-triangle lookups with a last row for "no triangle", so a miss (index -1) gathers the miss
    values. One normal table for both backends (not Embree's float32 ``Ng``): they report the same."""

    def __init__(self, triangles: SceneTriangles) -> None:
        self.normals = np.vstack([triangles.normals(), np.full((1, 3), np.nan)]).astype(np.float32)
        self.object_ids = np.append(triangles.object_ids, np.int32(-1)).astype(np.int32)

    def hits(self, triangle: np.ndarray, distance: np.ndarray) -> Hits:
        """``triangle (N,)`` int (-1 miss) and ``distance (N,)`` (ignored on a miss) -> :class:`Hits`."""
        triangle = np.asarray(triangle, dtype=np.int32)
        distance = np.array(distance, dtype=np.float64)
        distance[triangle < 0] = np.inf
        # index -1 is the tables' last row: the miss values, with no masking
        return Hits(distance, np.take(self.normals, triangle, axis=0), triangle,
                    np.take(self.object_ids, triangle))


def worker_count() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_in_slices(fn, n: int, slices: int, align: int = 1, workers: int | None = None) -> list:
    """``[fn(a, b) for each slice]`` over ``slices`` consecutive slices ``[a, b)`` of ``range(n)`` whose
    bounds are multiples of ``align`` (``n`` is one), run by ``workers`` threads (default: one per
    slice; the calling thread is one of them) that take the slices in order. Worth it only where ``fn``
    spends its time outside the GIL (Embree); more slices than workers let one thread's numpy work (GIL)
    overlap another's ray casting. The first error of any slice is raised after all have finished."""
    units = n // align
    slices = max(1, min(slices, units))
    workers = max(1, min(workers or slices, slices))
    bounds = [align * (units * k // slices) for k in range(slices)] + [n]
    results, errors = [None] * slices, [None] * slices
    queue = iter(range(slices))
    lock = threading.Lock()

    def run() -> None:
        while True:
            with lock:
                k = next(queue, None)
            if k is None:
                return
            try:
                results[k] = fn(bounds[k], bounds[k + 1])
            except Exception as exc:  # noqa: BLE001 - any error is re-raised in the calling thread below
                errors[k] = exc

    threads = [threading.Thread(target=run, daemon=True) for _ in range(1, workers)]
    for t in threads:
        t.start()
    run()
    for t in threads:
        t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results


class BVHCaster:
    """``mathutils.bvhtree.BVHTree`` over the scene's triangles; one ``ray_cast`` per ray."""

    name = "bvh"
    threads = 1  # ray_cast holds the GIL: threads would only take turns

    def __init__(self, triangles: SceneTriangles) -> None:
        from mathutils.bvhtree import BVHTree  # bpy-only; imported here so the module loads without it
        self.triangles = triangles
        self.tables = _Tables(triangles)
        self.tree = None
        if len(triangles):
            self.tree = BVHTree.FromPolygons(triangles.vertices.tolist(), triangles.triangles.tolist(),
                                             all_triangles=True)

    def cast(self, origins, directions, max_distance: float, threads: int | None = None) -> Hits:
        """See :class:`Hits`; ``threads`` is ignored."""
        origins, directions = np.asarray(origins, np.float64), np.asarray(directions, np.float64)
        m = len(origins)
        if self.tree is None or m == 0:
            return Hits.misses(m)
        ray_cast = self.tree.ray_cast
        # one C call per ray and nothing else in the loop; hits are picked out afterwards
        results = [ray_cast(o, d, max_distance) for o, d in zip(origins.tolist(), directions.tolist())]
        triangle = np.array([-1 if hit[2] is None else hit[2] for hit in results], dtype=np.int32)
        distance = np.array([np.inf if hit[3] is None else hit[3] for hit in results], dtype=np.float64)
        return self.tables.hits(triangle, distance)


class EmbreeCaster:
    """Embree scene (``embreex``) over the scene's triangles, built here (not at the first cast). A
    batch is split into ``threads`` slices cast concurrently (``EmbreeScene.run`` releases the GIL);
    each slice is one call into C. Casts may also come from several threads at once."""

    name = "embree"
    min_slice = 16384  # rays; below this a thread costs more than it saves

    def __init__(self, triangles: SceneTriangles, threads: int | None = None) -> None:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh
        self.triangles = triangles
        self.tables = _Tables(triangles)
        self.threads = threads or worker_count()
        self.scene = None
        if len(triangles):
            # robust: watertight traversal, so a ray through a shared edge (a quad's diagonal) still hits
            self.scene = rtcore_scene.EmbreeScene(robust=True)
            # one geometry for the whole soup: Embree's primID is then the row in ``triangles``
            self._mesh = TriangleMesh(self.scene, np.ascontiguousarray(triangles.vertices, np.float32),
                                      np.ascontiguousarray(triangles.triangles, np.int32))
            # the first run commits (builds the BVH); commit now, single-threaded, before any cast
            self.scene.run(np.zeros((1, 3), np.float32), np.array([[0.0, 0.0, 1.0]], np.float32), dists=0.0)

    def cast(self, origins, directions, max_distance: float, threads: int | None = None) -> Hits:
        """See :class:`Hits`; ``threads`` (default ``self.threads``) caps the concurrent slices."""
        m = len(origins)
        if self.scene is None or m == 0:
            return Hits.misses(m)
        origins = np.ascontiguousarray(origins, np.float32)
        directions = np.ascontiguousarray(directions, np.float32)
        far = float(min(max_distance, 1.0e37))

        def run(a: int, b: int) -> dict:
            # INTERSECT with output gives the triangle (primID) and tfar; DISTANCE gives only tfar
            return self.scene.run(origins[a:b], directions[a:b], dists=far, output=1)

        slices = max(1, min(threads or self.threads, m // self.min_slice))
        if slices == 1:  # e.g. a lidar chunk, already in its own thread
            result = run(0, m)
            return self.tables.hits(result["primID"], result["tfar"])
        results = run_in_slices(run, m, slices)
        return self.tables.hits(np.concatenate([r["primID"] for r in results]),
                                np.concatenate([r["tfar"] for r in results]))


class PartsCaster:
    """Embree over :class:`PartedTriangles` with one geometry per part (:mod:`.embree_parts`), cast
    as :class:`EmbreeCaster` does. :meth:`update` follows a later frame of the same parts in place:
    moved parts are rewritten and refitted, the rest is kept."""

    name = "embree"
    min_slice = EmbreeCaster.min_slice

    def __init__(self, triangles: PartedTriangles, embree_api, threads: int | None = None) -> None:
        from ..products.embree_parts import PartsScene
        self.triangles = triangles
        self.threads = threads or worker_count()
        self.scene = PartsScene(triangles.parts, embree_api)
        first = self.scene.first_triangle
        self.normals = np.full((int(first[-1]) + 1, 3), np.nan, dtype=np.float32)  # last row: a miss
        self.object_ids = np.full(int(first[-1]) + 1, -1, dtype=np.int32)
        for k, (_, _, object_id, _) in enumerate(triangles.parts):
            self.object_ids[first[k]:first[k + 1]] = object_id
        self._local_normals: dict[int, tuple] = {}
        self._place(range(len(triangles.parts)))
        self.scene.build()

    def _place(self, moved) -> None:
        """World vertices and normal rows of parts ``moved`` at their matrices, a mesh's instances at once.

        Vertices: ``local @ R.T + t`` in float64, stored float32, as a triangle soup is made. Normals: the
        mesh's own unit normals (computed once) turned by the cofactor matrix of each transform, which
        maps the cross product of two edges to that of the transformed edges: the world triangles' normals."""
        scene, parts = self.scene, self.triangles.parts
        groups: dict = {}
        for k in moved:
            arrays, _, _, static = parts[k]
            groups.setdefault(id(arrays) if static else ("read this frame", k), []).append(k)
        for key, ks in groups.items():
            arrays, read_now = parts[ks[0]][0], isinstance(key, tuple)
            m = np.stack([parts[k][1] for k in ks])  # (K, 4, 4)
            a = m[:, :3, :3]
            world = np.matmul(arrays[0], a.transpose(0, 2, 1)) + m[:, None, :3, 3]  # (K, V, 3)
            fv = scene.first_vertex
            for i, k in enumerate(ks):  # slices: cheaper than one scatter through gathered row numbers
                scene.vertices[fv[k]:fv[k + 1]] = world[i]
            if not len(arrays[1]):
                continue
            cached = None if read_now else self._local_normals.get(key)
            if cached is None or cached[0] is not arrays:  # the arrays are kept: their id stays theirs
                cached = (arrays, SceneTriangles(arrays[0], arrays[1], None).normals())
                if not read_now:
                    self._local_normals[key] = cached
            cofactor = np.stack([np.cross(a[:, :, 1], a[:, :, 2]), np.cross(a[:, :, 2], a[:, :, 0]),
                                 np.cross(a[:, :, 0], a[:, :, 1])], axis=2)  # columns
            turned = np.matmul(cached[1], cofactor.transpose(0, 2, 1))  # (K, F, 3): cofactor @ n per row
            with np.errstate(invalid="ignore", divide="ignore"):
                turned /= np.sqrt(np.einsum("kfi,kfi->kf", turned, turned))[..., None]
            ft = scene.first_triangle
            for i, k in enumerate(ks):
                self.normals[ft[k]:ft[k + 1]] = turned[i]

    def update(self, triangles: PartedTriangles) -> bool:
        """Follow ``triangles`` (a later frame) in place when it has the same parts (meshes, ids, order)
        as this caster's; returns False (nothing changed here) when it has not."""
        old, new = self.triangles.parts, triangles.parts
        if len(old) != len(new) or any(
                id0 != id1 or len(a0[0]) != len(a1[0]) or not (a0[1] is a1[1] or np.array_equal(a0[1], a1[1]))
                for (a0, _, id0, _), (a1, _, id1, _) in zip(old, new)):
            return False
        moved = [k for k, ((a0, m0, _, _), (a1, m1, _, static1)) in enumerate(zip(old, new))
                 if not (np.array_equal(m0, m1) and _same_local(a0, a1, static1))]
        self.triangles = triangles
        self._place(moved)
        self.scene.touch(moved)
        self.scene.commit()
        return True

    def cast(self, origins, directions, max_distance: float, threads: int | None = None) -> Hits:
        """See :class:`Hits`; ``threads`` as :meth:`EmbreeCaster.cast`."""
        m = len(origins)
        if m == 0 or not len(self.triangles):
            return Hits.misses(m)
        origins = np.ascontiguousarray(origins, np.float32)
        directions = np.ascontiguousarray(directions, np.float32)
        far = float(min(max_distance, 1.0e37))

        def run(a: int, b: int):
            return self.scene.run(origins[a:b], directions[a:b], far)

        slices = max(1, min(threads or self.threads, m // self.min_slice))
        results = [run(0, m)] if slices == 1 else run_in_slices(run, m, slices)
        triangle = np.concatenate([r[0] for r in results]).astype(np.int32)
        distance = np.concatenate([r[1] for r in results]).astype(np.float64)
        distance[triangle < 0] = np.inf
        return Hits(distance, np.take(self.normals, triangle, axis=0), triangle, np.take(self.object_ids, triangle))


BACKENDS = {"embree": EmbreeCaster, "bvh": BVHCaster}


class CasterCache:
    """Builds casters for a run, one frame after another, and keeps the last one while the scene's
    triangles stay exactly the same (static geometry: one acceleration structure for every frame)."""

    def __init__(self, backend: str = "auto") -> None:
        self.backend = backend
        self.caster = None
        self.builds = 0  # casters built
        self.updates = 0  # frames followed by moving parts of the last caster (PartsCaster)

    def caster_for(self, triangles: SceneTriangles | PartedTriangles):
        """The cached caster if ``triangles`` equal its own exactly; for :class:`PartedTriangles` on
        Embree the cached :class:`PartsCaster` moved to them when they have the same parts; else a new
        one (then cached). A gatherer gives back the very same :class:`PartedTriangles` while nothing
        changes, so those are compared by identity only."""
        last = self.caster
        if last is not None and (last.triangles is triangles or (
                not isinstance(triangles, PartedTriangles) and not isinstance(last.triangles, PartedTriangles)
                and _same_triangles(last.triangles, triangles))):
            return last
        embree_api = self._parts_api() if isinstance(triangles, PartedTriangles) else None
        if embree_api is not None:
            if isinstance(last, PartsCaster) and last.update(triangles):
                self.updates += 1
                return last
            self.caster = PartsCaster(triangles, embree_api)
        else:
            self.caster = make_caster(triangles, self.backend)
        self.builds += 1
        return self.caster

    def _parts_api(self):
        """The Embree library functions when this cache's backend is Embree and they can be had."""
        backend = available_backends()[0] if self.backend == "auto" else self.backend
        if backend != "embree" or not embree_available():
            return None
        from ..products.embree_parts import api
        return api()


def _same_triangles(a: SceneTriangles, b: SceneTriangles) -> bool:
    return (np.array_equal(a.triangles, b.triangles) and np.array_equal(a.object_ids, b.object_ids)
            and np.array_equal(a.vertices, b.vertices))


def embree_available() -> bool:
    """True when the ``embreex`` wheel can be imported (installed with the extension)."""
    try:
        import embreex.mesh_construction
        import embreex.rtcore_scene  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> list[str]:
    """Backend names usable here, fastest first."""
    return [name for name in BACKENDS if name != "embree" or embree_available()]


def make_caster(triangles: SceneTriangles, backend: str = "auto"):
    """A caster over ``triangles``: ``"auto"`` picks Embree when importable, else the BVHTree loop."""
    if backend == "auto":
        backend = available_backends()[0]
    if backend not in BACKENDS:
        raise ValueError(f"unknown ray casting backend {backend!r}; use auto, {', '.join(BACKENDS)}")
    if backend == "embree" and not embree_available():
        raise ValueError("ray casting backend 'embree' needs the embreex wheel, which cannot be imported")
    return BACKENDS[backend](triangles)
