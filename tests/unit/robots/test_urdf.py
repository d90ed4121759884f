"""URDF reader: every corpus file parses with the link/joint counts a raw regex finds; details on small files."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from rscene_addon.formats import registry
from rscene_addon.formats.urdf import loads_robot, read_robot, resolve_resource
from rscene_addon.model import FormatError

from .conftest import PLANAR_2LINK, TEMPLATE_PARAMETERS, URDF_FILES


def _raw_counts(text: str) -> tuple[int, int]:
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    links = len(re.findall(r"<link\s+name\s*=", text))
    joints = len(re.findall(r"<joint\s[^>]*\btype\s*=", text))
    return links, joints


def test_corpus_found():
    assert len(URDF_FILES) >= 10


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: "/".join(p.parts[-3:]))
def test_corpus_urdf_parses_with_raw_counts(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    params = TEMPLATE_PARAMETERS if "@@" in text else None
    robot = read_robot(str(path), parameters=params)
    links, joints = _raw_counts(text)
    assert len(robot.links) == links
    assert len(robot.joints) == joints
    assert robot.root in robot.links
    assert robot.floating_base == (robot.root != "world")
    assert robot.gc_dim == len(robot.zero_configuration())


def test_text_before_declaration_and_repeated_declaration():
    text = "junk before\n\n<?xml version='1.0'?>\n<!-- c -->\n<?xml version='1.0'?>\n" + PLANAR_2LINK.split("?>", 1)[1]
    robot = loads_robot(text)
    assert list(robot.joints) == ["j1", "j2", "tip_fixed"]


def test_geometry_materials_origins():
    robot = loads_robot("""<robot name="r">
      <material name="red"><color rgba="1 0 0 1"/></material>
      <link name="base">
        <visual><origin xyz="1 2 3" rpy="0 0 1.5707963267948966"/><geometry><box size="0.1 0.2 0.3"/></geometry>
          <material name="red"/></visual>
        <visual><geometry><cylinder radius="0.05" length="0.4"/></geometry>
          <material name="byte"><color rgba="0 0 200 255"/></material></visual>
        <collision><geometry><sphere radius="0.25"/></geometry></collision>
        <collision><geometry><mesh filename="m.obj" scale="0.001 0.002 0.003"/></geometry></collision>
        <inertial><origin xyz="0 0 0.1"/><mass value="2.5"/><inertia ixx="1" ixy="0.1" ixz="0" iyy="2" iyz="0" izz="3"/></inertial>
      </link>
      <link name="b"/><link name="c"/><link name="d"/>
      <joint name="s" type="spherical"><parent link="base"/><child link="b"/></joint>
      <joint name="f" type="floating"><parent link="b"/><child link="c"/></joint>
      <joint name="p" type="planar"><parent link="c"/><child link="d"/><axis xyz="0 0 2"/></joint>
    </robot>""", path="/tmp/x/r.urdf")
    base = robot.links["base"]
    box, cyl = base.visuals
    assert box.geometry.kind == "box" and box.geometry.size == (0.1, 0.2, 0.3)
    np.testing.assert_allclose(box.origin[:3, 3], [1, 2, 3])
    np.testing.assert_allclose(box.origin[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    assert box.material.rgba == (1.0, 0.0, 0.0, 1.0)
    np.testing.assert_allclose(cyl.material.rgba, (0, 0, 200 / 255, 1))
    assert base.collisions[0].geometry.radius == 0.25
    mesh = base.collisions[1].geometry
    assert mesh.scale == (0.001, 0.002, 0.003) and mesh.path == os.path.normpath("/tmp/x/m.obj")
    assert base.inertial.mass == 2.5 and base.inertial.inertia[0, 1] == 0.1
    assert robot.floating_base
    assert [robot.joints[n].gc_dim for n in robot.joint_order] == [4, 7, 3]
    assert robot.gc_dim == 7 + 4 + 7 + 3 and robot.dof_dim == 6 + 3 + 6 + 3
    np.testing.assert_allclose(robot.joints["p"].axis, [0, 0, 1])


def test_package_and_relative_mesh_paths(tmp_path):
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    (tmp_path / "pkg" / "meshes" / "a.dae").write_text("x")
    (tmp_path / "urdf").mkdir()
    (tmp_path / "urdf" / "b.obj").write_text("x")
    urdf = tmp_path / "urdf" / "r.urdf"
    urdf.write_text("""<robot name="r"><link name="l">
      <visual><geometry><mesh filename="package://pkg/meshes/a.dae"/></geometry></visual>
      <visual><geometry><mesh filename="b.obj"/></geometry></visual></link></robot>""")
    robot = read_robot(str(urdf))
    a, b = (v.geometry.path for v in robot.links["l"].visuals)
    assert a == str(tmp_path / "pkg" / "meshes" / "a.dae")
    assert b == str(tmp_path / "urdf" / "b.obj")
    # an explicit resource directory wins
    (tmp_path / "res" / "meshes").mkdir(parents=True)
    (tmp_path / "res" / "meshes" / "a.dae").write_text("x")
    assert resolve_resource("package://pkg/meshes/a.dae", str(tmp_path / "urdf"), str(tmp_path / "res")) == \
        str(tmp_path / "res" / "meshes" / "a.dae")


def test_errors_name_the_line():
    with pytest.raises(FormatError) as err:
        loads_robot('<robot name="r">\n<link name="a"/>\n<joint name="j" type="fixed">\n'
                    '<parent link="a"/><child link="zz"/></joint></robot>', "t.urdf")
    assert err.value.first.line == 3 and "zz" in err.value.first.message
    with pytest.raises(FormatError) as err:
        loads_robot('<robot>\n<link name="a"/>\n<link name="b"/>\n</robot>', "t.urdf")
    assert "more than one root" in err.value.first.message
    with pytest.raises(FormatError) as err:
        loads_robot('<robot>\n<link name="a">\n<visual><geometry><box size="1 x 2"/></geometry></visual>'
                    '</link></robot>', "t.urdf")
    assert err.value.first.line == 3
    with pytest.raises(FormatError):
        loads_robot('<robot><link name="a"/><link name="b"/><joint name="j" type="weird">'
                    '<parent link="a"/><child link="b"/></joint></robot>')


def test_template_parameters_required():
    template = [p for p in URDF_FILES if "@@" in p.read_text(errors="replace")]
    assert template, "the corpus has templated URDFs (raisim_xml/.../rsc)"
    with pytest.raises(FormatError, match="@@"):
        read_robot(str(template[0]))


def test_registry_reads_urdf_as_scene(tmp_path):
    path = tmp_path / "planar.urdf"
    path.write_text(PLANAR_2LINK)
    scene = registry.read_scene(str(path))
    assert scene.source_format == "urdf"
    resource, = scene.of("articulated_resource")
    art, = scene.of("articulated")
    assert art.get("resourceId") == resource.id
    assert list(art.get("generalizedCoordinate")) == [0.0, 0.0]


def test_joint_order():
    robot = loads_robot(PLANAR_2LINK)
    assert robot.joint_order == ["j1", "j2"]
    robot.joint_order = ["j2", "j1"]
    assert robot.gc_slices() == {"j2": slice(0, 1), "j1": slice(1, 2)}
    with pytest.raises(ValueError):
        robot.joint_order = ["j2"]
