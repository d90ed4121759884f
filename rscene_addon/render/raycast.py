"""Lidar ray casting: ONE world-space ``mathutils.bvhtree.BVHTree`` per frame over the evaluated scene
(every render-visible mesh, modifier result and instance), plus a triangle -> instance id table, then
a tight loop of ``BVHTree.ray_cast`` (never ``scene.ray_cast`` per ray).

Within a frame the geometry is taken at the frame's start (objects hit do not move during the
sweep), while the sensor itself moves: its pose at each ray's firing time is interpolated between the
poses at frames ``f`` and ``f + 1`` (linear position, slerp rotation), which is exact for linearly
interpolated baked keys.
"""
from __future__ import annotations

import numpy as np
from mathutils.bvhtree import BVHTree

from ..sensors.lidar import LidarPattern, hits_to_points
from ..sensors.noise import add_depth_noise
from ..sensors.writers import POINT_DTYPE
from .ids import GEOMETRY_TYPES
from .timing import interpolate_poses

__all__ = ["LIDAR_DTYPE", "SceneBVH", "sweep"]

# sensors.writers.POINT_DTYPE plus the measured range (m): x y z intensity t ring object_id range
LIDAR_DTYPE = np.dtype(POINT_DTYPE.descr + [("range", "<f4")])


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


class SceneBVH:
    """World-space triangles of everything that renders, and the instance id of each triangle."""

    def __init__(self, depsgraph, entities) -> None:
        cache: dict[int, tuple] = {}
        verts, tris, ids = [], [], []
        count = 0
        for inst in depsgraph.object_instances:
            ob = inst.object
            if ob.type not in GEOMETRY_TYPES:
                continue
            owner = inst.parent.original if inst.is_instance and inst.parent is not None else ob.original
            if owner.hide_render or (not inst.is_instance and ob.original.hide_render):
                continue
            key = ob.data.as_pointer() if ob.type == "MESH" and ob.data is not None else None
            arrays = cache.get(key) if key is not None else None
            if arrays is None:
                arrays = _mesh_arrays(ob)
                if key is not None:
                    cache[key] = arrays
            local, faces = arrays
            if not len(faces):
                continue
            m = np.array(inst.matrix_world, dtype=np.float64)
            verts.append(local @ m[:3, :3].T + m[:3, 3])
            tris.append(faces + count)
            ids.append(np.full(len(faces), entities.instance_id_for(owner), dtype=np.int32))
            count += len(local)
        self.vertices = np.concatenate(verts) if verts else np.zeros((0, 3))
        self.triangles = np.concatenate(tris) if tris else np.zeros((0, 3), dtype=np.int64)
        self.triangle_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int32)
        self.tree = None
        if len(self.triangles):
            self.tree = BVHTree.FromPolygons(self.vertices.tolist(), self.triangles.tolist(),
                                             all_triangles=True)

    def cast(self, origins, directions, max_distance: float):
        """Nearest hits of rays ``(M, 3)`` (unit directions, world): ``distance (M,)`` (inf on a miss),
        ``normal (M, 3)`` (world, NaN on a miss) and ``instance id (M,)`` (-1 on a miss)."""
        m = len(origins)
        distance = np.full(m, np.inf)
        normal = np.full((m, 3), np.nan)
        ids = np.full(m, -1, dtype=np.int32)
        if self.tree is None or m == 0:
            return distance, normal, ids
        ray_cast = self.tree.ray_cast
        # one C call per ray and nothing else in the loop; hits are picked out afterwards
        results = [ray_cast(o, d, max_distance) for o, d in zip(origins.tolist(), directions.tolist())]
        rows = [i for i, hit in enumerate(results) if hit[2] is not None]
        if rows:
            hits = [results[i] for i in rows]
            rows = np.asarray(rows)
            distance[rows] = [hit[3] for hit in hits]
            normal[rows] = [tuple(hit[1]) for hit in hits]
            ids[rows] = self.triangle_ids[np.asarray([hit[2] for hit in hits])]
        return distance, normal, ids


def pattern_for(spec) -> LidarPattern | None:
    lidar = spec.lidar
    if lidar.get("channels", 0) < 1 or lidar.get("samples_per_revolution", 0) < 1 or spec.update_rate <= 0:
        return None
    return LidarPattern.symmetric(lidar["channels"], lidar["samples_per_revolution"],
                                  min(abs(lidar["vertical_fov_deg"]), 180.0), lidar["horizontal_fov_deg"],
                                  spec.update_rate)


def sweep(bvh: SceneBVH, pattern: LidarPattern, t0: float, t1: float, pose_start, pose_end,
          min_range: float = 0.0, max_range: float = 0.0, noise=None) -> np.ndarray:
    """Returns of the rays fired in ``[t0, t1)`` (s) as a :data:`LIDAR_DTYPE` array, misses and
    out-of-range returns dropped, in firing order.

    ``pose_start``/``pose_end``: sensor-to-world 4x4 (RaiSim sensor frame) at ``t0`` and ``t1``.
    Points are in the sensor frame at each ray's firing time (as a spinning lidar reports them,
    without motion compensation); intensity is ``|cos|`` of the incidence angle (no material model).
    Time ``0`` is the scan start, i.e. scene time 0 (see :mod:`.timing`). ``noise``: ``(mean, stddev,
    seed, frame)`` adds seeded Gaussian noise (m) to every fired ray's range before range limits apply.
    """
    fired = pattern.rays_in_window(t0, t1, scan_start=0.0)
    local = pattern.ray_directions()[fired.ray_index]
    span = t1 - t0
    s = (fired.time - t0) / span if span > 0 else np.zeros(len(fired.time))
    origins, rotations = interpolate_poses(pose_start, pose_end, s)
    world = np.einsum("mij,mj->mi", rotations, local)
    limit = max_range if max_range and max_range > 0 else 1.0e12
    distance, normal, ids = bvh.cast(origins, world, limit)
    if noise is not None:
        mean, stddev, seed, frame = noise
        distance = add_depth_noise(distance, mean, stddev, seed, frame, "lidar")
    points, valid = hits_to_points(local, distance, min_range, max_range, keep_misses=True)
    out = np.zeros(int(valid.sum()), dtype=LIDAR_DTYPE)
    out["x"], out["y"], out["z"] = points[valid, 0], points[valid, 1], points[valid, 2]
    with np.errstate(invalid="ignore"):
        out["intensity"] = np.abs(np.sum(normal[valid] * world[valid], axis=1))
    out["t"] = fired.time[valid]
    out["ring"] = pattern.ray_rings()[fired.ray_index][valid]
    out["object_id"] = ids[valid]
    out["range"] = distance[valid]
    return out
