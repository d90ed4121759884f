"""Lidar sweeps (with each ray casting backend: Embree and the BVHTree fallback) and IMU readings from the
baked animation, against analytic values."""
from __future__ import annotations

import math

import bpy
import numpy as np
import pytest

from rscene_addon.render import render_scene
from rscene_addon.products.plan import RenderOptions
from rscene_addon.sensors.noise import gaussian_noise
from rscene_addon.sensors.writers import read_pcd, read_ply
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    BOX, _session_registration, import_scene, render_env)

# 3 rings at -5, 0, +5 degrees, 8 columns (45 degrees apart); one revolution per 1/24 s = one frame
LIDAR = ("sensor /World/Lidar lidar - -4 0 0.5 1 0 0 0 lidarChannels=3 lidarSamples=8 lidarMinRange=0.1 "
         "lidarMaxRange=50 lidarVerticalFov=10 updateRate=24")
# an invisible body (collision only: not rendered, not seen by the lidar) the sensors ride on
MOUNT = ("object /World/Mount sphere -4 0 -3 1 0 0 0 1 1 1 0.05 1 1 default - false false false - kinematic "
         "true 1 18446744073709551615")


@pytest.fixture(params=["embree", "bvh"])
def raycaster(request):
    """Each backend in turn. embreex is a dependency (the extension ships its wheel; scripts/setup.sh
    installs it into the test environments), so a missing wheel fails rather than skips."""
    return request.param


def lidar_run(scene, out, frames, raycaster):
    """``render_scene`` with the given lidar backend; checks the manifest names that backend."""
    import json
    render_scene(scene, out, frames, options=RenderOptions(raycaster=raycaster))
    assert json.loads((out / "manifest.json").read_text())["metadata"]["lidar_raycaster"] == raycaster


def make_linear(ob) -> None:
    """Linear interpolation on every key of ``ob`` (4.5 and 5.0: through the action's channelbag)."""
    from bpy_extras import anim_utils
    anim = ob.animation_data
    bag = anim_utils.action_get_channelbag_for_slot(anim.action, anim.action_slot)
    for fcurve in bag.fcurves:
        for key in fcurve.keyframe_points:
            key.interpolation = "LINEAR"


def test_lidar_ranges_match_the_box_analytically(render_env, tmp_path, raycaster):
    scene = import_scene(tmp_path, BOX, LIDAR)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    out = tmp_path / "out"
    lidar_run(scene, out, [1, 2], raycaster)
    for frame in (1, 2):
        points = np.load(out / f"World.Lidar/points_{frame:05d}.npy")
        # only the column at azimuth 0 (the 5th of 8) hits the box's face x = -0.5, 3.5 m ahead; the
        # middle ring hits the face's centre, on the diagonal between its two triangles
        assert len(points) == 3
        elevation = np.radians([-5.0, 0.0, 5.0])
        assert points["ring"].tolist() == [0, 1, 2]
        assert points["range"] == pytest.approx(3.5 / np.cos(elevation), abs=1e-4)
        assert points["x"] == pytest.approx([3.5] * 3, abs=1e-4)
        assert points["y"] == pytest.approx([0.0] * 3, abs=1e-6)
        assert points["z"] == pytest.approx(3.5 * np.tan(elevation), abs=1e-4)
        assert points["object_id"].tolist() == [7, 7, 7]
        assert points["intensity"] == pytest.approx(np.cos(elevation), abs=1e-5)
        t0 = (frame - scene.frame_start) / 24.0
        assert points["t"] == pytest.approx([t0 + 4 / (8 * 24.0)] * 3, abs=1e-12)
        for reader, ext in ((read_ply, "ply"), (read_pcd, "pcd")):
            again = reader(out / f"World.Lidar/points_{frame:05d}.{ext}")
            assert again.dtype.names == points.dtype.names
            assert all(np.array_equal(again[n], points[n]) for n in points.dtype.names)


