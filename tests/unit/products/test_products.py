"""The bpy-free render helpers (plan, segmentation ids, manifest merging, timing), in the pure suite:
nothing here needs Blender, and test_bpy_free_render_modules checks that in a child interpreter."""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.products import chunks, outputs, plan, segmentation, timing
from rscene_addon.base.spatial import quat_from_axis_angle, quat_to_matrix
from rscene_addon.sensors.manifest import Manifest

PURE = ("render", "commands.render_job")  # the products package is covered by test_pure_imports


def test_bpy_free_render_modules_import_without_blender():
    names = ", ".join(f"rscene_addon.{m}" for m in PURE)
    code = textwrap.dedent(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in ("bpy", "mathutils", "bpy_extras"):
                    raise ImportError(name)
        sys.meta_path.insert(0, Block())
        import {names}
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_specs_from_records_and_selection():
    doc = rscene.loads("\n".join([
        "raisim_engine_scene 2",
        "camera /World/Cam -4 0 0.5 1 0 0 0 60 0.05 100 64 48 rgb true horizontalFov=90",
        "camera /World/Off 0 0 0 1 0 0 0 60 0.05 100 64 48 rgb false",
        "sensor /World/Rgb rgb /World/Box 0 0 1 1 0 0 0 width=40 height=30 segmentation=true "
        "calibrationFx=50 calibrationFy=35",
        "sensor /World/Lidar lidar - 0 0 0 1 0 0 0 lidarChannels=16 lidarSamples=1800 lidarVerticalFov=30 "
        "updateRate=10",
        "sensor /World/Ft force_torque - 0 0 0 1 0 0 0",
    ]) + "\n", lazy=True)
    specs = plan.specs_from_document(doc)
    assert [s.name for s in specs] == ["/World/Cam", "/World/Off", "/World/Rgb", "/World/Lidar", "/World/Ft"]
    cam, off, rgb, lidar, ft = specs
    assert cam.products == plan.CAMERA_PRODUCTS and cam.uid == 1
    assert cam.intrinsics.fx == pytest.approx(32.0)
    assert cam.intrinsics.fy == pytest.approx(24 / math.tan(math.pi / 6))
    assert rgb.products == ("rgb", "segmentation") and rgb.parent == "/World/Box"
    assert (rgb.intrinsics.fx, rgb.intrinsics.fy, rgb.intrinsics.cx, rgb.intrinsics.cy) == (50, 35, 20, 15)
    assert lidar.lidar["channels"] == 16 and lidar.lidar["horizontal_fov_deg"] == 360.0
    assert ft.products == ()
    chosen, unmatched = plan.select_specs(specs)
    assert [s.name for s in chosen] == ["/World/Cam", "/World/Rgb", "/World/Lidar"]
    chosen, unmatched = plan.select_specs(specs, ["Off", "sensor_/World/Lidar", "Eye"])
    assert [s.name for s in chosen] == ["/World/Off", "/World/Lidar"] and unmatched == ["Eye"]
    assert plan.split_names(["a,b", " c "]) == ["a", "b", "c"]


def test_samples_follow_the_preset_capped():
    assert plan.samples_for_preset("fast") == 16
    assert plan.samples_for_preset("ultra", cap=4) == 4
    assert plan.samples_for_preset("low", cap=None, fallback=10) == 10
    with pytest.raises(ValueError):
        plan.samples_for_preset("fast", cap=0)


def test_instance_ids_explicit_then_automatic_without_collisions():
    entities = [
        segmentation.Entity("/World/B", explicit_id=3, semantic_class="crate"),
        segmentation.Entity("/World/A", semantic_class="ball"),
        segmentation.Entity("/World/C", explicit_id=3),
        segmentation.Entity("blender:Plane"),
        segmentation.Entity("/World/D", color=(1.0, 0.0, 0.0, 1.0)),
    ]
    table = segmentation.IdTable(entities)
    ids = table.instance_id
    assert ids["/World/B"] == ids["/World/C"] == 3
    assert [ids[k] for k in ("/World/A", "/World/D", "blender:Plane")] == [4, 5, 6]
    assert table.class_ids == {"ball": 1, "crate": 2}
    assert table.color("/World/D") == (1.0, 0.0, 0.0)
    assert table.color("/World/A") == segmentation.color_for_id(4)
    index = np.array([[0, 1, 2], [5, 4, 99]], dtype=np.float32)  # pass indices in sorted key order
    instance, semantic = table.decode(index)
    assert instance.tolist() == [[-1, 4, 3], [6, 5, -1]]
    assert semantic.tolist() == [[0, 1, 2], [0, 0, 0]]
    listing = table.id_map()
    assert [e["key"] for e in listing["instances"]["3"]] == ["/World/B", "/World/C"]
    # without explicit ids: 1 + index in the sorted paths
    plain = segmentation.IdTable([segmentation.Entity(k) for k in ("/b", "/a", "/c")])
    assert [plain.instance_id[k] for k in ("/a", "/b", "/c")] == [1, 2, 3]


def test_boxes_2d_are_tight_pixel_corner_boxes():
    image = np.full((6, 8), -1, dtype=np.int32)
    image[1:3, 2:5] = 4
    image[5, 7] = 9
    image[0, 0] = 4
    boxes = segmentation.boxes_2d(image)
    assert boxes == {4: {"bbox": [0, 0, 5, 3], "pixels": 7}, 9: {"bbox": [7, 5, 8, 6], "pixels": 1}}
    assert segmentation.boxes_2d(np.full((2, 2), -1)) == {}


def _manifest(frames, chunk=None):
    m = outputs.RenderManifest({"scene": "s", "frames": list(frames), "complete": True})
    if chunk:
        m.metadata["chunk"] = chunk
    m.add_sensor("/World/L", "lidar")
    for f in frames:
        m.add_sensor_pose("/World/L", f, np.eye(4), time=f / 24)
        for ext in ("npy", "ply"):
            m.add_output("/World/L", f, "points", ext, (3,), np.float32, "m")
    return m


def test_render_manifest_keeps_several_extensions_per_layer_and_merges_chunks():
    full = _manifest([1, 2, 3])
    assert full.files() == [f"World.L/points_0000{f}.{e}" for f in (1, 2, 3) for e in ("npy", "ply")]
    with pytest.raises(ValueError):
        full.add_output("/World/L", 1, "points", "npy", (3,), np.float32, "m")
    merged = outputs.merge_manifests([_manifest([3], "2/2").to_dict(), _manifest([1, 2], "1/2").to_dict()])
    assert merged == full.to_dict()
    with pytest.raises(ValueError):
        outputs.merge_manifests([_manifest([1]).to_dict(), _manifest([1]).to_dict()])
    assert isinstance(full, Manifest)


def test_chunk_names():
    assert chunks.parse_chunk("2/4") == (2, 4)
    assert chunks.parse_chunk(None) is None
    for bad in ("0/2", "3/2", "x"):
        with pytest.raises(ValueError):
            chunks.parse_chunk(bad)
    assert chunks.manifest_filename((2, 4)) == "manifest_chunk2-of-4.json"
    assert chunks.manifest_filename(None) == "manifest.json"


def test_frame_windows_partition_ticks():
    clock = timing.FrameClock(frame_start=1, fps=24)
    assert clock.time(1) == 0.0 and clock.window(3) == (2 / 24, 3 / 24)
    ticks = [list(timing.tick_range(*clock.window(f), 100.0)) for f in range(1, 25)]
    flat = [k for t in ticks for k in t]
    assert flat == list(range(100))  # one second of 100 Hz ticks, each in exactly one frame
    assert list(timing.tick_range(0.0, 0.1, 30.0)) == [0, 1, 2]


def test_pose_interpolation():
    a = np.eye(4)
    b = np.eye(4)
    b[:3, :3] = quat_to_matrix(quat_from_axis_angle([0, 0, 1], math.pi / 2))
    b[:3, 3] = (2, 0, 0)
    p, r = timing.interpolate_poses(a, b, np.array([0.0, 0.5, 1.0]))
    assert p[1] == pytest.approx([1, 0, 0])
    assert r[1] == pytest.approx(quat_to_matrix(quat_from_axis_angle([0, 0, 1], math.pi / 4)))
    assert r[2] == pytest.approx(b[:3, :3])
    p, r = timing.interpolate_poses(a, a, np.zeros(2))
    assert np.array_equal(r[0], np.eye(3))
