"""Units as Ray tasks (``--ray [ADDRESS]``). ``ray`` is imported here only, when this runner starts.

A bake is a task that returns the baked files' bytes; Ray keeps them in its object store, starts a
scene's unit tasks once its bake is done and brings the bytes to whichever node runs a unit, which
keeps one copy per node (a node-local cache keyed by the bake's fingerprint). If a bake's bytes are
lost with a node, Ray's lineage reconstruction reruns the bake task: the bake is deterministic, so
the rebuilt files render the same. A unit task renders into a node-local scratch folder and returns
its files to the driver, whose writer threads put them into the dataset folder: the nodes need no
shared filesystem, only the scene files (and their assets) at the paths the job names, and this package.

Bounded work and memory, however many units: the driver keeps a window of units in flight (``[ray]
window``; default ``2 x`` the cluster's unit slots, at least 32) (``ray.wait(num_returns=1)`` over the window, a new unit submitted as one finishes),
submits a bake when its first unit enters the window and drops it when its last unit is done (Ray
then frees its bytes), and a few writer threads write the results as they arrive (the loop waits when
they fall behind). Nodes clean up after themselves: each unit task first deletes the scratch folders of
dead worker processes on its node and the copies of bakes the driver has retired, and at the end one
task per node deletes this run's remaining bake copies.

Each task asks for the job's ``[ray] num_cpus``/``num_gpus``; a task whose worker process dies is
retried ``retries`` times (Ray's ``max_retries``); a worker process is replaced after
``units_per_process`` tasks (``max_calls``) so memory stays flat. Errors of the scene itself (a bad
file, a failed render) are results, not exceptions: they are reported, not retried.
"""
from __future__ import annotations

import collections
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .store import scratch_owner

__all__ = ["RayUnavailable", "WriterPool", "check_auth", "check_reachable", "clean_node", "preflight",
           "run_on_ray", "scratch_root"]

RETIRED_SENT = 32   # fingerprints of finished bakes sent along with each unit task
MIN_WINDOW = 32     # units in flight at least: enough to see the next bakes coming (a unit waits for its bake)
last_run: dict = {}  # the last run_on_ray's driver timings (scripts/bench_dataset_bookkeeping.py)


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def clean_node(root: str, retired=()) -> list[str]:
    """On this node: delete the scratch folders of worker processes that died (a killed unit's
    ``units/.tmp-...``, a killed bake's ``bakes/.tmp-...``, a unit folder ``units/<unit>.<pid>``) and
    the bake copies whose fingerprints are in ``retired``; returns what it deleted. One listing of two
    small folders: they hold only what is in flight on this node."""
    removed = []
    for sub in ("units", "bakes"):
        folder = os.path.join(root, sub)
        try:
            entries = os.listdir(folder)
        except FileNotFoundError:
            continue
        for entry in entries:
            owner = scratch_owner(entry)
            pid = owner[1] if owner else None
            if pid is None and sub == "units":
                stem, _, tail = entry.rpartition(".")
                pid = int(tail) if stem and tail.isdigit() else None
            if (pid is not None and not _alive(pid)) or (sub == "bakes" and entry in retired):
                shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)
                removed.append(f"{sub}/{entry}")
    return removed


def bake_task(task: dict, build=None) -> dict:
    """Ray task: bake ``task``'s scene on this node; returns the files (or the error). ``build``:
    ``execute.build_bake`` (the bookkeeping benchmark passes a fake)."""
    from .execute import UnitFailed
    from .worker import rss_mb
    if build is None:
        from .execute import build_bake as build
    folder = os.path.join(scratch_root(), "bakes", task["fingerprint"])
    try:
        build(task, folder)
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


def render_on_node(task: dict, blend: str, folder: str) -> dict:
    """The unit's render, the one call into the renderer (``execute.render_unit``): ``task`` from
    ``blend`` into ``folder``; returns the unit record."""
    import ray

    from .execute import render_unit
    return render_unit(task, blend, folder, {"ray_node": ray.get_runtime_context().get_node_id()})


def unit_task(task: dict, bake: dict, retired=(), render=None) -> dict:
    """Ray task: render one unit on this node; returns its files for the driver to put in place.
    ``retired``: fingerprints of bakes whose units are all done (their copies here are deleted);
    ``render``: :func:`render_on_node` (the bookkeeping benchmark passes a fake)."""
    from .execute import UnitFailed
    from .worker import rss_mb
    root = scratch_root()
    clean_node(root, set(retired) - {bake.get("fingerprint")})  # never the copy this unit renders from
    if not bake["ok"]:
        return {"ok": False, "error": f"bake failed: {bake['error']}", "bake_failed": True}
    blend = _local_bake(bake)
    folder = os.path.join(root, "units", task["unit"].replace("/", "_") + f".{os.getpid()}")
    try:
        record = (render or render_on_node)(task, blend, folder)
        files = _read_tree(folder)
    except UnitFailed as exc:
        return {"ok": False, "error": str(exc)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"ok": True, "record": record, "files": files, "rss_mb": rss_mb()}


