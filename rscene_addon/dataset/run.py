"""``python -m rscene_addon dataset JOB.toml --out DIR [--workers N] [--ray [ADDRESS]] [--resume]``.

The driver: check the whole job, plan its bakes and units, skip the units already complete in
``DIR``, run the rest on a local pool (default) or on Ray, print one progress line per finished unit,
then write ``DIR/dataset.json`` (every complete unit's manifest merged per scene variation, and the
failures). Exit status 0 when every unit is complete, 1 otherwise (130 when interrupted).
"""
from __future__ import annotations

import argparse
import importlib.util
import os

from ..products.chunks import parse_chunk
from ..products.chunks import chunk as take_chunk
from .job import JobError, load_job
from .merge import dataset_manifest
from .progress import Progress
from .store import DatasetStore, publish, scratch_beside, write_json
from .units import plan_units, unit_task

__all__ = ["add_arguments", "run_dataset"]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("job", metavar="JOB.toml", help="the job: scenes, frames, sensors, variations (see README)")
    parser.add_argument("--out", required=True, metavar="DIR", help="dataset folder")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="local worker processes (default 1; ignored with --ray)")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="run units as Ray tasks: on a new local Ray instance, on RAY_ADDRESS if set, "
                             "or on the cluster at ADDRESS (needs the ray package)")
    parser.add_argument("--chunk", default=None, metavar="K/N",
                        help="make only the K-th of N slices of the job's units (e.g. one SLURM array task "
                             "each, sharing DIR); a last run without --chunk merges them")
    parser.add_argument("--resume", action="store_true",
                        help="continue in a DIR made by an earlier version of the job: keep its units that "
                             "still match, make the rest (a rerun of the same job always skips complete units)")
    return parser


