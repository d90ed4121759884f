"""Sensor rendering: Cycles cameras (RGB, depth, ids, normals), lidar ray casting and IMU sampling.

For every enabled ``camera`` and ``sensor`` record of the imported scene (and any Blender camera the
caller names), over an inclusive frame range of the baked animation, files are written at
``{sensor}/{layer}_{frame:05d}.{ext}`` with a JSON manifest (``sensors.manifest``). See
:func:`render_scene` (the Python API, BlenderProc-style: it returns what it wrote) and
:func:`rscene_addon.commands.render_job.run_render_cli` (``--frames``, ``--chunk K/N``).

Modules, one job each:

* :mod:`.plan` (pure) which sensors exist, their layers, intrinsics and options
* :mod:`.segmentation` (pure) instance/class ids, colours, 2D boxes from an id image
* :mod:`.outputs` (pure) the manifest with several files per layer, chunk names, merging
* :mod:`.timing` (pure) frame times, lidar/IMU windows, pose interpolation
* :mod:`.compat` (bpy) Blender 4.5 / 5.0 differences (pass names, image formats, OpenImageIO)
* :mod:`.exr` (bpy) reading Blender's multilayer EXR, writing single-layer EXR
* :mod:`.scene_state` (bpy) temporary changes to the scene, undone afterwards
* :mod:`.poses` (bpy) sensor poses over time (parent body x mount pose)
* :mod:`.ids` (bpy) pass indices per object and the id tables
* :mod:`.cameras` (bpy) one Cycles render per camera per frame, decoded into files
* :mod:`.caster` (bpy) world-space triangles per frame, batched ray casts (Embree, or a BVHTree loop)
* :mod:`.raycast` (bpy) lidar sweeps
* :mod:`.pipeline` (bpy) :class:`RenderJob` / :func:`render_scene`

This ``__init__`` imports nothing from Blender, so the pure modules import in plain Python.
"""
from __future__ import annotations

__all__ = ["render_scene"]


def render_scene(bl_scene, out_dir, frames, samples=None, sensors=None, progress=None, cancel=None, **kwargs):
    """See :func:`.pipeline.render_scene`."""
    from .pipeline import render_scene as _render_scene
    return _render_scene(bl_scene, out_dir, frames, samples=samples, sensors=sensors, progress=progress,
                         cancel=cancel, **kwargs)
