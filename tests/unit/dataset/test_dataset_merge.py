"""The dataset manifest merges the complete units of each scene variation and lists what failed."""
from __future__ import annotations

import os

import numpy as np

from rscene_addon.dataset.job import load_job
from rscene_addon.dataset.merge import dataset_manifest
from rscene_addon.dataset.store import DatasetStore, write_json
from rscene_addon.dataset.units import plan_units
from rscene_addon.products.outputs import RenderManifest
from rscene_addon.sensors.intrinsics import CameraIntrinsics


def _unit_files(store, unit, k_matrix):
    folder = store.unit_dir(unit)
    os.makedirs(folder)
    manifest = RenderManifest({"scene": "s", "frames": list(unit.frames), "chunk": unit.chunk, "complete": True})
    manifest.add_sensor("cam", "camera", k_matrix, 0.1, 10.0)
    for frame in unit.frames:
        pose = np.eye(4)
        pose[0, 3] = frame
        manifest.add_frame("cam", frame, camera_to_world=pose, time=frame / 10)
        manifest.add_output("cam", frame, "depth", "npy", (2, 3), np.float32, "m")
    name = f"manifest_chunk{unit.k}-of-{unit.n}.json"
    manifest.write(os.path.join(folder, name))
    write_json(os.path.join(folder, "unit.json"), {"fingerprint": unit.fingerprint, "manifest": name})


def test_units_merge_per_variation_with_paths_from_the_dataset_folder(tmp_path):
    (tmp_path / "s.rscene").write_text("raisim_engine_scene 2\n")
    (tmp_path / "job.toml").write_text('scenes = ["s.rscene"]\nframes = "1-5"\nchunk = 2\n'
                                       'variations = [{seed = 1}, {seed = 2}]\n')
    job = load_job(tmp_path / "job.toml")
    bakes, units = plan_units(job)
    store = DatasetStore(tmp_path / "out")
    k = CameraIntrinsics(fx=10.0, fy=10.0, cx=1.5, cy=1.0, width=3, height=2)
    seed2 = [u for u in units if u.bake.variation.seed == 2]
    for unit in units:
        if unit is not seed2[1]:
            _unit_files(store, unit, k)
    result = dataset_manifest(job, store, bakes, units, {seed2[1].id: "error: boom\nmore"})
    assert result["units"] == {"total": 6, "complete": 5, "failed": 1}
    assert result["complete"] is False
    assert result["failures"] == [{"unit": "s/seed2/chunk0002-of-0003", "scene": "s",
                                   "source": str(tmp_path / "s.rscene"), "variation": "seed2", "frames": [3, 4],
                                   "error": "error: boom\nmore"}]
    first, second = result["datasets"]
    assert (first["variation"], first["seed"], second["seed"]) == ("seed1", 1, 2)
    cam = first["manifest"]["sensors"]["cam"]
    assert cam["intrinsics"]["K"] == [[10.0, 0.0, 1.5], [0.0, 10.0, 1.0], [0.0, 0.0, 1.0]]
    assert [f["frame"] for f in cam["frames"]] == [1, 2, 3, 4, 5]
    assert [f["camera_to_world_opencv"][0][3] for f in cam["frames"]] == [1, 2, 3, 4, 5]
    assert cam["frames"][2]["outputs"][0]["path"] == "s/seed1/chunk0002-of-0003/cam/depth_00003.npy"
    assert first["manifest"]["metadata"]["frames"] == [1, 2, 3, 4, 5]
    assert "chunk" not in first["manifest"]["metadata"]
    assert second["manifest"]["metadata"]["frames"] == [1, 2, 5]
    assert second["units"] == ["s/seed2/chunk0001-of-0003", "s/seed2/chunk0003-of-0003"]