def cleanup_task(fingerprints: list) -> list[str]:
    """Ray task, one per node at the end of a run: this run's bake copies and dead scratch."""
    return clean_node(scratch_root(), set(fingerprints))


class WriterPool:
    """A few threads that run ``submit``-ted calls; ``submit`` blocks while ``limit`` calls are queued
    or running (results hold a unit's file bytes: they must not pile up in the driver)."""

    def __init__(self, threads: int = 4, limit: int = 16) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="dataset-writer")
        self._slots = threading.BoundedSemaphore(limit)
        self.errors: list = []

    def submit(self, fn, *args) -> None:
        self._slots.acquire()

        def run():
            try:
                fn(*args)
            except BaseException as exc:  # reported after the run: a writer must not die silently
                self.errors.append(exc)
            finally:
                self._slots.release()
        self._pool.submit(run)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self._pool.shutdown(wait=True)
        if self.errors and exc_info[0] is None:
            raise self.errors[0]


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


def _slots(ray, job) -> int:
    resources = ray.cluster_resources()
    slots = resources.get("CPU", 0) / job.num_cpus if job.num_cpus else float("inf")
    if job.num_gpus:
        slots = min(slots, resources.get("GPU", 0) / job.num_gpus)
    return max(1, int(slots)) if slots != float("inf") else 8


