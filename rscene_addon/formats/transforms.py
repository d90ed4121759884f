"""Rotations and rigid transforms used by the format converters (numpy, no Blender).

Quaternions are ``(w, x, y, z)`` tuples, as in the scene model. A pose is ``(position, quaternion)``.
Euler conventions of the formats live here, each in one function:

* CoppeliaSim alpha, beta, gamma: ``R = Rx(alpha) @ Ry(beta) @ Rz(gamma)`` (rotate about the object's own
  x, then its own y, then its own z), as the CoppeliaSim manual defines them.
* Roll, pitch, yaw (Project AirSim): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

Quat = tuple[float, float, float, float]
Vec3 = tuple[float, float, float]
Pose = tuple[Vec3, Quat]

IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)
ORIGIN: Vec3 = (0.0, 0.0, 0.0)


def _clean(values: Iterable[float]) -> tuple:
    """Floats with -0.0 turned into 0.0 (so written files do not show ``-0``)."""
    return tuple(float(v) + 0.0 for v in values)


def quat_normalize(q: Sequence[float]) -> Quat:
    w, x, y, z = (float(v) for v in q)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if n == 0.0:
        return IDENTITY
    return _clean((w / n, x / n, y / n, z / n))


def quat_mul(a: Sequence[float], b: Sequence[float]) -> Quat:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return _clean((aw * bw - ax * bx - ay * by - az * bz,
                   aw * bx + ax * bw + ay * bz - az * by,
                   aw * by - ax * bz + ay * bw + az * bx,
                   aw * bz + ax * by - ay * bx + az * bw))


def quat_conj(q: Sequence[float]) -> Quat:
    return _clean((q[0], -q[1], -q[2], -q[3]))


def quat_rotate(q: Sequence[float], v: Sequence[float]) -> Vec3:
    return _clean(matrix_from_quat(q) @ np.asarray(v, dtype=float))


def quat_canonical(q: Sequence[float]) -> Quat:
    """The same rotation with ``w >= 0`` (the sign of a quaternion is arbitrary)."""
    q = quat_normalize(q)
    return q if q[0] >= 0 else _clean(-v for v in q)


def matrix_from_quat(q: Sequence[float]) -> np.ndarray:
    w, x, y, z = quat_normalize(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def quat_from_matrix(m) -> Quat:
    """Rotation matrix -> unit quaternion with ``w >= 0`` (Shepperd's method)."""
    m = np.asarray(m, dtype=float)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = math.sqrt(trace + 1.0) * 2
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        q = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        q = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        q = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    return quat_canonical(q)


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


# -- CoppeliaSim alpha-beta-gamma ------------------------------------------------------------------------


def quat_from_coppelia_euler(alpha: float, beta: float, gamma: float, degrees: bool = True) -> Quat:
    """CoppeliaSim Euler angles: ``R = Rx(alpha) Ry(beta) Rz(gamma)``."""
    if degrees:
        alpha, beta, gamma = (math.radians(v) for v in (alpha, beta, gamma))
    return quat_from_matrix(_rx(alpha) @ _ry(beta) @ _rz(gamma))


def coppelia_euler_from_quat(q: Sequence[float], degrees: bool = True) -> Vec3:
    m = matrix_from_quat(q)
    sb = max(-1.0, min(1.0, m[0, 2]))
    beta = math.asin(sb)
    if abs(sb) < 1 - 1e-12:
        alpha = math.atan2(-m[1, 2], m[2, 2])
        gamma = math.atan2(-m[0, 1], m[0, 0])
    else:  # gimbal lock: put everything in alpha
        alpha = math.atan2(m[2, 1], m[1, 1])
        gamma = 0.0
    angles = (alpha, beta, gamma)
    if degrees:
        angles = tuple(math.degrees(a) for a in angles)
    return _clean(angles)


# -- roll, pitch, yaw ----------------------------------------------------------------------------------------


def quat_from_rpy(roll: float, pitch: float, yaw: float) -> Quat:
    """``R = Rz(yaw) Ry(pitch) Rx(roll)`` (radians)."""
    return quat_from_matrix(_rz(yaw) @ _ry(pitch) @ _rx(roll))


def rpy_from_quat(q: Sequence[float]) -> Vec3:
    m = matrix_from_quat(q)
    sp = max(-1.0, min(1.0, -m[2, 0]))
    pitch = math.asin(sp)
    if abs(sp) < 1 - 1e-12:
        roll = math.atan2(m[2, 1], m[2, 2])
        yaw = math.atan2(m[1, 0], m[0, 0])
    else:
        roll = 0.0
        yaw = math.atan2(-m[0, 1], m[1, 1])
    return _clean((roll, pitch, yaw))


# -- poses ---------------------------------------------------------------------------------------------------


def compose(a: Pose, b: Pose) -> Pose:
    """The pose ``b`` (given in frame ``a``) in the frame ``a`` is given in."""
    (pa, qa), (pb, qb) = a, b
    rotated = quat_rotate(qa, pb)
    return _clean(p + r for p, r in zip(pa, rotated)), quat_normalize(quat_mul(qa, qb))


def inverse(a: Pose) -> Pose:
    p, q = a
    qi = quat_conj(quat_normalize(q))
    return _clean(-v for v in quat_rotate(qi, p)), qi


def relative(parent: Pose, child: Pose) -> Pose:
    """``child`` (world) expressed in the frame of ``parent`` (world)."""
    return compose(inverse(parent), child)


def quat_look_at(eye: Sequence[float], target: Sequence[float]) -> Quat:
    """Orientation of a camera at ``eye`` looking at ``target`` along its local +x with local +z up."""
    forward = np.asarray(target, dtype=float) - np.asarray(eye, dtype=float)
    n = np.linalg.norm(forward)
    if n < 1e-12:
        return IDENTITY
    x = forward / n
    up = np.array([0.0, 0.0, 1.0])
    y = np.cross(up, x)
    if np.linalg.norm(y) < 1e-9:  # looking straight up or down
        y = np.array([0.0, 1.0, 0.0])
    y /= np.linalg.norm(y)
    z = np.cross(x, y)
    return quat_from_matrix(np.column_stack([x, y, z]))


def quat_from_z_to(direction: Sequence[float]) -> Quat:
    """The shortest rotation that turns local +z onto ``direction``."""
    d = np.asarray(direction, dtype=float)
    n = np.linalg.norm(d)
    if n < 1e-12:
        return IDENTITY
    d = d / n
    z = np.array([0.0, 0.0, 1.0])
    c = float(np.dot(z, d))
    if c < -1 + 1e-12:
        return (0.0, 1.0, 0.0, 0.0)
    axis = np.cross(z, d)
    w = 1.0 + c
    return quat_normalize((w, *axis))


def nearly_equal(a: Sequence[float], b: Sequence[float], tol: float = 1e-9) -> bool:
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= tol * max(1.0, abs(float(x))) for x, y in zip(a, b))


def same_rotation(a: Sequence[float], b: Sequence[float], tol: float = 1e-9) -> bool:
    qa, qb = quat_normalize(a), quat_normalize(b)
    return abs(abs(sum(x * y for x, y in zip(qa, qb))) - 1.0) <= tol
