"""Robot links against each other (sim.link_pairs, multibody_solver.step_systems): collisions between robots and
within one robot, restitution, contact events, against closed-form truths."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.sim import World, simulate
from rscene_addon.sim.articulated import ArticulatedSystem
from rscene_addon.sim.multibody_solver import step_systems
from rscene_addon.sim.link_contacts import WorldContacts
from tests.scenes import ALL, ground, header, obj, scene_from
from tests.unit.sim.link_robots import box_urdf, read_robot

G = 9.81



BALL = """<robot name="ball"><link name="ball"><inertial><mass value="1"/>
    <inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>"""

# a 1.0 x 0.4 x 0.2 block (top at z = 0.2) and a 0.6 m arm hinged at z = 0.6 above it through a light post
# (whose collision box overlaps both): the arm swings down about +y into the block, its grandparent (not
# adjacent), so only self-collision stops it
ARM_LEN, ARM_T, PIVOT, TOP = 0.6, 0.05, 0.6, 0.2
ARM_FLOATING = f"""<robot name="arm">
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="0.1" iyy="0.4" izz="0.4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><box size="1.0 0.4 0.2"/></geometry></collision></link>
  <link name="post"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.05 0.05 0.9"/></geometry></collision></link>
  <link name="arm"><inertial><origin xyz="{ARM_LEN / 2} 0 0"/><mass value="1"/>
    <inertia ixx="4e-4" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="{ARM_LEN / 2} 0 0"/>
      <geometry><box size="{ARM_LEN} {ARM_T} {ARM_T}"/></geometry></collision></link>
  <link name="tip"><inertial><mass value="0.01"/>
    <inertia ixx="1e-6" iyy="1e-6" izz="1e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="post"/><origin xyz="0 0 {PIVOT}"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
  <joint name="j2" type="continuous"><parent link="post"/><child link="arm"/><axis xyz="0 1 0"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="{ARM_LEN} 0 0"/></joint>
