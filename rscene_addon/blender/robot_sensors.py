"""A robot's own sensors (RaiSim sensor sets, ``robots.sensors``) as Blender objects on its links.

``add_robot_sensors(builder, root)`` runs after ``robots.build_robot``: one object per sensor of the
robot's sensor sets, parented to the object of the link that names the set, so it rides along with the
robot's baked motion and the renderer reads its pose like any other object's. Cameras (``rgb``,
``depth``) are Blender cameras (looking along their -Z; the RaiSim frame is turned by
``R_RAISIM_FROM_OPENGL``), lidars and IMUs empties in the RaiSim sensor frame (+x forward, +z up).

Each object keeps ``rscene_robot_sensor`` (its path ``robot/link/sensor``), ``rscene_sensor_kind``,
``rscene_sensor_set``, ``rscene_parent_link`` and ``rscene_sensor_name``. These objects carry no
``rscene`` record: the sensors live in the URDF and its sensor files, and export writes nothing for them
(an edited one is named in an export warning).
"""
from __future__ import annotations

import os

import bpy
import numpy as np
from mathutils import Matrix

from ..base.spatial import R_RAISIM_FROM_OPENGL
from ..robots.sensors import robot_sensors
from . import conventions as cv
from . import robots as rb
from .extract import mark_built

__all__ = ["SENSOR_KEY", "add_robot_sensors", "robot_label", "sensor_objects"]

SENSOR_KEY = "rscene_robot_sensor"
_RAISIM_TO_GL = np.eye(4)
_RAISIM_TO_GL[:3, :3] = R_RAISIM_FROM_OPENGL


def robot_label(root) -> str:
    """The robot's name in sensor paths: its record's path tail, else the robot's name, else the object's."""
    name = root.name
    props = getattr(root, "rscene", None)
    path = getattr(props, "path", "") if props is not None else ""
    return os.path.basename(str(path).rstrip("/")) or root.get("rscene_robot_name") or name


def add_robot_sensors(builder, root) -> list:
    """Sensor objects for every sensor of ``root``'s robot (none for a root that is not a robot)."""
    if root is None or not rb.is_robot_root(root):
        return []
    robot = rb.robot_of(root)
    links = rb.link_objects(root)
    label = robot_label(root)
    made = []
    for sensor in robot_sensors(robot):
        link_ob = links.get(sensor.link)
        if link_ob is None:
            builder.warn(f"{label}: sensor {sensor.name!r} of set {sensor.set_name!r}: link {sensor.link!r} "
                         "has no object; not added")
            continue
        name = f"{label}:{sensor.link}/{sensor.name}"
        if sensor.kind in ("rgb", "depth"):
            cam = bpy.data.cameras.new(name)
            cv.set_camera_fov(cam, sensor.vertical_fov_deg, sensor.horizontal_fov_deg)
            cam.clip_start = sensor.near
            cam.clip_end = sensor.far
            ob = bpy.data.objects.new(name, cam)
            local = sensor.mount @ _RAISIM_TO_GL
            ob["rscene_resolution"] = (sensor.width, sensor.height)
        else:
            ob = bpy.data.objects.new(name, None)
            ob.empty_display_type = "SINGLE_ARROW" if sensor.kind == "lidar" else "PLAIN_AXES"
            ob.empty_display_size = 0.08
            local = sensor.mount
        ob.parent = link_ob
        ob.matrix_parent_inverse = Matrix.Identity(4)
        ob.matrix_basis = Matrix(np.asarray(local, dtype=float).tolist())
        ob[SENSOR_KEY] = sensor.path(label)
        mark_built(ob)  # export cannot write a moved robot sensor (it lives in the robot's files): it says so
        ob["rscene_sensor_kind"] = sensor.kind
        ob["rscene_sensor_set"] = sensor.set_name
        ob["rscene_sensor_name"] = sensor.name
        ob["rscene_parent_link"] = sensor.link
        builder.assets.pending_children.append(ob)
        made.append(ob)
    return made


def sensor_objects(root) -> dict[tuple[str, str], bpy.types.Object]:
    """``{(link, sensor name): object}`` of a robot root's sensor objects."""
    return {(ob["rscene_parent_link"], ob["rscene_sensor_name"]): ob
            for ob in root.children_recursive if SENSOR_KEY in ob.keys()}
