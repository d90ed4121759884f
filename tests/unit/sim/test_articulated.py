"""Articulated-system dynamics (sim.articulated) against closed-form and independently computed truths; the
stepping truths run on both backends (``sim_backend``: the numba kernels must meet the same truths)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

from rscene_addon.formats import urdf
from rscene_addon.robots.kinematics import jacobian
from rscene_addon.sim.articulated import ArticulatedSystem
from tests.corpus import require_corpus

G = 9.81
CARTPOLE = "/work/shared/corpus/urdf/raisimTech-raisim2Lib/rsc/cartPole/cartpole.urdf"


def _robot(tmp_path, text, name="robot.urdf"):
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as fh:
        fh.write(text)
    return urdf.read_robot(path)


def _box_inertia(m, sx, sy, sz):
    return (m * (sy * sy + sz * sz) / 12, m * (sx * sx + sz * sz) / 12, m * (sx * sx + sy * sy) / 12)


# a physical pendulum: a 0.04 x 0.04 x 1.0 box of 2 kg hanging from a y-axis pivot at its top end
PEND_M, PEND_L, PEND_W = 2.0, 1.0, 0.04
_IXX, _IYY, _IZZ = _box_inertia(PEND_M, PEND_W, PEND_W, PEND_L)
PENDULUM = f"""<robot name="pendulum">
  <link name="world"/>
  <link name="rod">
    <inertial><origin xyz="0 0 {-PEND_L / 2}"/><mass value="{PEND_M}"/>
      <inertia ixx="{_IXX}" iyy="{_IYY}" izz="{_IZZ}" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 {-PEND_L / 2}"/>
      <geometry><box size="{PEND_W} {PEND_W} {PEND_L}"/></geometry></collision>
  </link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="rod"/>
    <origin xyz="0 0 2"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
</robot>"""

DOUBLE = """<robot name="double">
  <link name="world"/>
  <link name="a"><inertial><origin xyz="0.1 0 -0.3" rpy="0.3 0.2 0.1"/><mass value="1.5"/>
    <inertia ixx="0.05" iyy="0.04" izz="0.02" ixy="0.003" ixz="0.001" iyz="0.002"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.05 -0.25"/><mass value="0.8"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="world"/><child link="a"/><origin xyz="0 0 1"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="j2" type="continuous"><parent link="a"/><child link="b"/>
    <origin xyz="0.1 0 -0.6" rpy="0 0 0.4"/>
    <axis xyz="1 1 0"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0 0 -0.5"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>"""

# floating base with a spherical joint and a revolute joint: every joint kind but planar
TREE = """<robot name="tree">
  <link name="torso"><inertial><origin xyz="0.02 0 0"/><mass value="3"/>
    <inertia ixx="0.1" iyy="0.2" izz="0.15" ixy="0.01" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><inertial><origin xyz="0 0 -0.2"/><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hand"><inertial><origin xyz="0 0 -0.1"/><mass value="0.3"/>
    <inertia ixx="0.002" iyy="0.002" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0.05 0 0"/><mass value="0.2"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="spherical"><parent link="torso"/><child link="arm"/>
    <origin xyz="0.2 0 0"/></joint>
  <joint name="elbow" type="revolute"><parent link="arm"/><child link="hand"/><origin xyz="0 0 -0.4"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
  <joint name="weld" type="fixed"><parent link="hand"/><child link="tip"/><origin xyz="0 0 -0.2"/></joint>
</robot>"""


def _random_state(system, rng):
    q = system.get_generalized_coordinate()
    robot = system.robot
    for name, sl in robot.gc_slices().items():
        kind = "floating" if name == "" else robot.joints[name].type
        if kind == "floating":
            q[sl] = np.concatenate([rng.normal(size=3), rng.normal(size=4)])
        elif kind == "spherical":
            q[sl] = rng.normal(size=4)
        else:
            q[sl] = rng.uniform(-0.8, 0.8, size=sl.stop - sl.start)
    system.set_state(q, rng.normal(size=system.nv))


