"""Robot links against the rigid world (sim.link_contacts): heights, momentum, restitution, friction, height
maps, collision groups, contact events, against closed-form truths."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.sim import World, simulate
from rscene_addon.sim.articulated import ArticulatedSystem
from rscene_addon.sim.link_contacts import WorldContacts
from tests.scenes import ALL, ground, header, obj, scene_from
from tests.unit.sim.link_robots import BOX_M, box_urdf, read_robot

G = 9.81



# a 4 kg body (no collision of its own) on four 5 cm sphere feet at (+-0.2, +-0.15, -0.1)
FEET = """<robot name="table">
  <link name="body"><inertial><mass value="4"/>
    <inertia ixx="0.05" iyy="0.08" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
""" + "".join(f"""  <link name="foot{k}"><inertial><mass value="0.1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="leg{k}" type="fixed"><parent link="body"/><child link="foot{k}"/>
    <origin xyz="{sx * 0.2} {sy * 0.15} -0.1"/></joint>
""" for k, (sx, sy) in enumerate(((-1, -1), (-1, 1), (1, -1), (1, 1)))) + "</robot>"



def _run(system, world, steps):
    for _ in range(steps):
        system.step()
        world.step()
        assert np.all(np.isfinite(system.q)) and np.all(np.isfinite(world.state.position))


def test_box_robot_settles_on_a_static_box_not_the_ground(tmp_path):
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [
        ground(), obj("/World/Table", "box", pos=(0, 0, 0.25), scale=(1, 1, 0.5), mode="static")]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, environment=WorldContacts(world))
    tilt = 0.3
    system.set_state([0.05, 0, 0.9, math.cos(tilt / 2), math.sin(tilt / 2), 0, 0], np.zeros(6))
    _run(system, world, 1200)
    # lying flat on its smallest extent on the table top (0.5): centre at 0.5 + 0.1
    assert system.q[2] == pytest.approx(0.6, abs=2e-3)
    assert abs(abs(system.q[3]) - 1.0) < 1e-4  # flat again
    assert np.abs(system.u).max() < 1e-3
    assert {c["body"] for c in system.last_contacts} == {"/World/Table"}


@pytest.mark.parametrize("prim, keys, top", [
    ("sphere", {"pos": (0, 0, 0.3), "radius": 0.3}, 0.6),
    ("capsule", {"pos": (0, 0, 0.3), "radius": 0.2, "height": 0.2}, 0.6),  # apex: 0.3 + 0.1 + 0.2
    ("cylinder", {"pos": (0, 0, 0.25), "radius": 0.3, "height": 0.5}, 0.5),
])
def test_box_robot_rests_on_static_round_shapes(tmp_path, prim, keys, top):
    # flat on the apex of a sphere or capsule cap (stable: its centre of mass is 0.1 above the contact,
    # less than the radius) or on a cylinder's top disk
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [
        obj("/World/Support", prim, mode="static", **keys)]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, top + 0.2, 1, 0, 0, 0], np.zeros(6))
    _run(system, world, 600)
    assert system.q[2] == pytest.approx(top + 0.1, abs=2e-3)
    assert np.abs(system.u).max() < 1e-3


def _robot_hits_crate(tmp_path, crate_mass: float, v0: float, steps: int, restitution: float = 0.0):
    """Without gravity or friction, the box robot at ``v0`` along +x toward a resting crate 1 m away,
    run ``steps`` steps of 2 ms. Returns the robot, the world and the crate's velocity."""
    dt = 0.002
    crate = obj("/World/Crate", "box", pos=(1.0, 0, 0), scale=(0.3, 0.5, 0.5), mass=crate_mass)
    world = World.from_scene(scene_from(header(dt=dt, gravity=(0, 0, 0), friction=0.0, restitution=restitution)
                                        + [crate]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, gravity=(0, 0, 0),
                               environment=WorldContacts(world))
    system.set_state([0, 0, 0, 1, 0, 0, 0], [v0, 0, 0, 0, 0, 0])
    _run(system, world, steps)
    return system, world, world.state.linear_velocity[world.body_index("/World/Crate")]


def test_link_pushing_a_dynamic_box_exchanges_momentum(tmp_path):
    # no gravity, no friction: a 2 kg box robot at 2 m/s hits a resting 3 kg crate; the contact is
    # inelastic, so both leave at the common velocity m1 v0 / (m1 + m2) = 0.8 m/s, momentum kept
    m1, m2, v0 = BOX_M, 3.0, 2.0
    system, world, v_crate = _robot_hits_crate(tmp_path, m2, v0, 500)
    assert v_crate[0] == pytest.approx(m1 * v0 / (m1 + m2), rel=1e-6)
    assert system.u[0] == pytest.approx(m1 * v0 / (m1 + m2), rel=1e-6)
    assert m1 * system.u[:3] + m2 * v_crate == pytest.approx([m1 * v0, 0, 0], abs=1e-9)
    # touching, not overlapping: the robot's front face is at the crate's back face
    front, back = system.q[0] + 0.2, world.body_pose("/World/Crate")[0][0] - 0.15
    assert front == pytest.approx(back, abs=1e-3)


@pytest.mark.parametrize("e", [1.0, 0.5])
def test_link_bounces_off_a_dynamic_box_with_the_world_restitution(tmp_path, e):
    # no gravity, no friction: a 2 kg box robot at 2 m/s hits a resting 2 kg crate; the world's material
    # restitution e gives v_robot = (1 - e) v0 / 2 and v_crate = (1 + e) v0 / 2 (equal masses; e = 1 swaps)
    m, v0 = BOX_M, 2.0
    system, world, v_crate = _robot_hits_crate(tmp_path, m, v0, 400, restitution=e)
    assert system.u[0] == pytest.approx((1 - e) * v0 / 2, abs=1e-9)
    assert v_crate == pytest.approx([(1 + e) * v0 / 2, 0, 0], abs=1e-9)
    energy = 0.5 * m * (system.u[0] ** 2 + v_crate[0] ** 2)
    assert energy == pytest.approx(0.5 * m * v0 ** 2 * (1 + e * e) / 2, rel=1e-9)
    assert [(ev["body_a"], ev["body_b"]) for ev in system.events] == [("/World/Crate", "box/body")]


def _crate_overlapping_the_robot(tmp_path, overlap, dt, erp, m2):
    """No gravity, no friction: a resting crate of mass ``m2`` made overlapping the resting box robot's front
    face by ``overlap`` along x, one step run. Returns the robot, the world and the crate's index."""
    crate = obj("/World/Crate", "box", pos=(0.35 - overlap, 0, 0), scale=(0.3, 1.0, 1.0), mass=m2)
    world = World.from_scene(scene_from(header(dt=dt, gravity=(0, 0, 0), friction=0.0, sleeping=False)
                                        + [crate]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, gravity=(0, 0, 0),
                               environment=WorldContacts(world, erp=erp))
    system.set_state([0, 0, 0, 1, 0, 0, 0], np.zeros(6))
    _run(system, world, 1)
    return system, world, world.body_index("/World/Crate")


@pytest.mark.parametrize("overlap, speed", [(0.01, 0.99), (0.035, 3.0)])
def test_an_overlapping_dynamic_box_is_pushed_out_no_faster_than_the_cap(tmp_path, overlap, speed):
    # the correction of a shallow overlap, erp x (overlap - 0.1 mm slop) / dt, becomes the contacts' relative
    # speed, capped at 3 m/s as Box2D v3 caps its push-out (contactPushMaxVelocity): 0.99 m/s for 1 cm,
    # 3 m/s (not 3.49) for 3.5 cm. Momentum stays zero: the crate takes m1 / (m1 + m2) of it, the robot the
    # rest, backwards
    dt, erp, m1, m2 = 0.002, 0.2, BOX_M, 3.0
    system, world, crate = _crate_overlapping_the_robot(tmp_path, overlap, dt, erp, m2)
    assert world.state.linear_velocity[crate] == pytest.approx([m1 / (m1 + m2) * speed, 0, 0], abs=1e-9)
    assert system.u == pytest.approx([-m2 / (m1 + m2) * speed, 0, 0, 0, 0, 0], abs=1e-9)


def test_a_deep_overlap_with_a_dynamic_box_moves_both_apart_without_speed(tmp_path):
    # 10 cm, deeper than Bullet's 4 cm split-impulse threshold: corrected by split impulse on both sides,
    # positions only. In one step they part by erp x (overlap - slop), the crate m1 / (m1 + m2) of it, the
    # robot the rest; neither moves afterwards (no velocity, no energy)
    dt, erp, m1, m2, overlap = 0.002, 0.2, BOX_M, 3.0, 0.1
    system, world, crate = _crate_overlapping_the_robot(tmp_path, overlap, dt, erp, m2)
    apart = erp * (overlap - 1e-4)
    assert world.state.linear_velocity[crate] == pytest.approx([0, 0, 0], abs=1e-9)
    assert system.u == pytest.approx(np.zeros(6), abs=1e-9)
    assert world.state.position[crate] == pytest.approx([0.35 - overlap + m1 / (m1 + m2) * apart, 0, 0], abs=1e-9)
    assert system.q[:3] == pytest.approx([-m2 / (m1 + m2) * apart, 0, 0], abs=1e-9)


def test_sliding_link_stops_after_the_coulomb_distance(tmp_path):
    # v0^2 / (2 mu g) on a static box's top face
    dt, mu, v0 = 0.001, 0.5, 1.0
    world = World.from_scene(scene_from(header(dt=dt, friction=mu, sleeping=False) + [
        obj("/World/Slab", "box", pos=(0, 0, 0.25), scale=(4, 2, 0.5), mode="static")]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, environment=WorldContacts(world))
    system.set_state([-1.0, 0, 0.6, 1, 0, 0, 0], [v0, 0, 0, 0, 0, 0])
    _run(system, world, 400)
    assert abs(system.u[0]) < 1e-6
    assert system.q[0] + 1.0 == pytest.approx(v0 * v0 / (2 * mu * G), rel=0.02)


def test_robot_on_a_dynamic_box_presses_it_onto_the_ground(tmp_path):
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt) + [
        ground(), obj("/World/Crate", "box", pos=(0, 0, 0.25), scale=(0.8, 0.8, 0.5), mass=3.0)]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, 0.75, 1, 0, 0, 0], np.zeros(6))
    crate = world.body_index("/World/Crate")
    support = []
    for k in range(800):
        system.step()
        world.step()
        if k >= 200:  # landed: on average the contacts carry the robot's weight, step by step
            support.append(sum(c["impulse"][0] * c["normal"][2] for c in system.last_contacts
                               if c["body"] == "/World/Crate"))
    assert np.mean(support) == pytest.approx(BOX_M * G * dt, rel=0.01)
    assert world.body_pose("/World/Crate")[0][2] == pytest.approx(0.25, abs=1e-4)
    # sunk no deeper than the world's own contacts allow (its 0.1 mm slop)
    assert 0.6 - 1.5e-4 < system.q[2] <= 0.6 + 1e-9
    assert np.linalg.norm(world.state.linear_velocity[crate]) < 1e-3


