"""The compiled articulated-system kernels of a robot alone on planes, imported together (by
``kernels.load_robots`` after it has chosen the cache folder) and run once on a tiny two-body robot so that a
step never pays a compile. Apart from the rigid world's kernels (``compiled``): a scene without robots never
compiles these.

What compiles here: ``kinematics`` (a system's setup), ``step_alone`` (every robot alone on planes, one call;
``system_step`` inside it) and ``near_systems`` (which robots are alone). The per-part kernels of robots that
touch each other or world bodies (``multibody_compiled``'s group step: ``mass_matrix`` ... ``solve_rows``)
are ``robot_group``'s: the first access to one of them here loads that part (``kernels.load_robot_group``),
so a robot that never meets another never compiles them (most are compiled inside ``step_alone`` anyway;
a warm-up of its own would only load them).

What a first compile costs (numba 0.68): every compiled function's library is optimized and turned into
machine code again with its whole linked callee tree at every level above it, and each function pays a
fixed ~0.3-0.5 s (wrappers, passes). So ``system_step`` is inlined into ``step_alone`` (no second copy of
the tree); the helpers stay functions of their own: numba's IR inlining re-runs the callee's front end at
every call site, which cost more (~0.4 s a site) than it saved. Helpers with one call site are written out
in their caller instead (``articulated``'s joint motion, quaternion error and exponential: ~5 functions
fewer), and the step's contacts come back as one flat array, not twelve."""
from __future__ import annotations

import numpy as np

from .articulated import kinematics
from .robot_near import near_systems
from . import robot_step
from .robot_step import step_alone, system_step

GROUP = ("bias_forces", "integrate", "limit_rows", "mass_matrix", "pair_rows", "plane_rows", "position_error",
         "predict", "solve_rows", "sphere_speeds")
__all__ = ["kinematics", "near_systems", "robot_step", "step_alone", "system_step", "tiny_robot", "warm_up"]


def __getattr__(name: str):
    """A group-step kernel (``GROUP``): loads ``robot_group`` (compiled or read from the cache once)."""
    if name in GROUP:
        from . import load_robot_group
        value = getattr(load_robot_group(), name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tiny_robot():
    """A two-body robot (a floating base, one revolute link) as the kernels take it, for warm-ups."""
    i64 = np.int64
    eye = np.eye(4)[None].repeat(2, 0)
    axis = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    return dict(parent=np.array([-1, 0], i64), kind=np.array([4, 1], i64), gs0=np.array([0, 7], i64),
                ds0=np.array([0, 6], i64), nd=np.array([6, 1], i64), eye=eye, axis=axis,
                q=np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.1]), u=np.zeros(7), mass=np.ones(2),
                com=np.zeros((2, 3)), inertia_local=np.eye(3)[None].repeat(2, 0) * 0.1,
                pts=np.array([[0.0, 0.0, -0.5, 0.1], [0.0, 0.0, 0.0, 0.05]]), p0=np.array([0, 1, 2], i64),
                st=np.array([1, 2], i64), ss=np.array([[0.1, 0.1, 0.1], [0.05, 0.1, 0.0]]), bc=np.zeros((2, 3)),
                br=np.ones(2), lg=np.array([7], i64), ld=np.array([6], i64))


def warm_up() -> None:
    """Every kernel of the robot-alone path once with the argument types a step passes (compiles or loads
    them). ``system_step`` runs inside ``step_alone`` only (a second entry point would compile its whole call
    tree again)."""
    t = tiny_robot()
    q, u, eye, axis = t["q"], t["u"], t["eye"], t["axis"]
    frames, S, vel, _, inertia = kinematics(q, u, t["parent"], t["kind"], t["gs0"], t["ds0"], t["nd"], eye, axis,
                                            eye.copy(), axis, axis, t["mass"], t["com"], t["inertia_local"])
    near_systems(np.concatenate((frames, frames)), np.concatenate((vel, vel)), np.concatenate((t["bc"], t["bc"])),
                 np.concatenate((t["br"], t["br"])), np.array([0, 2, 4], np.int64), 0.02, 0.04)
    z = np.zeros(7)
    rs = robot_step
    cols = dict(zip(range(rs.M_ORIGIN, rs.M_BR + 1), (eye, axis, eye, axis, axis, t["mass"], t["com"],
                                                      t["inertia_local"], t["pts"], t["ss"], eye.copy(), t["bc"],
                                                      t["br"])))
    cols.update(zip(range(rs.I_PARENT, rs.I_LD + 1), (t["parent"], t["kind"], t["gs0"], t["ds0"], t["nd"], t["p0"],
                                                      t["st"], t["p0"], t["lg"], t["ld"])))
    for col in range(rs.C_QT, rs.C_HI + 1):
        cols[col] = q if col in (rs.C_QT, rs.C_LO, rs.C_HI) else np.array([0.0, 0.0, -9.81]) if col == rs.C_GRAV else z
    cols[rs.C_SCAL], cols[rs.C_LOCKED] = (0.2, 1e-4), np.zeros(7, np.bool_)
    for col, value in zip(range(rs.S_Q, rs.S_INERTIA + 1), (q, u, z, frames, S, vel, t["com"], inertia)):
        cols[col] = value
    cols[rs.P_F] = np.concatenate(([0.0, 0.0, 1.0, 0.0, 0, 0, 0, 0.8, 0.0, 0.001, 0.2, 1e-4, 0.02, 0, 0], [0.8, 0, 0]))
    cols[rs.P_ALLOW], cols[rs.P_SELF] = np.ones((2, 1), np.bool_), np.triu(np.ones((2, 2), np.bool_))
    lay, b = rs.pack([((2, 8, 7, 2, 2, 1, 1, 2, 0), cols)])
    step_alone(lay, b["mf"], b["mi"], b["cf"], b["cb"], b["st"], b["pf"], b["pb"], np.array([0.02, 0.01, 1e-9, 1e-10]),
               np.zeros(0), np.zeros((1, 2), np.int64))
