"""Units as Ray tasks (``--ray [ADDRESS]``). ``ray`` is imported here only, when this runner starts.

A bake is a task that returns the baked files' bytes; Ray keeps them in its object store, starts a
scene's unit tasks once its bake is done and brings the bytes to whichever node runs a unit, which
keeps one copy per node (a node-local cache keyed by the bake's fingerprint). If a bake's bytes are
lost with a node, Ray's lineage reconstruction reruns the bake task: the bake is deterministic, so
the rebuilt files render the same. A unit task renders into a node-local scratch folder and returns
its files to the driver, which renames them into the dataset folder: the nodes need no shared
filesystem, only the scene files (and their assets) at the paths the job names, and this package.

Each task asks for the job's ``[ray] num_cpus``/``num_gpus``; a task whose worker process dies is
retried ``retries`` times (Ray's ``max_retries``); a worker process is replaced after
``units_per_process`` tasks (``max_calls``) so memory stays flat. Errors of the scene itself (a bad
file, a failed render) are results, not exceptions: they are reported, not retried.
"""
from __future__ import annotations

import os
import shutil
import tempfile

__all__ = ["RayUnavailable", "check_reachable", "run_on_ray", "scratch_root"]


class RayUnavailable(RuntimeError):
    pass


def scratch_root() -> str:
    """Node-local folder for bakes and unit scratch (``RSCENE_DATASET_SCRATCH``, else the temp dir)."""
    root = os.environ.get("RSCENE_DATASET_SCRATCH") or os.path.join(tempfile.gettempdir(),
                                                                     f"rscene-dataset-{os.getuid()}")
    os.makedirs(root, exist_ok=True)
    return root


def _read_tree(folder: str, skip=()) -> dict:
    files = {}
    for parent, _dirs, names in os.walk(folder):
        for name in names:
            full = os.path.join(parent, name)
            rel = os.path.relpath(full, folder).replace(os.sep, "/")
            if rel not in skip:
                with open(full, "rb") as handle:
                    files[rel] = handle.read()
    return files


def write_tree(files: dict, folder: str) -> None:
    for rel, data in files.items():
        full = os.path.join(folder, *rel.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(data)


def bake_task(task: dict) -> dict:
    """Ray task: bake ``task``'s scene on this node; returns the files (or the error)."""
    from .execute import UnitFailed, build_bake
    from .worker import rss_mb
    folder = os.path.join(scratch_root(), "bakes", task["fingerprint"])
    try:
        build_bake(task, folder)
    except UnitFailed as exc:
        return {"ok": False, "error": str(exc)}
    files = _read_tree(folder, skip=("log.txt",))
    return {"ok": True, "fingerprint": task["fingerprint"], "files": files, "rss_mb": rss_mb()}


def _local_bake(bake: dict) -> str:
    """This node's copy of a bake (written once per node from the object store's bytes)."""
    from .execute import BLEND_NAME
    from .store import publish_bake, read_json, scratch_beside
    folder = os.path.join(scratch_root(), "bakes", bake["fingerprint"])
    record = read_json(os.path.join(folder, "bake.json"))
    if not (isinstance(record, dict) and record.get("fingerprint") == bake["fingerprint"]):
        scratch = scratch_beside(folder)
        write_tree(bake["files"], scratch)
        publish_bake(scratch, folder, bake["fingerprint"])
    return os.path.join(folder, BLEND_NAME)


def unit_task(task: dict, bake: dict) -> dict:
    """Ray task: render one unit on this node; returns its files for the driver to put in place."""
    from .execute import UnitFailed, render_unit
    from .worker import rss_mb
    if not bake["ok"]:
        return {"ok": False, "error": f"bake failed: {bake['error']}"}
    blend = _local_bake(bake)
    folder = os.path.join(scratch_root(), "units", task["unit"].replace("/", "_") + f".{os.getpid()}")
    try:
        import ray
        record = render_unit(task, blend, folder, {"ray_node": ray.get_runtime_context().get_node_id()})
        files = _read_tree(folder)
    except UnitFailed as exc:
        return {"ok": False, "error": str(exc)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"ok": True, "record": record, "files": files, "rss_mb": rss_mb()}


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs the 'ray' package in this Python environment (pip install ray); "
                             "without --ray the dataset runs on a local pool of --workers processes") from None
    return ray


def check_reachable(address: str | None, timeout: float = 10.0) -> None:
    """Fail at once with a clear message when a ``host:port`` cluster address does not answer (Ray itself
    would retry for minutes). ``None`` reads RAY_ADDRESS; ``auto``, ``local`` and ``ray://`` clients are
    left to Ray."""
    import socket
    address = address or os.environ.get("RAY_ADDRESS") or ""
    if not address or address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray {address!r}: expected HOST:PORT of the cluster's head (e.g. 10.0.0.5:6379)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayUnavailable(f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
                             f"'ray start --head' there, or run without an address for a local one") from None


def run_on_ray(job, address, bakes: list, units: list, on_done, print_fn) -> None:
    """Run ``bakes`` then ``units`` (``(key, task)`` pairs) as Ray tasks; ``on_done(key, reply)`` for
    each bake and unit as it ends (replies as the local pool's: ``ok``, ``error`` or ``record`` +
    ``files``)."""
    ray = _import_ray()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {"PYTHONPATH": root + os.pathsep + "${PYTHONPATH}"}
    for name in ("BLENDER_USER_RESOURCES", "RSCENE_DATASET_SCRATCH"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    started_here = not ray.is_initialized()
    if started_here:
        check_reachable(address)
        ray.init(address=address or None, log_to_driver=False, include_dashboard=False,
                 runtime_env={"env_vars": env}, logging_level="WARNING")
    try:
        resources = ray.cluster_resources()
        print_fn(f"ray: {len([n for n in ray.nodes() if n.get('Alive')])} node(s), "
                 f"{resources.get('CPU', 0):g} CPU, {resources.get('GPU', 0):g} GPU")
        options = {"num_cpus": job.num_cpus, "num_gpus": job.num_gpus, "max_retries": job.retries}
        bake_remote = ray.remote(**options)(bake_task)
        unit_remote = ray.remote(max_calls=job.units_per_process, **options)(unit_task)
        bake_refs = {key: bake_remote.remote(task) for key, task in bakes}
        pending = {}
        for key, ref in bake_refs.items():
            pending[ref] = key
        for key, task in units:
            pending[unit_remote.remote(task, bake_refs[task["bake_key"]])] = key
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                key = pending.pop(ref)
                try:
                    reply = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the worker died more often than max_retries
                    reply = {"ok": False, "error": f"ray: {type(exc).__name__}: {str(exc).splitlines()[0]}"}
                on_done(key, reply)
    except BaseException:
        for ref in list(locals().get("pending", {})):
            ray.cancel(ref, force=True)
        raise
    finally:
        if started_here:
            ray.shutdown()
