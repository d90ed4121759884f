#!/usr/bin/env python3
"""Where the time of one compiled robot step goes: each kernel ``robot_step.system_step`` calls, timed alone.

    .venv/pure/bin/python scripts/bench_robot_parts.py [--robot laikago] [--every 40]

Runs the ``bench_robots`` scene (the robot dropped on the plane, 2 s at dt 1/480), records the arguments of
every ``--every``-th ``system_step`` step (``_system_step`` inside ``step_alone``), then times on each recorded state the whole step and its parts
(kinematics, mass matrix, bias forces, prediction, plane rows, self-contact rows, the solve), each looped
inside a compiled function so that no Python dispatch is counted. CPU microseconds a call, mean over the
states; the row counts (joint limits, plane contacts, self contacts) beside them. The parts are not
disjoint sums of the whole (the row assembly, integration and output copies are the remainder).
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def _timers():
    from numba import njit

    from rscene_addon.sim.kernels.articulated import bias_forces, kinematics, limit_rows, mass_matrix, predict
    from rscene_addon.sim.kernels.robot_contacts import pair_rows, plane_rows
    from rscene_addon.sim.kernels.robot_solve import solve_rows
    from rscene_addon.sim.kernels.robot_step import system_step

    @njit
    def loop(f, a, reps):
        """f(*a), reps times, inside compiled code (no Python dispatch counted)."""
        for _ in range(reps):
            r = f(*a)
        return r

    def timer(f):
        return lambda a, reps: loop(f, a, reps)

    parts = dict(total=system_step, kinematics=kinematics, mass_matrix=mass_matrix, bias_forces=bias_forces,
                 predict=predict, plane_rows=plane_rows, pair_rows=pair_rows, solve_rows=solve_rows)
    return {name: timer(f) for name, f in parts.items()}, limit_rows, system_step


def _solve_args(A, uf, chol, pl, sp, lim):
    """solve_rows' arguments as system_step assembles them."""
    from rscene_addon.sim.kernels.robot_step import warm_start
    dof, sign, ltarget = lim
    nv = uf.shape[0]
    nl, npl, nsp = dof.shape[0], pl[0].shape[0], sp[0].shape[0]
    R = nl + npl + nsp
    ja, fixed = np.zeros((R, 3, nv)), np.zeros((R, 3))
    target, push, friction = np.zeros(R), np.zeros(R), np.zeros(R)
    nax = np.full(R, 3, np.int64)
    for r in range(nl):
        ja[r, 0, dof[r]], target[r], nax[r] = sign[r], ltarget[r], 1
    for c in range(npl):
        r = nl + c
        ja[r] = pl[8][c]
        target[r], push[r], friction[r] = pl[5][c], pl[6][c], A["pmat"][pl[1][c], 0]
    for c in range(nsp):
        r = nl + npl + c
        ja[r] = sp[8][c]
        target[r], push[r], friction[r] = sp[5][c], sp[6][c], A["self_mat"][0]
    return ((uf, np.array([0, nv]), chol[None].copy(), (~A["locked"])[None].copy(), np.zeros(R, np.int64),
             np.full(R, -1, np.int64), nax, ja, ja, fixed, target, push, friction, A["iterations"],
             warm_start.py_func(A["warm"], nl, pl[0], pl[1], sp[0], sp[1]), A["tolerance"]), (nl, npl, nsp))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robot", default="laikago")
    ap.add_argument("--every", type=int, default=40)
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    import bench_robots

    from rscene_addon.sim import kernels
    kern = kernels.load_robots()
    rs = kern.robot_step
    alone, grouped = rs.step_alone, rs._system_step
    states, count = [], [0]

    def recording(*a):
        # _system_step's argument groups flattened are system_step's arguments
        flat = tuple(x for group in a for x in (group if isinstance(group, tuple) else (group,)))
        count[0] += 1
        if count[0] % args.every == 0:
            states.append(tuple(np.copy(x) if isinstance(x, np.ndarray) else x for x in flat))
        return grouped(*a)

    # a robot alone steps inside the compiled step_alone; its Python body calls _system_step by the module's
    # name, so running that body for the recording run sees every call
    rs.step_alone, rs._system_step = alone.py_func, recording
    # the helpers that body calls: their Python bodies (``_put`` has no Python entry, ``no_cpython_wrapper``; the
    # inlined ones would compile a standalone copy)
    helpers = {name: getattr(rs, name) for name in ("_plane_columns", "_put", "_sort_range")}
    for name, f in helpers.items():
        setattr(rs, name, f.py_func)
    try:
        bench_robots.run_ours(args.robot, "numba", 2.0, 1)
    finally:
        rs.step_alone, rs._system_step = alone, grouped
        for name, f in helpers.items():
            setattr(rs, name, f)
    timers, limit_rows, system_step = _timers()
    names = list(inspect.signature(system_step.py_func).parameters)
    out: dict = {}
    for rec in states:
        A = dict(zip(names, rec))

        def g(*keys):
            return tuple(A[k] for k in keys)

        dt = A["dt"]
        parts = dict(total=rec,
                     kinematics=g("q", "u", "parent", "kind", "gs0", "ds0", "nd", "origin", "axis", "offset", "pu",
                                  "pv", "mass", "com_local", "inertia_local"),
                     mass_matrix=g("parent", "ds0", "nd", "S", "inertia", "armature"),
                     bias_forces=g("u", "parent", "kind", "ds0", "nd", "S", "vel", "inertia", "gravity"))
        m = kern.mass_matrix(*parts["mass_matrix"])
        h = kern.bias_forces(*parts["bias_forces"])
        e = kern.position_error(*g("q", "q_target", "kind", "gs0", "ds0", "nd"), A["u"].shape[0])
        parts["predict"] = (m, h, e) + g("u", "kp", "kd", "damp", "u_target", "tau_ext", "locked", "limit", "dt")
        uf, _, chol, _ = kern.predict(*parts["predict"])
        reach = np.maximum(A["rmin"], A["rbase"] + 2 * dt * (np.abs(uf).max() + A["vw"]))
        parts["plane_rows"] = (g("frames", "pts", "p0", "pallow", "pn", "pd") + (reach,)
                               + g("vbody", "pmat", "perp", "pslop") + (uf, A["u"])
                               + g("parent", "ds0", "nd", "S", "dt"))
        side = g("frames", "pts", "p0", "st", "ss", "so", "s0", "bc", "br") + (uf, A["u"]) + g("parent", "ds0", "nd",
                                                                                              "S")
        mat = A["self_mat"]
        parts["pair_rows"] = ((np.bool_(True), A["self_allowed"]) + side + side
                              + (mat[0], mat[1], mat[2]) + g("erp", "slop", "margin", "dt"))
        lim = limit_rows(A["q"], uf, A["lim_g"], A["lim_d"], A["lower"], A["upper"], A["locked"], dt)
        parts["solve_rows"], rows = _solve_args(A, uf, chol, kern.plane_rows(*parts["plane_rows"]),
                                                kern.pair_rows(*parts["pair_rows"]), lim)
        out.setdefault("rows", []).append(rows)
        for name, f in timers.items():
            f(parts[name], 2)
            c = time.process_time()
            f(parts[name], args.reps)
            out.setdefault(name, []).append((time.process_time() - c) / args.reps * 1e6)
    print(f"{args.robot}: {len(states)} recorded states, CPU us a call (mean, max)")
    for name, v in out.items():
        if name == "rows":
            print(f"  rows (limits, plane, self): mean {np.mean(v, 0).round(1)}  max {np.max(v, 0)}")
        else:
            print(f"  {name:12s} {np.mean(v):7.1f} {np.max(v):7.1f}")


if __name__ == "__main__":
    main()
