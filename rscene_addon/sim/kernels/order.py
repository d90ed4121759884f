"""Sorting and searching for the kernels, as plain loops: numba compiles numpy's generic ``argsort``,
``sort``, ``unique`` and ``searchsorted`` (with their ``kind=`` / ``side=`` strings) into every kernel
that calls them, seconds of first-ever compile each; these compile in a fraction of that and run as fast
on a step's arrays (already or nearly sorted)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _before(k1, v1, i1, k2, v2, i2):
    """(k1, v1) sorts before (k2, v2), ties kept in index order (a stable sort)."""
    if k1 != k2:
        return k1 < k2
    if v1 != v2:
        return v1 < v2
    return i1 < i2


@njit(cache=True)
def argsort_by(key, value):
    """Indices that sort by ``key`` then ``value`` (int64 / float64 arrays of one length), stable: what
    ``np.lexsort((value, key))`` gives for values without NaN. Bottom-up merge sort; runs already in order
    are only read."""
    n = key.shape[0]
    idx = np.arange(n)
    if n < 2:
        return idx
    tmp = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b = idx[mid - 1], idx[mid] if mid < n else 0
            if mid >= hi or not _before(key[b], value[b], b, key[a], value[a], a):
                continue  # the two runs are in order already
            i, j = lo, mid
            for t in range(lo, hi):
                if j >= hi or (i < mid and not _before(key[idx[j]], value[idx[j]], idx[j], key[idx[i]],
                                                        value[idx[i]], idx[i])):
                    tmp[t] = idx[i]
                    i += 1
                else:
                    tmp[t] = idx[j]
                    j += 1
            for t in range(lo, hi):
                idx[t] = tmp[t]
        width *= 2
    return idx


@njit(cache=True)
def argsort_int(key):
    """Stable indices that sort int64 ``key``."""
    return argsort_by(key, np.zeros(key.shape[0]))


@njit(cache=True)
def lower_bound(a, x):
    """The first index of sorted ``a`` whose value is not below ``x`` (``np.searchsorted`` side left)."""
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def union_sorted(a, b):
    """The sorted distinct values of two sorted int64 arrays (``np.unique(np.concatenate((a, b)))``)."""
    out = np.empty(a.shape[0] + b.shape[0], np.int64)
    i = j = n = 0
    while i < a.shape[0] or j < b.shape[0]:
        if j >= b.shape[0] or (i < a.shape[0] and a[i] <= b[j]):
            x = a[i]
            i += 1
        else:
            x = b[j]
            j += 1
        if n == 0 or out[n - 1] != x:
            out[n] = x
            n += 1
    return out[:n]