def _link_kinetic_energy(system):
    """Sum over links of m v_com^2 / 2 + w^T I w / 2 from the (independent) robots.kinematics Jacobian."""
    robot, q, u = system.robot, system.q, system.u
    total = 0.0
    for name, link in robot.links.items():
        if link.inertial is None or link.inertial.mass <= 0:
            continue
        jac = jacobian(robot, q, name, link.inertial.origin[:3, 3], system.base)
        v, w = jac[:3] @ u, jac[3:] @ u
        from rscene_addon.robots.kinematics import frame_transform
        rot = frame_transform(robot, q, name, system.base)[:3, :3] @ link.inertial.origin[:3, :3]
        inertia = rot @ link.inertial.inertia @ rot.T
        total += 0.5 * link.inertial.mass * v @ v + 0.5 * w @ inertia @ w
    return total


def _period(times, angles):
    """Mean period from upward zero crossings (linear interpolation)."""
    s = np.sign(angles)
    idx = np.nonzero((s[:-1] < 0) & (s[1:] >= 0))[0]
    cross = times[idx] - angles[idx] * (times[idx + 1] - times[idx]) / (angles[idx + 1] - angles[idx])
    return float(np.mean(np.diff(cross)))


def _swing(system, q0, steps, index=0):
    q = system.get_generalized_coordinate()
    q[index] = q0
    system.set_state(q, np.zeros(system.nv))
    out = np.zeros(steps + 1)
    out[0] = system.q[index]
    for k in range(steps):
        system.step()
        out[k + 1] = system.q[index]
    return np.arange(steps + 1) * system.dt, out


def test_physical_pendulum_small_angle_period(tmp_path, sim_backend):
    robot = _robot(tmp_path, PENDULUM)
    system = ArticulatedSystem(robot, dt=0.002)
    d = PEND_L / 2
    inertia_pivot = _IYY + PEND_M * d * d
    expected = 2 * math.pi * math.sqrt(inertia_pivot / (PEND_M * G * d))
    t, theta = _swing(system, 0.02, int(3.2 * expected / system.dt))
    assert _period(t, theta) == pytest.approx(expected, rel=0.01)


def test_energy_conserved_over_five_seconds(tmp_path, sim_backend):
    # the double pendulum in 3-D (skewed second axis, off-axis inertias); the slider welded
    robot = _robot(tmp_path, DOUBLE.replace('type="prismatic"', 'type="fixed"'))
    system = ArticulatedSystem(robot, dt=0.001)
    system.set_state([1.0, 0.7], [0.0, 0.0])
    e0 = system.energy()
    energies, kinetic = [], []
    for k in range(int(5.0 / system.dt)):
        system.step()
        if k % 10 == 0:
            energies.append(system.energy())
            kinetic.append(system.kinetic_energy())
    # relative to the energy exchanged between potential and kinetic (the potential datum is arbitrary)
    drift = max(abs(e - e0) for e in energies)
    assert max(kinetic) > 1.0
    assert drift < 0.01 * max(kinetic)


def test_cartpole_with_locked_cart_is_a_pendulum():
    require_corpus(CARTPOLE)
    try:
        robot = urdf.read_robot(CARTPOLE)
    except Exception as exc:  # pragma: no cover - corpus file quirks
        pytest.skip(f"cartpole unreadable: {exc}")
    system = ArticulatedSystem(robot, dt=0.002)
    system.lock_joint("slider")
    # rod: 5 kg, COM 0.5 above the hinge, Iyy = 1 about the COM; hanging down is theta = pi
    expected = 2 * math.pi * math.sqrt((1.0 + 5 * 0.25) / (5 * G * 0.5))
    order = robot.joint_order
    idx = order.index("bar_revolute")
    t, theta = _swing(system, math.pi + 0.02, int(3.2 * expected / system.dt), index=idx)
    assert _period(t, theta - math.pi) == pytest.approx(expected, rel=0.01)
    assert system.q[order.index("slider")] == 0.0
    # free cart: the cart recoils (momentum along x is conserved: zero)
    free = ArticulatedSystem(robot, dt=0.001)
    q = free.get_generalized_coordinate()
    q[idx] = math.pi + 0.3
    free.set_state(q, np.zeros(free.nv))
    for _ in range(200):
        free.step()
    assert abs(free.q[order.index("slider")]) > 1e-3


