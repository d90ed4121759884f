"""Robots of a scene read from their files: the URDF / MJCF an ``articulated`` record names.

``robot_for_record(scene, record)`` reads the file :func:`rscene_addon.scene_geometry.robot_files.robot_source`
finds; ``posed_links_for_record`` poses its links where the record puts them.
"""
from __future__ import annotations

import numpy as np

from ..model import Diagnostic, FormatError
from ..robots.robot import Robot
from ..robots.scene_io import posed_links, record_configuration
from ..scene_geometry.robot_files import robot_source
from . import mjcf, urdf, urdf_modules
from .registry import detect

__all__ = ["posed_links_for_record", "read_robot_file", "robot_for_record"]


def read_robot_file(path: str, resource_directory: str = "", joint_order=None, modules=()) -> Robot:
    """A URDF or MJCF file (judged by its root element) as a Robot; a URDF with its ``modules`` inserted
    (``urdf_modules``)."""
    fmt = detect(path)
    if fmt == "urdf" and modules:
        from .atomic import read_source
        text = urdf_modules.with_modules(read_source(path), path, modules, resource_directory)
        robot = urdf.loads_robot(text, path, resource_directory)
        if joint_order:
            robot.joint_order = joint_order
        return robot
    if fmt == "urdf":
        return urdf.read_robot(path, resource_directory, joint_order)
    if fmt == "mjcf":
        return mjcf.read_robot(path, resource_directory, joint_order)
    raise FormatError(Diagnostic(path, 0, "", f"not a URDF or MJCF robot file (found {fmt})"))


def robot_for_record(scene, record) -> Robot:
    """The Robot an ``articulated`` record instantiates (FormatError when it names no readable file)."""
    source = robot_source(scene, record)
    return read_robot_file(source.path, source.resource_directory, list(source.joint_order) or None, source.modules)


def posed_links_for_record(scene, record, robot: Robot | None = None) -> dict[str, np.ndarray]:
    """``posed_links`` for an ``articulated`` record: its generalizedCoordinate, placed at its position."""
    robot = robot or robot_for_record(scene, record)
    base, q = record_configuration(robot, record)
    return posed_links(robot, q, base)
