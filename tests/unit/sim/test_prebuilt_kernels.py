"""Kernels compiled ahead of time (``scripts/build_kernels.py``) load in another process, from another folder
and under another module name (as Blender imports the extension: ``bl_ext.user_default.rscene_addon``),
with no compile at all, and step a robot as the numpy reference does.

Truths: numba's own compile events (a cache miss compiles and fires ``numba:compile``; a load from the cache
does not), and the numpy route for the corpus Laikago falling onto a plane (``test_robot_backends``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rscene_addon.sim import kernels
from rscene_addon.sim.kernels import prebuilt
from tests.corpus import require_corpus
from tests.scenes import ground, header
from tests.unit.sim.test_robot_backends import DT, LAIKAGO, _laikagos, _run

ROOT = Path(__file__).resolve().parents[3]
STEPS = 60

# Run in a fresh interpreter that cannot import ``rscene_addon`` by its own name: only the copy installed as
# Blender installs an extension. Prints what numba compiled, the CPU target it used and the robot's state.
CHILD = r"""
import importlib, json, sys
import numpy as np
from numba.core import event
sys.path.insert(0, sys.argv[1])
args = json.loads(sys.argv[2])
P = "bl_ext.user_default.rscene_addon"
kernels = importlib.import_module(P + ".sim.kernels")
rscene = importlib.import_module(P + ".formats.rscene")
urdf = importlib.import_module(P + ".formats.urdf")
sim = importlib.import_module(P + ".sim")
art = importlib.import_module(P + ".sim.articulated")
lc = importlib.import_module(P + ".sim.link_contacts")
msol = importlib.import_module(P + ".sim.multibody_solver")
compiled = []

class Compiles(event.Listener):
    def on_start(self, ev):
        fn = ev.data["dispatcher"].py_func
        compiled.append(f"{fn.__module__}.{fn.__qualname__}")

    def on_end(self, ev):
        pass

event.register("numba:compile", Compiles())
assert importlib.util.find_spec("rscene_addon") is None
warm_before = kernels.cache_is_warm()
world = sim.World.from_scene(rscene.loads(args["scene"]), backend="numba")
s = art.ArticulatedSystem(urdf.read_robot(args["urdf"]), dt=args["dt"], name="laikago0",
                          environment=lc.WorldContacts(world), erp=lc.world_erp(world), backend="numba")
s.set_generalized_coordinate(np.array(args["q"]))
for _ in range(args["steps"]):
    msol.step_systems([s], args["dt"])
    world.step()
import numba
print(json.dumps({"compiled": compiled, "warm_before": warm_before, "cpu": numba.config.CPU_NAME,
                  "shipped": bool(kernels.shipped()), "q": s.q.tolist(), "u": s.u.tolist()}))
"""


def _install_as_blender_does(tmp: Path, shipped: Path) -> Path:
    """A copy of the package at ``tmp/bl_ext/user_default/rscene_addon`` with the built folder in its
    kernels' ``prebuilt``; returns the folder to put on sys.path."""
    package = tmp / "bl_ext" / "user_default" / "rscene_addon"
    shutil.copytree(ROOT / "rscene_addon", package,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "prebuilt"))
    shutil.copytree(shipped, package / "sim" / "kernels" / "prebuilt" / shipped.name)
    return tmp


