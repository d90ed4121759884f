"""Robots placed in a scene: ``posed_links(robot, gc)`` gives every link's world transform;
``record_configuration(robot, record)`` is where an ``articulated`` record puts its robot at frame 1, the one
rule Blender, the simulator and the renderer share. Reading the robot a record names is
:mod:`rscene_addon.formats.robot_files`.

The rule (RaiSim's: a root link named ``world`` is a fixed base, any other root floats):

- **Floating base**: the generalized coordinate's first seven values (x y z, w x y z) are the base link's
  pose in the world, as RaiSim's ``setGeneralizedCoordinate`` takes them. The record's position/quaternion
  say that same pose again (the spec's Cassie example repeats it), so they are not added to it; they place the
  robot only when the record has no generalizedCoordinate (the robot's default base pose, e.g. an MJCF body's
  ``pos``, is then taken relative to them). Where a file gives two different poses, the generalized
  coordinate wins.
- **Fixed base**: position/quaternion place the fixed root in the world (RaiSim's ``setBasePos``/
  ``setBaseOrientation``); the generalized coordinate holds the joints only.
"""
from __future__ import annotations

import numpy as np

from .kinematics import forward_kinematics
from .robot import Robot
from ..base.spatial import homogeneous, matrix_to_quat, quat_to_matrix

__all__ = ["posed_links", "record_base_transform", "record_configuration"]


def record_base_transform(record) -> np.ndarray:
    pos = record.get("position", (0.0, 0.0, 0.0)) or (0.0, 0.0, 0.0)
    quat = record.get("quaternion", (1.0, 0.0, 0.0, 0.0)) or (1.0, 0.0, 0.0, 0.0)
    return homogeneous(quat_to_matrix(np.asarray(quat, dtype=float)), np.asarray(pos, dtype=float))


def record_configuration(robot: Robot, record, strict: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(base (4, 4), q (gc_dim,))`` of an ``articulated`` record: the frame the robot's root hangs in and
    its generalized coordinate, by the rule above. A generalizedCoordinate of the wrong length raises
    ValueError (``strict=False``: it is ignored, as if the record had none)."""
    gc = record.get("generalizedCoordinate", None) if _has(record, "generalizedCoordinate") else None
    q = np.asarray(gc if gc is not None else (), dtype=float).ravel()
    placed = record_base_transform(record)
    if q.size and q.size != robot.gc_dim:
        if strict:
            raise ValueError(f"{robot.name or 'the robot'} needs {robot.gc_dim} generalized coordinates, "
                             f"got {q.size}")
        q = np.zeros(0)
    if not robot.floating_base:
        return placed, (q if q.size else robot.default_configuration())
    if not q.size:
        q = robot.default_configuration()
        start = placed @ homogeneous(quat_to_matrix(q[3:7]), q[0:3])
        q[0:3], q[3:7] = start[:3, 3], matrix_to_quat(start[:3, :3])
    return np.eye(4), q


def _has(record, name: str) -> bool:
    has = getattr(record, "has", None)
    return bool(has(name)) if has is not None else record.get(name, None) is not None


def posed_links(robot: Robot, generalized_coordinate=None, base: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """World transform of every link at ``generalized_coordinate`` (empty/None: the default configuration;
    a shorter/longer vector raises ValueError)."""
    q = np.asarray(generalized_coordinate if generalized_coordinate is not None else (), dtype=float).ravel()
    if q.size == 0:
        q = robot.default_configuration()
    return forward_kinematics(robot, q, base)