def _threads_per_worker(workers: int) -> int:
    """Cycles threads for each of ``workers`` local processes: this process's cores shared out."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores // workers)


def _first_line(text) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else "failed"


def _job_record(job, units) -> dict:
    return {"job": job.path, "settings": job.settings(), "units": {u.id: u.fingerprint for u in units}}


def run_dataset(job_path: str, out_dir: str, workers: int = 1, ray_address: str | None = None,
                resume: bool = False, print_fn=print, chunk: str | None = None) -> int:
    try:
        part = parse_chunk(chunk)
    except ValueError as exc:
        print_fn(f"error: --chunk: {exc}")
        return 1
    try:
        job = load_job(job_path)
    except JobError as exc:
        print_fn(f"error: {len(exc.problems)} problem(s) in the job")
        for problem in exc.problems:
            print_fn(f"  {problem}")
        return 1
    if workers < 1:
        print_fn(f"error: --workers must be at least 1, got {workers}")
        return 1
    if ray_address is not None and importlib.util.find_spec("ray") is None:
        print_fn("error: --ray needs the 'ray' package in this Python environment (pip install ray); without "
                 "--ray the dataset runs on a local pool of --workers processes")
        return 1
    bakes, units = plan_units(job)
    store = DatasetStore(out_dir)
    record = _job_record(job, units)
    previous = store.job_record()
    if previous and previous.get("units") != record["units"] and not resume:
        print_fn(f"error: {out_dir} holds a dataset of another job (or an older version of this one): "
                 "pass --resume to keep its units that still match and make the rest, or use a new --out")
        return 1
    os.makedirs(store.root, exist_ok=True)
    mine = list(take_chunk(units, *part)) if part else units
    # runs of other slices may be writing beside us: only our units' (and no bake's) scratch is stale
    stale = store.remove_scratch(None if part is None else [store.unit_dir(u) for u in mine])
    if stale:
        print_fn(f"removed {len(stale)} unfinished unit folder(s) of an interrupted run")
    store.write_job_record(record)
    pending = [u for u in mine if store.unit_record(u) is None]
    skipped = len(mine) - len(pending)
    frames_total = sum(len(u.frames) for u in mine)
    progress = Progress(len(mine), frames_total, skipped, frames_total - sum(len(u.frames) for u in pending))
    which = f"slice {part[0]}/{part[1]}: {len(mine)} of " if part else ""
    print_fn(f"dataset: {len(job.scenes)} scene(s), {len(bakes)} variation(s), {which}{len(units)} unit(s) of up "
             f"to {job.chunk} frame(s); {skipped} already complete, {len(pending)} to make")
    failures: dict = {}
    by_id = {u.id: u for u in pending}
    needed = {u.bake.key for u in pending}
    bake_by_key = {b.key: b for b in bakes if b.key in needed}
    stats: dict = {"rss_mb": []}

    def unit_done(unit, reply) -> None:
        if "rss_mb" in reply:
            stats["rss_mb"].append(reply["rss_mb"])
        if reply.get("ok"):
            progress.done(len(unit.frames))
        else:
            failures[unit.id] = reply.get("error") or "failed"
            progress.failed(len(unit.frames))
            print_fn(f"failed {unit.id}: {_first_line(failures[unit.id])}")
        print_fn(progress.line())

    status = 0
    try:
        if pending and ray_address is not None:
            _run_ray(job, store, bake_by_key, pending, by_id, ray_address, unit_done, print_fn)
        elif pending:
            _run_local(job, store, bake_by_key, pending, by_id, workers, unit_done, print_fn, stats)
    except KeyboardInterrupt:
        print_fn("cancelled: complete units are kept, --resume (or a rerun) makes the rest")
        status = 130
    manifest = dataset_manifest(job, store, bakes, units, failures)
    if stats["rss_mb"]:
        manifest["worker_rss_mb"] = {"first": stats["rss_mb"][0], "max": max(stats["rss_mb"]),
                                     "last": stats["rss_mb"][-1], "per_unit": stats["rss_mb"]}
    if "processes" in stats:
        manifest["worker_processes"] = stats["processes"]
    write_json(os.path.join(store.root, "dataset.json"), manifest)
    counts = manifest["units"]
    print_fn(f"dataset: {counts['complete']}/{counts['total']} unit(s) complete, {counts['failed']} failed; "
             f"wrote {os.path.join(out_dir, 'dataset.json')}")
    for failure in manifest["failures"]:
        print_fn(f"  failed {failure['unit']}: {_first_line(failure['error'])}")
    if status:
        return status
    if part:
        return 1 if failures or any(store.unit_record(u) is None for u in mine) else 0
    return 0 if manifest["complete"] else 1


def _run_local(job, store, bake_by_key, pending, by_id, workers, unit_done, print_fn, stats) -> None:
    from .local_pool import LocalPool
    pool = LocalPool(workers, job.units_per_process, os.path.join(store.root, "logs"), job.retries)
    bake_errors: dict = {}
    try:
        requests = [(key, {"op": "bake", "task": bake.task(), "dir": store.bake_dir(bake)})
                    for key, bake in bake_by_key.items() if not store.bake_ready(bake)]
        if requests:
            print_fn(f"baking {len(requests)} scene variation(s) on {min(workers, len(requests))} process(es)")

        def bake_done(key, reply):
            if not reply.get("ok"):
                bake_errors[key] = reply.get("error") or "bake failed"
                print_fn(f"bake of {key} failed: {_first_line(bake_errors[key])}")
        pool.run(requests, bake_done)
        runnable = []
        for unit in pending:
            if unit.bake.key in bake_errors:
                unit_done(unit, {"ok": False, "error": f"bake failed: {bake_errors[unit.bake.key]}"})
            else:
                blend = os.path.join(store.bake_dir(unit.bake), "scene.blend")
                task = dict(unit_task(job, unit), threads=job.threads or _threads_per_worker(workers))
                runnable.append((unit.id, {"op": "unit", "task": task, "blend": blend,
                                           "dir": store.unit_dir(unit)}))
        pool.run(runnable, lambda key, reply: unit_done(by_id[key], reply))
    finally:
        pool.close()
        stats["processes"] = pool.started


def _run_ray(job, store, bake_by_key, pending, by_id, address, unit_done, print_fn) -> None:
    from .ray_runner import run_on_ray

    def done(key, reply):
        if key in bake_by_key:  # a failed bake's units fail with its error (ray_runner.unit_task)
            if not reply.get("ok"):
                print_fn(f"bake of {key} failed: {_first_line(reply.get('error'))}")
            return
        unit = by_id[key]
        if reply.get("ok"):
            from .ray_runner import write_tree
            final = store.unit_dir(unit)
            scratch = scratch_beside(final)
            write_tree(reply.pop("files"), scratch)
            publish(scratch, final)
        unit_done(unit, reply)

    bakes = [(key, bake.task()) for key, bake in bake_by_key.items()]
    threads = job.threads or max(1, int(job.num_cpus))
    units = [(u.id, dict(unit_task(job, u), threads=threads)) for u in pending]
    run_on_ray(job, address or os.environ.get("RAY_ADDRESS") or None, bakes, units, done, print_fn)
