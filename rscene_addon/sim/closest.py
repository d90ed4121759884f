"""Vectorised closest-point queries (Ericson, *Real-Time Collision Detection*, ch. 5)."""
from __future__ import annotations

import numpy as np


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def closest_point_triangles(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Closest point to ``p`` on triangles (a, b, c); all (..., 3), broadcast. Returns (..., 3)."""
    ab, ac = b - a, c - a
    ap, bp, cp = p - a, p - b, p - c
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v = np.where(denom != 0, vb / np.where(denom != 0, denom, 1), 0.0)
        w = np.where(denom != 0, vc / np.where(denom != 0, denom, 1), 0.0)
        interior = a + ab * v[..., None] + ac * w[..., None]
        t_ab = d1 / np.where(d1 - d3 != 0, d1 - d3, 1)
        t_ac = d2 / np.where(d2 - d6 != 0, d2 - d6, 1)
        e1, e2 = d4 - d3, d5 - d6
        t_bc = e1 / np.where(e1 + e2 != 0, e1 + e2, 1)
    conds = [
        (d1 <= 0) & (d2 <= 0),
        (d3 >= 0) & (d4 <= d3),
        (vc <= 0) & (d1 >= 0) & (d3 <= 0),
        (d6 >= 0) & (d5 <= d6),
        (vb <= 0) & (d2 >= 0) & (d6 <= 0),
        (va <= 0) & (e1 >= 0) & (e2 >= 0),
    ]
    shape = np.broadcast(p, a, b, c).shape
    choices = [np.broadcast_to(a, shape), np.broadcast_to(b, shape), a + ab * t_ab[..., None],
               np.broadcast_to(c, shape), a + ac * t_ac[..., None], b + (c - b) * t_bc[..., None]]
    cond3 = [np.broadcast_to(cnd[..., None], shape) for cnd in conds]
    return np.select(cond3, choices, default=interior)


def closest_segment_segment(p1, q1, p2, q2, eps: float = 1e-12):
    """Closest points between segments p1-q1 and p2-q2 (..., 3). Returns (c1, c2, s, t)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(d1, r), _dot(d1, d2)
    denom = a * e - b * b
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(denom > eps * np.maximum(a * e, eps), np.clip((b * f - c * e) / denom, 0.0, 1.0), 0.0)
        t = np.where(e > eps, (b * s + f) / np.where(e > eps, e, 1.0), 0.0)
        s = np.where(t < 0, np.clip(-c / np.where(a > eps, a, 1.0), 0.0, 1.0), s)
        s = np.where(t > 1, np.clip((b - c) / np.where(a > eps, a, 1.0), 0.0, 1.0), s)
        t = np.clip(t, 0.0, 1.0)
        # degenerate segments
        first_point = a <= eps
        second_point = e <= eps
        s = np.where(first_point, 0.0, s)
        t = np.where(first_point & ~second_point, np.clip(f / np.where(e > eps, e, 1.0), 0.0, 1.0), t)
        s = np.where(second_point & ~first_point, np.clip(-c / np.where(a > eps, a, 1.0), 0.0, 1.0), s)
        t = np.where(second_point, 0.0, t)
    return p1 + d1 * s[..., None], p2 + d2 * t[..., None], s, t


def closest_point_segment(p, a, b):
    """Closest point to ``p`` on segments a-b (..., 3)."""
    ab = b - a
    denom = _dot(ab, ab)
    t = np.clip(_dot(p - a, ab) / np.where(denom > 0, denom, 1.0), 0.0, 1.0)
    return a + ab * t[..., None], t


def segment_triangles(a: np.ndarray, b: np.ndarray, tris: np.ndarray):
    """Closest points between one segment a-b (3,) and triangles (T, 3, 3).

    Returns (point on segment (T, 3), point on triangle (T, 3), distance (T,), pierced (T,)) where a
    pierced triangle is crossed by the segment (distance 0).
    """
    A, B, C = tris[:, 0], tris[:, 1], tris[:, 2]
    cands_s, cands_q = [], []
    for end in (a, b):
        q = closest_point_triangles(end[None, :], A, B, C)
        cands_s.append(np.broadcast_to(end, q.shape))
        cands_q.append(q)
    for e0, e1 in ((A, B), (B, C), (C, A)):
        a_, b_ = np.broadcast_to(a, e0.shape), np.broadcast_to(b, e0.shape)
        s_pt, q_pt, _, _ = closest_segment_segment(a_, b_, e0, e1)
        cands_s.append(s_pt)
        cands_q.append(q_pt)
    S = np.stack(cands_s)  # (5, T, 3)
    Q = np.stack(cands_q)
    d = np.linalg.norm(S - Q, axis=-1)
    k = np.argmin(d, axis=0)
    idx = np.arange(len(tris))
    s_best, q_best, dist = S[k, idx], Q[k, idx], d[k, idx]
    # segment crossing the triangle
    n = np.cross(B - A, C - A)
    da = np.einsum("ij,ij->i", n, a - A)
    db = np.einsum("ij,ij->i", n, b - A)
    cross_plane = (da * db) < 0
    pierced = np.zeros(len(tris), dtype=bool)
    if cross_plane.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            t = da / (da - db)
        x = a + (b - a) * t[:, None]
        inside = _point_in_triangle(x, A, B, C, n)
        pierced = cross_plane & inside
        s_best = np.where(pierced[:, None], x, s_best)
        q_best = np.where(pierced[:, None], x, q_best)
        dist = np.where(pierced, 0.0, dist)
    return s_best, q_best, dist, pierced


def _point_in_triangle(x, A, B, C, n):
    c0 = np.einsum("ij,ij->i", np.cross(B - A, x - A), n)
    c1 = np.einsum("ij,ij->i", np.cross(C - B, x - B), n)
    c2 = np.einsum("ij,ij->i", np.cross(A - C, x - C), n)
    return (c0 >= 0) & (c1 >= 0) & (c2 >= 0)
