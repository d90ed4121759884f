"""sim/actuation.py: PD drives applied by simulate() (gains once, targets per substep), and
robots/joint_recovery.py: joint values read back from link poses (forward kinematics is the truth)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.base.spatial import quat_to_matrix
from rscene_addon.formats import rscene, urdf
from rscene_addon.robots.joint_recovery import configuration_from_poses
from rscene_addon.robots.kinematics import forward_kinematics
from rscene_addon.sim import simulate
from rscene_addon.sim.actuation import Actuator, Drive, drive_gains
from rscene_addon.sim.articulated import ArticulatedSystem
from tests.corpus import CORPUS, require_corpus

# a 1 kg point-like bob 0.5 m below a hinge about y, and a 1 kg slider along x on a prismatic joint
ARM = """<robot name="arm">
  <link name="world"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="cart"><inertial><mass value="1"/>
    <inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="world"/><child link="bob"/><axis xyz="0 1 0"/></joint>
  <joint name="slide" type="prismatic"><parent link="world"/><child link="cart"/><axis xyz="1 0 0"/>
    <limit lower="-5" upper="5" effort="1000" velocity="10"/></joint>
</robot>
"""


def _scene(tmp_path, q0=(0.4, 0.0)):
    (tmp_path / "arm.urdf").write_text(ARM)
    path = tmp_path / "arm.rscene"
    path.write_text("\n".join([
        "raisim_engine_scene 2", "time_step 0.002", "articulated_resource arm_res arm arm.urdf",
        "articulated /World/Arm arm_res 0 0 2 1 0 0 0 true false generalizedCoordinate="
        + ",".join(map(str, q0))]) + "\n")
    scene = rscene.read(str(path))
    return scene, urdf.read_robot(str(tmp_path / "arm.urdf"))


def _gc(trajectory, robot, frame):
    """The hinge angle and slide of a recorded frame, from the recorded link poses."""
    poses = {}
    for link in robot.links:
        i = trajectory.index(f"/World/Arm/{link}")
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(trajectory.quaternion[frame, i])
        m[:3, 3] = trajectory.position[frame, i]
        poses[link] = m[None]
    return configuration_from_poses(robot, poses)[0]


def test_gains_per_dof():
    robot = urdf.loads_robot(ARM)
    kp, kd = drive_gains(robot, 10.0, 1.0, {"slide": (3.0, 0.5)})
    order = robot.joint_order
    assert kp[order.index("hinge")] == 10.0 and kd[order.index("hinge")] == 1.0
    assert kp[order.index("slide")] == 3.0 and kd[order.index("slide")] == 0.5
    with pytest.raises(ValueError, match="nope"):
        drive_gains(robot, 1.0, 1.0, {"nope": (1.0, 1.0)})


def test_floating_base_is_not_actuated():
    require_corpus("robots")
    robot = urdf.read_robot(str(CORPUS / "robots/raisimTech-raisim2Lib/rsc/anymal_c/urdf/anymal.urdf"))
    kp, kd = drive_gains(robot, 80.0, 2.0)
    assert kp.shape == (18,) and np.all(kp[:6] == 0) and np.all(kd[:6] == 0)
    assert np.all(kp[6:] == 80.0) and np.all(kd[6:] == 2.0)


def test_passive_swings_driven_holds(tmp_path):
    """Without gains the pendulum swings from 0.4 rad (through zero by a quarter period, ~0.35 s); with
    kp = 400 and no targets it holds its start: the steady error is m g l sin(q) / kp = 0.0048 rad."""
    scene, robot = _scene(tmp_path)
    passive = simulate(scene, 0.5, 20)
    assert _gc(passive, robot, 10)[0] < 0.0
    kp, kd = drive_gains(robot, 400.0, 20.0)
    held = simulate(scene, 0.5, 20, actuation={"/World/Arm": Drive(kp, kd)})
    q = np.array([_gc(held, robot, f)[0] for f in range(held.num_frames)])
    assert np.all(np.abs(q - 0.4) < 0.0048 * 1.5)
    assert abs(q[-1] - (0.4 - 9.81 * 0.5 * math.sin(q[-1]) / 400.0)) < 1e-3


def test_targets_follow_the_track(tmp_path):
    """A target track per frame (the slide ramps 0 -> 1 m over 1 s, the hinge goes to -0.3 rad): stiff
    gains follow it within a few millimetres, with the track's rate as velocity target."""
    scene, robot = _scene(tmp_path, (0.0, 0.0))
    frames = 21
    targets = np.zeros((frames, 2))
    order = robot.joint_order
    targets[:, order.index("slide")] = np.linspace(0.0, 1.0, frames)
    targets[:, order.index("hinge")] = -0.3
    kp, kd = drive_gains(robot, 4000.0, 150.0)
    trajectory = simulate(scene, 1.0, 20, actuation={"/World/Arm": Drive(kp, kd, targets)})
    slide = np.array([_gc(trajectory, robot, f)[order.index("slide")] for f in range(frames)])
    assert np.all(np.abs(slide - targets[:, order.index("slide")]) < 0.01)
    assert _gc(trajectory, robot, frames - 1)[order.index("hinge")] == pytest.approx(-0.3, abs=0.01)


def test_bad_drives_are_refused(tmp_path):
    scene, robot = _scene(tmp_path)
    system = ArticulatedSystem(robot)
    system.name = "/World/Arm"
    with pytest.raises(ValueError, match="/World/Other"):
        Actuator([system], {"/World/Other": Drive(np.zeros(2), np.zeros(2))}, 3, 10.0)
    with pytest.raises(ValueError, match=r"\(3, 2\)"):
        Actuator([system], {"/World/Arm": Drive(np.zeros(2), np.zeros(2), np.zeros((2, 2)))}, 3, 10.0)


def test_joint_values_from_link_poses():
    """ANYmal C at random configurations (hips, thighs, knees beyond a turn): forward kinematics, then back."""
    require_corpus("robots")
    robot = urdf.read_robot(str(CORPUS / "robots/raisimTech-raisim2Lib/rsc/anymal_c/urdf/anymal.urdf"))
    rng = np.random.default_rng(3)
    q = np.tile(robot.default_configuration(), (5, 1))
    q[:, 0:3] = rng.normal(size=(5, 3))
    quat = rng.normal(size=(5, 4))
    q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True) * np.sign(quat[:, :1])
    q[:, 7:] = np.cumsum(rng.uniform(-0.5, 0.5, size=(5, 12)), axis=0) + 7.0   # beyond a turn
    poses = {link: np.stack([forward_kinematics(robot, qi)[link] for qi in q]) for link in robot.links}
    back = configuration_from_poses(robot, poses, reference=q[0])
    np.testing.assert_allclose(back[:, 7:], q[:, 7:], atol=1e-9)
    np.testing.assert_allclose(back[:, :3], q[:, :3], atol=1e-9)
    np.testing.assert_allclose(np.abs(np.sum(back[:, 3:7] * q[:, 3:7], axis=1)), 1.0, atol=1e-9)
