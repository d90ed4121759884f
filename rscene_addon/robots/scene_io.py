"""Robots of a scene: load the URDF / MJCF an ``articulated`` record names and pose its links.

``robot_for_record(scene, record)`` reads the file named by the record's own ``sourcePath`` or else by its
``articulated_resource`` (``resourceId``), resolved with ``scene.resolve``; ``resourceDirectory`` and
``jointOrder`` likewise come from the record, else from the resource. ``posed_links(robot, gc)`` gives every
link's world transform; ``record_base_transform(record)`` is the record's position/quaternion as a 4x4.
"""
from __future__ import annotations

import numpy as np

from ..model import Diagnostic, FormatError
from .kinematics import forward_kinematics
from .model import Robot
from ..base.spatial import homogeneous, quat_to_matrix

__all__ = ["posed_links", "posed_links_for_record", "read_robot_file", "record_base_transform",
           "robot_for_record"]


def read_robot_file(path: str, resource_directory: str = "", joint_order=None) -> Robot:
    """A URDF or MJCF file (judged by its root element) as a Robot."""
    from ..formats import mjcf, urdf
    from ..formats.registry import detect
    fmt = detect(path)
    if fmt == "urdf":
        return urdf.read_robot(path, resource_directory, joint_order)
    if fmt == "mjcf":
        return mjcf.read_robot(path, resource_directory, joint_order)
    raise FormatError(Diagnostic(path, 0, "", f"not a URDF or MJCF robot file (found {fmt})"))


def _text(record, name: str) -> str:
    value = record.get(name, "") if record is not None else ""
    return str(value or "")


def robot_for_record(scene, record) -> Robot:
    """The Robot an ``articulated`` record instantiates (FormatError when it names no readable file)."""
    rid = _text(record, "resourceId")
    resource = next((r for r in scene.of("articulated_resource") if rid and (r.id == rid or r.get("name") == rid)),
                    None)
    source = _text(record, "sourcePath") or _text(resource, "sourcePath")
    if not source:
        raise FormatError(Diagnostic(scene.path or "<scene>", 0, "articulated",
                                     f"{record.path or record.id}: no sourcePath on the record and no "
                                     f"articulated_resource {_text(record, 'resourceId')!r} naming one"))
    path = scene.resolve(source)
    res_dir = _text(record, "resourceDirectory") or _text(resource, "resourceDirectory")
    if res_dir:
        res_dir = scene.resolve(res_dir)
    order = [str(n) for n in (record.get("jointOrder", None) or ())]
    if not order and resource is not None:
        order = [str(n) for n in (resource.get("jointOrder", None) or ())]
    return read_robot_file(path, res_dir, order or None)


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


def posed_links_for_record(scene, record, robot: Robot | None = None) -> dict[str, np.ndarray]:
    """``posed_links`` for an ``articulated`` record: its generalizedCoordinate, placed at its position."""
    robot = robot or robot_for_record(scene, record)
    gc = record.get("generalizedCoordinate", None)
    return posed_links(robot, () if gc is None else gc, record_base_transform(record))
