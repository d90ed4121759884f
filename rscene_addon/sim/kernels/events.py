"""Contact-begin bookkeeping, compiled: the touching body pairs and which contacts start an event, as
``World._events`` computes them with numpy (a dozen small array calls per step)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .order import argsort, lower_bound, union_sorted


@njit(cache=True)
def touch_events(old, asleep, A, B, lam0, vn0, N):
    """Returns (the touching pairs' sorted keys min * N + max, the contacts (indices) whose pairs begin to
    touch, in the order the pairs first appear). ``old``: last step's keys (sorted); a pair touches when
    one of its contacts pushes (lam0 > 0) or when it touched before and one of its bodies sleeps; per new
    pair the event's contact is the one that hit fastest (lowest vn0, the first of equals)."""
    kept = np.empty(old.shape[0], np.int64)
    nk = 0
    for i in range(old.shape[0]):
        k = old[i]
        if asleep[k // N] or asleep[k % N]:
            kept[nk] = k
            nk += 1
    C = A.shape[0]
    idx = np.empty(C, np.int64)
    n = 0
    for c in range(C):
        if lam0[c] > 0:
            idx[n] = c
            n += 1
    key = np.empty(n, np.int64)
    v = np.empty(n)
    for i in range(n):
        a, b = A[idx[i]], B[idx[i]]
        key[i] = min(a, b) * N + max(a, b)
        v[i] = vn0[idx[i]]
    # a stable sort by key: each pair's contacts in contact order, so its first is the run's first and its
    # fastest the lowest vn0 seen first
    order = argsort(key)
    pair_key = np.empty(n, np.int64)
    best = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    P = 0
    for s in range(n):
        i = order[s]
        if P == 0 or key[i] != pair_key[P - 1]:
            pair_key[P], best[P], first[P], low = key[i], idx[i], idx[i], v[i]
            P += 1
        elif v[i] < low:
            best[P - 1], low = idx[i], v[i]
    ev_best = np.empty(P, np.int64)
    ev_first = np.empty(P, np.int64)
    E = 0
    for p in range(P):
        at = lower_bound(old, pair_key[p])
        if at >= old.shape[0] or old[at] != pair_key[p]:
            ev_best[E], ev_first[E] = best[p], first[p]
            E += 1
    events = ev_best[:E][argsort(ev_first[:E])]
    touching = union_sorted(pair_key[:P], kept[:nk])
    return touching, events
