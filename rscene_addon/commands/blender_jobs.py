"""Command-line jobs that need Blender: import into a new .blend, export a .blend's scene."""
from __future__ import annotations

import os
import sys

import bpy

from ..model import FormatError, describe


def _ensure_registered() -> None:
    if not hasattr(bpy.types.Object, "rscene"):
        from .. import registration
        registration.register()


def _console_report(level: str, message: str) -> None:
    print(f"{level.lower()}: {message}", file=sys.stderr if level == "ERROR" else sys.stdout)


def _progress_printer(label: str):
    last = [-1]

    def progress(fraction: float, *_status) -> None:
        percent = int(fraction * 100)
        if percent // 10 != last[0] // 10:
            last[0] = percent
            print(f"{label}: {percent}%", flush=True)
    return progress


def import_to_blend(files: list[str], blend: str) -> int:
    from ..blender.scene_import import import_scene_file
    _ensure_registered()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    status = 0
    for path in files:
        try:
            import_scene_file(path, bpy.context.scene, report=_console_report,
                              progress=_progress_printer(os.path.basename(path)))
            print(f"imported {path}")
        except FormatError as exc:
            print("\n".join(describe(exc, limit=None, heading=f"error: cannot import {path}:")), file=sys.stderr)
            status = 1
    if status == 0:
        bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(blend))
        print(f"saved {blend}")
    return status


def export_from_blend(blend: str, output: str) -> int:
    from ..blender.extract import export_scene
    _ensure_registered()
    bpy.ops.wm.open_mainfile(filepath=os.path.abspath(blend))
    export_scene(bpy.context.scene, output, warn=lambda m: _console_report("WARNING", m))
    print(f"wrote {output}")
    return 0


def import_and_bake(scene_path: str, frame_start: int, frame_end: int, blend: str, substeps=None, *,
                    fps: float | None = None, seed: int | None = None, pack: bool = False,
                    backend: str | None = None, pd_gains: tuple[float, float] | None = None) -> None:
    """Import a scene into an empty file, simulate the frame range, bake it, save the .blend.

    ``fps`` replaces the scene's frame rate; ``seed`` seeds the simulation (``sim.model_builder``); ``pack``
    packs external images into the .blend so that it renders on a machine without the scene's assets;
    ``backend``: the physics backend (``auto``/``numba``/``numpy``, None: RSCENE_SIM_BACKEND or auto);
    ``pd_gains`` (kp, kd): every robot's joints are PD-driven (``blender.bake.robot_drives``: they hold their
    start, or follow the joints keyframed on their rigs), instead of gains a .blend keeps on its robots."""
    from ..blender.bake import GAINS_KEY
    from ..blender.robots import is_robot_root
    from ..blender.scene_import import import_scene_file
    from ..blender.simulation import SimulationFailed, simulate_and_bake
    from ..sim import compile_watch
    _ensure_registered()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bl_scene = bpy.context.scene
    print(f"importing {scene_path}")
    import_scene_file(scene_path, bl_scene, report=_console_report, progress=_progress_printer("import"))
    blend = os.path.abspath(blend)
    bpy.ops.wm.save_as_mainfile(filepath=blend)  # saved first so point caches go beside it
    if fps is not None:
        bl_scene.render.fps = max(1, round(fps))
        bl_scene.render.fps_base = bl_scene.render.fps / fps
    if pd_gains is not None:
        for ob in bl_scene.objects:
            if is_robot_root(ob):
                ob[GAINS_KEY] = [float(pd_gains[0]), float(pd_gains[1])]
    try:
        simulate_and_bake(bl_scene, frame_start, frame_end, substeps, seed=seed, backend=backend,
                          say=lambda text: print(text, flush=True), progress=_progress_printer("simulate"),
                          compile_progress=compile_watch.printer(lambda text: print(text, flush=True)))
    except SimulationFailed as exc:  # never a bake of NaN poses that exits 0
        print(f"error: {exc}", flush=True)
        raise SystemExit(1) from None
    # no .blend1 backup of our own intermediate save (a backup of the user's earlier file stays)
    if pack:
        bpy.ops.file.pack_all()
    filepaths = bpy.context.preferences.filepaths
    versions, filepaths.save_version = filepaths.save_version, 0
    try:
        bpy.ops.wm.save_as_mainfile(filepath=blend)
    finally:
        filepaths.save_version = versions
    print(f"saved {blend}")


def bake_to_blend(scene_path: str, frames: str, blend: str, substeps=None, backend: str | None = None,
                  pd_gains: tuple[float, float] | None = None) -> int:
    from ..products.chunks import parse_frame_range
    selected = list(parse_frame_range(frames))
    import_and_bake(scene_path, selected[0], selected[-1], blend, substeps, backend=backend, pd_gains=pd_gains)
    return 0


def demo(scene_path: str, out_dir: str, frames: int, samples: int, render: bool = True) -> int:
    """The main job: import a scene, simulate and bake it, save the .blend, render its sensors."""
    os.makedirs(out_dir, exist_ok=True)
    import_and_bake(scene_path, 1, frames, os.path.join(out_dir, "demo.blend"))
    if not render:
        return 0
    from ..render import render_scene
    written = render_scene(bpy.context.scene, os.path.join(out_dir, "render"), list(range(1, frames + 1)),
                           samples=samples, progress=_progress_printer("render"))
    print(f"demo: rendered to {os.path.join(out_dir, 'render')} ({len(written.get('files', ()))} files)")
    return 0
