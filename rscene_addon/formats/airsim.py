"""Project AirSim scene configuration (JSONC with ``actors``): reader and writer.

Frames: AirSim's world is NED and robots use forward-right-down body axes; ``geo.py`` converts both to the
scene frame (a rotation of pi about x, see there). ``geo-point`` origins (lat lon alt) become local
coordinates around ``home-geo-point`` through WGS84 ECEF; ``rpy`` is in radians, ``rpy-deg`` in degrees.

Mapping (JSON -> records):

* Scene settings go on a ``group`` record ``/World`` (a folder, no transform) as extra keys:
  ``airsimId``, ``airsimSceneType``, ``airsimHomeGeoPoint`` (lat,lon,alt), ``airsimClock*``,
  ``airsimSegmentation*``, ``airsimTiles*``; any other top-level key is kept verbatim as
  ``airsimJson.<key>`` (JSON text). ``clock`` ``step-ns`` -> ``time_step`` (default 20 ms).
* Each actor (``actors``: robots with ``robot-config``; ``environment-actors`` with ``env-actor-config``,
  one file or a list merged link by link) -> a kinematic ``compound`` at its origin whose
  ``compound_child`` shapes come from the config's links (an ``inertia`` box, else an ``aerodynamics``
  box or cylinder, or an ``unreal_mesh`` from ``/Engine/BasicShapes``), placed through the joints' origins.
  An actor whose links have no such geometry becomes a visual-only 0.5 m box. Unreal mesh names are kept as
  ``airsimVisualMesh`` keys; the config path as ``airsimConfig`` (relative to the scene file). A missing
  config file is a warning.
* Robot ``sensors`` -> ``sensor`` records mounted on the actor (pose relative to it): cameras
  (``rgb``/``depth``/``segmentation`` from the first capture-enabled image type; width, height, horizontal
  field of view, update rate), ``lidar`` (channels, range, vertical field of view, samples per
  revolution), ``imu`` and the others under their AirSim type.
* ``environment-objects`` (``env-object-config``) -> visual-only 1 m boxes with their config and Unreal
  visual.
* Segmentation: with ``initialize-ids`` true every actor gets ``instanceId`` = ``segmentation_id(name)``.

Written back: the scene settings, the actors with origins (``geo-point`` again where the record still sits
at its geo point, else ``xyz``) and ``rpy-deg``, and their config references. Anything else (plain objects,
lights, terrain...) cannot be held by a scene config and is reported.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from ..model import Diagnostic, FormatError, Scene, new_record
from ..model.values import encode_number, remember
from . import geo, jsonc
from .atomic import text_writer
from .sceneutil import (PathAllocator, encode_extra, extra_text, extra_vec, leaf_name, loss_warnings, record_label,
                        sanitize_name, set_extra, warn)
from ..base.spatial import IDENTITY, ORIGIN, compose
from ..base.spatial import record_quat_from_rpy as quat_from_rpy
from ..base.spatial import record_rpy as rpy_from_quat

FORMAT = "airsim"
EXTENSIONS = (".jsonc", ".json")
DEFAULT_STEP_NS = 20_000_000
DEFAULT_HOME = (47.641468, -122.140165, 122.0)  # the documented default home geo point
PLACEHOLDER = 0.5
BASIC_SHAPES = {"cube": "box", "sphere": "sphere", "cylinder": "cylinder", "plane": "box"}
_ACTOR_SECTIONS = (("actors", "robot-config"), ("environment-actors", "env-actor-config"))
_KNOWN_TOP = {"id", "actors", "environment-actors", "environment-objects", "clock", "home-geo-point",
              "segmentation", "scene-type", "tiles-dir", "tiles-dir-is-client-relative", "tiles-altitude-offset",
              "tiles-lod-max", "tiles-lod-min"}
_IMAGE_KINDS = {0: "rgb", 1: "depth", 2: "depth", 3: "segmentation", 4: "depth"}


def segmentation_id(name: str) -> int:
    """AirSim's segmentation id of an object name: 5 plus the character codes of its letters (lowercased;
    digits and symbols ignored), modulo 256. The documented log lines (``cylinder8`` -> 95, ``ground`` ->
    148, ``templatecube_48`` -> 0, ``templatecube_rounded_1`` -> 241) all carry the start value 5."""
    return (5 + sum(ord(c) for c in name.lower() if "a" <= c <= "z")) % 256


# floats()' table: short text -> its numbers (() when one does not parse), bounded
_FLOAT_TEXT: dict[str, tuple] = {}
# origin()'s table: ("rpy-deg" or "rpy", its text) -> the rotation in the scene frame, for texts that read
_ROTATIONS: dict[tuple, tuple] = {}
# per config key of an actor section: (the key with underscores, the actor keys read as such, not kept)
_CONFIG_KEYS = {key: (key.replace("-", "_"), ("type", "name", "origin", key, key.replace("-", "_")))
                for _, key in _ACTOR_SECTIONS}


def _finite(value) -> float:
    """A JSON number (or numeric text) that is finite; TypeError/ValueError otherwise."""
    if isinstance(value, bool):
        raise TypeError("a flag is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not finite")
    return number


class _Reader:
    def __init__(self, path: str):
        self.path = path
        self.scene = Scene(version=2, path=None if path.startswith("<") else path)
        self.scene.source_format = FORMAT
        self.errors: list[Diagnostic] = []
        self.paths = PathAllocator("/World")
        self.paths.used.add("/World")
        self.home = DEFAULT_HOME
        self.configs: dict[str, object] = {}
        self.config_of_ref: dict[str, tuple] = {}  # ref as written -> (data, path), once read
        self.merged: dict[tuple, dict] = {}  # ids of the configs an actor names -> their merge (read only)
        self.reported: set[tuple] = set()  # (file, line, message) of the errors so far

    def error(self, obj, message: str, file: str | None = None) -> None:
        key = (file or self.path, getattr(obj, "line", 0), message)
        if key in self.reported:  # a config's fault found again through its next actor: once is enough
            return
        self.reported.add(key)
        self.errors.append(Diagnostic(*key[:2], "", message))

    def warn(self, obj, message: str, file: str | None = None) -> None:
        warn(self.scene, file or self.path, getattr(obj, "line", 0), "", message)

    # -- values ---------------------------------------------------------------------------------------

    def typed(self, holder, key: str, kind: type, file: str | None = None):
        """``holder[key]`` when it is a JSON ``kind`` (list or object); absent or null: an empty one. Any
        other JSON type is the file's error (named with the key and the line of the object holding it),
        and reads as empty so that the rest of the file is still checked."""
        value = holder.get(key) if isinstance(holder, dict) else None
        if value is None:
            return kind()
        if not isinstance(value, kind):
            self.error(holder, f"{key!r} must be {_JSON_KINDS[kind]}, got {_json_kind(value)} "
                               f"{_short(value)}", file)
            return kind()
        return value

    def floats(self, obj, owner, key: str, n: int, file: str | None = None):
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and n == 1:
            return (float(value),)
        values = _FLOAT_TEXT.get(value) if type(value) is str else None
        if values is None:
            try:
                values = tuple(map(float, str(value).replace(",", " ").split()))
            except ValueError:
                values = ()
            if type(value) is str and len(value) <= 64:  # "0 0 0" and its kind repeat from actor to actor
                remember(_FLOAT_TEXT, value, values)
        if len(values) != n or (not math.isfinite(sum(values)) and not all(map(math.isfinite, values))):
            self.error(owner, f"{key!r} needs {n} numbers, got {value!r}", file)
            return None
        return values

    def origin(self, holder, file: str | None = None, geodetic: bool = True):
        """(position, quaternion) in the scene frame of an ``origin`` object, plus its geo point if any."""
        origin = holder.get("origin") if isinstance(holder, dict) else None
        if origin is None:
            return (ORIGIN, IDENTITY), None
        if not isinstance(origin, dict):
            self.error(holder, "'origin' must be an object", file)
            return (ORIGIN, IDENTITY), None
        point = None
        ned = (0.0, 0.0, 0.0)
        if "geo-point" in origin and geodetic:
            point = self.floats(origin, origin, "geo-point", 3, file)
            if point is not None:
                ned = geo.geodetic_to_ned(point, self.home)
        elif "xyz" in origin:
            ned = self.floats(origin, origin, "xyz", 3, file) or ned
        # a rotation text seen before (most actors: "0 0 0"): its rotation, without parsing it again
        rotation_key = ("rpy-deg", origin["rpy-deg"]) if "rpy-deg" in origin else (
            ("rpy", origin["rpy"]) if "rpy" in origin else None)
        if rotation_key is not None and type(rotation_key[1]) is str:
            known = _ROTATIONS.get(rotation_key)
            if known is not None:
                return (geo.ned_to_model(ned), known), point
        else:
            rotation_key = None
        rpy = (0.0, 0.0, 0.0)
        rpy_ok = False  # whether the rotation text read as three numbers (only then it is remembered)
        if "rpy-deg" in origin:
            degrees = self.floats(origin, origin, "rpy-deg", 3, file)
            if degrees is not None:
                rpy = tuple(math.radians(v) for v in degrees)
                rpy_ok = True
        elif "rpy" in origin:
            radians = self.floats(origin, origin, "rpy", 3, file)
            rpy_ok = radians is not None
            rpy = radians or rpy
        # no rotation, the common case: skip the matrix round trip (a third of a 10^5-actor scene's time)
        q_ned = (1.0, 0.0, 0.0, 0.0) if not any(rpy) else quat_from_rpy(*rpy)
        rotation = geo.quat_ned_to_model(q_ned)
        if rotation_key is not None and rpy_ok and len(rotation_key[1]) <= 64:
            remember(_ROTATIONS, rotation_key, rotation)
        return (geo.ned_to_model(ned), rotation), point

    # -- configs --------------------------------------------------------------------------------------

    def config(self, owner, ref: str):
        known = self.config_of_ref.get(ref)  # actors name a few configs many times: no path work per actor
        if known is not None:
            return known
        path = ref if os.path.isabs(ref) else os.path.join(self.scene.directory, ref)
        path = os.path.normpath(path)
        if path in self.configs:
            self.config_of_ref[ref] = self.configs[path], path
            return self.configs[path], path
        if not os.path.isfile(path):
            self.warn(owner, f"config file not found: {path}")
            self.configs[path] = None
            return None, path
        try:
            data = jsonc.load(path)
        except FormatError as exc:
            self.errors.extend(exc.diagnostics)
            data = None
        if data is not None and not isinstance(data, dict):
            self.error(data, "a config file must hold a JSON object", path)
            data = None
        self.configs[path] = data
        return data, path

    @staticmethod
    def merge(configs: list[dict]) -> dict:
        """Later configs override earlier ones; ``links`` are merged by name, recursively."""
        deep = _deep_merge
        result = jsonc.JsonObject()  # its line (the last config's) names where a bad top-level key is
        result.line = getattr(configs[-1], "line", 0) if configs else 0
        for config in configs:
            # by name; a link whose name is not a string (the file's error, reported later) merges with none
            links = {_link_key(link): link for link in result.get("links", []) if isinstance(link, dict)}
            for key, value in config.items():
                if key == "links" and isinstance(value, list):
                    for link in value:
                        if isinstance(link, dict):
                            name = _link_key(link)
                            links[name] = deep(links[name], link) if name in links else link
                    result["links"] = list(links.values())
                else:
                    result[key] = value
        return result

    # -- top level ------------------------------------------------------------------------------------

    def read(self, data) -> Scene:
        if not isinstance(data, dict) or "actors" not in data:
            raise FormatError(Diagnostic(self.path, getattr(data, "line", 0), "",
                                         "not a Project AirSim scene: no 'actors' list"))
        scene = self.scene
        home = data.get("home-geo-point")
        if isinstance(home, dict):
            try:
                self.home = tuple(_finite(home.get(key, default)) for key, default in
                                  zip(("latitude", "longitude", "altitude"), DEFAULT_HOME))
            except (TypeError, ValueError):
                self.error(home, "home-geo-point latitude, longitude and altitude must be numbers")
        world = new_record("group", path="/World")
        set_extra(world, "airsimId", data.get("id") if isinstance(data.get("id"), str) else None)
        if isinstance(home, dict):
            set_extra(world, "airsimHomeGeoPoint", self.home)
        clock = data.get("clock") or {}
        step = DEFAULT_STEP_NS
        if isinstance(clock, dict):
            step = clock.get("step-ns", DEFAULT_STEP_NS)
            if not isinstance(step, (int, float)) or isinstance(step, bool) or step <= 0:
                self.error(clock, f"clock step-ns must be a positive number, got {step!r}")
                step = DEFAULT_STEP_NS
            for key in ("type", "real-time-update-rate", "pause-on-start", "engine-substepping"):
                if key in clock:
                    set_extra(world, "airsimClock." + key, _json_value(clock[key]))
            if "step-ns" in clock:
                set_extra(world, "airsimClock.step-ns", int(step))
        scene.add(new_record("time_step", dt=step * 1e-9))
        segmentation = data.get("segmentation") or {}
        initialize = False
        if isinstance(segmentation, dict):
            for key, value in segmentation.items():
                set_extra(world, "airsimSegmentation." + key, _json_value(value))
            initialize = bool(segmentation.get("initialize-ids", False))
        for key in ("scene-type", "tiles-dir", "tiles-dir-is-client-relative", "tiles-altitude-offset",
                    "tiles-lod-max", "tiles-lod-min"):
            if key in data:
                set_extra(world, "airsim." + key, _json_value(data[key]))
        for key, value in data.items():
            if key not in _KNOWN_TOP:
                set_extra(world, "airsimJson." + key, json.dumps(value, separators=(",", ":")))
        scene.add(world)
        for section, config_key in _ACTOR_SECTIONS:
            actors = data.get(section) or []
            if not isinstance(actors, list):
                self.error(data, f"{section!r} must be a list")
                continue
            for actor in actors:
                if isinstance(actor, dict):
                    self.actor(actor, section, config_key, initialize)
                else:
                    self.error(data, f"an entry of {section!r} is not an object")
        objects = data.get("environment-objects") or []
        for obj in objects if isinstance(objects, list) else []:
            if isinstance(obj, dict):
                self.env_object(obj, initialize)
        if self.errors:
            raise FormatError(self.errors)
        return scene

    def _name(self, actor) -> tuple[str, str]:
        name = actor.get("name")
        if not isinstance(name, str) or not name:
            self.error(actor, "an actor needs a 'name'")
            name = "actor"
        return name, self.paths.take(sanitize_name(name, "actor"))

    def _type(self, actor) -> str:
        """An actor's ``type``: text (a list or an object there is the file's error, not a crash)."""
        kind = actor.get("type", "robot")
        if kind is not None and not isinstance(kind, str):
            self.error(actor, f"an actor's 'type' must be a string, got {_json_kind(kind)} {_short(kind)}")
            return "robot"
        return kind

    def _common_keys(self, record, actor, name: str, path: str, point, initialize: bool) -> None:
        record.set("parentGroupId", "folder_/World")
        set_extra(record, "airsimType", self._type(actor))
        if leaf_name(path) != name:
            set_extra(record, "airsimName", name)
        if point is not None:
            set_extra(record, "airsimGeoPoint", point)
        if initialize:
            record.set("instanceId", segmentation_id(name))

    def actor(self, actor, section: str, config_key: str, initialize: bool) -> None:
        name, path = self._name(actor)
        pose, point = self.origin(actor)
        other_key, skip = _CONFIG_KEYS[config_key]
        refs = actor.get(config_key, actor.get(other_key))
        if type(refs) is str:
            refs = [refs]
        elif not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            self.error(actor, f"{config_key!r} must name a config file (or a list of them)")
            refs = []
        configs, files = [], []
        for ref in refs:
            data, file = self.config(actor, ref)
            files.append(file)
            if data is not None:
                configs.append(data)
        if configs:
            # actors name the same few configs many times: merged once per list of them (self.configs keeps
            # every config, and so its id, for the whole read)
            key = tuple(map(id, configs))
            config = self.merged.get(key)
            if config is None:
                config = self.merged[key] = self.merge(configs)
        else:
            config = {}
        parts, frames, visuals, mass = self.links(config, files[-1] if files else self.path)
        # the extra keys go into the record as it is made, encoded as set_extra encodes them (one set() call
        # each was a quarter of reading 10^5 actors); the documented ones (parentGroupId, instanceId) after
        extras: dict[str, str] = {}

        def put(key: str, value) -> None:
            if value is not None:
                extras[key] = encode_extra(value)

        # (texts as they are: encode_extra keeps a str unchanged)
        if not parts:
            extras["airsimPlaceholder"] = "true"
        kind = self._type(actor)
        if kind is not None:
            extras["airsimType"] = kind
        if leaf_name(path) != name:
            extras["airsimName"] = name
        put("airsimGeoPoint", point)
        extras["airsimSection"] = section
        extras["airsimConfig"] = refs[0].replace("\\", "/") if len(refs) == 1 else ";".join(
            r.replace("\\", "/") for r in refs)
        for key, value in actor.items():
            if key not in skip:
                put("airsimActor." + key, _json_value(value))
        if visuals:
            put("airsimVisualMesh", ";".join(visuals))
        if isinstance(config.get("physics-type"), str):
            put("airsimPhysicsType", config["physics-type"])
        # parentGroupId and instanceId after the extra keys, where a set() of each afterwards put them
        extras["parentGroupId"] = "folder_/World"
        if initialize:
            extras["instanceId"] = segmentation_id(name)
        if parts:
            record = new_record("compound", path=path, position=pose[0], quaternion=pose[1],
                                mass=mass if mass > 0 else 1.0, bodyMode="kinematic", **extras)
        else:
            record = new_record("object", path=path, primitive="box", position=pose[0], quaternion=pose[1],
                                scale=(PLACEHOLDER,) * 3, mass=mass if mass > 0 else 1.0, bodyMode="visual_only",
                                visualOnly=True, collidable=False, **extras)
        self.scene.add(record)
        for part in parts:
            part.set("compound", path)
            self.scene.add(part)
        for sensor in self.typed(config, "sensors", list, files[-1] if files else self.path):
            if isinstance(sensor, dict):
                self.sensor(sensor, record, path, frames, files[-1] if files else self.path)

    def links(self, config: dict, file: str):
        """Shapes (compound_child records, compound not yet set), link frames, visual mesh names, mass."""
        links = []
        for link in self.typed(config, "links", list, file):
            if isinstance(link, dict) and not isinstance(link.get("name", ""), str):
                self.error(link, f"a link's 'name' must be a string, got {_json_kind(link['name'])}", file)
            elif isinstance(link, dict):
                links.append(link)
        joints = [j for j in self.typed(config, "joints", list, file) if isinstance(j, dict)]
        frames: dict[str, tuple] = {}
        parent_of = {}
        for joint in joints:
            child, parent = joint.get("child-link"), joint.get("parent-link")
            if isinstance(child, str) and isinstance(parent, str):
                parent_of[child] = (parent, self.origin(joint, file, geodetic=False)[0])
        for link in links:
            if isinstance(link.get("parent-link"), str) and link.get("name") not in parent_of:
                parent_of[link.get("name")] = (link["parent-link"], (ORIGIN, IDENTITY))

        parts, visuals, mass = [], [], 0.0
        for link in links:
            name = link.get("name", "")
            link_frame = _link_frame(name, frames, parent_of)
            inertial = link.get("inertial") if isinstance(link.get("inertial"), dict) else {}
            value = inertial.get("mass", 0.0)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                mass += max(0.0, float(value))
            visual = link.get("visual") if isinstance(link.get("visual"), dict) else {}
            geometry = visual.get("geometry") if isinstance(visual.get("geometry"), dict) else {}
            mesh = geometry.get("name") if isinstance(geometry.get("name"), str) else None
            if mesh:
                visuals.append(f"{name}:{mesh}")
            shape = self.link_shape(link, inertial, visual, geometry, mesh, file)
            if shape is None:
                continue
            primitive, size, local = shape
            pose = compose(link_frame, local)
            part = new_record("compound_child", compound="/World", primitive=primitive,
                              position=pose[0], quaternion=pose[1])
            if primitive == "box":
                part.set("size", size)
            else:
                part.set("radius", size[0])
                part.set("height", size[1])
            set_extra(part, "airsimLink", name)
            if mesh:
                set_extra(part, "airsimVisualMesh", mesh)
            parts.append(part)
        return parts, frames, visuals, mass

    def link_shape(self, link, inertial, visual, geometry, mesh, file):
        """(primitive, size, local pose) of a link: box size, or (radius, height) for a cylinder/sphere."""
        def nested(d, *keys):
            for key in keys:
                d = d.get(key) if isinstance(d, dict) else None
            return d

        inertia_origin = self.origin(inertial, file, geodetic=False)[0] if inertial else (ORIGIN, IDENTITY)
        box = nested(inertial, "inertia", "geometry", "box", "size")
        if box is not None:
            size = self.floats({"size": box}, link, "size", 3, file)
            if size:
                return "box", size, inertia_origin
        aero = nested(inertial, "aerodynamics", "geometry")
        if isinstance(aero, dict):
            if "box" in aero:
                size = self.floats(aero["box"] if isinstance(aero["box"], dict) else {}, link, "size", 3, file)
                if size:
                    return "box", size, inertia_origin
            if isinstance(aero.get("cylinder"), dict):
                cylinder = aero["cylinder"]
                radius, length = cylinder.get("radius"), cylinder.get("length")
                if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (radius, length)):
                    return "cylinder", (float(radius), float(length)), inertia_origin
        if mesh and mesh.startswith("/Engine/BasicShapes/"):
            kind = mesh.rsplit("/", 1)[-1].lower()
            primitive = BASIC_SHAPES.get(kind)
            if primitive is not None:
                scale = self.floats(geometry, link, "scale", 3, file) or (1.0, 1.0, 1.0)
                local = self.origin(visual, file, geodetic=False)[0]
                if primitive == "box":
                    return "box", (scale[0], scale[1], scale[2] if kind == "cube" else 0.001), local
                return primitive, (0.5 * scale[0], scale[2]), local
        return None

    def sensor(self, sensor, actor_record, actor_path: str, frames: dict, file: str) -> None:
        sid = sensor.get("id") if isinstance(sensor.get("id"), str) else "sensor"
        kind_raw = sensor.get("type", "sensor") if isinstance(sensor.get("type"), str) else "sensor"
        parent_link = sensor.get("parent-link")
        link_frame = frames.get(parent_link, (ORIGIN, IDENTITY)) if isinstance(parent_link, str) else (ORIGIN, IDENTITY)
        local = compose(link_frame, self.origin(sensor, file, geodetic=False)[0])
        kind = kind_raw
        values = {}
        if kind_raw == "camera":
            captures = [c for c in self.typed(sensor, "capture-settings", list, file) if isinstance(c, dict)]
            enabled = [c for c in captures if c.get("capture-enabled", True)]
            first = (enabled or captures or [{}])[0]
            image_type = first.get("image-type", 0)
            kind = _IMAGE_KINDS.get(image_type, "rgb") if isinstance(image_type, (int, str)) else "rgb"
            for key, field in (("width", "width"), ("height", "height")):
                if _number(first.get(key)) is not None:
                    values[field] = int(first[key])
            if _number(first.get("fov-degrees")) is not None:
                values["horizontalFov"] = float(first["fov-degrees"])
            interval = sensor.get("capture-interval")
            if isinstance(interval, (int, float)) and interval > 0 and math.isfinite(1.0 / interval):
                values["updateRate"] = 1.0 / float(interval)
            image_types = [str(c.get("image-type")) for c in enabled if "image-type" in c]
        elif kind_raw == "lidar":
            channels = sensor.get("number-of-channels")
            rate = sensor.get("horizontal-rotation-frequency")
            pps = sensor.get("points-per-second")
            if isinstance(channels, int):
                values["lidarChannels"] = channels
            if isinstance(sensor.get("range"), (int, float)):
                values["lidarMaxRange"] = float(sensor["range"])
            upper, lower = sensor.get("vertical-fov-upper-deg"), sensor.get("vertical-fov-lower-deg")
            if isinstance(upper, (int, float)) and isinstance(lower, (int, float)):
                values["lidarVerticalFov"] = float(upper) - float(lower)
            if isinstance(rate, (int, float)) and rate > 0:
                values["updateRate"] = float(rate)
                samples = pps / rate / channels if isinstance(pps, (int, float)) and isinstance(channels, int) \
                    and channels > 0 else None
                if samples is not None and math.isfinite(samples):
                    values["lidarSamples"] = int(round(samples))
        path = self.paths.take(sanitize_name(sid, "sensor"), actor_path)
        record = new_record("sensor", path=path, kind=kind, parent=actor_record.id, position=local[0],
                            quaternion=local[1])
        for key, value in values.items():
            record.set(key, value)
        record.set("enabled", bool(sensor.get("enabled", True)))
        record.set("parentGroupId", "folder_/World")
        if isinstance(parent_link, str):
            record.set("parentLink", parent_link)
        set_extra(record, "airsimSensorType", kind_raw)
        if kind_raw == "camera" and image_types:
            set_extra(record, "airsimImageTypes", ",".join(image_types))
        self.scene.add(record)

    def env_object(self, obj, initialize: bool) -> None:
        name, path = self._name(obj)
        pose, point = self.origin(obj)
        ref = obj.get("env-object-config")
        record = new_record("object", path=path, primitive="box", position=pose[0], quaternion=pose[1],
                            scale=(1.0, 1.0, 1.0), bodyMode="visual_only", visualOnly=True, collidable=False)
        self._common_keys(record, obj, name, path, point, initialize)
        set_extra(record, "airsimSection", "environment-objects")
        if isinstance(ref, str):
            set_extra(record, "airsimConfig", ref.replace("\\", "/"))
            data, _ = self.config(obj, ref)
            visual = data.get("visual") if isinstance(data, dict) else None
            geometry = visual.get("geometry") if isinstance(visual, dict) else None
            if isinstance(geometry, dict) and isinstance(geometry.get("name"), str):
                set_extra(record, "airsimVisualMesh", geometry["name"])
        set_extra(record, "airsimPlaceholder", True)
        self.scene.add(record)


_JSON_KINDS = {list: "a list", dict: "an object"}


def _link_key(link: dict):
    name = link.get("name")
    return name if isinstance(name, str) else ("unnamed", id(link))


def _json_kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    # isinstance: the parser's objects are a dict subclass (JsonObject, which carries the line)
    return next((name for kind, name in _JSON_KINDS.items() if isinstance(value, kind)), "a " + type(value).__name__)


def _short(value) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value) -> float | None:
    """A finite JSON number as a float, else None (booleans are not numbers here)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def _deep_merge(a, b):
    """``b`` over ``a``, objects merged key by key. (A module function: a local one that calls itself is a
    reference cycle per call, garbage left to the paused cyclic collector.)"""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _deep_merge(a.get(k), v) if k in a else v
        return out
    return b


