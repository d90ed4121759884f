"""NED <-> scene frame, and WGS84 geodesy (geodetic <-> ECEF <-> local NED). Pure Python.

The one place where Project AirSim's frame meets the scene model's:

* AirSim poses are in NED: x north, y east, z down (metres), with roll, pitch, yaw about those axes.
* The scene model is right-handed with +z up. A NED vector maps to the model by a rotation of pi about
  x: ``x_model = x_ned`` (north), ``y_model = -y_ned`` (west), ``z_model = -z_ned`` (up).
  A rotation ``R_ned`` becomes ``C R_ned C`` with ``C = diag(1, -1, -1)``; for a quaternion ``(w, x, y, z)``
  that is ``(w, x, -y, -z)``. The map is its own inverse.

Geodetic points (latitude and longitude in degrees, altitude in metres above the WGS84 ellipsoid) become
local NED coordinates around a home point through Earth-centred, Earth-fixed (ECEF) coordinates.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "WGS84_A",
    "WGS84_F",
    "ecef_to_geodetic",
    "ecef_to_ned",
    "geodetic_to_ecef",
    "geodetic_to_ned",
    "model_to_ned",
    "ned_to_ecef",
    "ned_to_geodetic",
    "ned_to_model",
    "quat_model_to_ned",
    "quat_ned_to_model",
]

WGS84_A = 6378137.0
WGS84_F = 1.0 / 298.257223563
_E2 = WGS84_F * (2.0 - WGS84_F)


def _z(v: float) -> float:
    return float(v) + 0.0  # no -0.0


def ned_to_model(v: Sequence[float]) -> tuple[float, float, float]:
    """A NED position (or direction) in the scene frame."""
    return (float(v[0]) + 0.0, float(-v[1]) + 0.0, float(-v[2]) + 0.0)  # _z inline: once per actor


model_to_ned = ned_to_model  # the rotation by pi about x is its own inverse


def quat_ned_to_model(q: Sequence[float]) -> tuple[float, float, float, float]:
    """An orientation given in NED (w, x, y, z) in the scene frame."""
    return (float(q[0]) + 0.0, float(q[1]) + 0.0, float(-q[2]) + 0.0, float(-q[3]) + 0.0)  # _z inline


quat_model_to_ned = quat_ned_to_model


def geodetic_to_ecef(lat_deg: float, lon_deg: float, alt: float) -> tuple[float, float, float]:
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    sin_lat, cos_lat = math.sin(lat), math.cos(lat)
    n = WGS84_A / math.sqrt(1.0 - _E2 * sin_lat * sin_lat)
    return ((n + alt) * cos_lat * math.cos(lon),
            (n + alt) * cos_lat * math.sin(lon),
            (n * (1.0 - _E2) + alt) * sin_lat)


def ecef_to_geodetic(x: float, y: float, z: float) -> tuple[float, float, float]:
    """ECEF -> (latitude deg, longitude deg, altitude m), iterating to convergence."""
    lon = math.atan2(y, x)
    p = math.hypot(x, y)
    lat = math.atan2(z, p * (1.0 - _E2))
    alt = 0.0
    for _ in range(20):
        sin_lat = math.sin(lat)
        n = WGS84_A / math.sqrt(1.0 - _E2 * sin_lat * sin_lat)
        alt = p / math.cos(lat) - n if abs(lat) < math.radians(89.0) else z / sin_lat - n * (1.0 - _E2)
        new_lat = math.atan2(z, p * (1.0 - _E2 * n / (n + alt)))
        if abs(new_lat - lat) < 1e-15:
            lat = new_lat
            break
        lat = new_lat
    return math.degrees(lat), math.degrees(lon), alt


def _ned_axes(lat_deg: float, lon_deg: float):
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    sl, cl, so, co = math.sin(lat), math.cos(lat), math.sin(lon), math.cos(lon)
    north = (-sl * co, -sl * so, cl)
    east = (-so, co, 0.0)
    down = (-cl * co, -cl * so, -sl)
    return north, east, down


def ecef_to_ned(point: Sequence[float], home: Sequence[float]) -> tuple[float, float, float]:
    """ECEF ``point`` in the NED frame at geodetic ``home`` (lat, lon, alt)."""
    origin = geodetic_to_ecef(*home)
    d = [p - o for p, o in zip(point, origin)]
    return tuple(_z(sum(a * b for a, b in zip(axis, d))) for axis in _ned_axes(home[0], home[1]))


def ned_to_ecef(ned: Sequence[float], home: Sequence[float]) -> tuple[float, float, float]:
    origin = geodetic_to_ecef(*home)
    axes = _ned_axes(home[0], home[1])
    return tuple(origin[i] + sum(ned[k] * axes[k][i] for k in range(3)) for i in range(3))


def geodetic_to_ned(point: Sequence[float], home: Sequence[float]) -> tuple[float, float, float]:
    """(lat, lon, alt) -> local NED metres around ``home`` (lat, lon, alt)."""
    return ecef_to_ned(geodetic_to_ecef(*point), home)


def ned_to_geodetic(ned: Sequence[float], home: Sequence[float]) -> tuple[float, float, float]:
    return ecef_to_geodetic(*ned_to_ecef(ned, home))
