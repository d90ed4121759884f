#!/usr/bin/env python3
"""Bookkeeping benchmark of ``dataset --ray``: the driver's memory and work per unit, however large the
job (issue #28). A fake unit writes a few bytes instead of rendering, so everything else is real: the
job file and plan, the dataset folder, the Ray window, bakes travelling through the object store to a
node-local copy, results written by the driver's writer threads, the index, the cleanup.

    .venv/bpy52/bin/python scripts/bench_dataset_bookkeeping.py [--units 10000 100000] [--keep DIR]

Starts a local 2-node Ray cluster (``ray.cluster_utils.Cluster``: a head and a second raylet on
127.0.0.1, 2 logical CPUs each), then for each size runs the driver in a fresh process on a job of
``units / 10`` scenes x 2 variations x 5 chunks (frames 1-40, chunk 8) and reports: wall and CPU time,
the driver's peak RSS, its submit + wait time per unit (wall, and the driver loop's CPU), the index's
size, and on the largest tree the scratch cleanup of a ``--chunk 1/16`` slice and of a whole run.
``units_per_process`` is set high: a fake unit takes milliseconds, and replacing a worker process every
20 units (the default, for Blender's memory) would measure Python start-up instead.
Numbers depend on the machine's load: compare the sizes within one run.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep every raylet on 127.0.0.1


def fake_build(task, folder):
    """Stands in for execute.build_bake: a bake of a few bytes, published as the real one is."""
    from rscene_addon.dataset.store import publish_bake, scratch_beside, write_json
    scratch = scratch_beside(folder)
    with open(os.path.join(scratch, "scene.blend"), "wb") as handle:
        handle.write(b"BLENDER-fake" + task["fingerprint"].encode())
    write_json(os.path.join(scratch, "bake.json"), {"fingerprint": task["fingerprint"], "task": task})
    publish_bake(scratch, folder, task["fingerprint"])


def fake_files(task) -> dict:
    """What a unit's render leaves, in a few bytes: data, the unit's manifest, its unit.json."""
    manifest = {"metadata": {"frames": task["frames"]}, "sensors": {"/cam": {"kind": "camera", "frames": [
        {"frame": f, "outputs": [{"layer": "data", "ext": "bin", "path": "cam/data.bin"}]} for f in task["frames"]]}}}
    record = {"unit": task["unit"], "fingerprint": task["fingerprint"], "frames": task["frames"],
              "manifest": task["manifest"], "pid": os.getpid()}
    return {"cam/data.bin": task["unit"].encode(), task["manifest"]: json.dumps(manifest).encode(),
            "unit.json": json.dumps(record).encode()}, record


def fake_bake_task(task):
    from rscene_addon.dataset.ray_runner import bake_task
    return bake_task(task, build=fake_build)


def fake_unit_task(task, bake, retired=()):
    """ray_runner.unit_task's bookkeeping (node cleanup, the node's bake copy) around a fake render that
    makes its files in memory: a render's own scratch writing is the render's cost, not the driver's."""
    from rscene_addon.dataset.ray_runner import _local_bake, clean_node, scratch_root
    clean_node(scratch_root(), retired)
    if not bake["ok"]:
        return {"ok": False, "error": f"bake failed: {bake['error']}", "bake_failed": True}
    _local_bake(bake)
    files, record = fake_files(task)
    return {"ok": True, "record": record, "files": files}


