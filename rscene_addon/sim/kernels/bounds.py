"""World AABBs of primitive geoms, compiled: ``broadphase.compute_aabbs``'s boxes for spheres, capsules,
cylinders, boxes and hulls (their local bounds turned), planes unbounded; height fields are left to the
caller (their stored bounds)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry import BOX, CAPSULE, CONVEX, CYLINDER, PLANE, SPHERE

_INF = 1e300  # as broadphase._INF


@njit(cache=True)
def aabbs(types, size, local_aabb, pos, rot, pad):
    G = pos.shape[0]
    lo = np.empty((G, 3))
    hi = np.empty((G, 3))
    c = np.empty(3)
    e = np.zeros(3)
    for g in range(G):
        t = types[g]
        if t == PLANE:
            for i in range(3):
                lo[g, i] = -_INF
                hi[g, i] = _INF
            continue
        for i in range(3):
            c[i] = pos[g, i]
            e[i] = 0.0
        if t == SPHERE:
            for i in range(3):
                e[i] = size[g, 0]
        elif t == CAPSULE:
            for i in range(3):
                e[i] = abs(rot[g, i, 2]) * size[g, 1] + size[g, 0]
        elif t == CYLINDER:
            for i in range(3):
                a = rot[g, i, 2]
                e[i] = abs(a) * size[g, 1] + size[g, 0] * np.sqrt(min(max(1 - a * a, 0.0), 1.0))
        elif t == BOX or t == CONVEX:
            for i in range(3):
                s = 0.0
                w = 0.0
                for j in range(3):
                    s += rot[g, i, j] * local_aabb[g, 0, j]
                    w += abs(rot[g, i, j]) * local_aabb[g, 1, j]
                c[i] += s
                e[i] = w
        for i in range(3):
            lo[g, i] = c[i] - e[i] - pad[g]
            hi[g, i] = c[i] + e[i] + pad[g]
    return lo, hi
