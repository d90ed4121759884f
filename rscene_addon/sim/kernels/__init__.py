"""Compiled kernels (numba) for the hot loops of a rigid-body step; the numpy core stays the reference.

One switch chooses the backend: ``auto`` (numba where it imports), ``numba`` or ``numpy``, passed to
``World.from_scene(..., backend=...)`` / ``simulate(..., backend=...)``, else read from the environment
variable ``RSCENE_SIM_BACKEND`` (what tests use), else ``auto``.

The kernels compile on first use (unless the extension ships them compiled: ``prebuilt``) into a cache
(``@njit(cache=True)``) under a root folder: ``NUMBA_CACHE_DIR`` when set, else the directory given to
``set_cache_dir`` (Blender passes its extension user folder), else a user cache folder
(``$XDG_CACHE_HOME/rscene_addon/numba`` or the platform's equivalent). Inside the root each version of the
kernels' sources (and CPU target) has a folder of its own (``kernels-<hash>``; the other shapes' kernels,
``load_shapes``, compile there on the first world with a shape other than boxes and planes, the robot
kernels, ``load_robots``, on a scene's first robot step (their group step's, ``load_robot_group``, on the
first step of robots near each other or against world bodies), the cloth's, ``load_cloth``, on its first
cloth step):
numba checks a cached function against its own file only, so a kernel that calls one from another file
(``box_world.step`` calls them all) would otherwise keep running the callee's old code after that file
changed. This package never imports bpy.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import sys
import time

BACKENDS = ("auto", "numba", "numpy")
ENV_BACKEND = "RSCENE_SIM_BACKEND"

_cache_dir: str | None = None
_compiled = None  # the loaded kernel module
_parts: dict = {}  # the kernels loaded on demand by name: "robots", "shapes"
_report = None  # prepare's report callback: load_robots tells it when the robot kernels compile
_watch = None  # the compile watch of the job running (``watch``): progress and cancel of a first compile
_numba_error: str | None = None


def numba_available() -> bool:
    """numba imports here (a wheel exists for this platform and Python)."""
    global _numba_error
    if _numba_error is None:
        try:
            import numba  # noqa: F401
            _numba_error = ""
        except Exception as exc:  # ImportError, or a broken llvmlite
            _numba_error = f"{type(exc).__name__}: {exc}"
    return _numba_error == ""


def resolve(backend: str | None = None) -> str:
    """``numba`` or ``numpy`` for a requested backend (None: the environment variable, else ``auto``).

    ``numba`` when numba does not import is an error that says why; ``auto`` then falls back to numpy."""
    name = backend if backend is not None else (os.environ.get(ENV_BACKEND) or "auto")
    name = name.strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"unknown simulation backend {name!r} (choose from {', '.join(BACKENDS)})")
    if name == "numpy":
        return "numpy"
    if numba_available():
        return "numba"
    if name == "numba":
        raise ValueError(f"the numba backend is not available here ({_numba_error}); use --backend numpy")
    return "numpy"


def user_cache_dir() -> str:
    """The per-user folder the CLI and library compile into (when NUMBA_CACHE_DIR is not set)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "rscene_addon", "numba")


def set_cache_dir(path: str | None) -> None:
    """Compile into ``path`` (Blender: the extension's user folder). NUMBA_CACHE_DIR, when set, wins.
    Takes effect for kernels not loaded yet (numba binds a function's cache when it is decorated)."""
    global _cache_dir
    _cache_dir = path


def cache_dir() -> str:
    return os.environ.get("NUMBA_CACHE_DIR") or _cache_dir or user_cache_dir()


def source_token(folder: str | None = None) -> str:
    """A hash of numba's version and every kernel source file (of ``folder``, default this package)."""
    import numba
    h = hashlib.sha1(numba.__version__.encode())
    here = folder or os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            h.update(name.encode())
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()[:16]


_KERNELS_PREFIX = "kernels-"
_PRUNE_AFTER_S = 3600.0  # other versions' folders are removed once untouched this long


_shipped: dict | None = None  # the manifest of the kernels shipped for this process ({}: none), once decided


def shipped() -> dict:
    """The manifest of the kernels compiled ahead of time that this process uses (``prebuilt``), numba
    switched to their CPU target; empty when there are none for these sources, this Python and platform."""
    global _shipped
    if _shipped is None:
        from . import prebuilt
        _shipped = prebuilt.activate(source_token()) or {}
    return _shipped


def kernel_dir() -> str:
    """The folder numba compiles these kernels into: one per version of their sources and CPU target (the
    host's, or the shipped kernels' portable one), under cache_dir()."""
    token = source_token()
    target = shipped().get("cpu_name")
    if target:
        token = hashlib.sha1(f"{token}-{target}".encode()).hexdigest()[:16]
    return os.path.join(cache_dir(), _KERNELS_PREFIX + token)


def _marker() -> str:
    return os.path.join(kernel_dir(), "ready")


def _ours(name: str) -> bool:
    """A folder name made by kernel_dir(): the prefix and a 16-digit hex hash."""
    tail = name[len(_KERNELS_PREFIX):]
    return name.startswith(_KERNELS_PREFIX) and len(tail) == 16 and all(c in "0123456789abcdef" for c in tail)


def _prune(root: str, keep: str, legacy: bool = True) -> None:
    """Remove other versions' kernel folders from ``root``; with ``legacy`` (a root of our own, not a
    NUMBA_CACHE_DIR other projects may share) also the flat layout of earlier releases."""
    import shutil
    try:
        names = os.listdir(root)
    except OSError:
        return
    now = time.time()
    for name in names:
        path = os.path.join(root, name)
        if path == keep:
            continue
        try:
            if now - os.path.getmtime(path) < _PRUNE_AFTER_S:
                continue  # another version may be compiling there right now (two installs, two checkouts)
        except OSError:
            continue
        if _ours(name) or (legacy and name.startswith("kernels_")):
            shutil.rmtree(path, ignore_errors=True)
        elif legacy and name.startswith("rscene-kernels-") and name.endswith(".ready"):
            try:
                os.remove(path)
            except OSError:
                pass