def _link_frame(name, frames: dict, parent_of: dict, depth: int = 0):
    """The pose of link ``name`` in its actor's frame, through its parents' joints (``frames`` remembers
    them). A module function: a local one that calls itself is a reference cycle per actor."""
    if name in frames:
        return frames[name]
    if name not in parent_of or depth > 64:
        frames[name] = (ORIGIN, IDENTITY)
        return frames[name]
    parent, local = parent_of[name]
    frames[name] = compose(_link_frame(parent, frames, parent_of, depth + 1), local)
    return frames[name]


def _json_value(value):
    """A scalar kept as is, anything else as compact JSON text."""
    if isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, separators=(",", ":"))


def loads(text: str, path: str = "<string>") -> Scene:
    return _Reader(path).read(jsonc.loads(text, path))


def read(path: str) -> Scene:
    return _Reader(path).read(jsonc.load(path))


# =========================================================================================================
# Writing


def _fmt(value: float) -> str:
    value = float(f"{float(value):.12g}") + 0.0
    return encode_number(value)


def _triple(values) -> str:
    return " ".join(_fmt(v) for v in values)


def _restore(text: str | None):
    """Inverse of ``_json_value`` for values read back from extra keys."""
    if text is None:
        return None
    low = text.strip()
    if low in ("true", "false"):
        return low == "true"
    try:
        return json.loads(low)
    except ValueError:
        return text


