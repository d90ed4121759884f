"""The per-part robot kernels of ``multibody_compiled``'s group step (robots near each other, rows against
world bodies, a mass matrix the one-call step could not factor), loaded by ``kernels.load_robot_group`` the
first time a step needs one (``robots.__getattr__``): a robot alone on planes never pays their warm-up. All
but ``sphere_speeds`` are callees of ``step_alone`` too, with the same argument types: this mostly loads them."""
from __future__ import annotations

import numpy as np

from .articulated import bias_forces, integrate, kinematics, limit_rows, mass_matrix, position_error, predict
from .robot_contacts import pair_rows, plane_rows, sphere_speeds
from .robot_solve import solve_rows
from .robots import tiny_robot

__all__ = ["bias_forces", "integrate", "limit_rows", "mass_matrix", "pair_rows", "plane_rows", "position_error",
           "predict", "solve_rows", "sphere_speeds", "warm_up"]


def warm_up() -> None:
    """Every group kernel once with the argument types a group step passes (compiles or loads them)."""
    t = tiny_robot()
    i64 = np.int64
    q, u, eye, axis, parent, kind = t["q"], t["u"], t["eye"], t["axis"], t["parent"], t["kind"]
    gs0, ds0, nd, pts, p0, bc, br = t["gs0"], t["ds0"], t["nd"], t["pts"], t["p0"], t["bc"], t["br"]
    frames, S, vel, _, inertia = kinematics(q, u, parent, kind, gs0, ds0, nd, eye, axis, eye.copy(), axis, axis,
                                            t["mass"], t["com"], t["inertia_local"])
    m = mass_matrix(parent, ds0, nd, S, inertia, np.zeros(7))
    h = bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, np.array([0.0, 0.0, -9.81]))
    e = position_error(q, q, kind, gs0, ds0, nd, 7)
    z = np.zeros(7)
    locked = np.zeros(7, np.bool_)
    u1, _, chol, _ = predict(m, h, e, u, z, z, z, z, z, locked, np.full(7, np.inf), 0.01)
    lg, ld = t["lg"], t["ld"]
    lo, hi = np.full(8, -np.inf), np.full(8, np.inf)
    limit_rows(q, u1, lg, ld, lo, hi, locked, 0.01)
    integrate(q, u1.copy(), z, 0.01, kind, gs0, ds0, nd, lg, ld, lo, hi)
    one = np.ones(1)
    res = plane_rows(frames, pts, p0, np.ones((2, 1), np.bool_), np.array([[0.0, 0.0, 1.0]]), np.zeros(1),
                     one, np.zeros((1, 3)), np.array([[1.0, 0.0, 1.0]]), one, 1e-4 * one, u1, u, parent, ds0, nd, S,
                     0.01)
    st, ss, so = t["st"], t["ss"], eye.copy()
    allowed = np.ones((2, 2), np.bool_)
    for same in (True, False):
        pair_rows(same, allowed, frames, pts, p0, st, ss, so, p0, bc, br, u1, u, parent, ds0, nd, S,
                  frames, pts, p0, st, ss, so, p0, bc, br, u1, u, parent, ds0, nd, S,
                  0.8, 0.0, 0.001, 0.2, 1e-4, 0.02, 0.01)
    sphere_speeds(u1, parent, ds0, nd, S, bc, br)
    C = len(res[0])
    off = np.array([0, 7], i64)
    rows = np.zeros((C, 3, 7))
    solve_rows(u1, off, chol[None], (~locked)[None], np.zeros(C, i64), np.full(C, -1, i64), np.full(C, 3, i64),
               rows, rows, np.zeros((C, 3)), np.zeros(C), np.zeros(C), np.zeros(C), 2, np.zeros((C, 3)), 1e-10)
