"""Sorting and searching for the kernels, as plain loops: numba compiles numpy's generic ``argsort``,
``sort``, ``unique`` and ``searchsorted`` (with their ``kind=`` / ``side=`` strings) into every kernel
that calls them, seconds of first-ever compile each; these compile in a fraction of that."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def argsort(x):
    """Stable indices that sort ``x`` ascending (``np.argsort(x, kind="stable")`` for keys without NaN): a
    bottom-up merge sort, the keys moved along with the indices so that the merges read memory in
    sequence."""
    n = x.shape[0]
    idx, idx2 = np.empty(n, np.int64), np.empty(n, np.int64)
    key, key2 = np.empty_like(x), np.empty_like(x)
    for k in range(n):  # (np.arange doubled this function's compile time)
        idx[k], key[k] = k, x[k]
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j >= hi or (i < mid and key[i] <= key[j]):
                    idx2[k], key2[k] = idx[i], key[i]
                    i += 1
                else:
                    idx2[k], key2[k] = idx[j], key[j]
                    j += 1
        idx, idx2 = idx2, idx
        key, key2 = key2, key
        width *= 2
    return idx


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
