"""Shared helpers for the sensor-render tests (no tests here): a tiny synthetic .rscene, the add-on's
render classes registered for the session, and a session-end unregister (the bpy 4.5 module hangs at
interpreter exit while add-on classes stay registered)."""
from __future__ import annotations

import bpy
import pytest

from rscene_addon.blender import scene_import

BOX = ("object /World/Box box 0 0 0.5 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true "
       "1 18446744073709551615 semanticClass=crate instanceId=7")
BALL = ("object /World/Ball sphere 0 2.5 0.5 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static "
        "true 1 18446744073709551615 semanticClass=ball")
CAMERA = "camera /World/Cam -4 0 0.5 1 0 0 0 60 0.05 100 64 48 rgb true"


def scene_text(*lines: str, preset: str = "fast") -> str:
    return "\n".join(["raisim_engine_scene 2", f"rayrai_render preset={preset}", *lines]) + "\n"


def write_scene(tmp_path, *lines: str, name: str = "scene.rscene") -> str:
    path = tmp_path / name
    path.write_text(scene_text(*lines))
    return str(path)


def import_scene(tmp_path, *lines: str):
    path = write_scene(tmp_path, *lines)
    scene_import.import_scene_file(path, bpy.context.scene)
    return bpy.context.scene


def _render_modules():
    from rscene_addon.ops import render_ops
    from rscene_addon.ui import render_panel
    return render_ops, render_panel


@pytest.fixture(scope="session")
def _session_registration():
    """Registers the render operator/panel once; at session end unregisters them and the add-on."""
    registered = []
    yield registered
    for module in reversed(registered):
        if hasattr(module, "unregister_extra"):
            module.unregister_extra()
        for cls in reversed(module.CLASSES):
            bpy.utils.unregister_class(cls)
    if hasattr(bpy.types.Object, "rscene"):
        import rscene_addon
        rscene_addon.unregister()


@pytest.fixture
def render_env(blank, _session_registration):
    """``blank`` (empty scene, add-on registered) plus the render operator and panel."""
    if not hasattr(bpy.types.Scene, "rscene_render"):
        for module in _render_modules():
            for cls in module.CLASSES:
                bpy.utils.register_class(cls)
            if hasattr(module, "register_extra"):
                module.register_extra()
            _session_registration.append(module)
    yield bpy
