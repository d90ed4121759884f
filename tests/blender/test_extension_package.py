"""Build the extension zip with Blender's own tooling and install it into a fresh headless Blender.

Runs on whichever bpy the environment has (4.5 LTS: Python 3.11, 5.2 LTS: Python 3.13). The zip is this
machine's platform build for this Python (`--platform host --python host`: the manifest's wheels for this
platform and Python only). The install happens in a separate,
isolated interpreter (`python -I`, cwd = a temp dir, its own BLENDER_USER_RESOURCES) so that the
repository checkout and the test environment's site-packages are not importable there: the installed
extension must be self-contained, its bundled wheels (embreex) included.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
import tomllib
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

    # The bundled wheel was installed by Blender with the extension, into a folder on sys.path under our
    # user resources. The test venv has embreex too (scripts/setup.sh): put Blender's folder first so
    # that the bundled copy is the one imported, then the lidar's caster uses it.
    assert "embreex" not in sys.modules
    bundled = [p for p in sys.path if os.path.realpath(p).startswith(user_res + os.sep)
               and os.path.isdir(os.path.join(p, "embreex"))]
    assert bundled, [p for p in sys.path if "site-packages" in p]
    sys.path.insert(0, bundled[0])
    import embreex
    wheel_dir = os.path.realpath(os.path.dirname(embreex.__file__))
    assert wheel_dir.startswith(user_res + os.sep), (wheel_dir, user_res)
    import importlib
    caster = importlib.import_module(module + ".render.caster")
    assert caster.available_backends()[0] == "embree", caster.available_backends()
    import numpy as np
    tri = caster.SceneTriangles(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]), np.array([[0, 1, 2]]),
                                np.array([4], np.int32))
    hits = caster.make_caster(tri).cast(np.array([[0.2, 0.2, 1.0]]), np.array([[0.0, 0.0, -1.0]]), 5.0)
    # float32 ray arithmetic: 1.0 or its neighbour below, by CPU (0.99999994 seen here)
    assert abs(hits.distance[0] - 1.0) < 1e-6 and hits.object_id.tolist() == [4], hits
    print("EMBREE-OK", wheel_dir)
    # COLLADA robot meshes: pycollada from the extension's own wheels reads a triangle
    import collada
    assert "site-packages" in collada.__file__ and ".local" in collada.__file__, collada.__file__
    print("COLLADA-OK", collada.__file__)
    # the physics kernels ship compiled (scripts/build_kernels.py): their first load, into the extension's
    # user folder (set at register), compiles nothing; before anything else in the process uses numba
    import numba
    from numba.core import event
    numba_dir = os.path.realpath(os.path.dirname(numba.__file__))
    assert numba_dir.startswith(user_res + os.sep), (numba_dir, user_res)
    compiles = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            compiles.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())
    kernels = importlib.import_module(module + ".sim.kernels")
    cache = os.path.realpath(bpy.utils.extension_path_user(module, path="numba-cache"))
    assert os.path.realpath(kernels.cache_dir()) == cache, (kernels.cache_dir(), cache)
    assert not os.path.exists(kernels.kernel_dir())
    assert os.path.dirname(kernels.shipped()["folder"]) == os.path.join(ext_dir, "sim", "kernels", "prebuilt")
    assert kernels.cache_is_warm()  # the bake will not say "compiling physics kernels"
    kernels.load()
    kernels.load_robots()
    assert compiles == [], compiles
    loaded = [n for _, _, files in os.walk(cache) for n in files if n.endswith(".nbi")]
    assert loaded, os.listdir(cache)
    print("KERNELS-OK", cache, len(loaded))

    # numba + llvmlite come from the bundled wheels, and compile a new function (for the shipped target)
    @numba.njit(cache=False)
    def _tri(n):
        total = 0
        for i in range(n + 1):
            total += i
        return total

    assert _tri(100) == 5050 and compiles == ["_tri"]
    print("NUMBA-OK", numba.__version__, numba_dir)

    addon_utils.disable(module, default_set=True, handle_error=reraise)
    assert module not in prefs.addons, sorted(a.module for a in prefs.addons)
    print("INSTALL-OK", ext_dir)
    """
)


@pytest.fixture(scope="module")
def extension_zip(tmp_path_factory) -> Path:
    """This platform's zip for this Python, shipping the rigid world's and the robots' kernels compiled."""
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    kernels = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "build_kernels.py"), "--out", str(out / "prebuilt"),
         "--parts", "robots"], cwd=REPO_ROOT, env=env, capture_output=True, check=False, text=True, timeout=1800)
    assert kernels.returncode == 0, f"kernel build failed:\n{kernels.stdout}\n{kernels.stderr}"
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--output-dir", str(out), "--platform", "host", "--python", "host",
         "--prebuilt", str(out / "prebuilt")],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    zips = [Path(line) for line in proc.stdout.strip().splitlines()]
    assert len(zips) == 1 and zips[0].is_file(), proc.stdout
    assert zips[0].name == (f"{EXT_ID}-{_manifest()['version']}-{_host_platform().replace('-', '_')}"
                            f"-{_host_python()}.zip")
    return zips[0]


def _manifest() -> dict:
    with open(REPO_ROOT / "blender_manifest.toml", "rb") as fh:
        return tomllib.load(fh)


def _host_python() -> str:
    return f"cp{sys.version_info[0]}{sys.version_info[1]}"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _host_platform() -> str:
    sys.path.insert(0, str(BUILD_SCRIPT.parent))
    try:
        from build_extension import host_platform
    finally:
        sys.path.pop(0)
    return host_platform()


