"""Running one bake or one unit in a Blender-capable Python process (the bpy module).

Used by both runners: the local pool's worker processes (``worker.py``) and Ray tasks
(``ray_runner.py``). A bake is ``commands.blender_jobs.import_and_bake`` (with the variation's seed
and the job's fps, images packed); a unit is the render command itself
(``commands.render_job.run_render_cli`` on the baked .blend with the job's frames and ``--chunk K/N``). While either runs, the process's file
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


def _tail(path: str, lines: int = 12) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read().splitlines()
    except OSError:
        return ""
    errors = [line for line in text if line.lstrip().startswith(("error", "Error", "Traceback"))]
    start = text.index(errors[0]) if errors else max(0, len(text) - lines)
    return "\n".join(text[start:start + lines])


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
                print(f"error: {len(exc.diagnostics)} problem(s) in {task['scene_path']}")
                for diagnostic in exc.diagnostics[:20]:
                    print(f"  {diagnostic}")
                raise UnitFailed(_tail(log) or "bad scene") from None
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
    renamed); returns the unit record written to its ``unit.json`` (with ``extra`` added)."""
    from ..commands.render_job import run_render_cli
    from ..products.plan import RenderOptions
    from .store import UNIT_FILE
    scratch = scratch_beside(unit_dir)
    log = os.path.join(scratch, "log.txt")
    started = time.perf_counter()
    try:
        options = RenderOptions(seed=task["seed"], device=task["device"], threads=task.get("threads"),
                                **task["options"])
        with captured_output(log):
            status = run_render_cli(blend, task["frames_spec"], scratch, samples=task["samples"],
                                    sensors=list(task["sensors"]) or None, chunk=task["chunk"],
                                    options=options, print_fn=lambda line: print(line, flush=True),
                                    unregister_after=False)
        if status != 0:
            raise UnitFailed(_tail(log) or f"render exited with status {status}")
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
