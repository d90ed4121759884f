"""Robots that sense (#22): a URDF's RaiSim sensor sets render from the robot's own baked motion, and a
sensor's rays pass through the body it is mounted on (RaiSim's objectId/localId; AirSim does the same).

Truths: the floor's distance below a falling robot's downward depth camera (its link's baked pose and the
mount), a wall's distance from a lidar on a robot coasting at a known velocity (x0 + v t at each ray's
firing time), an empty sky around an AirSim drone (no ground: no point), and ANYmal C's own files.
"""
from __future__ import annotations

import json
from pathlib import Path

import bpy
import numpy as np
import pytest

from rscene_addon.blender import robots as rb
from rscene_addon.blender import scene_import
from rscene_addon.blender.robot_sensors import SENSOR_KEY
from rscene_addon.render.pipeline import render_scene
from rscene_addon.render.robot_sensors import SCALE_KEY
from tests.corpus import CORPUS, require_corpus

ANYMAL_B = Path(__file__).resolve().parents[1] / "data" / "raisim2Lib" / "rsc" / "anymal" / "urdf" / "anymal.urdf"

ANYMAL_C_SENSORED = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc" / "anymal_c" / "urdf" / "anymal_sensored.urdf"
DRONE_SCENE = (CORPUS / "airsim" / "iamaisim-ProjectAirSim" / "client" / "python" / "example_user_scripts"
               / "sim_config" / "scene_lidar_drone.jsonc")
GROUND = ("object /World/Ground ground 0 0 0 1 0 0 0 20 20 1 0.5 1 1 default - false true false - static true 1 "
          "18446744073709551615\n")

# a floating box robot; its body link names a sensor set (the box is drawn around the sensors, and a small
# probe link hangs 0.3 m below the body's centre: the robot's other links stay visible)
BOX_URDF = """<?xml version="1.0"?>
<robot name="boxbot">
  <link name="body" sensor="{sensor_file}">
    <inertial><mass value="2"/><inertia ixx="0.03" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="0.4 0.4 0.2"/></geometry></visual>
  </link>
  <link name="probe">
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="0.05 0.05 0.05"/></geometry></visual>
  </link>
  <joint name="probe_mount" type="fixed"><parent link="body"/><child link="probe"/>
    <origin xyz="0 0 -0.3"/></joint>
</robot>
"""

DOWN_DEPTH = """<?xml version="1.0"?>
<sensor_set name="downcam">
  <origin xyz="0 0 0.02"/>
  <link>
    <sensor name="depth" type="depth" update_rate="24">
      <origin xyz="0 0 0" rpy="0 1.5707963267948966 0"/>
      <camera horizontal_fov="1.0">
        <image width="9" height="9"/>
        <clip near="0.05" far="20"/>
      </camera>
    </sensor>
  </link>
</sensor_set>
"""

RING_LIDAR = """<?xml version="1.0"?>
<sensor_set name="ring">
  <origin xyz="0 0 0"/>
  <link>
    <sensor name="lidar" type="spinning_lidar" update_rate="100">
      <origin xyz="0.05 0 0" rpy="0 0 0"/>
      <yaw samples="360"/>
      <pitch samples="1" min_angle="0" max_angle="0"/>
      <spin direction="clockwise" rate="10"/>
      <range min="0.05" max="40"/>
    </sensor>
  </link>
</sensor_set>
"""


def _box_robot(tmp_path, sensor_xml: str, extra: str = "", gravity: str = "0 0 -9.81", state: str = "") -> None:
    (tmp_path / "sensors").mkdir()
    (tmp_path / "sensors" / "set.xml").write_text(sensor_xml)   # found in [urdf_dir]/sensors, as RaiSim looks
    (tmp_path / "boxbot.urdf").write_text(BOX_URDF.format(sensor_file="set.xml"))
    (tmp_path / "scene.rscene").write_text(
        "raisim_engine_scene 2\n"
        f"gravity {gravity}\n"
        "articulated_resource boxbot_res boxbot boxbot.urdf\n"
        f"articulated /World/Boxbot boxbot_res 0 0 1 1 0 0 0 true true {state}\n" + extra)
    scene_import.import_scene_file(str(tmp_path / "scene.rscene"), bpy.context.scene)
    bpy.context.scene.render.fps = 24


def _link(name: str):
    return next(ob for ob in bpy.data.objects if ob.get(rb.LINK_KEY) == name)


