"""The driver's checks before any work: a bad job, a bad --chunk or --workers, a folder of another job."""
from __future__ import annotations

import importlib.util
import os

import pytest

from rscene_addon.dataset.run import run_dataset
from rscene_addon.dataset.store import DatasetStore


def _job(tmp_path, text='frames = "1-2"\nchunk = 1\n'):
    (tmp_path / "s.rscene").write_text("raisim_engine_scene 2\n")
    (tmp_path / "job.toml").write_text('scenes = ["s.rscene"]\n' + text)
    return str(tmp_path / "job.toml")


def run(*args, **kwargs):
    lines = []
    status = run_dataset(*args, print_fn=lines.append, **kwargs)
    return status, lines


def test_a_bad_job_is_reported_whole_and_nothing_is_written(tmp_path):
    status, lines = run(_job(tmp_path, 'frames = "x"\nchunk = -1\n'), str(tmp_path / "out"))
    assert status == 1
    assert lines[0] == "error: 2 problem(s) in the job"
    assert lines[1].startswith("  job.toml: frames: bad frame range 'x'")
    assert lines[2] == "  job.toml: chunk: must be an integer >= 1, got -1"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("chunk, message", [("0/2", "need 1 <= K <= N"), ("a/b", "expected K/N")])
def test_a_bad_slice_is_refused(tmp_path, chunk, message):
    status, lines = run(_job(tmp_path), str(tmp_path / "out"), chunk=chunk)
    assert status == 1 and message in lines[0] and lines[0].startswith("error: --chunk:")


def test_zero_workers_are_refused(tmp_path):
    status, lines = run(_job(tmp_path), str(tmp_path / "out"), workers=0)
    assert (status, lines) == (1, ["error: --workers must be at least 1, got 0"])


def test_a_folder_of_another_job_needs_resume(tmp_path):
    out = tmp_path / "out"
    DatasetStore(out).write_job_record({"units": {"s/base/chunk0001-of-0002": "older"}})
    status, lines = run(_job(tmp_path), str(out))
    assert status == 1 and "holds a dataset of another job" in lines[0] and "--resume" in lines[0]


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed in this environment")
def test_ray_without_ray_is_refused_before_work(tmp_path):
    status, lines = run(_job(tmp_path), str(tmp_path / "out"), ray_address="")
    assert status == 1 and "--ray needs the 'ray' package" in lines[0]
    assert not (tmp_path / "out").exists()


def test_resume_says_which_settings_changed_and_how_many_units_are_kept(tmp_path):
    job = _job(tmp_path, 'frames = "1-2"\nchunk = 1\nsamples = 4\n')
    out = tmp_path / "out"
    DatasetStore(out).write_job_record({"settings": {"samples": 4}, "units": {}})
    from rscene_addon.dataset.job import load_job
    from rscene_addon.dataset.run import _job_record, describe_change
    from rscene_addon.dataset.units import plan_units
    units = plan_units(load_job(job))[1]
    record = _job_record(load_job(job), units)
    assert describe_change(None, record) is None and describe_change(record, record) is None
    older = {"settings": dict(record["settings"], samples=2), "units": {units[0].id: units[0].fingerprint}}
    assert describe_change(older, record) == "settings changed: samples 2 -> 4; 1 of 2 unit(s) still match"
    scenes = {"settings": record["settings"], "units": {u.id: "other" for u in units}}
    assert describe_change(scenes, record) == "scene files or variations changed; 0 of 2 unit(s) still match"
    DatasetStore(out).write_job_record(older)
    status, lines = run(job, str(out))
    assert status == 1 and lines[1] == "  settings changed: samples 2 -> 4; 1 of 2 unit(s) still match"


def test_a_failures_terminal_line_carries_the_scene_files_line():
    from rscene_addon.dataset.run import error_summary
    text = "error: 1 problem(s) in broken.rscene\n  broken.rscene:2: object: 'x' is not a number\nTraceback"
    assert error_summary(text) == "error: 1 problem(s) in broken.rscene\n    broken.rscene:2: object: 'x' is not a number"
    assert error_summary("") == "failed" and error_summary("boom\nmore") == "boom"


def test_folders_of_an_earlier_job_are_found_without_looking_inside_units(tmp_path):
    from rscene_addon.dataset.job import load_job
    from rscene_addon.dataset.run import foreign_folders
    from rscene_addon.dataset.units import plan_units
    bakes, units = plan_units(load_job(_job(tmp_path, 'frames = "1-2"\nchunk = 1\nvariations = [{seed = 1}]\n')))
    store = DatasetStore(tmp_path / "out")
    for unit in units:
        os.makedirs(os.path.join(store.unit_dir(unit), "cam"))
    for extra in ("s/seed2/chunk0001-of-0001", "s/seed1/chunk0001-of-0003", "old_scene/base", "bakes/s/seed2",
                  "s/seed1/.tmp-chunk0001-of-0002-1-0123abcd"):
        os.makedirs(os.path.join(store.root, extra))
    (tmp_path / "out" / "dataset.json").write_text("{}")
    assert foreign_folders(store, bakes, units) == ["bakes/s/seed2", "old_scene", "s/seed1/chunk0001-of-0003",
                                                    "s/seed2"]


def test_the_local_pool_reads_requests_as_it_runs_them(tmp_path):
    """A job of many units never sits in the pool's queue at once: at most a few per slot are taken."""
    from rscene_addon.dataset.local_pool import LocalPool
    pulled, done, ahead = [0], [0], []

    def requests():
        for i in range(40):
            pulled[0] += 1
            ahead.append(pulled[0] - done[0])
            yield i, {"op": "nothing", "task": {}, "blend": "", "dir": ""}

    def on_done(key, reply):
        done[0] += 1
        assert reply["ok"] is False  # not a real request: the worker answers with its error

    pool = LocalPool(2, 100, str(tmp_path / "logs"))
    try:
        pool.run(requests(), on_done)
    finally:
        pool.close()
    assert done[0] == 40 and pool.started == 2
    assert max(ahead) <= 2 * 2 + 2 + 1  # the queue (2 per slot), one in each slot, one being put
