"""Small rigid-transform helpers (numpy): rpy, quaternions (w, x, y, z), axis-angle, 4x4 matrices."""
from __future__ import annotations

import numpy as np

# one matrix -> quaternion conversion for every pure layer (Shepperd, w >= 0, batched)
from ..sensors.frames import matrix_to_quat  # noqa: F401

__all__ = ["axis_angle_matrix", "homogeneous", "log_rotation", "matrix_to_quat", "quat_multiply",
           "quat_normalize", "quat_to_matrix", "rpy_to_matrix", "skew", "translation"]


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF fixed-axis roll, pitch, yaw: R = Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def quat_normalize(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    safe = np.where(n > 0, n, 1.0)
    out = q / safe
    if np.ndim(out) == 1:
        return out if n[0] > 0 else np.array([1.0, 0.0, 0.0, 0.0])
    out[(n[..., 0] == 0)] = (1.0, 0.0, 0.0, 0.0)
    return out


def quat_to_matrix(q) -> np.ndarray:
    """(..., 4) quaternions w, x, y, z (normalised here) -> (..., 3, 3) rotation matrices."""
    w, x, y, z = np.moveaxis(quat_normalize(q), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def quat_multiply(a, b) -> np.ndarray:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def axis_angle_matrix(axis, angle) -> np.ndarray:
    """Rotation about a unit ``axis`` (3,) by ``angle`` (scalar or (N,)) -> (3, 3) or (N, 3, 3)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    c, s = np.cos(angle)[..., None, None], np.sin(angle)[..., None, None]
    k = skew(axis)
    return np.eye(3) + s * k + (1 - c) * (k @ k)


def skew(v) -> np.ndarray:
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


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


def homogeneous(rotation=None, translation_=None) -> np.ndarray:
    m = np.eye(4)
    if rotation is not None:
        m[:3, :3] = rotation
    if translation_ is not None:
        m[:3, 3] = translation_
    return m


def translation(xyz) -> np.ndarray:
    return homogeneous(None, xyz)