def peak_rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_job(work: str, units: int) -> str:
    scenes = os.path.join(work, "scenes")
    os.makedirs(scenes)
    for i in range(units // 10):
        with open(os.path.join(scenes, f"s{i:06d}.rscene"), "w") as handle:
            handle.write(f"raisim_engine_scene 2\n# scene {i}\n")
    job = os.path.join(work, "job.toml")
    with open(job, "w") as handle:
        handle.write('scenes = ["scenes/*.rscene"]\nframes = "1-40"\nchunk = 8\n'
                     'variations = [{seed = 1}, {seed = 2}]\nunits_per_process = 1000000\n[ray]\nnum_cpus = 1\n')
    return job


def driver(args) -> None:
    """One run of the driver in this (fresh) process; prints one JSON line of measurements."""
    from rscene_addon.dataset import ray_runner
    from rscene_addon.dataset.run import run_dataset
    lines = []

    def keep(line):  # the first lines and the last: 100k progress lines kept would be the driver's memory
        if len(lines) < 3:
            lines.append(line)
        else:
            lines[-1] = line
    started, cpu = time.perf_counter(), time.process_time()
    status = run_dataset(args.job, args.out, ray_address=args.address, print_fn=keep,
                         ray_functions=(fake_bake_task, fake_unit_task))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    stats = dict(ray_runner.last_run)
    sizes = {name: os.path.getsize(os.path.join(args.out, name)) for name in ("dataset.json", "units.jsonl", "job.json")}
    print(json.dumps({"status": status, "wall": wall, "cpu": cpu, "rss_mb": peak_rss_mb(), "ray": stats,
                      "sizes": sizes, "lines": lines}))


def cleanup_times(job: str, out: str) -> dict:
    """remove_scratch over a 1/16 slice and over the whole job, on the dataset tree just made, with a
    killed run's scratch folder beside one unit of the slice."""
    from rscene_addon.dataset.job import load_job
    from rscene_addon.dataset.store import DatasetStore, scratch_beside
    from rscene_addon.dataset.units import plan_units
    from rscene_addon.products.chunks import chunk as take_chunk
    bakes, units = plan_units(load_job(job))
    store = DatasetStore(out)
    mine = list(take_chunk(units, 1, 16))
    scratch_beside(store.unit_dir(mine[-1]))
    started = time.perf_counter()
    removed = store.remove_scratch([store.unit_dir(u) for u in mine])
    slice_s = time.perf_counter() - started
    scratch_beside(store.unit_dir(units[-1]))
    started = time.perf_counter()
    removed_all = store.remove_scratch([store.unit_dir(u) for u in units] + [store.bake_dir(b) for b in bakes])
    whole_s = time.perf_counter() - started
    return {"scenes": len(bakes) // 2, "units": len(units), "slice_units": len(mine), "slice_s": slice_s,
            "slice_removed": len(removed), "whole_s": whole_s, "whole_removed": len(removed_all)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    parser.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        return driver(args)
    from ray.cluster_utils import Cluster
    work = args.keep or tempfile.mkdtemp(prefix="bench-bookkeeping-")
    os.makedirs(work, exist_ok=True)
    os.environ["RSCENE_DATASET_SCRATCH"] = os.path.join(work, "node-scratch")  # both raylets inherit it
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    local = {"num_cpus": 2, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=dict(local))
    cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    rows = {}
    try:
        for units in args.units:
            folder = os.path.join(work, f"u{units}")
            job = write_job(folder, units)
            out = os.path.join(folder, "out")
            result = subprocess.run([sys.executable, __file__, "--driver", "--job", job, "--out", out,
                                     "--address", cluster.address], capture_output=True, text=True, cwd=ROOT)
            if result.returncode != 0:
                sys.exit(f"driver failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            row = json.loads(result.stdout.strip().splitlines()[-1])
            rows[units] = row
            ray = row["ray"]
            n = ray["units"]
            left = os.listdir(os.environ["RSCENE_DATASET_SCRATCH"] + "/bakes") if os.path.isdir(
                os.environ["RSCENE_DATASET_SCRATCH"] + "/bakes") else []
            print(f"{units:7d} units: status {row['status']}, wall {row['wall']:7.1f} s ({1000 * row['wall'] / n:.2f} "
                  f"ms/unit), driver CPU {row['cpu']:6.1f} s, driver peak RSS {row['rss_mb']:6.1f} MiB", flush=True)
            print(f"         driver loop: submit {1000 * ray['submit'] / n:.3f} ms/unit, wait {1000 * ray['wait'] / n:.3f} "
                  f"ms/unit (wall, mostly waiting for workers), loop CPU {1000 * ray['cpu'] / n:.3f} ms/unit; "
                  f"window {ray['window']}", flush=True)
            sizes = row["sizes"]
            print(f"         index: dataset.json {sizes['dataset.json'] / 1024:.1f} KiB, units.jsonl "
                  f"{sizes['units.jsonl'] / 2 ** 20:.2f} MiB, job.json {sizes['job.json'] / 2 ** 20:.2f} MiB; "
                  f"bake copies left on the nodes: {len(left)}", flush=True)
            print(f"         {row['lines'][-1]}", flush=True)
        sizes = sorted(rows)
        if len(sizes) > 1:
            small, large = sizes[0], sizes[-1]
            print(f"scaling {small} -> {large} units ({large / small:.0f}x): wall {rows[large]['wall'] / rows[small]['wall']:.2f}x, "
                  f"driver RSS {rows[large]['rss_mb'] / rows[small]['rss_mb']:.2f}x", flush=True)
        largest = max(rows)
        times = cleanup_times(os.path.join(work, f"u{largest}", "job.toml"), os.path.join(work, f"u{largest}", "out"))
        print(f"cleanup on a {times['scenes']}-scene tree ({times['units']} units): --chunk 1/16 slice "
              f"({times['slice_units']} units) {times['slice_s']:.3f} s, removed {times['slice_removed']}; whole job "
              f"{times['whole_s']:.3f} s, removed {times['whole_removed']}", flush=True)
    finally:
        cluster.shutdown()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
