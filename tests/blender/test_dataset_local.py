"""`python -m rscene_addon dataset` on the local pool: 2 workers = 1 worker, resume after a kill, a bad
scene fails only its units, a variation's seed reaches the sensor noise, Blender's lines stay in logs."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import time

import numpy as np
import pytest

from rscene_addon import dataset
from rscene_addon.sensors.noise import variation_seed
from tests.blender.dataset_helpers import (dataset_arrays, dataset_command, dataset_popen, tiny_scene,
                                           unit_folders, write_job)


def test_two_workers_make_the_same_dataset_as_one(tmp_path):
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1-4"\nchunk = 2\nvariations = [{seed = 1}, {seed = 2}]\n')
    one = dataset_command(job, "--out", tmp_path / "one", "--workers", "1")
    assert one.returncode == 0, one.stdout + one.stderr
    two = dataset_command(job, "--out", tmp_path / "two", "--workers", "2")
    assert two.returncode == 0, two.stdout + two.stderr
    for result in (one, two):
        # Blender's own lines ("Read blend:", Cycles' "Saved:") went to the unit logs, not the terminal
        assert "Saved:" not in result.stdout + result.stderr
        assert "Read blend:" not in result.stdout + result.stderr
        assert "units 4/4 done | frames 8/8" in result.stdout
    assert "Read blend:" in (tmp_path / "one" / "tiny" / "seed1" / "chunk0001-of-0002" / "log.txt").read_text()
    log = (tmp_path / "one" / "tiny" / "seed1" / "chunk0001-of-0002" / "log.txt").read_text()
    assert "[100%] frame 2: /World/Props/CrateA/Imu" in log and "Saved:" not in log
    # each of N local workers renders with the cores / N threads: the arrays do not depend on it
    cores = len(os.sched_getaffinity(0))
    threads = [{json.loads((p / "unit.json").read_text())["threads"] for p in unit_folders(tmp_path / d)}
               for d in ("one", "two")]
    assert threads == [{cores}, {max(1, cores // 2)}]
    arrays_one, arrays_two = dataset_arrays(tmp_path / "one"), dataset_arrays(tmp_path / "two")
    assert len(arrays_one) == 2 * 4 * 10  # 2 variations x 4 frames x (camera 6 + lidar 3 + IMU 1 files)
    assert arrays_one.keys() == arrays_two.keys()
    assert [k for k in arrays_one if arrays_one[k] != arrays_two[k]] == []
    info = json.loads((tmp_path / "one" / "dataset.json").read_text())
    assert info["complete"] and info["failures"] == [] and info["units"]["complete"] == 4
    loaded = [dataset.load(tmp_path / d) for d in ("one", "two")]
    merged = [{v: data.manifest("tiny", v) for v in ("seed1", "seed2")} for data in loaded]
    assert merged[0] == merged[1]
    # the variation's seed reaches the noise: the IMU record's noiseSeed=7 becomes variation_seed(7, seed)
    for variation, seed in (("seed1", 1), ("seed2", 2)):
        manifest = merged[0][variation]
        imu = manifest["sensors"]["/World/Props/CrateA/Imu"]
        assert imu["properties"]["noise"]["seed"] == variation_seed(7, seed)
        assert manifest["metadata"]["variation_seed"] == seed
        frames = manifest["sensors"]["/World/Camera"]["frames"]
        assert [f["frame"] for f in frames] == [1, 2, 3, 4]
        assert frames[2]["outputs"][0]["path"].startswith(f"tiny/{variation}/chunk0002-of-0002/")
    # the loader's frames: the manifest's calibration and the files' arrays
    cams = list(loaded[0].frames(sensor="/World/Camera"))
    assert [(f.variation, f.frame) for f in cams] == [(v, n) for v in ("seed1", "seed2") for n in (1, 2, 3, 4)]
    camera = merged[0]["seed1"]["sensors"]["/World/Camera"]
    assert cams[0].K.tolist() == camera["intrinsics"]["K"] and cams[0].resolution == (32, 24)
    assert cams[2].camera_to_world.tolist() == camera["frames"][2]["camera_to_world_opencv"]
    depth = cams[2].read("depth.npy")
    assert depth.shape == (24, 32) and depth.tobytes() == np.load(cams[2].paths["depth.npy"]).tobytes()
    imu = "tiny/{}/chunk0001-of-0002/World.Props.CrateA.Imu/imu_00001.csv"
    assert arrays_one[imu.format("seed1")] != arrays_one[imu.format("seed2")]
    depth = "tiny/{}/chunk0001-of-0002/World.Camera/depth_00001.npy"
    assert arrays_one[depth.format("seed1")] == arrays_one[depth.format("seed2")]  # no granular: same motion
    # a rerun finds every unit complete and makes nothing
    again = dataset_command(job, "--out", tmp_path / "one")
    assert again.returncode == 0 and "4 already complete, 0 to make" in again.stdout
    # a job without seed 2 keeps seed 1's units, says why it needs --resume, and points at seed 2's folder
    fewer = write_job(tmp_path, 'frames = "1-4"\nchunk = 2\nvariations = [{seed = 1}]\n')
    refused = dataset_command(fewer, "--out", tmp_path / "one")
    assert refused.returncode == 1 and "scene files or variations changed; 2 of 2 unit(s) still match" in refused.stdout
    resumed = dataset_command(fewer, "--out", tmp_path / "one", "--resume")
    assert resumed.returncode == 0 and "2 already complete, 0 to make" in resumed.stdout
    assert "note: 2 folder(s) in" in resumed.stdout and "tiny/seed2" in resumed.stdout
    assert "bakes/tiny/seed2" in resumed.stdout and " MB)" in resumed.stdout


def test_resume_after_a_killed_run_makes_only_the_missing_units(tmp_path):
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1-6"\nchunk = 1\n')
    out = tmp_path / "out"
    process = dataset_popen(job, "--out", out, "--workers", "1")
    deadline = time.monotonic() + 600
    while len([p for p in unit_folders(out) if not p.name.startswith(".")]) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the driver and its worker, mid-unit or between units
    process.wait()
    process.stdout.close()
    complete = {p.name: (p / "unit.json").read_text() for p in unit_folders(out)}
    assert 2 <= len(complete) < 6
    assert all("fingerprint" in text for text in complete.values())  # a unit folder is only ever complete
    resumed = dataset_command(job, "--out", out, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(complete)} already complete, {6 - len(complete)} to make" in resumed.stdout
    assert resumed.stdout.count(" done | frames ") == 6 - len(complete)
    for name, text in complete.items():
        assert (out / "tiny" / "base" / name / "unit.json").read_text() == text  # not made again
    assert len(unit_folders(out)) == 6
    assert not [p for p in out.rglob(".tmp-*")]
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["complete"] and manifest["units"] == {"total": 6, "complete": 6, "failed": 0}
    assert dataset.load(out).manifest("tiny", "base")["metadata"]["frames"] == [1, 2, 3, 4, 5, 6]


def test_a_bad_scene_fails_its_units_and_the_rest_completes(tmp_path):
    tiny_scene(tmp_path)
    (tmp_path / "bad.rscene").write_text("raisim_engine_scene 2\nobject /World/Box box 0 0 not-a-number\n")
    job = write_job(tmp_path, 'frames = "1-2"\nchunk = 1\n', scenes=("tiny.rscene", "bad.rscene"))
    result = dataset_command(job, "--out", tmp_path / "out", "--workers", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bake of bad/base failed" in result.stdout
    assert "bad.rscene:2" in result.stdout  # the scene file's line reaches the terminal, not only dataset.json
    assert "dataset: 2/4 unit(s) complete, 2 failed" in result.stdout
    manifest = json.loads((tmp_path / "out" / "dataset.json").read_text())
    assert manifest["complete"] is False
    assert [f["unit"] for f in manifest["failures"]] == ["bad/base/chunk0001-of-0002", "bad/base/chunk0002-of-0002"]
    assert all("bad.rscene:2" in f["error"] for f in manifest["failures"]), manifest["failures"]
    assert dataset.load(tmp_path / "out").manifest("tiny", "base")["metadata"]["frames"] == [1, 2]
    assert [p.parent.name for p in unit_folders(tmp_path / "out")] == ["base", "base"]


def test_a_bad_job_stops_before_any_work(tmp_path):
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1-2"\nchunk = 0\nsensor = "x"\n')
    result = dataset_command(job, "--out", tmp_path / "out")
    assert result.returncode == 1
    assert "job.toml: chunk: must be an integer >= 1, got 0" in result.stdout
    assert "job.toml: sensor: unknown key" in result.stdout
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed in this environment")
def test_ray_flag_without_ray_says_what_to_install(tmp_path):
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1"\n')
    result = dataset_command(job, "--out", tmp_path / "out", "--ray")
    assert result.returncode == 1
    assert "--ray needs the 'ray' package" in result.stdout
    assert not (tmp_path / "out").exists()


def test_slices_of_a_job_share_a_folder_and_a_last_run_merges_them(tmp_path):
    """What SLURM array tasks do: `dataset JOB --out DIR --chunk $ID/$COUNT`, then one run without."""
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1-2"\nchunk = 1\n')
    out = tmp_path / "out"
    first = dataset_command(job, "--out", out, "--chunk", "1/2")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "slice 1/2: 1 of 2 unit(s)" in first.stdout
    assert [p.name for p in unit_folders(out)] == ["chunk0001-of-0002"]
    assert "a last run without --chunk writes the index" in first.stdout and not (out / "dataset.json").exists()
    second = dataset_command(job, "--out", out, "--chunk", "2/2")
    assert second.returncode == 0, second.stdout + second.stderr
    merged = dataset_command(job, "--out", out)
    assert merged.returncode == 0 and "2 already complete, 0 to make" in merged.stdout
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["complete"] and dataset.load(out).manifest("tiny", "base")["metadata"]["frames"] == [1, 2]
    assert dataset_command(job, "--out", out, "--chunk", "3/2").returncode == 1


def test_the_render_command_keeps_cycles_saved_lines_off_the_terminal(tmp_path):
    import subprocess
    import sys

    from tests.corpus import REPO
    scene = tiny_scene(tmp_path)
    result = subprocess.run([sys.executable, "-m", "rscene_addon", "render", str(scene), "--frames", "1-2",
                             "--samples", "1", "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Saved:" not in result.stdout + result.stderr
    assert "[100%] frame 2" in result.stdout  # our own progress still shows
    assert (tmp_path / "out" / "World.Camera" / "rgb_00002.png").exists()
