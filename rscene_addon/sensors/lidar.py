"""Spinning lidar: ray pattern, firing times and hit points.

Sensor frame: ``+x`` forward, ``+y`` left, ``+z`` up (the RaiSim sensor frame). Azimuth is the
angle from ``+x`` towards ``+y`` (counter-clockwise seen from above), elevation the angle above the
``xy`` plane; a ray's unit direction is ``(cos el cos az, cos el sin az, sin el)``.

Pattern: ``channels`` rings at elevations evenly spaced from ``vertical_fov_min_deg`` to
``vertical_fov_max_deg`` inclusive (ring 0 lowest; one channel sits at the middle), and
``samples_per_revolution`` columns. For a full 360 deg sweep the columns are
``-180 + k * 360/S`` (``[-180, 180)``: no duplicate at the seam, which is behind the sensor);
for a partial horizontal FOV ``h`` they span ``-h/2 .. h/2`` inclusive.

Timing: the head turns once per ``1/update_rate_hz`` seconds with increasing azimuth (decreasing when
``clockwise``, seen from above). Column
``k`` of the revolution starting at ``t0`` fires all its channels at ``t0 + k / (S * rate)``.

Ray order everywhere: ``index = column * channels + ring`` (shape ``(N,) = (S * C,)``), i.e.
firing order, so per-ray times are non-decreasing with the index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["FiredRays", "LidarPattern", "hits_to_points"]


class FiredRays(NamedTuple):
    """Rays fired in a time window, in firing order; all arrays have shape ``(M,)``."""

    ray_index: np.ndarray  # int64 index into the pattern's (N,) ray arrays
    time: np.ndarray  # float64 firing time (s)
    revolution: np.ndarray  # int64 revolution number counted from the scan start


def _ceil_index(x: float) -> int:
    """``ceil(x)``, but an ``x`` within rounding error of an integer counts as that integer.

    Keeps a column firing exactly at a window edge in exactly one of two adjacent windows,
    even when ``(t - start) / dt`` comes out as ``1800.0000000000002``.
    """
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * max(1.0, abs(x)):
        return int(nearest)
    return math.ceil(x)


@dataclass(frozen=True)
class LidarPattern:
    """A spinning multi-channel lidar (angles in degrees, rate in Hz)."""

    channels: int
    samples_per_revolution: int
    vertical_fov_min_deg: float
    vertical_fov_max_deg: float
    horizontal_fov_deg: float = 360.0
    update_rate_hz: float = 10.0
    clockwise: bool = False  # the head turns clockwise seen from above: azimuth decreases (RaiSim's spin)

    def __post_init__(self) -> None:
        if int(self.channels) != self.channels or self.channels < 1:
            raise ValueError(f"channels must be a positive integer, got {self.channels!r}")
        samples = self.samples_per_revolution
        if int(samples) != samples or samples < 1:
            raise ValueError(f"samples_per_revolution must be a positive integer, got {samples!r}")
        if not -90.0 <= self.vertical_fov_min_deg <= self.vertical_fov_max_deg <= 90.0:
            raise ValueError(
                "need -90 <= vertical_fov_min_deg <= vertical_fov_max_deg <= 90, got "
                f"{self.vertical_fov_min_deg}, {self.vertical_fov_max_deg}"
            )
        if not 0.0 < self.horizontal_fov_deg <= 360.0:
            raise ValueError(f"horizontal_fov_deg must be in (0, 360], got {self.horizontal_fov_deg}")
        if not (self.update_rate_hz > 0.0 and math.isfinite(self.update_rate_hz)):
            raise ValueError(f"update_rate_hz must be positive, got {self.update_rate_hz}")
        object.__setattr__(self, "channels", int(self.channels))
        object.__setattr__(self, "samples_per_revolution", int(self.samples_per_revolution))

    @classmethod
    def symmetric(
        cls,
        channels: int,
        samples_per_revolution: int,
        vertical_fov_deg: float,
        horizontal_fov_deg: float = 360.0,
        update_rate_hz: float = 10.0,
    ) -> LidarPattern:
        """Vertical FOV ``vertical_fov_deg`` in total, centred on the horizon (``lidarVerticalFov``)."""
        half = 0.5 * float(vertical_fov_deg)
        return cls(channels, samples_per_revolution, -half, half, horizontal_fov_deg, update_rate_hz)

    # -- sizes and times ------------------------------------------------------------------------

    @property
    def num_rays(self) -> int:
        return self.channels * self.samples_per_revolution

    @property
    def period_s(self) -> float:
        """One revolution (s)."""
        return 1.0 / self.update_rate_hz

    @property
    def column_period_s(self) -> float:
        """Time between two consecutive columns (s)."""
        return self.period_s / self.samples_per_revolution

    @property
    def full_circle(self) -> bool:
        return self.horizontal_fov_deg == 360.0

    # -- per channel / per column ---------------------------------------------------------------

    def elevations_deg(self) -> np.ndarray:
        """Ring elevations ``(C,)`` (deg), ascending, first and last exactly on the FOV limits."""
        lo, hi = self.vertical_fov_min_deg, self.vertical_fov_max_deg
        if self.channels == 1:
            return np.array([0.5 * (lo + hi)])
        return np.linspace(lo, hi, self.channels)

    def azimuths_deg(self) -> np.ndarray:
        """Column azimuths ``(S,)`` (deg) in firing order (see the module docstring)."""
        s, h = self.samples_per_revolution, self.horizontal_fov_deg
        if self.full_circle:
            azimuths = -180.0 + np.arange(s) * (360.0 / s)
            if self.clockwise:  # -180 first (the seam behind), then decreasing: 180 - 360/S, ...
                azimuths = np.where(azimuths == -180.0, -180.0, -azimuths)
            return azimuths
        if s == 1:
            return np.zeros(1)
        azimuths = np.linspace(-0.5 * h, 0.5 * h, s)
        return azimuths[::-1].copy() if self.clockwise else azimuths

    # -- per ray (N = S * C, firing order) ------------------------------------------------------

    def ray_rings(self) -> np.ndarray:
        """Ring (channel) index ``(N,)`` int64 of each ray."""
        return np.tile(np.arange(self.channels, dtype=np.int64), self.samples_per_revolution)

    def ray_columns(self) -> np.ndarray:
        """Column index ``(N,)`` int64 of each ray."""
        return np.repeat(np.arange(self.samples_per_revolution, dtype=np.int64), self.channels)

    def ray_elevations_rad(self) -> np.ndarray:
        """Elevation ``(N,)`` (rad) of each ray."""
        return np.radians(self.elevations_deg())[self.ray_rings()]

    def ray_azimuths_rad(self) -> np.ndarray:
        """Azimuth ``(N,)`` (rad) of each ray."""
        return np.radians(self.azimuths_deg())[self.ray_columns()]

    def ray_directions(self) -> np.ndarray:
        """Unit directions ``(N, 3)`` in the sensor frame."""
        el, az = self.ray_elevations_rad(), self.ray_azimuths_rad()
        return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=-1)

    def ray_times(self, t0: float = 0.0) -> np.ndarray:
        """Firing time ``(N,)`` (s) of each ray in the revolution starting at ``t0`` (s)."""
        return t0 + self.ray_columns() * self.column_period_s

    def rays_in_window(self, t0: float, t1: float, scan_start: float = 0.0) -> FiredRays:
        """Rays fired during ``[t0, t1)`` (s) by a head that started revolution 0 at ``scan_start``.

        Windows may span several revolutions (a ray then appears once per firing) and may start
        before ``scan_start`` (negative revolutions). Adjacent windows ``[a, b)``, ``[b, c)``
        partition the firings exactly.
        """
        if not t1 >= t0:
            raise ValueError(f"need t1 >= t0, got t0={t0}, t1={t1}")
        dt = self.column_period_s
        first = _ceil_index((t0 - scan_start) / dt)
        stop = _ceil_index((t1 - scan_start) / dt)
        g = np.arange(first, stop, dtype=np.int64)  # global column counter
        revolution, column = np.divmod(g, self.samples_per_revolution)
        rings = np.arange(self.channels, dtype=np.int64)
        ray_index = (column[:, None] * self.channels + rings).ravel()
        time = np.repeat(scan_start + g * dt, self.channels)
        return FiredRays(ray_index, time, np.repeat(revolution, self.channels))


def hits_to_points(
    directions,
    distances,
    min_range: float = 0.0,
    max_range: float | None = None,
    keep_misses: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Hit points from unit ray directions ``(N, 3)`` and hit distances ``(N,)`` (m).

    A return is valid when its distance is finite and ``min_range <= d <= max_range``; a miss is
    passed as ``inf`` or ``NaN``. ``max_range`` of ``None`` or ``<= 0`` (the records' unset value)
    means no upper limit. Returns ``(points, valid)``: ``valid`` is ``(N,)`` bool; ``points`` is
    ``(N, 3)`` with NaN rows for invalid returns when ``keep_misses`` (keeps the ray order, e.g.
    for organized clouds), else ``(M, 3)`` with only the valid rows, in ray order.
    """
    directions = np.asarray(directions, dtype=np.float64)
    distances = np.asarray(distances, dtype=np.float64)
    if directions.ndim != 2 or directions.shape[1] != 3 or distances.shape != directions.shape[:1]:
        raise ValueError(
            f"need directions (N, 3) and distances (N,), got {directions.shape}, {distances.shape}"
        )
    if min_range < 0:
        raise ValueError(f"min_range must be >= 0, got {min_range}")
    upper = math.inf if max_range is None or max_range <= 0 else float(max_range)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(distances) & (distances >= min_range) & (distances <= upper)
    points = directions * np.where(valid, distances, np.nan)[:, None]
    if not keep_misses:
        points = points[valid]
    return points, valid
