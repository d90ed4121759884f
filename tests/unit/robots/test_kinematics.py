"""Forward kinematics against hand-computed transforms; Jacobians against finite differences."""
from __future__ import annotations

from math import cos, sin

import numpy as np
import pytest

from rscene_addon.formats.urdf import loads_robot, read_robot
from rscene_addon.robots.kinematics import forward_kinematics, frame_transform, integrate, jacobian

from .conftest import CORPUS, PLANAR_2LINK

CARTPOLE = CORPUS / "urdf" / "raisimTech-raisim2Lib" / "rsc" / "cartPole" / "cartpole.urdf"
ANYMAL = CORPUS / "raisim_xml" / "raisimTech-raisim2Lib" / "rsc" / "anymal" / "urdf" / "anymal.urdf"
CHAIN = CORPUS / "urdf" / "raisimTech-raisim2Lib" / "rsc" / "chain" / "robot.urdf"


@pytest.mark.parametrize("t1,t2", [(0.0, 0.0), (0.3, -1.1), (2.0, 0.7)])
def test_planar_two_link_by_hand(t1, t2):
    robot = loads_robot(PLANAR_2LINK)
    frames = forward_kinematics(robot, [t1, t2])
    l1, l2 = 0.7, 0.4
    expected_l2 = np.array([[cos(t1 + t2), -sin(t1 + t2), 0, l1 * cos(t1)],
                            [sin(t1 + t2), cos(t1 + t2), 0, l1 * sin(t1)],
                            [0, 0, 1, 0.5], [0, 0, 0, 1]])
    np.testing.assert_allclose(frames["l2"], expected_l2, atol=1e-12)
    tip = [l1 * cos(t1) + l2 * cos(t1 + t2), l1 * sin(t1) + l2 * sin(t1 + t2), 0.5]
    np.testing.assert_allclose(frames["tip"][:3, 3], tip, atol=1e-12)
    np.testing.assert_allclose(frames["world"], np.eye(4))


@pytest.mark.parametrize("x,theta", [(0.0, 0.0), (1.5, 0.4), (-3.0, -2.5)])
def test_cartpole_by_hand(x, theta):
    robot = read_robot(str(CARTPOLE))
    assert robot.joint_order == ["slider", "bar_revolute"] and not robot.floating_base
    frames = forward_kinematics(robot, [x, theta])
    np.testing.assert_allclose(frames["sliderBar"][:3, 3], [0, 0, 5])
    np.testing.assert_allclose(frames["slider"][:3, 3], [x, 0, 5])
    # revolute about y: x' = x cos + z sin, z' = -x sin + z cos
    rod = np.array([[cos(theta), 0, sin(theta), x], [0, 1, 0, 0], [-sin(theta), 0, cos(theta), 5], [0, 0, 0, 1]])
    np.testing.assert_allclose(frames["rod"], rod, atol=1e-12)
    # the rod's visual centre, 0.5 up the rod
    centre = frames["rod"] @ robot.links["rod"].visuals[0].origin
    np.testing.assert_allclose(centre[:3, 3], [x + 0.5 * sin(theta), 0, 5 + 0.5 * cos(theta)], atol=1e-12)


def test_floating_base_and_batch():
    robot = read_robot(str(ANYMAL))
    rng = np.random.default_rng(0)
    qs = np.tile(robot.zero_configuration(), (5, 1))
    qs[:, :3] = rng.normal(size=(5, 3))
    quats = rng.normal(size=(5, 4))
    qs[:, 3:7] = quats / np.linalg.norm(quats, axis=1, keepdims=True)
    qs[:, 7:] = rng.normal(size=(5, 12)) * 0.5
    batch = forward_kinematics(robot, qs)
    for i in range(5):
        single = forward_kinematics(robot, qs[i])
        for name, t in single.items():
            np.testing.assert_allclose(batch[name][i], t, atol=1e-12)
        np.testing.assert_allclose(single[robot.root][:3, 3], qs[i, :3])
        np.testing.assert_allclose(frame_transform(robot, qs[i], "LF_FOOT"), single["LF_FOOT"], atol=1e-12)
    with pytest.raises(ValueError):
        forward_kinematics(robot, np.zeros(3))


def _finite_difference(robot, q, link, point, eps=1e-6):
    nv = robot.dof_dim
    out = np.zeros((6, nv))
    t0 = frame_transform(robot, q, link)
    p0 = t0[:3, :3] @ point + t0[:3, 3]
    for k in range(nv):
        dv = np.zeros(nv)
        dv[k] = eps
        t = frame_transform(robot, integrate(robot, q, dv), link)
        out[:3, k] = (t[:3, :3] @ point + t[:3, 3] - p0) / eps
        dr = t[:3, :3] @ t0[:3, :3].T  # ~ I + skew(w eps)
        out[3:, k] = np.array([dr[2, 1] - dr[1, 2], dr[0, 2] - dr[2, 0], dr[1, 0] - dr[0, 1]]) / (2 * eps)
    return out


@pytest.mark.parametrize("which", ["anymal", "chain_spherical", "planar_floating"])
def test_jacobian_matches_finite_differences(which):
    rng = np.random.default_rng(1)
    if which == "anymal":
        robot, link = read_robot(str(ANYMAL)), "LF_FOOT"
    elif which == "chain_spherical":
        robot = read_robot(str(CHAIN))
        link = robot.link_order()[-1]
    else:
        robot = loads_robot("""<robot><link name="world"/><link name="a"/><link name="b"/><link name="c"/>
          <joint name="p" type="planar"><parent link="world"/><child link="a"/><origin xyz="0.1 0 0" rpy="0.3 0 0"/>
            <axis xyz="0 0 1"/></joint>
          <joint name="f" type="floating"><parent link="a"/><child link="b"/><origin xyz="0 0.2 0"/></joint>
          <joint name="s" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0 0 0.3" rpy="0 0.5 0"/>
            <axis xyz="1 1 0"/></joint></robot>""")
        link = "c"
    q = robot.zero_configuration()
    q = integrate(robot, q, rng.normal(size=robot.dof_dim) * 0.4)
    point = np.array([0.05, -0.02, 0.1])
    np.testing.assert_allclose(jacobian(robot, q, link, point), _finite_difference(robot, q, link, point),
                               atol=1e-5)
