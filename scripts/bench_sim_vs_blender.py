#!/usr/bin/env python3
"""Our rigid-body core (both backends) against Blender's rigid body world (Bullet) and, when importable, MuJoCo.

    .venv/bpy52/bin/python scripts/bench_sim_vs_blender.py [--big-frames 40] [--skip-big] [--backends numba,numpy]

0. The compiled backend's JIT cost: a fresh process compiles the kernels into an empty cache (first-ever
   compile), then a second fresh process loads them from that cache (warm start).

Scene: N cubes (0.3 m, 1 kg, random orientations) in columns of 4 on a 0.5 m grid, dropped from
0.5 m + 0.45 m per layer onto a ground plane, so they tumble into a pile. Time step 1/240 s everywhere
(4 substeps per 60 fps frame); solver iterations: each engine's default (ours 80 in the record, at most
28 velocity sweeps + tolerance, Blender 10, MuJoCo 100 + tolerance) - so this compares the tools as
shipped, not per iteration.

Each engine is timed stepping its world, built before the clock starts (Blender's rigid body world at
frame 1, MuJoCo's compiled model, our ``World``); our World build is timed apart and printed beside it,
with the ratios it would give if counted.

1. N = 100 for 250 frames at 60 fps: our ``simulate`` (given the built World), Blender (rigid body world, point cache 1..250,
   stepped by ``scene.frame_set(f)``), MuJoCo when ``import mujoco`` works (same cubes, masses,
   friction 0.8 and time step; its default solver), else skipped. Then ours again with the record's
   ``iterations`` at Blender's default of 10 (at most 10 velocity sweeps, like Bullet's 10 iterations):
   the cost per unit of solver work, apart from how many sweeps each engine does by default.
2. N = 1000 for fewer frames (``--big-frames``, default 40, printed) to stay within a few minutes on two
   cores; growth 1000/100 is per frame against the 100-cube scene over the *same* first frames.
3. Writing keys: the 100 x 250 trajectory baked by ``rscene_addon.blender.bake.bake_trajectory`` into
   the scene imported by ``import_scene_file``, against a raw ``keyframe_points.add`` + ``foreach_set``
   of the same 7 channels on the same objects; three interleaved repeats, the best of each (the first
   calls are printed too).
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
from bench_peers import FPS, LAYERS, SUBSTEPS, layout, mujoco_module  # noqa: E402
from rscene_addon.sim import simulate  # noqa: E402
from tests.scenes import ground, header, obj  # noqa: E402

SIZE = peers.BOX
REPEATS = 3  # key-writing measurements
BLENDER_ITERATIONS = 10  # RigidBodyWorld.solver_iterations default


def scene_text(n: int, iterations: int = 80) -> str:
    pos, quat = layout(n)
    lines = header(dt=1.0 / (FPS * SUBSTEPS), sleeping=True, iterations=iterations) + [ground()]
    lines += [obj(f"/World/Cube{i}", "box", pos=pos[i], quat=quat[i], scale=(SIZE,) * 3) for i in range(n)]
    return "\n".join(lines) + "\n"


# -- our core ------------------------------------------------------------------------------------------------

def run_ours(n: int, frames: int, iterations: int = 80, backend: str = "numpy"):
    """(seconds stepping and recording, seconds building the World from the parsed scene, trajectory).

    The World is built before the clock starts, as Blender's rigid body world (built at frame 1) and
    MuJoCo's compiled model are: the timed part is the same work in all three, stepping and keeping the
    poses of every frame. The build is timed apart and reported beside it."""
    from rscene_addon.formats import rscene
    from rscene_addon.sim import World, kernels
    if backend == "numba":
        kernels.load()  # compiled or loaded from the cache before timing (measured apart: jit_cost)
    scene = rscene.loads(scene_text(n, iterations))
    t0 = time.perf_counter()
    world = World.from_scene(scene, dt=1.0 / (FPS * SUBSTEPS), backend=backend)
    t1 = time.perf_counter()
    tr = simulate(scene, (frames - 1) / FPS, FPS, substeps=SUBSTEPS, world=world)
    return time.perf_counter() - t1, t1 - t0, tr


def jit_cost():
    """Seconds to compile the kernels into an empty cache, and to load them from it, in fresh processes."""
    import subprocess
    code = ("import time; t0 = time.perf_counter(); from rscene_addon.sim import kernels; kernels.load(); "
            "print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT)
        out = []
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            out.append(float(res.stdout.strip().splitlines()[-1]))
    return out


def outcome(tr) -> str:
    """Final pile heights and bodies through the floor (a cube's centre below 0.1 m: half its size is
    0.15 m)."""
    z = tr.position[-1, :, 2]
    return f"final z {z.min():.3f}..{z.max():.3f} m, mean {z.mean():.3f}, through the floor {(z < 0.1).sum()}"


# -- the peers (bench_peers: the set-up shared with bench_sim_shapes) ---------------------------------------------

def run_blender(n: int, frames: int):
    wall, _, z, info = peers.run_blender(["box"] * n, *layout(n), frames)
    return wall, f"{info}, final z range {z.min():.3f}..{z.max():.3f} m"


def run_mujoco(mujoco, n: int, frames: int):
    wall, _, z, info = peers.run_mujoco(["box"] * n, *layout(n), frames)
    return wall, f"{info}, final z range {z.min():.3f}..{z.max():.3f} m"


# -- keyframe writing ------------------------------------------------------------------------------------------

def bench_bake(tr, n: int):
    import bpy
    import rscene_addon
    from rscene_addon.blender import bake, scene_import
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not hasattr(bpy.types.Object, "rscene"):
        rscene_addon.register()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pile.rscene")
        with open(path, "w") as fh:
            fh.write(scene_text(n))
        scene_import.import_scene_file(path, bpy.context.scene)
    scene = bpy.context.scene
    objects = bake.nodes_by_path(scene)
    frames = 1 + np.arange(len(tr.time), dtype=np.float32)
    pos = np.asarray(tr.position, dtype=np.float32)
    quat = np.asarray(tr.quaternion, dtype=np.float32)
    co = np.empty(2 * len(frames), dtype=np.float32)
    co[0::2] = frames
    raw_obs = [(objects[str(name)], i) for i, name in enumerate(tr.names) if str(name) in objects]

    def raw():
        for ob, i in raw_obs:
            ob.rotation_mode = "QUATERNION"
            ob.animation_data_create()
            action = bpy.data.actions.new(f"{ob.name} raw")
            ob.animation_data.action = action
            for data_path, values in (("location", pos[:, i]), ("rotation_quaternion", quat[:, i])):
                for axis in range(values.shape[1]):
                    fc = action.fcurve_ensure_for_datablock(ob, data_path, index=axis)
                    fc.keyframe_points.add(len(frames))
                    co[1::2] = values[:, axis]
                    fc.keyframe_points.foreach_set("co", co)
                    fc.update()

    def drop_raw():
        for ob, _ in raw_obs:
            action = ob.animation_data.action
            ob.animation_data.action = None
            bpy.data.actions.remove(action)

    # interleaved repeats, best of each: the first call of either pays one-time costs (imports, caches)
    t_ours, t_raw = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        baked = bake.bake_trajectory(scene, tr)
        t_ours.append(time.perf_counter() - t0)
        bake.clear_bake(scene)
        t0 = time.perf_counter()
        raw()
        t_raw.append(time.perf_counter() - t0)
        drop_raw()
    if hasattr(bpy.types.Object, "rscene"):
        rscene_addon.unregister()  # bpy 4.5 hangs at exit with add-on classes registered
    return baked, len(raw_obs), t_ours, t_raw


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=250)
    ap.add_argument("--big", type=int, default=1000)
    ap.add_argument("--big-frames", type=int, default=40)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--backends", default="numba,numpy", help="ours: comma-separated backends (numba, numpy)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each engine per scene, in turn; medians")
    args = ap.parse_args(argv)
    import bpy
    from rscene_addon.sim import kernels
    backends = [b for b in args.backends.split(",") if b]
    if "numba" in backends and not kernels.numba_available():
        print("numba does not import here: numba backend skipped")
        backends.remove("numba")
    mj = mujoco_module()
    print(f"Blender {bpy.app.version_string}, numpy {np.__version__}, CPUs {os.cpu_count()}, "
          f"MuJoCo {'%s' % mj.__version__ if mj else 'not importable (skipped)'}")
    print(f"scene: N cubes {SIZE} m in columns of {LAYERS}, dt 1/{FPS * SUBSTEPS} s, {FPS} fps")
    if "numba" in backends:
        cold, warm = jit_cost()
        print(f"numba kernels: first-ever compile (empty cache) {cold:.2f} s, warm start (cache hit) {warm:.2f} s "
              f"(fresh processes, import included)", flush=True)

    def row(label, n, frames):
        # the engines in turn, --repeats times; the median time of each (a busy machine's drift hits all)
        times = {"Blender": [], "MuJoCo": [], **{b: [] for b in backends}, **{(b, "build"): [] for b in backends}}
        trs = {}
        for _ in range(args.repeats):
            t, bl_info = run_blender(n, frames)
            times["Blender"].append(t)
            if mj:
                t, mj_info = run_mujoco(mj, n, frames)
                times["MuJoCo"].append(t)
            for backend in backends:
                t, t_build, trs[backend] = run_ours(n, frames, backend=backend)
                times[backend].append(t)
                times[(backend, "build")].append(t_build)
        med = {k: float(np.median(v)) if v else None for k, v in times.items()}
        t_bl, t_mj = med["Blender"], med["MuJoCo"]
        print(f"{label}: N={n} frames={frames}  Blender {t_bl:7.2f} s ({bl_info})"
              + (f"  MuJoCo {t_mj:6.2f} s ({mj_info})" if t_mj is not None else "")
              + (f"  (medians of {args.repeats})" if args.repeats > 1 else ""), flush=True)
        ours = {}
        for backend in backends:
            t, tr, tb = med[backend], trs[backend], med[(backend, "build")]
            ours[backend] = (t, tr)
            line = f"  ours[{backend}] {t:7.2f} s ({outcome(tr)})  ours/Blender {t / t_bl:6.2f}x"
            if t_mj is not None:
                line += f"  ours/MuJoCo {t / t_mj:6.2f}x"
            line += f"\n    + World build {tb:.3f} s: with it ours/Blender {(t + tb) / t_bl:6.2f}x"
            if t_mj is not None:
                line += f"  ours/MuJoCo {(t + tb) / t_mj:6.2f}x"
            print(line, flush=True)
        return ours, t_bl, t_mj

    small = row("pile", 100, args.frames)
    # the same work per step as Blender's default (10 solver iterations): what a sweep costs, apart
    # from how many sweeps each engine does by default
    for backend in backends:
        t_10, _, tr_10 = run_ours(100, args.frames, iterations=BLENDER_ITERATIONS, backend=backend)
        print(f"pile at {BLENDER_ITERATIONS} sweeps (the record's iterations, Blender's default): ours[{backend}] "
              f"{t_10:7.2f} s ({outcome(tr_10)})  ours/Blender {t_10 / small[1]:6.2f}x", flush=True)
    if not args.skip_big:
        bf = min(args.big_frames, args.frames)
        print(f"(the {args.big}-cube run is bounded to {bf} frames = {(bf - 1) / FPS:.2f} s of simulated "
              f"time; growth is per frame against 100 cubes over the same {bf} frames)")
        same = row("pile", 100, bf) if bf != args.frames else small
        big = row("pile", args.big, bf)
        timings = [(f"ours[{b}]", same[0][b][0], big[0][b][0]) for b in backends]
        timings += [("Blender", same[1], big[1]), ("MuJoCo", same[2], big[2])]
        for name, t_same, t_big in timings:
            if t_same is not None and t_big is not None:
                print(f"growth {args.big}/100 {name}: {t_big / t_same:6.1f}x (linear would be {args.big / 100:.0f}x)")
    tr_small = small[0][backends[0]][1]
    baked, raw_n, t_bake, t_raw = bench_bake(tr_small, 100)
    keys = 7 * len(tr_small.time) * raw_n
    print(f"keys: {raw_n} objects x {len(tr_small.time)} frames x 7 channels = {keys} keys, best of "
          f"{REPEATS} interleaved: bake_trajectory {min(t_bake):.3f} s ({baked} baked), raw add+foreach_set "
          f"{min(t_raw):.3f} s, ratio {min(t_bake) / min(t_raw):.2f}x (first calls {t_bake[0]:.3f} s and "
          f"{t_raw[0]:.3f} s, ratio {t_bake[0] / t_raw[0]:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
