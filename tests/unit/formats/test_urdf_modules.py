"""URDF modules (#22) as ArticulatedSystem.rst describes them, with raisim2Lib's ANYmal and its own ``d455``
and ``livox_lidar`` modules (tests/data/raisim2Lib, copied unchanged: see SOURCES.md there)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from rscene_addon.formats import rscene
from rscene_addon.formats.robot_files import read_robot_file, robot_for_record
from rscene_addon.formats.urdf_modules import find_module, with_modules
from rscene_addon.model import FormatError
from rscene_addon.robots.sensors import robot_sensors

ANYMAL = Path(__file__).resolve().parents[2] / "data" / "raisim2Lib" / "rsc" / "anymal" / "urdf" / "anymal.urdf"


def test_modules_are_found_in_raisims_order(tmp_path):
    base = tmp_path / "robot" / "urdf"
    places = [base / "m.xml", base / "modules" / "m.xml", base.parent / "modules" / "m.xml",
              base / "module" / "m.xml", base.parent / "module" / "m.xml"]
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text("<link/>")
    for place in places:   # "first match wins": take each away in turn
        assert Path(find_module("m.xml", str(base))) == place.resolve()
        place.unlink()
    assert find_module("m.xml", str(base)) is None
    absolute = tmp_path / "abs.xml"
    absolute.write_text("<link/>")
    assert find_module(str(absolute), str(base)) == str(absolute)


def test_a_module_goes_before_the_closing_robot_tag(tmp_path):
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "a").write_text('<link name="a"/>')
    (tmp_path / "modules" / "b").write_text('<link name="b"/>')
    text = '<robot name="r"><link name="base"/></robot>\n'
    out = with_modules(text, str(tmp_path / "r.urdf"), ["a", "b"])
    assert out.index('name="base"') < out.index('name="a"') < out.index('name="b"') < out.index("</robot>")
    assert with_modules(text, str(tmp_path / "r.urdf"), []) == text
    with pytest.raises(FormatError, match="module 'c' not found"):
        with_modules(text, str(tmp_path / "r.urdf"), ["c"])


def test_anymal_with_raisim2libs_d455_module_carries_that_realsense():
    plain = read_robot_file(str(ANYMAL))
    assert "d455_front" not in plain.links and not plain.sensor_sets
    robot = read_robot_file(str(ANYMAL), modules=["d455"])    # rsc/anymal/modules/d455: [urdf_dir]/../modules
    assert set(robot.links) == set(plain.links) | {"d455_front"}
    joint = robot.parent_joint("d455_front")
    assert joint.parent == "base" and joint.origin[:3, 3] == pytest.approx([0.270, 0.0, 0.16957])
    # its sensor="realsense455.xml" is found in [urdf_dir]/../sensors
    sensors = {s.name: s for s in robot_sensors(robot)}
    assert set(sensors) == {"color", "depth_aligned", "depth"}
    color = sensors["color"]
    assert (color.link, color.width, color.height) == ("d455_front", 640, 360)
    assert color.horizontal_fov_deg == pytest.approx(math.degrees(1.518))
    assert sensors["depth"].far == 10.0


def test_rscene_records_name_modules_themselves_or_through_their_resource(tmp_path):
    for line in (f"articulated_resource res anymal {ANYMAL} modules=d455;livox_lidar\n"
                 "articulated /World/Anymal res 0 0 0.6 1 0 0 0 true true\n",
                 f"articulated_resource res anymal {ANYMAL}\n"
                 "articulated /World/Anymal res 0 0 0.6 1 0 0 0 true true modules=d455;livox_lidar\n"):
        scene = rscene.loads("raisim_engine_scene 2\n" + line, str(tmp_path / "s.rscene"))
        robot = robot_for_record(scene, scene.of("articulated")[0])
        assert {"d455_front", "livox_lidar_0"} <= set(robot.links)
        lidar = next(s for s in robot_sensors(robot) if s.kind == "lidar")
        # mid360.xml: <pitch samples="64" min_angle="-0.122173" max_angle="0.907571"/>: not symmetric
        assert lidar.lidar["vertical_fov_min_deg"] == pytest.approx(math.degrees(-0.122173))
        assert lidar.lidar["vertical_fov_max_deg"] == pytest.approx(math.degrees(0.907571))