@pytest.mark.parametrize("text", [DOUBLE, TREE])
def test_mass_matrix_spd_and_matches_link_kinetic_energy(tmp_path, text):
    robot = _robot(tmp_path, text)
    rng = np.random.default_rng(3)
    base = np.eye(4)
    base[:3, 3] = (0.3, -0.2, 0.5)
    system = ArticulatedSystem(robot, base=base)
    for _ in range(4):
        _random_state(system, rng)
        m = system.mass_matrix()
        assert np.allclose(m, m.T, atol=1e-12)
        assert np.linalg.eigvalsh(m).min() > 0
        assert 0.5 * system.u @ m @ system.u == pytest.approx(_link_kinetic_energy(system), rel=1e-9)


@pytest.mark.parametrize("text", [DOUBLE, TREE])
def test_bias_forces_match_lagrangian_finite_differences(tmp_path, text):
    """h = d/dt(M) u - dT/dq + dV/dq, both derivatives taken by central differences along the motion."""
    robot = _robot(tmp_path, text)
    rng = np.random.default_rng(7)
    system = ArticulatedSystem(robot)
    _random_state(system, rng)
    q, u = system.q.copy(), system.u.copy()
    h = system.bias_forces()
    eps = 1e-6
    from rscene_addon.robots.kinematics import integrate

    def at(qq, uu):
        system.set_state(qq, uu)
        return system

    # p = M u; h = dp/dt|_(qdd=0) - dL/dq (generalized by perturbing q along each velocity direction)
    def momentum(qq):
        s = at(qq, u)
        return s.mass_matrix() @ u

    dpdt = (momentum(integrate(robot, q, u * eps)) - momentum(integrate(robot, q, -u * eps))) / (2 * eps)
    dldq = np.zeros(system.nv)
    for k in range(system.nv):
        dv = np.zeros(system.nv)
        dv[k] = eps
        lp = at(integrate(robot, q, dv), u)
        # the velocity u is held in the same (parent-frame) coordinates; fine for 1-dof joints only
        l_plus = lp.kinetic_energy() - lp.potential_energy()
        lm = at(integrate(robot, q, -dv), u)
        l_minus = lm.kinetic_energy() - lm.potential_energy()
        dldq[k] = (l_plus - l_minus) / (2 * eps)
    if text is DOUBLE:
        assert np.allclose(h, dpdt - dldq, atol=1e-5)
    else:
        # with quaternion coordinates compare the power balance instead: u.h = dT/dt|_(qdd=0) + dV/dt
        system.set_state(q, u)
        def energy_terms(qq):
            s = at(qq, u)
            return s.kinetic_energy(), s.potential_energy()
        tp, vp = energy_terms(integrate(robot, q, u * eps))
        tm, vm = energy_terms(integrate(robot, q, -u * eps))
        # d/dt (u^T M u / 2) with qdd = 0 is u^T Mdot u / 2 = dT/dt|u fixed; u.h = u^T Mdot u/2 + dV/dt
        assert u @ h == pytest.approx((tp - tm) / (2 * eps) + (vp - vm) / (2 * eps), rel=1e-6, abs=1e-6)


def test_pd_controlled_joint_converges(tmp_path, sim_backend):
    robot = _robot(tmp_path, PENDULUM)
    system = ArticulatedSystem(robot, dt=0.002)
    system.set_pd_gains(200.0, 20.0)
    system.set_pd_targets([0.6], [0.0])
    for _ in range(2000):
        system.step()
    # steady state: kp (q* - q) = m g d sin q (gravity load)
    q = system.q[0]
    assert 200.0 * (0.6 - q) == pytest.approx(PEND_M * G * PEND_L / 2 * math.sin(q), rel=1e-3)
    assert abs(system.u[0]) < 1e-6
    # with a feedforward of the gravity torque the target is reached exactly
    system.set_generalized_forces([PEND_M * G * PEND_L / 2 * math.sin(0.6)])
    for _ in range(2000):
        system.step()
    assert system.q[0] == pytest.approx(0.6, abs=1e-6)


