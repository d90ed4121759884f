"""Every axis, angle and unit conversion between RaiSim scene records and Blender, in one place.

Both worlds are right-handed, Z-up, metres; quaternions are w,x,y,z in both. What differs:

* Cameras: RaiSim looks along local +x with +z up; Blender looks along local -Z with +Y up.
  ``R_blender = R_raisim @ CAMERA_FIX`` where CAMERA_FIX maps Blender camera axes onto RaiSim ones
  (Blender -Z -> RaiSim +x, Blender +Y -> RaiSim +z, so Blender +X -> RaiSim -y).
* Lights: a record gives the travel direction; a Blender light shines along its local -Z. We use the
  shortest rotation from -Z to the direction (then the area-light axes about it).
* Light power: Sun strength (W/m^2) = intensity; point, spot and area power (W) = intensity * 100.
  Invertible, documented, and close to how rayrai's scenes look under Cycles' defaults.
* Spot cones: record angles are half angles in degrees; Blender's ``spot_size`` is the full angle and
  ``spot_blend`` = 1 - inner/outer.
* Field of view: vertical FOV (or horizontal when ``horizontalFov`` > 0) <-> lens with the matching
  sensor fit.
"""
from __future__ import annotations

import math

import numpy as np

from mathutils import Matrix, Quaternion, Vector

from ..base.spatial import R_RAISIM_FROM_OPENGL, quat_normalize

CAMERA_FIX = Matrix(R_RAISIM_FROM_OPENGL.tolist())  # Blender camera axes in RaiSim camera axes
CAMERA_FIX_Q = CAMERA_FIX.to_quaternion()
SENSOR_WIDTH_MM = 36.0
SENSOR_HEIGHT_MM = 24.0
POINT_POWER_PER_INTENSITY = 100.0  # W per unit of rayrai intensity for point, spot and area lights
SUN_STRENGTH_PER_INTENSITY = 1.0


def quat(wxyz) -> Quaternion:
    return Quaternion((float(wxyz[0]), float(wxyz[1]), float(wxyz[2]), float(wxyz[3])))


def normalized_quat(wxyz) -> Quaternion:
    """A record quaternion as a unit ``Quaternion``; a zero one is the identity, the rule of
    :func:`rscene_addon.base.spatial.quat_normalize` (mathutils here: one object at a time is faster)."""
    q = quat(wxyz)
    if q.magnitude == 0.0:
        return Quaternion()
    q.normalize()
    return q


def normalized_quats(wxyz) -> np.ndarray:
    """``normalized_quat`` of many (N, 4) quaternions at once, as float64 (N, 4)."""
    return quat_normalize(np.asarray(wxyz, dtype=np.float64).reshape(-1, 4))


# -- cameras ---------------------------------------------------------------------------------------------


def camera_rotation_to_blender(wxyz) -> Quaternion:
    return normalized_quat(wxyz) @ CAMERA_FIX_Q


def camera_rotation_from_blender(q: Quaternion) -> Quaternion:
    return q @ CAMERA_FIX_Q.inverted()


def lens_from_fov(fov_degrees: float, sensor_mm: float) -> float:
    fov = math.radians(min(max(fov_degrees, 1.0), 175.0))
    return sensor_mm / (2.0 * math.tan(fov / 2.0))


def fov_from_lens(lens_mm: float, sensor_mm: float) -> float:
    return math.degrees(2.0 * math.atan(sensor_mm / (2.0 * lens_mm)))


def set_camera_fov(cam, vertical_deg: float, horizontal_deg: float = 0.0) -> None:
    """Lens and sensor fit for a record's FOV: horizontal when positive, else vertical."""
    if horizontal_deg and horizontal_deg > 0:
        cam.sensor_fit, cam.sensor_width = "HORIZONTAL", SENSOR_WIDTH_MM
        cam.lens = lens_from_fov(horizontal_deg, SENSOR_WIDTH_MM)
    else:
        cam.sensor_fit, cam.sensor_height = "VERTICAL", SENSOR_HEIGHT_MM
        cam.lens = lens_from_fov(vertical_deg, SENSOR_HEIGHT_MM)


# -- lights ----------------------------------------------------------------------------------------------

_DOWN = Vector((0.0, 0.0, -1.0))


def light_rotation_to_blender(direction, right=None, up=None) -> Quaternion:
    """Rotation whose local -Z is ``direction``.

    An area light's ``areaRight``/``areaUp`` are world axes spanning its surface (RaiSim scenes write
    them with right x up = -direction); when they do, they fix the turn about the direction too.
    """
    d = Vector(direction)
    if d.length < 1e-12:
        d = _DOWN.copy()
    d.normalize()
    if right is not None and up is not None:
        r, u = Vector(right), Vector(up)
        if r.length > 1e-9 and u.length > 1e-9:
            r.normalize()
            u.normalize()
            z = r.cross(u)
            if abs(r.dot(u)) < 1e-6 and (z + d).length < 1e-6:
                return Matrix((r, u, z)).transposed().to_quaternion()
    return _DOWN.rotation_difference(d)


def light_direction_from_blender(q: Quaternion) -> Vector:
    return q @ _DOWN


def light_power_to_blender(kind: str, intensity: float) -> float:
    if kind == "directional":
        return intensity * SUN_STRENGTH_PER_INTENSITY
    return intensity * POINT_POWER_PER_INTENSITY


def light_power_from_blender(kind: str, energy: float) -> float:
    if kind == "directional":
        return energy / SUN_STRENGTH_PER_INTENSITY
    return energy / POINT_POWER_PER_INTENSITY


def spot_to_blender(cone_deg: float, inner_deg: float) -> tuple[float, float]:
    size = math.radians(min(max(2.0 * cone_deg, 1.0), 180.0))
    blend = 0.0 if cone_deg <= 0 else min(max(1.0 - inner_deg / cone_deg, 0.0), 1.0)
    return size, blend


def spot_from_blender(size: float, blend: float) -> tuple[float, float]:
    cone = math.degrees(size) / 2.0
    return cone, cone * (1.0 - blend)


BLENDER_LIGHT_TYPE = {"directional": "SUN", "point": "POINT", "spot": "SPOT", "area": "AREA"}
RECORD_LIGHT_TYPE = {v: k for k, v in BLENDER_LIGHT_TYPE.items()}


def close(a, b, tol: float = 1e-6) -> bool:
    """Whether two numbers or sequences agree to a relative-or-absolute tolerance."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    a, b = list(a), list(b)
    return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))


def same_rotation(q1, q2, tol: float = 1e-6) -> bool:
    """q and -q are the same rotation."""
    a, b = quat(q1).normalized(), quat(q2).normalized()
    return abs(abs(a.dot(b)) - 1.0) <= tol