def _child(path: Path, cache: Path, q0) -> dict:
    scene = "\n".join(header(dt=DT, sleeping=False) + [ground()]) + "\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "RSCENE_PREBUILT"))}
    env["NUMBA_CACHE_DIR"] = str(cache)
    args = {"scene": scene, "urdf": LAIKAGO, "dt": DT, "q": list(q0), "steps": STEPS}
    proc = subprocess.run([sys.executable, "-I", "-c", CHILD, str(path), json.dumps(args)],
                          capture_output=True, text=True, env=env, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")
@pytest.mark.skipif(importlib.util.find_spec("bpy") is not None,
                    reason="a ~2 min compile: run by the pure environments, which have the same Pythons")
def test_shipped_kernels_load_without_a_compile_elsewhere_and_step_like_numpy(tmp_path):
    require_corpus(LAIKAGO)
    build = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_kernels.py"), "--out",
                            str(tmp_path / "built"), "--parts", "robots"],
                           capture_output=True, text=True, timeout=1800, check=False,
                           env={k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")})
    assert build.returncode == 0, build.stderr[-3000:]
    shipped = Path(build.stdout.strip().splitlines()[-1])
    manifest = json.loads((shipped / "manifest.json").read_text())
    assert shipped.name == prebuilt.folder_name(kernels.source_token())
    assert manifest["codegen"][1:] == ["generic", ""] and manifest["package"] == "rscene_addon.sim.kernels"
    assert {"ready", "ready-robots"} <= set(manifest["markers"])

    world, (system,) = _laikagos("numpy")
    q0 = system.q.copy()
    _run(world, [system], STEPS)

    path = _install_as_blender_does(tmp_path / "install", shipped)
    first = _child(path, tmp_path / "user-cache", q0)
    assert first["shipped"] and first["cpu"] == "generic" and first["warm_before"]
    assert first["compiled"] == []  # every kernel the robot step needs came from the shipped files
    q, u = np.array(first["q"]), np.array(first["u"])
    assert np.abs(q - system.q).max() < 1e-4 and np.abs(u - system.u).max() < 1e-2  # as test_robot_backends
    assert np.abs(q - q0).max() > 1e-3  # the robot did fall

    # a shipped folder that lacks one kernel: that one, and only that one, compiles (the check above can fail)
    for index in (path / "bl_ext/user_default/rscene_addon/sim/kernels/prebuilt" / shipped.name / "numba").glob(
            "robot_near.near_systems-*.nbi"):
        index.unlink()
    short = _child(path, tmp_path / "user-cache-2", q0)
    ours = {name for name in short["compiled"] if ".rscene_addon." in name}  # (numba's own overloads compile too)
    assert short["shipped"] and ours == {"bl_ext.user_default.rscene_addon.sim.kernels.robot_near.near_systems"}
    assert short["q"] == first["q"]  # the same machine code, loaded or compiled for the same target


def _build_extension():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_extension
    finally:
        sys.path.pop(0)
    return build_extension


def test_zip_takes_only_its_own_platforms_folders_and_never_stale_ones(tmp_path):
    """``build_extension.py --prebuilt``: a zip gets the folders made for its platform and Python; a folder
    compiled from kernel sources other than the tree's (any file's sha256 differs) stops the build."""
    be = _build_extension()
    source = ROOT / "rscene_addon"
    sources = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
               for p in sorted((source / "sim" / "kernels").glob("*.py"))}
    assert "robot_step.py" in sources
    def made(name, plat, python, srcs):
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / "manifest.json").write_text(json.dumps({"zip": {"platform": plat, "python": python},
                                                                   "sources": srcs}))

    for name, plat, python in (("a", "linux-x64", "cp311"), ("b", "linux-x64", "cp313"), ("c", "windows-x64", "cp311")):
        made(name, plat, python, sources)
    assert be.prebuilt_folders(tmp_path, source, "linux-x64", "cp311") == [tmp_path / "a"]
    assert be.prebuilt_folders(tmp_path, source, "linux-x64", "cp313") == [tmp_path / "b"]
    assert be.prebuilt_folders(tmp_path, source, "windows-x64", "cp311") == [tmp_path / "c"]
    assert be.prebuilt_folders(tmp_path, source, "macos-arm64", "cp311") == []
    stale = dict(sources, **{"robot_step.py": "0" * 64})
    made("b", "linux-x64", "cp313", stale)
    with pytest.raises(be.BuildError, match="other kernel sources"):
        be.prebuilt_folders(tmp_path, source, "linux-x64", "cp313")
