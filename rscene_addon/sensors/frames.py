"""Quaternions and the fixed rotations between camera frame conventions.

Quaternions are ``(w, x, y, z)`` arrays of shape ``(4,)`` or batches ``(..., 4)``; every function
broadcasts over leading axes. A quaternion ``q`` (body-to-world) maps a vector given in body
coordinates to world coordinates: ``v_world = R(q) @ v_body``.

Camera frames (all right-handed; the columns below give each camera axis in RaiSim camera axes):

===========  ===========  ===========  ===========
convention   forward      right        up
===========  ===========  ===========  ===========
``raisim``   ``+x``       ``-y``       ``+z``
``opencv``   ``+z``       ``+x``       ``-y``
``opengl``   ``-z``       ``+x``       ``+y``   (Blender camera objects)
===========  ===========  ===========  ===========

``R_RAISIM_FROM_OPENCV @ v_opencv`` gives the same vector in RaiSim camera coordinates; the
``R_A_FROM_B`` matrices compose as ``R_A_FROM_C = R_A_FROM_B @ R_B_FROM_C``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CONVENTIONS",
    "R_OPENCV_FROM_OPENGL",
    "R_RAISIM_FROM_OPENCV",
    "R_RAISIM_FROM_OPENGL",
    "camera_rotation",
    "camera_to_world",
    "invert_transform",
    "matrix_to_quat",
    "quat_conjugate",
    "quat_from_axis_angle",
    "quat_multiply",
    "quat_normalize",
    "quat_rotate",
    "quat_slerp",
    "quat_to_matrix",
    "rotation_from_raisim",
    "world_to_camera",
]


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


# Columns: OpenCV x (right), y (down), z (forward) written in RaiSim camera axes.
R_RAISIM_FROM_OPENCV = _frozen([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
# Columns: OpenGL x (right), y (up), z (backward) written in RaiSim camera axes.
R_RAISIM_FROM_OPENGL = _frozen([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
# OpenCV and OpenGL share +x and flip y and z.
R_OPENCV_FROM_OPENGL = _frozen(np.diag([1.0, -1.0, -1.0]))

_FROM_RAISIM = {
    "raisim": _frozen(np.eye(3)),
    "opencv": R_RAISIM_FROM_OPENCV,
    "opengl": R_RAISIM_FROM_OPENGL,
}
CONVENTIONS = tuple(_FROM_RAISIM)


def _as_quat(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    if q.shape[-1:] != (4,):
        raise ValueError(f"quaternions need a last axis of length 4 (w, x, y, z), got shape {q.shape}")
    return q


def quat_normalize(q) -> np.ndarray:
    """Unit quaternions ``(..., 4)``; raises on a zero quaternion (no rotation can be inferred)."""
    q = _as_quat(q)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0.0) or not np.all(np.isfinite(n)):
        raise ValueError("cannot normalize a zero or non-finite quaternion")
    return q / n


def quat_conjugate(q) -> np.ndarray:
    """Conjugate ``(..., 4)``; the inverse rotation for unit quaternions."""
    q = _as_quat(q)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product ``a * b`` of ``(..., 4)`` arrays: apply ``b`` first, then ``a``."""
    a, b = _as_quat(a), _as_quat(b)
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_from_axis_angle(axis, angle) -> np.ndarray:
    """Quaternion ``(..., 4)`` rotating by ``angle`` (rad, ``(...)``) about ``axis`` (``(..., 3)``)."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of quaternions ``(..., 4)`` (normalized first)."""
    w, x, y, z = np.moveaxis(quat_normalize(q), -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=-2,
    )


def matrix_to_quat(m) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` with ``w >= 0`` from rotation matrices ``(..., 3, 3)``.

    Shepperd's method: of the four candidate rows ``4 q_k q`` the one with the largest pivot
    ``4 q_k^2`` is normalized, so no result comes from a small, cancellation-prone pivot.
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


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors ``v`` (``(..., 3)``) by quaternions ``q`` (``(..., 4)``); shapes broadcast."""
    q = quat_normalize(q)
    v = np.asarray(v, dtype=np.float64)
    u, w = q[..., 1:], q[..., :1]
    # v' = v + 2w (u x v) + 2 u x (u x v): two cross products, no matrix build.
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_slerp(a, b, s) -> np.ndarray:
    """Spherical interpolation from ``a`` to ``b`` (``(..., 4)``) at fraction ``s`` (``(...)``).

    Takes the shorter arc (``b`` is negated when ``a . b < 0``); falls back to normalized linear
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
    """Camera-to-world extrinsics ``(..., 4, 4)`` (metres) from a RaiSim pose.

    ``position`` (``(..., 3)``, m) and ``quat_wxyz`` (``(..., 4)``) are the RaiSim camera pose in
    the world; the returned matrix maps homogeneous points from the ``convention`` camera frame to
    the world: ``p_world = T @ [p_cam, 1]``.
    """
    rot = camera_rotation(quat_wxyz, convention)
    position = np.asarray(position, dtype=np.float64)
    batch = np.broadcast_shapes(rot.shape[:-2], position.shape[:-1])
    t = np.zeros(batch + (4, 4))
    t[..., :3, :3] = rot
    t[..., :3, 3] = position
    t[..., 3, 3] = 1.0
    return t


def invert_transform(t) -> np.ndarray:
    """Inverse of rigid transforms ``(..., 4, 4)`` using ``R^T`` (exact for rotations)."""
    t = np.asarray(t, dtype=np.float64)
    rt = np.swapaxes(t[..., :3, :3], -1, -2)
    out = np.zeros_like(t)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -(rt @ t[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def world_to_camera(position, quat_wxyz, convention: str = "opencv") -> np.ndarray:
    """World-to-camera (view) matrices ``(..., 4, 4)``: the inverse of :func:`camera_to_world`."""
    return invert_transform(camera_to_world(position, quat_wxyz, convention))
