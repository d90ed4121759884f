#!/usr/bin/env python3
"""Benchmark of ``python -m rscene_addon dataset`` (run with the bpy environment that has ray):

    .venv/bpy52/bin/python scripts/bench_dataset.py [--frames 24] [--chunk 2] [--samples 4] [--no-ray]
    .venv/bpy52/bin/python scripts/bench_dataset.py --rss [--units 200]

(a) Throughput on the demo scene (320x240 camera, 16x360 lidar, IMU), the same job three ways, each a
    fresh dataset folder and a fresh command (start-up, bake and merge included):
    local 1 worker (the baseline), local 2 workers, and ``--ray`` (a local Ray instance, 1 CPU per unit).
    Reports frames per minute, scaling efficiency = (fpm 2 workers / fpm 1 worker) / 2, and the
    overhead per unit = (wall x parallel slots - sum of the units' own render seconds) / units: the time
    a unit costs outside its render (process start, bpy import, bake, scheduling, moving files). Ray's
    extra overhead per unit is its overhead minus the 2-worker pool's.
(b) ``--rss``: a long run of tiny units (the demo scene with a 32x24 camera, 1 frame per unit,
    1 sample) on one worker process, with the default ``units_per_process`` (20) and with
    replacement switched off (one process for every unit): each worker reports its resident memory
    after every unit.
Numbers depend on the load of the machine: compare ratios within one run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "rscene_addon", "demo.rscene")


def run_job(job: str, out: str, *extra) -> tuple[float, dict]:
    env = dict(os.environ)
    env.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="bench-dataset-user-"))
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "rscene_addon", "dataset", job, "--out", out, *extra],
                            cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"dataset command failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    with open(os.path.join(out, "dataset.json"), encoding="utf-8") as handle:
        manifest = json.load(handle)
    return wall, manifest


def unit_seconds(out: str) -> list[float]:
    seconds = []
    for parent, _dirs, names in os.walk(out):
        if "unit.json" in names:
            with open(os.path.join(parent, "unit.json"), encoding="utf-8") as handle:
                seconds.append(json.load(handle)["seconds"])
    return seconds


def throughput(args, work: str) -> None:
    job = os.path.join(work, "job.toml")
    with open(job, "w", encoding="utf-8") as handle:
        handle.write(f'scenes = ["{DEMO}"]\nframes = "1-{args.frames}"\nchunk = {args.chunk}\n'
                     f"samples = {args.samples}\n[ray]\nnum_cpus = 1\n")
    runs = [("local, 1 worker", ["--workers", "1"], 1), ("local, 2 workers", ["--workers", "2"], 2)]
    if not args.no_ray:
        runs.append(("ray (local), 1 CPU/unit", ["--ray"], 2))
    rows = {}
    for label, extra, slots in runs:
        out = os.path.join(work, label.split(",")[0].replace(" ", "_") + str(slots))
        wall, manifest = run_job(job, out, *extra)
        seconds = unit_seconds(out)
        units = manifest["units"]["complete"]
        fpm = 60.0 * args.frames / wall
        overhead = (wall * slots - sum(seconds)) / units
        rows[label] = (fpm, overhead)
        print(f"{label:26s} {wall:7.1f} s  {fpm:7.1f} frames/min  {units} units, render {sum(seconds):6.1f} s, "
              f"overhead {overhead:5.2f} s/unit", flush=True)
    base = rows["local, 1 worker"][0]
    two = rows["local, 2 workers"]
    print(f"scaling efficiency 2 workers: {two[0] / base / 2:.2f} ({two[0] / base:.2f}x the 1-worker rate)")
    if not args.no_ray:
        ray_row = rows["ray (local), 1 CPU/unit"]
        print(f"ray: {ray_row[0] / base:.2f}x the 1-worker rate, {ray_row[0] / two[0]:.2f}x the 2-worker pool; "
              f"extra overhead per unit vs the pool: {ray_row[1] - two[1]:+.2f} s")


def rss(args, work: str) -> None:
    scene = os.path.join(work, "tiny.rscene")
    with open(DEMO, encoding="utf-8") as handle:
        text = handle.read().replace("320 240 rgb", "32 24 rgb").replace("lidarSamples=360", "lidarSamples=36")
    with open(scene, "w", encoding="utf-8") as handle:
        handle.write(text)
    for label, per_process in (("replaced every 20 units", 20), ("never replaced", args.units + 1)):
        job = os.path.join(work, f"job{per_process}.toml")
        with open(job, "w", encoding="utf-8") as handle:
            handle.write(f'scenes = ["tiny.rscene"]\nframes = "1-{args.units}"\nchunk = 1\nsamples = 1\n'
                         f"units_per_process = {per_process}\n")
        wall, manifest = run_job(job, os.path.join(work, f"rss{per_process}"), "--workers", "1")
        series = manifest["worker_rss_mb"]["per_unit"]
        tenth = max(1, len(series) // 10)
        marks = ", ".join(f"{series[i]:.0f}" for i in range(0, len(series), tenth))
        print(f"{label:24s} {len(series)} units in {wall:.0f} s, {manifest.get('worker_processes')} process(es): "
              f"RSS after unit 1 {series[0]:.0f} MiB, max {max(series):.0f} MiB, last {series[-1]:.0f} MiB; "
              f"every {tenth}th unit: {marks}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=24)
    parser.add_argument("--chunk", type=int, default=2)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--rss", action="store_true", help="measure worker memory over a long run instead")
    parser.add_argument("--units", type=int, default=200)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-dataset-")
    try:
        (rss if args.rss else throughput)(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
