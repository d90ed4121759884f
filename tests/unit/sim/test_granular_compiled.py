"""The compiled granular step (kernels.particles*) against the numpy reference: the neighbour search
gives the same pairs, and one world step from the same state (particles in contact with each other, the
ground, static walls and a dynamic ball) ends at the same particles, springs and reactions to rounding.
Whole runs are not compared: a settling pile is chaotic, rounding differences grow to millimetres within
a few hundred steps."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

from rscene_addon.sim import kernels
from rscene_addon.sim.narrowphase import Frames
from rscene_addon.sim.world import World
from tests.scenes import header, obj, scene_from
from tests.unit.sim.test_granular_pairs import _brute, _granular
from tests.unit.sim.test_sim_constraints import _sandbox
from tests.unit.sim.test_sim_shapes_compiled import _terrain

pytestmark = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


def _compiled():
    from rscene_addon.sim.granular import _compiled
    return _compiled()


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_pairs_are_the_reference_pairs(seed):
    rng = np.random.default_rng(seed)
    P = 600
    r = rng.uniform(0.004, 0.006, P)
    x = rng.uniform(0.0, 0.12, (P, 3))
    skin = np.full(P, 0.0005)
    fast = rng.choice(P, 12, replace=False)
    skin[fast] = rng.uniform(0.002, 0.1, 12)
    skin[fast[:2]] = skin[fast[2]]
    x[fast[3]] = (40.0, -7.0, 3.0)  # one thrown far away: one more occupied cell, not a grid spanning the gap
    i, j, order = _compiled().neighbour_pairs(x, r, skin, float(np.quantile(skin, 0.9)))
    assert np.array_equal(np.sort(order), np.arange(P))  # a permutation: the particles in cell order
    ri, rj = _granular(r)._pairs(x, skin)
    bi, bj = _brute(x, r, skin)
    assert np.array_equal(i, bi) and np.array_equal(j, bj)
    assert np.array_equal(i, ri) and np.array_equal(j, rj)
    # one whose reach covers every cell (a skin of 5 m): it walks the occupied cells, not 10^9 ring cells
    skin[fast[4]] = 5.0
    i, j, _ = _compiled().neighbour_pairs(x, r, skin, float(np.quantile(skin, 0.9)))
    bi, bj = _brute(x, r, skin)
    assert np.array_equal(i, bi) and np.array_equal(j, bj)


def _one_step(world, backend):
    """The granular step of ``world`` on copies of its state, run by ``backend``."""
    state, gran = copy.deepcopy(world.state), copy.deepcopy(world._granular[0])
    proxy = SimpleNamespace(state=state, model=world.model, backend=backend,
                            external_force=np.zeros_like(world.external_force),
                            external_torque=np.zeros_like(world.external_torque), wake=lambda body: None)
    gran.step(proxy, 0, Frames(world.model, *world.geom_poses()), world.model.dt)
    return state, gran, proxy


def _assert_same_particles(a, b):
    """Positions, velocities and spins of states ``a`` (numpy) and ``b`` (numba) after one step agree."""
    assert np.allclose(b.particles[0], a.particles[0], rtol=0, atol=1e-12)
    assert np.allclose(b.particle_velocity[0], a.particle_velocity[0], rtol=0, atol=1e-9)
    assert np.allclose(b.particle_omega[0], a.particle_omega[0], rtol=0, atol=1e-7)


def test_one_granular_step_agrees_with_numpy():
    lines = _sandbox() + [obj("/World/Ball", "sphere", pos=(0, 0, 0.45), radius=0.05, mode="dynamic")]
    world = World.from_scene(scene_from(lines), backend="numpy")
    checked = 0
    for n in range(260):
        if n in (100, 180, 259):  # piling up, the ball arriving, the ball in the pile
            a, ga, wa = _one_step(world, "numpy")
            b, gb, wb = _one_step(world, "numba")
            assert len(ga.pair_hist.keys) > 50  # contacts under test
            _assert_same_particles(a, b)
            assert np.array_equal(gb.pair_hist.keys, ga.pair_hist.keys)
            assert np.allclose(gb.pair_hist.xi, ga.pair_hist.xi, rtol=0, atol=1e-12)
            assert np.array_equal(gb.wall_hist.keys, ga.wall_hist.keys)
            assert np.allclose(wb.external_force, wa.external_force, rtol=1e-9, atol=1e-9)
            assert np.allclose(wb.external_torque, wa.external_torque, rtol=1e-9, atol=1e-9)
            checked += int(np.abs(wa.external_force).max() > 0)
        world.step()
    assert checked >= 1  # the ball felt the particles at least once


def test_one_granular_step_on_a_height_field_agrees_with_numpy():
    """Sand poured on a height field alone (no plane): the terrain contacts are compiled too."""
    gran = ("granular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 boxMin=-0.09,-0.09,0.06 boxMax=0.09,0.09,0.16 "
            "radius=0.012 spacing=0.03 density=1600 normalStiffness=5e4 normalDamping=5 tangentialStiffness=1e4 "
            "tangentialDamping=1 friction=0.5 rollingFriction=0.05 normalContactModel=linear substeps=2")
    world = World.from_scene(scene_from(header(dt=0.002) + [_terrain(), gran]), backend="numpy")
    for n in range(181):
        if n in (120, 180):  # landed (at ~60 steps, then a bounce), sliding down the slope
            a, ga, _ = _one_step(world, "numpy")
            b, gb, _ = _one_step(world, "numba")
            assert len(ga.wall_hist.keys) > 10  # particles touching the terrain
            _assert_same_particles(a, b)
            assert np.array_equal(gb.wall_hist.keys, ga.wall_hist.keys)
            assert np.allclose(gb.wall_hist.xi, ga.wall_hist.xi, rtol=0, atol=1e-12)
            assert np.array_equal(gb.pair_hist.keys, ga.pair_hist.keys)
        world.step()
    assert world.state.particles[0][:, 2].min() > -0.12  # on the terrain (heights within +-0.1), not through it
