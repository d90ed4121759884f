"""Build the extension zip with Blender's own tooling and install it into a fresh headless Blender.

Runs on whichever bpy the environment has (4.5 LTS or 5.0). The install happens in a separate, isolated
interpreter (`python -I`, cwd = a temp dir, its own BLENDER_USER_RESOURCES) so that the repository
checkout is not importable there: the installed extension must be self-contained.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build_extension.py"
EXT_ID = "rscene_addon"
MODULE = f"bl_ext.user_default.{EXT_ID}"

pytestmark = pytest.mark.slow

INSTALL_CHILD = textwrap.dedent(
    r"""
    import os
    import sys

    import bpy  # first: it puts Blender's script modules (addon_utils, ...) on sys.path
    import addon_utils

    zip_path, module, ext_id = sys.argv[1], sys.argv[2], sys.argv[3]
    print("blender", bpy.app.version_string)

    def reraise(ex):
        raise ex

    prefs = bpy.context.preferences
    assert module not in prefs.addons, "already enabled before install?"
    result = bpy.ops.extensions.package_install_files(
        filepath=zip_path, repo="user_default", enable_on_install=True,
    )
    assert result == {"FINISHED"}, result
    assert module in prefs.addons, sorted(a.module for a in prefs.addons)
    assert module in sys.modules

    # It landed in our throw-away user resources, not in ~/.config/blender.
    user_res = os.path.realpath(os.environ["BLENDER_USER_RESOURCES"])
    ext_dir = os.path.realpath(os.path.dirname(sys.modules[module].__file__))
    assert ext_dir.startswith(user_res + os.sep), (ext_dir, user_res)
    assert os.path.basename(ext_dir) == ext_id, ext_dir

    # The repository's top-level package is not importable here: the extension must use relative imports.
    assert ext_id not in sys.modules, "the add-on imported the top-level rscene_addon package"

    addon_utils.disable(module, default_set=True, handle_error=reraise)
    assert module not in prefs.addons, sorted(a.module for a in prefs.addons)
    print("INSTALL-OK", ext_dir)
    """
)


@pytest.fixture(scope="module")
def extension_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--output-dir", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    zip_path = Path(proc.stdout.strip().splitlines()[-1])
    assert zip_path.is_file(), proc.stdout
    return zip_path


def test_zip_layout(extension_zip: Path) -> None:
    with zipfile.ZipFile(extension_zip) as zf:
        names = zf.namelist()
    assert "blender_manifest.toml" in names
    assert "__init__.py" in names, "the extension's __init__.py must be at the zip root"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")], names


def test_install_and_enable(extension_zip: Path, tmp_path: Path) -> None:
    user_res = tmp_path / "blender-user"
    user_res.mkdir()
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    env = dict(os.environ)
    env["BLENDER_USER_RESOURCES"] = str(user_res)
    proc = subprocess.run(
        [sys.executable, "-I", "-c", INSTALL_CHILD, str(extension_zip), MODULE, EXT_ID],
        cwd=workdir,
        env=env,
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "INSTALL-OK" in proc.stdout, (
        f"install in a fresh Blender failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
