"""Candidate geom pairs, compiled: the set ``broadphase.candidate_pairs`` gives (every two bounded geoms
whose AABBs overlap on all three axes, every moving bounded geom whose AABB reaches below a horizontal
plane; then the body, moving, dynamic and group/mask filters), sorted by (a, b). The search is numpy's
(a sweep along the axis of largest spread, inside strips across the second-largest), written as loops: the
same set, found another way.

The sorts are written out too (``order.argsort``'s merge sort of the lower bounds, a radix sort of the
pairs): numba's ``np.argsort``/``np.sort`` compile generic sort code that cost most of this module's
compile time. The hot
loops count with booleans instead of branching on them: on each step's new bounds the branches were
mispredicted often enough to cost several times the loads."""
from __future__ import annotations

import numpy as np
from numba import njit

from .order import argsort


@njit(cache=True)
def _sorted(pairs, G):
    """The rows of ``pairs`` (values 0 .. G-1, no two equal) sorted by (a, b): stable counting sorts by b,
    then by a (a radix sort with G buckets)."""
    for col in (1, 0):
        start = np.zeros(G + 1, np.int64)
        for p in range(pairs.shape[0]):
            start[pairs[p, col] + 1] += 1
        for g in range(G):
            start[g + 1] += start[g]
        out = np.empty_like(pairs)
        for p in range(pairs.shape[0]):
            q = start[pairs[p, col]]
            out[q, 0], out[q, 1] = pairs[p, 0], pairs[p, 1]
            start[pairs[p, col]] = q + 1
        pairs = out
    return pairs


@njit(cache=True)
def _sweep(box, geom, first, seg, pairs):
    """The pairs (a < b) of overlapping boxes, written to ``pairs`` as far as it has room; returns how many
    there are. Strip k is rows seg[k] .. seg[k + 1] - 1 of ``box`` (bounds, the sweep axis first, sorted by
    lower bound along it) and ``geom``; ``first``: the first strip of the row's box. Two boxes that share
    several strips count in the first of them only."""
    P = 0
    for k in range(seg.shape[0] - 1):
        for s in range(seg[k], seg[k + 1]):
            i, f = geom[s], first[s]
            end, ylo, yhi, zlo, zhi = box[s, 3], box[s, 1], box[s, 4], box[s, 2], box[s, 5]
            for t in range(s + 1, seg[k + 1]):
                if box[t, 0] > end:
                    break
                if P < pairs.shape[0]:  # every candidate written, counted when it is a pair
                    j = geom[t]
                    pairs[P, 0], pairs[P, 1] = min(i, j), max(i, j)
                P += ((box[t, 1] <= yhi) & (ylo <= box[t, 4]) & (box[t, 2] <= zhi) & (zlo <= box[t, 5])
                      & (max(f, first[t]) == k))
    return P


@njit(cache=True)
def candidate_pairs(lo, hi, is_plane, plane_z, body, moving, dynamic, group, mask):
    """Pairs (P, 2), a < b, sorted; ``plane_z`` (G,): a plane geom's height (planes are horizontal)."""
    G = lo.shape[0]
    bounded = np.empty(G, np.int64)
    movers = np.empty(G, np.int64)  # the moving bounded geoms: the only ones a plane can pair with
    planes = np.empty(G, np.int64)
    nb = nm = npl = 0
    for g in range(G):
        if is_plane[g]:
            planes[npl] = g
            npl += 1
        else:
            bounded[nb] = g
            nb += 1
            if moving[g]:
                movers[nm] = g
                nm += 1
    # the sweep axis and the strips' axis: largest and second-largest variance of the centres (ties to
    # the lower axis); they change only the speed
    total = np.zeros(3)
    for s in range(nb):
        for c in range(3):
            total[c] += lo[bounded[s], c] + hi[bounded[s], c]
    var = np.zeros(3)
    for s in range(nb):
        for c in range(3):
            d = lo[bounded[s], c] + hi[bounded[s], c] - total[c] / nb
            var[c] += d * d
    axis, across = (1, 0) if var[1] > var[0] else (0, 1)
    if var[2] > var[axis]:
        axis, across = 2, axis
    elif var[2] > var[across]:
        across = 2
    start = np.empty(nb)
    for s in range(nb):
        start[s] = lo[bounded[s], axis]
    order = argsort(start)
    for s in range(nb):
        order[s] = bounded[order[s]]
    # strips across: at least as wide as the widest box (a box lies in one or two, three by rounding), and
    # at most nb + 2 of them
    widest, base, top = 0.0, np.inf, -np.inf
    for s in range(nb):
        g = order[s]
        widest = max(widest, hi[g, across] - lo[g, across])
        base = min(base, lo[g, across])
        top = max(top, hi[g, across])
    width = max(widest, (top - base) / (nb + 1))
    if not width > 0:  # no extent across at all (or NaN bounds): any width, one strip
        width = 1.0
    strip = np.empty((nb, 2), np.int64)  # a box's first and last strip (NaN bounds: strip 0)
    for s in range(nb):
        x0 = (lo[order[s], across] - base) / width
        x1 = (hi[order[s], across] - base) / width
        strip[s, 0] = int(min(x0, nb + 1.0)) if x0 > 0 else 0
        strip[s, 1] = int(min(x1, nb + 1.0)) if x1 > 0 else 0
    # the boxes strip by strip, in sweep order in each (a counting sort by strip), their bounds side by
    # side, the sweep axis first: the inner loop reads memory in sequence
    seg = np.zeros(nb + 3, np.int64)
    for s in range(nb):
        for k in range(strip[s, 0], strip[s, 1] + 1):
            seg[k + 1] += 1
    for k in range(nb + 2):
        seg[k + 1] += seg[k]
    fill = seg.copy()
    box = np.empty((seg[nb + 2], 6))
    geom = np.empty(seg[nb + 2], np.int64)
    first = np.empty(seg[nb + 2], np.int64)
    for s in range(nb):
        for k in range(strip[s, 0], strip[s, 1] + 1):
            r = fill[k]
            fill[k] += 1
            geom[r], first[r] = order[s], strip[s, 0]
            for c in range(3):
                box[r, c] = lo[order[s], (axis + c) % 3]
                box[r, 3 + c] = hi[order[s], (axis + c) % 3]
    # room for a pile's pairs (a box touches a few others) and every plane pair; a denser scene sweeps
    # again with room for all: growing the array inside the loop costs more (numba counts references)
    room = 4 * nb + 16
    pairs = np.empty((room + npl * nm, 2), np.int64)
    P = _sweep(box, geom, first, seg, pairs[:room])
    if P > room:
        room = P
        pairs = np.empty((room + npl * nm, 2), np.int64)
        _sweep(box, geom, first, seg, pairs[:room])
    for k in range(npl):
        p = planes[k]
        for s in range(nm):
            g = movers[s]
            pairs[P, 0], pairs[P, 1] = min(g, p), max(g, p)
            P += lo[g, 2] <= plane_z[p]
    K = 0  # the pairs the filters keep, moved to the front
    for q in range(P):
        a, b = pairs[q, 0], pairs[q, 1]
        pairs[K, 0], pairs[K, 1] = a, b
        K += ((body[a] != body[b]) & (moving[a] | moving[b]) & (dynamic[a] | dynamic[b])
              & ((group[a] & mask[b]) != 0) & ((group[b] & mask[a]) != 0))
    return _sorted(pairs[:K], G)
