"""Island labels against a plain union-find."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.sim.islands import island_labels


def _union_find(n, a, b):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(a.tolist(), b.tolist()):
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    return np.array([find(i) for i in range(n)])


@pytest.mark.parametrize("seed,n,e", [(0, 50, 30), (1, 300, 280), (2, 1000, 1500), (3, 10, 0)])
def test_labels_are_each_components_smallest_index(seed, n, e):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, e), rng.integers(0, n, e)
    assert np.array_equal(island_labels(n, a, b), _union_find(n, a, b))


def test_a_long_chain_is_one_island():
    n = 500
    order = np.random.default_rng(4).permutation(n)  # a path through the nodes in random order
    labels = island_labels(n + 3, order[:-1], order[1:])
    assert np.all(labels[:n] == 0) and list(labels[n:]) == [n, n + 1, n + 2]
