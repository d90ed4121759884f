"""Generalized coordinates back from link poses: the inverse of ``kinematics.forward_kinematics`` per frame.

A simulation records every link's world pose; an animation rig wants joint values. For each movable joint
``motion(q) = (parent @ origin)^-1 @ child @ child_offset^-1``: a revolute joint's angle is read about its
axis (unwrapped over frames, the first frame within a turn of ``reference``), a prismatic joint's travel
along its axis, a spherical joint's quaternion (kept in one hemisphere frame to frame), a floating base's
pose from the root link.
"""
from __future__ import annotations

import numpy as np

from ..base.spatial import matrix_to_quat
from .robot import Robot

__all__ = ["configuration_from_poses"]


def _continuous_quaternions(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    q = q.copy()
    if np.dot(q[0], reference) < 0:
        q[0] = -q[0]
    for f in range(1, len(q)):
        if np.dot(q[f], q[f - 1]) < 0:
            q[f] = -q[f]
    return q


def configuration_from_poses(robot: Robot, poses: dict, reference=None) -> np.ndarray:
    """(F, gc_dim) generalized coordinates of ``robot`` from ``poses`` {link: (F, 4, 4) world transforms}.

    ``reference`` (gc_dim,): the configuration the first frame is nearest to (angles are only known up to a
    turn; default the zero configuration); joints whose links are missing from ``poses`` keep it."""
    some = next(iter(poses.values()))
    frames = len(some)
    reference = robot.zero_configuration() if reference is None else np.asarray(reference, dtype=float)
    q = np.tile(reference, (frames, 1))
    slices = robot.gc_slices()
    if robot.floating_base and robot.root in poses:
        root = np.asarray(poses[robot.root])
        q[:, 0:3] = root[:, :3, 3]
        q[:, 3:7] = _continuous_quaternions(matrix_to_quat(root[:, :3, :3]), reference[3:7])
    for name in robot.movable_joints():
        joint = robot.joints[name]
        if joint.parent not in poses or joint.child not in poses:
            continue
        frame = np.asarray(poses[joint.parent]) @ joint.origin
        motion = np.linalg.inv(frame) @ np.asarray(poses[joint.child]) @ np.linalg.inv(joint.child_offset)
        gcs = slices[name]
        axis = np.asarray(joint.axis, dtype=float)
        axis = axis / (np.linalg.norm(axis) or 1.0)
        if joint.type in ("revolute", "continuous"):
            r = motion[:, :3, :3]
            sin = 0.5 * ((r[:, 2, 1] - r[:, 1, 2]) * axis[0] + (r[:, 0, 2] - r[:, 2, 0]) * axis[1]
                         + (r[:, 1, 0] - r[:, 0, 1]) * axis[2])
            # R - R^T = 2 sin [axis]x and trace R = 1 + 2 cos for a rotation about the axis
            cos = 0.5 * (np.trace(r, axis1=1, axis2=2) - 1.0)
            angle = np.unwrap(np.arctan2(sin, cos))
            angle += 2.0 * np.pi * np.round((reference[gcs.start] - angle[0]) / (2.0 * np.pi))
            q[:, gcs.start] = angle
        elif joint.type == "prismatic":
            q[:, gcs.start] = motion[:, :3, 3] @ axis
        elif joint.type == "spherical":
            q[:, gcs] = _continuous_quaternions(matrix_to_quat(motion[:, :3, :3]), reference[gcs])
        elif joint.type == "floating":
            q[:, gcs.start:gcs.start + 3] = motion[:, :3, 3]
            q[:, gcs.start + 3:gcs.start + 7] = _continuous_quaternions(
                matrix_to_quat(motion[:, :3, :3]), reference[gcs.start + 3:gcs.start + 7])
        else:
            raise ValueError(f"joint {name!r}: {joint.type} joints are not recovered from poses")
    return q
