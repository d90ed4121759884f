#!/usr/bin/env python3
"""Cloth draping over a ball: our XPBD cloth against Blender's cloth modifier, stepping only.

    .venv/bpy52/bin/python scripts/bench_cloth.py [--sides 21,41] [--seconds 3] [--repeats 1]
    .venv/pure/bin/python scripts/bench_cloth.py      # ours alone (bpy not importable)

The same scene in both: a 1 m square sheet of ``side`` x ``side`` vertices (21: 441, 41: 1,681), 0.2 kg,
flat at z = 0.8 m, falls onto a static ball (r 0.3 m, centre (0, 0, 0.3)) resting on the ground plane.
Both take 240 solver steps per simulated second: ours a world step of 1/60 s with 4 cloth substeps
(``ITERATIONS`` XPBD iterations each), Blender 60 fps at quality 4; both collide at 0.01 m from the ball
(ours: collision radius 0.01; Blender: cloth distance 0.009 + the collider's outer thickness 0.001).
Blender's sphere is a UV sphere of 64 x 32 segments (its collisions are against triangles). Each engine's
world is built before the clock starts; times are CPU seconds of this process (``time.process_time``) beside
wall seconds, and the ratio is ours / Blender per simulated second.

The outcome, both engines: height of the vertex nearest the ball's top axis (at rest it sits at r + 0.01 =
0.61 m), the closest vertex to the ball's centre (nothing inside r), the largest edge stretch over the rest
length, and how fast the sheet still moves at the end (mean vertex speed over the last 0.1 s).
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
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rscene-bench-user-"))

from tests.scenes import ground, header, obj  # noqa: E402

FPS, STEPS = 60, 4  # frames (world steps) per second, solver steps per frame
ITERATIONS = 10  # XPBD iterations a substep (--iterations)
SIZE, MASS, DROP = 1.0, 0.2, 0.8
BALL_R, BALL_Z = 0.3, 0.3
CONTACT = 0.01  # vertex-to-surface distance at rest, both engines
SETTLE_S = 0.1  # the end window whose motion says "at rest"
# Blender's cloth as it comes (a vertex weighs 0.3 kg, air damping 1: the 441-vertex sheet is 132 kg) and with
# our sheet's 0.2 kg and no air damping (its default stiffness then holds the sheet nearly flat: cardboard)
BLENDER = ("defaults", "mass")


def scene_text(side: int, iterations: int = ITERATIONS) -> str:
    spacing = SIZE / (side - 1)
    cloth = (f"deformable /World/Sheet cloth - 0 0 {DROP} 1 0 0 0 1 1 1 totalMass={MASS} damping=0.1 "
             f"collisionRadius={CONTACT} iterations={iterations} substeps={STEPS} particleSpacing={spacing!r}")
    ball = obj("/World/Ball", "sphere", pos=(0, 0, BALL_Z), radius=BALL_R, mode="static")
    return "\n".join(header(dt=1.0 / FPS) + [ground(), ball, cloth]) + "\n"


def grid_edges(side: int) -> np.ndarray:
    """The structural edges (E, 2) of the vertex grid (row-major, as both engines number it)."""
    i = np.arange(side * side).reshape(side, side)
    return np.concatenate([np.stack((i[:, :-1].ravel(), i[:, 1:].ravel()), 1),
                           np.stack((i[:-1, :].ravel(), i[1:, :].ravel()), 1)])


def outcome(x: np.ndarray, x_before: np.ndarray, side: int) -> dict:
    """Facts about the final vertices x (V, 3); x_before: SETTLE_S earlier."""
    centre = np.array([0.0, 0.0, BALL_Z])
    top = int(np.argmin(np.hypot(x[:, 0], x[:, 1])))
    e = grid_edges(side)
    stretch = np.linalg.norm(x[e[:, 0]] - x[e[:, 1]], axis=1) / (SIZE / (side - 1))
    return dict(top_z=float(x[top, 2]), min_d=float(np.linalg.norm(x - centre, axis=1).min()),
                stretch=float(stretch.max()), speed=float(np.linalg.norm(x - x_before, axis=1).mean() / SETTLE_S),
                low_z=float(x[:, 2].min()))


def run_ours(side: int, seconds: float, backend: str, iterations: int = ITERATIONS):
    from rscene_addon.formats import rscene
    from rscene_addon.sim import World
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "cloth.rscene")
        with open(path, "w") as fh:
            fh.write(scene_text(side, iterations))
        world = World.from_scene(rscene.read(path), backend=backend)
    assert len(world.state.cloth[0]) == side * side
    frames = int(round(seconds * FPS))
    keep = int(round(SETTLE_S * FPS))
    w0, c0 = time.perf_counter(), time.process_time()
    for f in range(frames):
        if f == frames - keep:
            before = world.state.cloth[0].copy()
        world.step()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return wall, cpu, outcome(world.state.cloth[0], before, side)


def run_blender(side: int, seconds: float, variant: str):
    """Blender's cloth modifier (its defaults but for the settings the module docstring names; ``variant``
    ``mass``: also our sheet's mass and no air damping) stepped by ``scene.frame_set(f)`` from frame 1
    through the simulated time."""
    import bmesh
    import bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    frames = int(round(seconds * FPS))
    scene.render.fps = FPS
    scene.frame_start, scene.frame_end = 1, frames + 1

    def add(name, bm):
        me = bpy.data.meshes.new(name)
        bm.to_mesh(me)
        bm.free()
        ob = bpy.data.objects.new(name, me)
        scene.collection.objects.link(ob)
        return ob

    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=64, v_segments=32, radius=BALL_R)
    ball = add("Ball", bm)
    ball.location = (0.0, 0.0, BALL_Z)
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=side - 1, y_segments=side - 1, size=SIZE / 2)
    sheet = add("Sheet", bm)
    sheet.location = (0.0, 0.0, DROP)
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=1, y_segments=1, size=20.0)
    floor = add("Ground", bm)
    for ob in (ball, floor):
        ob.modifiers.new("Collision", "COLLISION")
        ob.collision.thickness_outer = 0.001
    mod = sheet.modifiers.new("Cloth", "CLOTH")
    st = mod.settings
    st.quality = STEPS
    if variant == "mass":
        st.mass = MASS / (side * side)  # per vertex
        st.air_damping = 0.0
    mod.collision_settings.distance_min = CONTACT - 0.001
    mod.collision_settings.use_self_collision = False
    mod.point_cache.frame_start, mod.point_cache.frame_end = 1, frames + 1
    # our numbering (rows of y, columns of x) from the flat sheet's positions
    rest = np.empty(side * side * 3)
    sheet.data.vertices.foreach_get("co", rest)
    rest = rest.reshape(-1, 3)
    order = np.lexsort((np.round(rest[:, 0], 6), np.round(rest[:, 1], 6)))
    scene.frame_set(1)
    w0, c0 = time.perf_counter(), time.process_time()
    for f in range(2, frames + 2):
        scene.frame_set(f)
        if f == frames + 1 - int(round(SETTLE_S * FPS)):
            before = _world_verts(sheet)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    x = _world_verts(sheet)
    return wall, cpu, outcome(x[order], before[order], side)


def _world_verts(ob) -> np.ndarray:
    import bpy
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = ev.to_mesh()
    co = np.empty(len(me.vertices) * 3)
    me.vertices.foreach_get("co", co)
    ev.to_mesh_clear()
    co = co.reshape(-1, 3)
    M = np.array(ob.matrix_world)
    return co @ M[:3, :3].T + M[:3, 3]


def _facts(o: dict) -> str:
    return (f"top {o['top_z']:.4f} m (rest {BALL_Z + BALL_R + CONTACT:.2f}), nearest centre {o['min_d']:.4f} m "
            f"(r {BALL_R}), max stretch {o['stretch']:.3f}, lowest z {o['low_z']:.3f}, "
            f"end speed {o['speed'] * 1e3:.1f} mm/s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sides", default="21,41")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--backends", default="numba")
    ap.add_argument("--iterations", type=int, default=ITERATIONS)
    ap.add_argument("--no-blender", action="store_true", help="ours alone, even where bpy imports")
    args = ap.parse_args(argv)
    try:
        import bpy  # noqa: F401
        blender = not args.no_blender
    except ImportError:
        blender = False
    backends = [b for b in args.backends.split(",") if b]
    if "numba" in backends:
        from rscene_addon.sim import kernels
        c0, w0 = time.process_time(), time.perf_counter()
        kernels.load_cloth()
        print(f"cloth kernels load (compile when cold): {time.process_time() - c0:.1f} s CPU, "
              f"{time.perf_counter() - w0:.1f} s wall")
    print(f"{args.seconds:g} s simulated, {FPS * STEPS} solver steps/s, ours {args.iterations} iterations; CPU seconds "
          f"(wall in brackets), medians of {args.repeats}; Blender {'on' if blender else 'not importable here'}")
    for side in (int(s) for s in args.sides.split(",")):
        res: dict[str, list] = {}
        for _ in range(args.repeats):
            runs = [(b, lambda b=b: run_ours(side, args.seconds, b, args.iterations)) for b in backends]
            if blender:
                runs += [(f"Blender/{v}", lambda v=v: run_blender(side, args.seconds, v)) for v in BLENDER]
            for name, fn in runs:
                res.setdefault(name, []).append(fn())
        med = {k: (float(np.median([r[0] for r in v])), float(np.median([r[1] for r in v])), v[-1][2])
               for k, v in res.items()}
        lines = [f"cloth {side}x{side} = {side * side} vertices:"]
        for k, (wall, cpu, o) in med.items():
            lines.append(f"  {k:15s} {cpu / args.seconds:7.3f} s CPU per simulated s "
                         f"({wall / args.seconds:6.3f} wall)  {_facts(o)}")
        for b in backends:
            for v in BLENDER:
                p = f"Blender/{v}"
                if p in med and b in med:
                    lines.append(f"  ours[{b}]/{p} {med[b][1] / med[p][1]:.3f}x CPU "
                                 f"({med[b][0] / med[p][0]:.3f}x wall) per simulated second")
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
