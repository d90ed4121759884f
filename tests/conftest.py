"""Shared pytest setup for all environments (plain Python, bpy 4.5, bpy 5.0).

Sets BLENDER_USER_RESOURCES to a throw-away directory *before* any test module can import bpy, so that
enabling add-ons/extensions never writes into the user's ~/.config/blender. scripts/test.sh exports one
already; this covers running pytest directly.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

if not os.environ.get("BLENDER_USER_RESOURCES"):
    _user_res = tempfile.mkdtemp(prefix="rscene-blender-user-")
    os.environ["BLENDER_USER_RESOURCES"] = _user_res
    atexit.register(shutil.rmtree, _user_res, True)

if "bpy" in sys.modules:  # pragma: no cover - only if a plugin imported bpy before us
    import warnings

    warnings.warn("bpy was imported before tests/conftest.py set BLENDER_USER_RESOURCES", stacklevel=1)

# pyproject.toml's `pythonpath = ["."]` does this too; keep it for runs with a different rootdir/config.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def pytest_sessionstart(session):
    """Under CI=true the corpus must be there: tests that read it would otherwise skip or pass on nothing."""
    from tests.corpus import CORPUS, in_ci, missing_message

    if in_ci() and not (CORPUS / "SOURCES.md").is_file():
        raise pytest.UsageError(missing_message())


def pytest_report_header(config):
    try:
        import importlib.util

        has_bpy = importlib.util.find_spec("bpy") is not None
    except (ImportError, ValueError):
        has_bpy = False
    status = "available" if has_bpy else "NOT installed (tests/blender ignored)"
    return [f"rscene: bpy {status}; BLENDER_USER_RESOURCES={os.environ['BLENDER_USER_RESOURCES']}"]
