#!/usr/bin/env python3
"""Import cost of RaiSim's own robots (corpus robots/: Laikago, ANYmal C) against Blender's OBJ importer.

    .venv/bpy52/bin/python scripts/bench_robot_import.py [--repeats 3]

Ours: ``File > Import > Robot`` (``import_scene.rscene_robot``) of the URDF, every COLLADA visual read by
pycollada and built through ``foreach_set`` with UVs, normals and textured materials, links posed. The peer:
Blender's own OBJ importer (``wm.obj_import``, C++) on the same triangles, written once as one OBJ file per
.dae beforehand (positions, UVs, normals; no materials). Each is run in a fresh empty file, best of
``--repeats``; CPU time (process time of this process) beside wall, and the ratio of each.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import bpy
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rscene_addon.formats.robot_files import read_robot_file  # noqa: E402
from rscene_addon.scene_geometry.collada import read_collada  # noqa: E402

RSC = REPO.parent / "shared" / "corpus" / "robots" / "raisimTech-raisim2Lib" / "rsc"
ROBOTS = {"laikago": RSC / "laikago" / "laikago.urdf", "anymal_c": RSC / "anymal_c" / "urdf" / "anymal.urdf"}


def _dae_files(urdf: Path) -> list[str]:
    robot = read_robot_file(str(urdf))
    return [s.geometry.path for link in robot.links.values() for s in link.visuals
            if s.geometry.kind == "mesh" and s.geometry.path.endswith(".dae") and os.path.isfile(s.geometry.path)]


def _write_obj(mesh, path: str) -> None:
    tri = mesh.triangles
    lines = ["v %.7g %.7g %.7g" % tuple(v) for v in mesh.vertices]
    corners = np.arange(tri.size).reshape(-1, 3) + 1
    if mesh.uvs is not None:
        lines += ["vt %.7g %.7g" % tuple(uv) for uv in mesh.uvs.reshape(-1, 2)]
    if mesh.normals is not None:
        lines += ["vn %.5g %.5g %.5g" % tuple(n) for n in mesh.normals.reshape(-1, 3)]
    for t, c in zip(tri + 1, corners):
        lines.append("f " + " ".join(f"{v}/{k}/{k}" for v, k in zip(t, c)))
    Path(path).write_text("\n".join(lines) + "\n")


def _timed(fn) -> tuple[float, float]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.process_time() - c, time.perf_counter() - w


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import rscene_addon
    rscene_addon.register()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, urdf in ROBOTS.items():
                files = _dae_files(urdf)
                meshes = {f: read_collada(f) for f in set(files)}
                objs = []
                for f in files:   # one OBJ per visual, as our importer makes one instance per visual
                    obj = os.path.join(tmp, f"{name}_{len(objs)}.obj")
                    _write_obj(meshes[f], obj)
                    objs.append(obj)
                triangles = sum(len(meshes[f].triangles) for f in files)

                def ours(urdf=urdf):
                    assert bpy.ops.import_scene.rscene_robot(filepath=str(urdf)) == {"FINISHED"}

                def peer(objs=objs):
                    for obj in objs:
                        bpy.ops.wm.obj_import(filepath=obj)

                runs_ours = [_timed(ours) for _ in range(args.repeats)]
                runs_peer = [_timed(peer) for _ in range(args.repeats)]
                (oc, ow), (pc, pw) = min(runs_ours), min(runs_peer)
                print(f"{name}: {len(files)} COLLADA visuals, {triangles} triangles ({len(meshes)} distinct files)")
                print(f"  ours (URDF + COLLADA, textured):  CPU {oc:6.3f} s  wall {ow:6.3f} s")
                print(f"  Blender OBJ import, same tris:    CPU {pc:6.3f} s  wall {pw:6.3f} s")
                print(f"  ratio ours/Blender:               CPU {oc / pc:5.2f}x   wall {ow / pw:5.2f}x")
    finally:
        rscene_addon.unregister()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
