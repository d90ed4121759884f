"""``run(request) -> RenderResult``: open the scene, simulate it when its bodies move (as ``bake`` does,
``request.simulate``), render the request's frames, write the annotations.

The one entry point for a render from a file: the ``render`` command prints around it, the ``dataset``
units call it in their worker processes. Failures raise :class:`~..products.request.RenderError`
(message + the scene's diagnostics); nothing is printed here, warnings and progress go to the
caller's ``report(level, message)`` and ``progress(fraction, message)``.
"""
from __future__ import annotations

import os
import time

import bpy

from ..model import FormatError
from ..products.annotations import export_annotations, requested
from ..products.chunks import chunk as take_chunk
from ..products.request import RenderError, RenderRequest, RenderResult

__all__ = ["open_scene", "release", "run"]

_REGISTERED: list = []


def _ensure_properties() -> None:
    """The add-on's object and scene properties (``ob.rscene``) are what the renderer reads: register
    them when the add-on is not (a bare bpy process); :func:`release` undoes it."""
    if hasattr(bpy.types.Object, "rscene"):
        return
    from ..blender import props
    for cls in props.CLASSES:
        bpy.utils.register_class(cls)
    props.register_extra()
    _REGISTERED.append(props)


def release() -> None:
    """Unregister what :func:`run` registered (the bpy 4.5 module hangs at exit when classes stay)."""
    while _REGISTERED:
        props = _REGISTERED.pop()
        props.unregister_extra()
        for cls in reversed(props.CLASSES):
            bpy.utils.unregister_class(cls)


def open_scene(scene_path: str, report=None):
    """Open a .blend, or import a scene file into an empty file; returns the scene to render."""
    path = os.path.abspath(scene_path)
    if not os.path.exists(path):
        raise RenderError(f"{scene_path}: no such file")
    if path.lower().endswith(".blend"):
        bpy.ops.wm.open_mainfile(filepath=path)
        _ensure_properties()
        return bpy.context.scene
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _ensure_properties()
    from ..blender.scene_import import import_scene_file
    import_scene_file(path, bpy.context.scene, report=report)
    return bpy.context.scene


def _simulate_first(bl_scene, job, frames, request: RenderRequest, report, cancel) -> bool:
    """Simulate and bake a scene whose bodies move and that plays no bake yet, from its start frame to
    the last frame a run over ``frames`` reads (``job.frames_read``: flow, lidar sweeps and IMU samples
    read beyond the frames), as ``bake`` does. Every chunk of a run simulates from the same start over
    the whole run's frames, so chunks agree. Returns False when cancelled."""
    from ..blender.bake import current_scene_model
    from ..blender.simulation import SimulationFailed, has_bake, moves, simulate_and_bake
    from ..sim import Cancelled, compile_watch
    frames = list(frames)
    if not frames or has_bake(bl_scene):
        return True
    start = bl_scene.frame_start
    end = max(job.frames_read(frames))
    if end <= start:  # only the start pose is read: nothing to simulate
        return True
    bl_scene.frame_set(start)
    made: dict = {}
    scene_model = current_scene_model(bl_scene, made=made)
    if not moves(scene_model):
        return True
    say = (lambda text: report("INFO", text)) if report is not None else None
    try:
        simulate_and_bake(bl_scene, start, end, request.substeps, scene_model=scene_model,
                          backend=request.backend, say=say, cancel=cancel, made=made,
                          compile_progress=compile_watch.printer(say) if say is not None else None)
    except Cancelled:
        return False
    except SimulationFailed as exc:
        raise RenderError(f"{request.scene}: {exc} (render with --static to skip the simulation)") from None
    return True


def run(request: RenderRequest, progress=None, cancel=None, report=None) -> RenderResult:
    """Render ``request`` (see :class:`RenderRequest`); ``progress(fraction, message)`` after each step,
    ``cancel()`` returning True stops between steps (``result.cancelled``), ``report(level, message)``
    gets warnings. Raises :class:`RenderError` when the scene cannot be read or rendered."""
    started = time.perf_counter()
    try:
        bl_scene = open_scene(request.scene, report)
        frames = request.frames
        if frames is None:
            frames = range(bl_scene.frame_start, bl_scene.frame_end + 1, max(bl_scene.frame_step, 1))
        every_frame = frames  # a chunk simulates what the whole run would: chunks agree
        if request.chunk is not None:
            frames = take_chunk(frames, *request.chunk)
            if report is not None:
                k, n = request.chunk
                report("INFO", f"chunk {k}/{n}: frames " + (f"{frames[0]}-{frames[-1]}" if len(frames) else "(none)"))
        from .pipeline import RenderJob
        job = RenderJob(bl_scene, request.out_dir, list(frames), request.samples, list(request.sensors or ()),
                        request.options, request.chunk, report=report)  # plans: a bad request fails here
        if request.simulate and not _simulate_first(bl_scene, job, every_frame, request, report, cancel):
            return RenderResult(out_dir=job.out_dir, frames=list(job.frames), cancelled=True,
                                seconds=time.perf_counter() - started)
        if report is not None:
            report("INFO", f"rendering {len(job.specs)} sensor(s) over {len(job.frames)} frame(s) into "
                           f"{job.out_dir}")
            for spec in job.specs:
                report("INFO", f"  {spec.name} ({spec.kind}): {', '.join(spec.products)}")
        done = job.run(progress, cancel)
        result = RenderResult(
            out_dir=done["out_dir"], frames=done["frames"], manifest=done["manifest"], files=done["files"],
            sensors=done["sensors"], warnings=done["warnings"], timings=done["timings"],
            cancelled=done["cancelled"], specs=[(s.name, s.kind, tuple(s.products)) for s in job.specs])
        wanted = requested(job.options.products)
        if wanted and request.annotate and request.chunk is None and not result.cancelled:
            result.annotations = export_annotations(
                job.out_dir, "coco" in wanted, "bop" in wanted,
                report=(lambda line: report("INFO", line)) if report is not None else (lambda line: None),
                annotate_static=job.options.annotate_static)
    except RenderError:
        raise
    except FormatError as exc:
        raise RenderError(f"{len(exc.diagnostics)} problem(s) found in {request.scene}", exc.diagnostics) from None
    except (OSError, ValueError, RuntimeError, TypeError) as exc:
        raise RenderError(str(exc) or type(exc).__name__) from exc
    result.seconds = time.perf_counter() - started
    return result