def run_on_ray(job, address, bakes: dict, units, on_done, print_fn, bake_failed=None, functions=None,
               window: int | None = None) -> None:
    """Run ``units`` (an iterable of ``(key, task)``, read as the window has room) as Ray tasks, each
    after its bake (``bakes``: bake key -> bake task, submitted when first needed); ``on_done(key,
    reply)`` for each unit as it ends (replies as the local pool's: ``ok``, ``error`` or ``record`` +
    ``files``), ``bake_failed(bake key, error)`` once per failed bake. ``functions``: ``(bake, unit)``
    to run instead of :func:`bake_task`/:func:`unit_task`."""
    ray = _import_ray()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {"PYTHONPATH": root + os.pathsep + "${PYTHONPATH}"}
    for name in ("BLENDER_USER_RESOURCES", "RSCENE_DATASET_SCRATCH"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    started_here = not ray.is_initialized()
    if started_here:
        preflight(address)
        ray.init(address=address or None, log_to_driver=False, include_dashboard=False,
                 runtime_env={"env_vars": env}, logging_level="WARNING")
    bake_fn, unit_fn = functions or (bake_task, unit_task)
    in_flight: dict = {}
    try:
        resources = ray.cluster_resources()
        window = window or job.window or max(MIN_WINDOW, 2 * _slots(ray, job))
        print_fn(f"ray: {len([n for n in ray.nodes() if n.get('Alive')])} node(s), "
                 f"{resources.get('CPU', 0):g} CPU, {resources.get('GPU', 0):g} GPU; "
                 f"up to {window} unit(s) in flight")
        options = {"num_cpus": job.num_cpus, "num_gpus": job.num_gpus, "max_retries": job.retries}
        bake_remote = ray.remote(**options)(bake_fn)
        unit_remote = ray.remote(max_calls=job.units_per_process, **options)(unit_fn)
        _drive(ray, bakes, iter(units), on_done, bake_failed, bake_remote, unit_remote, window, in_flight)
        _clean_nodes(ray, [task["fingerprint"] for task in bakes.values()])
    except BaseException:
        for ref in list(in_flight):
            ray.cancel(ref, force=True)
        raise
    finally:
        if started_here:
            ray.shutdown()


def _drive(ray, bakes, units, on_done, bake_failed, bake_remote, unit_remote, window, in_flight) -> None:
    # Bakes are counted by fingerprint: two scene files with the same bytes and seed are one bake.
    bake_refs: dict = {}                      # fingerprint -> ref, while its units are in flight or to come
    left = collections.Counter()              # fingerprint -> its units submitted and not done
    retired = collections.deque(maxlen=RETIRED_SENT)
    failed_bakes: set = set()
    current = [None]                          # the fingerprint of the last unit submitted
    clock = {"submit": 0.0, "wait": 0.0, "cpu": time.thread_time(), "units": 0}

    def release(fingerprint) -> None:
        bake_refs.pop(fingerprint, None)      # no task holds it any more: Ray frees the bytes
        left.pop(fingerprint, None)
        retired.append(fingerprint)

    def submit() -> bool:
        try:
            key, task = next(units)
        except StopIteration:
            return False
        started = time.perf_counter()
        bake_key = task["bake_key"]
        fingerprint = bakes[bake_key]["fingerprint"]
        if fingerprint != current[0]:
            if current[0] is not None and not left[current[0]]:
                release(current[0])
            current[0] = fingerprint
        if fingerprint not in bake_refs:
            if fingerprint in retired:        # the same bake again, later in the job: keep its copies
                retired.remove(fingerprint)
            bake_refs[fingerprint] = bake_remote.remote(bakes[bake_key])
        in_flight[unit_remote.remote(task, bake_refs[fingerprint], list(retired))] = (key, bake_key, fingerprint)
        left[fingerprint] += 1
        clock["submit"] += time.perf_counter() - started
        return True

    more = True
    while more and len(in_flight) < window:
        more = submit()
    while in_flight:
        started = time.perf_counter()
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        clock["wait"] += time.perf_counter() - started
        for ref in ready:
            key, bake_key, fingerprint = in_flight.pop(ref)
            try:
                reply = ray.get(ref)
            except ray.exceptions.RayError as exc:  # the worker died more often than max_retries
                reply = {"ok": False, "error": f"ray: {type(exc).__name__}: {str(exc).splitlines()[0]}"}
            left[fingerprint] -= 1
            if not left[fingerprint] and fingerprint != current[0]:
                release(fingerprint)
            if reply.get("bake_failed") and bake_key not in failed_bakes:
                failed_bakes.add(bake_key)
                if bake_failed:
                    bake_failed(bake_key, reply["error"].removeprefix("bake failed: "))
            clock["units"] += 1
            on_done(key, reply)
            while more and len(in_flight) < window:
                more = submit()
    clock["cpu"] = time.thread_time() - clock["cpu"]
    last_run.clear()
    last_run.update(clock, window=window)


def _clean_nodes(ray, fingerprints: list, timeout: float = 60.0) -> None:
    """One cleanup task on every live node (this run's bake copies, dead workers' scratch)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    remote = ray.remote(num_cpus=0)(cleanup_task)
    refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
            .remote(fingerprints) for node in ray.nodes() if node.get("Alive")]
    ray.wait(refs, num_returns=len(refs), timeout=timeout)


_checked: set = set()


def preflight(address: str | None) -> None:
    """Before any work: the cluster at ``address`` answers and accepts this process
    (:func:`check_reachable`, :func:`check_auth`); raises :class:`RayUnavailable` saying what to do."""
    address = address or os.environ.get("RAY_ADDRESS") or ""
    if address not in _checked:
        check_reachable(address)
        check_auth(address)
        _checked.add(address)


AUTH_HELP = ("set RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN (or a file named by "
             "RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token); 'ray get-auth-token' on the head prints it")


def _token_available() -> bool:
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return True
    return os.path.isfile(os.path.join(os.path.expanduser("~"), ".ray", "auth_token"))


def _gcs_refuses(address: str):
    """The AuthenticationError a GCS client gets at ``address`` (about a second), else None."""
    from ray._raylet import GcsClient
    from ray.exceptions import RayError
    try:
        GcsClient(address=address)
    except RayError as exc:
        if type(exc).__name__ == "AuthenticationError":
            return exc
        raise RayUnavailable(f"the Ray cluster at {address} does not answer as one: {exc}") from None
    return None


def check_auth(address: str | None) -> None:
    """Token auth (Ray 2.5x+): a cluster started by ``ray start`` where ``~/.ray/auth_token`` exists
    demands the token, and ``ray.init(address=HOST:PORT)`` does not send it unless told, then fails
    after ~45 s naming neither auth nor the address given. Ask the cluster's GCS first: if it refuses
    us and a token is at hand (RAY_AUTH_MODE unset), use it; if it still refuses, fail now saying what
    to set. ``auto``/``local``/``ray://`` addresses are left to Ray."""
    address = address or os.environ.get("RAY_ADDRESS") or ""
    if not address or address in ("auto", "local") or "://" in address:
        return
    if getattr(_import_ray().exceptions, "AuthenticationError", None) is None:
        return  # a Ray without token auth
    refused = _gcs_refuses(address)
    if refused is not None and os.environ.get("RAY_AUTH_MODE") is None and _token_available():
        from ray._raylet import Config
        os.environ["RAY_AUTH_MODE"] = "token"  # as Ray does for a local cluster it finds by itself
        Config.initialize("")
        refused = _gcs_refuses(address)
    if refused is not None:
        mode = os.environ.get("RAY_AUTH_MODE", "unset")
        raise RayUnavailable(f"the Ray cluster at {address} requires token authentication and refused this "
                             f"process's token (RAY_AUTH_MODE={mode}, token "
                             f"{'found' if _token_available() else 'not found'}): {AUTH_HELP}")
