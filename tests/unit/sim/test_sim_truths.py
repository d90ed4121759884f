"""Physical truths of the rigid-body core against closed-form results (numpy only, no bpy).

Complements test_sim_motion.py / test_sim_contacts.py / test_sim_constraints.py (free fall, bounce, the
generic slope, the wire pendulum, the stack of five, group/mask on a height map, determinism) with:
friction stopping distance on flat ground, the 20 degree incline numbers, Newton's cradle, energy of a
restitution-0 pile, finiteness of a chaotic pile, and a mask that excludes the ground *plane*.
Every tolerance is justified next to its assertion.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sim import DYNAMIC, World, simulate
from rscene_addon.base.spatial import quat_from_axis_angle, quat_rotate, quat_to_matrix
from tests.scenes import ALL, ground, header, obj, scene_from

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")

G = 9.81
TERRAIN_BIT = 1 << 63  # the ground plane's collision group (see test_terrain_group_is_bit_63)


# -- a box sliding on the ground stops after v^2 / (2 mu g) ----------------------------------------------

@pytest.mark.parametrize("v,mu", [(2.0, 0.3), (3.0, 0.5)])
def test_sliding_box_stops_after_v2_over_2_mu_g(v, mu):
    dt = 0.002
    lines = header(dt=dt, friction=mu, sleeping=False) + [
        ground(), obj("/World/Box", "box", pos=(0, 0, 0.1), scale=(0.2, 0.2, 0.2))]
    world = World.from_scene(scene_from(lines))
    world.set_velocity("/World/Box", (v, 0.0, 0.0))
    i = world.body_index("/World/Box")
    x0 = world.body_pose("/World/Box")[0].copy()
    t_expected = v / (mu * G)
    t_stop = None
    for _ in range(int(round((t_expected + 0.2) / dt))):
        world.step()
        if t_stop is None and np.linalg.norm(world.state.linear_velocity[i]) < 1e-3:
            t_stop = world.time
    d = world.body_pose("/World/Box")[0] - x0
    exact = v * v / (2 * mu * G)
    # Semi-implicit Euler applies the friction impulse before moving, so the discrete distance is
    # sum_{n>=1} dt (v - n mu g dt) = v^2/(2 mu g) - v dt / 2 (observed to within 0.1 mm); allow
    # v dt / 2 + 1 mm against the continuous formula (1 mm = 0.1-0.2 % of the distance).
    assert d[0] == pytest.approx(exact, abs=v * dt / 2 + 1e-3)
    assert d[0] == pytest.approx(exact - v * dt / 2, abs=2e-4)
    # straight line, no lift-off or sinking (contact slop is 0.1 mm), no spin from the friction couple
    assert abs(d[1]) < 1e-5 and abs(d[2]) < 1e-4
    # the deceleration is exactly mu g, so it stops at v / (mu g), give or take the step it lands in
    assert t_stop is not None and t_stop == pytest.approx(t_expected, abs=2 * dt)
    # and it then stays stopped (static friction): speed < 1e-5 m/s at the end
    assert np.linalg.norm(world.state.linear_velocity[i]) < 1e-5


# -- a block on a 20 degree incline ------------------------------------------------------------------------

def _incline(angle_deg, mu):
    th = math.radians(angle_deg)
    q = quat_from_axis_angle([0.0, 1.0, 0.0], th)
    slab = -quat_rotate(q, np.array([0.0, 0.0, 0.5]))
    box = quat_rotate(q, np.array([0.0, 0.0, 0.1]))
    return scene_from(header(dt=0.002, friction=mu, sleeping=False) + [
        obj("/World/Slope", "box", pos=slab, quat=q, scale=(20, 4, 1), mode="static"),
        obj("/World/Box", "box", pos=box, quat=q, scale=(0.2, 0.2, 0.2)),
    ])


def test_block_sticks_on_20_degree_incline_at_mu_08():
    # tan(20 deg) = 0.364 < 0.8: static friction needs only 45 % of its limit
    tr = simulate(_incline(20.0, 0.8), 2.0, 25)
    # 0.1 mm in 2 s: the contact slop; anything that creeps would exceed it
    assert np.abs(tr.position[-1, 0] - tr.position[0, 0]).max() < 1e-4
    assert np.linalg.norm(tr.linear_velocity[-1, 0]) < 1e-4


def test_block_slides_on_20_degree_incline_at_mu_01():
    th = math.radians(20.0)
    a_exact = G * (math.sin(th) - 0.1 * math.cos(th))  # = 2.4333 m/s^2
    tr = simulate(_incline(20.0, 0.1), 1.0, 50)
    speed = np.linalg.norm(tr.linear_velocity[:, 0], axis=1)
    a_fit = np.polyfit(tr.time[5:], speed[5:], 1)[0]
    # friction is exact Coulomb on a flat face contact, gravity is exact per step: 0.5 % is a margin for
    # the first frames' settling of the contact, not an approximation in the model
    assert a_fit == pytest.approx(a_exact, rel=0.005)
    # distance along the slope after 1 s: a t^2 / 2 minus the semi-implicit offset a dt t / 2 (1.2 mm)
    d = np.linalg.norm(tr.position[-1, 0] - tr.position[0, 0])
    assert d == pytest.approx(0.5 * a_exact * 1.0, abs=0.5 * a_exact * 0.002 * 1.0 + 2e-3)


# -- Newton's cradle ---------------------------------------------------------------------------------------

def _cradle(n, gap, dt):
    """n spheres (r 0.1, 1 kg) in a row along x, ``gap`` apart, no gravity, no friction, e = 1;
    the first one moves at 1 m/s toward the others. Returns their x velocities after 0.3 s."""
    r = 0.1
    lines = header(dt=dt, gravity=(0, 0, 0), restitution=1.0, rest_threshold=0.0, friction=0.0,
                   sleeping=False)
    lines += [obj(f"/World/S{i}", "sphere", pos=((2 * r + gap) * i, 0, 1.0), radius=r) for i in range(n)]
    world = World.from_scene(scene_from(lines))
    world.set_velocity("/World/S0", (1.0, 0.0, 0.0))
    for _ in range(int(round(0.3 / dt))):
        world.step()
    return world.state.linear_velocity[:, 0].copy()


@pytest.mark.parametrize("n", [3, 5])
def test_newtons_cradle_touching_row_moves_as_one_block(n):
    """With the spheres *touching*, the solver resolves all contacts of a step simultaneously and the
    restitution target of each contact comes from its pre-step normal speed (0 between resting
    neighbours). The row 2..n therefore reacts as one rigid block of mass n-1: an elastic 1-on-(n-1)
    collision, v1 = (2 - n) / n, v2..vn = 2 / n (e.g. -0.6, 0.4 x4 for n = 5), not the textbook cradle
    (0, ..., 0, 1), which needs the impacts to happen one after the other. This asserts what it does."""
    v = _cradle(n, 0.0, 0.0025)
    # momentum: impulses are equal and opposite by construction -> exact to round-off
    assert v.sum() == pytest.approx(1.0, abs=1e-9)
    # kinetic energy (unit masses): e = 1 keeps it; measured loss 7e-6 (iteration tolerance): allow 1e-4
    assert (v ** 2).sum() == pytest.approx(1.0, abs=1e-4)
    # the block solution, to 1e-3 m/s (solver tolerance 1e-7 over 80 iterations gives ~1e-6)
    assert v[0] == pytest.approx((2 - n) / n, abs=1e-3)
    assert np.allclose(v[1:], 2 / n, atol=1e-3)


@pytest.mark.parametrize("dt", [0.001, 0.0025])
def test_newtons_cradle_with_gaps_passes_momentum_to_the_last(dt):
    """With gaps wider than the travel per step (1 cm > 1 m/s x dt), each impact is its own two-body
    elastic collision in its own step, and the textbook result appears: the last sphere leaves at the
    initial speed and all others stop (exact exchange between equal masses, to the solver tolerance)."""
    v = _cradle(5, 0.01, dt)
    assert v[-1] == pytest.approx(1.0, abs=1e-3)
    assert np.abs(v[:-1]).max() < 1e-3
    assert v.sum() == pytest.approx(1.0, abs=1e-9)


def test_newtons_cradle_energy_never_grows_with_sub_step_gaps():
    """Gaps smaller than the travel per step (0.1 mm < 1 m/s x 2.5 ms) are the awkward case: a contact
    that a neighbour's impulse closes within the same step has a pre-step normal speed of 0, so its
    restitution is not applied and the collision is partly plastic (measured: 8.5 % of the kinetic
    energy is lost at e = 1). Energy must still never be created and momentum is exact."""
    v = _cradle(5, 1e-4, 0.0025)
    assert v.sum() == pytest.approx(1.0, abs=1e-9)
    assert (v ** 2).sum() <= 1.0 + 1e-6


# -- energy and robustness in piles ------------------------------------------------------------------------

def _pile(n, seed, e=0.0, shapes=("box",), sleeping=True, overlap=False):
    """n random bodies (random sizes, masses and orientations) dropped above the ground."""
    rng = np.random.default_rng(seed)
    lines = header(dt=1 / 240, restitution=e, friction=0.6, sleeping=sleeping, rest_threshold=0.01)
    lines.append(ground())
    spread, rise = (0.6, 0.15) if overlap else (1.5, 0.45)
    for i in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        s = rng.uniform(0.15, 0.4, 3)
        pos = (rng.uniform(-spread, spread), rng.uniform(-spread, spread), 0.3 + rise * i)
        lines.append(obj(f"/World/B{i}", shapes[i % len(shapes)], pos=pos, quat=q, scale=tuple(s),
                         radius=s[0] / 1.5, height=s[2] * 1.5, mass=rng.uniform(0.5, 2.0)))
    return scene_from(lines)


def _mechanical_energy(world, tr):
    """Total kinetic (translational + rotational) plus potential energy per frame."""
    m = world.model
    idx = np.array([m.body_name.index(str(n)) for n in tr.names])
    assert (m.body_mode[idx] == DYNAMIC).all()
    mass = m.body_mass[idx]
    F, N = tr.quaternion.shape[:2]
    R = quat_to_matrix(tr.quaternion.reshape(-1, 4)).reshape(F, N, 3, 3)
    com = tr.position + np.einsum("fnij,nj->fni", R, m.body_com[idx])
    I_world = np.einsum("fnij,njk,fnlk->fnil", R, m.body_inertia[idx], R)
    w = tr.angular_velocity
    ke = 0.5 * mass * (tr.linear_velocity ** 2).sum(-1) + 0.5 * np.einsum("fni,fnij,fnj->fn", w, I_world, w)
    pe = mass * G * com[..., 2]
    return (ke + pe).sum(1)


def test_energy_never_grows_in_a_restitution_zero_pile():
    world = World.from_scene(_pile(20, seed=1, e=0.0))
    tr = simulate(None, 2.0, 60, world=world)
    E = _mechanical_energy(world, tr)
    dE = np.diff(E)
    # Nothing in the step can add energy: semi-implicit Euler free fall loses m g^2 dt^2 / 2 a step,
    # e = 0 contacts and friction only remove it, and the split-impulse position correction changes
    # positions without adding velocity (it can lift a sunk body by at most the 0.1 mm slop x erp).
    # Allowance: 1e-6 of the initial energy (~1 mJ of 1.1 kJ) for round-off and that lift;
    # measured: the largest frame-to-frame change is a decrease.
    assert dE.max() <= 1e-6 * abs(E[0])
    # and the pile really collides and settles: most of the drop energy is gone
    assert E[-1] < 0.1 * E[0]


def test_chaotic_pile_stays_finite_for_two_seconds():
    """40 mixed shapes spawned overlapping (dropped 15 cm apart in a 1.2 m square), e = 0.5, no
    sleeping: violent first contacts. Nothing may become NaN/inf, blow up or tunnel through the ground."""
    world = World.from_scene(_pile(40, seed=2, e=0.5, shapes=("box", "sphere", "cylinder", "capsule"),
                                   sleeping=False, overlap=True))
    tr = simulate(None, 2.0, 60, world=world)
    for name in ("position", "quaternion", "linear_velocity", "angular_velocity"):
        assert np.isfinite(getattr(tr, name)).all(), name
    assert np.isfinite(world.state.position).all() and np.isfinite(world.state.linear_velocity).all()
    # unit quaternions to 1e-6 (they are renormalised every step)
    assert np.allclose(np.linalg.norm(tr.quaternion, axis=-1), 1.0, atol=1e-6)
    # no explosion: no speed above the free-fall speed from the highest spawn (6.15 m -> 11 m/s) + 20 %
    top = tr.position[0, :, 2].max()
    assert np.linalg.norm(tr.linear_velocity, axis=-1).max() < 1.2 * math.sqrt(2 * G * top)
    # nothing went through the ground: every body's centre stays above it (the smallest body's
    # half-extent is > 1 cm; a tunnelled body would be far below 0)
    assert tr.position[..., 2].min() > 0.0
    # nothing was flung sideways out of the scene
    assert np.abs(tr.position[..., :2]).max() < 10.0


# -- a mask that excludes the ground plane ------------------------------------------------------------------

def test_ball_whose_mask_excludes_the_ground_plane_falls_through():
    """test_terrain_group_is_bit_63 does this for a height map; here the infinite ground plane, whose
    geom is put in the terrain group (bit 63) whatever the record says."""
    z0, r, T = 1.0, 0.1, 1.0
    lines = header(dt=0.002) + [
        ground(),
        obj("/World/Through", "sphere", pos=(0, 0, z0), radius=r, mask=ALL ^ TERRAIN_BIT),
        obj("/World/On", "sphere", pos=(1, 0, z0), radius=r),
    ]
    tr = simulate(scene_from(lines), T, 50)
    z = dict(zip(tr.names.tolist(), tr.position[-1, :, 2]))
    # free fall untouched by the plane: z0 - g t^2/2 (-3.905 m) within the semi-implicit offset g dt t/2
    assert z["/World/Through"] == pytest.approx(z0 - 0.5 * G * T * T, abs=0.5 * G * 0.002 * T + 1e-9)
    assert not any("/World/Through" in (e["body_a"], e["body_b"]) for e in tr.events)
    # the control ball rests on the plane (0.1 mm slop)
    assert z["/World/On"] == pytest.approx(r, abs=1e-4)
