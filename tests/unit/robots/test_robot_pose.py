"""One pose in every view: where an ``articulated`` record's robot stands at frame 1.

The rule (robots/scene_io.py): a floating base stands at its generalized coordinate's base pose (RaiSim's
qpos, the spec's Cassie example repeating it as position/quaternion), a fixed base (root link ``world``) at the
record's pose. Truths: the corpus files' own qpos values, and MuJoCo for an MJCF model's initial pose.
"""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import registry, rscene
from rscene_addon.formats.robot_files import posed_links_for_record, robot_for_record
from rscene_addon.sim.articulated import ArticulatedSystem
from tests.corpus import CORPUS, require_corpus

RXML = CORPUS / "raisim_xml" / "raisimTech-raisim2Lib" / "rsc"
LAIKAGO_URDF = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc" / "laikago" / "laikago.urdf"
CARTPOLE = CORPUS / "urdf" / "raisimTech-raisim2Lib" / "rsc" / "cartPole" / "cartpole.urdf"
HUMANOID = CORPUS / "mjcf" / "Farama-Foundation-Gymnasium" / "gymnasium" / "envs" / "mujoco" / "assets" / "humanoid.xml"

# (file, base position its qpos gives)
XML_SCENES = [
    (RXML / "laikago.xml", (0.0, 0.0, 0.48)),
    (RXML / "laikagoOnHeightMap.xml", (0.0, 0.0, 0.48)),
    (RXML / "xmlScripts" / "heightMaps" / "heightMapUsingPng.xml", (0.0, 0.0, 10.84)),
]


def _articulated(scene):
    records = list(scene.of("articulated"))
    assert len(records) == 1
    return records[0]


def _views(scene, record):
    """The root link's world position as the simulator and the renderer/Blender's pure path see it."""
    system = ArticulatedSystem.from_record(scene, record)
    robot = robot_for_record(scene, record)
    sim = system.link_poses()[robot.root][:3, 3]
    posed = posed_links_for_record(scene, record, robot)[robot.root][:3, 3]
    return sim, posed


@pytest.mark.parametrize("path,expected", XML_SCENES, ids=lambda v: getattr(v, "name", ""))
def test_raisim_xml_robot_stands_at_its_qpos(path, expected):
    require_corpus()
    scene = registry.read_scene(str(path))
    sim, posed = _views(scene, _articulated(scene))
    np.testing.assert_allclose(sim, expected, atol=1e-12)
    np.testing.assert_allclose(posed, expected, atol=1e-12)


def _rscene(tmp_path, extra: str, position="2 0 0.6"):
    text = ("raisim_engine_scene 2\n"
            f"articulated_resource laikago_res Laikago {LAIKAGO_URDF}\n"
            f"articulated /World/Laikago laikago_res {position} 1 0 0 0 true true {extra}\n")
    path = tmp_path / "robot.rscene"
    path.write_text(text)
    return rscene.read(str(path))


def test_rscene_pose_said_twice_is_one_pose(tmp_path):
    """The spec's Cassie example: position 0 0 1.0 and generalizedCoordinate=0,0,1.0,... are one pose."""
    require_corpus("robots")
    gc = "2,0,0.6,1,0,0,0" + ",0,0.5,-1" * 4
    scene = _rscene(tmp_path, f"generalizedCoordinate={gc}")
    sim, posed = _views(scene, _articulated(scene))
    np.testing.assert_allclose(sim, (2.0, 0.0, 0.6), atol=1e-12)
    np.testing.assert_allclose(posed, sim, atol=1e-12)


def test_rscene_without_coordinate_stands_at_the_record_pose(tmp_path):
    require_corpus("robots")
    scene = _rscene(tmp_path, "")
    sim, posed = _views(scene, _articulated(scene))
    np.testing.assert_allclose(sim, (2.0, 0.0, 0.6), atol=1e-12)
    np.testing.assert_allclose(posed, sim, atol=1e-12)


def test_two_different_poses_the_coordinate_wins(tmp_path):
    require_corpus("robots")
    gc = "1,1,0.5,1,0,0,0" + ",0,0.5,-1" * 4
    scene = _rscene(tmp_path, f"generalizedCoordinate={gc}")
    sim, posed = _views(scene, _articulated(scene))
    np.testing.assert_allclose(sim, (1.0, 1.0, 0.5), atol=1e-12)
    np.testing.assert_allclose(posed, sim, atol=1e-12)


def test_fixed_base_stands_at_the_record_pose(tmp_path):
    """cartpole.urdf's root link is ``world``: RaiSim fixes it; the record's pose places it."""
    require_corpus()
    text = ("raisim_engine_scene 2\n"
            f"articulated_resource cp_res Cartpole {CARTPOLE}\n"
            "articulated /World/Cartpole cp_res 1 2 3 1 0 0 0 true true generalizedCoordinate=0.1,0.2\n")
    path = tmp_path / "cp.rscene"
    path.write_text(text)
    scene = rscene.read(str(path))
    record = _articulated(scene)
    robot = robot_for_record(scene, record)
    assert not robot.floating_base
    sim, posed = _views(scene, record)
    np.testing.assert_allclose(sim, (1.0, 2.0, 3.0), atol=1e-12)
    np.testing.assert_allclose(posed, sim, atol=1e-12)


def test_urdf_alone_stands_at_the_origin():
    require_corpus("robots")
    scene = registry.read_scene(str(LAIKAGO_URDF))
    sim, posed = _views(scene, _articulated(scene))
    np.testing.assert_allclose(sim, 0.0, atol=1e-12)
    np.testing.assert_allclose(posed, 0.0, atol=1e-12)


def test_mjcf_alone_stands_where_mujoco_puts_it():
    mujoco = pytest.importorskip("mujoco")
    require_corpus()
    model = mujoco.MjModel.from_xml_path(str(HUMANOID))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    scene = registry.read_scene(str(HUMANOID))
    record = _articulated(scene)
    robot = robot_for_record(scene, record)
    torso = data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, robot.root)]
    sim, posed = _views(scene, record)
    np.testing.assert_allclose(sim, torso, atol=1e-9)
    np.testing.assert_allclose(posed, torso, atol=1e-9)