def test_lidar_follows_its_animated_parent_within_the_frame(render_env, tmp_path, raycaster):
    lidar = LIDAR.replace("lidar - -4 0 0.5", "lidar /World/Mount 0 0 3.5")
    scene = import_scene(tmp_path, BOX, MOUNT, lidar)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    mount = bpy.data.objects["Mount"]
    assert mount.hide_render
    mount.location = (-4, 0, -3)
    mount.keyframe_insert("location", frame=1)
    mount.location = (-2, 0, -3)
    mount.keyframe_insert("location", frame=3)  # 1 m per frame along +x (linear keys)
    make_linear(mount)
    out = tmp_path / "out"
    lidar_run(scene, out, [1, 2], raycaster)
    for frame in (1, 2):
        points = np.load(out / f"World.Lidar/points_{frame:05d}.npy")
        # the azimuth-0 column fires half way through the frame: the sensor is at x = -4 + (frame - 1) + 0.5
        x_sensor = -4.0 + (frame - 1) + 0.5
        assert points["range"][points["ring"] == 1] == pytest.approx([-0.5 - x_sensor], abs=1e-4)


def test_imu_of_a_static_body_reads_plus_g_on_z(render_env, tmp_path):
    imu = "sensor /World/Imu imu /World/Box 0 0 0.2 1 0 0 0 updateRate=100"
    scene = import_scene(tmp_path, BOX, imu)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    out = tmp_path / "out"
    render_scene(scene, out, [1, 2])
    rows = {}
    for frame in (1, 2):
        table = np.loadtxt(out / f"World.Imu/imu_{frame:05d}.csv", delimiter=",", skiprows=1, ndmin=2)
        rows[frame] = table
        assert table[:, 1:4] == pytest.approx(np.tile([0.0, 0.0, 9.81], (len(table), 1)), abs=1e-9)
        assert table[:, 4:7] == pytest.approx(np.zeros((len(table), 3)), abs=1e-12)
    # 100 Hz ticks k / 100 in [t(f), t(f + 1)): 0.00 .. 0.04, then 0.05 .. 0.08
    assert rows[1][:, 0] == pytest.approx([0.0, 0.01, 0.02, 0.03, 0.04])
    assert rows[2][:, 0] == pytest.approx([0.05, 0.06, 0.07, 0.08])


def test_imu_on_a_turning_body_reads_its_rate_and_centripetal_force(render_env, tmp_path):
    imu = "sensor /World/Imu imu /World/Mount 1 0 0 1 0 0 0 updateRate=60"
    scene = import_scene(tmp_path, BOX, MOUNT, imu)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    mount = bpy.data.objects["Mount"]
    mount.rotation_mode = "XYZ"
    mount.rotation_euler = (0, 0, 0)
    mount.keyframe_insert("rotation_euler", index=2, frame=0)
    mount.rotation_euler = (0, 0, 10 / 24)
    mount.keyframe_insert("rotation_euler", index=2, frame=10)  # 1 rad/s about z
    make_linear(mount)
    out = tmp_path / "out"
    render_scene(scene, out, [2, 3])
    table = np.concatenate([np.loadtxt(out / f"World.Imu/imu_{f:05d}.csv", delimiter=",", skiprows=1, ndmin=2)
                            for f in (2, 3)])
    assert len(table) == 5  # 60 Hz ticks in [1/24, 3/24)
    assert table[:, 4:7] == pytest.approx(np.tile([0.0, 0.0, 1.0], (len(table), 1)), abs=1e-6)
    # 1 m from the axis at 1 rad/s: 1 m/s^2 towards the axis (sensor -x), plus +g on z
    assert table[:, 1:4] == pytest.approx(np.tile([-1.0, 0.0, 9.81], (len(table), 1)), abs=2e-3)
    assert math.isclose(table[0, 0], 3 / 60)


def test_lidar_range_noise_is_seeded_per_frame(render_env, tmp_path, raycaster):
    noisy = LIDAR.replace("/World/Lidar", "/World/Noisy") + " noiseStddev=0.05 noiseSeed=4"
    scene = import_scene(tmp_path, BOX, LIDAR, noisy)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    out = tmp_path / "out"
    lidar_run(scene, out, [2], raycaster)
    clean = np.load(out / "World.Lidar/points_00002.npy")
    points = np.load(out / "World.Noisy/points_00002.npy")
    # noise is drawn for all 24 fired rays in firing order; the hits are rays 12, 13, 14 (column 4)
    expected = clean["range"].astype(np.float64) + gaussian_noise(24, 0.0, 0.05, 4, 2, "lidar")[12:15]
    assert points["range"] == pytest.approx(expected, abs=1e-5)
    assert np.linalg.norm(np.stack([points["x"], points["y"], points["z"]], axis=1), axis=1) == \
        pytest.approx(points["range"], abs=1e-5)
