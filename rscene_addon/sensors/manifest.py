"""Output naming and the JSON manifest describing every file a sensor run wrote.

Files live at ``{sensor}/{layer}_{frame:05d}.{ext}`` relative to the output root, where
``{sensor}`` is :func:`safe_sensor_name` of the sensor's RaiSim path.

The manifest (:class:`Manifest`) lists per sensor its kind, projection (perspective: resolution, ``K``;
orthographic: resolution, the affine ``P`` and no ``K``) and OpenGL projection,
and per frame the camera-to-world extrinsics and each output file (layer, relative path, array
shape, dtype, units). ``to_json`` is deterministic: keys sorted, frames sorted by number, outputs
by layer, so the same content gives the same bytes whatever order it was added in.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from ..base.atomic import write_text_atomic
from ..base.spatial import R_OPENCV_FROM_OPENGL

__all__ = ["MANIFEST_FORMAT", "Manifest", "output_path", "safe_sensor_name"]

MANIFEST_FORMAT = "rscene_addon.sensor_manifest"
MANIFEST_VERSION = 1

CONVENTIONS = {
    "units": "SI: metres, seconds, radians unless a field says otherwise",
    "world": "right-handed, +z up",
    "quaternion_order": "w x y z",
    "pixel_origin": "top-left image corner; pixel (row i, column j) has its centre at (j + 0.5, i + 0.5)",
    "K": "OpenCV pinhole matrix: u = fx x / z + cx, v = fy y / z + cy in the OpenCV camera frame",
    "orthographic": "projection 'orthographic' has no K (intrinsics null); its P (3x4) maps OpenCV camera "
                    "points to pixels: [u, v, 1] = P [x, y, z, 1], i.e. u = x / pixel_size + cx, "
                    "v = y / pixel_size + cy; depth is the distance along +z from the camera plane",
    "camera_to_world_opencv": "4x4, maps camera points (+x right, +y down, +z forward) to world",
    "camera_to_world_opengl": "4x4, maps camera points (+x right, +y up, -z forward; Blender) to world",
    "opengl_projection": "4x4 OpenGL clip matrix; NDC x, y, z: -1..1 = left..right, bottom..top, near..far",
    "frames": "inclusive frame numbers",
}

_SAFE_CHARS = re.compile(r"[A-Za-z0-9_-]")
_LAYER = re.compile(r"[A-Za-z0-9_-]+")
_EXT = re.compile(r"[A-Za-z0-9]+")


def safe_sensor_name(name: str) -> str:
    """Filesystem-safe, collision-free folder name for a sensor path.

    ``/World/Robots/Cam`` -> ``World.Robots.Cam``: the leading ``/`` is dropped (a name without one
    is read as rooted, so ``World/Cam`` is the same sensor), ``/`` becomes ``.``, letters, digits,
    ``_`` and ``-`` stay, and every other byte of the UTF-8 name (``.`` and ``%`` included) becomes
    ``%XX`` (upper-case hex). The mapping is injective, so distinct paths never share a folder, and
    the result never starts with ``.``. Case-insensitive file systems can still merge names that
    differ only in case; :class:`Manifest` rejects such pairs.
    """
    if not isinstance(name, str):
        raise TypeError(f"sensor name must be a string, got {type(name).__name__}")
    body = name[1:] if name.startswith("/") else name
    segments = body.split("/")
    if not body or any(not s for s in segments):
        raise ValueError(f"sensor name {name!r} is empty or has an empty path segment")
    return ".".join(_escape(s) for s in segments)


def _escape(segment: str) -> str:
    return "".join(
        ch if _SAFE_CHARS.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        for ch in segment
    )


def output_path(sensor: str, layer: str, frame: int, ext: str) -> str:
    """Relative POSIX path ``{safe sensor}/{layer}_{frame:05d}.{ext}`` (frame zero-padded to 5).

    ``layer`` may hold letters, digits, ``_`` and ``-``; ``ext`` letters and digits (no dot).
    """
    if not _LAYER.fullmatch(layer or ""):
        raise ValueError(f"layer name {layer!r} may only contain letters, digits, '_' and '-'")
    if not _EXT.fullmatch(ext or ""):
        raise ValueError(f"extension {ext!r} may only contain letters and digits (no leading dot)")
    if isinstance(frame, bool) or int(frame) != frame:
        raise ValueError(f"frame must be an integer, got {frame!r}")
    return f"{safe_sensor_name(sensor)}/{layer}_{int(frame):05d}.{ext}"


def _plain(value, where: str = "manifest"):
    """JSON-ready copy of ``value``: numpy arrays/scalars to lists/numbers; non-finite floats and
    unknown types raise, naming where they were found."""
    if isinstance(value, dict):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist(), where)
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value}, which JSON cannot hold")
        return value
    raise TypeError(f"{where} has unsupported type {type(value).__name__}")


def _dtype_description(dtype):
    dtype = np.dtype(dtype)
    if dtype.names:
        return [[name, dtype[name].name] for name in dtype.names]
    return dtype.name


def _extrinsics(camera_to_world) -> dict:
    t = np.asarray(camera_to_world, dtype=np.float64)
    if t.shape != (4, 4):
        raise ValueError(f"camera_to_world must be 4x4, got shape {t.shape}")
    gl = t.copy()
    gl[:3, :3] = t[:3, :3] @ R_OPENCV_FROM_OPENGL
    return {"camera_to_world_opencv": t, "camera_to_world_opengl": gl}


class Manifest:
    """Collects sensors, frames and output files; serializes to deterministic JSON."""

    def __init__(self, metadata: dict | None = None) -> None:
        self.metadata = dict(metadata or {})
        self._sensors: dict[str, dict] = {}
        self._frames: dict[str, dict[int, dict]] = {}
        self._folders: dict[str, str] = {}  # lower-cased folder -> sensor name

    def add_sensor(
        self,
        name: str,
        kind: str,
        intrinsics=None,
        near: float | None = None,
        far: float | None = None,
        properties: dict | None = None,
    ) -> str:
        """Register a sensor; returns its folder name.

        ``intrinsics`` (a :class:`~.intrinsics.CameraIntrinsics`) adds ``projection: "perspective"``,
        resolution and ``K``; with ``near`` also the OpenGL projection (``far`` ``None`` or ``inf``:
        infinite far plane). An :class:`~.intrinsics.OrthographicIntrinsics` adds ``projection:
        "orthographic"``, resolution, ``intrinsics: null`` (no ``K``: there is no pinhole) and
        ``orthographic`` (scale, pixel size, view size, ``cx``, ``cy`` and the affine ``P`` (3 x 4)
        from OpenCV camera coordinates to pixels); with ``near`` and a finite ``far`` also its
        ``glOrtho`` OpenGL projection. ``properties`` holds any further plain values (update rate,
        lidar pattern, noise...).
        """
        if name in self._sensors:
            raise ValueError(f"sensor {name!r} was already added")
        folder = safe_sensor_name(name)
        clash = self._folders.get(folder.lower())
        if clash is not None:
            raise ValueError(
                f"sensors {clash!r} and {name!r} would share a folder on a case-insensitive file system"
            )
        entry: dict = {"name": name, "kind": str(kind), "folder": folder}
        entry["properties"] = dict(properties or {})
        if intrinsics is not None and intrinsics.projection == "orthographic":
            entry["projection"] = "orthographic"
            entry["resolution"] = [intrinsics.width, intrinsics.height]
            entry["intrinsics"] = None
            entry["orthographic"] = {
                "scale": intrinsics.scale, "pixel_size": intrinsics.pixel_size,
                "view_size": list(intrinsics.view_size), "cx": intrinsics.cx, "cy": intrinsics.cy,
                "P": intrinsics.P,
            }
            if near is not None:
                entry["near"] = float(near)
                entry["far"] = None if far is None or math.isinf(far) else float(far)
                if entry["far"] is not None:
                    entry["opengl_projection"] = intrinsics.opengl_projection(near, entry["far"])
        elif intrinsics is not None:
            entry["projection"] = "perspective"
            entry["resolution"] = [intrinsics.width, intrinsics.height]
            entry["intrinsics"] = {
                "fx": intrinsics.fx, "fy": intrinsics.fy, "cx": intrinsics.cx, "cy": intrinsics.cy,
                "K": intrinsics.K,
            }
            if near is not None:
                far_value = math.inf if far is None else float(far)
                entry["near"] = float(near)
                entry["far"] = None if math.isinf(far_value) else far_value
                entry["opengl_projection"] = intrinsics.opengl_projection(near, far_value)
        self._folders[folder.lower()] = name
        self._sensors[name] = entry
        self._frames[name] = {}
        return folder

    def add_frame(self, sensor: str, frame: int, camera_to_world=None, time: float | None = None) -> None:
        """Set a frame's camera-to-world pose (4x4, OpenCV camera frame, m) and time (s)."""
        entry = self._frame(sensor, frame)
        if camera_to_world is not None:
            entry.update(_extrinsics(camera_to_world))
        if time is not None:
            entry["time"] = float(time)

    def add_output(self, sensor: str, frame: int, layer: str, ext: str, shape, dtype, units: str) -> str:
        """Record one output file; returns its relative path (:func:`output_path`).

        ``shape`` is the stored array's shape, ``dtype`` its numpy dtype, ``units`` a short string
        (``"m"``, ``"rad/s"``, ``"1"`` for unitless...).
        """
        path = output_path(sensor, layer, frame, ext)
        outputs = self._frame(sensor, frame)["outputs"]
        if layer in outputs:
            raise ValueError(f"{sensor!r} frame {frame} already has a {layer!r} output")
        outputs[layer] = {
            "layer": layer,
            "path": path,
            "shape": [int(n) for n in shape],
            "dtype": _dtype_description(dtype),
            "units": str(units),
        }
        return path

    def _frame(self, sensor: str, frame: int) -> dict:
        if sensor not in self._sensors:
            raise KeyError(f"unknown sensor {sensor!r}; call add_sensor first")
        if isinstance(frame, bool) or int(frame) != frame:
            raise ValueError(f"frame must be an integer, got {frame!r}")
        return self._frames[sensor].setdefault(int(frame), {"frame": int(frame), "outputs": {}})

    def to_dict(self) -> dict:
        sensors = {}
        for name, entry in self._sensors.items():
            frames = []
            for number in sorted(self._frames[name]):
                frame = dict(self._frames[name][number])
                frame["outputs"] = [frame["outputs"][k] for k in sorted(frame["outputs"])]
                frames.append(frame)
            sensors[name] = {**entry, "frames": frames}
        return _plain(
            {
                "format": MANIFEST_FORMAT,
                "version": MANIFEST_VERSION,
                "conventions": CONVENTIONS,
                "metadata": self.metadata,
                "sensors": sensors,
            }
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, allow_nan=False) + "\n"

    def write(self, path) -> None:
        """Write :meth:`to_json` atomically."""
        write_text_atomic(path, self.to_json())
