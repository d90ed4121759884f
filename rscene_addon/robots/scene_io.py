"""Robots placed in a scene: ``posed_links(robot, gc)`` gives every link's world transform;
``record_base_transform(record)`` is an ``articulated`` record's position/quaternion as a 4x4. Reading the
robot a record names is :mod:`rscene_addon.formats.robot_files`.
"""
from __future__ import annotations

import numpy as np

from .kinematics import forward_kinematics
from .robot import Robot
from ..base.spatial import homogeneous, quat_to_matrix

__all__ = ["posed_links", "record_base_transform"]


def record_base_transform(record) -> np.ndarray:
    pos = record.get("position", (0.0, 0.0, 0.0)) or (0.0, 0.0, 0.0)
    quat = record.get("quaternion", (1.0, 0.0, 0.0, 0.0)) or (1.0, 0.0, 0.0, 0.0)
    return homogeneous(quat_to_matrix(np.asarray(quat, dtype=float)), np.asarray(pos, dtype=float))


def posed_links(robot: Robot, generalized_coordinate=None, base: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """World transform of every link at ``generalized_coordinate`` (empty/None: the default configuration;
    a shorter/longer vector raises ValueError)."""
    q = np.asarray(generalized_coordinate if generalized_coordinate is not None else (), dtype=float).ravel()
    if q.size == 0:
        q = robot.default_configuration()
    return forward_kinematics(robot, q, base)
