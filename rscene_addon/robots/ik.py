"""Inverse kinematics: move a link frame (optionally a point on it) to a target position and, optionally,
orientation. Damped least squares or Jacobian transpose, with the knobs of the ``articulated_ik`` record
(maxIterations, positionTolerance, orientationTolerance, orientationWeight, damping, stepSize, maxStep,
enforceJointLimits, applyBestOnFailure, transposeGain). The floating base stays put unless ``move_base``.

``solve_ik`` returns an ``IKResult``: the solution ``q``, ``converged``, the residual position / orientation
errors and the iteration count; an unreachable target comes back with ``converged=False`` and its residual.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kinematics import frame_transform, integrate, jacobian
from .robot import Robot
from ..base.spatial import log_rotation, quat_to_matrix

__all__ = ["IKOptions", "IKResult", "options_from_record", "solve_ik"]


@dataclass
class IKOptions:
    method: str = "damped_least_squares"  # or "jacobian_transpose"
    max_iterations: int = 80
    position_tolerance: float = 1e-3
    orientation_tolerance: float = 1e-2  # radians
    orientation_weight: float = 0.5
    damping: float = 0.05
    step_size: float = 0.5
    max_step: float = 0.1  # largest change of one coordinate per iteration (rad or m); <= 0: unlimited
    enforce_joint_limits: bool = True
    apply_best_on_failure: bool = True
    transpose_gain: float = 0.0  # 0: the optimal step along J^T e each iteration
    move_base: bool = False


@dataclass
class IKResult:
    q: np.ndarray
    converged: bool
    iterations: int
    position_error: float
    orientation_error: float
    message: str = ""
    history: list = field(default_factory=list)


def options_from_record(record) -> IKOptions:
    """IKOptions from an ``articulated_ik`` record."""
    g = record.get
    method = str(g("inverseMethod", "damped_least_squares"))
    return IKOptions(method="jacobian_transpose" if "transpose" in method else "damped_least_squares",
                     max_iterations=int(g("maxIterations", 80)), position_tolerance=float(g("positionTolerance", 1e-3)),
                     orientation_tolerance=float(g("orientationTolerance", 1e-2)),
                     orientation_weight=float(g("orientationWeight", 0.5)), damping=float(g("damping", 0.05)),
                     step_size=float(g("stepSize", 0.5)), max_step=float(g("maxStep", 0.1)),
                     enforce_joint_limits=bool(g("enforceJointLimits", True)),
                     apply_best_on_failure=bool(g("applyBestOnFailure", True)),
                     transpose_gain=float(g("transposeGain", 0.0)))


def _clamp_limits(robot: Robot, q: np.ndarray) -> np.ndarray:
    for name, sl in robot.gc_slices().items():
        if name and robot.joints[name].has_limits:
            j = robot.joints[name]
            q[sl] = np.clip(q[sl], j.lower, j.upper)
    return q


def _errors(robot, q, link, point, target_pos, target_rot, base):
    t = frame_transform(robot, q, link, base)
    p = t[:3, :3] @ point + t[:3, 3]
    e_pos = np.asarray(target_pos, dtype=float) - p
    e_rot = log_rotation(target_rot @ t[:3, :3].T) if target_rot is not None else np.zeros(3)
    return e_pos, e_rot


def solve_ik(robot: Robot, q0, link: str, target_position, target_orientation=None,
             options: IKOptions | None = None, point=(0.0, 0.0, 0.0), base: np.ndarray | None = None,
             **overrides) -> IKResult:
    """Move ``point`` (in ``link``'s frame) to ``target_position`` (world); ``target_orientation``: optional
    quaternion w, x, y, z (or 3x3 matrix) for the link frame. ``overrides`` set IKOptions fields."""
    opts = options or IKOptions()
    for key, value in overrides.items():
        if not hasattr(opts, key):
            raise TypeError(f"unknown IK option {key!r}")
        setattr(opts, key, value)
    if link not in robot.links:
        raise KeyError(f"no link named {link!r}")
    point = np.asarray(point, dtype=float)
    target_rot = None
    if target_orientation is not None:
        o = np.asarray(target_orientation, dtype=float)
        target_rot = o if o.shape == (3, 3) else quat_to_matrix(o)
    q = np.array(q0 if q0 is not None else robot.default_configuration(), dtype=float)
    if opts.enforce_joint_limits:
        q = _clamp_limits(robot, q)
    nv = robot.dof_dim
    active = np.ones(nv, dtype=bool)
    if robot.floating_base and not opts.move_base:
        active[:6] = False
    if not active.any():
        e_pos, e_rot = _errors(robot, q, link, point, target_pos=target_position, target_rot=target_rot, base=base)
        return IKResult(q, False, 0, float(np.linalg.norm(e_pos)), float(np.linalg.norm(e_rot)),
                        "the robot has no movable joints")
    w = np.sqrt(max(opts.orientation_weight, 0.0))
    best = None
    history = []
    for iteration in range(opts.max_iterations + 1):
        e_pos, e_rot = _errors(robot, q, link, point, target_position, target_rot, base)
        pe, oe = float(np.linalg.norm(e_pos)), float(np.linalg.norm(e_rot))
        cost = pe + (w * w * oe if target_rot is not None else 0.0)
        history.append((pe, oe))
        if best is None or cost < best[0]:
            best = (cost, q.copy(), pe, oe, iteration)
        if pe <= opts.position_tolerance and (target_rot is None or oe <= opts.orientation_tolerance):
            return IKResult(q, True, iteration, pe, oe, "converged", history)
        if iteration == opts.max_iterations:
            break
        jac = jacobian(robot, q, link, point, base)[:, active]
        if target_rot is not None:
            jac = np.vstack([jac[:3], w * jac[3:]])
            err = np.concatenate([e_pos, w * e_rot])
        else:
            jac, err = jac[:3], e_pos
        if opts.method == "jacobian_transpose":
            step = jac.T @ err
            gain = opts.transpose_gain
            if gain <= 0:
                jjte = jac @ step
                denom = float(jjte @ jjte)
                gain = float(err @ jjte) / denom if denom > 1e-18 else 0.0
            dq = gain * step
        else:
            lam2 = opts.damping ** 2
            dq = jac.T @ np.linalg.solve(jac @ jac.T + lam2 * np.eye(jac.shape[0]), err)
        dq = opts.step_size * dq
        if opts.max_step > 0:
            biggest = float(np.max(np.abs(dq))) if dq.size else 0.0
            if biggest > opts.max_step:
                dq *= opts.max_step / biggest
        dv = np.zeros(nv)
        dv[active] = dq
        q = integrate(robot, q, dv)
        if opts.enforce_joint_limits:
            q = _clamp_limits(robot, q)
    _, best_q, pe, oe, it = best
    result_q = best_q if opts.apply_best_on_failure else q
    if not opts.apply_best_on_failure:
        e_pos, e_rot = _errors(robot, q, link, point, target_position, target_rot, base)
        pe, oe = float(np.linalg.norm(e_pos)), float(np.linalg.norm(e_rot))
    return IKResult(result_q, False, opts.max_iterations, pe, oe,
                    f"did not converge after {opts.max_iterations} iterations: residual position error {pe:.6g}"
                    + (f", orientation error {oe:.6g} rad" if target_rot is not None else "")
                    + " (target unreachable or too few iterations)", history)
