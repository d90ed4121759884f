"""The driver's checks before any work: a bad job, a bad --chunk or --workers, a folder of another job."""
from __future__ import annotations

import importlib.util

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
