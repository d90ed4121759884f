"""Lidar sweeps: the rays one sensor fires in a frame, cast as one batch against ONE world-space caster
per frame (:mod:`.caster`: Embree when the ``embreex`` wheel is installed, else a ``BVHTree`` loop)
over the evaluated scene (every render-visible mesh, modifier result and instance).

Within a frame the geometry is taken at the frame's start (objects hit do not move during the
sweep), while the sensor itself moves: its pose at each ray's firing time is interpolated between the
poses at frames ``f`` and ``f + 1`` (linear position, slerp rotation), which is exact for linearly
interpolated baked keys.

Speed: one pose per column (its rings fire together), and the rays cut into slices of whole columns
that ``caster.threads`` threads cast and turn into returns concurrently (Embree releases the GIL).
"""
from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from ..sensors.lidar import LidarPattern
from ..sensors.noise import add_depth_noise
from ..sensors.writers import POINT_DTYPE
from .caster import run_in_slices
from .timing import interpolate_poses

__all__ = ["LIDAR_DTYPE", "pattern_for", "sweep"]

# sensors.writers.POINT_DTYPE plus the measured range (m): x y z intensity t ring object_id range
LIDAR_DTYPE = np.dtype(POINT_DTYPE.descr + [("range", "<f4")])
_MIN_SLICE = 16384  # rays per thread; fewer cost more in thread start-up than they save
_SLICES_PER_WORKER = 4
_GIL_SWITCH_S = 0.0005

if [LIDAR_DTYPE.fields[a][1] for a in "xyz"] != [0, 4, 8] or LIDAR_DTYPE["x"] != np.float32:
    raise ImportError("LIDAR_DTYPE must start with float32 x, y, z (see _xyz_view)")


def _xyz_view(points: np.ndarray) -> np.ndarray:
    """The x, y, z fields of a contiguous :data:`LIDAR_DTYPE` array as one writable ``(M, 3)`` float32
    view, so the points are written in one pass instead of three strided ones."""
    return np.ndarray((len(points), 3), np.float32, buffer=points, strides=(LIDAR_DTYPE.itemsize, 4))


def pattern_for(spec) -> LidarPattern | None:
    """The firing pattern of a lidar :class:`~.plan.SensorSpec`, or None when it fires no rays."""
    lidar = spec.lidar
    if lidar.get("channels", 0) < 1 or lidar.get("samples_per_revolution", 0) < 1 or spec.update_rate <= 0:
        return None
    return LidarPattern.symmetric(lidar["channels"], lidar["samples_per_revolution"],
                                  min(abs(lidar["vertical_fov_deg"]), 180.0), lidar["horizontal_fov_deg"],
                                  spec.update_rate)


@lru_cache(maxsize=16)
def _pattern_rays(pattern: LidarPattern) -> np.ndarray:
    """Ray directions ``(N, 3)`` float32 of a pattern, computed once (the pattern is frozen). float32 is
    what both casters intersect in; returns are stored as float32 too."""
    directions = pattern.ray_directions().astype(np.float32)
    directions.flags.writeable = False
    return directions


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
    directions = _pattern_rays(pattern)
    n, channels = len(fired.ray_index), pattern.channels
    first = int(fired.ray_index[0]) if n else 0
    if n and int(fired.ray_index[-1]) - first == n - 1:  # no wrap-around: a slice, no copy
        local = directions[first:first + n]
    else:
        local = np.take(directions, fired.ray_index, axis=0)
    # the rings of a column fire together: one pose per column (fired rays come column by column)
    column_time = fired.time[::channels]
    span = t1 - t0
    s = (column_time - t0) / span if span > 0 else np.zeros(len(column_time))
    positions, rotations = interpolate_poses(pose_start, pose_end, s)
    rotations_t = rotations.transpose(0, 2, 1).astype(np.float32)
    positions = positions.astype(np.float32)
    limit = max_range if max_range and max_range > 0 else 1.0e12
    upper = max_range if max_range and max_range > 0 else np.inf
    workers = max(1, min(getattr(caster, "threads", 1), n // _MIN_SLICE))
    # a few slices per worker: one thread's numpy work (which holds the GIL) overlaps another's casting
    slices = workers * _SLICES_PER_WORKER if workers > 1 else 1

    # returns are written in place, slice [a, b) from row a on; only misses make a final compaction
    points = np.zeros(n, dtype=LIDAR_DTYPE)

    def returns(a: int, b: int, d, cosine, object_id) -> tuple[int, int, int]:
        # a return is valid as sensors.lidar.hits_to_points defines it (finite, min <= d <= max); a
        # finite upper limit also rejects inf and NaN, and distances are never negative
        with np.errstate(invalid="ignore"):
            valid = (d <= upper) if upper < np.inf else np.isfinite(d)
            if min_range > 0:
                valid &= d >= min_range
        keep = np.flatnonzero(valid)
        out = points[a:a + len(keep)]
        # every ray returned (e.g. indoors): views instead of gathered copies
        everything = len(keep) == b - a
        sel = slice(None) if everything else keep
        kept_range = d[sel]
        np.multiply(local[a:b][sel], kept_range.astype(np.float32)[:, None], out=_xyz_view(out))
        out["intensity"] = np.abs(cosine[sel])
        out["t"] = fired.time[a:b][sel]
        # a slice starts at a column: ring = position in the column
        if everything:
            out["ring"].reshape(-1, channels)[:] = np.arange(channels)
        else:
            out["ring"] = keep % channels
        out["object_id"] = object_id[sel]
        out["range"] = kept_range
        return a, b, len(keep)

    def cast(a: int, b: int):
        # a slice of whole columns, in its own thread: pose, world rays, cast, incidence, and (without
        # noise, which is drawn over all rays at once) the slice's returns
        ca, cb = a // channels, b // channels
        world = np.matmul(local[a:b].reshape(-1, channels, 3), rotations_t[ca:cb]).reshape(-1, 3)
        origins = np.repeat(positions[ca:cb], channels, axis=0)
        hits = caster.cast(origins, world, limit, threads=1)
        with np.errstate(invalid="ignore"):
            cosine = np.einsum("ij,ij->i", hits.normal, world)
        if noise is None:
            return returns(a, b, hits.distance, cosine, hits.object_id)
        return hits.distance, cosine, hits.object_id

    # a thread back from Embree waits for the GIL until the other drops it, by default up to 5 ms:
    # hand it over sooner while the workers alternate between casting and numpy
    switch = sys.getswitchinterval()
    if workers > 1:
        sys.setswitchinterval(min(switch, _GIL_SWITCH_S))
    try:
        spans = run_in_slices(cast, n, slices, align=channels, workers=workers)
        if noise is not None:  # the slices gave (distance, cosine, object_id): draw, then returns
            mean, stddev, seed, frame = noise
            distance = add_depth_noise(np.concatenate([p[0] for p in spans]), mean, stddev, seed, frame,
                                       "lidar")
            cosine = np.concatenate([p[1] for p in spans])
            object_id = np.concatenate([p[2] for p in spans])
            spans = run_in_slices(lambda a, b: returns(a, b, distance[a:b], cosine[a:b], object_id[a:b]),
                                  n, slices, align=channels, workers=workers)
    finally:
        sys.setswitchinterval(switch)
    # spans: (a, b, returns written from row a) per slice
    if all(k == b - a for a, b, k in spans):
        return points
    if len(spans) == 1:
        return points[:spans[0][2]]
    return np.concatenate([points[a:a + k] for a, _, k in spans])
