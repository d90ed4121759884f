"""Tests in this folder need bpy (Blender as a Python module).

Where bpy is not installed (the plain-Python environment) the folder is not collected at all, so test
modules here may `import bpy` at module level. Everything collected here gets the `blender` marker.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HAVE_BPY = importlib.util.find_spec("bpy") is not None

if not HAVE_BPY:
    # Ignore every file below this folder (conftest.py itself is still loaded).
    collect_ignore_glob = ["*"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.blender)


@pytest.fixture
def empty_blend():
    """An empty factory-settings scene (bpy.ops.wm.read_factory_settings(use_empty=True)); ~0.07 s."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)


@pytest.fixture
def blank(empty_blend):
    """An empty scene with the add-on's classes registered (import/export operators, properties)."""
    import bpy

    if not hasattr(bpy.types.Object, "rscene"):
        import rscene_addon

        rscene_addon.register()
    yield bpy


@pytest.fixture(scope="session", autouse=True)
def _unregister_at_exit():
    """bpy 4.5 hangs at interpreter exit while add-on classes are registered: unregister at the end."""
    yield
    import sys

    if "bpy" in sys.modules:
        import bpy

        if hasattr(bpy.types.Object, "rscene"):
            import rscene_addon

            rscene_addon.unregister()
