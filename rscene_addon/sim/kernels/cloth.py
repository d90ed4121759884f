"""The cloth (XPBD) substeps of one world step, compiled: ``Cloth.step``'s numpy loop (the reference) in one
call, the same formulas in the same order.

numpy solves one colour of constraints at once; a colour shares no free vertex, so solving its constraints
one after another in colour order changes the same vertices by the same amounts: the caller passes each
constraint list already sorted by colour. Collisions: the vertices as spheres of radius ``r`` against each
candidate geom in turn (signed distances of ``particles_sdf``, every type but height fields), skipped while
the cloth's bounds miss the geom's, then friction against the substep's motion.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .particles_sdf import geom_distance

_PLANE = 5


@njit(cache=True)
def _project(x, w, pairs, rest, alpha, lam):
    """One Gauss-Seidel sweep of distance constraints pairs (C, 2) with rest lengths (C,), compliance
    ``alpha`` (already / h^2) and multipliers lam (C,) updated in place."""
    for c in range(pairs.shape[0]):
        a, b = pairs[c, 0], pairs[c, 1]
        d0, d1, d2 = x[a, 0] - x[b, 0], x[a, 1] - x[b, 1], x[a, 2] - x[b, 2]
        L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        Lc = max(L, 1e-12)
        n0, n1, n2 = d0 / Lc, d1 / Lc, d2 / Lc
        wa, wb = w[a], w[b]
        dl = (-(L - rest[c]) - alpha * lam[c]) / max(wa + wb + alpha, 1e-300)
        lam[c] += dl
        sa, sb = wa * dl, wb * dl
        x[a, 0] += sa * n0
        x[a, 1] += sa * n1
        x[a, 2] += sa * n2
        x[b, 0] -= sb * n0
        x[b, 1] -= sb * n1
        x[b, 2] -= sb * n2


@njit(cache=True)
def _collide(x, x_prev, free_idx, r, mu, geoms, g_lo, g_hi, g_type, g_pos, g_rot, g_size, p_start, p_normals,
             p_offsets, nrm):
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for i in range(x.shape[0]):
        lo0, lo1, lo2 = min(lo0, x[i, 0]), min(lo1, x[i, 1]), min(lo2, x[i, 2])
        hi0, hi1, hi2 = max(hi0, x[i, 0]), max(hi1, x[i, 1]), max(hi2, x[i, 2])
    lo0, lo1, lo2, hi0, hi1, hi2 = lo0 - r, lo1 - r, lo2 - r, hi0 + r, hi1 + r, hi2 + r
    for k in range(geoms.shape[0]):
        g = geoms[k]
        t = g_type[g]
        if t != _PLANE and (g_lo[k, 0] > hi0 or g_lo[k, 1] > hi1 or g_lo[k, 2] > hi2
                            or g_hi[k, 0] < lo0 or g_hi[k, 1] < lo1 or g_hi[k, 2] < lo2):
            continue
        for q in range(free_idx.shape[0]):
            i = free_idx[q]
            sd = geom_distance(t, g_pos, g_rot, g_size, g, p_start, p_normals, p_offsets, x[i, 0], x[i, 1],
                               x[i, 2], nrm, 0)
            pen = r - sd
            if not pen > 0.0:
                continue
            n0, n1, n2 = nrm[0, 0], nrm[0, 1], nrm[0, 2]
            x[i, 0] += n0 * pen
            x[i, 1] += n1 * pen
            x[i, 2] += n2 * pen
            # friction: cancel tangential motion up to mu * penetration
            d0, d1, d2 = x[i, 0] - x_prev[i, 0], x[i, 1] - x_prev[i, 1], x[i, 2] - x_prev[i, 2]
            dn = d0 * n0 + d1 * n1 + d2 * n2
            t0, t1, t2 = d0 - dn * n0, d1 - dn * n1, d2 - dn * n2
            lt = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
            s = min(mu * pen / max(lt, 1e-300), 1.0)
            x[i, 0] -= t0 * s
            x[i, 1] -= t1 * s
            x[i, 2] -= t2 * s


@njit(cache=True)
def substeps(x, v, w, free_idx, edges, rest, bends, bend_rest, gravity, n_sub, iterations, h, a_d, a_b, damp,
             r, mu, geoms, g_lo, g_hi, g_type, g_pos, g_rot, g_size, p_start, p_normals, p_offsets):
    """Advance cloth vertices x, v (V, 3) by ``n_sub`` substeps of ``h``: inverse masses w (V,), the free
    vertices free_idx (F,); edges (E, 2) / bends (B, 2) sorted by colour with rest lengths, their
    compliances a_d, a_b (/ h^2); per-substep velocity factor ``damp``. Collisions with geoms (K,) whose
    world bounds are g_lo, g_hi (K, 3); per geom (G,): type, world pose, size, convex faces."""
    x_prev = np.empty_like(x)
    lam_d = np.empty(edges.shape[0])
    lam_b = np.empty(bends.shape[0])
    nrm = np.empty((1, 3))
    g0, g1, g2 = gravity[0] * h, gravity[1] * h, gravity[2] * h
    for _ in range(n_sub):
        x_prev[:] = x
        for q in range(free_idx.shape[0]):
            i = free_idx[q]
            v[i, 0] = (v[i, 0] + g0) * damp
            v[i, 1] = (v[i, 1] + g1) * damp
            v[i, 2] = (v[i, 2] + g2) * damp
            x[i, 0] += v[i, 0] * h
            x[i, 1] += v[i, 1] * h
            x[i, 2] += v[i, 2] * h
        lam_d[:] = 0.0
        lam_b[:] = 0.0
        for _ in range(iterations):
            _project(x, w, edges, rest, a_d, lam_d)
            _project(x, w, bends, bend_rest, a_b, lam_b)
        if geoms.shape[0]:
            _collide(x, x_prev, free_idx, r, mu, geoms, g_lo, g_hi, g_type, g_pos, g_rot, g_size, p_start,
                     p_normals, p_offsets, nrm)
        for q in range(free_idx.shape[0]):
            i = free_idx[q]
            v[i, 0] = (x[i, 0] - x_prev[i, 0]) / h
            v[i, 1] = (x[i, 1] - x_prev[i, 1]) / h
            v[i, 2] = (x[i, 2] - x_prev[i, 2]) / h


def warm_up() -> None:
    """Compile (or load from the cache) on a two-vertex cloth hitting a plane."""
    x = np.array([[0.0, 0.0, 0.005], [0.1, 0.0, 0.005]])
    v = np.zeros((2, 3))
    w = np.array([1.0, 0.0])
    pair, none = np.array([[0, 1]], dtype=np.int64), np.zeros((0, 2), dtype=np.int64)
    rot = np.eye(3).reshape(1, 3, 3)
    substeps(x, v, w, np.array([0], dtype=np.int64), pair, np.array([0.1]), none, np.zeros(0),
             np.array([0.0, 0.0, -9.81]), 1, 1, 0.01, 0.0, 0.0, 1.0, 0.01, 0.5, np.array([0], dtype=np.int64),
             np.zeros((1, 3)), np.zeros((1, 3)), np.array([_PLANE], dtype=np.int64), np.zeros((1, 3)), rot,
             np.zeros((1, 3)), np.zeros(2, dtype=np.int64), np.zeros((0, 3)), np.zeros(0))