def cache_is_warm() -> bool:
    """The kernels were compiled into the cache before, or ship compiled (loading them takes about a
    second, not a compile): the bake says "compiling physics kernels, once" when this is False."""
    return _compiled is not None or (numba_available() and (bool(shipped()) or os.path.exists(_marker())))


COMPILING_MESSAGE = "compiling physics kernels, once"


@contextlib.contextmanager
def watch(progress=None, cancel=None):
    """While in this context, a kernel compile reports ``progress(compile_watch.CompileStatus)`` after each
    of its functions and asks ``cancel()`` between compiler passes: True raises
    ``compile_watch.CompileCancelled`` (the functions compiled so far stay cached). Loads from the cache, or
    of kernels shipped compiled, report nothing. One job at a time: an inner watch replaces the outer."""
    global _watch
    outer = _watch
    from ..compile_watch import CompileWatch  # no numba import
    _watch = CompileWatch(progress, cancel)
    try:
        yield _watch
    finally:
        _watch = outer


def _warm(module) -> None:
    """``module.warm_up()``: every kernel it calls compiled or loaded, under the job's watch."""
    with _few_collections(), (_watch.listen(module) if _watch is not None else contextlib.nullcontext()):
        module.warm_up()


@contextlib.contextmanager
def _few_collections():
    """Python's cyclic collector held back while kernels compile: numba's compiler makes millions of
    objects that live until it ends, and each full collection scanned all of them (~2,800 collections, 7-9 s
    of the robot kernels' ~70 s CPU first compile; with these thresholds ~90, 1.2 s, peak memory +70 MB,
    where no collection at all cost +260 MB). Young collections go on; the thresholds are restored after."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 20000), max(old[1], 50), max(old[2], 1000))
    try:
        yield
    finally:
        gc.set_threshold(*old)


def prepare(backend: str | None = None, report=print) -> str:
    """Resolve ``backend`` (see :func:`resolve`) and, for numba with a cold cache, tell ``report`` that the
    job's first steps compile (~50 s CPU on a 2-core box for the rigid world, the robots' ~50-60 s more; a
    warm load, or a first one of kernels shipped compiled, takes about half a second). The kernels load in
    the job itself, under its :func:`watch` (progress, cancel), on the thread that runs it. Returns
    ``numba`` or ``numpy``; ValueError as :func:`resolve`."""
    global _report
    name = resolve(backend)
    _report = report
    if name == "numba" and not cache_is_warm():
        report(f"{COMPILING_MESSAGE} (cache {cache_dir()})")
    return name


def load():
    """The compiled kernel module, compiled (or loaded from the cache) and run once on tiny inputs, so
    that a step never pays a compile. Raises ImportError when numba is missing."""
    global _compiled
    if _compiled is not None:
        return _compiled
    import numba
    path = kernel_dir()
    cold = not os.path.exists(_marker())
    try:
        os.makedirs(path, exist_ok=True)
        numba.config.CACHE_DIR = path  # read when the kernels are decorated (imported below)
    except OSError:
        pass  # an unwritable folder: numba falls back to its own cache locations
    _install_shipped(path)
    from . import compiled
    _alias_shipped()
    _warm(compiled)
    _compiled = compiled
    try:
        open(_marker(), "a").close()
    except OSError:
        pass
    if cold:
        _prune(cache_dir(), path, legacy=not os.environ.get("NUMBA_CACHE_DIR"))
    return compiled


def _install_shipped(path: str) -> None:
    """The shipped kernels' cache files copied into ``path``; a folder that cannot take them compiles."""
    if shipped():
        from . import prebuilt
        try:
            prebuilt.install(shipped(), path, os.path.dirname(os.path.abspath(__file__)))
        except OSError:
            pass


def _alias_shipped() -> None:
    if shipped():
        from . import prebuilt
        prebuilt.alias_modules(shipped(), __name__)


def _load_part(name: str):
    """A kernel module compiled only by the worlds that need it (``robots``, ``shapes``, ``cloth``), in the same
    per-version folder as :func:`load`, with its own ready marker; warmed up once, then kept."""
    if name in _parts:
        return _parts[name]
    load()  # the folder (and numba's cache location) are chosen there
    marker = os.path.join(kernel_dir(), f"ready-{name}")
    if _report is not None and not os.path.exists(marker):
        _report(f"{COMPILING_MESSAGE} ({name}; cache {cache_dir()})")
    import importlib
    module = importlib.import_module(f"{__name__}.{name}")
    _alias_shipped()
    _warm(module)
    _parts[name] = module
    try:
        open(marker, "a").close()
    except OSError:
        pass
    return module


def load_robots():
    """The compiled articulated-system kernels (``kernels.robots``), only for scenes with robots: the
    rigid world never pays their compile."""
    return _load_part("robots")


def load_robot_group():
    """The per-part robot kernels of a group step (``kernels.robot_group``: robots near each other or rows
    against world bodies), loaded by the first such step (``robots.__getattr__``), not by robots alone."""
    return _load_part("robot_group")


def load_shapes():
    """The compiled narrowphase of every shape pair and its one-call step (``kernels.shapes``), only for
    worlds with spheres, capsules, cylinders, hulls or height fields: boxes on planes never pay it."""
    return _load_part("shapes")


def load_cloth():
    """The compiled cloth substeps (``kernels.cloth``), only for worlds with cloth."""
    return _load_part("cloth")