class _Writer:
    # written (time step), part of another record, or only meaningful with records reported themselves
    SILENT = {"raisim_engine_scene", "time_step", "compound_child", "solver", "material", "articulated_resource",
              "asset_root", "scene_graph"}

    def __init__(self, scene: Scene, path: str | None):
        self.scene = scene
        self.target_dir = os.path.dirname(os.path.abspath(path)) if path else scene.directory
        self.warnings: list[str] = []
        self.written: set[int] = set()

    def config_ref(self, ref: str) -> str:
        if os.path.isabs(ref):
            return ref
        absolute = os.path.normpath(os.path.join(self.scene.directory, ref))
        if os.path.normpath(os.path.join(self.target_dir, ref)) == absolute:
            return ref
        try:
            return os.path.relpath(absolute, self.target_dir).replace(os.sep, "/")
        except ValueError:
            return absolute

    def origin(self, record, home) -> dict:
        position, rotation = tuple(record.get("position")), tuple(record.get("quaternion"))
        ned = geo.model_to_ned(position)
        origin = {}
        point = extra_vec(record, "airsimGeoPoint", 3)
        if point is not None and np.allclose(geo.geodetic_to_ned(point, home), ned, atol=1e-6):
            origin["geo-point"] = _triple(point)
        else:
            origin["xyz"] = _triple(ned)
        rpy = rpy_from_quat(geo.quat_model_to_ned(rotation))
        origin["rpy-deg"] = _triple(math.degrees(a) for a in rpy)
        return origin

    def write(self) -> str:
        scene = self.scene
        world = scene.by_path("/World")
        world = world if world is not None and world.tag == "group" else None
        data: dict = {}
        if world is not None:
            self.written.add(id(world))
        text = (lambda key: extra_text(world, key)) if world is not None else (lambda key: None)
        data["id"] = text("airsimId") or (os.path.splitext(os.path.basename(scene.path))[0] if scene.path else "Scene")
        home = extra_vec(world, "airsimHomeGeoPoint", 3) if world is not None else None
        home_used = home or DEFAULT_HOME
        sections: dict[str, list] = {"actors": [], "environment-actors": [], "environment-objects": []}
        for record in scene.records:
            section = extra_text(record, "airsimSection") if record.schema else None
            if record.tag not in ("object", "compound") or section not in sections:
                continue
            entry = {"type": extra_text(record, "airsimType") or "robot",
                     "name": extra_text(record, "airsimName") or leaf_name(record.path),
                     "origin": self.origin(record, home_used)}
            refs = [r for r in (extra_text(record, "airsimConfig") or "").split(";") if r]
            key = {"actors": "robot-config", "environment-actors": "env-actor-config",
                   "environment-objects": "env-object-config"}[section]
            if refs:
                refs = [self.config_ref(r) for r in refs]
                entry[key] = refs[0] if len(refs) == 1 else refs
            for raw in record.raw_keys:
                if raw.startswith("airsimActor."):
                    entry[raw[len("airsimActor."):]] = _restore(extra_text(record, raw))
            sections[section].append(entry)
            self.written.add(id(record))
            for child in scene.of("compound_child"):
                if child.get("compound") in (record.path, record.id):
                    self.written.add(id(child))
        for section, entries in sections.items():
            if entries or section == "actors":
                data[section] = entries
        clock = {}
        for raw in (world.raw_keys if world is not None else {}):
            if raw.startswith("airsimClock."):
                clock[raw[len("airsimClock."):]] = _restore(extra_text(world, raw))
        step_ns = int(round(scene.time_step * 1e9))
        if step_ns != DEFAULT_STEP_NS or "step-ns" in clock:
            clock["step-ns"] = step_ns
        if clock:
            data["clock"] = clock
        if home is not None:
            data["home-geo-point"] = {"latitude": home[0], "longitude": home[1], "altitude": home[2]}
        segmentation = {}
        for raw in (world.raw_keys if world is not None else {}):
            if raw.startswith("airsimSegmentation."):
                segmentation[raw[len("airsimSegmentation."):]] = _restore(extra_text(world, raw))
        if segmentation:
            data["segmentation"] = segmentation
        for raw in (world.raw_keys if world is not None else {}):
            if raw.startswith("airsim.") and raw[len("airsim."):] in _KNOWN_TOP:
                data[raw[len("airsim."):]] = _restore(extra_text(world, raw))
            elif raw.startswith("airsimJson."):
                data[raw[len("airsimJson."):]] = _restore(extra_text(world, raw))
        # sensors of written actors come from their robot configs
        for record in scene.of("sensor"):
            owner = scene.find(record.get("parent"))
            if owner is not None and id(owner) in self.written and extra_text(record, "airsimSensorType"):
                self.written.add(id(record))
        dropped: dict[str, list[str]] = {}
        for record in scene.records:
            if id(record) in self.written or record.tag in self.SILENT:
                continue
            if record.tag == "gravity" and tuple(record.get("gravity")) == (0.0, 0.0, -9.81):
                continue
            dropped.setdefault(record.tag, []).append(record_label(record))
        self.warnings.extend(loss_warnings(FORMAT, dropped))
        if scene.of("solver"):
            self.warnings.append("airsim cannot hold the solver settings (the simulator's own physics applies)")
        return jsonc.dumps(data)


dumps, write = text_writer(_Writer, "(JSONC text, warnings about what the file cannot hold).")
