"""MJCF reader: every corpus model parses with raw-regex counts; zero-pose body positions summed by hand."""
from __future__ import annotations

import re

import numpy as np
import pytest

from rscene_addon.formats import registry
from rscene_addon.formats.mjcf import loads_robot, read_robot
from rscene_addon.model import FormatError
from rscene_addon.robots.kinematics import forward_kinematics

from .conftest import CORPUS, MJCF_FILES

GYM = CORPUS / "mjcf" / "jhwangbo-raisim2Lib" / "rsc" / "mjcf" / "gymnasium"


def test_corpus_found():
    assert len(MJCF_FILES) >= 15


@pytest.mark.parametrize("path", MJCF_FILES, ids=lambda p: "/".join(p.parts[-2:]))
def test_corpus_mjcf_parses_with_raw_counts(path):
    text = re.sub(r"<!--.*?-->", "", path.read_text(encoding="utf-8", errors="replace"), flags=re.DOTALL)
    robot = read_robot(str(path))
    assert registry.detect(str(path)) == "mjcf"
    bodies = len(re.findall(r"<body[\s>]", text))
    worldbody = text[text.index("<worldbody"):text.index("</worldbody>")]
    joints = len(re.findall(r"<joint[\s>]", worldbody)) + len(re.findall(r"<freejoint[\s/>]", worldbody))
    real_links = [n for n, link in robot.links.items() if not link.virtual and n != "world"]
    assert len(real_links) == bodies
    movable = [j for j in robot.joints.values() if j.type != "fixed"]
    assert len(movable) + (1 if robot.floating_base else 0) == joints
    assert robot.gc_dim == len(robot.default_configuration())


def _positions(robot):
    frames = forward_kinematics(robot, robot.default_configuration())
    return {name: t[:3, 3] for name, t in frames.items()}


def test_hopper_zero_pose_positions():
    robot = read_robot(str(GYM / "hopper.xml"))
    assert not robot.floating_base and robot.root == "world"
    assert robot.joint_order == ["rootx", "rootz", "rooty", "thigh_joint", "leg_joint", "foot_joint"]
    pos = _positions(robot)
    torso = np.array([0, 0, 1.25])
    thigh = torso + [0, 0, -0.19999999999999996]
    leg = thigh + [0, 0, -0.70000000000000007]
    foot = leg + [0.13, 0, -0.35]
    for name, expected in (("torso", torso), ("thigh", thigh), ("leg", leg), ("foot", foot)):
        np.testing.assert_allclose(pos[name], expected, atol=1e-12)
    # range="-150 0" with compiler angle="degree"
    j = robot.joints["thigh_joint"]
    assert j.lower == pytest.approx(-150 * np.pi / 180) and j.upper == 0.0
    # capsule size = radius, half length
    geom = robot.links["leg"].visuals[0].geometry
    assert geom.kind == "capsule" and geom.radius == 0.04 and geom.length == pytest.approx(0.5)
    assert robot.world_shapes[0].geometry.kind == "plane"


def test_hopper_joint_anchor():
    """foot_joint sits at pos (-0.13 0 0.1) in the foot frame: rotating it keeps that anchor fixed."""
    robot = read_robot(str(GYM / "hopper.xml"))
    q = robot.default_configuration()
    slices = robot.gc_slices()
    q[slices["foot_joint"]] = 0.6
    foot = forward_kinematics(robot, q)["foot"]
    anchor_world = np.array([0.13, 0, 0.0]) + [-0.13, 0, 0.1]
    np.testing.assert_allclose(foot[:3, :3] @ [-0.13, 0, 0.1] + foot[:3, 3], anchor_world, atol=1e-12)
    c, s = np.cos(0.6), np.sin(0.6)  # axis 0 -1 0
    np.testing.assert_allclose(foot[:3, :3], [[c, 0, -s], [0, 1, 0], [s, 0, c]], atol=1e-12)


def test_ant_zero_pose_positions():
    robot = read_robot(str(GYM / "ant.xml"))
    assert robot.floating_base and robot.root == "torso"
    np.testing.assert_allclose(robot.initial_base_pose, [0, 0, 0.75, 1, 0, 0, 0])
    pos = _positions(robot)
    torso = np.array([0, 0, 0.75])
    np.testing.assert_allclose(pos["torso"], torso)
    for aux, ankle, sx, sy in (("aux_1", "ankle_1", 1, 1), ("aux_2", "ankle_2", -1, 1),
                               ("aux_3", "ankle_3", -1, -1), ("aux_4", "ankle_4", 1, -1)):
        np.testing.assert_allclose(pos[aux], torso + [0.2 * sx, 0.2 * sy, 0], atol=1e-12)
        foot = robot.joints[ankle].child
        np.testing.assert_allclose(pos[foot], torso + [0.4 * sx, 0.4 * sy, 0], atol=1e-12)
    assert robot.gc_dim == 7 + 8


def test_defaults_classes_orientation_and_errors():
    robot = loads_robot("""<mujoco model="m">
      <compiler angle="radian" eulerseq="zyx"/>
      <default><geom rgba="1 0 0 1"/><default class="big"><geom size="0.5"/></default></default>
      <asset><material name="blue" rgba="0 0 1 1"/></asset>
      <worldbody>
        <body name="a" pos="1 0 0" euler="1.5707963267948966 0 0">
          <joint name="h1" type="hinge" axis="1 0 0"/><joint name="h2" type="slide" axis="0 1 0"/>
          <geom class="big" type="sphere"/>
          <geom type="box" size="0.1 0.2 0.3" material="blue"/>
          <geom type="capsule" fromto="0 0 0 0 0 2" size="0.1"/>
        </body>
      </worldbody></mujoco>""")
    a = robot.links["a"]
    sphere, box, capsule = a.visuals
    assert sphere.geometry.radius == 0.5 and sphere.material.rgba == (1.0, 0.0, 0.0, 1.0)
    assert box.geometry.size == pytest.approx((0.2, 0.4, 0.6))
    assert capsule.geometry.length == pytest.approx(2.0)
    np.testing.assert_allclose(capsule.origin[:3, 3], [0, 0, 1])
    assert "a/h1" in robot.links and robot.links["a/h1"].virtual
    frame = forward_kinematics(robot, robot.zero_configuration())["a"]
    np.testing.assert_allclose(frame[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)  # z by 90 deg
    with pytest.raises(FormatError) as err:
        loads_robot('<mujoco>\n<worldbody>\n<body>\n<geom type="mesh" mesh="nope"/></body></worldbody></mujoco>')
    assert err.value.first.line == 4
