"""Spatial maths for every layer: quaternions, rotation matrices, rigid transforms, axis conventions.

Quaternions are ``(w, x, y, z)``. A quaternion ``q`` maps body coordinates to world coordinates:
``v_world = R(q) @ v_body``. Array functions broadcast over leading axes: quaternions ``(..., 4)``,
vectors ``(..., 3)``, matrices ``(..., 3, 3)`` or ``(..., 4, 4)``.

One rule for a zero quaternion everywhere: it is the identity rotation. A record written as
``0 0 0 0`` (or a degenerate one from a hand-edited file) then loads, simulates, renders and
exports unrotated in every layer, instead of raising in some and not others; every other
quaternion is divided by its length. ``quat_normalize``, ``quat_to_matrix``, ``quat_rotate``,
``unit_quat_to_matrix`` and the record-tuple helpers all follow it.

Camera frames (all right-handed; the columns give each camera axis in RaiSim camera axes):

===========  ===========  ===========  ===========
convention   forward      right        up
===========  ===========  ===========  ===========
``raisim``   ``+x``       ``-y``       ``+z``
``opencv``   ``+z``       ``+x``       ``-y``
``opengl``   ``-z``       ``+x``       ``+y``   (Blender camera objects)
===========  ===========  ===========  ===========

``R_RAISIM_FROM_OPENCV @ v_opencv`` is the same vector in RaiSim camera axes; ``R_A_FROM_B``
matrices compose as ``R_A_FROM_C = R_A_FROM_B @ R_B_FROM_C``. A Blender camera's rotation is
``R_raisim @ R_RAISIM_FROM_OPENGL``.

Euler conventions of the file formats, each in one function pair:

* roll, pitch, yaw (URDF ``rpy``, Project AirSim): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``;
* CoppeliaSim alpha, beta, gamma: ``R = Rx(alpha) @ Ry(beta) @ Rz(gamma)``.

The last section works on record tuples ``(position, quaternion)`` for the format writers: plain
floats with ``-0.0`` turned into ``0.0`` so written files never show ``-0``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

Quat = tuple[float, float, float, float]
Vec3 = tuple[float, float, float]
Pose = tuple[Vec3, Quat]


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


IDENTITY_QUAT = _frozen([1.0, 0.0, 0.0, 0.0])

# -- vectors -------------------------------------------------------------------------------------------------


def normalize(v: np.ndarray, eps: float = 1e-300) -> np.ndarray:
    """Unit vectors along the last axis (zero vectors stay zero)."""
    v = np.asarray(v, dtype=np.float64)
    n = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    return v / np.maximum(n, eps)


def norm(v: np.ndarray) -> np.ndarray:
    """Lengths over the last axis: ``np.linalg.norm(v, axis=-1)`` (the same sum and square root) without
    its Python-level overhead, which dominates for the short arrays of one simulator step."""
    return np.sqrt(np.add.reduce(v * v, axis=-1))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis (faster than ``np.cross`` for small batches)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def skew(v) -> np.ndarray:
    """The (3, 3) matrix ``[v]x`` with ``[v]x @ u == v x u``."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents (..., 3) orthogonal to unit normals ``n`` (Frisvad / Duff et al. 2017)."""
    nx, ny, nz = n[..., 0], n[..., 1], n[..., 2]
    sign = np.where(nz >= 0, 1.0, -1.0)
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    t1 = np.stack((1.0 + sign * nx * nx * a, sign * b, -sign * nx), axis=-1)
    t2 = np.stack((b, sign + ny * ny * a, -ny), axis=-1)
    return t1, t2


# -- quaternions (arrays) ------------------------------------------------------------------------------------


def _as_quat(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    if q.shape[-1:] != (4,):
        raise ValueError(f"quaternions need a last axis of length 4 (w, x, y, z), got shape {q.shape}")
    return q


def quat_normalize(q) -> np.ndarray:
    """Unit quaternions ``(..., 4)``; a zero quaternion becomes the identity (see the module note)."""
    q = _as_quat(q)
    n = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    out = q / np.where(n > 0, n, 1.0)
    if np.any(n == 0):
        out = np.where(n > 0, out, IDENTITY_QUAT)
    return out


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``). Shapes (..., 4)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ), axis=-1)


