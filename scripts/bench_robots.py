#!/usr/bin/env python3
"""Our articulated robots (both backends) against MuJoCo on the corpus quadrupeds, stepping only.

    .venv/pure/bin/python scripts/bench_robots.py [--seconds 2] [--many 16] [--backends numba,numpy] [--skip-many] [--prebuilt DIR]

Scene: the corpus URDF (collision shapes as shipped: Laikago and ANYmal C use boxes, cylinders and spheres)
on a floating base, joints passive (no PD, no damping), standing with its legs bent and its lowest collision
point 2 cm above a ground plane, dropped and left to collapse for ``--seconds`` at dt 1/480. Ours: the robot
beside a rigid ``World`` holding the plane (link-world contacts, self-collision on), stepped as ``simulate``
steps a scene (robots, then the world). MuJoCo: the same URDF through ``MjSpec`` (a free joint added to the
root, the same plane, its default solver and contact settings). ``--many`` robots stand on a grid 1.5 m
apart in one world (one ``step_systems`` call for all), and in one MuJoCo model.

Timed: the stepping loop only (models built before the clock starts), CPU time (process) beside wall;
``--repeats`` rounds, each running MuJoCo then ours, and the medians per step. The
first step of ours runs before the clock (the numba kernels load or compile then; ``compile`` is timed in
fresh processes: first-ever compile into an empty cache, then a warm load; with ``--prebuilt DIR`` ours runs
the kernels compiled ahead of time in DIR, as a shipped extension does, and the first line times their first
load instead of a compile). Printed: steps/s, the ratio to
MuJoCo per step, and the final trunk heights of both (the physics must agree, not just the speed; the numpy
reference runs ``--numpy-seconds`` only, its height is then not comparable).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

CORPUS = os.environ.get("RSCENE_CORPUS", "/work/shared/corpus")
ROBOTS = {
    "laikago": "robots/raisimTech-raisim2Lib/rsc/laikago/laikago.urdf",
    "anymal_c": "robots/raisimTech-raisim2Lib/rsc/anymal_c/urdf/anymal.urdf",
}
# a stand with bent legs: (joint-name fragment, angle) applied to every matching revolute joint
STANDS = {
    "laikago": (("thigh", 0.6), ("calf", -1.2)),
    "anymal_c": (("LF_HFE", 0.5), ("RF_HFE", 0.5), ("LH_HFE", -0.5), ("RH_HFE", -0.5),
                 ("LF_KFE", -0.9), ("RF_KFE", -0.9), ("LH_KFE", 0.9), ("RH_KFE", 0.9)),
}
DT = 1.0 / 480.0
CLEARANCE = 0.02
SPACING = 1.5


def _stand(robot, name: str) -> dict:
    """Joint name -> angle of the stand."""
    out = {}
    for j in robot.movable_joints():
        for frag, angle in STANDS[name]:
            if frag in j:
                out[j] = angle
                break
    return out


def _initial_q(system, name: str, xy=(0.0, 0.0)) -> np.ndarray:
    """The stand, its lowest collision point ``CLEARANCE`` above z = 0."""
    robot = system.robot
    q = robot.zero_configuration()
    slices = robot.gc_slices()
    for j, angle in _stand(robot, name).items():
        q[slices[j]] = angle
    q[3:7] = (1.0, 0.0, 0.0, 0.0)
    system.set_generalized_coordinate(q)
    low = min(float((pts[:, :3] @ system.frames[i][:3, :3].T + system.frames[i][:3, 3])[:, 2].min()
                    - pts[:, 3].max()) for i, pts in enumerate(system._contact_local) if len(pts))
    q[0], q[1], q[2] = xy[0], xy[1], CLEARANCE - low
    system.set_generalized_coordinate(q)
    return q


def _grid(n: int):
    cols = int(np.ceil(np.sqrt(n)))
    return [((k % cols) * SPACING, (k // cols) * SPACING) for k in range(n)]


def run_ours(name: str, backend: str, seconds: float, count: int = 1):
    from rscene_addon.formats import urdf
    from rscene_addon.sim import World
    from rscene_addon.sim.articulated import ArticulatedSystem
    from rscene_addon.sim.link_contacts import WorldContacts, world_erp
    from rscene_addon.sim.multibody_solver import step_systems
    from tests.scenes import ground, header, scene_from
    world = World.from_scene(scene_from(header(dt=DT, sleeping=False) + [ground()]), backend=backend)
    robot = urdf.read_robot(os.path.join(CORPUS, ROBOTS[name]))
    systems = []
    for k, xy in enumerate(_grid(count)):
        s = ArticulatedSystem(robot, dt=DT, name=f"{name}{k}", environment=WorldContacts(world),
                              erp=world_erp(world), backend=backend)
        _initial_q(s, name, xy)
        systems.append(s)
    steps = int(round(seconds / DT))
    step_systems(systems, DT)  # loads (or compiles) the kernels outside the clock
    world.step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps - 1):
        step_systems(systems, DT)
        world.step()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, steps - 1, [float(s.q[2]) for s in systems]


def _positive_inertias(spec) -> None:
    """ANYmal C's URDF has link inertias with a tiny negative eigenvalue (its hatch), which MuJoCo's compiler
    rejects: clamp eigenvalues at 1e-9 kg m^2 (our model takes them as given; the links are light)."""
    for body in spec.bodies:
        fi = np.asarray(body.fullinertia, dtype=float)
        if fi.shape != (6,) or np.any(np.isnan(fi)):
            continue
        m = np.array([[fi[0], fi[3], fi[4]], [fi[3], fi[1], fi[5]], [fi[4], fi[5], fi[2]]])
        w, v = np.linalg.eigh(m)
        if w.min() > 0:
            continue
        m = (v * np.maximum(w, 1e-9)) @ v.T
        body.fullinertia = [m[0, 0], m[1, 1], m[2, 2], m[0, 1], m[0, 2], m[1, 2]]


def run_mujoco(mujoco, name: str, seconds: float, count: int = 1):
    from rscene_addon.formats import urdf
    from rscene_addon.sim.articulated import ArticulatedSystem
    path = os.path.join(CORPUS, ROBOTS[name])
    # the initial configuration from our model (same URDF): base pose and joint angles by name
    robot = urdf.read_robot(path)
    probe = ArticulatedSystem(robot, dt=DT, backend="numpy")
    spec = mujoco.MjSpec()
    spec.compiler.balanceinertia = True  # ANYmal C's camera links fail MuJoCo's triangle-inequality check
    spec.option.timestep = DT
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[50, 50, 0.1], friction=[0.8, 0.005, 0.0001])
    for k, xy in enumerate(_grid(count)):
        child = mujoco.MjSpec.from_file(path)
        child.compiler.balanceinertia = True
        _positive_inertias(child)
        root = child.worldbody.first_body()
        root.add_freejoint(name="base")
        frame = spec.worldbody.add_frame()
        frame.attach_body(root, f"r{k}_", "")
    model = spec.compile()
    data = mujoco.MjData(model)
    slices = robot.gc_slices()
    for k, xy in enumerate(_grid(count)):
        q = _initial_q(probe, name, xy)
        for j in range(model.njnt):
            jn = model.joint(j).name
            if not jn.startswith(f"r{k}_"):
                continue
            adr = model.jnt_qposadr[j]
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                data.qpos[adr:adr + 7] = q[:7]
            else:
                data.qpos[adr] = q[slices[jn[len(f"r{k}_"):]]][0]
    steps = int(round(seconds / DT))
    mujoco.mj_step(model, data)
    trunk = [model.jnt_qposadr[j] + 2 for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps - 1):
        mujoco.mj_step(model, data)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return wall, cpu, steps - 1, [float(data.qpos[a]) for a in trunk]


def compile_times() -> list[tuple[float, float]]:
    """CPU seconds of a fresh process loading the rigid-world kernels and then the robot kernels into an
    empty cache (first-ever compile), then of a second fresh process loading both from that cache."""
    cache = tempfile.mkdtemp(prefix="rscene-robot-kernels-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    code = ("import time; from rscene_addon.sim import kernels; c = time.process_time(); kernels.load(); "
            "b = time.process_time(); kernels.load_robots(); print(b - c, time.process_time() - b)")
    out = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                             check=True)
        box, robots = res.stdout.strip().splitlines()[-1].split()
        out.append((float(box), float(robots)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--many", type=int, default=16)
    ap.add_argument("--backends", default="numba,numpy")
    ap.add_argument("--robots", default="laikago,anymal_c")
    ap.add_argument("--numpy-seconds", type=float, default=0.25, help="simulated time of the numpy runs")
    ap.add_argument("--skip-many", action="store_true")
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--prebuilt", default=None,
                    help="use the kernels compiled ahead of time in this folder (scripts/build_kernels.py), as "
                         "a shipped extension does: the compile line then times their first load")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each (numba, MuJoCo); medians printed")
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if args.prebuilt:
        os.environ["RSCENE_PREBUILT_DIR"] = os.path.abspath(args.prebuilt)  # this process and the compile's
    try:
        import mujoco
    except ImportError:
        mujoco = None
    import numba
    print(f"python {sys.version.split()[0]}  numpy {np.__version__}  numba {numba.__version__}  "
          f"MuJoCo {mujoco.__version__ if mujoco else 'not importable (skipped)'}  dt 1/{round(1 / DT)}  "
          f"{args.seconds} s simulated")
    if "numba" in backends and not args.skip_compile:
        (box0, rob0), (box1, rob1) = compile_times()
        first = "first load of the shipped kernels" if args.prebuilt else "first compile"
        print(f"kernels, fresh processes: {first}: rigid world {box0:.1f} s CPU, robots {rob0:.1f} s CPU; "
              f"warm load: rigid world {box1:.2f} s, robots {rob1:.2f} s CPU")
    if "numba" in backends:
        from rscene_addon.sim import kernels
        kernels.load()
        shipped = kernels.shipped()
        if args.prebuilt and not shipped:
            sys.exit(f"no kernels for these sources, this Python and platform in {args.prebuilt}")
        print(f"ours: kernels {'shipped (' + shipped['cpu_name'] + ' CPU)' if shipped else 'compiled here'}, "
              f"numba's target {numba.config.CPU_NAME or 'host'}")
    cases = [(r, 1) for r in args.robots.split(",") if r]
    if not args.skip_many:
        cases.append(("laikago", args.many))
    for name, count in cases:
        print(f"\n{name} x{count}:")
        # rounds alternate the peer and ours (a shared machine's load then weighs on both alike); medians
        mine = [b for b in backends if not (b == "numpy" and count > 1)]  # numpy: minutes per simulated second
        runs = {label: [] for label in ["mujoco"] * (mujoco is not None) + mine}
        for round_ in range(args.repeats):
            if mujoco is not None:
                runs["mujoco"].append(run_mujoco(mujoco, name, args.seconds, count))
            for backend in mine:
                if backend == "numba" or round_ == 0:
                    seconds = args.seconds if backend == "numba" else min(args.seconds, args.numpy_seconds)
                    runs[backend].append(run_ours(name, backend, seconds, count))
        ref = None
        if mujoco is not None:
            ref = _median_run(runs["mujoco"])
            wall, cpu, steps, z = ref
            print(f"  MuJoCo      {steps / cpu:9.0f} steps/s CPU  (cpu {cpu:7.3f} s, wall {wall:7.3f} s)  "
                  f"trunk z {np.mean(z):.4f} m")
        for backend in mine:
            wall, cpu, steps, z = _median_run(runs[backend])
            line = (f"  ours {backend:6s} {steps / cpu:9.0f} steps/s CPU  (cpu {cpu:7.3f} s, wall {wall:7.3f} s)  "
                    f"trunk z {np.mean(z):.4f} m")
            if ref is not None:
                per_ref = ref[1] / ref[2]
                line += f"  ours/MuJoCo {cpu / steps / per_ref:7.2f}x CPU"
                if len(runs[backend]) > 1:
                    ratios = sorted(r[1] / r[2] / per_ref for r in runs[backend])
                    line += f" (runs {ratios[0]:.2f}-{ratios[-1]:.2f}x)"
                if steps == ref[2]:
                    line += f"  max |dz| {np.max(np.abs(np.array(z) - np.array(ref[3]))) * 100:.2f} cm"
            print(line)

def _median_run(runs):
    """The run of median CPU time per step among ``runs`` (wall, cpu, steps, trunk heights)."""
    return sorted(runs, key=lambda r: r[1] / r[2])[len(runs) // 2]

if __name__ == "__main__":
    main()
