"""Whole runs: the manifest lists every file as it is, chunks split a run exactly, the CLI, the script,
the operator and cancelling."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import bpy
import numpy as np

from rscene_addon.commands.render_job import run_render_cli
from rscene_addon.render import exr, render_scene
from rscene_addon.products.outputs import merge_manifests
from rscene_addon.sensors.writers import read_pcd, read_ply
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    BALL, BOX, CAMERA, _session_registration, import_scene, render_env, write_scene)

LIDAR = ("sensor /World/Lidar lidar - -4 0 0.5 1 0 0 0 lidarChannels=4 lidarSamples=16 lidarMinRange=0.1 "
         "lidarVerticalFov=20 updateRate=10")
IMU = "sensor /World/Imu imu /World/Box 0 0 0 1 0 0 0 updateRate=50 noiseStddev=0.01 noiseSeed=3"
NOISY_DEPTH = ("sensor /World/Depth depth /World/Box -4 0 0 1 0 0 0 width=24 height=16 segmentation=true "
               "noiseStddev=0.02 noiseSeed=9")
DISABLED = "sensor /World/Off rgb - 0 0 5 1 0 0 0 enabled=false"
ALL = (BOX, BALL, CAMERA, LIDAR, IMU, NOISY_DEPTH, DISABLED)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _data_files(folder) -> set[str]:
    found = set()
    for root, _, files in os.walk(folder):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), folder).replace(os.sep, "/")
            if not rel.startswith("manifest"):
                found.add(rel)
    return found


def _manifest(folder, name="manifest.json") -> dict:
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return json.load(f)


def _listed(manifest) -> dict[str, dict]:
    return {o["path"]: o for s in manifest["sensors"].values() for fr in s["frames"] for o in fr["outputs"]}


def _check_file(path: str, entry: dict) -> None:
    ext = entry["ext"]
    if ext == "npy":
        array = np.load(path)
        assert list(array.shape) == entry["shape"], path
        if array.dtype.names:
            assert [[n, array.dtype[n].name] for n in array.dtype.names] == entry["dtype"], path
        else:
            assert array.dtype.name == entry["dtype"], path
    elif ext in ("png", "exr"):
        dtype = {"uint8": "uint8", "uint16": "uint16", "float32": "float"}[entry["dtype"]]
        image = exr.read_image(path, dtype)
        shape = list(image.shape if image.shape[-1] > 1 else image.shape[:2])
        assert shape == entry["shape"], path
    elif ext == "csv":
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        assert [len(table), 7] == entry["shape"] and entry["dtype"] == "float64", path
    elif ext == "json":
        with open(path, encoding="utf-8") as f:
            assert [len(json.load(f)["instances"])] == entry["shape"], path
    elif ext in ("ply", "pcd"):
        points = (read_ply if ext == "ply" else read_pcd)(path)
        assert [len(points)] == entry["shape"], path
        assert [[n, points.dtype[n].name] for n in points.dtype.names] == entry["dtype"], path
    else:  # pragma: no cover
        raise AssertionError(f"unexpected extension {ext}")


def test_manifest_lists_every_file_with_its_shape_and_dtype(render_env, tmp_path):
    scene = import_scene(tmp_path, *ALL)
    out = tmp_path / "out"
    result = render_scene(scene, out, "1-2", samples=1)
    manifest = _manifest(out)
    listed = _listed(manifest)
    assert set(listed) == _data_files(out) == set(result["files"])
    for rel, entry in listed.items():
        _check_file(str(out / rel), entry)
    assert set(manifest["sensors"]) == {"/World/Cam", "/World/Lidar", "/World/Imu", "/World/Depth"}
    assert manifest["metadata"]["complete"] is True and manifest["metadata"]["frames"] == [1, 2]
    assert manifest["metadata"]["samples"] == 1
    lidar = manifest["sensors"]["/World/Lidar"]
    assert len(lidar["frames"][0]["sensor_to_world"]) == 4
    assert {o["ext"] for o in lidar["frames"][0]["outputs"]} == {"npy", "ply", "pcd"}
    assert result["sensors"]["/World/Cam"][1]["depth.npy"].endswith("World.Cam/depth_00001.npy")


def test_chunks_are_disjoint_and_together_equal_a_full_run(render_env, tmp_path):
    path = write_scene(tmp_path, *ALL)
    full, parts = tmp_path / "full", tmp_path / "parts"
    lines = []
    assert run_render_cli(path, "1-3", str(full), samples=1, print_fn=lines.append) == 0
    assert any("frame 3: /World/Cam" in line for line in lines)
    assert run_render_cli(path, "1-3", str(parts / "a"), samples=1, chunk="1/2", print_fn=lines.append) == 0
    assert run_render_cli(path, "1-3", str(parts / "b"), samples=1, chunk="2/2", print_fn=lines.append) == 0
    a, b = _data_files(parts / "a"), _data_files(parts / "b")
    assert a and b and not (a & b)
    assert a | b == _data_files(full)
    assert {f.rsplit("_", 1)[1] for f in a} >= {"00001.npy", "00002.npy"}
    for rel in sorted(a | b):
        chunk_file = parts / ("a" if rel in a else "b") / rel
        if rel.endswith(".npy"):
            x, y = np.load(full / rel), np.load(chunk_file)
            assert x.dtype == y.dtype and x.shape == y.shape, rel
            if x.dtype.names:
                assert all(np.array_equal(x[n], y[n]) for n in x.dtype.names), rel
            else:
                assert np.array_equal(x, y), rel
        elif rel.endswith((".csv", ".json", ".ply", ".pcd")):
            assert (full / rel).read_bytes() == chunk_file.read_bytes(), rel
    m1 = _manifest(parts / "a", "manifest_chunk1-of-2.json")
    m2 = _manifest(parts / "b", "manifest_chunk2-of-2.json")
    assert m1["metadata"]["chunk"] == "1/2" and m1["metadata"]["frames"] == [1, 2]
    assert merge_manifests([m1, m2]) == _manifest(full)


def test_cli_reports_errors_with_status_1(render_env, tmp_path):
    path = write_scene(tmp_path, BOX, CAMERA)
    lines = []
    assert run_render_cli(path, "5-1", str(tmp_path / "o"), print_fn=lines.append) == 1
    assert run_render_cli(path, "1", str(tmp_path / "o"), sensors="/World/Nope", print_fn=lines.append) == 1
    missing = str(tmp_path / "missing.rscene")
    assert run_render_cli(missing, "1", str(tmp_path / "o"), print_fn=lines.append) == 1
    assert run_render_cli(path, "1", str(tmp_path / "o"), chunk="3/2", print_fn=lines.append) == 1
    assert all(line.startswith("error:") for line in lines)


def test_script_renders_a_blend_in_a_fresh_process(render_env, tmp_path):
    import_scene(tmp_path, BOX, CAMERA, LIDAR)
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "render_rscene.py"), str(blend),
                           "--frames", "2", "--out", str(out), "--samples", "1", "--sensors", "/World/Lidar"],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _data_files(out) == {f"World.Lidar/points_00002.{ext}" for ext in ("npy", "ply", "pcd")}
    assert "wrote 3 files" in proc.stdout


def test_operator_renders_with_the_scene_settings(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, CAMERA, LIDAR)
    settings = scene.rscene_render
    settings.output_dir = str(tmp_path / "op")
    settings.use_scene_range = False
    settings.frame_start, settings.frame_end = 4, 4
    settings.samples = 1
    settings.sensors = "/World/Cam"
    assert bpy.ops.rscene.render_sensors() == {"FINISHED"}
    files = _data_files(tmp_path / "op")
    assert "World.Cam/rgb_00004.png" in files and not any(f.startswith("World.Lidar") for f in files)
    # operator properties override the settings
    assert bpy.ops.rscene.render_sensors(sensors="/World/Lidar", frame_start=5, frame_end=5,
                                         output_dir=str(tmp_path / "op2")) == {"FINISHED"}
    assert _data_files(tmp_path / "op2") == {f"World.Lidar/points_00005.{e}" for e in ("npy", "ply", "pcd")}
    # invoked (as from the panel's button): in background mode it runs to the end at once
    assert bpy.ops.rscene.render_sensors("INVOKE_DEFAULT", sensors="/World/Lidar", frame_start=6, frame_end=6,
                                         output_dir=str(tmp_path / "op3")) == {"FINISHED"}
    assert "World.Lidar/points_00006.npy" in _data_files(tmp_path / "op3")
    assert hasattr(bpy.types, "RSCENE_PT_render_sensors")
    # the panel's Cryptomatte switch adds the soft masks with the chosen depth
    settings.cryptomatte, settings.cryptomatte_levels = True, 3
    settings.output_dir = str(tmp_path / "op4")
    assert bpy.ops.rscene.render_sensors() == {"FINISHED"}
    coverage = np.load(tmp_path / "op4" / "World.Cam" / "cryptomatte_coverage_00004.npy")
    assert coverage.shape[2] == 3 and "World.Cam/cryptomatte_id_00004.npy" in _data_files(tmp_path / "op4")


def test_cancel_stops_between_steps_and_keeps_a_partial_manifest(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, CAMERA)
    engine = scene.render.engine
    calls = []
    result = render_scene(scene, tmp_path / "out", "1-5", samples=1, cancel=lambda: len(calls) > 1,
                          progress=lambda fraction, message: calls.append(message))
    assert result["cancelled"] is True
    manifest = _manifest(tmp_path / "out")
    assert manifest["metadata"]["complete"] is False
    assert set(_listed(manifest)) == _data_files(tmp_path / "out")
    frames = manifest["sensors"]["/World/Cam"]["frames"]
    assert 1 <= len(frames) < 5
    assert scene.render.engine == engine
    assert not any(ob.name.startswith("rscene render") for ob in bpy.data.objects)
