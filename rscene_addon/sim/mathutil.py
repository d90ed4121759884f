"""Vectorised rigid-body math: quaternions ``(w, x, y, z)``, rotation matrices, tangent bases.

Every function broadcasts over leading axes: a quaternion batch has shape ``(..., 4)``, vectors
``(..., 3)`` and matrices ``(..., 3, 3)``. A quaternion ``q`` maps body coordinates to world
coordinates: ``v_world = R(q) @ v_body``.
"""
from __future__ import annotations

import numpy as np

# one matrix -> quaternion conversion for every pure layer (Shepperd, w >= 0, batched)
from ..sensors.frames import matrix_to_quat  # noqa: F401

__all__ = [
    "quat_normalize", "quat_multiply", "quat_conjugate", "quat_rotate", "quat_rotate_inv", "quat_to_matrix",
    "matrix_to_quat", "quat_integrate", "quat_from_axis_angle", "quat_angular_velocity", "tangent_basis",
    "cross", "normalize", "norm", "IDENTITY_QUAT",
]

IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])


def normalize(v: np.ndarray, eps: float = 1e-300) -> np.ndarray:
    """Unit vectors along the last axis (zero vectors stay zero)."""
    v = np.asarray(v, dtype=np.float64)
    n = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    return v / np.maximum(n, eps)


def norm(v: np.ndarray) -> np.ndarray:
    """Lengths over the last axis: ``np.linalg.norm(v, axis=-1)`` (the same sum and square root) without
    its Python-level overhead, which dominates for the short arrays of one step."""
    return np.sqrt(np.add.reduce(v * v, axis=-1))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis (faster than ``np.cross`` for small batches)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions; a zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    out = q / np.where(n > 0, n, 1.0)
    if np.any(n == 0):
        out = np.where(n > 0, out, IDENTITY_QUAT)
    return out


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``). Shapes (..., 4)."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ), axis=-1)


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.asarray(q, dtype=np.float64) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` (..., 3) by unit quaternions ``q`` (..., 4)."""
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def quat_rotate_inv(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors by the inverse of ``q`` (world to body)."""
    w = q[..., :1]
    u = -q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions to (..., 3, 3) rotation matrices."""
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


def quat_from_axis_angle(axis, angle) -> np.ndarray:
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


def tangent_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents (..., 3) orthogonal to unit normals ``n`` (Frisvad / Duff et al. 2017)."""
    nx, ny, nz = n[..., 0], n[..., 1], n[..., 2]
    sign = np.where(nz >= 0, 1.0, -1.0)
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    t1 = np.stack((1.0 + sign * nx * nx * a, sign * b, -sign * nx), axis=-1)
    t2 = np.stack((b, sign + ny * ny * a, -ny), axis=-1)
    return t1, t2
