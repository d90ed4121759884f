#!/usr/bin/env python3
"""Piles of every rigid shape: our core against MuJoCo and (under bpy) Blender's Bullet, stepping only.

    .venv/pure/bin/python scripts/bench_sim_shapes.py [--cases capsules,mixed] [--frames 250] [--repeats 1]
    .venv/bpy52/bin/python scripts/bench_sim_shapes.py          # adds Blender's rigid body world
    .venv/bpy52/bin/python scripts/bench_sim_shapes.py --cases spheres --count 500 --frames 100

Cases (dt 1/240, 4 substeps per 60 fps frame, friction 0.8, columns of 4 on a 0.5 m grid dropped from
0.5 m + 0.45 m per layer, random orientations: ``bench_peers.layout``, whose MuJoCo and Blender set-ups
both benchmarks share):
spheres (r 0.15), capsules (r 0.1, cylinder 0.2), mixed (box 0.3, sphere, capsule, cylinder r 0.15 h 0.3 in
turn), hulls (a 24-point hull of an ellipsoid, from an OBJ), boxes on a 65x65 height field (gentle waves).
Each engine's world is built before the clock starts; the times are CPU seconds of this process
(``time.process_time``) beside wall seconds. Final heights: mean z of the bodies' centres.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rscene-bench-user-"))

import bench_peers as peers  # noqa: E402
from bench_peers import DT, FPS, SUBSTEPS, layout  # noqa: E402
from tests.scenes import ground, header, obj  # noqa: E402

CASES = ("spheres", "capsules", "mixed", "hulls", "heightfield")
N = {"spheres": 100, "capsules": 100, "mixed": 100, "hulls": 50, "heightfield": 100}
HF_N, HF_SIZE = 65, 8.0


def hull_points(seed: int = 3) -> np.ndarray:
    """24 points on an ellipsoid of semi-axes 0.18, 0.14, 0.11 (a pebble)."""
    rng = np.random.default_rng(seed)
    d = rng.normal(size=(24, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return d * np.array([0.18, 0.14, 0.11])


def heights() -> np.ndarray:
    x = np.linspace(-HF_SIZE / 2, HF_SIZE / 2, HF_N)
    X, Y = np.meshgrid(x, x)
    return 0.08 * np.sin(1.3 * X) * np.cos(1.1 * Y)  # [y, x]


def shapes(case: str, n: int) -> list[str]:
    """The shape kind of each body."""
    if case == "mixed":
        return [("box", "sphere", "capsule", "cylinder")[i % 4] for i in range(n)]
    return [{"spheres": "sphere", "capsules": "capsule", "hulls": "mesh", "heightfield": "box"}[case]] * n


def scene_text(case: str, n: int, folder: str) -> str:
    pos, quat = layout(n)
    lines = header(dt=DT, sleeping=True)
    if case == "heightfield":
        hs = ",".join(repr(float(v)) for v in heights().ravel())
        lines.append(f"terrain_region /World/Terrain {HF_N} {HF_N} {HF_SIZE} {HF_SIZE} 0 0 0 heights={hs}")
        pos[:, 2] += 0.1
    else:
        lines.append(ground())
    mesh = os.path.join(folder, "pebble.obj")
    with open(mesh, "w") as fh:
        fh.writelines(f"v {p[0]} {p[1]} {p[2]}\n" for p in hull_points())
    for i, kind in enumerate(shapes(case, n)):
        p, q = pos[i], quat[i]
        if kind == "box":
            lines.append(obj(f"/World/B{i}", "box", pos=p, quat=q, scale=(0.3,) * 3))
        elif kind == "sphere":
            lines.append(obj(f"/World/B{i}", "sphere", pos=p, quat=q, radius=0.15))
        elif kind == "capsule":
            lines.append(obj(f"/World/B{i}", "capsule", pos=p, quat=q, radius=0.1, height=0.2))
        elif kind == "cylinder":
            lines.append(obj(f"/World/B{i}", "cylinder", pos=p, quat=q, radius=0.15, height=0.3))
        else:
            lines.append(obj(f"/World/B{i}", "mesh", pos=p, quat=q, mesh=mesh))
    return "\n".join(lines) + "\n"


def run_ours(case: str, n: int, frames: int, backend: str):
    from rscene_addon.formats import rscene
    from rscene_addon.sim import World, kernels
    if backend == "numba":
        kernels.load()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "pile.rscene")
        with open(path, "w") as fh:
            fh.write(scene_text(case, n, folder))
        world = World.from_scene(rscene.read(path), dt=DT, backend=backend)
    steps = (frames - 1) * SUBSTEPS
    w0, c0 = time.perf_counter(), time.process_time()
    worst = 0.0
    for _ in range(steps):
        t = time.perf_counter()
        world.step()
        worst = max(worst, time.perf_counter() - t)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    z = world.state.position[world.dynamic, 2]
    return wall, cpu, float(z.mean()), f"worst step {worst * 1e3:.1f} ms"


def run_mujoco(case: str, n: int, frames: int):
    pos, quat = layout(n)
    if case == "heightfield":
        pos[:, 2] += 0.1
    hf = (heights(), HF_SIZE) if case == "heightfield" else None
    wall, cpu, z, _ = peers.run_mujoco(shapes(case, n), pos, quat, frames, hull=hull_points(), heightfield=hf)
    return wall, cpu, float(z.mean()), ""


def run_blender(case: str, n: int, frames: int):
    if case == "heightfield":
        return None  # Blender has no height-field shape (a mesh shape is another test)
    wall, cpu, z, _ = peers.run_blender(shapes(case, n), *layout(n), frames, hull=hull_points())
    return wall, cpu, float(z.mean()), ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--frames", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--backends", default="numba")
    ap.add_argument("--count", type=int, help="bodies per pile instead of each case's default")
    args = ap.parse_args(argv)
    try:
        import bpy  # noqa: F401
        blender = True
    except ImportError:
        blender = False
    try:
        import mujoco  # noqa: F401
        have_mj = True
    except ImportError:
        have_mj = False
    print(f"{args.frames} frames at dt 1/{FPS * SUBSTEPS}, CPU seconds (wall in brackets), medians of "
          f"{args.repeats}; Blender {'on' if blender else 'not importable here'}, MuJoCo "
          f"{'on' if have_mj else 'not importable'}")
    for case in args.cases.split(","):
        n = args.count or N[case]
        res: dict[str, list] = {}
        for _ in range(args.repeats):
            runs = [(b, lambda b=b: run_ours(case, n, args.frames, b)) for b in args.backends.split(",")]
            if have_mj:
                runs.append(("MuJoCo", lambda: run_mujoco(case, n, args.frames)))
            if blender:
                runs.append(("Blender", lambda: run_blender(case, n, args.frames)))
            for name, fn in runs:
                r = fn()
                if r is not None:
                    res.setdefault(name, []).append(r)
        med = {k: (float(np.median([r[0] for r in v])), float(np.median([r[1] for r in v])), v[-1][2], v[-1][3])
               for k, v in res.items()}
        line = [f"{case} (N={n}):"]
        for k, (wall, cpu, z, extra) in med.items():
            line.append(f"  {k:8s} {cpu:7.2f} s CPU ({wall:6.2f} wall)  mean z {z:.3f} {extra}")
        for b in args.backends.split(","):
            for peer in ("Blender", "MuJoCo"):
                if peer in med and b in med:
                    line.append(f"  ours[{b}]/{peer} {med[b][1] / med[peer][1]:.2f}x CPU "
                                f"({med[b][0] / med[peer][0]:.2f}x wall), z diff {med[b][2] - med[peer][2]:+.3f} m")
        print("\n".join(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
