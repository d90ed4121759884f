"""The dataset index (dataset.json + units.jsonl) lists the complete units and the failures, and
``dataset.load`` streams their frames with calibration and arrays from the unit manifests."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rscene_addon import dataset
from rscene_addon.dataset.index import write_index
from rscene_addon.dataset.job import load_job
from rscene_addon.dataset.store import DatasetStore, write_json
from rscene_addon.dataset.units import plan_units
from rscene_addon.products.outputs import RenderManifest
from rscene_addon.sensors.intrinsics import CameraIntrinsics
from rscene_addon.sensors.writers import make_points, write_imu_csv, write_ply

K = CameraIntrinsics(fx=10.0, fy=10.0, cx=1.5, cy=1.0, width=3, height=2)


def _unit_files(store, unit):
    """A unit as the render command leaves it: depth arrays whose value is the frame number, an IMU
    CSV, lidar points, and the chunk's manifest."""
    folder = store.unit_dir(unit)
    os.makedirs(folder)
    manifest = RenderManifest({"scene": "s", "frames": list(unit.frames), "chunk": unit.chunk, "complete": True})
    manifest.add_sensor("/World/Cam", "camera", K, 0.1, 10.0)
    manifest.add_sensor("/World/Imu", "imu")
    for frame in unit.frames:
        pose = np.eye(4)
        pose[0, 3] = frame
        manifest.add_frame("/World/Cam", frame, camera_to_world=pose, time=frame / 10)
        path = manifest.add_output("/World/Cam", frame, "depth", "npy", (2, 3), np.float32, "m")
        os.makedirs(os.path.join(folder, os.path.dirname(path)), exist_ok=True)
        np.save(os.path.join(folder, path), np.full((2, 3), frame, np.float32))
        path = manifest.add_output("/World/Cam", frame, "points", "ply", (1,), np.float32, "m")
        write_ply(os.path.join(folder, path), make_points(np.array([[frame, 0.0, 0.0]])))
        manifest.add_sensor_pose("/World/Imu", frame, np.eye(4), time=frame / 10)
        path = manifest.add_output("/World/Imu", frame, "imu", "csv", (2, 7), np.float64, "SI")
        os.makedirs(os.path.join(folder, os.path.dirname(path)), exist_ok=True)
        write_imu_csv(os.path.join(folder, path), [frame, frame + 0.05], np.zeros((2, 3)), np.ones((2, 3)))
    manifest.write(os.path.join(folder, unit.manifest_name))
    write_json(os.path.join(folder, "unit.json"), {"fingerprint": unit.fingerprint, "manifest": unit.manifest_name})


@pytest.fixture
def made(tmp_path):
    (tmp_path / "s.rscene").write_text("raisim_engine_scene 2\n")
    (tmp_path / "job.toml").write_text('scenes = ["s.rscene"]\nframes = "1-5"\nchunk = 2\n'
                                       'variations = [{seed = 1}, {seed = 2}]\n')
    job = load_job(tmp_path / "job.toml")
    _bakes, units = plan_units(job)
    store = DatasetStore(tmp_path / "out")
    seed2 = [u for u in units if u.bake.variation.seed == 2]
    for unit in units:
        if unit is not seed2[1]:
            _unit_files(store, unit)
    summary = write_index(job, store, units, lambda u: store.unit_record(u) is not None,
                          {seed2[1].id: "error: boom\nmore"})
    return tmp_path / "out", summary


def test_the_index_lists_complete_units_in_plan_order_and_the_failures(made):
    out, summary = made
    assert summary["units"] == {"total": 6, "complete": 5, "failed": 1}
    assert summary["complete"] is False and summary["version"] == 2
    assert summary["failures"] == [{"unit": "s/seed2/chunk0002-of-0003", "scene": "s",
                                    "source": str(out.parent / "s.rscene"), "variation": "seed2",
                                    "frames": [3, 4], "error": "error: boom\nmore"}]
    assert json.loads((out / "dataset.json").read_text()) == summary
    lines = [json.loads(line) for line in (out / "units.jsonl").read_text().splitlines()]
    assert [line["unit"] for line in lines] == ["s/seed1/chunk0001-of-0003", "s/seed1/chunk0002-of-0003",
                                                "s/seed1/chunk0003-of-0003", "s/seed2/chunk0001-of-0003",
                                                "s/seed2/chunk0003-of-0003"]
    assert lines[1] == {"unit": "s/seed1/chunk0002-of-0003", "scene": "s", "variation": "seed1", "seed": 1,
                        "frames": [3, 4], "manifest": "s/seed1/chunk0002-of-0003/manifest_chunk2-of-3.json"}


def test_load_streams_frames_with_calibration_and_arrays(made):
    out, _summary = made
    data = dataset.load(out)
    assert not data.complete
    cams = list(data.frames(sensor="/World/Cam"))
    assert [(f.variation, f.frame) for f in cams] == [("seed1", n) for n in range(1, 6)] + \
        [("seed2", 1), ("seed2", 2), ("seed2", 5)]
    third = cams[2]
    assert third.unit == "s/seed1/chunk0002-of-0003" and third.seed == 1 and third.time == 0.3
    np.testing.assert_array_equal(third.K, [[10.0, 0.0, 1.5], [0.0, 10.0, 1.0], [0.0, 0.0, 1.0]])
    assert third.resolution == (3, 2) and third.camera_to_world[0, 3] == 3.0
    depth = third.read("depth.npy")
    assert depth.dtype == np.float32 and depth.shape == (2, 3) and (depth == 3).all()
    assert third.outputs["depth.npy"] == {"shape": [2, 3], "dtype": "float32", "units": "m"}
    points = third.arrays()["points.ply"]
    assert points["x"].tolist() == [3.0]
    imu = [f for f in data if f.sensor == "/World/Imu" and f.variation == "seed2"]
    assert [f.frame for f in imu] == [1, 2, 5] and imu[0].K is None and imu[0].sensor_to_world.shape == (4, 4)
    table = imu[2].read("imu.csv")
    assert table.shape == tuple(imu[2].outputs["imu.csv"]["shape"]) and table[:, 0].tolist() == [5.0, 5.05]
    with pytest.raises(KeyError, match="has no output 'rgb.png'"):
        third.read("rgb.png")


def test_a_variations_merged_manifest_on_request(made):
    out, _summary = made
    merged = dataset.load(out).manifest("s", "seed2")
    cam = merged["sensors"]["/World/Cam"]
    assert merged["metadata"]["frames"] == [1, 2, 5]
    assert [f["frame"] for f in cam["frames"]] == [1, 2, 5]
    assert cam["frames"][2]["outputs"][0]["path"] == "s/seed2/chunk0003-of-0003/World.Cam/depth_00005.npy"


def test_load_says_what_is_wrong_with_a_folder(tmp_path):
    with pytest.raises(dataset.DatasetError, match="dataset.json: cannot read"):
        dataset.load(tmp_path)
    (tmp_path / "dataset.json").write_text(json.dumps({"format": "rscene_dataset", "version": 1, "datasets": []}))
    with pytest.raises(dataset.DatasetError, match="older version .* rerun the same"):
        dataset.load(tmp_path)
