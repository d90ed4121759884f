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
import time

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
    parser.add_argument("--resume", action="store_true",
                        help="continue in a DIR made by an earlier version of the job: keep its units that "
                             "still match, make the rest (a rerun of the same job always skips complete units)")
    return parser


def _job_record(job, units) -> dict:
    return {"job": job.path, "settings": job.settings(), "units": {u.id: u.fingerprint for u in units}}


def run_dataset(job_path: str, out_dir: str, workers: int = 1, ray_address: str | None = None,
                resume: bool = False, print_fn=print) -> int:
    try:
        job = load_job(job_path)
    except JobError as exc:
        print_fn(f"error: {len(exc.problems)} problem(s) in the job")
        for problem in exc.problems:
            print_fn(f"  {problem}")
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
    stale = store.remove_scratch()
    if stale:
        print_fn(f"removed {len(stale)} unfinished unit folder(s) of an interrupted run")
    store.write_job_record(record)
    pending = [u for u in units if store.unit_record(u) is None]
    skipped = len(units) - len(pending)
    frames_total = sum(len(u.frames) for u in units)
    progress = Progress(len(units), frames_total, skipped, frames_total - sum(len(u.frames) for u in pending))
    print_fn(f"dataset: {len(job.scenes)} scene(s), {len(bakes)} variation(s), {len(units)} unit(s) of up to "
             f"{job.chunk} frame(s); {skipped} already complete, {len(pending)} to make")
    failures: dict = {}
    by_id = {u.id: u for u in pending}
    needed = {u.bake.key for u in pending}
    bake_by_key = {b.key: b for b in bakes if b.key in needed}
    stats = {"rss_mb": [], "started": time.time()}

    def unit_done(unit, reply) -> None:
        if "rss_mb" in reply:
            stats["rss_mb"].append(reply["rss_mb"])
        if reply.get("ok"):
            progress.done(len(unit.frames))
        else:
            failures[unit.id] = reply.get("error") or "failed"
            progress.failed(len(unit.frames))
            first = failures[unit.id].strip().splitlines()[0] if failures[unit.id].strip() else "failed"
            print_fn(f"failed {unit.id}: {first}")
        print_fn(progress.line())

    status = 0
    try:
        if pending and ray_address is not None:
            _run_ray(job, store, bake_by_key, pending, by_id, ray_address, failures, unit_done, print_fn)
        elif pending:
            _run_local(job, store, bake_by_key, pending, by_id, workers, failures, unit_done, print_fn, stats)
    except KeyboardInterrupt:
        print_fn("cancelled: complete units are kept, --resume (or a rerun) makes the rest")
        status = 130
    manifest = dataset_manifest(job, store, bakes, units, failures)
    if stats["rss_mb"]:
        manifest["worker_rss_mb"] = {"first": stats["rss_mb"][0], "max": max(stats["rss_mb"]),
                                     "last": stats["rss_mb"][-1]}
    write_json(os.path.join(store.root, "dataset.json"), manifest)
    counts = manifest["units"]
    print_fn(f"dataset: {counts['complete']}/{counts['total']} unit(s) complete, {counts['failed']} failed; "
             f"wrote {os.path.join(out_dir, 'dataset.json')}")
    for failure in manifest["failures"]:
        print_fn(f"  failed {failure['unit']}: {failure['error'].strip().splitlines()[0] if failure['error'].strip() else ''}")
    if status:
        return status
    return 0 if manifest["complete"] else 1


def _run_local(job, store, bake_by_key, pending, by_id, workers, failures, unit_done, print_fn, stats) -> None:
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
                print_fn(f"bake of {key} failed: {bake_errors[key].strip().splitlines()[0]}")
        pool.run(requests, bake_done)
        runnable = []
        for unit in pending:
            if unit.bake.key in bake_errors:
                unit_done(unit, {"ok": False, "error": f"bake failed: {bake_errors[unit.bake.key]}"})
            else:
                blend = os.path.join(store.bake_dir(unit.bake), "scene.blend")
                runnable.append((unit.id, {"op": "unit", "task": unit_task(job, unit), "blend": blend,
                                           "dir": store.unit_dir(unit)}))
        pool.run(runnable, lambda key, reply: unit_done(by_id[key], reply))
    finally:
        pool.close()
        stats["processes"] = pool.started


def _run_ray(job, store, bake_by_key, pending, by_id, address, failures, unit_done, print_fn) -> None:
    from .ray_runner import run_on_ray
    bake_errors: dict = {}

    def done(key, reply):
        if key in bake_by_key:
            if not reply.get("ok"):
                bake_errors[key] = reply.get("error")
                print_fn(f"bake of {key} failed: {(reply.get('error') or '').strip().splitlines()[:1]}")
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
    units = [(u.id, unit_task(job, u)) for u in pending]
    run_on_ray(job, address or os.environ.get("RAY_ADDRESS") or None, bakes, units, done, print_fn)
