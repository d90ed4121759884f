"""RaiSim sensor sets: the ``<sensor_set>`` files a URDF link names with ``sensor="realsense435.xml"``.

RaiSim (``Sensors.rst``) looks for the file beside the URDF, then in ``[urdf_dir]/sensor``,
``[urdf_dir]/sensors``, ``[urdf_dir]/..`` and ``[urdf_dir]/../sensors``. A set has an ``<origin>`` in the
link's frame and one ``<link>`` whose visuals, collisions and inertial belong to the link that names the
set (its geometry is drawn and collides with the robot), and ``<sensor>`` elements: ``rgb``/``depth``
cameras (horizontal fov, image size, clip, gaussian noise), ``imu`` (limits) and ``spinning_lidar`` (yaw and
pitch samples, pitch range, spin direction and rate, range), each at its own ``update_rate`` and origin.

``attach(reader, robot, link, node)`` is called by the URDF reader for a link with a ``sensor`` attribute: the
set's shapes go on the link (placed by the set's origin), the set on ``robot.sensor_sets``. A set file
that cannot be found is one warning naming the link, and the robot loads without it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..model import Diagnostic, FormatError
from .search_path import find_in

SEARCH_DIRS = ("", "sensor", "sensors", "..", os.path.join("..", "sensors"))
SENSOR_TYPES = ("rgb", "depth", "imu", "spinning_lidar")


@dataclass
class SetSensor:
    """One sensor of a set. ``origin``: 4x4 in the owning link's frame (the set's origin applied);
    ``params``: the numbers its type has (see the module docstring), by name."""
    name: str
    type: str
    origin: np.ndarray
    update_rate: float | None = None
    params: dict = field(default_factory=dict)


@dataclass
class SensorSet:
    name: str
    link: str
    file: str
    origin: np.ndarray
    sensors: list[SetSensor] = field(default_factory=list)


def find_sensor_file(name: str, urdf_dir: str) -> str | None:
    """The sensor set file ``name`` where RaiSim finds it, or None."""
    return find_in(name, urdf_dir, SEARCH_DIRS)


def attach(reader, robot, link, node) -> None:
    """Read the set ``node`` (a URDF ``<link>``) names and add it to ``link`` and ``robot.sensor_sets``."""
    from . import urdf

    ref = node.get("sensor", "") or ""
    path = find_sensor_file(ref, reader.dir)
    if path is None:
        robot.warnings.append(Diagnostic(reader.path, node.line, "link",
                                         f"link {link.name!r}: sensor set file {ref!r} not found beside the URDF "
                                         f"or in sensor/, sensors/, ../, ../sensors/"))
        return
    root = urdf.parse_xml_file(path)
    if root.tag != "sensor_set":
        raise FormatError(Diagnostic(path, root.line, root.tag, f"expected <sensor_set>, found <{root.tag}>"))
    sub = urdf._Reader(path, reader.resource_directory)
    placed = sub.origin(root)
    sensor_set = SensorSet(root.get("name", "") or os.path.splitext(os.path.basename(path))[0], link.name, path,
                           placed)
    body = root.find("link")
    if body is not None:
        for tag, shapes in (("visual", link.visuals), ("collision", link.collisions)):
            for child in body.findall(tag):
                shape = sub.shape(child, robot.materials)
                shape.origin = placed @ shape.origin
                shapes.append(shape)
        inertial = body.find("inertial")
        if inertial is not None and link.inertial is None:   # an empty mounting link takes the set's mass
            link.inertial = sub.inertial(inertial)
            link.inertial.origin = placed @ link.inertial.origin
        for sensor in body.findall("sensor"):
            sensor_set.sensors.append(_sensor(sub, sensor, placed))
    robot.sensor_sets.append(sensor_set)


def _sensor(reader, node, placed: np.ndarray) -> SetSensor:
    kind = (node.get("type", "") or "").strip()
    if kind not in SENSOR_TYPES:
        reader.fail(node, f"sensor type {kind!r}: expected one of {', '.join(SENSOR_TYPES)}")
    rate = reader.number(node, "update_rate")
    rate_node = node.find("update_rate")
    if rate is None and rate_node is not None and (rate_node.text or "").strip():
        rate = float(rate_node.text)
    params: dict = {}

    def take(child_tag, attrs, prefix=""):
        child = node.find(child_tag) if "/" not in child_tag else _path(node, child_tag)
        if child is None:
            return
        for attr in attrs:
            value = reader.number(child, attr)
            if value is not None:
                params[prefix + attr] = value

    if kind in ("rgb", "depth"):
        take("camera", ("horizontal_fov",))
        take("camera/image", ("width", "height"))
        take("camera/clip", ("near", "far"), "clip_")
        take("camera/noise", ("mean", "stddev"), "noise_")
    elif kind == "imu":
        take("limit", ("acc_limit", "ang_vel_limit"))
    else:
        take("yaw", ("samples",), "yaw_")
        take("pitch", ("samples", "min_angle", "max_angle"), "pitch_")
        take("spin", ("rate",), "spin_")
        take("range", ("min", "max"), "range_")
        spin = node.find("spin")
        params["spin_clockwise"] = bool(spin is not None and (spin.get("direction", "") or "").strip() == "clockwise")
    return SetSensor(node.get("name", "") or kind, kind, placed @ reader.origin(node), rate, params)


def _path(node, path: str):
    for tag in path.split("/"):
        node = node.find(tag) if node is not None else None
    return node
