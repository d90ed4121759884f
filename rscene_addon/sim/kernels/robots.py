"""The compiled articulated-system kernels, imported together (by ``kernels.load_robots`` after it has chosen
the cache folder) and run once on a tiny two-body robot so that a step never pays a compile. Apart from the
rigid world's kernels (``compiled``): a scene without robots never compiles these."""
from __future__ import annotations

import numpy as np

from .articulated import integrate, kinematics, limit_rows, mass_matrix, bias_forces, position_error, predict
from .robot_contacts import pair_rows, plane_rows, sphere_speeds
from .robot_near import near_systems
from .robot_solve import solve_rows
from . import robot_step
from .robot_step import step_alone, system_step

__all__ = ["bias_forces", "integrate", "kinematics", "limit_rows", "mass_matrix", "near_systems", "pair_rows",
           "plane_rows", "position_error", "predict", "solve_rows", "robot_step", "sphere_speeds", "step_alone", "system_step", "warm_up"]


def warm_up() -> None:
    """Every kernel once with the argument types a step passes (compiles or loads them). ``system_step``
    runs inside ``step_alone`` only (a second entry point would compile its whole call tree again)."""
    i64 = np.int64
    parent, kind = np.array([-1, 0], i64), np.array([4, 1], i64)
    gs0, ds0, nd = np.array([0, 7], i64), np.array([0, 6], i64), np.array([6, 1], i64)
    eye = np.eye(4)[None].repeat(2, 0)
    axis = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    q = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.1])
    u = np.zeros(7)
    mass, com = np.ones(2), np.zeros((2, 3))
    inertia_local = np.eye(3)[None].repeat(2, 0) * 0.1
    frames, S, vel, _, inertia = kinematics(q, u, parent, kind, gs0, ds0, nd, eye, axis, eye.copy(), axis, axis,
                                            mass, com, inertia_local)
    m = mass_matrix(parent, ds0, nd, S, inertia, np.zeros(7))
    h = bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, np.array([0.0, 0.0, -9.81]))
    e = position_error(q, q, kind, gs0, ds0, nd, 7)
    z = np.zeros(7)
    locked = np.zeros(7, np.bool_)
    u1, _, chol, _ = predict(m, h, e, u, z, z, z, z, z, locked, np.full(7, np.inf), 0.01)
    lg, ld = np.array([7], i64), np.array([6], i64)
    lo, hi = np.full(8, -np.inf), np.full(8, np.inf)
    limit_rows(q, u1, lg, ld, lo, hi, locked, 0.01)
    integrate(q, u1.copy(), z, 0.01, kind, gs0, ds0, nd, lg, ld, lo, hi)
    pts = np.array([[0.0, 0.0, -0.5, 0.1], [0.0, 0.0, 0.0, 0.05]])
    p0 = np.array([0, 1, 2], i64)
    one = np.ones(1)
    res = plane_rows(frames, pts, p0, np.ones((2, 1), np.bool_), np.array([[0.0, 0.0, 1.0]]), np.zeros(1),
                     one, np.zeros((1, 3)), np.array([[1.0, 0.0, 1.0]]), one, 1e-4 * one, u1, u, parent, ds0, nd, S,
                     0.01)
    st = np.array([1, 2], i64)
    ss = np.array([[0.1, 0.1, 0.1], [0.05, 0.1, 0.0]])
    so = eye.copy()
    bc, br = np.zeros((2, 3)), np.ones(2)
    allowed = np.ones((2, 2), np.bool_)
    for same in (True, False):
        pair_rows(same, allowed, frames, pts, p0, st, ss, so, p0, bc, br, u1, u, parent, ds0, nd, S,
                  frames, pts, p0, st, ss, so, p0, bc, br, u1, u, parent, ds0, nd, S,
                  0.8, 0.0, 0.001, 0.2, 1e-4, 0.02, 0.01)
    sphere_speeds(u1, parent, ds0, nd, S, bc, br)
    near_systems(np.concatenate((frames, frames)), np.concatenate((vel, vel)), np.concatenate((bc, bc)),
                 np.concatenate((br, br)), np.array([0, 2, 4], i64), 0.02, 0.04)
    rs = robot_step
    cols = dict(zip(range(rs.M_ORIGIN, rs.M_BR + 1), (eye, axis, eye, axis, axis, mass, com, inertia_local, pts, ss, so,
                                                      bc, br)))
    cols.update(zip(range(rs.I_PARENT, rs.I_LD + 1), (parent, kind, gs0, ds0, nd, p0, st, p0, lg, ld)))
    for col in range(rs.C_QT, rs.C_HI + 1):
        cols[col] = q if col in (rs.C_QT, rs.C_LO, rs.C_HI) else np.array([0.0, 0.0, -9.81]) if col == rs.C_GRAV else z
    cols[rs.C_SCAL], cols[rs.C_LOCKED] = (0.2, 1e-4), locked
    for col, value in zip(range(rs.S_Q, rs.S_INERTIA + 1), (q, u, z, frames, S, vel, com, inertia)):
        cols[col] = value
    cols[rs.P_F] = np.concatenate(([0.0, 0.0, 1.0, 0.0, 0, 0, 0, 0.8, 0.0, 0.001, 0.2, 1e-4, 0.02, 0, 0], [0.8, 0, 0]))
    cols[rs.P_ALLOW], cols[rs.P_SELF] = np.ones((2, 1), np.bool_), np.triu(allowed)
    lay, b = rs.pack([((2, 8, 7, 2, 2, 1, 1, 2, 0), cols)])
    step_alone(lay, b["mf"], b["mi"], b["cf"], b["cb"], b["st"], b["pf"], b["pb"], np.array([0.02, 0.01, 1e-9]))
    C = len(res[0])
    off = np.array([0, 7], i64)
    rows = np.zeros((C, 3, 7))
    solve_rows(u1, off, chol[None], (~locked)[None], np.zeros(C, i64), np.full(C, -1, i64), np.full(C, 3, i64),
               rows, rows, np.zeros((C, 3)), np.zeros(C), np.zeros(C), np.zeros(C), 2)
