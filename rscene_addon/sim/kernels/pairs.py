"""Candidate geom pairs, compiled: the set ``broadphase.candidate_pairs`` gives (every two bounded geoms
whose AABBs overlap on all three axes, every moving bounded geom whose AABB reaches below a horizontal
plane; then the body, moving, dynamic and group/mask filters), sorted by (a, b). A plain sweep along x
replaces numpy's strips: the same set, found another way."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _keep(a, b, body, moving, dynamic, group, mask):
    return (body[a] != body[b] and (moving[a] or moving[b]) and (dynamic[a] or dynamic[b])
            and (group[a] & mask[b]) != 0 and (group[b] & mask[a]) != 0)


@njit(cache=True)
def _push(keys, count, key):
    """keys[count] = key, in a twice larger copy when full."""
    if count == keys.shape[0]:
        grown = np.empty(2 * count, np.int64)
        grown[:count] = keys
        keys = grown
    keys[count] = key
    return keys


@njit(cache=True)
def candidate_pairs(lo, hi, is_plane, plane_z, body, moving, dynamic, group, mask):
    """Pairs (P, 2), a < b, sorted; ``plane_z`` (G,): a plane geom's height (planes are horizontal)."""
    G = lo.shape[0]
    bounded = np.empty(G, np.int64)
    nb = 0
    for g in range(G):
        if not is_plane[g]:
            bounded[nb] = g
            nb += 1
    bounded = bounded[:nb]
    order = bounded[np.argsort(lo[bounded, 0], kind="mergesort")]
    keys = np.empty(16 * G + 16, np.int64)
    count = 0
    for s in range(nb):
        i = order[s]
        end = hi[i, 0]
        for t in range(s + 1, nb):
            j = order[t]
            if lo[j, 0] > end:
                break
            if (lo[i, 1] <= hi[j, 1] and lo[j, 1] <= hi[i, 1] and lo[i, 2] <= hi[j, 2] and lo[j, 2] <= hi[i, 2]):
                a, b = min(i, j), max(i, j)
                if _keep(a, b, body, moving, dynamic, group, mask):
                    keys = _push(keys, count, a * G + b)
                    count += 1
    for p in range(G):
        if not is_plane[p]:
            continue
        for s in range(nb):
            g = bounded[s]
            if moving[g] and lo[g, 2] <= plane_z[p]:
                a, b = min(g, p), max(g, p)
                if _keep(a, b, body, moving, dynamic, group, mask):
                    keys = _push(keys, count, a * G + b)
                    count += 1
    keys = np.sort(keys[:count])
    out = np.empty((count, 2), np.int64)
    for c in range(count):
        out[c, 0] = keys[c] // G
        out[c, 1] = keys[c] % G
    return out
