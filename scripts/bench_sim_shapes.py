#!/usr/bin/env python3
"""Piles of every rigid shape: our core against MuJoCo and (under bpy) Blender's Bullet, stepping only.

    .venv/pure/bin/python scripts/bench_sim_shapes.py [--cases capsules,mixed] [--frames 250] [--repeats 1]
    .venv/bpy52/bin/python scripts/bench_sim_shapes.py          # adds Blender's rigid body world

Cases (dt 1/240, 4 substeps per 60 fps frame, friction 0.8, columns of 4 on a 0.5 m grid dropped from
0.5 m + 0.45 m per layer, random orientations as ``bench_sim_vs_blender.layout``):
spheres (r 0.15), capsules (r 0.1, cylinder 0.2), mixed (box 0.3, sphere, capsule, cylinder r 0.15 h 0.3 in
turn), hulls (a 24-point hull of an ellipsoid, from an OBJ), boxes on a 65x65 height field (gentle waves).
Each engine's world is built before the clock starts; the times are CPU seconds of this process
(``time.process_time``) beside wall seconds. Final heights: mean z of the bodies' centres.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from tests.scenes import ground, header, obj  # noqa: E402

FPS, SUBSTEPS = 60, 4
DT = 1.0 / (FPS * SUBSTEPS)
CASES = ("spheres", "capsules", "mixed", "hulls", "heightfield")
N = {"spheres": 100, "capsules": 100, "mixed": 100, "hulls": 50, "heightfield": 100}
HF_N, HF_SIZE = 65, 8.0


def layout(n: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    side = int(math.ceil(math.sqrt(math.ceil(n / 4))))
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    pos = np.zeros((n, 3))
    for i in range(n):
        c, layer = divmod(i, 4)
        pos[i] = ((c % side - (side - 1) / 2) * 0.5 + rng.uniform(-0.05, 0.05),
                  (c // side - (side - 1) / 2) * 0.5 + rng.uniform(-0.05, 0.05), 0.5 + 0.45 * layer)
    return pos, quat


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
    import mujoco
    pos, quat = layout(n)
    if case == "heightfield":
        pos[:, 2] += 0.1
    geoms = {"box": '<geom type="box" size="0.15 0.15 0.15" mass="1" friction="0.8"/>',
             "sphere": '<geom type="sphere" size="0.15" mass="1" friction="0.8"/>',
             "capsule": '<geom type="capsule" size="0.1 0.1" mass="1" friction="0.8"/>',
             "cylinder": '<geom type="cylinder" size="0.15 0.15" mass="1" friction="0.8"/>',
             "mesh": '<geom type="mesh" mesh="pebble" mass="1" friction="0.8"/>'}
    bodies = "".join(f'<body pos="{p[0]} {p[1]} {p[2]}" quat="{q[0]} {q[1]} {q[2]} {q[3]}"><freejoint/>'
                     f'{geoms[k]}</body>' for p, q, k in zip(pos, quat, shapes(case, n)))
    verts = " ".join(f"{v:.9g}" for v in hull_points().ravel())
    asset = f'<mesh name="pebble" vertex="{verts}"/>'
    if case == "heightfield":
        h = heights()
        lo, hi = float(h.min()), float(h.max())
        data = " ".join(f"{(v - lo) / (hi - lo):.9g}" for v in h.ravel())
        asset += (f'<hfield name="terrain" nrow="{HF_N}" ncol="{HF_N}" size="{HF_SIZE / 2} {HF_SIZE / 2} '
                  f'{hi - lo} 0.1" elevation="{data}"/>')
        floor = f'<geom type="hfield" hfield="terrain" pos="0 0 {lo}" friction="0.8"/>'
    else:
        floor = '<geom type="plane" size="20 20 0.1" friction="0.8"/>'
    xml = (f'<mujoco><option timestep="{DT}"/><asset>{asset}</asset><worldbody>{floor}{bodies}'
           f'</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range((frames - 1) * SUBSTEPS):
        mujoco.mj_step(model, data)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return wall, cpu, float(data.xpos[1:, 2].mean()), ""


def run_blender(case: str, n: int, frames: int):
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = FPS
    scene.frame_start, scene.frame_end = 1, frames
    bpy.ops.rigidbody.world_add()
    rbw = scene.rigidbody_world
    rbw.collection = bpy.data.collections.new("RigidBodyWorld")
    rbw.substeps_per_frame = SUBSTEPS
    rbw.point_cache.frame_start, rbw.point_cache.frame_end = 1, frames
    pos, quat = layout(n)
    if case == "heightfield":
        return None  # Blender has no height-field shape (a mesh shape is another test)

    def mesh_of(name, verts, faces=()):
        me = bpy.data.meshes.new(name)
        me.from_pydata([tuple(v) for v in verts], [], list(faces))
        me.update()
        return me

    cube = mesh_of("cube", [(x, y, z) for x in (-.5, .5) for y in (-.5, .5) for z in (-.5, .5)],
                   [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    pebble = mesh_of("pebble", hull_points())
    ground_ob = bpy.data.objects.new("Ground", cube)
    ground_ob.scale = (40.0, 40.0, 1.0)
    ground_ob.location = (0.0, 0.0, -0.5)
    obs = [ground_ob]
    kinds = shapes(case, n)
    for i, kind in enumerate(kinds):
        ob = bpy.data.objects.new(f"B{i}", pebble if kind == "mesh" else cube)
        ob.location = pos[i]
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = quat[i]
        # Bullet sizes its primitives from the object's bounds: a unit cube scaled to the shape's box
        ob.scale = {"box": (0.3,) * 3, "sphere": (0.3,) * 3, "capsule": (0.2, 0.2, 0.4),
                    "cylinder": (0.3, 0.3, 0.3), "mesh": (1, 1, 1)}[kind]
        obs.append(ob)
    for ob in obs:
        scene.collection.objects.link(ob)
        rbw.collection.objects.link(ob)
    bpy.context.view_layer.update()
    ground_ob.rigid_body.type = "PASSIVE"
    ground_ob.rigid_body.collision_shape = "BOX"
    for ob, kind in zip(obs[1:], kinds):
        ob.rigid_body.collision_shape = {"box": "BOX", "sphere": "SPHERE", "capsule": "CAPSULE",
                                         "cylinder": "CYLINDER", "mesh": "CONVEX_HULL"}[kind]
        ob.rigid_body.mass = 1.0
    for ob in obs:
        ob.rigid_body.friction = 0.8
        ob.rigid_body.restitution = 0.0
    scene.frame_set(1)
    w0, c0 = time.perf_counter(), time.process_time()
    for f in range(1, frames + 1):
        scene.frame_set(f)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return wall, cpu, float(np.mean([ob.matrix_world.translation.z for ob in obs[1:]])), ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--frames", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--backends", default="numba")
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
        n = N[case]
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
