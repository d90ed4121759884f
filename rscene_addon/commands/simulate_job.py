"""Command-line entry: simulate a scene file (any format ``import`` reads) and write the trajectory as ``.npz``.

The package's CLI calls ``run_simulation_cli`` for
``python -m rscene_addon simulate SCENE --duration 2.0 --fps 60 --out traj.npz``.
"""
from __future__ import annotations

import os
import time
from typing import Callable

from ..sim import compile_watch, kernels
from ..sim.finite import non_finite
from ..sim.trajectory import Cancelled, simulate

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def run_simulation_cli(scene_path: str, duration: float, fps: float, out: str, substeps: int | None = None,
                       print_fn: Callable[[str], None] = print, backend: str | None = None) -> int:
    """Read ``scene_path``, simulate, write ``out`` (npz). Prints progress lines; returns an exit code.
    ``backend``: ``auto``/``numba``/``numpy`` (None: RSCENE_SIM_BACKEND, else auto)."""
    from ..formats import registry
    from ..model import FormatError, describe

    if not duration >= 0 or not fps > 0 or (substeps is not None and substeps < 1):
        print_fn("error: need duration >= 0, fps > 0 and substeps >= 1")
        return EXIT_USAGE
    try:
        scene = registry.read_scene(scene_path)
    except FormatError as exc:
        for line in describe(exc, scene_path):
            print_fn(line)
        return EXIT_ERROR
    except OSError as exc:
        print_fn(f"error: cannot read {scene_path}: {exc}")
        return EXIT_ERROR
    try:
        backend = kernels.prepare(backend, report=print_fn)
    except ValueError as exc:
        print_fn(f"error: {exc}")
        return EXIT_USAGE
    start = time.perf_counter()
    last = [-1]

    def progress(fraction: float) -> None:
        pct = int(fraction * 100)
        if pct // 10 > last[0] // 10 or pct == 100 and last[0] != 100:
            last[0] = pct
            print_fn(f"simulating {os.path.basename(scene_path)}: {pct:3d}% "
                     f"({time.perf_counter() - start:.1f} s)")

    try:
        traj = simulate(scene, duration, fps, substeps=substeps, progress=progress, backend=backend,
                        compile_progress=compile_watch.printer(print_fn))
    except Cancelled:
        print_fn("cancelled")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print_fn("interrupted")
        return EXIT_INTERRUPTED
    except (ValueError, ArithmeticError) as exc:
        print_fn(f"error: simulation failed: {exc}")
        return EXIT_ERROR
    except MemoryError as exc:  # a scene too big for this machine is the scene's error, not a traceback
        print_fn(f"error: {scene_path}: simulation needs more memory than this process may use ({exc})")
        return EXIT_ERROR
    for message in traj.warnings:
        print_fn(f"warning: {message}")
    problem = non_finite(traj)
    if problem:  # never a trajectory of NaNs with exit status 0
        print_fn(f"error: simulation failed: {problem}; nothing written")
        return EXIT_ERROR
    try:
        folder = os.path.dirname(os.path.abspath(out))
        os.makedirs(folder, exist_ok=True)
        traj.save_npz(out)
    except OSError as exc:
        print_fn(f"error: cannot write {out}: {exc}")
        return EXIT_ERROR
    print_fn(f"wrote {out}: {traj.num_frames} frames, {len(traj.names)} bodies, "
             f"{len(traj.events)} contact events, "
             f"dt {traj.dt:.6g} s x {traj.substeps} substeps/frame, {time.perf_counter() - start:.2f} s")
    return EXIT_OK