def test_plate_rests_on_a_static_sphere(tmp_path):
    # only the sphere (a world point with a radius) can see the plate's face: no plate corner is near it
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [
        obj("/World/Ball", "sphere", pos=(0, 0, 0.5), radius=0.2, mode="static")]))
    plate = read_robot(tmp_path, box_urdf(1.0, (1.0, 1.0, 0.05), "plate"))
    system = ArticulatedSystem(plate, dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, 0.8, 1, 0, 0, 0], np.zeros(6))
    _run(system, world, 600)
    assert system.q[2] == pytest.approx(0.7 + 0.025, abs=2e-3)
    assert abs(system.q[0]) < 1e-6 and abs(system.q[1]) < 1e-6


def _terrain(nx, ny, xs, ys, heights, path="/World/Terrain"):
    text = ",".join(repr(float(h)) for h in np.asarray(heights).ravel())
    return f"terrain_region {path} {nx} {ny} {xs} {ys} 0 0 0 heights={text}"


def test_feet_on_a_height_map_step_stand_at_the_step_heights(tmp_path):
    # nodes every 0.2 m from x = -2; z = 0 up to x = -0.2, z = 0.1 from x = 0 (one sloped cell between)
    nx, ny = 21, 11
    xs = np.linspace(-2, 2, nx)
    heights = np.tile(np.where(xs >= 0, 0.1, 0.0), (ny, 1))
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [_terrain(nx, ny, 4, 2, heights)]))
    system = ArticulatedSystem(read_robot(tmp_path, FEET), dt=dt, environment=WorldContacts(world))
    system.set_state([-0.1, 0, 0.3, 1, 0, 0, 0], np.zeros(6))  # feet above x = -0.3 and x = 0.1
    _run(system, world, 1000)
    poses = system.link_poses()
    for k in range(4):
        x, _, z = poses[f"foot{k}"][:3, 3]
        expected = 0.1 if x > 0 else 0.0
        assert -0.4 < x < -0.2 or 0.0 < x < 0.2  # on a flat part
        assert z - 0.05 == pytest.approx(expected, abs=2e-3)
    assert np.abs(system.u).max() < 1e-3


