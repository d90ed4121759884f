"""Scene time, per-frame sensor windows and pose interpolation (pure).

Scene time of frame ``f`` is ``t(f) = (f - frame_start) / fps`` seconds (``fps = render.fps /
render.fps_base``), so the first frame of the scene is ``t = 0`` whatever frames are rendered, and
every chunk of a split run agrees on it. Output frame ``f`` covers the window ``[t(f), t(f + 1))``:
the lidar fires the rays of that window, the IMU reports its ticks ``k / rate`` in it. Windows of
consecutive frames partition time, so chunks partition the samples of a full run.
"""
from __future__ import annotations

import math

import numpy as np

from ..base.spatial import matrix_to_quat, quat_slerp, quat_to_matrix

__all__ = ["FrameClock", "interpolate_poses", "pose_to_pq", "tick_range"]


class FrameClock:
    def __init__(self, frame_start: int, fps: float, fps_base: float = 1.0) -> None:
        if not (fps > 0 and fps_base > 0):
            raise ValueError(f"need positive fps and fps_base, got {fps}, {fps_base}")
        self.frame_start = int(frame_start)
        self.rate = float(fps) / float(fps_base)

    @property
    def dt(self) -> float:
        """Frame duration (s)."""
        return 1.0 / self.rate

    def time(self, frame: float) -> float:
        return (frame - self.frame_start) / self.rate

    def window(self, frame: int) -> tuple[float, float]:
        return self.time(frame), self.time(frame + 1)


def _ceil(x: float) -> int:
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * max(1.0, abs(x)):
        return int(nearest)
    return math.ceil(x)


def tick_range(t0: float, t1: float, rate_hz: float) -> range:
    """Integer ticks ``k`` with ``t0 <= k / rate < t1`` (a tick on an edge belongs to one window)."""
    if not rate_hz > 0:
        raise ValueError(f"rate must be positive, got {rate_hz}")
    return range(_ceil(t0 * rate_hz), _ceil(t1 * rate_hz))


def pose_to_pq(matrix) -> tuple[np.ndarray, np.ndarray]:
    """``(position (3,), quaternion w,x,y,z (4,))`` of a rigid 4x4 transform."""
    m = np.asarray(matrix, dtype=np.float64)
    return m[:3, 3].copy(), matrix_to_quat(m[:3, :3])


def interpolate_poses(start, end, s) -> tuple[np.ndarray, np.ndarray]:
    """Poses between two rigid 4x4 transforms at fractions ``s`` ``(M,)``: positions ``(M, 3)``
    (linear) and rotations ``(M, 3, 3)`` (slerp). Equal ends give exactly the start pose."""
    s = np.asarray(s, dtype=np.float64)
    a, b = np.asarray(start, dtype=np.float64), np.asarray(end, dtype=np.float64)
    if np.array_equal(a, b):
        positions = np.broadcast_to(a[:3, 3], s.shape + (3,)).copy()
        return positions, np.broadcast_to(a[:3, :3], s.shape + (3, 3)).copy()
    p0, q0 = pose_to_pq(a)
    p1, q1 = pose_to_pq(b)
    positions = p0 + s[..., None] * (p1 - p0)
    rotations = quat_to_matrix(quat_slerp(q0, q1, s))
    return positions, rotations
