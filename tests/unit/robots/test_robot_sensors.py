"""A robot's RaiSim sensor sets as scene sensors (robots/sensors.py), checked against ANYmal C's own files
(corpus: raisim2Lib's anymal_sensored.urdf, ouster1-64.xml, realsense435.xml), and the clockwise spin."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats.robot_files import read_robot_file
from rscene_addon.robots.sensors import robot_sensors, sensor_path
from rscene_addon.sensors.lidar import LidarPattern
from tests.corpus import CORPUS, require_corpus

ANYMAL_C = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc" / "anymal_c" / "urdf" / "anymal_sensored.urdf"


def _anymal():
    require_corpus("robots")
    return {(s.link, s.name): s for s in robot_sensors(read_robot_file(str(ANYMAL_C)))}


def test_anymal_c_sensors_as_its_files_give_them():
    sensors = _anymal()
    assert sorted(sensors) == sorted(
        [("lidar_link", "lidar"), ("lidar_link", "imu")]
        + [(f"depth_camera_{side}_camera_parent", n) for side in ("front", "rear") for n in ("color", "depth", "imu")])
    lidar = sensors["lidar_link", "lidar"]
    assert lidar.kind == "lidar" and lidar.set_name == "os1_64" and lidar.file.endswith("sensors/ouster1-64.xml")
    # <pitch samples="64" min_angle="-0.2897247" max_angle="0.2897247"/>, <yaw samples="512"/>,
    # <spin direction="clockwise" rate="10"/>, <range min="0.8" max="40"/>
    assert lidar.lidar["channels"] == 64 and lidar.lidar["samples_per_revolution"] == 512
    assert lidar.lidar["vertical_fov_min_deg"] == pytest.approx(-math.degrees(0.2897247))
    assert lidar.lidar["vertical_fov_max_deg"] == pytest.approx(math.degrees(0.2897247))
    assert lidar.lidar["clockwise"] is True
    assert (lidar.lidar["min_range"], lidar.lidar["max_range"]) == (0.8, 40.0)
    assert lidar.update_rate == 10.0 and lidar.raisim["update_rate_hz"] == 100.0   # a revolution: the spin rate
    # the set's <origin xyz="0 0 0.008"/> then the sensor's xyz="0.006253 -0.011775 0.049645"
    assert lidar.mount[:3, 3] == pytest.approx([0.006253, -0.011775, 0.008 + 0.049645])
    color = sensors["depth_camera_front_camera_parent", "color"]
    # <camera horizontal_fov="1.047"><image width="640" height="480"/><clip near="0.1" far="100"/>
    # <noise type="gaussian" mean="0.0" stddev="0.007"/>; square pixels
    assert (color.kind, color.width, color.height) == ("rgb", 640, 480)
    assert color.horizontal_fov_deg == pytest.approx(math.degrees(1.047))
    assert math.tan(math.radians(color.vertical_fov_deg) / 2) == pytest.approx(math.tan(1.047 / 2) * 480 / 640)
    assert (color.near, color.far, color.noise_stddev) == (0.1, 100.0, 0.007)
    assert color.update_rate == 20.0
    assert color.mount[:3, 3] == pytest.approx([0.0, -0.046, 0.015 + 0.004])
    assert sensors["depth_camera_front_camera_parent", "depth"].kind == "depth"
    assert sensors["depth_camera_rear_camera_parent", "imu"].update_rate == 200.0
    assert sensors["lidar_link", "imu"].raisim["acc_limit"] == 50.0


def test_a_resolution_scale_keeps_the_field_of_view():
    require_corpus("robots")
    robot = read_robot_file(str(ANYMAL_C))
    full = {(s.link, s.name): s for s in robot_sensors(robot)}
    small = {(s.link, s.name): s for s in robot_sensors(robot, 0.05)}
    key = ("depth_camera_front_camera_parent", "depth")
    assert (small[key].width, small[key].height) == (32, 24)
    assert small[key].horizontal_fov_deg == full[key].horizontal_fov_deg
    assert small[key].vertical_fov_deg == pytest.approx(full[key].vertical_fov_deg)
    assert small["lidar_link", "lidar"].lidar == full["lidar_link", "lidar"].lidar   # lidars keep their pattern
    with pytest.raises(ValueError, match="scale"):
        robot_sensors(robot, 0.0)


def test_sensor_paths_name_robot_link_and_sensor():
    assert sensor_path("Anymal", "lidar_link", "lidar") == "Anymal/lidar_link/lidar"
    assert sensor_path("/World/Anymal/", "/lidar_link", "lidar") == "World/Anymal/lidar_link/lidar"


def test_a_clockwise_head_turns_the_other_way_over_the_same_columns():
    ccw = LidarPattern(1, 8, 0.0, 0.0, 360.0, 10.0)
    cw = LidarPattern(1, 8, 0.0, 0.0, 360.0, 10.0, clockwise=True)
    assert ccw.azimuths_deg().tolist() == [-180, -135, -90, -45, 0, 45, 90, 135]
    assert cw.azimuths_deg().tolist() == [-180, 135, 90, 45, 0, -45, -90, -135]
    # seen from above (+z), a clockwise turn is a negative rotation about z
    d = cw.ray_directions()
    assert np.all(np.cross(d[1:-1], d[2:])[:, 2] < 0)
    partial = LidarPattern(1, 3, 0.0, 0.0, 90.0, 10.0, clockwise=True)
    assert partial.azimuths_deg().tolist() == [45.0, 0.0, -45.0]