def test_collision_group_and_mask_in_a_scene(tmp_path):
    """An articulated record whose mask leaves out the table's group falls through it onto the ground;
    the same record with the default mask stays on the table. Both runs are deterministic."""
    (tmp_path / "box.urdf").write_text(box_urdf())

    def run(mask):
        text = "\n".join(header(dt=0.002, sleeping=False) + [
            ground(),
            obj("/World/Table", "box", pos=(0, 0, 0.25), scale=(1, 1, 0.5), mode="static", group=2),
            "articulated_resource box_res box box.urdf",
            (f"articulated /World/Robot box_res 0 0 0 1 0 0 0 true true collisionGroup=1 "
             f"collisionMask={mask} generalizedCoordinate=0,0,0.8,1,0,0,0"),
        ]) + "\n"
        path = tmp_path / "scene.rscene"
        path.write_text(text)
        return simulate(rscene.read(str(path)), 1.0, 30)

    through = run(ALL ^ 2)
    on_top = run(ALL)
    i = list(through.names).index("/World/Robot/body")
    assert through.position[-1, i, 2] == pytest.approx(0.1, abs=2e-3)
    assert on_top.position[-1, i, 2] == pytest.approx(0.6, abs=2e-3)
    # the landing is a contact-begin event of the link with what it lands on, after a fall of 0.7 m or 0.2 m
    for traj, support, fall in ((through, "/World/Ground", 0.7), (on_top, "/World/Table", 0.2)):
        first = traj.events[0]
        assert (first["body_a"], first["body_b"]) == (support, "/World/Robot/body")
        assert first["time"] == pytest.approx(math.sqrt(2 * fall / G), abs=0.005)
        assert first["speed"] == pytest.approx(math.sqrt(2 * G * fall), rel=0.01)
        assert {e["body_a"] for e in traj.events} == {support}
    again = run(ALL)
    assert np.array_equal(on_top.position, again.position)
    assert np.array_equal(on_top.quaternion, again.quaternion)


