#!/usr/bin/env python3
"""Benchmark of the pure-Python simulator (rscene_addon.sim).

1. N boxes (default 100) fall onto the ground and settle: steps per second over F steps (default 1000
   at dt 1/240), and the ratio of the mean step time to a baseline measured in the same run, a plain
   numpy loop that integrates the same N bodies (gravity, semi-implicit Euler, quaternion update)
   without any collision handling. The ratio is what to compare between machines.
2. Broadphase scaling: the time of one broadphase pass (world AABBs and sweep-and-prune pairs) and of a
   whole step at N = 100, 200, 400 (and 800), with the growth relative to N = 100; near-linear means
   the time roughly doubles when N doubles.

    python scripts/bench_sim.py [--boxes 100] [--steps 1000] [--no-sleep] [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rscene_addon.sim import World  # noqa: E402
from rscene_addon.sim.broadphase import candidate_pairs, compute_aabbs  # noqa: E402
from rscene_addon.sim.mathutil import quat_integrate, quat_multiply, quat_to_matrix  # noqa: E402
from tests.scenes import ground, header, obj, scene_from  # noqa: E402

def boxes_scene(n: int, dt: float, sleeping: bool, spacing: float = 0.8, seed: int = 1):
    """n tumbling 0.3 m boxes over the ground, on a grid ``spacing`` apart, at seven drop heights."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n)))
    lines = header(dt=dt, sleeping=sleeping) + [ground()]
    for i in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        pos = ((i % side) * spacing, (i // side) * spacing, 0.4 + 0.35 * (i % 7))
        lines.append(obj(f"/World/Box{i}", "box", pos=pos, quat=q, scale=(0.3, 0.3, 0.3)))
    return scene_from(lines)


def baseline_step_time(n: int, dt: float, steps: int) -> float:
    """Mean time of a contact-free numpy integration step for n bodies (the same state arrays)."""
    rng = np.random.default_rng(0)
    pos = rng.normal(size=(n, 3))
    vel = np.zeros((n, 3))
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    omega = rng.normal(size=(n, 3))
    g = np.array([0.0, 0.0, -9.81])
    start = time.perf_counter()
    for _ in range(steps):
        vel += g * dt
        R = quat_to_matrix(quat)
        _ = np.einsum("nij,nj->ni", R, omega)
        pos += vel * dt
        quat = quat_integrate(quat, omega, dt)
    return (time.perf_counter() - start) / steps


def run_fall(n: int, steps: int, dt: float, sleeping: bool):
    world = World.from_scene(boxes_scene(n, dt, sleeping))
    times = np.zeros(steps)
    for k in range(steps):
        t0 = time.perf_counter()
        world.step()
        times[k] = time.perf_counter() - t0
    return world, times


def broadphase_time(world: World, repeats: int) -> float:
    m, s = world.model, world.state
    R = quat_to_matrix(s.quaternion)
    gb = m.geom_body
    g_pos = s.position[gb] + np.einsum("gij,gj->gi", R[gb], m.geom_pos)
    g_rot = quat_to_matrix(quat_multiply(s.quaternion[gb], m.geom_quat))
    moving = (m.body_mode == 2)[gb]
    pad = np.full(len(gb), 0.01)
    start = time.perf_counter()
    for _ in range(repeats):
        lo, hi = compute_aabbs(m, g_pos, g_rot, pad)
        candidate_pairs(m, lo, hi, moving, np.ones(len(gb), dtype=bool))
    return (time.perf_counter() - start) / repeats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boxes", type=int, default=100)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--dt", type=float, default=1 / 240)
    ap.add_argument("--no-sleep", action="store_true",
                    help="disable sleeping (every box is solved every step)")
    ap.add_argument("--quick", action="store_true", help="fewer steps and sizes (a smoke run)")
    args = ap.parse_args(argv)
    steps = 200 if args.quick else args.steps
    sleeping = not args.no_sleep

    print(f"== {args.boxes} boxes falling on the ground: {steps} steps at dt {args.dt:.6g} s, "
          f"sleeping {'on' if sleeping else 'off'}")
    base = baseline_step_time(args.boxes, args.dt, max(steps, 200))
    world, times = run_fall(args.boxes, steps, args.dt, sleeping)
    mean = float(times.mean())
    awake = int(np.sum(~world.state.sleeping & (world.model.body_mode == 2)))
    print(f"baseline (numpy integration only): {base * 1e6:9.1f} us/step")
    print(f"simulation:                        {mean * 1e6:9.1f} us/step  = {1 / mean:8.1f} steps/s")
    print(f"ratio simulation / baseline:       {mean / base:9.1f}")
    q = np.percentile(times, [50, 90, 99]) * 1e3
    print(f"step time percentiles (ms): p50 {q[0]:.2f}  p90 {q[1]:.2f}  p99 {q[2]:.2f};  "
          f"first 100 steps {times[:100].mean() * 1e3:.2f} ms, last 100 {times[-100:].mean() * 1e3:.2f} ms; "
          f"awake at the end: {awake}")
    z = world.origin_positions()[world.model.body_mode == 2][:, 2]
    print(f"settled heights: min {z.min():.4f} m, max {z.max():.4f} m (a 0.3 m box rests at 0.15 to 0.26)")

    sizes = [100, 200, 400] if args.quick else [100, 200, 400, 800]
    print("\n== broadphase scaling (boxes in a grid, mid-fall; sleeping off)")
    print(f"{'N':>6} {'broadphase us':>14} {'x vs N=100':>11} {'step ms':>9} {'x vs N=100':>11} "
          f"{'ratio to baseline':>18}")
    ref_bp = ref_step = None
    for n in sizes:
        w, t = run_fall(n, 60 if args.quick else 120, args.dt, sleeping=False)
        bp = broadphase_time(w, 20)
        step = float(t[-40:].mean())
        b = baseline_step_time(n, args.dt, 200)
        ref_bp = ref_bp or bp
        ref_step = ref_step or step
        print(f"{n:6d} {bp * 1e6:14.1f} {bp / ref_bp:11.2f} {step * 1e3:9.2f} {step / ref_step:11.2f} "
              f"{step / b:18.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
