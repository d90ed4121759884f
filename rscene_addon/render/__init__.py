"""Sensor rendering: Cycles cameras (RGB, depth, ids, normals), lidar ray casting and IMU sampling.

For every enabled ``camera`` and ``sensor`` record of the imported scene (and any Blender camera the
caller names), over an inclusive frame range of the baked animation, the Blender side produces
``{layer: array}`` per sensor and frame and the pure writers of :mod:`rscene_addon.products` write
them at ``{sensor}/{layer}_{frame:05d}.{ext}`` with a JSON manifest. Entry points: :func:`run`
(a :class:`~rscene_addon.products.request.RenderRequest` from a scene file -> a ``RenderResult``, or a
``RenderError``; the ``render`` command and ``dataset`` units call it) and :func:`render_scene` (an
open Blender scene; returns what it wrote).

Modules, one job each (the bpy-free parts live in :mod:`rscene_addon.products`):

* :mod:`.runner` (bpy) opening a scene file, the run, annotations afterwards
* :mod:`.compat` (bpy) Blender 4.5 / 5.0 differences (pass names, image formats, OpenImageIO)
* :mod:`.exr` (bpy) reading Blender's multilayer EXR and images through its OpenImageIO
* :mod:`.scene_state` (bpy) temporary changes to the scene, undone afterwards
* :mod:`.poses` (bpy) sensor poses over time (parent body x mount pose)
* :mod:`.ids` (bpy) pass indices per object and the id tables
* :mod:`.cameras` (bpy) one Cycles render per camera per frame, decoded into arrays
* :mod:`.caster` (bpy) world-space triangles per frame, batched ray casts (Embree, or a BVHTree loop)
* :mod:`.raycast` (bpy) lidar sweeps
* :mod:`.pipeline` (bpy) :class:`RenderJob` / :func:`render_scene`

This ``__init__`` imports nothing from Blender, so the pure modules import in plain Python.
"""
from __future__ import annotations

__all__ = ["render_scene", "run"]


def run(request, progress=None, cancel=None, report=None):
    """See :func:`.runner.run`."""
    from .runner import run as _run
    return _run(request, progress=progress, cancel=cancel, report=report)


def render_scene(bl_scene, out_dir, frames, samples=None, sensors=None, progress=None, cancel=None, **kwargs):
    """See :func:`.pipeline.render_scene`."""
    from .pipeline import render_scene as _render_scene
    return _render_scene(bl_scene, out_dir, frames, samples=samples, sensors=sensors, progress=progress,
                         cancel=cancel, **kwargs)