def test_a_robot_depth_camera_sees_the_floor_at_its_height_as_the_robot_falls(blank, tmp_path):
    _box_robot(tmp_path, DOWN_DEPTH, GROUND)
    sensor = next(ob for ob in bpy.data.objects if SENSOR_KEY in ob.keys())
    assert sensor.parent is _link("body") and sensor.type == "CAMERA"
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=7) == {"FINISHED"}
    result = render_scene(bpy.context.scene, tmp_path / "out", frames=[1, 7], samples=1)
    name = "Boxbot/body/depth"
    assert set(result["sensors"]) == {name}
    heights = []
    for frame in (1, 7):
        bpy.context.scene.frame_set(frame)
        body = np.array(_link("body").matrix_world)
        # the camera sits 0.02 above the body's centre and looks straight down: planar depth is its height
        height = float((body @ np.array([0.0, 0.0, 0.02, 1.0]))[2])
        depth = np.load(result["sensors"][name][frame]["depth.npy"])
        assert depth.shape == (9, 9)
        probe = 0.3 + 0.02 - 0.025   # the probe link's top face, 0.3 below the centre: the robot's own link
        assert depth[4, 4] == pytest.approx(probe, abs=1e-4)
        floor = np.ones_like(depth, dtype=bool)
        floor[4, 4] = False
        assert depth[floor] == pytest.approx(np.full(floor.sum(), height), abs=1e-4)  # not the box around it
        heights.append(height)
    t = 6 / 24
    assert heights[0] - heights[1] == pytest.approx(0.5 * 9.81 * t * t, abs=0.02)  # it fell, as bodies do


def test_a_lidar_on_a_coasting_robot_measures_the_wall_at_each_rays_firing_time(blank, tmp_path):
    wall = ("object /World/Wall box 5.1 0 1 1 0 0 0 0.2 30 4 0 1 1 default - false true false - static true 1 "
            "18446744073709551615\n")
    _box_robot(tmp_path, RING_LIDAR, wall, gravity="0 0 0",
               state="generalizedVelocity=1,0,0,0,0,0")  # 1 m/s along +x, nothing acting on it
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=4) == {"FINISHED"}
    result = render_scene(bpy.context.scene, tmp_path / "out", frames=[1, 2, 3], samples=1)
    name = "Boxbot/body/lidar"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    entry = manifest["sensors"][name]
    assert entry["properties"]["robot"] == "Boxbot" and entry["properties"]["link"] == "body"
    assert entry["properties"]["sensor_set"] == "ring"
    # 10 rev/s, clockwise from az = 180: frame 1 sweeps az 180..31, frame 2 30..-119, frame 3 -120..91 (away
    # from the wall, 30 m wide: |az| < 71.7 deg)
    assert len(np.load(result["sensors"][name][3]["points.npy"])) == 0
    for frame in (1, 2):
        points = np.load(result["sensors"][name][frame]["points.npy"])
        # the columns fired in the frame (1 deg apart, one every 1/3600 s) whose ray meets the wall's face
        k = np.arange(150 * (frame - 1), 150 * frame)
        az = np.radians(np.where(k == 0, -180.0, -(-180.0 + k)))
        reach = np.abs(np.tan(az) * (5.0 - (0.05 + k / 3600.0))) <= 15.0
        assert len(points) == int(np.sum((np.cos(az) > 0) & reach))
        azimuth = np.arctan2(points["y"], points["x"])
        assert np.all(np.cos(azimuth) > 0)  # the wall only: not the box around the lidar, nothing behind
        sensor_x = 0.05 + 1.0 * points["t"]  # x0 + v t at each ray's firing time (scene time 0 = frame 1)
        expected = (5.0 - sensor_x) / np.cos(azimuth)
        assert points["range"] == pytest.approx(expected, abs=2e-4)
        assert np.all(np.diff(azimuth[np.argsort(points["t"], kind="stable")]) < 0)  # clockwise: az decreases
    assert entry["properties"]["lidar"]["samples_per_revolution"] == 360


