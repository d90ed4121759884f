"""Spatial (6D) vector algebra for the articulated-body dynamics (Featherstone's notation, numpy).

Spatial vectors are ``[angular; linear]`` in world-origin Plücker coordinates: ``motion_cross`` is
``v x m``, ``force_cross`` is ``v x* f``, ``spatial_inertia`` the 6x6 inertia of a body about the world
origin. The 3-vector cross product here takes plain floats: ``np.cross`` costs several times more on
vectors this small, and the recursive algorithms call it per body per step.
"""
from __future__ import annotations

import numpy as np

from ..base.spatial import log_rotation, quat_multiply, quat_normalize, quat_to_matrix, skew

__all__ = ["cross3", "force_cross", "motion_cross", "pose_matrix", "quat_error", "spatial_inertia"]


def cross3(a, b) -> np.ndarray:
    """a x b of two 3-vectors (np.cross costs several times more on vectors this small)."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def motion_cross(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Spatial motion cross product v x m (v, m: [angular; linear])."""
    w, vl = v[:3], v[3:]
    return np.concatenate([cross3(w, m[:3]), cross3(w, m[3:]) + cross3(vl, m[:3])])


def force_cross(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Spatial force cross product v x* f."""
    w, vl = v[:3], v[3:]
    return np.concatenate([cross3(w, f[:3]) + cross3(vl, f[3:]), cross3(w, f[3:])])


def spatial_inertia(mass: float, com: np.ndarray, inertia_c: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia at the world origin of a body: COM ``com``, inertia about it (world axes)."""
    cx = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_c + mass * cx @ cx.T
    out[:3, 3:] = mass * cx
    out[3:, :3] = mass * cx.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def pose_matrix(pos, quat) -> np.ndarray:
    """4x4 transform of a position and a (w, x, y, z) quaternion (normalised; zero -> identity)."""
    t = np.eye(4)
    t[:3, :3] = quat_to_matrix(np.asarray(quat, dtype=float))
    t[:3, 3] = pos
    return t


def quat_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vector r with exp(r) * current = target (left/parent-frame convention)."""
    tq = quat_normalize(target)
    cq = quat_normalize(current)
    conj = np.array([cq[0], -cq[1], -cq[2], -cq[3]])
    d = quat_multiply(tq, conj)
    return log_rotation(quat_to_matrix(d))
