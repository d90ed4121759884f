"""A robot's own sensors: RaiSim sensor sets (``formats.sensor_sets``) as scene sensors (pure).

Each :class:`~rscene_addon.formats.sensor_sets.SetSensor` of ``robot.sensor_sets`` becomes one
:class:`RobotSensor`: the kind the renderer knows (``rgb``, ``depth``, ``imu``, ``lidar``), its mount in
the link's frame (RaiSim sensor frame: +x forward, +z up) and its numbers mapped from RaiSim's:

* ``rgb``/``depth``: ``horizontal_fov`` (rad) -> degrees; square pixels, so the vertical field of view
  is ``2 atan(tan(h/2) height/width)``; ``clip near/far``; gaussian ``noise mean/stddev``.
* ``imu``: ``update_rate``; ``acc_limit``/``ang_vel_limit`` are kept for the manifest.
* ``spinning_lidar``: ``pitch samples`` rings from ``min_angle`` to ``max_angle`` (rad), ``yaw samples``
  columns per revolution, the head turning at ``spin rate`` revolutions per second (RaiSim's
  ``update_rate`` is how often it publishes a part of the scan, kept for the manifest), ``spin
  direction="clockwise"`` (seen from above; anything else counter-clockwise), ``range min/max``.

These sensors live in the URDF and its sensor files: they are never records of the ``.rscene`` (export
leaves them there). ``scale`` shrinks every image (a quick look, a test) keeping the field of view.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["KINDS", "RobotSensor", "robot_sensors", "sensor_path"]

KINDS = {"rgb": "rgb", "depth": "depth", "imu": "imu", "spinning_lidar": "lidar"}
DEFAULT_RATE = {"rgb": 30.0, "depth": 30.0, "imu": 200.0, "spinning_lidar": 10.0}


@dataclass(frozen=True)
class RobotSensor:
    """One sensor of a robot's sensor set. ``mount``: 4x4 in ``link``'s frame."""

    name: str            # the sensor's own name in its set ("color", "lidar")
    set_name: str        # the <sensor_set name=...>
    link: str            # the link that names the set (sensor="...")
    file: str            # the sensor set file
    kind: str            # rgb | depth | imu | lidar
    mount: np.ndarray
    update_rate: float
    width: int = 0
    height: int = 0
    horizontal_fov_deg: float = 0.0
    vertical_fov_deg: float = 0.0
    near: float = 0.05
    far: float = 100.0
    noise_mean: float = 0.0
    noise_stddev: float = 0.0
    lidar: dict = field(default_factory=dict)
    raisim: dict = field(default_factory=dict)  # RaiSim's own numbers, for the manifest

    def path(self, robot_label: str) -> str:
        return sensor_path(robot_label, self.link, self.name)


def sensor_path(robot_label: str, link: str, name: str) -> str:
    """The sensor's name in the render's manifest and folders: ``robot/link/sensor``."""
    return "/".join(part.strip("/") for part in (robot_label, link, name) if part and part.strip("/"))


def _positive(value, default: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) and value > 0 else default


def _camera(sensor, scale: float) -> dict:
    p = sensor.params
    width = max(1, round(int(p.get("width", 640)) * scale))
    height = max(1, round(int(p.get("height", 480)) * scale))
    h = _positive(p.get("horizontal_fov"), math.radians(60.0))
    v = 2.0 * math.atan(math.tan(h / 2.0) * height / width)
    near = _positive(p.get("clip_near"), 0.05)
    return dict(width=width, height=height, horizontal_fov_deg=math.degrees(h), vertical_fov_deg=math.degrees(v),
                near=near, far=max(_positive(p.get("clip_far"), 100.0), near * 1.001),
                noise_mean=float(p.get("noise_mean", 0.0)), noise_stddev=max(float(p.get("noise_stddev", 0.0)), 0.0))


def _lidar(sensor) -> tuple[float, dict]:
    p = sensor.params
    lo, hi = float(p.get("pitch_min_angle", 0.0)), float(p.get("pitch_max_angle", 0.0))
    revolutions = _positive(p.get("spin_rate"), _positive(sensor.update_rate, DEFAULT_RATE["spinning_lidar"]))
    return revolutions, {
        "channels": int(p.get("pitch_samples", 1)),
        "samples_per_revolution": int(p.get("yaw_samples", 0)),
        "vertical_fov_min_deg": math.degrees(min(lo, hi)),
        "vertical_fov_max_deg": math.degrees(max(lo, hi)),
        "vertical_fov_deg": math.degrees(abs(hi - lo)),
        "horizontal_fov_deg": 360.0,
        "min_range": max(float(p.get("range_min", 0.0)), 0.0),
        "max_range": max(float(p.get("range_max", 0.0)), 0.0),
        "clockwise": bool(p.get("spin_clockwise", False)),
    }


def robot_sensors(robot, scale: float = 1.0) -> list[RobotSensor]:
    """Every sensor of ``robot.sensor_sets``, in file order. ``scale`` (> 0) multiplies image sizes."""
    if not scale > 0:
        raise ValueError(f"sensor resolution scale must be positive, got {scale}")
    out = []
    for sensor_set in getattr(robot, "sensor_sets", ()):
        for sensor in sensor_set.sensors:
            kind = KINDS.get(sensor.type)
            if kind is None:
                continue
            rate = _positive(sensor.update_rate, DEFAULT_RATE[sensor.type])
            raisim = {"type": sensor.type, "update_rate_hz": sensor.update_rate, **sensor.params}
            extra: dict = {}
            if kind in ("rgb", "depth"):
                extra = _camera(sensor, scale)
            elif kind == "lidar":
                rate, extra = _lidar(sensor)
                extra = {"lidar": extra}
            out.append(RobotSensor(sensor.name, sensor_set.name, sensor_set.link, sensor_set.file, kind,
                                   np.asarray(sensor.origin, dtype=float), rate, raisim=raisim, **extra))
    return out