def test_pd_stable_at_high_gain_and_effort_limited(tmp_path, sim_backend):
    robot = _robot(tmp_path, PENDULUM)
    system = ArticulatedSystem(robot, dt=0.01)
    system.set_pd_gains(1e6, 1e3)
    system.set_pd_targets([0.5])
    for _ in range(300):
        system.step()
    assert abs(system.q[0] - 0.5) < 1e-2 and np.isfinite(system.u).all()
    weak = ArticulatedSystem(robot, dt=0.002)
    weak.set_pd_gains(1e4, 100.0)
    weak.set_pd_targets([1.5])
    weak.set_joint_damping([3.0])
    weak.set_effort_limits([2.0])  # below the gravity torque: it cannot lift the rod far
    for _ in range(2000):
        weak.step()
    assert PEND_M * G * PEND_L / 2 * math.sin(weak.q[0]) == pytest.approx(2.0, rel=1e-3)
    assert weak.last_pd_torque[0] == pytest.approx(2.0)


def test_revolute_joint_never_passes_its_limit(tmp_path, sim_backend):
    text = PENDULUM.replace('lower="-3" upper="3"', 'lower="-0.5" upper="0.4"')
    robot = _robot(tmp_path, text)
    system = ArticulatedSystem(robot, dt=0.002)
    system.set_state([0.0], [8.0])
    e0 = system.energy()
    seen = []
    for _ in range(3000):
        system.step()
        seen.append(system.q[0])
        # no energy gain beyond the integrator's O(dt) ripple
        assert system.energy() <= e0 * (1 + 1e-3)
    assert min(seen) >= -0.5 and max(seen) <= 0.4
    assert max(seen) == pytest.approx(0.4)
    assert system.energy() < e0 - 1.0  # the stops are inelastic
    # a motor pushing into the limit does not get through either
    system.set_generalized_forces([500.0])
    for _ in range(200):
        system.step()
        assert system.q[0] <= 0.4
    assert system.q[0] == pytest.approx(0.4, abs=1e-9)


FLOATING_BOX = """<robot name="box">
  <link name="body"><inertial><mass value="2"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision></link>
</robot>"""


def test_floating_body_free_fall(tmp_path, sim_backend):
    robot = _robot(tmp_path, FLOATING_BOX)
    assert robot.floating_base
    dt, n, z0 = 0.001, 1000, 5.0
    system = ArticulatedSystem(robot, dt=dt)
    q = system.get_generalized_coordinate()
    q[:3] = (0.0, 0.0, z0)
    system.set_state(q, np.zeros(6))
    for _ in range(n):
        system.step()
    t = n * dt
    # semi-implicit Euler: exactly z0 - g dt^2 n (n + 1) / 2, within g dt t / 2 of the parabola
    assert system.q[2] == pytest.approx(z0 - G * dt * dt * n * (n + 1) / 2, abs=1e-9)
    assert abs(system.q[2] - (z0 - 0.5 * G * t * t)) <= 0.5 * G * dt * t + 1e-9
    assert system.u[2] == pytest.approx(-G * t, rel=1e-12)
    assert np.allclose(system.q[3:7], (1, 0, 0, 0))


def test_spinning_floating_body_keeps_energy_and_angular_momentum(tmp_path, sim_backend):
    robot = _robot(tmp_path, FLOATING_BOX)
    system = ArticulatedSystem(robot, dt=0.0005, gravity=(0, 0, 0))
    system.set_state([0, 0, 0, 1, 0, 0, 0], [0.1, 0, 0, 0.2, 3.0, 0.3])  # near the unstable middle axis
    e0 = system.energy()

    def ang_mom():
        r = system.frames[0][:3, :3]
        return r @ np.diag([0.02, 0.03, 0.04]) @ r.T @ system.u[3:]
    l0 = ang_mom()
    for _ in range(2500):
        system.step()
    assert abs(np.linalg.norm(system.q[3:7]) - 1.0) < 1e-12
    assert system.energy() == pytest.approx(e0, rel=0.01)
    assert np.allclose(ang_mom(), l0, atol=0.01 * np.linalg.norm(l0))
    assert np.allclose(system.q[:3], [0.125, 0, 0], atol=1e-9)


