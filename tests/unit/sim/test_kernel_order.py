"""The kernels' own sorting and searching (``sim.kernels.order``) against numpy's: the stable argsort
(int and float keys), the binary search and the union of sorted arrays, on random arrays full of ties."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.sim import kernels

needs_numba = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


@needs_numba
@pytest.mark.parametrize("seed", range(6))
def test_order_kernels_are_numpys(seed):
    kernels.load()
    from rscene_addon.sim.kernels import order
    rng = np.random.default_rng(seed)
    for n in (0, 1, 2, 3, 7, 64, 1000):
        key = rng.integers(0, max(1, n // 4), n).astype(np.int64)  # many equal keys
        value = rng.integers(-3, 3, n).astype(np.float64)  # and equal values among them
        if seed % 2:
            key = np.sort(key)  # already ordered runs: the merge's shortcut
        assert np.array_equal(order.argsort(key), np.argsort(key, kind="stable"))
        assert np.array_equal(order.argsort(value), np.argsort(value, kind="stable"))
        s = np.sort(key)
        for x in (-1, 0, 1, n // 8, n // 4, n):
            assert order.lower_bound(s, x) == np.searchsorted(s, x, side="left")
        other = np.unique(rng.integers(0, n + 5, n // 2 + 1)).astype(np.int64)
        assert np.array_equal(order.union_sorted(np.unique(key), other), np.union1d(key, other))
