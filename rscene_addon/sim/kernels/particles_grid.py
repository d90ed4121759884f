"""The granular neighbour search, compiled: the pairs ``Granular._pairs`` gives (i < j with
|x_j - x_i| < r_i + r_j + skin_i + skin_j, sorted by (i, j)), found on a dense grid of cells sorted by a
counting sort, and that sort's particle order (the substeps run on particles in cell order, so that a
pair's two particles sit near each other in memory).

A pair is searched for by its particle with the larger skin (ties: the larger index), in the cells its own
reach overlaps (r + r_max + 2 skin: 2-3 cells per axis for the bulk, for which the cells are sized, more
for a fast particle). Cells of one (y, z) row are consecutive in the sort, so each row of that box is one
contiguous run of particles. The grid spans the particles' bounds while that takes at most ``_CELLS_PER``
cells per particle; beyond (a few thrown far away) it spans the bulk (the 0.5 .. 99.5 % quantiles per axis)
and cell coordinates are clamped into it: clamping keeps neighbours in neighbouring cells (it never
separates coordinates more than they were), the far ones only share the border cells. Cells grow where
even the bulk would need more. So a step costs the bulk's pairs plus each fast particle's own
neighbourhood, with memory bounded by the particle count whatever one particle does.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .order import argsort

_CELLS_PER = 8  # grid cells per particle at most
_TAIL = 0.005  # the bulk's bounds when the particles' span would need more cells: these quantiles


@njit(cache=True)
def _coord(value, lo, h, n):
    """The cell of ``value`` along one axis, clamped to 0 .. n - 1 (monotone in value; NaN: 0)."""
    c = (value - lo) / h
    if not c >= 0.0:
        return 0
    if c >= n - 1:
        return n - 1
    return int(c)


@njit(cache=True)
def _bounds(x, h, cap):
    """Grid origin lo (3,), cell size and cells per axis n (3,) for particles x (P, 3), at most ``cap`` cells."""
    P = x.shape[0]
    if not h > 0.0:  # zero radii and skins
        h = 1.0
    lo, hi = np.empty(3), np.empty(3)
    for a in range(3):
        lo[a], hi[a] = np.inf, -np.inf
    for p in range(P):
        for a in range(3):
            v = x[p, a]
            if v < lo[a]:
                lo[a] = v
            if v > hi[a]:
                hi[a] = v
    n = np.ones(3, np.int64)
    span = 1.0
    for a in range(3):
        if not (hi[a] - lo[a] < 1e300):  # inf or NaN coordinates: the bulk's bounds below
            span = np.inf
        else:
            span *= (hi[a] - lo[a]) / h + 1.0
    if span > cap:  # a few far away: the bulk's bounds (finite coordinates only), the rest clamped
        for a in range(3):
            col = x[:, a].copy()
            ok = 0
            for p in range(P):
                if math.isfinite(col[p]):
                    col[ok] = col[p]
                    ok += 1
            if ok == 0:
                lo[a], hi[a] = 0.0, 0.0
                continue
            col = col[:ok]
            srt = argsort(col)
            lo[a] = col[srt[int(_TAIL * (ok - 1))]]
            hi[a] = col[srt[int(math.ceil((1.0 - _TAIL) * (ok - 1)))]]
    while True:  # even the bulk too sparse for the cap: bigger cells (searches stay correct, only wider)
        vol = 1.0
        for a in range(3):
            vol *= (hi[a] - lo[a]) / h + 1.0
        if not vol > cap:
            break
        h *= max((vol / cap) ** (1.0 / 3.0), 1.01)
    for a in range(3):
        n[a] = int((hi[a] - lo[a]) / h) + 1
    return lo, h, n


@njit(cache=True)
def neighbour_pairs(x, r, skin, s_cell):
    """Sorted candidate pairs (i (N,), j (N,)) of particles x (P, 3), radii r (P,), skins (P,), and the
    particles in cell order (P,). ``s_cell``: the bulk's skin the cells are sized for."""
    P = x.shape[0]
    rmax = 0.0
    for p in range(P):
        rmax = max(rmax, r[p])
    lo, h, n = _bounds(x, 2.0 * rmax + 2.0 * s_cell, _CELLS_PER * P + 64)
    nx, ny, nz = n[0], n[1], n[2]
    cell = np.empty((P, 3), np.int64)
    count = np.zeros(nx * ny * nz + 1, np.int64)
    for p in range(P):
        for a in range(3):
            cell[p, a] = _coord(x[p, a], lo[a], h, n[a])
        count[(cell[p, 2] * ny + cell[p, 1]) * nx + cell[p, 0] + 1] += 1
    for c in range(nx * ny * nz):
        count[c + 1] += count[c]  # count[c]: the first sorted position of cell c
    order = np.empty(P, np.int64)
    fill = count[:-1].copy()
    for p in range(P):
        c = (cell[p, 2] * ny + cell[p, 1]) * nx + cell[p, 0]
        order[fill[c]] = p
        fill[c] += 1
    # the particles' data in cell order: the searches read runs of it
    xs, rs, ss = np.empty((P, 3)), np.empty(P), np.empty(P)
    for t in range(P):
        p = order[t]
        xs[t, 0], xs[t, 1], xs[t, 2] = x[p, 0], x[p, 1], x[p, 2]
        rs[t], ss[t] = r[p], skin[p]
    cap = 8 * P + 16
    pi = np.empty(cap, np.int64)
    pj = np.empty(cap, np.int64)
    m = 0
    for s in range(P):
        a = order[s]
        sa, ra = ss[s], rs[s]
        reach = ra + rmax + 2.0 * sa
        xa0, xa1, xa2 = xs[s, 0], xs[s, 1], xs[s, 2]
        x0, x1 = _coord(xa0 - reach, lo[0], h, nx), _coord(xa0 + reach, lo[0], h, nx)
        y0, y1 = _coord(xa1 - reach, lo[1], h, ny), _coord(xa1 + reach, lo[1], h, ny)
        z0, z1 = _coord(xa2 - reach, lo[2], h, nz), _coord(xa2 + reach, lo[2], h, nz)
        for z in range(z0, z1 + 1):
            for y in range(y0, y1 + 1):
                row = (z * ny + y) * nx
                t0, t1 = count[row + x0], count[row + x1 + 1]
                if m + t1 - t0 > pi.shape[0]:
                    grow = 2 * pi.shape[0] + t1 - t0
                    pi, pj = _grow(pi, grow), _grow(pj, grow)
                for t in range(t0, t1):
                    sb = ss[t]
                    if sb > sa:
                        continue
                    b = order[t]
                    if sb == sa and b >= a:
                        continue
                    lim = ra + rs[t] + sa + sb
                    d0, d1, d2 = xs[t, 0] - xa0, xs[t, 1] - xa1, xs[t, 2] - xa2
                    if d0 * d0 + d1 * d1 + d2 * d2 < lim * lim:
                        pi[m], pj[m] = min(a, b), max(a, b)
                        m += 1
    i, j = _by_row(pi[:m], pj[:m], P)
    return i, j, order


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
