"""Lidar sweeps: the rays one sensor fires in a frame, cast as one batch against ONE world-space caster
per frame (:mod:`.caster`: Embree when the ``embreex`` wheel is installed, else a ``BVHTree`` loop)
over the evaluated scene (every render-visible mesh, modifier result and instance).

Within a frame the geometry is taken at the frame's start (objects hit do not move during the
sweep), while the sensor itself moves: its pose at each ray's firing time is interpolated between the
poses at frames ``f`` and ``f + 1`` (linear position, slerp rotation), which is exact for linearly
interpolated baked keys.

Speed: the pattern's unit directions are computed once per pattern; one pose per column (its rings
fire together), or one rotation for every ray when the sensor does not move in the frame. The rays
are cut into chunks of whole columns that ``caster.threads`` threads take in turn, each casting a
chunk and writing its returns in place (Embree releases the GIL while it casts). Chunks are small
enough that their temporaries stay in cache and are reused by the allocator: one batch of 131k rays
would fault in ~11 MB of fresh pages per sweep, which cost more than the numpy work itself.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..sensors.lidar import LidarPattern
from ..sensors.noise import add_depth_noise
from ..sensors.writers import POINT_DTYPE
from .caster import run_in_slices
from ..products.timing import interpolate_poses

__all__ = ["LIDAR_DTYPE", "pattern_for", "sweep"]

# sensors.writers.POINT_DTYPE plus the measured range (m): x y z intensity t ring object_id range
LIDAR_DTYPE = np.dtype(POINT_DTYPE.descr + [("range", "<f4")])
_CHUNK_RAYS = 16384  # rays a thread casts and turns into returns at a time (rounded to whole columns)


def pattern_for(spec) -> LidarPattern | None:
    """The firing pattern of a lidar :class:`~.plan.SensorSpec`, or None when it fires no rays."""
    lidar = spec.lidar
    if lidar.get("channels", 0) < 1 or lidar.get("samples_per_revolution", 0) < 1 or spec.update_rate <= 0:
        return None
    if "vertical_fov_min_deg" in lidar:  # a robot's spinning lidar: its own pitch range and spin direction
        return LidarPattern(lidar["channels"], lidar["samples_per_revolution"], lidar["vertical_fov_min_deg"],
                            lidar["vertical_fov_max_deg"], lidar["horizontal_fov_deg"], spec.update_rate,
                            bool(lidar.get("clockwise", False)))
    return LidarPattern.symmetric(lidar["channels"], lidar["samples_per_revolution"],
                                  min(abs(lidar["vertical_fov_deg"]), 180.0), lidar["horizontal_fov_deg"],
                                  spec.update_rate)


@lru_cache(maxsize=16)
def _pattern_rays(pattern: LidarPattern) -> tuple[np.ndarray, np.ndarray]:
    """Ray directions of a pattern, computed once (the pattern is frozen): ``(N, 3)`` float32 (what
    both casters intersect in) and the same transposed, ``(3, N)``, so that each axis is contiguous
    when the points are written field by field."""
    directions = pattern.ray_directions().astype(np.float32)
    by_axis = np.ascontiguousarray(directions.T)
    directions.flags.writeable = by_axis.flags.writeable = False
    return directions, by_axis


def sweep(caster, pattern: LidarPattern, t0: float, t1: float, pose_start, pose_end,
          min_range: float = 0.0, max_range: float = 0.0, noise=None) -> np.ndarray:
    """Returns of the rays fired in ``[t0, t1)`` (s) as a :data:`LIDAR_DTYPE` array, misses and
    out-of-range returns dropped, in firing order.

    ``caster``: a :mod:`.caster` backend over the frame's geometry. ``pose_start``/``pose_end``:
    sensor-to-world 4x4 (RaiSim sensor frame) at ``t0`` and ``t1``. Points are in the sensor frame at
    each ray's firing time (as a spinning lidar reports them, without motion compensation); intensity
    is ``|cos|`` of the incidence angle (no material model).
    Time ``0`` is the scan start, i.e. scene time 0 (see :mod:`.timing`). ``noise``: ``(mean, stddev,
    seed, frame)`` adds seeded Gaussian noise (m) to every fired ray's range before range limits apply.
    """
    fired = pattern.rays_in_window(t0, t1, scan_start=0.0)
    directions, by_axis = _pattern_rays(pattern)
    n, channels = len(fired.ray_index), pattern.channels
    first = int(fired.ray_index[0]) if n else 0
    # without a wrap-around past the revolution's end the fired rays are one run of the pattern
    contiguous = n > 0 and int(fired.ray_index[-1]) - first == n - 1

    def local(a: int, b: int, axes: bool = False) -> np.ndarray:
        """Directions of fired rays ``[a, b)``, ``(M, 3)`` (``axes``: ``(3, M)``); views when contiguous."""
        table = by_axis if axes else directions
        if contiguous:
            return table[..., first + a:first + b] if axes else table[first + a:first + b]
        return np.take(table, fired.ray_index[a:b], axis=1 if axes else 0)

    # the rings of a column fire together: one pose per column (fired rays come column by column);
    # a sensor that does not move in the frame has one pose for every ray
    static = np.array_equal(np.asarray(pose_start, np.float64), np.asarray(pose_end, np.float64))
    if static:
        pose = np.asarray(pose_start, np.float64)
        rotation_t = pose[:3, :3].T.astype(np.float32)
        position = pose[:3, 3].astype(np.float32)
    else:
        column_time = fired.time[::channels]
        span = t1 - t0
        s = (column_time - t0) / span if span > 0 else np.zeros(len(column_time))
        positions, rotations = interpolate_poses(pose_start, pose_end, s)
        rotations_t = rotations.transpose(0, 2, 1).astype(np.float32)
        positions = positions.astype(np.float32)
    limit = max_range if max_range and max_range > 0 else 1.0e12
    upper = max_range if max_range and max_range > 0 else np.inf
    # chunks of whole columns, the same whatever the thread count (so are the results): each one's
    # temporaries stay in cache and are recycled by the allocator instead of faulting in fresh pages
    columns = n // channels
    chunks = max(1, -(-columns // max(1, _CHUNK_RAYS // channels)))
    workers = max(1, min(getattr(caster, "threads", 1), chunks))
    if static:
        origins_all = np.empty((min(n, -(-columns // chunks) * channels), 3), np.float32)
        origins_all[:] = position

    # returns are written in place, chunk [a, b) from row a on; only misses make a final compaction
    points = np.empty(n, dtype=LIDAR_DTYPE)

    def returns(a: int, b: int, d, cosine, object_id) -> tuple[int, int, int]:
        # a return is valid as sensors.lidar.hits_to_points defines it (finite, min <= d <= max); a
        # finite upper limit also rejects inf and NaN, and distances are never negative
        with np.errstate(invalid="ignore"):
            valid = (d <= upper) if upper < np.inf else np.isfinite(d)
            if min_range > 0:
                valid &= d >= min_range
        # every ray returned (e.g. indoors): views instead of gathered copies
        everything = bool(valid.all())
        keep = None if everything else np.nonzero(valid)[0]
        count = b - a if everything else len(keep)
        out = points[a:a + count]
        sel = slice(None) if everything else keep
        kept_range = d[sel]
        scale = kept_range.astype(np.float32)
        # field by field: one aligned multiply per axis beats one into the packed (unaligned) x, y, z
        for name, axis in zip("xyz", local(a, b, axes=True)):
            out[name] = axis[sel] * scale
        out["intensity"] = np.abs(cosine[sel])
        out["t"] = fired.time[a:b][sel]
        # a chunk starts at a column: ring = position in the column
        if everything:
            out["ring"].reshape(-1, channels)[:] = np.arange(channels)
        else:
            out["ring"] = keep % channels
        out["object_id"] = object_id[sel]
        out["range"] = kept_range
        return a, b, count

    if noise is not None:  # noise is drawn over all rays at once: keep every ray's cast until then
        distance, cosine = np.empty(n), np.empty(n, np.float32)
        object_id = np.empty(n, np.int32)

    def cast(a: int, b: int):
        # a chunk of whole columns: world rays, cast, incidence, and (without noise) its returns
        ca, cb = a // channels, b // channels
        rays = local(a, b)
        if static:
            world = rays @ rotation_t
            origins = origins_all[:b - a]
        else:
            world = np.matmul(rays.reshape(-1, channels, 3), rotations_t[ca:cb]).reshape(-1, 3)
            origins = np.repeat(positions[ca:cb], channels, axis=0)
        hits = caster.cast(origins, world, limit, threads=1)
        with np.errstate(invalid="ignore"):
            incidence = np.einsum("ij,ij->i", hits.normal, world)
        if noise is None:
            return returns(a, b, hits.distance, incidence, hits.object_id)
        distance[a:b], cosine[a:b], object_id[a:b] = hits.distance, incidence, hits.object_id
        return None

    spans = run_in_slices(cast, n, chunks, align=channels, workers=workers)
    if noise is not None:
        mean, stddev, seed, frame = noise
        distance = add_depth_noise(distance, mean, stddev, seed, frame, "lidar")
        spans = run_in_slices(lambda a, b: returns(a, b, distance[a:b], cosine[a:b], object_id[a:b]),
                              n, chunks, align=channels, workers=workers)
    # spans: (a, b, returns written from row a) per chunk
    if all(k == b - a for a, b, k in spans):
        return points
    if len(spans) == 1:
        return points[:spans[0][2]]
    return np.concatenate([points[a:a + k] for a, _, k in spans])
