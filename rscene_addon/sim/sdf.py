"""Signed distances from points to rigid geoms (for particles and cloth vertices), vectorised.

``geom_distance(model, frames, g, x)`` returns (distance (K,), outward unit normal (K, 3), valid (K,)) for
points x (K, 3) against geom g in its world pose. Distances are exact for planes, spheres, boxes,
capsules and cylinders; for hulls they are the largest face-plane distance (exact inside and in front of
faces, a lower bound near edges); for height fields the distance to the local triangle's plane.
"""
from __future__ import annotations

import numpy as np

from .geometry import BOX, CAPSULE, CONVEX, CYLINDER, HEIGHTFIELD, PLANE, SPHERE
from .mathutil import cross


def geom_distance(m, fr, g: int, x: np.ndarray):
    t = int(m.geom_type[g])
    c, R = fr.pos[g], fr.rot[g]
    K = len(x)
    valid = np.ones(K, dtype=bool)
    if t == PLANE:
        n = np.broadcast_to(R[:, 2], (K, 3))
        return x @ R[:, 2] - float(R[:, 2] @ c), n, valid
    if t == SPHERE:
        d = x - c
        dist = np.linalg.norm(d, axis=1)
        n = np.where(dist[:, None] > 1e-12, d / np.maximum(dist, 1e-300)[:, None], np.array([0.0, 0.0, 1.0]))
        return dist - m.geom_size[g, 0], n, valid
    if t == HEIGHTFIELD:
        hf = m.geom_hfield[g]
        z, n, inside = hf.height_normal(x[:, 0], x[:, 1])
        return (x[:, 2] - z) * n[:, 2], n, inside
    xl = (x - c) @ R  # R^T (x - c)
    if t == BOX:
        h = m.geom_size[g]
        q = np.abs(xl) - h
        qp = np.maximum(q, 0.0)
        out_len = np.linalg.norm(qp, axis=1)
        qmax = q.max(axis=1)
        k = np.argmax(q, axis=1)
        n_in = np.zeros_like(xl)
        n_in[np.arange(K), k] = np.sign(xl[np.arange(K), k]) + (xl[np.arange(K), k] == 0)
        n_out = np.sign(xl) * qp / np.maximum(out_len, 1e-300)[:, None]
        outside = out_len > 0
        nl = np.where(outside[:, None], n_out, n_in)
        return np.where(outside, out_len, qmax), nl @ R.T, valid
    if t == CAPSULE:
        r, hh = m.geom_size[g, 0], m.geom_size[g, 1]
        zc = np.clip(xl[:, 2], -hh, hh)
        d = xl - np.column_stack((np.zeros(K), np.zeros(K), zc))
        dist = np.linalg.norm(d, axis=1)
        nl = np.where(dist[:, None] > 1e-12, d / np.maximum(dist, 1e-300)[:, None], np.array([1.0, 0.0, 0.0]))
        return dist - r, nl @ R.T, valid
    if t == CYLINDER:
        r, hh = m.geom_size[g, 0], m.geom_size[g, 1]
        rho = np.hypot(xl[:, 0], xl[:, 1])
        radial = np.column_stack((xl[:, 0], xl[:, 1], np.zeros(K))) / np.maximum(rho, 1e-300)[:, None]
        er = np.where(rho[:, None] > 1e-12, radial, np.array([1.0, 0.0, 0.0]))
        dr, dz = rho - r, np.abs(xl[:, 2]) - hh
        ez = np.column_stack((np.zeros(K), np.zeros(K), np.sign(xl[:, 2]) + (xl[:, 2] == 0)))
        out = np.hypot(np.maximum(dr, 0), np.maximum(dz, 0))
        outside = out > 0
        n_out = (er * np.maximum(dr, 0)[:, None] + ez * np.maximum(dz, 0)[:, None])
        n_out = n_out / np.maximum(out, 1e-300)[:, None]
        n_in = np.where((dr > dz)[:, None], er, ez)
        nl = np.where(outside[:, None], n_out, n_in)
        return np.where(outside, out, np.maximum(dr, dz)), nl @ R.T, valid
    if t == CONVEX:
        poly = m.geom_poly[g]
        pd = xl @ poly.normals.T - poly.offsets
        f = np.argmax(pd, axis=1)
        return pd[np.arange(K), f], poly.normals[f] @ R.T, valid
    return np.full(K, np.inf), np.zeros((K, 3)), np.zeros(K, dtype=bool)


def geom_point_velocity(state, body: int, x: np.ndarray) -> np.ndarray:
    """Velocity (K, 3) of body points at world positions x."""
    return state.linear_velocity[body] + cross(state.angular_velocity[body], x - state.position[body])
