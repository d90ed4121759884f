"""The plain-Python subpackages must import without Blender.

rscene_addon.model / .formats / .sim / .sensors / .products are the bpy-free core: they must import (with every
submodule) in a fresh interpreter where any import of bpy, mathutils or another Blender-only module
raises ImportError, and afterwards none of those modules may be in sys.modules. This also means
rscene_addon/__init__.py must not import bpy at module level (only inside register()/unregister()).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "rscene_addon"

# (subpackage, required): required ones must exist; the others are skipped until they are written.
SUBPACKAGES = [("base", True), ("model", True), ("scene_geometry", True), ("formats", True), ("sim", True), ("sensors", True), ("robots", True),
               ("products", True)]

# Top-level modules that exist only inside Blender (bpy wheel or Blender's bundled scripts).
BLENDER_ONLY = (
    "bpy",
    "mathutils",
    "bmesh",
    "bpy_extras",
    "bpy_types",
    "_bpy",
    "bl_math",
    "bgl",
    "blf",
    "gpu",
    "gpu_extras",
    "aud",
    "idprop",
    "imbuf",
    "freestyle",
    "addon_utils",
    "bl_ui",
    "bl_operators",
    "_bpy_internal",
)

CHILD = textwrap.dedent(
    r"""
    import importlib
    import importlib.abc
    import pkgutil
    import sys

    repo_root, modname, blocked = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
    sys.path.insert(0, repo_root)

    class BlockBlender(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.partition(".")[0] in blocked:
                raise ImportError(f"{fullname} is blocked: {modname} must not need Blender")
            return None

    sys.meta_path.insert(0, BlockBlender())

    # Prove the blocker works (bpy may well be installed in this interpreter).
    for probe in ("bpy", "mathutils"):
        try:
            importlib.import_module(probe)
        except ImportError:
            pass
        else:
            raise SystemExit(f"blocker failed: {probe} imported")

    pkg = importlib.import_module(modname)
    imported = [modname]
    if hasattr(pkg, "__path__"):
        def onerror(name):
            raise  # re-raise the ImportError of a submodule
        for info in pkgutil.walk_packages(pkg.__path__, prefix=modname + ".", onerror=onerror):
            importlib.import_module(info.name)
            imported.append(info.name)

    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in blocked)
    assert "bpy" not in sys.modules and "mathutils" not in sys.modules, leaked
    assert not leaked, leaked
    print("imported:", " ".join(imported))
    """
)


def _exists(sub: str) -> bool:
    base = REPO_ROOT / PACKAGE
    return (base / f"{sub}.py").is_file() or any((base / sub).glob("*.py"))


@pytest.mark.parametrize(("sub", "required"), SUBPACKAGES, ids=[s for s, _ in SUBPACKAGES])
def test_imports_without_blender(sub: str, required: bool) -> None:
    if not _exists(sub):
        if required:
            pytest.fail(f"{PACKAGE}.{sub} does not exist (expected {PACKAGE}/{sub}/*.py)")
        pytest.skip(f"{PACKAGE}.{sub} does not exist yet")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(REPO_ROOT), f"{PACKAGE}.{sub}", ",".join(BLENDER_ONLY)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (
        f"importing {PACKAGE}.{sub} without Blender failed (exit {proc.returncode}):\n"
        f"{proc.stdout}\n{proc.stderr}"
    )
