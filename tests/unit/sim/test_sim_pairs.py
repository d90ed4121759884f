"""Resting heights for every shape pair (closed-form), materials and sleeping."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sim import World, simulate
from rscene_addon.base.spatial import quat_from_axis_angle, quat_rotate
from tests.scenes import ground, header, obj, scene_from

LYING_X = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)  # local z turned onto world x
LYING_Y = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)  # local z turned onto world y
YAW45 = (math.cos(math.pi / 8), 0.0, 0.0, math.sin(math.pi / 8))


def test_resting_heights_of_shape_pairs():
    # (object lines, name of the body to check, its expected resting height)
    cases = [
        ([obj("/World/CapsuleFlat", "capsule", pos=(0, 0, 0.3), quat=LYING_X, radius=0.1, height=0.5)],
         "/World/CapsuleFlat", 0.1),
        ([obj("/World/CylSide", "cylinder", pos=(2, 0, 0.5), quat=LYING_Y, radius=0.2, height=0.3)],
         "/World/CylSide", 0.2),
        ([obj("/World/CylUp", "cylinder", pos=(4, 0, 0.5), radius=0.2, height=0.3)], "/World/CylUp", 0.15),
        ([obj("/World/CapA", "capsule", pos=(6, 0, 0.1), quat=LYING_X, radius=0.1, height=0.5),
          obj("/World/CapB", "capsule", pos=(6, 0, 0.5), quat=LYING_Y, radius=0.1, height=0.5)], "/World/CapB", 0.3),
        ([obj("/World/Base", "box", pos=(0, 3, 0.25), scale=(0.5, 0.5, 0.5), mode="static"),
          obj("/World/TopBox", "box", pos=(0, 3, 0.8), quat=YAW45, scale=(0.3, 0.3, 0.3))], "/World/TopBox", 0.65),
        ([obj("/World/Base2", "box", pos=(2, 3, 0.25), scale=(0.5, 0.5, 0.5), mode="static"),
          obj("/World/SphOnBox", "sphere", pos=(2.1, 3.1, 0.9), radius=0.15)], "/World/SphOnBox", 0.65),
        ([obj("/World/Base3", "box", pos=(4, 3, 0.25), scale=(0.5, 0.5, 0.5), mode="static"),
          obj("/World/CapOnBox", "capsule", pos=(4, 3, 0.8), quat=LYING_X, radius=0.05, height=0.3)],
         "/World/CapOnBox", 0.55),
        ([obj("/World/Base4", "box", pos=(6, 3, 0.25), scale=(0.5, 0.5, 0.5), mode="static"),
          obj("/World/CylOnBox", "cylinder", pos=(6, 3, 0.9), radius=0.1, height=0.2)], "/World/CylOnBox", 0.6),
        ([obj("/World/Drum", "cylinder", pos=(0, 6, 0.2), quat=LYING_Y, radius=0.2, height=1.0, mode="static"),
          obj("/World/SphOnDrum", "sphere", pos=(0, 6, 0.8), radius=0.1)], "/World/SphOnDrum", 0.5),
        ([obj("/World/Ball1", "sphere", pos=(2, 6, 0.2), radius=0.2, mode="static"),
          obj("/World/Ball2", "sphere", pos=(2, 6, 0.7), radius=0.1)], "/World/Ball2", 0.5),
        ([obj("/World/Pole", "capsule", pos=(4, 6, 0.4), radius=0.1, height=0.6, mode="static"),
          obj("/World/SphOnPole", "sphere", pos=(4, 6, 1.2), radius=0.1)], "/World/SphOnPole", 0.9),
    ]
    lines = header(dt=0.004) + [ground()] + [line for case in cases for line in case[0]]
    tr = simulate(scene_from(lines), 1.5, 10)
    names = tr.names.tolist()
    for _, name, z in cases:
        i = names.index(name)
        assert tr.position[-1, i, 2] == pytest.approx(z, abs=1e-3), name
        assert np.linalg.norm(tr.linear_velocity[-1, i]) < 1e-3, name


def _slope(angle_deg, lines_extra, **hdr):
    th = math.radians(angle_deg)
    q = quat_from_axis_angle([0.0, 1.0, 0.0], th)
    slab = -quat_rotate(q, np.array([0.0, 0.0, 0.5]))
    lines = header(dt=0.002, sleeping=False, **hdr) + [
        obj("/World/Slope", "box", pos=slab, quat=q, scale=(20, 4, 1), mode="static")]
    for k, (name, cmat) in enumerate(lines_extra):
        at = quat_rotate(q, np.array([0.0, -1.0 + k, 0.1]))
        lines.append(obj(name, "box", pos=at, quat=q, scale=(0.2, 0.2, 0.2), cmat=cmat))
    return lines


def test_contact_material_pair_overrides_the_default():
    lines = _slope(20.0, [("/World/Rubber", "default"), ("/World/Ice", "ice")], friction=0.8)
    lines.insert(4, "contact_material default ice 0.05 0 0.001 0.05 0.001 0 0")
    tr = simulate(scene_from(lines), 0.5, 10)
    moved = np.linalg.norm(tr.position[-1] - tr.position[0], axis=1)
    speed = np.linalg.norm(tr.linear_velocity[-1], axis=1)
    th = math.radians(20.0)
    assert moved[0] < 1e-4  # mu 0.8 > tan 20 deg: sticks
    assert speed[1] == pytest.approx(9.81 * (math.sin(th) - 0.05 * math.cos(th)) * 0.5, rel=0.01)


def test_static_friction_holds_below_its_velocity_threshold():
    # tan(25 deg) = 0.47: above the dynamic coefficient 0.3, below the static one 0.6
    lines = _slope(25.0, [("/World/Box", "default")], friction=0.3, static_friction=0.6, static_threshold=0.01)
    world = World.from_scene(scene_from(lines))
    for _ in range(250):
        world.step()
    assert np.linalg.norm(world.state.linear_velocity[1]) < 1e-6  # static friction holds it
    world.set_velocity("/World/Box", quat_rotate(world.state.quaternion[1], np.array([0.5, 0.0, 0.0])))
    for _ in range(250):
        world.step()
    th = math.radians(25.0)
    v = np.linalg.norm(world.state.linear_velocity[1])
    # once sliding, the dynamic coefficient applies: it accelerates from 0.5 m/s
    assert v == pytest.approx(0.5 + 9.81 * (math.sin(th) - 0.3 * math.cos(th)) * 0.5, rel=0.01)


def test_sleeping_follows_the_solver_record_and_a_hit_wakes_the_body():
    def world(enabled):
        lines = header(dt=0.004, sleeping=enabled, solver="sleepingQuietSteps=5") + [
            ground(), obj("/World/Box", "box", pos=(0, 0, 0.5)),
            obj("/World/Ball", "sphere", pos=(0.2, 0.1, 4.0), radius=0.1, mass=5.0)]
        return World.from_scene(scene_from(lines))

    w = world(True)
    asleep = []
    for _ in range(400):
        w.step()
        asleep.append(bool(w.state.sleeping[1]))
    asleep = np.array(asleep)
    first_sleep = int(np.argmax(asleep))
    assert asleep[first_sleep] and first_sleep < 20  # resting from the start: asleep after the quiet steps
    impact = int(round(math.sqrt(2 * 2.9 / 9.81) / 0.004))  # the ball falls 2.9 m onto the box
    assert asleep[first_sleep:impact - 5].all()
    assert not asleep[impact - 5:impact + 10].all()  # woken by the hit
    assert any({e["body_a"], e["body_b"]} == {"/World/Box", "/World/Ball"} for e in w.events)
    w = world(False)
    for _ in range(100):
        w.step()
    assert not w.state.sleeping.any()


def test_a_settled_scene_takes_the_idle_step_and_matches_the_full_step(monkeypatch):
    """Once everything sleeps a step only advances time; poses, velocities, events and the wake-up by
    a new velocity are bit-identical to the full step's."""
    def run(idle_allowed):
        lines = header(dt=0.004, solver="sleepingQuietSteps=5") + [
            ground(), obj("/World/Box", "box", pos=(0, 0, 0.2)), obj("/World/Top", "box", pos=(0.05, 0, 0.7))]
        w = World.from_scene(scene_from(lines))
        if not idle_allowed:
            monkeypatch.setattr(w, "_idle", lambda: False)
        idle_steps, poses = 0, []
        for k in range(400):
            if k == 300:
                w.set_velocity("/World/Top", (0.5, 0.0, 0.0))
            idle_steps += w._idle()
            w.step()
            poses.append(np.concatenate((w.state.position.ravel(), w.state.quaternion.ravel(),
                                         w.state.linear_velocity.ravel())))
        return np.array(poses), idle_steps, w

    fast, n_idle, wf = run(True)
    full, n_none, wl = run(False)
    assert n_none == 0 and n_idle > 100  # the stack slept before the push
    assert np.array_equal(fast, full)
    assert wf.time == wl.time
    assert [(e["time"], e["body_a"], e["body_b"]) for e in wf.events] == \
        [(e["time"], e["body_a"], e["body_b"]) for e in wl.events]
    assert not np.array_equal(fast[299], fast[-1])  # the push woke the top box: it moved


