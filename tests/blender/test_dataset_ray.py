"""`dataset --ray ADDRESS` on a local Ray cluster started here: a head and a second node (two raylets on
127.0.0.1 stand in for two machines). The job fans out across both; with a worker process killed
mid-unit Ray retries it and the dataset equals a single-process local run, array for array."""
from __future__ import annotations

import json
import os
import re
import signal
import time

import pytest

from tests.blender.dataset_helpers import (dataset_arrays, dataset_command, dataset_popen, env_with,
                                           tiny_scene, unit_folders, write_job)

# Ray resolves a local address to this machine's outward IP unless told it is not clustering across
# machines: keep every raylet, worker and the driver on 127.0.0.1 (set before ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
pytest.importorskip("ray", reason="ray is not installed in this environment (optional: pip install ray)")

JOB = 'frames = "1-4"\nchunk = 1\nvariations = [{seed = 3}]\nunits_per_process = 2\n[ray]\nnum_cpus = 1\n'


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from ray.cluster_utils import Cluster
    scratch = tmp_path_factory.mktemp("ray-scratch")
    os.environ["RSCENE_DATASET_SCRATCH"] = str(scratch)  # the raylets (and their workers) inherit it
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    local = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=dict(local))
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    yield cluster, scratch
    cluster.shutdown()
    os.environ.pop("RSCENE_DATASET_SCRATCH", None)


@pytest.fixture(scope="module")
def single_process(tmp_path_factory):
    """The same job on one local worker process: the reference arrays."""
    folder = tmp_path_factory.mktemp("single")
    tiny_scene(folder)
    job = write_job(folder, JOB)
    result = dataset_command(job, "--out", folder / "out", "--workers", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    return dataset_arrays(folder / "out")


def _env(scratch):
    return env_with(RSCENE_DATASET_SCRATCH=scratch)


def test_units_fan_out_across_both_nodes(tmp_path, cluster, single_process):
    ray_cluster, scratch = cluster
    tiny_scene(tmp_path)
    job = write_job(tmp_path, JOB)
    result = dataset_command(job, "--out", tmp_path / "out", "--ray", ray_cluster.address, env=_env(scratch))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ray: 2 node(s)" in result.stdout
    assert "Saved:" not in result.stdout + result.stderr
    assert re.search(r"units 4/4 done \| frames 4/4 \| [0-9.]+ frames/min \| 0s left", result.stdout)
    nodes = {json.loads((p / "unit.json").read_text())["ray_node"] for p in unit_folders(tmp_path / "out")}
    assert len(nodes) == 2, nodes
    arrays = dataset_arrays(tmp_path / "out")
    assert arrays.keys() == single_process.keys()
    assert [k for k in arrays if arrays[k] != single_process[k]] == []
    assert json.loads((tmp_path / "out" / "dataset.json").read_text())["complete"]


def test_a_worker_killed_mid_unit_is_retried_and_the_dataset_is_the_same(tmp_path, cluster, single_process):
    ray_cluster, scratch = cluster
    tiny_scene(tmp_path)
    job = write_job(tmp_path, JOB)
    units_scratch = scratch / "units"
    before = set(units_scratch.glob(".tmp-*")) if units_scratch.exists() else set()
    process = dataset_popen(job, "--out", tmp_path / "out", "--ray", ray_cluster.address, env=_env(scratch))
    victim, deadline = None, time.monotonic() + 600
    while victim is None:
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        started = set(units_scratch.glob(".tmp-*")) - before if units_scratch.exists() else set()
        if started:  # a unit's scratch folder is named .tmp-<unit>.<pid>-<pid>-<random>: render under way
            name = sorted(started)[0].name
            victim, chunk = int(name.split("-")[-2]), re.search(r"chunk\d+-of-\d+", name)[0]
        time.sleep(0.02)
    os.kill(victim, signal.SIGKILL)  # a Ray worker process this test's cluster started
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output
    manifest = json.loads((tmp_path / "out" / "dataset.json").read_text())
    assert manifest["complete"] and manifest["failures"] == []
    pids = {p.name: json.loads((p / "unit.json").read_text())["pid"] for p in unit_folders(tmp_path / "out")}
    assert victim not in pids.values()  # the killed unit was made again by another worker process
    assert chunk in pids
    arrays = dataset_arrays(tmp_path / "out")
    assert arrays.keys() == single_process.keys()
    assert [k for k in arrays if arrays[k] != single_process[k]] == []
    # the nodes cleaned up: the killed worker's scratch and every bake copy of the run are gone
    assert [p.name for p in units_scratch.iterdir() if f".{victim}" in p.name] == []
    assert list((scratch / "bakes").iterdir()) == []
