"""Forward kinematics and geometric Jacobians of a ``Robot`` over RaiSim-ordered generalized coordinates.

``forward_kinematics(robot, q)`` returns ``{link: 4x4 world transform}``; ``q`` may also be a batch ``(B, nq)``,
giving ``(B, 4, 4)`` per link (the joint motions are computed for the whole batch at once).
``jacobian(robot, q, link, point)`` is the 6 x nv geometric Jacobian (rows: linear velocity of the point,
then angular velocity, world frame) with columns in the generalized-velocity order of ``Robot.dof_slices``.
``integrate(robot, q, dv)`` moves ``q`` by a generalized-velocity step (quaternions stay unit).
"""
from __future__ import annotations

import numpy as np

from .robot import Joint, Robot
from ..base.spatial import axis_angle_matrix, quat_multiply, quat_normalize, quat_to_matrix, skew

__all__ = ["forward_kinematics", "frame_transform", "integrate", "jacobian", "joint_frames", "joint_motion",
           "plane_axes"]


def plane_axes(normal) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors spanning the plane normal to ``normal`` (a planar joint's x and y directions)."""
    n = np.asarray(normal, dtype=float)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(n, u)


def _as_batch(q, robot: Robot) -> tuple[np.ndarray, bool]:
    q = np.asarray(q, dtype=float)
    single = q.ndim == 1
    q2 = q[None, :] if single else q
    if q2.ndim != 2 or q2.shape[1] != robot.gc_dim:
        raise ValueError(f"generalized coordinate has {q.shape[-1] if q.ndim else 0} values; "
                         f"{robot.name or 'the robot'} needs {robot.gc_dim}")
    return q2, single


def _pose(position, quat) -> np.ndarray:
    out = np.tile(np.eye(4), (position.shape[0], 1, 1))
    out[:, :3, :3] = quat_to_matrix(quat)
    out[:, :3, 3] = position
    return out


def joint_motion(joint: Joint, values: np.ndarray) -> np.ndarray:
    """(B, gc_dim) joint coordinates -> (B, 4, 4) motion transforms."""
    b = values.shape[0]
    out = np.tile(np.eye(4), (b, 1, 1))
    kind = joint.type
    if kind in ("revolute", "continuous"):
        out[:, :3, :3] = axis_angle_matrix(joint.axis, values[:, 0])
    elif kind == "prismatic":
        out[:, :3, 3] = values[:, :1] * joint.axis
    elif kind == "spherical":
        out[:, :3, :3] = quat_to_matrix(values[:, :4])
    elif kind == "floating":
        out = _pose(values[:, :3], values[:, 3:7])
    elif kind == "planar":
        u, v = plane_axes(joint.axis)
        out[:, :3, 3] = values[:, :1] * u + values[:, 1:2] * v
        out[:, :3, :3] = axis_angle_matrix(joint.axis, values[:, 2])
    return out


def forward_kinematics(robot: Robot, q, base: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """World transform of every link (``base``: optional 4x4 placing the robot's root frame)."""
    q2, single = _as_batch(q, robot)
    b = q2.shape[0]
    slices = robot.gc_slices()
    root = np.tile(np.eye(4) if base is None else np.asarray(base, dtype=float), (b, 1, 1))
    if robot.floating_base:
        root = root @ _pose(q2[:, 0:3], q2[:, 3:7])
    frames = {robot.root: root}
    for link in robot.link_order()[1:]:
        joint = robot.parent_joint(link)
        local = joint.origin
        if joint.type != "fixed":
            local = local @ joint_motion(joint, q2[:, slices[joint.name]])
        frames[link] = frames[joint.parent] @ local @ joint.child_offset
    return {k: v[0] for k, v in frames.items()} if single else frames


def frame_transform(robot: Robot, q, link: str, base: np.ndarray | None = None) -> np.ndarray:
    """World transform of one link (only its chain is evaluated)."""
    q2, single = _as_batch(q, robot)
    slices = robot.gc_slices()
    chain = _chain(robot, link)
    t = np.tile(np.eye(4) if base is None else np.asarray(base, dtype=float), (q2.shape[0], 1, 1))
    if robot.floating_base:
        t = t @ _pose(q2[:, 0:3], q2[:, 3:7])
    for joint in chain:
        local = joint.origin
        if joint.type != "fixed":
            local = local @ joint_motion(joint, q2[:, slices[joint.name]])
        t = t @ local @ joint.child_offset
    return t[0] if single else t


def _chain(robot: Robot, link: str) -> list[Joint]:
    if link not in robot.links:
        raise KeyError(f"no link named {link!r}")
    chain = []
    joint = robot.parent_joint(link)
    while joint is not None:
        chain.append(joint)
        joint = robot.parent_joint(joint.parent)
    return chain[::-1]


def joint_frames(robot: Robot, q, base: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """World transform of every joint frame before its motion (``parent frame @ origin``), one configuration."""
    frames = forward_kinematics(robot, q, base)
    return {name: frames[j.parent] @ j.origin for name, j in robot.joints.items()}


def jacobian(robot: Robot, q, link: str, point=(0.0, 0.0, 0.0), base: np.ndarray | None = None) -> np.ndarray:
    """6 x nv geometric Jacobian of ``point`` (in ``link``'s frame) on ``link``: [linear; angular], world frame."""
    q = np.asarray(q, dtype=float)
    if q.ndim != 1:
        raise ValueError("jacobian takes one configuration")
    q2, _ = _as_batch(q, robot)
    slices = robot.gc_slices()
    dofs = robot.dof_slices()
    jac = np.zeros((6, robot.dof_dim))
    world = np.eye(4) if base is None else np.asarray(base, dtype=float)
    if robot.floating_base:
        world = world @ _pose(q2[:, 0:3], q2[:, 3:7])[0]
    chain = _chain(robot, link)
    # transform of every joint frame along the chain, then the point
    frames = []
    t = world
    for joint in chain:
        jf = t @ joint.origin
        motion = joint_motion(joint, q2[:, slices[joint.name]])[0] if joint.type != "fixed" else np.eye(4)
        frames.append((joint, jf, motion))
        t = jf @ motion @ joint.child_offset
    p = (t @ np.append(np.asarray(point, dtype=float), 1.0))[:3]
    base_rot = (np.eye(4) if base is None else np.asarray(base, dtype=float))[:3, :3]
    if robot.floating_base:
        col = dofs[""].start
        origin = world[:3, 3]
        jac[:3, col:col + 3] = base_rot
        jac[3:, col + 3:col + 6] = base_rot
        jac[:3, col + 3:col + 6] = -skew(p - origin) @ base_rot
    for joint, jf, motion in frames:
        if joint.type == "fixed":
            continue
        col = dofs[joint.name].start
        rot = jf[:3, :3]
        anchor = jf[:3, 3]
        kind = joint.type
        if kind in ("revolute", "continuous"):
            a = rot @ joint.axis
            jac[:3, col] = np.cross(a, p - anchor)
            jac[3:, col] = a
        elif kind == "prismatic":
            jac[:3, col] = rot @ joint.axis
        elif kind == "spherical":
            jac[3:, col:col + 3] = rot
            jac[:3, col:col + 3] = -skew(p - anchor) @ rot
        elif kind == "floating":
            centre = (jf @ motion)[:3, 3]
            jac[:3, col:col + 3] = rot
            jac[3:, col + 3:col + 6] = rot
            jac[:3, col + 3:col + 6] = -skew(p - centre) @ rot
        elif kind == "planar":
            u, v = plane_axes(joint.axis)
            n = rot @ joint.axis
            centre = (jf @ motion)[:3, 3]
            jac[:3, col] = rot @ u
            jac[:3, col + 1] = rot @ v
            jac[:3, col + 2] = np.cross(n, p - centre)
            jac[3:, col + 2] = n
    return jac


def _quat_exp(omega) -> np.ndarray:
    angle = float(np.linalg.norm(omega))
    if angle < 1e-12:
        return quat_normalize(np.array([1.0, *(0.5 * np.asarray(omega))]))
    axis = np.asarray(omega) / angle
    return np.array([np.cos(angle / 2), *(np.sin(angle / 2) * axis)])


def integrate(robot: Robot, q, dv) -> np.ndarray:
    """``q`` moved by the generalized-velocity step ``dv`` (multi-dof velocities in the parent frame)."""
    q = np.array(q, dtype=float)
    dv = np.asarray(dv, dtype=float)
    gcs, dofs = robot.gc_slices(), robot.dof_slices()
    for name, gs in gcs.items():
        ds = dofs[name]
        kind = "floating" if name == "" else robot.joints[name].type
        if kind == "floating":
            q[gs.start:gs.start + 3] += dv[ds.start:ds.start + 3]
            quat = quat_multiply(_quat_exp(dv[ds.start + 3:ds.start + 6]), q[gs.start + 3:gs.start + 7])
            q[gs.start + 3:gs.start + 7] = quat_normalize(quat)
        elif kind == "spherical":
            q[gs] = quat_normalize(quat_multiply(_quat_exp(dv[ds]), q[gs]))
        elif kind == "planar":
            # x, y are along the (unrotated) plane axes; theta about the normal
            q[gs] += dv[ds]
        else:
            q[gs] += dv[ds]
    return q