def test_a_world_of_static_bodies_only_takes_the_idle_step_as_the_full_step(monkeypatch):
    """A world of static bodies only (the ground beside robots) is idle without a look at its bodies; a
    velocity, a force and a torque set on its ground between steps end as the full step leaves them, bit for
    bit (a negative zero included)."""
    def run(idle_allowed):
        w = World.from_scene(scene_from(header(dt=0.004, sleeping=False) + [ground()]))
        if not idle_allowed:
            monkeypatch.setattr(w, "_idle", lambda: False)
        out, idle = [], []
        for k in range(5):
            if k == 2:
                w.state.linear_velocity[0] = (0.5, 0.0, 0.0)
                w.state.angular_velocity[0] = (0.0, 0.0, 1.0)
                w.external_force[0] = (1.0, 2.0, 3.0)
            if k == 3:  # one array at a time, and a negative zero (bytes not all zero: the idle step fills it)
                w.external_torque[0] = (0.0, -0.0, 4.0)
                w.state.linear_velocity[0] = (-0.0, 0.0, 0.0)
            idle.append(w._idle())
            w.step()
            out.append(np.concatenate((w.state.position.ravel(), w.state.quaternion.ravel(),
                                       w.state.linear_velocity.ravel(), w.state.angular_velocity.ravel(),
                                       w.external_force.ravel(), w.external_torque.ravel(), [w.time])))
        return np.array(out), idle

    fast, idle = run(True)
    full, none = run(False)
    assert all(idle) and not any(none)
    assert np.array_equal(fast, full)
    assert not np.signbit(fast).any()  # (all values here are >= 0) no negative zero left behind


def test_velocity_sweeps_stay_within_the_record_and_the_budget():
    """Sweeps stop at min(iterations, velocity_iterations): the record's count caps the budget."""
    def sweeps(iterations):
        lines = header(dt=1 / 240, sleeping=False, iterations=iterations) + [ground()] + [
            obj(f"/World/B{i}", "box", pos=(0.02 * i, 0, 0.3 + 0.45 * i), quat=YAW45, scale=(0.4, 0.4, 0.4))
            for i in range(4)]
        world = World.from_scene(scene_from(lines))
        done = []
        for _ in range(240):
            world.step()
            done.append(world.last_iterations)
        return world, max(done)

    world, most = sweeps(80)
    assert world.model.solver.iterations == 80
    assert 0 < most <= world.model.solver.velocity_iterations < 80
    _, most = sweeps(6)
    assert most == 6