def test_mesh_link_rests_on_a_static_box(tmp_path):
    # an OBJ unit cube scaled to 0.3 x 0.3 x 0.2, dropped tilted: it lands flat on the table top (0.5)
    corners = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    quads = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    (tmp_path / "cube.obj").write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners)
                                       + "".join(f"f {a} {b} {c} {d}\n" for a, b, c, d in quads))
    text = box_urdf().replace('<box size="0.4 0.3 0.2"/>', '<mesh filename="cube.obj" scale="0.3 0.3 0.2"/>')
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [
        obj("/World/Table", "box", pos=(0, 0, 0.25), scale=(1, 1, 0.5), mode="static")]))
    system = ArticulatedSystem(read_robot(tmp_path, text), dt=dt, environment=WorldContacts(world))
    assert len(system._contact_local[0]) == 8
    system.set_state([0, 0, 0.8, math.cos(0.1), math.sin(0.1), 0, 0], np.zeros(6))
    _run(system, world, 800)
    assert system.q[2] == pytest.approx(0.5 + 0.1, abs=2e-3)


SHELF = """<robot name="shelf"><link name="world"/>
  <link name="board"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
  <joint name="weld" type="fixed"><parent link="world"/><child link="board"/><origin xyz="0 0 0.5"/></joint>
</robot>"""


def test_dynamic_ball_comes_to_rest_on_a_robot_link(tmp_path):
    # the world's ball falls onto a welded board (top at 0.55): the robot holds it up, though it has
    # no degrees of freedom at all
    dt = 0.002
    world = World.from_scene(scene_from(header(dt=dt) + [
        ground(), obj("/World/Ball", "sphere", pos=(0.1, 0, 1.0), radius=0.1, mass=1.0)]))
    system = ArticulatedSystem(read_robot(tmp_path, SHELF), dt=dt, environment=WorldContacts(world))
    assert system.nv == 0
    _run(system, world, 500)
    assert world.body_pose("/World/Ball")[0] == pytest.approx([0.1, 0, 0.65], abs=2e-3)


def test_friction_acts_on_both_sides(tmp_path):
    # a 3 kg crate sliding at 1 m/s on frictionless ice carries a resting 2 kg robot box (mu 0.8 between
    # them): friction drags both to the common velocity m_c v0 / (m_c + m_r) = 0.6 m/s, keeping the
    # horizontal momentum
    dt, m_c, v0 = 0.002, 3.0, 1.0
    world = World.from_scene(scene_from(header(dt=dt, sleeping=False) + [
        "contact_material ice default 0 0 0.001 0 0.001 0 0",
        ground(cmat="ice"), obj("/World/Crate", "box", pos=(0, 0, 0.25), scale=(1.2, 0.8, 0.5), mass=m_c)]))
    system = ArticulatedSystem(read_robot(tmp_path, box_urdf()), dt=dt, environment=WorldContacts(world))
    system.set_state([0, 0, 0.6, 1, 0, 0, 0], np.zeros(6))
    crate = world.body_index("/World/Crate")
    world.set_velocity("/World/Crate", (v0, 0, 0))
    _run(system, world, 250)
    v_crate = world.state.linear_velocity[crate, 0]
    assert system.u[0] == pytest.approx(m_c * v0 / (m_c + BOX_M), abs=2e-3)
    assert v_crate == pytest.approx(m_c * v0 / (m_c + BOX_M), abs=2e-3)
    assert BOX_M * system.u[0] + m_c * v_crate == pytest.approx(m_c * v0, rel=1e-6)
