"""The granular neighbour search: per-particle margins on a grid sized for the bulk, checked against
brute force (every pair within r_i + r_j + skin_i + skin_j), and bounded when a few particles fly off."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rscene_addon.sim.granular import Granular


def _granular(radii):
    g = Granular.__new__(Granular)  # _pairs reads the radii only
    g.spec = SimpleNamespace(radii=radii)
    return g


def _brute(x, r, skin):
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    reach = r[:, None] + r[None] + skin[:, None] + skin[None]
    i, j = np.nonzero(np.triu(d < reach, 1))
    return i, j


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairs_are_every_pair_within_both_margins(seed):
    rng = np.random.default_rng(seed)
    P = 600
    r = rng.uniform(0.004, 0.006, P)
    x = rng.uniform(0.0, 0.12, (P, 3))
    skin = np.full(P, 0.0005)
    fast = rng.choice(P, 12, replace=False)  # a few thrown out fast (skins up to 10 cells)
    skin[fast] = rng.uniform(0.002, 0.1, 12)
    skin[fast[:2]] = skin[fast[2]]  # equal skins among fast particles: each pair still once
    i, j = _granular(r)._pairs(x, skin)
    bi, bj = _brute(x, r, skin)
    assert np.array_equal(i, bi) and np.array_equal(j, bj)


def test_a_few_fast_particles_do_not_widen_everyone_s_search():
    """A settled block of 8,000 particles with 5 flying at 9 m/s (dt 1/240): the list grows by those five's
    own neighbourhoods (a 5.5 cm reach each), not by the 100x of one skin from the fastest for everyone."""
    rng = np.random.default_rng(4)
    n = 20
    g = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).reshape(-1, 3) * 0.0101
    x = g + rng.uniform(-1e-4, 1e-4, g.shape)
    r = np.full(len(x), 0.005)
    rest = np.full(len(x), 0.0005)
    bulk = len(_granular(r)._pairs(x, rest)[0])
    skin = rest.copy()
    fly = 1.2 * 9.0 / 240
    skin[rng.choice(len(x), 5, replace=False)] = fly
    now = len(_granular(r)._pairs(x, skin)[0])
    one_skin = len(_granular(r)._pairs(x, np.full(len(x), fly))[0])  # the old rule: everyone the fastest's
    own = 4 / 3 * np.pi * ((2 * 0.005 + fly + 0.0005) / 0.0101) ** 3  # lattice sites within one's reach
    assert bulk < now <= bulk + 5 * own
    assert now * 50 < one_skin
