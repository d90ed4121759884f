"""Running one bake or one unit in a Blender-capable Python process (the bpy module).

Used by both runners: the local pool's worker processes (``worker.py``) and Ray tasks
(``ray_runner.py``). A bake is ``commands.blender_jobs.import_and_bake`` (with the variation's seed
and the job's fps, images packed); a unit is ``render.run`` on the baked .blend with the job's frames
and chunk K/N (errors come back as a typed ``RenderError``). While either runs, the process's file
descriptors 1 and 2 go to the unit's ``log.txt``: Cycles' own lines (``Saved: '.../.passes...tmp.exr'``)
are written by Blender's C code and never reach the user's terminal.
"""
from __future__ import annotations

import contextlib
import os
import socket
import sys
import time

from .store import publish, publish_bake, scratch_beside, write_json

__all__ = ["UnitFailed", "build_bake", "captured_output", "render_unit"]

BLEND_NAME = "scene.blend"


class UnitFailed(RuntimeError):
    """A bake or unit that ran to its end without producing its files (bad scene, render error)."""


@contextlib.contextmanager
def captured_output(log_path: str):
    """Send this process's stdout and stderr (Python's and C's) to ``log_path`` (appended)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for handle in (fd, *saved):
            os.close(handle)


def build_bake(task: dict, bake_dir: str) -> str:
    """Import, simulate and bake ``task``'s scene into ``bake_dir`` (scratch folder, then renamed);
    returns the .blend's path. Raises :class:`UnitFailed` with the error lines when it cannot."""
    scratch = scratch_beside(bake_dir)
    log = os.path.join(scratch, "log.txt")
    try:
        with captured_output(log):
            from ..commands.blender_jobs import import_and_bake
            from ..model import FormatError
            try:
                import_and_bake(task["scene_path"], task["frame_start"], task["frame_end"],
                                os.path.join(scratch, BLEND_NAME), task["substeps"], fps=task["fps"],
                                seed=task["seed"], pack=True)
            except FormatError as exc:
                message = "\n  ".join([f"error: {len(exc.diagnostics)} problem(s) in {task['scene_path']}",
                                        *map(str, exc.diagnostics[:20])])
                print(message)
                raise UnitFailed(message) from None
            except (OSError, ValueError, RuntimeError, TypeError) as exc:
                print(f"error: {exc}")
                raise UnitFailed(f"error: {exc}") from None
        write_json(os.path.join(scratch, "bake.json"), {"fingerprint": task["fingerprint"], "task": task})
        publish_bake(scratch, bake_dir, task["fingerprint"])
    except BaseException:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return os.path.join(bake_dir, BLEND_NAME)


def render_unit(task: dict, blend: str, unit_dir: str, extra: dict | None = None) -> dict:
    """Render ``task`` (one unit) from the baked ``blend`` into ``unit_dir`` (scratch folder, then
    renamed); returns the unit record written to its ``unit.json`` (with ``extra`` added). A render
    that fails raises :class:`UnitFailed` with the renderer's own message (``render.run`` raises a
    ``RenderError``); the unit's ``log.txt`` keeps what Blender printed, for reading, never parsed."""
    from ..commands.render_job import console
    from ..products.plan import RenderOptions
    from ..products.request import RenderError, RenderRequest
    from ..render import run
    from .store import UNIT_FILE
    scratch = scratch_beside(unit_dir)
    log = os.path.join(scratch, "log.txt")
    started = time.perf_counter()
    try:
        options = RenderOptions(seed=task["seed"], device=task["device"], threads=task.get("threads"),
                                **task["options"])
        request = RenderRequest(blend, scratch, task["frames_spec"], task["samples"],
                                tuple(task["sensors"]) or None, task["chunk"], options)
        with captured_output(log):
            report, progress = console(lambda line: print(line, flush=True))
            try:
                result = run(request, progress, report=report)
            except RenderError as exc:
                raise UnitFailed(str(exc)) from None
        if result.cancelled:
            raise UnitFailed("render cancelled")
        record = {"unit": task["unit"], "fingerprint": task["fingerprint"], "frames": list(task["frames"]),
                  "chunk": task["chunk"], "seed": task["seed"], "threads": task.get("threads"), "scene": task["scene_path"],
                  "manifest": task["manifest"], "seconds": round(time.perf_counter() - started, 3),
                  "host": socket.gethostname(), "pid": os.getpid(), **(extra or {})}
        write_json(os.path.join(scratch, UNIT_FILE), record)
        publish(scratch, unit_dir)
        return record
    except BaseException:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
        raise
