"""``python -m rscene_addon dataset JOB.toml --out DIR [--workers N] [--ray [ADDRESS]] [--resume]``.

The driver: check the whole job, plan its bakes and units, skip the units already complete in
``DIR``, run the rest on a local pool (default) or on Ray, print one progress line per finished unit,
then write the index (``DIR/dataset.json`` and ``DIR/units.jsonl``, see :mod:`.index`). Exit status 0
when every unit is complete, 1 otherwise (130 when interrupted). A ``--chunk K/N`` slice makes its units
and leaves the index to a last run without ``--chunk``.

The driver's work per unit does not grow with the job: units are looked up by their folder, scratch
folders by their final folder's name, tasks are made as the runners take them (a bounded window on
Ray, a bounded queue on the local pool).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import threading

from ..products.chunks import chunk as take_chunk
from ..products.chunks import parse_chunk
from .index import INDEX_NAME, write_index
from .job import JobError, load_job
from .progress import Progress
from .store import DatasetStore, publish, scratch_beside
from .units import plan_units, unit_task

__all__ = ["add_arguments", "run_dataset"]

RSS_SERIES_MAX = 2000  # worker memory after each unit, kept for the first this many units


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
                             "each, sharing DIR); a last run without --chunk writes the index")
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


def error_summary(text, lines: int = 4) -> str:
    """An error's first line and the indented lines under it (a bad scene's ``file:line: message``
    lines under ``error: 1 problem(s) in x.rscene``), at most ``lines`` of them."""
    rows = (text or "").strip().splitlines() or ["failed"]
    shown = [rows[0]] + [r for r in rows[1:lines] if r.startswith((" ", "\t"))]
    return "\n    ".join(r.strip() if i else r for i, r in enumerate(shown))


def _job_record(job, units) -> dict:
    return {"job": job.path, "settings": job.settings(), "units": {u.id: u.fingerprint for u in units}}


def describe_change(previous: dict | None, record: dict) -> str | None:
    """What differs between the job that made a dataset folder and this one (None: nothing, or no
    earlier job): the settings that changed and how many units still match."""
    if not previous or previous.get("units") == record["units"]:
        return None
    old_settings, new_settings = previous.get("settings") or {}, record["settings"]
    changed = [f"{k} {old_settings.get(k)!r} -> {new_settings.get(k)!r}" for k in sorted(new_settings)
               if old_settings.get(k) != new_settings.get(k)]
    old_units = previous.get("units") or {}
    kept = sum(1 for uid, fp in record["units"].items() if old_units.get(uid) == fp)
    why = ("settings changed: " + ", ".join(changed)) if changed else "scene files or variations changed"
    return f"{why}; {kept} of {len(record['units'])} unit(s) still match"


def foreign_folders(store: DatasetStore, bakes, units) -> list[str]:
    """Folders in the dataset that no unit or bake of this job owns (an earlier job's variations,
    scenes or chunk counts), relative to the dataset folder. Lists only the job's own scene and
    variation folders and the top level, never inside units."""
    planned: dict = {}
    for unit in units:
        scene, variation, name = unit.folder.split("/")
        planned.setdefault(scene, {}).setdefault(variation, set()).add(name)
    keep_top = set(planned) | {"bakes", "logs", "job.json", "dataset.json", INDEX_NAME}
    found = []

    def unknown(rel: str, names) -> None:
        try:
            entries = sorted(os.listdir(os.path.join(store.root, *rel.split("/"))) if rel else os.listdir(store.root))
        except OSError:
            return
        found.extend(f"{rel}/{e}" if rel else e for e in entries
                     if not e.startswith(".") and not e.endswith(".tmp") and e not in names)

    unknown("", keep_top)
    for scene, variations in planned.items():
        unknown(scene, variations)
        unknown(f"bakes/{scene}", variations)
        for variation, names in variations.items():
            unknown(f"{scene}/{variation}", names)
    return sorted(found)


def _folder_mb(path: str) -> float:
    total = 0
    for parent, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(parent, name))
            except OSError:
                pass
    return total / 2 ** 20


def run_dataset(job_path: str, out_dir: str, workers: int = 1, ray_address: str | None = None,
                resume: bool = False, print_fn=print, chunk: str | None = None, ray_functions=None) -> int:
    """``ray_functions``: ``(bake, unit)`` functions to run as Ray tasks instead of
    ``ray_runner.bake_task``/``unit_task`` (the bookkeeping benchmark's fake units)."""
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
    if ray_address is not None:
        from .ray_runner import RayUnavailable, preflight
        try:
            preflight(ray_address)
        except RayUnavailable as exc:
            print_fn(f"error: {exc}")
            return 1
    bakes, units = plan_units(job)
    store = DatasetStore(out_dir)
    record = _job_record(job, units)
    change = describe_change(store.job_record(), record)
    if change and not resume:
        print_fn(f"error: {out_dir} holds a dataset of another job (or an older version of this one): "
                 "pass --resume to keep its units that still match and make the rest, or use a new --out")
        print_fn(f"  {change}")
        return 1
    if change:
        print_fn(f"resume: {change}; the rest are made again")
    os.makedirs(store.root, exist_ok=True)
    mine = list(take_chunk(units, *part)) if part else units
    # runs of other slices may be writing beside us: only our units' (and, unsliced, the bakes') scratch
    finals = [store.unit_dir(u) for u in mine] + ([] if part else [store.bake_dir(b) for b in bakes])
    stale = store.remove_scratch(finals)
    if stale:
        print_fn(f"removed {len(stale)} unfinished unit folder(s) of an interrupted run")
    store.write_job_record(record)
    complete: set = set()
    for unit in mine:
        if store.unit_record(unit) is not None:
            complete.add(unit.id)
    pending = [u for u in mine if u.id not in complete]
    skipped = len(mine) - len(pending)
    frames_total = sum(len(u.frames) for u in mine)
    progress = Progress(len(mine), frames_total, skipped, frames_total - sum(len(u.frames) for u in pending))
    which = f"slice {part[0]}/{part[1]}: {len(mine)} of " if part else ""
    print_fn(f"dataset: {len(job.scenes)} scene(s), {len(bakes)} variation(s), {which}{len(units)} unit(s) of up "
             f"to {job.chunk} frame(s); {skipped} already complete, {len(pending)} to make")
    failures: dict = {}
    needed = {u.bake.key for u in pending}
    bake_by_key = {b.key: b for b in bakes if b.key in needed}
    stats: dict = {"rss_mb": [], "rss_max": 0.0, "rss_count": 0}
    lock = threading.Lock()  # the Ray runner's writer threads finish units concurrently

    def unit_done(unit, reply) -> None:
        with lock:
            if "rss_mb" in reply:
                if len(stats["rss_mb"]) < RSS_SERIES_MAX:
                    stats["rss_mb"].append(reply["rss_mb"])
                stats["rss_max"] = max(stats["rss_max"], reply["rss_mb"])
                stats["rss_last"] = reply["rss_mb"]
                stats["rss_count"] += 1
            if reply.get("ok"):
                complete.add(unit.id)
                progress.done(len(unit.frames))
            else:
                failures[unit.id] = reply.get("error") or "failed"
                progress.failed(len(unit.frames))
                print_fn(f"failed {unit.id}: {error_summary(failures[unit.id])}")
            print_fn(progress.line())

    status = 0
    try:
        if pending and ray_address is not None:
            _run_ray(job, store, bake_by_key, pending, ray_address, unit_done, print_fn, ray_functions)
        elif pending:
            _run_local(job, store, bake_by_key, pending, workers, unit_done, print_fn, stats)
    except KeyboardInterrupt:
        print_fn("cancelled: complete units are kept, --resume (or a rerun) makes the rest")
        status = 130
    if part:
        missing = len(mine) - len(complete)
        print_fn(f"dataset: slice {part[0]}/{part[1]}: {len(mine) - missing}/{len(mine)} unit(s) complete, "
                 f"{len(failures)} failed; a last run without --chunk writes the index")
        for unit_id, error in failures.items():
            print_fn(f"  failed {unit_id}: {error_summary(error)}")
        return status or (1 if missing else 0)
    summary = write_index(job, store, units, lambda u: u.id in complete, failures)
    extra = {}
    if stats["rss_count"]:
        extra["worker_rss_mb"] = {"first": stats["rss_mb"][0], "max": stats["rss_max"], "last": stats["rss_last"],
                                  "units": stats["rss_count"], "per_unit": stats["rss_mb"]}
    if "processes" in stats:
        extra["worker_processes"] = stats["processes"]
    if extra:
        from .store import write_json
        write_json(os.path.join(store.root, "dataset.json"), {**summary, **extra})
    counts = summary["units"]
    print_fn(f"dataset: {counts['complete']}/{counts['total']} unit(s) complete, {counts['failed']} failed; "
             f"wrote {os.path.join(out_dir, 'dataset.json')} and {INDEX_NAME}")
    for failure in summary["failures"]:
        print_fn(f"  failed {failure['unit']}: {error_summary(failure['error'])}")
    foreign = foreign_folders(store, bakes, units)
    if foreign:
        size = f", {sum(_folder_mb(os.path.join(store.root, f)) for f in foreign):.1f} MB" if len(foreign) <= 100 else ""
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        print_fn(f"note: {len(foreign)} folder(s) in {out_dir} are not part of this job (an earlier version's "
                 f"variations, scenes or chunks{size}): {shown}; delete them if they are no longer needed")
    return status or (0 if summary["complete"] else 1)


def _run_local(job, store, bake_by_key, pending, workers, unit_done, print_fn, stats) -> None:
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
                print_fn(f"bake of {key} failed: {error_summary(bake_errors[key])}")
        pool.run(requests, bake_done)
        threads = job.threads or _threads_per_worker(workers)

        def runnable():  # made as the pool takes them: the queue holds a few, not the job
            for unit in pending:
                if unit.bake.key in bake_errors:
                    unit_done(unit, {"ok": False, "error": f"bake failed: {bake_errors[unit.bake.key]}"})
                    continue
                blend = os.path.join(store.bake_dir(unit.bake), "scene.blend")
                yield unit, {"op": "unit", "task": dict(unit_task(job, unit), threads=threads), "blend": blend,
                             "dir": store.unit_dir(unit)}
        pool.run(runnable(), unit_done)
    finally:
        pool.close()
        stats["processes"] = pool.started


def _run_ray(job, store, bake_by_key, pending, address, unit_done, print_fn, functions) -> None:
    from .ray_runner import WriterPool, run_on_ray, write_tree

    def write(unit, reply):
        try:
            final = store.unit_dir(unit)
            scratch = scratch_beside(final)
            write_tree(reply.pop("files"), scratch)
            publish(scratch, final)
        except OSError as exc:
            reply = {"ok": False, "error": f"cannot write the unit's files into {store.root}: {exc}"}
        unit_done(unit, reply)

    def bake_failed(key, error):
        print_fn(f"bake of {key} failed: {error_summary(error)}")

    threads = job.threads or max(1, int(job.num_cpus))
    bakes = {key: bake.task() for key, bake in bake_by_key.items()}
    tasks = ((u, dict(unit_task(job, u), threads=threads)) for u in pending)
    with WriterPool() as writers:
        def done(unit, reply):
            if reply.get("ok"):
                writers.submit(write, unit, reply)  # blocks while the writers are behind: backpressure
            else:
                unit_done(unit, reply)
        run_on_ray(job, address or os.environ.get("RAY_ADDRESS") or None, bakes, tasks, done, print_fn,
                   bake_failed=bake_failed, functions=functions)
