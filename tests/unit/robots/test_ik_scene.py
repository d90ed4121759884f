"""IK on a 3-link arm (reachable targets converge, out-of-reach ones report their residual); scene_io."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats.urdf import loads_robot
from rscene_addon.model import FormatError, Scene, new_record
from rscene_addon.robots.ik import IKOptions, options_from_record, solve_ik
from rscene_addon.robots.kinematics import frame_transform
from rscene_addon.formats.robot_files import posed_links_for_record, robot_for_record
from rscene_addon.robots.scene_io import posed_links
from rscene_addon.base.spatial import matrix_to_quat

from .conftest import ARM_3LINK, PLANAR_2LINK


@pytest.fixture
def arm():
    return loads_robot(ARM_3LINK)


@pytest.mark.parametrize("method", ["damped_least_squares", "jacobian_transpose"])
@pytest.mark.parametrize("q_goal", [(0.4, 0.3, 0.8), (-1.2, -0.5, 1.2), (2.0, 0.9, -0.6)])
def test_reachable_targets_converge(arm, method, q_goal):
    target = frame_transform(arm, np.array(q_goal), "ee")[:3, 3]  # reachable by construction
    iterations = 200 if method == "damped_least_squares" else 3000
    result = solve_ik(arm, arm.zero_configuration() + 0.1, "ee", target, method=method, max_iterations=iterations,
                      max_step=0.2, position_tolerance=1e-4)
    assert result.converged, result.message
    reached = frame_transform(arm, result.q, "ee")[:3, 3]
    assert np.linalg.norm(reached - target) <= 1e-4


def test_position_and_orientation(arm):
    goal = frame_transform(arm, np.array([0.5, 0.4, 0.7]), "ee")
    result = solve_ik(arm, np.zeros(3), "ee", goal[:3, 3], matrix_to_quat(goal[:3, :3]), max_iterations=300,
                      orientation_weight=1.0)
    assert result.converged and result.orientation_error <= 1e-2


def test_out_of_reach_is_reported(arm):
    result = solve_ik(arm, np.zeros(3), "ee", [3.0, 0.0, 0.3])  # arm reaches at most 0.9 from the shoulder
    assert not result.converged
    assert result.position_error > 1.0
    assert "did not converge" in result.message
    # the best pose points at the target: the residual is the distance beyond reach
    reach = np.linalg.norm(np.array([3.0, 0.0, 0.3]) - [0, 0, 0.3]) - 0.9
    assert result.position_error == pytest.approx(reach, abs=0.05)


def test_joint_limits_respected():
    robot = loads_robot(PLANAR_2LINK)
    result = solve_ik(robot, np.zeros(2), "tip", [-1.1, 0.01, 0.5], max_iterations=200)
    assert np.all(result.q >= -3) and np.all(result.q <= 3)


def test_options_from_record():
    record = new_record("articulated_ik", articulated="arm", frame="ee", maxIterations=12, damping=0.2,
                        inverseMethod="jacobian_transpose")
    opts = options_from_record(record)
    assert isinstance(opts, IKOptions) and opts.max_iterations == 12 and opts.damping == 0.2
    assert opts.method == "jacobian_transpose"


def _scene_with_robot(tmp_path, on_resource: bool):
    (tmp_path / "robots").mkdir()
    (tmp_path / "robots" / "planar.urdf").write_text(PLANAR_2LINK)
    scene = Scene(path=str(tmp_path / "s.rscene"))
    scene.add(new_record("articulated_resource", id="res_planar", name="planar",
                         sourcePath="robots/planar.urdf" if on_resource else ""))
    art = new_record("articulated", path="/World/arm", resourceId="res_planar", position=(1.0, 2.0, 0.0),
                     generalizedCoordinate=[0.5, -0.25])
    if not on_resource:
        art.set("sourcePath", "robots/planar.urdf")
    scene.add(art)
    return scene, art


@pytest.mark.parametrize("on_resource", [True, False])
def test_robot_for_record(tmp_path, on_resource):
    scene, art = _scene_with_robot(tmp_path, on_resource)
    robot = robot_for_record(scene, art)
    assert robot.joint_order == ["j1", "j2"]
    links = posed_links(robot, [0.5, -0.25])
    tip = [0.7 * np.cos(0.5) + 0.4 * np.cos(0.25), 0.7 * np.sin(0.5) + 0.4 * np.sin(0.25), 0.5]
    np.testing.assert_allclose(links["tip"][:3, 3], tip, atol=1e-12)
    placed = posed_links_for_record(scene, art, robot)
    np.testing.assert_allclose(placed["tip"][:3, 3], np.add(tip, [1.0, 2.0, 0.0]), atol=1e-12)


def test_robot_for_record_without_source(tmp_path):
    scene = Scene(path=str(tmp_path / "s.rscene"))
    art = scene.add(new_record("articulated", path="/World/x", resourceId="missing"))
    with pytest.raises(FormatError):
        robot_for_record(scene, art)