def test_zip_layout(extension_zip: Path) -> None:
    with zipfile.ZipFile(extension_zip) as zf:
        names = zf.namelist()
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode())
    assert "blender_manifest.toml" in names
    assert "__init__.py" in names, "the extension's __init__.py must be at the zip root"
    assert "demo.rscene" in names, "the demo command's scene ships with the extension"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")], names
    # the kernels compiled for this platform and Python, and no other
    shipped = {n.split("/")[3] for n in names if n.startswith("sim/kernels/prebuilt/")}
    assert len(shipped) == 1 and shipped.pop().endswith(
        f"-cpython-{_host_python()[2:]}-{sys.platform}-{platform.machine().lower()}")
    # this platform's wheels only, each where the zip's manifest says
    assert manifest["platforms"] == [_host_platform()]
    wheels = sorted(n for n in names if n.endswith(".whl"))
    assert wheels == sorted(w.removeprefix("./") for w in manifest["wheels"])
    # embreex (lidar), numba + llvmlite (simulation kernels), all for this Python only; pycollada with
    # python-dateutil and six (COLLADA meshes), pure Python for every platform and Python
    assert [w.split("/")[1].split("-")[0] for w in wheels] == ["embreex", "llvmlite", "numba", "pycollada",
                                                                "python_dateutil", "six"], wheels
    assert all(f"-{_host_python()}-" in w or w.endswith("-none-any.whl") for w in wheels), wheels
    # the Blender range is the one that bundles this Python, and this Blender lies inside it
    import bpy
    low = _version(manifest["blender_version_min"])
    high = _version(manifest.get("blender_version_max", "99.0.0"))
    assert low <= tuple(bpy.app.version) < high, (manifest.get("blender_version_min"),
                                                   manifest.get("blender_version_max"), bpy.app.version)


def test_zips_split_by_platform_and_python(tmp_path: Path) -> None:
    """Every platform gets one zip per Python line; each carries only its own Python's wheels, and the
    two Blender ranges meet without overlap (cp311 up to 5.1, cp313 from 5.1)."""
    proc = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--output-dir", str(tmp_path)],
                          cwd=REPO_ROOT, capture_output=True, check=False, text=True, timeout=600)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    zips = [Path(line) for line in proc.stdout.strip().splitlines()]
    source = _manifest()
    assert len(zips) == 2 * len(source["platforms"]), zips
    ranges = {}
    for zip_path in zips:
        plat, py = zip_path.stem.split("-")[-2:]
        with zipfile.ZipFile(zip_path) as zf:
            manifest = tomllib.loads(zf.read("blender_manifest.toml").decode())
            wheels = [n for n in zf.namelist() if n.endswith(".whl")]
        built = [w for w in wheels if not w.endswith("-none-any.whl")]
        assert built and all(f"-{py}-" in w for w in built), (zip_path.name, wheels)
        projects = sorted(w.split("/")[1].split("-")[0] for w in built)
        # numba/llvmlite publish no macos-x64 wheels: that zip runs the numpy simulation backend
        assert projects == (["embreex"] if plat == "macos_x64" else ["embreex", "llvmlite", "numba"])
        assert sorted(w.split("/")[1].split("-")[0] for w in wheels if w not in built) == PURE_WHEELS
        ranges[py] = (manifest["blender_version_min"], manifest.get("blender_version_max"))
    assert ranges == {"cp311": ("4.5.0", "5.1.0"), "cp313": ("5.1.0", None)}


PURE_WHEELS = ["pycollada", "python_dateutil", "six"]


def test_portable_zip_has_no_platforms_and_only_pure_wheels(tmp_path: Path) -> None:
    """``--platform any``: one zip for every other platform (the lidar then falls back to BVHTree, the
    simulation to numpy); the pure-Python COLLADA wheels go everywhere."""
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--output-dir", str(tmp_path), "--platform", "any"],
        cwd=REPO_ROOT, capture_output=True, check=False, text=True, timeout=300)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    zips = [Path(line) for line in proc.stdout.strip().splitlines()]
    assert [z.name for z in zips] == [f"{EXT_ID}-{_manifest()['version']}.zip"]
    with zipfile.ZipFile(zips[0]) as zf:
        names = zf.namelist()
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode())
    assert "__init__.py" in names and "render/caster.py" in names
    wheels = sorted(n for n in names if n.endswith(".whl"))
    assert [w.split("/")[1].split("-")[0] for w in wheels] == PURE_WHEELS, wheels
    assert all(w.endswith("-none-any.whl") for w in wheels)
    assert "platforms" not in manifest and sorted(w.removeprefix("./") for w in manifest["wheels"]) == wheels
    assert _manifest()["wheels"]  # the source manifest does ship wheels


def test_install_and_enable(extension_zip: Path, tmp_path: Path) -> None:
    user_res = tmp_path / "blender-user"
    user_res.mkdir()
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    env = dict(os.environ)
    env["BLENDER_USER_RESOURCES"] = str(user_res)
    env.pop("NUMBA_CACHE_DIR", None)  # the extension chooses its own kernel cache
    proc = subprocess.run(
        [sys.executable, "-I", "-c", INSTALL_CHILD, str(extension_zip), MODULE, EXT_ID],
        cwd=workdir,
        env=env,
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "INSTALL-OK" in proc.stdout and "EMBREE-OK" in proc.stdout \
        and "NUMBA-OK" in proc.stdout and "KERNELS-OK" in proc.stdout and "COLLADA-OK" in proc.stdout, (
        f"install in a fresh Blender failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