def test_anymal_c_renders_its_ouster_and_both_realsenses_from_its_baked_motion(blank, tmp_path):
    require_corpus("robots")
    pytest.importorskip("collada", reason="pycollada is installed by scripts/setup.sh from the shipped wheels")
    (tmp_path / "anymal.rscene").write_text(
        "raisim_engine_scene 2\n"
        f"articulated_resource anymal_res anymal {ANYMAL_C_SENSORED}\n"
        "articulated /World/Anymal anymal_res 0 0 0.7 1 0 0 0 true true\n" + GROUND)
    scene_import.import_scene_file(str(tmp_path / "anymal.rscene"), bpy.context.scene)
    sc = bpy.context.scene
    sc.render.fps = 24
    sc[SCALE_KEY] = 0.05   # 640x480 -> 32x24: a quick look keeps each camera's field of view
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=3) == {"FINISHED"}
    result = render_scene(sc, tmp_path / "out", frames=[3], samples=1)
    assert not result["cancelled"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    cams = [f"Anymal/depth_camera_{side}_camera_parent/{kind}" for side in ("front", "rear")
            for kind in ("color", "depth")]
    for name in cams + ["Anymal/lidar_link/lidar"]:
        assert name in result["sensors"], name
        props = manifest["sensors"][name]["properties"]
        assert props["robot"] == "Anymal" and props["link"] in name
        assert props["sensor_set_file"].endswith(("realsense435.xml", "ouster1-64.xml"))
    for side in ("front", "rear"):
        rgb = bpy.data.images.load(result["sensors"][f"Anymal/depth_camera_{side}_camera_parent/color"][3]["rgb.png"])
        assert tuple(rgb.size) == (32, 24)
        name = f"Anymal/depth_camera_{side}_camera_parent/depth"
        depth = np.load(result["sensors"][name][3]["depth.npy"])
        entry = manifest["sensors"][name]
        assert depth.shape == (24, 32) and entry["properties"]["raisim"]["horizontal_fov"] == pytest.approx(1.047)
        # where the ground is in view, the depth is the ground's (noise: RaiSim's gaussian, 0.007 m)
        ground = _ground_depth(entry["intrinsics"]["K"], entry["frames"][0]["camera_to_world_opencv"], depth.shape)
        seen = np.isfinite(ground) & (ground < 20)
        assert seen.sum() > 100
        close = np.abs(depth[seen] - ground[seen]) < 0.035
        assert close.mean() > 0.8   # the rest: the robot's own legs in front of the ground
        assert np.all(depth[seen][~close] < ground[seen][~close])
    lidar = manifest["sensors"]["Anymal/lidar_link/lidar"]
    points = np.load(result["sensors"]["Anymal/lidar_link/lidar"][3]["points.npy"])
    pose = np.array(lidar["frames"][0]["sensor_to_world"])
    world = np.stack([points["x"], points["y"], points["z"], np.ones(len(points))], 1) @ pose.T
    assert len(points) > 1000 and points["range"].min() >= 0.8
    assert np.mean(np.abs(world[:, 2]) < 0.03) > 0.9   # the Ouster sees the ground around the robot
    # the sensors ride on their links: the manifest's pose is the link's baked pose times the mount
    sc.frame_set(3)
    link = np.array(_link("lidar_link").matrix_world)
    assert pose[:3, 3] == pytest.approx((link @ np.array([0.006253, -0.011775, 0.008 + 0.049645, 1.0]))[:3], abs=1e-5)


def _ground_depth(k, camera_to_world, shape) -> np.ndarray:
    """Planar depth of the plane z = 0 through every pixel centre (inf where the ray does not reach it)."""
    k, t = np.array(k), np.array(camera_to_world)
    v, u = np.mgrid[0:shape[0], 0:shape[1]] + 0.5
    rays = np.stack([(u - k[0, 2]) / k[0, 0], (v - k[1, 2]) / k[1, 1], np.ones(shape)], -1)
    down = rays @ t[:3, :3].T
    with np.errstate(divide="ignore", invalid="ignore"):
        s = -t[2, 3] / down[..., 2]
    return np.where(s > 0, s, np.inf)


def test_a_drone_lidar_ignores_its_own_hull_and_sees_nothing_in_an_empty_sky(blank, tmp_path):
    """Project AirSim's lidar drone (corpus): the lidar sits inside the drone's hull, as AirSim's own
    objectId rule has it the hull is not seen: no ground, no point (318 on the hull before). A plane added
    under the drone is seen, at its height."""
    require_corpus("airsim")
    scene_import.import_scene_file(str(DRONE_SCENE), bpy.context.scene)
    sc = bpy.context.scene
    hull = [ob for ob in sc.objects if ob.parent is not None and ob.parent.name == "Drone1" and ob.type == "MESH"]
    assert len(hull) == 5   # a box and four rotor cylinders around the lidar
    name = "/World/Drone1/lidar1"
    result = render_scene(sc, tmp_path / "sky", frames=[1], sensors=[name], samples=1)
    assert len(np.load(result["sensors"][name][1]["points.npy"])) == 0
    bpy.ops.mesh.primitive_plane_add(size=200.0, location=(0.0, 0.0, 0.0))
    result = render_scene(sc, tmp_path / "ground", frames=[1], sensors=[name], samples=1)
    points = np.load(result["sensors"][name][1]["points.npy"])
    manifest = json.loads((tmp_path / "ground" / "manifest.json").read_text())
    pose = np.array(manifest["sensors"][name]["frames"][0]["sensor_to_world"])
    world = np.stack([points["x"], points["y"], points["z"], np.ones(len(points))], 1) @ pose.T
    assert len(points) > 10 and world[:, 2] == pytest.approx(np.zeros(len(points)), abs=1e-3)


def test_anymal_with_raisim2libs_d455_module_renders_that_camera(blank, tmp_path):
    """A module names a sensor link (rsc/anymal/modules/d455, tests/data/raisim2Lib): its RealSense renders
    from where the module mounts it, 0.27 m ahead of the base and 0.17 m up, looking ahead."""
    (tmp_path / "anymal.rscene").write_text(
        "raisim_engine_scene 2\n"
        f"articulated_resource anymal_res anymal {ANYMAL_B}\n"
        "articulated /World/Anymal anymal_res 0 0 0.6 1 0 0 0 true true modules=d455\n" + GROUND)
    scene_import.import_scene_file(str(tmp_path / "anymal.rscene"), bpy.context.scene)
    sc = bpy.context.scene
    sc[SCALE_KEY] = 0.05   # 640x360 -> 32x18
    result = render_scene(sc, tmp_path / "out", frames=[1], samples=1)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    names = {"Anymal/d455_front/color", "Anymal/d455_front/depth_aligned", "Anymal/d455_front/depth"}
    assert names <= set(result["sensors"])
    rgb = bpy.data.images.load(result["sensors"]["Anymal/d455_front/color"][1]["rgb.png"])
    assert tuple(rgb.size) == (32, 18)
    entry = manifest["sensors"]["Anymal/d455_front/depth"]
    pose = np.array(entry["frames"][0]["camera_to_world_opencv"])
    sc.frame_set(1)
    base = np.array(_link("base").matrix_world)
    # the module's joint (0.270 0 0.16957 on base) and the sensor's origin (-0.0043 0 0) in realsense455.xml
    assert pose[:3, 3] == pytest.approx((base @ np.array([0.270 - 0.0043, 0.0, 0.16957, 1.0]))[:3], abs=1e-5)
    depth = np.load(result["sensors"]["Anymal/d455_front/depth"][1]["depth.npy"])
    ground = _ground_depth(entry["intrinsics"]["K"], entry["frames"][0]["camera_to_world_opencv"], depth.shape)
    seen = np.isfinite(ground) & (ground < 10)   # clip far="10"
    assert seen.sum() > 50
    assert np.abs(depth[seen] - ground[seen]) == pytest.approx(np.zeros(seen.sum()), abs=0.035)  # noise 0.007


def test_export_leaves_the_robots_sensors_in_its_urdf_and_sensor_files(blank, tmp_path):
    require_corpus("robots")
    pytest.importorskip("collada", reason="pycollada is installed by scripts/setup.sh from the shipped wheels")
    from rscene_addon.blender.extract import export_scene

    files = [ANYMAL_C_SENSORED, ANYMAL_C_SENSORED.parents[1] / "sensors" / "ouster1-64.xml",
             ANYMAL_C_SENSORED.parents[1] / "sensors" / "realsense435.xml"]
    before = [f.read_bytes() for f in files]
    text = ("raisim_engine_scene 2\n"
            f"articulated_resource anymal_res anymal {ANYMAL_C_SENSORED}\n"
            "articulated /World/Anymal anymal_res 0 0 0.7 1 0 0 0 true true\n")
    (tmp_path / "in.rscene").write_text(text)
    scene_import.import_scene_file(str(tmp_path / "in.rscene"), bpy.context.scene)
    assert len([ob for ob in bpy.data.objects if SENSOR_KEY in ob.keys()]) == 8
    export_scene(bpy.context.scene, str(tmp_path / "out.rscene"))
    out = (tmp_path / "out.rscene").read_text()
    assert not [line for line in out.splitlines() if line.startswith("sensor")]
    assert [f.read_bytes() for f in files] == before
