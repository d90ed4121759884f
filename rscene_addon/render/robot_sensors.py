"""What robots sense, and what no sensor sees: its own mount (RaiSim's objectId/localId rule).

* :func:`robot_specs`: a :class:`~rscene_addon.products.plan.SensorSpec` for every sensor object ``blender.robot_sensors``
  put on a robot's links (``source="robot"``), from the robot's sensor sets (``robots.sensors``): its
  resolution, rate, noise and lidar pattern, and ``robot``, ``set``, ``link`` in the manifest. The scene's
  ``rscene_sensor_resolution_scale`` (a float custom property, default 1) scales every robot sensor's
  image (e.g. 0.1 for a quick look). The pose is the sensor object's: it rides on its link.
* :func:`owner_objects`: the objects a sensor is mounted on: a robot sensor's link (its own geometry, not
  the robot's other links, which stay visible as on the real robot), a ``sensor`` record's parent body
  (an AirSim drone's hull) with the parts under it. Lidar and depth rays pass through them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import bpy

from ..blender import robots as rb
from ..blender.robot_sensors import SENSOR_KEY, robot_label, sensor_objects
from ..robots.sensors import robot_sensors
from ..sensors.intrinsics import CameraIntrinsics
from ..products import plan as plan_mod
from .poses import GL_TO_RAISIM, PoseSource

__all__ = ["SCALE_KEY", "RobotSensorSpec", "owner_objects", "pose_source", "robot_specs"]

SCALE_KEY = "rscene_sensor_resolution_scale"
_PRODUCTS = {"rgb": ("rgb",), "depth": ("depth",), "lidar": ("lidar",), "imu": ("imu",)}


@dataclass(frozen=True)
class RobotSensorSpec(plan_mod.SensorSpec):
    """A spec whose manifest entry also names the robot, sensor set and link (and RaiSim's numbers)."""

    mount_info: dict = field(default_factory=dict)

    def properties(self) -> dict:
        props = super().properties()
        props.update(self.mount_info)
        return props


def _scale(bl_scene) -> float:
    try:
        value = float(bl_scene.get(SCALE_KEY, 1.0))
    except (TypeError, ValueError):
        value = 1.0
    return value if value > 0 else 1.0


def _robot_roots(bl_scene) -> list:
    return [ob for ob in bl_scene.objects if rb.is_robot_root(ob)]


def robot_specs(bl_scene) -> list[plan_mod.SensorSpec]:
    """Specs of the robots' own sensors in ``bl_scene`` (robots in object-name order, sensors in file order)."""
    scale = _scale(bl_scene)
    specs = []
    for root in sorted(_robot_roots(bl_scene), key=lambda ob: ob.name):
        objects = sensor_objects(root)
        if not objects:
            continue
        label = robot_label(root)
        for sensor in robot_sensors(rb.robot_of(root), scale):
            ob = objects.get((sensor.link, sensor.name))
            if ob is None:
                continue
            intrinsics = None
            if sensor.kind in ("rgb", "depth"):
                intrinsics = CameraIntrinsics.from_fov(sensor.width, sensor.height, sensor.vertical_fov_deg,
                                                       sensor.horizontal_fov_deg)
            info = {"robot": label, "sensor_set": sensor.set_name, "link": sensor.link,
                    "sensor_set_file": sensor.file, "raisim": dict(sensor.raisim)}
            if scale != 1.0:
                info["resolution_scale"] = scale
            specs.append(RobotSensorSpec(
                name=ob[SENSOR_KEY], kind=sensor.kind, source="robot", products=_PRODUCTS[sensor.kind],
                object_name=ob.name, intrinsics=intrinsics, near=sensor.near, far=sensor.far,
                noise_mean=sensor.noise_mean, noise_stddev=sensor.noise_stddev, update_rate=sensor.update_rate,
                parent=f"{label}/{sensor.link}", lidar=dict(sensor.lidar), mount_info=info))
    return specs


def pose_source(spec) -> PoseSource | None:
    """The sensor object of a robot spec (a camera's axes turned back into RaiSim's); None for other specs."""
    if spec.source != "robot":
        return None
    ob = bpy.data.objects.get(spec.object_name)
    if ob is None:
        raise ValueError(f"{spec.name}: its sensor object {spec.object_name!r} is gone")
    return PoseSource(ob, GL_TO_RAISIM if ob.type == "CAMERA" else None, description=f"robot sensor {ob.name!r}")


def _is_link(ob) -> bool:
    return rb.LINK_KEY in ob.keys()


def _own_parts(mount) -> set:
    """``mount`` and what hangs under it, without other links (or robots) below it."""
    names, stack = {mount.name}, list(mount.children)
    while stack:
        ob = stack.pop()
        if _is_link(ob) or rb.is_robot_root(ob):
            continue
        names.add(ob.name)
        stack.extend(ob.children)
    return names


def owner_objects(spec, source: PoseSource) -> frozenset:
    """Names of the objects ``spec``'s rays ignore: none for cameras and Blender cameras, nor for a sensor
    mounted on nothing."""
    ob = source.obj if source is not None else None
    if spec.source not in ("robot", "sensor") or ob is None:
        return frozenset()
    own_sensor = SENSOR_KEY in ob.keys() or "rscene_sensor_kind" in ob.keys()
    mount = ob.parent if own_sensor else ob   # else: the record's parent body itself
    if mount is None:
        return frozenset()
    if rb.is_robot_root(mount) and not _is_link(mount):
        return frozenset({mount.name})  # a sensor on a robot's root object: not its links
    return frozenset(_own_parts(mount))


class OwnerCasters:
    """Lidar casters over the frame's geometry without a sensor's mount: one gatherer and caster cache per
    set of owner names (sensors on the same body share them); sensors mounted on nothing use ``shared``."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self._by_owner: dict = {}

    def caster(self, owners: frozenset, depsgraph, entities, shared):
        """The caster for a sensor whose rays ignore ``owners``; ``shared()`` gives the scene's own."""
        if not owners:
            return shared()
        from .caster import CasterCache, TriangleGatherer

        gather, cache = self._by_owner.setdefault(owners, (TriangleGatherer(exclude=owners),
                                                           CasterCache(self.backend)))
        return cache.caster_for(gather(depsgraph, entities))