def test_dropped_box_robot_rests_on_ground(tmp_path, sim_backend):
    robot = _robot(tmp_path, FLOATING_BOX)
    system = ArticulatedSystem(robot, dt=0.002, ground_height=0.0)
    ang = 0.3
    q = np.array([0, 0, 0.6, math.cos(ang / 2), math.sin(ang / 2), 0, 0])
    system.set_state(q, np.zeros(6))
    lowest = np.inf
    for _ in range(1000):
        system.step()
        corners = np.array([system.frames[0] @ np.array([sx * 0.2, sy * 0.15, sz * 0.1, 1])
                            for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        lowest = min(lowest, corners[:, 2].min())
    assert lowest > -0.01
    assert np.linalg.norm(system.u) < 1e-2
    assert system.q[2] == pytest.approx(0.1, abs=0.01)  # lying flat on its smallest extent
    assert abs(system.q[0]) < 0.1 and abs(system.q[1]) < 0.2


def test_articulated_robot_with_joints_lands_and_link_poses(tmp_path, sim_backend):
    robot = _robot(tmp_path, TREE)
    system = ArticulatedSystem(robot, dt=0.002, ground_height=0.0)
    q = system.get_generalized_coordinate()
    q[:3] = (0, 0, 0.4)
    system.set_state(q, np.zeros(system.nv))
    system.set_pd_gains(np.r_[np.zeros(6), [20.0] * 4], np.r_[np.zeros(6), [2.0] * 4])
    system.set_pd_targets(system.get_generalized_coordinate())
    for _ in range(600):
        system.step()
    poses = system.link_poses()
    assert set(poses) == {"torso", "arm", "hand", "tip"}
    assert poses["torso"][2, 3] > 0.05 - 0.01 and poses["torso"][2, 3] < 0.4
    pos, quat = system.link_positions_quaternions()
    assert np.allclose(pos, [poses[n][:3, 3] for n in system.link_names])
    assert np.allclose(np.linalg.norm(quat, axis=1), 1.0)


def test_deterministic(tmp_path, sim_backend):
    robot = _robot(tmp_path, TREE)
    runs = []
    for _ in range(2):
        system = ArticulatedSystem(robot, dt=0.002, ground_height=0.0)
        q = system.get_generalized_coordinate()
        q[:3] = (0, 0, 0.3)
        system.set_state(q, np.linspace(-1, 1, system.nv))
        for _ in range(100):
            system.step()
        runs.append(np.concatenate([system.q, system.u]))
    assert np.array_equal(runs[0], runs[1])


def test_systems_for_scene_from_urdf_scene(tmp_path):
    path = os.path.join(str(tmp_path), "pendulum.urdf")
    with open(path, "w") as fh:
        fh.write(PENDULUM)
    scene = urdf.read(path)
    rec = scene.of("articulated")[0]
    rec["generalizedCoordinate"] = [0.3]
    from rscene_addon.sim.robot_scene import systems_for_scene
    warnings = []
    systems = systems_for_scene(scene, dt=0.002, warnings=warnings)
    assert not warnings and len(systems) == 1
    system = systems[0]
    assert system.name == rec.get("path") and system.q[0] == pytest.approx(0.3)
    system.step()
    assert system.u[0] < 0  # swings back towards the bottom
    assert set(system.link_poses()) == {"world", "rod"}


PENDULUM_URDF = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
      <inertia ixx="0.1667" iyy="0.1667" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="rod"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
</robot>
"""


def test_simulate_records_robot_links_beside_rigid_bodies(tmp_path):
    """An `articulated` record in a scene swings in `simulate`, its links named <path>/<link>."""
    from rscene_addon.formats import rscene
    from rscene_addon.sim import simulate
    (tmp_path / "pendulum.urdf").write_text(PENDULUM_URDF)
    scene_path = tmp_path / "scene.rscene"
    scene_path.write_text(
        "raisim_engine_scene 2\n"
        "articulated_resource pendulum_res pendulum pendulum.urdf\n"
        "articulated /World/Pendulum pendulum_res 0 0 2 1 0 0 0 true true generalizedCoordinate=0.2\n"
        "object /World/Ball sphere 5 0 1 1 0 0 0 1 1 1 0.1 1 1 default - false true false - dynamic true 1 18446744073709551615\n")
    trajectory = simulate(rscene.read(str(scene_path)), 1.0, 30)
    names = list(trajectory.names)
    assert names[0] == "/World/Ball" and "/World/Pendulum/rod" in names
    rod = names.index("/World/Pendulum/rod")
    # the rod hangs from the pivot at z = 2 and swings: its frame stays at the pivot, its rotation changes
    assert np.allclose(trajectory.position[:, rod], [0.0, 0.0, 2.0], atol=1e-9)
    assert not np.allclose(trajectory.quaternion[0, rod], trajectory.quaternion[15, rod], atol=1e-3)