</robot>"""
# welded to the world (a URDF whose root link is "world" has a fixed base)
ARM = ARM_FLOATING.replace('<link name="base">', '<link name="world"/><joint name="ground" type="fixed">'
                           '<parent link="world"/><child link="base"/></joint><link name="base">')



def _elastic(m1, m2, v1, v2, e):
    """1-D collision with restitution e: momentum kept, separation speed e times the approach speed."""
    p = m1 * v1 + m2 * v2
    return (p + m2 * e * (v2 - v1)) / (m1 + m2), (p + m1 * e * (v1 - v2)) / (m1 + m2)


@pytest.mark.parametrize("m1, m2, e", [(2.0, 2.0, 1.0), (2.0, 5.0, 1.0), (3.0, 1.0, 0.5), (2.0, 2.0, 0.0)])
def test_floating_boxes_collide_head_on(tmp_path, m1, m2, e):
    # no gravity; A at 1.5 m/s into B at -0.5 m/s, 0.6 m apart: equal masses and e = 1 swap velocities
    dt, v1, v2 = 0.002, 1.5, -0.5
    a = ArticulatedSystem(read_robot(tmp_path, box_urdf(m1), "a.urdf"), dt=dt, gravity=(0, 0, 0), restitution=e,
                          name="A")
    b = ArticulatedSystem(read_robot(tmp_path, box_urdf(m2), "b.urdf"), dt=dt, gravity=(0, 0, 0), restitution=e,
                          name="B")
    a.set_state([0, 0, 0, 1, 0, 0, 0], [v1, 0, 0, 0, 0, 0])
    b.set_state([1.0, 0, 0, 1, 0, 0, 0], [v2, 0, 0, 0, 0, 0])
    for _ in range(300):
        step_systems([a, b], dt)
    w1, w2 = _elastic(m1, m2, v1, v2, e)
    assert a.u[0] == pytest.approx(w1, abs=1e-9) and b.u[0] == pytest.approx(w2, abs=1e-9)
    assert np.abs(np.r_[a.u[1:], b.u[1:]]).max() < 1e-12  # straight on: no sideways motion, no spin
    assert m1 * a.u[0] + m2 * b.u[0] == pytest.approx(m1 * v1 + m2 * v2, abs=1e-12)
    energy = a.kinetic_energy() + b.kinetic_energy()
    lost = 0.5 * m1 * m2 / (m1 + m2) * (1 - e * e) * (v1 - v2) ** 2
    assert energy == pytest.approx(0.5 * m1 * v1 ** 2 + 0.5 * m2 * v2 ** 2 - lost, rel=1e-12, abs=1e-12)
    # they touched once, face to face: one begin event, owned by the first system
    assert not b.events and len(a.events) == 1
    event = a.events[0]
    assert {event["body_a"], event["body_b"]} == {"A/body", "B/body"}
    assert event["speed"] == pytest.approx(v1 - v2)
    assert abs(event["normal"][0]) == pytest.approx(1.0)
    assert event["time"] == pytest.approx(0.6 / (v1 - v2), abs=2 * dt)
    if e == 0:  # inelastic: they stay face to face
        assert b.q[0] - a.q[0] == pytest.approx(0.4, abs=1e-4)


def _capsule_urdf(name, rpy, fixed, radius, length=1.0, z=0.0):
    link = f"""<link name="rod"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin rpy="{rpy}"/><geometry><capsule radius="{radius}" length="{length}"/></geometry>
    </collision></link>"""
    weld = (f'<link name="world"/><joint name="weld" type="fixed"><parent link="world"/><child link="rod"/>'
            f'<origin xyz="0 0 {z}"/></joint>') if fixed else ""
    return f'<robot name="{name}">{link}{weld}</robot>'


def test_crossing_capsules_rest_on_each_other_at_their_middles(tmp_path):
    # a capsule along y falls across a welded capsule along x: only their middles touch (the sample points
    # are the far-away cap centres), and it comes to rest at r1 + r2 above the lower axis
    dt, r1, r2 = 0.002, 0.05, 0.08
    lower = ArticulatedSystem(read_robot(tmp_path, _capsule_urdf("lower", "0 1.5707963267948966 0", True, r1,
                                                             z=0.5), "lower.urdf"), dt=dt, name="L")
    upper = ArticulatedSystem(read_robot(tmp_path, _capsule_urdf("upper", "1.5707963267948966 0 0", False, r2),
                                     "upper.urdf"), dt=dt, name="U")
    upper.set_state([0, 0, 0.8, 1, 0, 0, 0], np.zeros(6))
    for _ in range(600):
        step_systems([lower, upper], dt)
    assert upper.q[2] == pytest.approx(0.5 + r1 + r2, abs=1.5e-4)
    assert np.abs(upper.q[:2]).max() < 1e-9 and np.abs(upper.u).max() < 1e-6
    assert [(e["body_a"], e["body_b"]) for e in lower.events] == [("U/rod", "L/rod")]


def test_robots_whose_groups_are_masked_out_pass_through(tmp_path):
    dt = 0.002
    robot = read_robot(tmp_path, box_urdf())
    a = ArticulatedSystem(robot, dt=dt, gravity=(0, 0, 0), name="A", collision_group=2,
                          collision_mask=ALL ^ 4)
    b = ArticulatedSystem(robot, dt=dt, gravity=(0, 0, 0), name="B", collision_group=4, collision_mask=ALL)
    a.set_state([0, 0, 0, 1, 0, 0, 0], [1.0, 0, 0, 0, 0, 0])
    b.set_state([1.0, 0, 0, 1, 0, 0, 0], np.zeros(6))
    for _ in range(500):
        step_systems([a, b], dt)
    assert a.q[0] == pytest.approx(1.0) and a.u[0] == 1.0 and b.q[0] == 1.0
    assert not a.events and not b.events


def test_head_on_robots_in_a_scene_swap_velocities_and_report_the_event(tmp_path):
    """simulate(): two box robots meet at t = 0.6 m / 2 m/s = 0.3 s under the world's material (restitution
    1); the trajectory records the swapped velocities and one contact-begin event between the two links."""
    (tmp_path / "box.urdf").write_text(box_urdf())
    text = "\n".join(header(dt=0.002, gravity=(0, 0, 0), restitution=1.0, rest_threshold=1e-3) + [
        "articulated_resource box_res box box.urdf",
        "articulated /World/A box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=0,0,0,1,0,0,0 "
        "generalizedVelocity=1.5,0,0,0,0,0",
        "articulated /World/B box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=1,0,0,1,0,0,0 "
        "generalizedVelocity=-0.5,0,0,0,0,0",
    ]) + "\n"
    path = tmp_path / "scene.rscene"
    path.write_text(text)
    traj = simulate(rscene.read(str(path)), 1.0, 30)
    names = list(traj.names)
    ia, ib = names.index("/World/A/body"), names.index("/World/B/body")
    assert traj.linear_velocity[-1, ia] == pytest.approx([-0.5, 0, 0], abs=1e-9)
    assert traj.linear_velocity[-1, ib] == pytest.approx([1.5, 0, 0], abs=1e-9)
    assert len(traj.events) == 1
    event = traj.events[0]
    assert {event["body_a"], event["body_b"]} == {"/World/A/body", "/World/B/body"}
    assert event["time"] == pytest.approx(0.3, abs=0.004)
    assert event["frame"] == math.ceil(event["time"] * 30 - 1e-6)
    assert event["speed"] == pytest.approx(2.0) and event["impulse"] > 0
    arrays = traj.event_arrays()
    assert arrays["contact_body_a"].tolist() == [event["body_a"]]


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_ball_link_bounces_to_e_squared_of_its_drop_height(tmp_path, e):
    # dropped from 1 m (bottom above the ground): v = sqrt(2 g h) in, e v out, apex e^2 h; the world's
    # material sets e, the bounce events come at t1 = sqrt(2 h / g) and t1 + 2 e v / g
    dt, h = 0.001, 1.0
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False, restitution=e) + [ground()]))
    system = ArticulatedSystem(read_robot(tmp_path, BALL), dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, h + 0.1, 1, 0, 0, 0], np.zeros(6))
    t1 = math.sqrt(2 * h / G)
    t2 = t1 + 2 * e * math.sqrt(2 * G * h) / G
    heights = []
    for _ in range(int(round((t2 - 0.02) / dt))):
        system.step()
        world.step()
        heights.append(system.q[2] - 0.1)
    apex = max(heights[int(t1 / dt) + 20:])
    assert apex / h == pytest.approx(e * e, rel=0.005)
    assert min(heights) > -1e-4  # it never sinks past the slop
    # the same on the system's own flat ground with its own restitution (no world)
    alone = ArticulatedSystem(read_robot(tmp_path, BALL), dt=dt, ground_height=0.0, restitution=e)
    alone.set_state([0, 0, h + 0.1, 1, 0, 0, 0], np.zeros(6))
    for _ in range(int(round(t2 / dt)) + 20):
        alone.step()
    times = [ev["time"] for ev in system.events]
    assert len(times) == 1 and times[0] == pytest.approx(t1, abs=2 * dt)
    assert [ev["body_a"] for ev in system.events] == ["/World/Ground"]
    assert [ev["body_b"] for ev in system.events] == ["ball/ball"]
    assert [ev["time"] for ev in alone.events] == pytest.approx([t1, t2], abs=0.01)
    assert [ev["speed"] for ev in alone.events] == pytest.approx(
        [math.sqrt(2 * G * h), e * math.sqrt(2 * G * h)], rel=0.01)


def test_ball_link_bounces_like_a_rigid_ball_of_the_world(tmp_path):
    # the robot's contacts follow the world's solver: a ball link and the world's own ball, side by side,
    # bounce (e = 0.7) to the same heights at the same times
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False, restitution=0.7) + [
        ground(), obj("/World/Rigid", "sphere", pos=(2, 0, 1.1), radius=0.1, mass=1.0)]))
    system = ArticulatedSystem(read_robot(tmp_path, BALL), dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, 1.1, 1, 0, 0, 0], np.zeros(6))
    rigid = world.body_index("/World/Rigid")
    gap = []
    for _ in range(1000):
        system.step()
        world.step()
        gap.append(system.q[2] - world.state.position[rigid, 2])
    assert np.abs(gap).max() < 1e-9


def _arm(tmp_path, **kwargs):
    system = ArticulatedSystem(read_robot(tmp_path, ARM), dt=0.002, **kwargs)
    system.lock_joint("j1")
    system.set_joint_damping([0.0, 0.5])
    return system


def _resting_angle():
    """Arm angle at which its lower far edge touches the block top: 0.6 sin t + 0.025 cos t = 0.6 - 0.2."""
    a, b, c = ARM_LEN, ARM_T / 2, PIVOT - TOP
    return math.asin(c / math.hypot(a, b)) - math.atan2(b, a)


def test_self_collision_pairs_skip_parent_child_and_welded_links(tmp_path):
    system = _arm(tmp_path)
    pairs = system.self_pairs()
    index = {name: i for i, name in enumerate(system.link_names)}

    def ok(x, y):
        return bool(pairs[index[x], index[y]])

    assert pairs.shape == (5, 5) and np.array_equal(pairs, pairs.T)
    assert not ok("world", "base")  # welded to the world: one body
    assert not ok("base", "post") and not ok("post", "arm")  # across a joint
    assert not ok("arm", "tip")  # welded: one body
    assert not ok("post", "tip")  # the tip moves with the arm, whose parent is the post
    assert ok("base", "arm") and ok("base", "tip")
    system.ignore_collision_between("tip", "base")
    assert not system.self_pairs()[index["base"], index["tip"]]
    assert system.self_pairs()[index["base"], index["arm"]]
    system.set_collision_filter(2, ALL ^ 2, link="arm")  # its own group masked out: the arm still meets the
    assert system.self_pairs()[index["base"], index["arm"]]  # base (group 1), whose mask takes group 2
    system.set_collision_filter(1, ALL ^ 2, link="base")
    assert not system.self_pairs()[index["base"], index["arm"]]


def test_self_collision_stops_an_arm_on_its_own_base(tmp_path):
    # the overlapping post never pushes (adjacent links); the arm comes to rest with its lower far edge
    # on the block's top face, at the closed-form angle
    system = _arm(tmp_path)
    for _ in range(1500):
        system.step()
    angle = system.q[1]
    lowest = PIVOT - ARM_LEN * math.sin(angle) - ARM_T / 2 * math.cos(angle)
    assert lowest == pytest.approx(TOP, abs=2e-4)
    assert angle == pytest.approx(_resting_angle(), abs=1e-3)
    assert abs(system.u[1]) < 1e-3 and system.q[0] == 0.0
    assert {c["link"] for c in system.last_contacts} <= {"arm", "base"}
    assert {c["body"] for c in system.last_contacts} <= {"arm/arm", "arm/base"}
    assert len(system.events) >= 1
    assert {system.events[0]["body_a"], system.events[0]["body_b"]} == {"arm/arm", "arm/base"}


@pytest.mark.parametrize("how", ["mask", "ignore", "off"])
def test_excluded_arm_swings_through_its_base(tmp_path, how):
    system = _arm(tmp_path, self_collision=how != "off")
    if how == "mask":
        system.set_collision_filter(2, ALL, link="arm")
        system.set_collision_filter(1, ALL ^ 2, link="base")  # the base does not take group 2
    elif how == "ignore":
        system.ignore_collision_between("arm", "base")
    deepest = 0.0
    for _ in range(1500):
        system.step()
        deepest = max(deepest, system.q[1])
    assert deepest > math.pi / 2 + 0.3  # swung past hanging straight down, through the block
    assert not system.last_contacts and not system.events


def test_self_collision_on_a_floating_base_is_internal(tmp_path):
    # the same arm on a free-floating block without gravity, flung down at 4 rad/s: it is stopped at the
    # block's top face, and the contact impulses are internal: the velocity change they cause (this step's
    # velocities minus those of a twin without self-collision, from the same state) carries no linear or
    # angular momentum (spatial momentum is linear in the velocities at a fixed configuration)
    robot = read_robot(tmp_path, ARM_FLOATING)
    s = ArticulatedSystem(robot, dt=0.002, gravity=(0, 0, 0))
    twin = ArticulatedSystem(robot, dt=0.002, gravity=(0, 0, 0), self_collision=False)
    probe = ArticulatedSystem(robot, dt=0.002, gravity=(0, 0, 0))
    for system in (s, twin):
        system.lock_joint("j1")
    u = np.zeros(s.nv)
    u[-1] = 4.0
    s.set_state(s.get_generalized_coordinate(), u)
    deepest, biggest = 0.0, 0.0
    for _ in range(300):
        q0 = s.get_generalized_coordinate()
        twin.set_state(q0, s.get_generalized_velocity())
        s.step()
        twin.step()
        probe.set_state(q0, s.u - twin.u)
        momentum = sum(inertia @ v for inertia, v in zip(probe.inertia, probe.vel))
        assert np.abs(momentum).max() < 1e-12
        biggest = max(biggest, float(np.abs(s.u - twin.u).max()))
        deepest = max(deepest, s.q[-1])
    assert biggest > 1.0 and len(s.events) >= 1
    assert deepest == pytest.approx(_resting_angle(), abs=2e-3)  # it hit the block and went no further
