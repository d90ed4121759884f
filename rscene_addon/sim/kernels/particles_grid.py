"""The granular neighbour search, compiled: the pairs ``Granular._pairs`` gives (i < j with
|x_j - x_i| < r_i + r_j + skin_i + skin_j, sorted by (i, j)), found on a hashed grid.

Cells are sized for the bulk's skin (``s_cell``, the caller's 90th percentile); only occupied cells exist
(sorted by key, found through an open-addressing hash table), so a particle thrown far away adds one cell,
not a grid that spans the gap. A pair is searched for by its particle with the larger skin (ties: the
larger index): a bulk particle looks in its 27 cells, a fast one in the rings its own reach needs, or in
every occupied cell when those rings hold more cells than exist. So a step costs the bulk's pairs plus
each fast particle's own neighbourhood, at most the occupied cells and the particles: bounded whatever one
particle does.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .order import argsort

_LIM = np.int64((1 << 20) - 2)  # cell coordinates are clamped to 0 .. _LIM (20 bits each in a key)


@njit(cache=True)
def _coord(value, lo, h):
    c = (value - lo) / h
    if not c >= 0.0:  # NaN too
        return np.int64(0)
    if c >= _LIM:
        return _LIM
    return np.int64(c)


@njit(cache=True)
def _slot(key, shift, mask):
    """Fibonacci hashing: the top bits of the key times 2^64 / golden ratio (every coordinate reaches them)."""
    return ((key * np.int64(-7046029254386353131)) >> shift) & mask


@njit(cache=True)
def neighbour_pairs(x, r, skin, s_cell):
    """Sorted candidate pairs (i (N,), j (N,)) of particles x (P, 3), radii r (P,), skins (P,)."""
    P = x.shape[0]
    rmax = 0.0
    lo = np.empty(3)
    for a in range(3):
        lo[a] = np.inf
    for p in range(P):
        rmax = max(rmax, r[p])
        for a in range(3):
            if x[p, a] < lo[a]:
                lo[a] = x[p, a]
    h = 2.0 * rmax + 2.0 * s_cell
    cell = np.empty((P, 3), np.int64)
    key = np.empty(P, np.int64)
    for p in range(P):
        for a in range(3):
            cell[p, a] = _coord(x[p, a], lo[a], h)
        key[p] = (cell[p, 2] << np.int64(40)) | (cell[p, 1] << np.int64(20)) | cell[p, 0]
    order = argsort(key)
    # occupied cells: the runs of equal keys in sorted order
    ustart = np.empty(P + 1, np.int64)
    ukey = np.empty(P, np.int64)
    U = 0
    for q in range(P):
        k = key[order[q]]
        if U == 0 or ukey[U - 1] != k:
            ukey[U] = k
            ustart[U] = q
            U += 1
    ustart[U] = P
    size, bits = 4, 2
    while size < 2 * U:
        size *= 2
        bits += 1
    mask, shift = np.int64(size - 1), np.int64(64 - bits)
    table = np.full(size, -1, np.int64)
    for u in range(U):
        s = _slot(ukey[u], shift, mask)
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = u
    cap = 8 * P + 16
    pi = np.empty(cap, np.int64)
    pj = np.empty(cap, np.int64)
    n = 0
    for a in range(P):
        k = np.int64(1)
        if skin[a] > s_cell:
            rings = np.ceil((r[a] + rmax + 2.0 * skin[a]) / h)
            k = np.int64(rings) if rings < 1e6 else np.int64(1e6)  # (an infinite skin: every cell)
        ca0, ca1, ca2 = cell[a, 0], cell[a, 1], cell[a, 2]
        side = 2 * k + 1
        if side * side * side > U:  # rings wider than the occupied cells: walk those once instead
            for u in range(U):
                q0 = order[ustart[u]]
                if abs(cell[q0, 0] - ca0) <= k and abs(cell[q0, 1] - ca1) <= k and abs(cell[q0, 2] - ca2) <= k:
                    if n + ustart[u + 1] - ustart[u] > pi.shape[0]:
                        pi, pj = _grow(pi, 2 * pi.shape[0] + P), _grow(pj, 2 * pi.shape[0] + P)
                    n = _cell_pairs(a, u, order, ustart, x, r, skin, pi, pj, n)
            continue
        for z in range(-k, k + 1):
            for y in range(-k, k + 1):
                for xx in range(-k, k + 1):
                    c0, c1, c2 = ca0 + xx, ca1 + y, ca2 + z
                    if c0 < 0 or c1 < 0 or c2 < 0 or c0 > _LIM or c1 > _LIM or c2 > _LIM:
                        continue
                    ck = (c2 << np.int64(40)) | (c1 << np.int64(20)) | c0
                    s = _slot(ck, shift, mask)
                    while table[s] >= 0:
                        u = table[s]
                        if ukey[u] == ck:
                            if n + ustart[u + 1] - ustart[u] > pi.shape[0]:
                                pi, pj = _grow(pi, 2 * pi.shape[0] + P), _grow(pj, 2 * pi.shape[0] + P)
                            n = _cell_pairs(a, u, order, ustart, x, r, skin, pi, pj, n)
                            break
                        s = (s + 1) & mask
    return _by_row(pi[:n], pj[:n], P)


@njit(cache=True, inline="always")
def _cell_pairs(a, u, order, ustart, x, r, skin, pi, pj, n):
    """Append the pairs particle ``a`` owns with the particles of occupied cell ``u``: those with a smaller
    skin (ties: a smaller index) within reach (the caller leaves room for the cell). Returns the count.
    (Inlined: a call that returned the arrays cost a reference count per cell, most of the search.)"""
    sa = skin[a]
    for q in range(ustart[u], ustart[u + 1]):
        b = order[q]
        sb = skin[b]
        if not (sb < sa or (sb == sa and b < a)):
            continue
        i, j = min(a, b), max(a, b)
        reach = r[i] + r[j] + skin[i] + skin[j]
        dx, dy, dz = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
        if dx * dx + dy * dy + dz * dz < reach * reach:
            pi[n], pj[n] = i, j
            n += 1
    return n


@njit(cache=True)
def _grow(a, cap):
    out = np.empty(cap, np.int64)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _by_row(pi, pj, P):
    """The pairs sorted by (i, j): a counting sort by i, then each row's few j by insertion."""
    start = np.zeros(P + 1, np.int64)
    for q in range(pi.shape[0]):
        start[pi[q] + 1] += 1
    for p in range(P):
        start[p + 1] += start[p]
    fill = start[:P].copy()
    oi = np.empty_like(pi)
    oj = np.empty_like(pj)
    for q in range(pi.shape[0]):
        t = fill[pi[q]]
        oi[t], oj[t] = pi[q], pj[q]
        fill[pi[q]] = t + 1
    for p in range(P):
        if start[p + 1] - start[p] > 32:  # a fast particle's long row
            row = oj[start[p]:start[p + 1]]
            oj[start[p]:start[p + 1]] = row[argsort(row)]
            continue
        for t in range(start[p] + 1, start[p + 1]):
            v = oj[t]
            s = t - 1
            while s >= start[p] and oj[s] > v:
                oj[s + 1] = oj[s]
                s -= 1
            oj[s + 1] = v
    return oi, oj