def quat_conjugate(q) -> np.ndarray:
    """Conjugate ``(..., 4)``; the inverse rotation for unit quaternions."""
    return _as_quat(q) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors ``v`` (..., 3) by unit quaternions ``q`` (..., 4); a zero ``q`` leaves them as they are.

    ``v' = v + 2w (u x v) + 2 u x (u x v)``: two cross products, no matrix build. ``q`` is not normalised
    here (the simulator's hot path); normalise record quaternions first with :func:`quat_normalize`.
    """
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def quat_rotate_inv(q, v) -> np.ndarray:
    """Rotate vectors by the inverse of unit quaternions ``q`` (world to body)."""
    w = q[..., :1]
    u = -q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def unit_quat_to_matrix(q) -> np.ndarray:
    """(..., 4) unit quaternions to (..., 3, 3) rotation matrices, without normalising (a zero ``q`` gives I)."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (yy + zz)
    m[..., 0, 1] = 2 * (xy - wz)
    m[..., 0, 2] = 2 * (xz + wy)
    m[..., 1, 0] = 2 * (xy + wz)
    m[..., 1, 1] = 1 - 2 * (xx + zz)
    m[..., 1, 2] = 2 * (yz - wx)
    m[..., 2, 0] = 2 * (xz - wy)
    m[..., 2, 1] = 2 * (yz + wx)
    m[..., 2, 2] = 1 - 2 * (xx + yy)
    return m


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of any quaternions ``(..., 4)`` (normalised first; zero -> I)."""
    return unit_quat_to_matrix(quat_normalize(q))


def matrix_to_quat(m) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` with ``w >= 0`` from rotation matrices ``(..., 3, 3)``.

    Shepperd's method: of the four candidate rows ``4 q_k q`` the one with the largest pivot
    ``4 q_k^2`` is normalised, so no result comes from a small, cancellation-prone pivot.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.shape[-2:] != (3, 3):
        raise ValueError(f"rotation matrices need shape (..., 3, 3), got {m.shape}")
    batch = m.shape[:-2]
    r = m.reshape(-1, 3, 3)
    d0, d1, d2 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    sx, sy, sz = r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0], r[:, 1, 0] - r[:, 0, 1]
    pxy, pxz, pyz = r[:, 0, 1] + r[:, 1, 0], r[:, 0, 2] + r[:, 2, 0], r[:, 1, 2] + r[:, 2, 1]
    pw, px, py, pz = 1 + d0 + d1 + d2, 1 + d0 - d1 - d2, 1 - d0 + d1 - d2, 1 - d0 - d1 + d2
    # Candidate k is 4 q_k q (q up to sign); its k-th entry 4 q_k^2 is the pivot.
    candidates = np.stack(
        [
            np.stack([pw, sx, sy, sz], axis=-1),
            np.stack([sx, px, pxy, pxz], axis=-1),
            np.stack([sy, pxy, py, pyz], axis=-1),
            np.stack([sz, pxz, pyz, pz], axis=-1),
        ],
        axis=1,
    )
    k = np.argmax(np.stack([pw, px, py, pz], axis=-1), axis=1)
    q = candidates[np.arange(len(k)), k]
    q = quat_normalize(q)
    q[q[:, 0] < 0] *= -1.0  # canonical hemisphere, so equal rotations give equal quaternions
    return q.reshape(batch + (4,))


def quat_from_axis_angle(axis, angle) -> np.ndarray:
    """Quaternion ``(..., 4)`` rotating by ``angle`` (rad) about ``axis`` (any length, ``(..., 3)``)."""
    axis = normalize(np.asarray(axis, dtype=np.float64))
    angle = np.asarray(angle, dtype=np.float64)[..., None]
    return np.concatenate((np.cos(angle / 2), np.sin(angle / 2) * axis), axis=-1)


def quat_integrate(q: np.ndarray, omega: np.ndarray, dt: float) -> np.ndarray:
    """Advance orientations (N, 4) by world angular velocities (N, 3) over ``dt`` (exact rotation)."""
    angle = np.sqrt(np.sum(omega * omega, axis=-1)) * dt
    half = 0.5 * angle
    # sin(half)/|omega| with a series for tiny angles
    small = angle < 1e-8
    s = np.where(small, 0.5 * dt * (1.0 - angle * angle / 24.0),
                 np.sin(half) / np.where(small, 1.0, angle) * dt)
    dq = np.concatenate((np.cos(half)[..., None], omega * s[..., None]), axis=-1)
    return quat_normalize(quat_multiply(dq, q))


def quat_angular_velocity(q0: np.ndarray, q1: np.ndarray, dt: float) -> np.ndarray:
    """World angular velocity that turns ``q0`` into ``q1`` in ``dt`` (shortest way)."""
    d = quat_multiply(q1, quat_conjugate(q0))
    d = np.where(d[..., :1] < 0, -d, d)
    v = d[..., 1:]
    s = np.sqrt(np.sum(v * v, axis=-1))
    angle = 2.0 * np.arctan2(s, d[..., 0])
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0)
    return v * (scale / dt)[..., None]


def quat_slerp(a, b, s) -> np.ndarray:
    """Spherical interpolation from ``a`` to ``b`` (``(..., 4)``) at fraction ``s`` (``(...)``).

    Takes the shorter arc (``b`` is negated when ``a . b < 0``); falls back to normalised linear
    interpolation for nearly equal rotations, where slerp's ``sin`` ratio loses precision.
    """
    a, b = quat_normalize(a), quat_normalize(b)
    s = np.asarray(s, dtype=np.float64)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0.0, -b, b)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    near = sin_theta < 1e-9
    safe = np.where(near, 1.0, sin_theta)
    wa = np.where(near, 1.0 - s, np.sin((1.0 - s) * theta) / safe)
    wb = np.where(near, s, np.sin(s * theta) / safe)
    return quat_normalize(wa * a + wb * b)


# -- rotation matrices ---------------------------------------------------------------------------------------


def axis_angle_matrix(axis, angle) -> np.ndarray:
    """Rotation about a unit ``axis`` (3,) by ``angle`` (scalar or (N,)) -> (3, 3) or (N, 3, 3)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    c, s = np.cos(angle)[..., None, None], np.sin(angle)[..., None, None]
    k = skew(axis)
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def log_rotation(r) -> np.ndarray:
    """Rotation vector (axis * angle) of a 3x3 rotation matrix."""
    r = np.asarray(r, dtype=float)
    cos = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    vee = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    if angle < 1e-7:
        return 0.5 * vee
    if np.pi - angle < 1e-4:
        # near pi: axis from the symmetric part
        b = (r + np.eye(3)) / 2.0
        i = int(np.argmax(np.diag(b)))
        axis = b[:, i] / np.sqrt(max(b[i, i], 1e-12))
        axis /= np.linalg.norm(axis)
        if np.dot(axis, vee) < 0:
            axis = -axis
        return axis * angle
    return vee * (angle / (2.0 * np.sin(angle)))


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rpy_to_matrix(rpy) -> np.ndarray:
    """Fixed-axis roll, pitch, yaw (radians; URDF ``rpy``, AirSim): ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def matrix_to_rpy(m) -> Vec3:
    """Roll, pitch, yaw (radians) of a rotation matrix; at gimbal lock the roll is 0."""
    m = np.asarray(m, dtype=float)
    sp = max(-1.0, min(1.0, -m[2, 0]))
    pitch = math.asin(sp)
    if abs(sp) < 1 - 1e-12:
        roll = math.atan2(m[2, 1], m[2, 2])
        yaw = math.atan2(m[1, 0], m[0, 0])
    else:
        roll = 0.0
        yaw = math.atan2(-m[0, 1], m[1, 1])
    return _clean((roll, pitch, yaw))


def coppelia_euler_to_matrix(alpha: float, beta: float, gamma: float) -> np.ndarray:
    """CoppeliaSim alpha, beta, gamma (radians): ``R = Rx(alpha) @ Ry(beta) @ Rz(gamma)``."""
    return _rx(alpha) @ _ry(beta) @ _rz(gamma)


def matrix_to_coppelia_euler(m) -> Vec3:
    """CoppeliaSim alpha, beta, gamma (radians) of a rotation matrix; at gimbal lock gamma is 0."""
    m = np.asarray(m, dtype=float)
    sb = max(-1.0, min(1.0, m[0, 2]))
    beta = math.asin(sb)
    if abs(sb) < 1 - 1e-12:
        alpha = math.atan2(-m[1, 2], m[2, 2])
        gamma = math.atan2(-m[0, 1], m[0, 0])
    else:  # gimbal lock: put everything in alpha
        alpha = math.atan2(m[2, 1], m[1, 1])
        gamma = 0.0
    return _clean((alpha, beta, gamma))


# -- rigid transforms (4x4) ----------------------------------------------------------------------------------


def homogeneous(rotation=None, translation_=None) -> np.ndarray:
    """A 4x4 transform from a (3, 3) rotation and a (3,) translation (either may be omitted)."""
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    if translation_ is not None:
        m[:3, 3] = translation_
    return m


def translation(xyz) -> np.ndarray:
    return homogeneous(None, xyz)


def invert_transform(t) -> np.ndarray:
    """Inverse of rigid transforms ``(..., 4, 4)`` using ``R^T`` (exact for rotations)."""
    t = np.asarray(t, dtype=np.float64)
    rt = np.swapaxes(t[..., :3, :3], -1, -2)
    out = np.zeros_like(t)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -(rt @ t[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


# -- camera axis conventions ---------------------------------------------------------------------------------

# Columns: OpenCV x (right), y (down), z (forward) written in RaiSim camera axes.
R_RAISIM_FROM_OPENCV = _frozen([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
# Columns: OpenGL x (right), y (up), z (backward) written in RaiSim camera axes; also a Blender camera's.
R_RAISIM_FROM_OPENGL = _frozen([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
# OpenCV and OpenGL share +x and flip y and z.
R_OPENCV_FROM_OPENGL = _frozen(np.diag([1.0, -1.0, -1.0]))
# The same turn as a quaternion: a Blender camera's orientation is ``q_raisim * Q_RAISIM_FROM_OPENGL``.
Q_RAISIM_FROM_OPENGL = _frozen(matrix_to_quat(R_RAISIM_FROM_OPENGL))

_FROM_RAISIM = {
    "raisim": _frozen(np.eye(3)),
    "opencv": R_RAISIM_FROM_OPENCV,
    "opengl": R_RAISIM_FROM_OPENGL,
}
CONVENTIONS = tuple(_FROM_RAISIM)


def rotation_from_raisim(convention: str) -> np.ndarray:
    """``R_RAISIM_FROM_<convention>`` ``(3, 3)``: camera axes of ``convention`` in RaiSim axes."""
    try:
        return _FROM_RAISIM[convention]
    except KeyError:
        raise ValueError(f"unknown camera convention {convention!r}; expected one of {CONVENTIONS}") from None


def camera_rotation(quat_wxyz, convention: str = "opencv") -> np.ndarray:
    """World-from-camera rotations ``(..., 3, 3)`` for the camera frame ``convention``.

    ``quat_wxyz`` (``(..., 4)``) is the RaiSim camera/sensor orientation (local ``+x`` forward,
    ``+z`` up). For ``"opengl"`` the result is the rotation a Blender camera object needs.
    """
    return quat_to_matrix(quat_wxyz) @ rotation_from_raisim(convention)


def camera_to_world(position, quat_wxyz, convention: str = "opencv") -> np.ndarray:
    """Camera-to-world extrinsics ``(..., 4, 4)`` (metres) from a RaiSim pose: ``p_world = T @ [p_cam, 1]``."""
    rot = camera_rotation(quat_wxyz, convention)
    position = np.asarray(position, dtype=np.float64)
    batch = np.broadcast_shapes(rot.shape[:-2], position.shape[:-1])
    t = np.zeros(batch + (4, 4))
    t[..., :3, :3] = rot
    t[..., :3, 3] = position
    t[..., 3, 3] = 1.0
    return t


def world_to_camera(position, quat_wxyz, convention: str = "opencv") -> np.ndarray:
    """World-to-camera (view) matrices ``(..., 4, 4)``: the inverse of :func:`camera_to_world`."""
    return invert_transform(camera_to_world(position, quat_wxyz, convention))


# -- record tuples: poses as (position, quaternion) of plain floats, for the format writers ------------------

IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)
ORIGIN: Vec3 = (0.0, 0.0, 0.0)


def _clean(values: Iterable[float]) -> tuple:
    """Floats with -0.0 turned into 0.0 (so written files do not show ``-0``)."""
    return tuple([float(v) + 0.0 for v in values])


# The record-tuple helpers work on one pose at a time, called per record by the readers (10k CoppeliaSim
# shapes spent ~9 CPU-s in numpy calls on 4-element arrays). So they use plain float arithmetic in the
# same operation order as the array functions above (IEEE doubles either way: bit-identical results,
# tests/unit/base/test_spatial.py compares them); only the matrix products stay numpy's, whose BLAS
# summation order plain Python cannot reproduce.

def _unit4(q) -> Quat:
    """``quat_normalize`` of one quaternion, as plain floats (the same sum order: bit-identical)."""
    w, x, y, z = (float(v) for v in q)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if n > 0:
        return w / n, x / n, y / n, z / n
    if n == 0:
        return IDENTITY
    return w / 1.0, x / 1.0, y / 1.0, z / 1.0  # NaN length: quat_normalize divides by 1 and keeps it


def _mul4(a, b) -> Quat:
    aw, ax, ay, az = (float(v) for v in a)
    bw, bx, by, bz = (float(v) for v in b)
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def _matrix_rows(q) -> list:
    """``quat_to_matrix`` of one quaternion as nested lists of floats (bit-identical)."""
    w, x, y, z = _unit4(q)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    return [[1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)],
            [2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)],
            [2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)]]


def _quat_of_rows(m) -> Quat:
    """``matrix_to_quat`` of one 3x3 matrix (nested sequences of floats): Shepperd's method, the same
    operations and pivot choice (``argmax``: the first NaN, else the first largest) as the array form."""
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = m
    sx, sy, sz = m21 - m12, m02 - m20, m10 - m01
    pxy, pxz, pyz = m01 + m10, m02 + m20, m12 + m21
    pivots = (1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22)
    nan = [k for k, p in enumerate(pivots) if p != p]
    k = nan[0] if nan else pivots.index(max(pivots))  # max() and index(): the first of equal pivots
    pw, px, py, pz = pivots
    q = ((pw, sx, sy, sz), (sx, px, pxy, pxz), (sy, pxy, py, pyz), (sz, pxz, pyz, pz))[k]
    q = _unit4(q)
    if q[0] < 0:
        q = (q[0] * -1.0, q[1] * -1.0, q[2] * -1.0, q[3] * -1.0)
    return q


def record_quat(q: Sequence[float]) -> Quat:
    """A record's quaternion as a clean unit tuple (zero -> identity)."""
    return _clean(_unit4(q))


def record_quat_mul(a: Sequence[float], b: Sequence[float]) -> Quat:
    return _clean(_mul4(a, b))


def record_rotate(q: Sequence[float], v: Sequence[float]) -> Vec3:
    """``v`` turned by the (normalised) record quaternion ``q``, as a clean tuple."""
    return _clean(np.array(_matrix_rows(q)) @ np.asarray(v, dtype=float))


def record_quat_from_matrix(m) -> Quat:
    """Rotation matrix -> clean unit quaternion tuple with ``w >= 0``."""
    m = np.asarray(m, dtype=np.float64)
    if m.shape != (3, 3):
        return _clean(matrix_to_quat(m))  # its error names the shape
    return _clean(_quat_of_rows(m.tolist()))


def record_quat_from_rpy(roll: float, pitch: float, yaw: float) -> Quat:
    return record_quat_from_matrix(rpy_to_matrix((roll, pitch, yaw)))


def record_rpy(q: Sequence[float]) -> Vec3:
    return matrix_to_rpy(_matrix_rows(q))


def record_quat_from_coppelia_euler(alpha: float, beta: float, gamma: float, degrees: bool = True) -> Quat:
    if degrees:
        alpha, beta, gamma = (math.radians(v) for v in (alpha, beta, gamma))
    return record_quat_from_matrix(coppelia_euler_to_matrix(alpha, beta, gamma))


def record_coppelia_euler(q: Sequence[float], degrees: bool = True) -> Vec3:
    angles = matrix_to_coppelia_euler(_matrix_rows(q))
    return _clean(math.degrees(a) for a in angles) if degrees else angles


def compose(a: Pose, b: Pose) -> Pose:
    """The pose ``b`` (given in frame ``a``) in the frame ``a`` is given in."""
    (pa, qa), (pb, qb) = a, b
    # Most poses a reader composes have a parent at the identity rotation (top-level objects) or no local
    # offset (a shape's geometry frame): there the matrix product is exact, so it is skipped (a numpy call
    # per record was most of composing). Bit-identical to the product: R = I (off-diagonal zeros) turns a
    # finite v into v; a finite R turns the zero vector into signed zeros, which _clean makes +0.0.
    finite = _finite3(pb)
    if finite and qa[0] == 1.0 and qa[1] == 0.0 and qa[2] == 0.0 and qa[3] == 0.0:
        rotated = pb
    elif pb[0] == 0.0 and pb[1] == 0.0 and pb[2] == 0.0 and _finite4(qa):
        rotated = ORIGIN
    else:
        rotated = record_rotate(qa, pb)
    return _clean(p + r for p, r in zip(pa, rotated)), record_quat(record_quat_mul(qa, qb))


def _compose_product(a: Pose, b: Pose) -> Pose:
    """``compose`` always through the matrix product (the reference its shortcuts are tested against)."""
    (pa, qa), (pb, qb) = a, b
    rotated = record_rotate(qa, pb)
    return _clean(p + r for p, r in zip(pa, rotated)), record_quat(record_quat_mul(qa, qb))


def _finite3(v) -> bool:
    x, y, z = v
    return math.isfinite(x) and math.isfinite(y) and math.isfinite(z)


def _finite4(q) -> bool:
    w, x, y, z = q
    return math.isfinite(w) and math.isfinite(x) and math.isfinite(y) and math.isfinite(z)


def inverse(a: Pose) -> Pose:
    p, q = a
    w, x, y, z = record_quat(q)
    qi = _clean((w * 1.0, x * -1.0, y * -1.0, z * -1.0))  # quat_conjugate's multiply, bit for bit
    return _clean(-v for v in record_rotate(qi, p)), qi


def relative(parent: Pose, child: Pose) -> Pose:
    """``child`` (world) expressed in the frame of ``parent`` (world)."""
    return compose(inverse(parent), child)


def quat_look_at(eye: Sequence[float], target: Sequence[float]) -> Quat:
    """Orientation of a RaiSim camera at ``eye`` looking at ``target`` (local +x forward, +z up)."""
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
    return record_quat_from_matrix(np.column_stack([x, y, z]))


def quat_from_z_to(direction: Sequence[float]) -> Quat:
    """The shortest rotation that turns local +z onto ``direction`` (identity for a zero direction)."""
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
    return record_quat((1.0 + c, *axis))


def nearly_equal(a: Sequence[float], b: Sequence[float], tol: float = 1e-9) -> bool:
    """Whether two sequences agree to a relative-or-absolute tolerance."""
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= tol * max(1.0, abs(float(x))) for x, y in zip(a, b))


def same_rotation(a: Sequence[float], b: Sequence[float], tol: float = 1e-9) -> bool:
    """``q`` and ``-q`` are the same rotation; a zero quaternion is the identity."""
    qa, qb = quat_normalize(a), quat_normalize(b)
    return abs(abs(float(np.dot(qa, qb))) - 1.0) <= tol
