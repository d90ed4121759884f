"""Signed distance and outward normal from one point to one rigid geom, compiled: ``sdf.geom_distance``
point by point, the same formulas in the same order, for every type but height fields (the granular
substeps take those from ``terrain.height_normal``; the cloth step keeps numpy for a step that meets one).

Types as ``geometry``: 0 sphere, 1 box, 2 capsule, 3 cylinder, 4 convex (its faces' planes: ``p_start``
(G + 1,) indexes the rows of ``p_normals`` (F, 3) and ``p_offsets`` (F,) that belong to each geom), 5 plane.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_SPHERE, _BOX, _CAPSULE, _CYLINDER, _CONVEX, _PLANE = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def _sign(a):
    return 1.0 if a > 0.0 else (-1.0 if a < 0.0 else 0.0)


@njit(cache=True, inline="always")
def geom_distance(t, pos, rot, sizes, g, p_start, p_normals, p_offsets, px, py, pz, out, k):
    """Signed distance of point (px, py, pz) to geom ``g`` of type ``t`` (centres pos (G, 3), rotations rot
    (G, 3, 3), sizes (G, 3)); its outward unit normal written to row k of out (K, 3). Returns inf for a type
    it does not handle. (Inlined, arrays by index: views per point cost a reference count each.)"""
    if t == _PLANE:
        out[k, 0], out[k, 1], out[k, 2] = rot[g, 0, 2], rot[g, 1, 2], rot[g, 2, 2]
        return (px * rot[g, 0, 2] + py * rot[g, 1, 2] + pz * rot[g, 2, 2]) - (rot[g, 0, 2] * pos[g, 0] + rot[g, 1, 2] * pos[g, 1] + rot[g, 2, 2] * pos[g, 2])
    dx, dy, dz = px - pos[g, 0], py - pos[g, 1], pz - pos[g, 2]
    if t == _SPHERE:
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dist > 1e-12:
            out[k, 0], out[k, 1], out[k, 2] = dx / dist, dy / dist, dz / dist
        else:
            out[k, 0], out[k, 1], out[k, 2] = 0.0, 0.0, 1.0
        return dist - sizes[g, 0]
    # local coordinates R^T (x - c)
    l0 = dx * rot[g, 0, 0] + dy * rot[g, 1, 0] + dz * rot[g, 2, 0]
    l1 = dx * rot[g, 0, 1] + dy * rot[g, 1, 1] + dz * rot[g, 2, 1]
    l2 = dx * rot[g, 0, 2] + dy * rot[g, 1, 2] + dz * rot[g, 2, 2]
    m0 = m1 = m2 = 0.0
    sd = np.inf
    if t == _BOX:
        q0, q1, q2 = abs(l0) - sizes[g, 0], abs(l1) - sizes[g, 1], abs(l2) - sizes[g, 2]
        a0, a1, a2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
        ext = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        if ext > 0.0:
            den = max(ext, 1e-300)
            m0, m1, m2 = _sign(l0) * a0 / den, _sign(l1) * a1 / den, _sign(l2) * a2 / den
            sd = ext
        else:
            if q0 >= q1 and q0 >= q2:
                m0 = _sign(l0) + (1.0 if l0 == 0.0 else 0.0)
                sd = q0
            elif q1 >= q2:
                m1 = _sign(l1) + (1.0 if l1 == 0.0 else 0.0)
                sd = q1
            else:
                m2 = _sign(l2) + (1.0 if l2 == 0.0 else 0.0)
                sd = q2
    elif t == _CAPSULE:
        zc = min(max(l2, -sizes[g, 1]), sizes[g, 1])
        e2 = l2 - zc
        dist = math.sqrt(l0 * l0 + l1 * l1 + e2 * e2)
        if dist > 1e-12:
            m0, m1, m2 = l0 / dist, l1 / dist, e2 / dist
        else:
            m0 = 1.0
        sd = dist - sizes[g, 0]
    elif t == _CYLINDER:
        rho = math.hypot(l0, l1)
        if rho > 1e-12:
            e0, e1 = l0 / rho, l1 / rho
        else:
            e0, e1 = 1.0, 0.0
        dr, dz_ = rho - sizes[g, 0], abs(l2) - sizes[g, 1]
        ez = _sign(l2) + (1.0 if l2 == 0.0 else 0.0)
        pr, pz_ = max(dr, 0.0), max(dz_, 0.0)
        ext = math.hypot(pr, pz_)
        if ext > 0.0:
            den = max(ext, 1e-300)
            m0, m1, m2 = e0 * pr / den, e1 * pr / den, ez * pz_ / den
            sd = ext
        else:
            if dr > dz_:
                m0, m1 = e0, e1
            else:
                m2 = ez
            sd = max(dr, dz_)
    elif t == _CONVEX:
        best = -1
        for f in range(p_start[g], p_start[g + 1]):
            d = (l0 * p_normals[f, 0] + l1 * p_normals[f, 1] + l2 * p_normals[f, 2]) - p_offsets[f]
            if best < 0 or d > sd:
                best, sd = f, d
        if best < 0:
            return np.inf
        m0, m1, m2 = p_normals[best, 0], p_normals[best, 1], p_normals[best, 2]
    else:
        return np.inf
    # world normal R m
    out[k, 0] = m0 * rot[g, 0, 0] + m1 * rot[g, 0, 1] + m2 * rot[g, 0, 2]
    out[k, 1] = m0 * rot[g, 1, 0] + m1 * rot[g, 1, 1] + m2 * rot[g, 1, 2]
    out[k, 2] = m0 * rot[g, 2, 0] + m1 * rot[g, 2, 1] + m2 * rot[g, 2, 2]
    return sd
