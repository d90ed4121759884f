"""Wires, kinematic bodies, granular particles and cloth."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sim import World, simulate
from tests.scenes import ground, header, obj, scene_from

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")

G = 9.81


def test_wire_pendulum_period_matches_small_angle_formula():
    L, th0 = 1.0, 0.1
    lines = header(dt=0.001, sleeping=False) + [
        obj("/World/Anchor", "box", pos=(0, 0, 3), scale=(0.05, 0.05, 0.05), mode="static", mask=0),
        obj("/World/Bob", "sphere", pos=(L * math.sin(th0), 0, 3 - L * math.cos(th0)), radius=0.05, mask=0),
        f"wire /World/Wire stiff /World/Anchor /World/Bob {L}",
    ]
    tr = simulate(scene_from(lines), 4.5, 500)
    x = tr.position[:, 0, 0]
    i = np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0]
    t_cross = tr.time[i] + x[i] / (x[i] - x[i + 1]) * (tr.time[i + 1] - tr.time[i])
    period = float(np.mean(np.diff(t_cross)))
    t_small = 2 * math.pi * math.sqrt(L / G)
    assert period == pytest.approx(t_small, rel=0.005)
    # with the finite-amplitude correction (1 + th0^2 / 16) it is closer still
    assert period == pytest.approx(t_small * (1 + th0 ** 2 / 16), rel=0.001)
    r = np.linalg.norm(tr.position[:, 0] - np.array([0, 0, 3]), axis=1)
    assert np.abs(r - L).max() < 1e-3


def _two_bodies(kind="stiff", extra=""):
    return scene_from(header(dt=0.002, gravity=(0, 0, 0), sleeping=False) + [
        obj("/World/A", "sphere", pos=(0, 0, 0), radius=0.05, mask=0),
        obj("/World/B", "sphere", pos=(1, 0, 0), radius=0.05, mask=0),
        f"wire /World/W {kind} /World/A /World/B 1.0 {extra}".rstrip()])


def test_wire_never_pushes_but_pulls():
    world = World.from_scene(_two_bodies())
    world.set_velocity("/World/B", (-1.0, 0.0, 0.0))  # slack wire: B moves freely toward A
    for _ in range(200):
        world.step()
    assert np.allclose(world.state.linear_velocity[0], 0.0)
    assert world.state.position[1, 0] == pytest.approx(1.0 - 0.4)
    world = World.from_scene(_two_bodies())
    world.set_velocity("/World/B", (1.0, 0.0, 0.0))  # taut: the wire drags A along (momentum shared)
    for _ in range(200):
        world.step()
    assert world.state.linear_velocity[:, 0] == pytest.approx([0.5, 0.5], abs=1e-9)
    assert world.state.position[1, 0] - world.state.position[0, 0] == pytest.approx(1.0, abs=1e-6)


def test_compliant_wire_stretches_by_m_g_over_k():
    k, m, L = 500.0, 2.0, 0.5
    lines = header(dt=0.002, sleeping=False) + [
        obj("/World/Hook", "box", pos=(0, 0, 2), scale=(0.05, 0.05, 0.05), mode="static", mask=0),
        obj("/World/Weight", "sphere", pos=(0, 0, 2 - L), radius=0.05, mass=m, mask=0),
        f"wire /World/Spring compliant /World/Hook /World/Weight {L} stiffness={k} damping=20",
    ]
    tr = simulate(scene_from(lines), 3.0, 10)
    stretch = (2 - tr.position[-1, 0, 2]) - L
    assert stretch == pytest.approx(m * G / k, rel=0.02)


def test_kinematic_body_follows_its_track_and_pushes():
    lines = header(dt=0.002) + [ground(),
                                obj("/World/Pusher", "box", pos=(-1, 0, 0.25), scale=(0.2, 1, 0.5),
                                    mode="kinematic"),
                                obj("/World/Box", "box", pos=(0, 0, 0.25), scale=(0.5, 0.5, 0.5))]
    world = World.from_scene(scene_from(lines))
    for k in range(1000):
        world.set_kinematic_pose("/World/Pusher", (-1 + 0.5 * (k + 1) * 0.002, 0, 0.25))
        world.step()
    p = world.origin_positions()
    assert p[1] == pytest.approx([0.0, 0.0, 0.25], abs=1e-12)
    assert p[2, 0] == pytest.approx(0.1 + 0.25, abs=2e-3)  # in front of the pusher's face
    assert world.state.linear_velocity[2, 0] == pytest.approx(0.5, abs=1e-3)


def _sandbox(n_side=6):
    walls = [obj("/World/Wxm", "box", pos=(-0.15, 0, 0.2), scale=(0.1, 0.4, 0.4), mode="static"),
             obj("/World/Wxp", "box", pos=(0.15, 0, 0.2), scale=(0.1, 0.4, 0.4), mode="static"),
             obj("/World/Wym", "box", pos=(0, -0.15, 0.2), scale=(0.4, 0.1, 0.4), mode="static"),
             obj("/World/Wyp", "box", pos=(0, 0.15, 0.2), scale=(0.4, 0.1, 0.4), mode="static")]
    gran = ("granular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 "
            "boxMin=-0.09,-0.09,0.05 boxMax=0.09,0.09,0.25 radius=0.012 spacing=0.03 density=1600 "
            "normalStiffness=5e4 normalDamping=5 tangentialStiffness=1e4 "
            "tangentialDamping=1 friction=0.5 rollingFriction=0.05 normalContactModel=linear substeps=2")
    return header(dt=0.002) + [ground()] + walls + [gran]


def test_granular_pile_stays_in_the_box_and_loses_energy():
    scene = scene_from(_sandbox())
    tr = simulate(scene, 0.8, 50)
    P = tr.particles["/World/Sand"]
    r = tr.particle_radii["/World/Sand"]
    assert P.shape[1] >= 100
    inner = 0.1  # walls' inner faces at +-0.1
    assert np.all(np.abs(P[-1, :, :2]) <= inner - r[:, None] + 2e-3)
    assert np.all(P[-1, :, 2] >= r - 2e-3)
    v = np.diff(P, axis=0) * 50
    m = 1600 * 4 / 3 * math.pi * r ** 3
    ke = 0.5 * np.sum(m[None, :, None] * v * v, axis=(1, 2))
    pe = np.sum(m * G * P[:, :, 2], axis=1)
    total = ke + pe[1:]
    assert total[-1] < total[0]  # dissipative
    assert ke[-1] < 0.05 * ke.max()  # settled


def test_cloth_hangs_below_its_pinned_corners():
    cloth = ("deformable /World/Flag cloth - 0 0 1.5 1 0 0 0 1 1 1 pinnedVertices=0,10 totalMass=0.2 "
             "distanceCompliance=0 bendCompliance=0.001 damping=0.1 collisionRadius=0.01 iterations=10 "
             "substeps=1 particleSpacing=0.1")
    ball = obj("/World/Ball", "sphere", pos=(0, 0.2, 0.8), radius=0.2, mode="static")
    lines = header(dt=0.004) + [ground(), ball, cloth]
    world = World.from_scene(scene_from(lines))
    spec = world.model.cloth[0]
    tr = simulate(scene_from(lines), 1.5, 25)
    V = tr.cloth["/World/Flag"]
    assert V.shape == (tr.num_frames, 121, 3)
    assert np.array_equal(V[-1][[0, 10]], V[0][[0, 10]])  # pinned exactly
    free = np.ones(121, bool)
    free[[0, 10]] = False
    assert np.all(V[-1][free, 2] < 1.5)  # everything else hangs below the pins
    assert V[-1][:, 2].mean() < 1.2
    stretch = np.linalg.norm(V[-1][spec.edges[:, 0]] - V[-1][spec.edges[:, 1]], axis=1) / spec.rest
    assert stretch.max() < 1.05
    # and it drapes over the ball instead of passing through it
    assert np.linalg.norm(V[-1] - np.array([0, 0.2, 0.8]), axis=1).min() >= 0.2 + 0.01 - 2e-3


def test_a_seed_changes_the_granular_fill_jitter_and_nothing_else():
    """A dataset variation's seed reaches the simulation: the granular box fill's jitter (its only random
    choice) follows it; no seed keeps the fixed default, and the same seed gives the same fill."""
    from rscene_addon.scene_geometry.particles import JITTER_SEED as GRANULAR_JITTER_SEED
    from rscene_addon.sim.model_builder import build
    scene = scene_from(_sandbox())
    default, default_state = build(scene)
    same_default, _ = build(scene, seed=GRANULAR_JITTER_SEED)
    seeded, seeded_state = build(scene, seed=5)
    again, _ = build(scene, seed=5)
    grains = [m.granular[0].positions for m in (default, same_default, seeded, again)]
    np.testing.assert_array_equal(grains[0], grains[1])
    np.testing.assert_array_equal(grains[2], grains[3])
    moved = np.abs(grains[2] - grains[0])
    assert moved.max() > 1e-4 and moved.max() < 0.03  # a jitter within the lattice spacing, not a new fill
    assert len(default_state.position) == 5  # the ground and four walls
    np.testing.assert_array_equal(default_state.position, seeded_state.position)
