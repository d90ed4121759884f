"""The kernels' first compile as long work: how many of their functions are compiled and how many are left,
the rate and the time left, and a cancel that takes effect between compiler passes.

numba announces each function it compiles (``numba:compile``) and each compiler pass (``numba:run_pass``);
a listener counts our functions and raises :class:`CompileCancelled` at the next event once ``cancel()``
says so. The exception leaves numba like any failed compile: the functions finished before it stay in the
cache, the next load compiles the rest. How many are left is read from the code: the kernel functions a
part's ``warm_up`` reaches through the names it uses, short of those loaded or held by the cache (a function
behind a branch that never runs counts too, so the total is an upper bound and the count may end below it).
numba is imported only by a watch that listens, i.e. when a kernel module is about to be warmed up.
"""
from __future__ import annotations

import contextlib
import os
import time
import types
from dataclasses import dataclass
from typing import Callable

PACKAGE = __name__.rsplit(".", 1)[0] + ".kernels"  # whatever name the add-on was imported under


class CompileCancelled(Exception):
    """Raised inside numba's compile when the watch's ``cancel()`` returned True."""


@dataclass(frozen=True)
class CompileStatus:
    """Where a first compile stands: ``done`` of at most ``total`` kernel functions after ``seconds``."""
    done: int
    total: int
    seconds: float

    def seconds_left(self) -> float | None:
        """At the rate so far (functions per second); None before the first function is done."""
        if self.done == 0 or self.seconds <= 0:
            return None
        return max(0, self.total - self.done) * self.seconds / self.done

    def line(self) -> str:
        left = self.seconds_left()
        rate = self.done / self.seconds if self.seconds > 0 else 0.0
        eta = "?" if left is None else f"~{left:.0f} s"
        return (f"compiling physics kernels (once): {self.done} of ~{self.total} functions, "
                f"{rate:.1f}/s, {self.seconds:.0f} s, {eta} left")


def _ours(dispatcher) -> bool:
    fn = getattr(dispatcher, "py_func", None)
    return fn is not None and (fn.__module__ or "").startswith(PACKAGE + ".")


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _cached(dispatcher) -> bool:
    """Its cache holds an index file (it will load, and so will the callees linked into it). Reads numba
    0.68's cache layout, as ``prebuilt`` does; another layout counts as not cached (a larger estimate)."""
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return False


def reachable(fn, skip=_cached) -> set:
    """Our compiled functions that ``fn`` (a Python function or a dispatcher) names, directly, through a
    kernel module's attribute (``robot_step.step_alone``) or through the functions it names, and so on; one
    for which ``skip`` is true is left out with what only it reaches."""
    from numba.core.dispatcher import Dispatcher
    found, todo = set(), [getattr(fn, "py_func", fn)]
    while todo:
        py = todo.pop()
        scope = py.__globals__
        for code in _codes(py.__code__):
            for name in code.co_names:
                obj = scope.get(name)
                candidates = [obj]
                if isinstance(obj, types.ModuleType) and obj.__name__.startswith(PACKAGE + "."):
                    candidates = [getattr(obj, attr, None) for attr in code.co_names]
                for cand in candidates:
                    if (isinstance(cand, Dispatcher) and _ours(cand) and cand not in found and not cand.overloads
                            and not skip(cand)):
                        found.add(cand)
                        todo.append(cand.py_func)
    return found


class CompileWatch:
    """One watch over the kernel loads of one job (a simulation): ``progress(CompileStatus)`` after each of
    our functions is compiled, ``cancel()`` asked at every compile event. Counts carry over from one part's
    compile to the next (the rigid world's, then the robots')."""

    def __init__(self, progress: Callable[[CompileStatus], None] | None = None,
                 cancel: Callable[[], bool] | None = None):
        self.progress, self.cancel = progress, cancel
        self.done: set = set()
        self.expected: set = set()
        self.started: float | None = None

    def status(self) -> CompileStatus:
        pending = {d for d in self.expected if not d.overloads}  # one done has its overload
        seconds = 0.0 if self.started is None else time.perf_counter() - self.started
        return CompileStatus(len(self.done), len(self.done) + len(pending), seconds)

    def listen(self, module):
        """A context in which ``module.warm_up()`` runs under this watch: its listener is installed by this
        call (numba's ``event.install_listener`` for both kinds) and removed when the context exits."""
        from numba.core import event
        self.expected |= reachable(module.warm_up)
        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                if watch.cancel is not None and watch.cancel():
                    raise CompileCancelled("the physics kernels' compile was cancelled (what compiled is kept)")
                if watch.started is None and ev.kind == "numba:compile":
                    watch.started = time.perf_counter()

            def on_end(self, ev):
                dispatcher = ev.data.get("dispatcher") if ev.kind == "numba:compile" else None
                # a compile that raised added no overload (numba 0.68's ``Event.is_failed`` reads inverted)
                if dispatcher is None or not dispatcher.overloads or not _ours(dispatcher) or dispatcher in watch.done:
                    return
                watch.done.add(dispatcher)
                if watch.progress is not None:
                    watch.progress(watch.status())

        listener, stack = _Listener(), contextlib.ExitStack()
        for kind in ("numba:compile", "numba:run_pass"):
            stack.enter_context(event.install_listener(kind, listener))
        return stack


def printer(print_fn: Callable[[str], None] = print, every: int = 10) -> Callable[[CompileStatus], None]:
    """A ``compile_progress`` for a console: the status line after the first function, then every ``every``."""
    def progress(status: CompileStatus) -> None:
        if status.done == 1 or status.done % every == 0:
            print_fn(status.line())
    return progress
