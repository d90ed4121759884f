"""A first compile of the kernels is long work: ``simulate`` reports each function compiled and stops at a cancel
(``kernels.watch``, ``sim.compile_watch``), keeping what compiled.

Truths: the cache files numba writes (a function compiled writes its index file; one loaded from the cache
writes none), and a run that was never cancelled (the same machine code gives the same trajectory). A copy of
the warm cache with two robot kernels' index files removed makes exactly those two compile in a fresh process.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rscene_addon.sim import kernels
from rscene_addon.sim.compile_watch import CompileStatus
from tests.unit.sim.test_articulated import PENDULUM_URDF

ROOT = Path(__file__).resolve().parents[3]
REMOVED = ("articulated.kinematics", "robot_near.near_systems")  # robots.warm_up calls both, in this order


# Simulates the pendulum once with a cancel asked as soon as a function has compiled (when CANCEL is set),
# then once to the end; prints what each run reported, which index files existed after each, and the rod.
CHILD = r"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from rscene_addon.formats import rscene
from rscene_addon.sim import Cancelled, simulate
scene, cache = rscene.read(sys.argv[2]), Path(sys.argv[3])
indexes = lambda: sorted(p.name.split("-")[0] for p in cache.rglob("*.nbi") if p.name.startswith(%r))
out = {}
if os.environ.get("CANCEL"):
    seen = []
    try:
        simulate(scene, 0.5, 30, backend="numba", compile_progress=seen.append, cancel=lambda: bool(seen))
        out["cancelled"] = False
    except Cancelled as exc:
        out["cancelled"] = str(exc)
    out["first"] = [[s.done, s.total] for s in seen]
    out["after_cancel"] = indexes()
seen = []
traj = simulate(scene, 0.5, 30, backend="numba", compile_progress=seen.append)
out["statuses"] = [[s.done, s.total, s.seconds] for s in seen]
out["indexes"] = indexes()
out["rod"] = traj.quaternion[:, list(traj.names).index("/World/Pendulum/rod")].tolist()
print(json.dumps(out))
""" % (REMOVED,)


def _warm_cache_without(tmp: Path) -> Path:
    """A copy of this process's warm kernel folder under ``tmp/cache`` minus the index files of REMOVED."""
    kernels.load()
    kernels.load_robots()
    source = Path(kernels.kernel_dir())
    root = tmp / "cache"
    shutil.copytree(source, root / source.name)
    gone = [p for p in (root / source.name).rglob("*.nbi") if p.name.startswith(REMOVED)]
    assert sorted({p.name.split("-")[0] for p in gone}) == sorted(REMOVED)
    for p in gone:
        p.unlink()
    return root


def _child(tmp: Path, cache: Path, cancel: bool) -> dict:
    (tmp / "pendulum.urdf").write_text(PENDULUM_URDF)
    scene = tmp / "scene.rscene"
    scene.write_text("raisim_engine_scene 2\narticulated_resource pendulum_res pendulum pendulum.urdf\n"
                     "articulated /World/Pendulum pendulum_res 0 0 2 1 0 0 0 true true generalizedCoordinate=0.2\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "RSCENE_"))}
    env.update(NUMBA_CACHE_DIR=str(cache), RSCENE_PREBUILT="0")
    if cancel:
        env["CANCEL"] = "1"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(scene), str(cache)], capture_output=True,
                          text=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")
@pytest.mark.skipif(importlib.util.find_spec("bpy") is not None,
                    reason="two fresh processes that compile: run by the pure environments (the same Pythons)")
def test_a_compile_reports_each_function_and_a_cancel_keeps_what_compiled(tmp_path):
    (tmp_path / "whole").mkdir()
    whole = _child(tmp_path / "whole", _warm_cache_without(tmp_path / "whole"), cancel=False)
    # exactly the two functions without an index file compiled, and each was reported once, in order
    assert whole["indexes"] == sorted(REMOVED)
    assert [s[0] for s in whole["statuses"]] == [1, 2]
    assert all(done <= total for done, total, _ in whole["statuses"])
    assert whole["statuses"][-1][2] > 0

    (tmp_path / "cut").mkdir()
    cut = _child(tmp_path / "cut", _warm_cache_without(tmp_path / "cut"), cancel=True)
    assert cut["cancelled"] and "cancelled" in cut["cancelled"]
    # the cancel came after the first function (kinematics) had compiled: it stays cached, the second never
    # finished; the next run compiles only that one and steps exactly as the run never cancelled
    assert [s[0] for s in cut["first"]] == [1]
    assert cut["after_cancel"] == ["articulated.kinematics"]
    assert [s[0] for s in cut["statuses"]] == [1] and cut["indexes"] == sorted(REMOVED)
    assert cut["rod"] == whole["rod"]


def test_compile_status_estimates_the_time_left_at_the_rate_so_far():
    status = CompileStatus(done=10, total=40, seconds=20.0)  # 2 s a function, 30 to go
    assert status.seconds_left() == pytest.approx(60.0)
    assert "10 of ~40 functions" in status.line() and "~60 s left" in status.line()
    assert CompileStatus(0, 40, 0.0).seconds_left() is None
    assert CompileStatus(45, 40, 9.0).seconds_left() == 0.0  # the estimate's total is an upper bound
