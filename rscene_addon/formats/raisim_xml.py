"""RaiSim World Configuration XML (``<raisim>``): reader and writer of the physics world it describes.

Reading runs three passes: parse the XML keeping every element's file and line (``xmltree``), expand the
templates (``raisim_template``: include, params, array, ``{math}``, exist, ``[THIS_DIR]``), then map the
world onto scene records. Every error names ``file:line``; all errors of a file are raised together.

Mapping (XML -> records):

* ``timeStep``/``time_step`` -> ``time_step`` (default 0.005, ``raisim::World``'s); ``gravity`` -> ``gravity``.
* One ``solver`` record with ``raisim::World``'s defaults (150 iterations, 1e-8, erp 1.5, erp2 0.002),
  ``<erp erp erp2>`` applied, and ``<material><default>`` as ``defaultFriction``... keys;
  ``pair_prop`` -> ``contact_material``.
* ``sphere``, ``box``, ``capsule``, ``cylinder``, ``mesh``, ``ground`` -> ``object`` (path ``/World/<name>``,
  a repeated or missing name gets a suffix; the XML name is kept as ``raisimName`` when it differs).
  ``state`` pos/quat -> position/quaternion, lin_vel/ang_vel -> ``initialLinearVelocity`` /
  ``initialAngularVelocity``; ``inertia`` -> ``customInertia``, ``inertiaDiagonal`` (+ extra
  ``inertiaOffDiagonal`` xy,xz,yz); ``com`` -> ``centerOfMass``; ``material`` -> contact material;
  ``appearance`` -> a ``material`` record for a color (kept verbatim as the extra key ``appearance``;
  ``hidden`` makes the object invisible); ``body_type`` -> body mode. A ground is drawn 20 m x 20 m.
* ``compound`` -> ``compound`` + one ``compound_child`` per child shape (child ``mass`` and ``name`` kept).
* ``heightmap`` (raw ``height`` values, ``png`` with ``z_scale``/``z_offset``, ``text`` file, or a Perlin
  ``terrain_properties`` child) -> ``terrain_region`` with the heights filled in; the source is kept in
  ``sourcePath``/``png*``/``procedural*`` keys and the extra key ``heightSource``. PNG rows are copied in
  file order (image row ``r`` is grid row ``y = r``); the PNG's width and height give the sample counts.
* ``articulated_system``/``articulatedSystem`` -> ``articulated_resource`` + ``articulated`` (qpos/qvel as
  generalized coordinates; a floating base's qpos[0:7] also gives the record's pose).
* ``wire`` -> ``wire`` (object1/2 by ``local_index`` + ``pos``, or by ``frame``, kept as ``frameA``/``frameB``).
* ``camera follow= x= y= z=`` -> a ``camera`` at the followed object's position plus the offset, looking
  at it (``follow`` and ``followOffset`` kept).

Collision groups and masks accept integers (negative ones are two's complement: ``-1`` is every group) and
``collision[i|j|...]``, read as the bits ``1 << i`` (``collision[-1]``: every bit).

Writing produces the physics subset back (the same elements, snake_case, ``[THIS_DIR]``-relative paths);
lights, sensors, visual-only objects and other records RaiSim XML cannot hold are reported as warnings.
"""
from __future__ import annotations

import functools
import math
import os
import re
import stat

import numpy as np

from ..model import ALL_GROUPS, RECORD_CLASSES, Diagnostic, FormatError, Scene, new_record
from ..model.values import encode_number, remember
from ..base import files
from . import png as pngcodec
from . import terrain_gen
from .atomic import read_source, text_writer
from .raisim_template import expand
from .sceneutil import (PathAllocator, color_material, extra_flag, extra_number, extra_text, extra_vec,
                        leaf_name, loss_warnings, material_color, record_label, sanitize_name, set_extra,
                        warn)
from ..base.spatial import quat_look_at
from .xmltree import Node, XmlWriter, parse

FORMAT = "raisim_xml"
EXTENSIONS = (".xml",)
DEFAULT_TIME_STEP = 0.005  # raisim::World's
GROUND_DRAW_SIZE = 20.0
# raisim::World's defaults (RsceneFile.rst, "Solver defaults").
WORLD_SOLVER = {"iterations": 150, "tolerance": 1e-8, "erp": 1.5, "erp2": 0.002,
                "defaultFriction": 0.8, "defaultRestitution": 0.0, "defaultRestitutionThreshold": 0.01,
                "defaultStaticFriction": 0.8, "defaultStaticFrictionVelocityThreshold": 1.0}
_OBJECT = RECORD_CLASSES["object"]
_MISSING = object()
_POSE = ("path", "position", "quaternion")
_ONES = (1.0, 1.0, 1.0, 1.0)
_MAX_MAKERS = 256  # makers with a fixed orientation; past them the quaternion is encoded per record
_SHAPES = ("sphere", "box", "capsule", "cylinder", "mesh", "ground")
NAMED_COLORS = {
    "red": (1, 0, 0), "green": (0, 1, 0), "blue": (0, 0, 1), "white": (1, 1, 1), "black": (0, 0, 0),
    "gray": (0.5, 0.5, 0.5), "grey": (0.5, 0.5, 0.5), "yellow": (1, 1, 0), "cyan": (0, 1, 1),
    "magenta": (1, 0, 1), "orange": (1, 0.5, 0), "purple": (0.5, 0, 0.5), "brown": (0.6, 0.4, 0.2),
    "pink": (1, 0.75, 0.8),
}
# Tag spellings (snake_case, camelCase, run together) by their letters alone.
_TAG_ALIASES = {"timestep": "time_step", "articulatedsystem": "articulated_system", "heightmap": "heightmap",
                "pairprop": "pair_prop", "terrainproperties": "terrain_properties", "objectclass": "object_class"}
_ATTR_ALIASES = {"x_samples": "x_sample", "y_samples": "y_sample", "res_directory": "res_dir"}


_VECTORS: dict[str, tuple] = {}  # short attribute text -> its numbers (``remember``: bounded)
_LIST_SEPARATORS = re.compile(r"[,\s]+")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


@functools.lru_cache(maxsize=4096)  # a world repeats a few dozen names on every element
def snake(name: str) -> str:
    """``xSample`` -> ``x_sample``, ``centerX`` -> ``center_x``, ``Version`` -> ``version``."""
    return _CAMEL_HUMP.sub(r"_\1", name).lower()


@functools.lru_cache(maxsize=4096)
def _attr_name(key: str) -> str:
    name = snake(key)
    return _ATTR_ALIASES.get(name, name)


def _tag(node: Node) -> str:
    return _tag_name(node.tag)


@functools.lru_cache(maxsize=4096)
def _tag_name(raw: str) -> str:
    tag = snake(raw)
    return _TAG_ALIASES.get(tag.replace("_", ""), tag)


class _Attrs:
    """An element's attributes by snake_case name, with typed, error-collecting accessors."""

    def __init__(self, reader: _Reader, node: Node):
        self.reader = reader
        self.node = node
        attrib = node.attrib  # (dict of zip: the same later-wins rule as a dict comprehension, in C)
        self.values: dict[str, str] = dict(zip(map(_attr_name, attrib), attrib.values()))

    def has(self, *names: str) -> bool:
        return any(n in self.values for n in names)

    def text(self, *names: str, default: str | None = None) -> str | None:
        for name in names:
            if name in self.values:
                return self.values[name]
        return default

    def number(self, *names: str, default: float | None = None, required: bool = False) -> float | None:
        raw = self.text(*names)
        if raw is None:
            if required:
                self.reader.error(self.node, f"missing attribute {names[0]!r}")
            return default
        try:
            value = float(raw.strip())
            if not math.isfinite(value):
                raise ValueError
            return value
        except ValueError:
            self.reader.error(self.node, f"attribute {names[0]}={raw!r} is not a finite number")
            return default

    def integer(self, *names: str, default: int | None = None, required: bool = False) -> int | None:
        value = self.number(*names, default=None, required=required)
        if value is None:
            return default
        if not float(value).is_integer():
            self.reader.error(self.node, f"attribute {names[0]}={self.text(*names)!r} must be an integer")
            return default
        return int(value)

    def vector(self, *names: str, n: int | None = None, default=None, required: bool = False):
        raw = self.text(*names)
        if raw is None:
            if required:
                self.reader.error(self.node, f"missing attribute {names[0]!r}")
            return default
        values = _VECTORS.get(raw)
        if values is not None:  # (a world repeats a few texts: "1 0 0 0")
            if n is not None and len(values) != n:
                self.reader.error(self.node, f"attribute {names[0]} needs {n} numbers, got {len(values)}")
                return default
            return values
        try:
            # str.split() splits at the very characters \s matches (str.isspace), without the regex
            parts = filter(None, _LIST_SEPARATORS.split(raw.strip())) if "," in raw else raw.split()
            values = list(map(float, parts))
            if not math.isfinite(sum(values)) and not all(map(math.isfinite, values)):  # sum: one test
                raise ValueError
        except ValueError:
            self.reader.error(self.node, f"attribute {names[0]}={raw!r} is not a list of numbers")
            return default
        values = tuple(values)
        if len(raw) < 100:
            remember(_VECTORS, raw, values, 1024)
        if n is not None and len(values) != n:
            self.reader.error(self.node, f"attribute {names[0]} needs {n} numbers, got {len(values)}")
            return default
        return values

    def group(self, *names: str, default: int) -> int:
        raw = self.text(*names)
        if raw is None:
            return default
        value = parse_group(raw)
        if value is None:
            self.reader.error(self.node, f"attribute {names[0]}={raw!r} is not a collision group or mask "
                              "(an integer or collision[i|j|...])")
            return default
        return value


def parse_group(raw: str) -> int | None:
    """An integer (two's complement for negatives) or ``collision[i|j]`` (bits ``1 << i``)."""
    raw = raw.strip()
    match = re.fullmatch(r"collision\[\s*(-?\d+(?:\s*\|\s*-?\d+)*)\s*\]", raw)
    if match:
        value = 0
        for part in match.group(1).split("|"):
            bit = int(part)
            if bit == -1:
                return ALL_GROUPS
            if not 0 <= bit < 64:
                return None
            value |= 1 << bit
        return value
    try:
        value = int(raw)
    except ValueError:
        try:
            as_float = float(raw)
        except ValueError:
            return None
        if not as_float.is_integer():
            return None
        value = int(as_float)
    if not -(2**63) <= value < 2**64:
        return None
    return value & ALL_GROUPS


def _rgba(text: str) -> tuple | None:
    low = text.strip().lower()
    if low in NAMED_COLORS:
        return tuple(float(v) for v in NAMED_COLORS[low]) + (1.0,)
    try:
        values = [float(p) for p in re.split(r"[,\s]+", text.strip()) if p]
    except ValueError:
        return None
    if len(values) in (3, 4) and all(math.isfinite(v) for v in values):
        return tuple(values) + (1.0,) * (4 - len(values))
    return None


class _Reader:
    def __init__(self, path: str, params: dict | None):
        self.path = path
        self.params = params
        self.scene = Scene(version=2, path=None if path.startswith("<") else path)
        self.scene.source_format = FORMAT
        self.errors: list[Diagnostic] = []
        self.paths = PathAllocator("/World")
        self.by_name: dict[str, str] = {}  # XML name -> path (first wins)
        self.positions: dict[str, tuple] = {}
        self.colors: dict = {}
        self.resource_ids: set[str] = set()
        self.makers: dict = {}  # _object_record's record makers (orientation fixed)
        self.pose_makers: dict = {}  # (orientation varying)

    # -- diagnostics ----------------------------------------------------------------------------------

    def error(self, node: Node, message: str) -> None:
        self.errors.append(Diagnostic(node.file, node.line, node.tag, message))

    def warn(self, node: Node, message: str) -> None:
        warn(self.scene, node.file, node.line, node.tag, message)

    # -- files ----------------------------------------------------------------------------------------

    def ref(self, value: str) -> str:
        """A file reference (absolute after [THIS_DIR] expansion) relative to the scene file's folder."""
        value = value.strip()
        if not value:
            return value
        if not os.path.isabs(value):
            return value.replace(os.sep, "/")
        try:
            return os.path.relpath(value, self.scene.directory).replace(os.sep, "/")
        except ValueError:
            return value

    def absolute(self, ref: str) -> str:
        return ref if os.path.isabs(ref) else os.path.normpath(os.path.join(self.scene.directory, ref))

    def check_file(self, node: Node, ref: str, what: str) -> bool:
        """Whether ``ref`` names a regular file: a missing one is a warning (the world still loads), a
        FIFO, device or folder the file's error at this element (never opened: a FIFO blocks)."""
        try:
            mode = os.stat(self.absolute(ref)).st_mode if ref else None
        except (OSError, ValueError):
            mode = None
        if mode is None:
            self.warn(node, f"{what} not found: {self.absolute(ref) if ref else '(empty)'}")
            return False
        if not stat.S_ISREG(mode):
            self.error(node, f"{what} {self.absolute(ref)} is not a regular file")
            return False
        return True

    # -- top level ------------------------------------------------------------------------------------

    def read(self, root: Node) -> Scene:
        if snake(root.tag) != "raisim":
            raise FormatError(Diagnostic(root.file, root.line, root.tag,
                                         f"not a RaiSim world: the root element is <{root.tag}>, expected <raisim>"))
        expand(root, self.params, self.errors, self.scene.warnings)
        solver = dict(WORLD_SOLVER)
        time_step = DEFAULT_TIME_STEP
        gravity = None
        objects: list[Node] = []
        later: list[Node] = []
        for node in root.children:
            tag = _tag(node)
            attrs = _Attrs(self, node)
            if tag == "time_step":
                value = attrs.number("value", default=None, required=True)
                if value is not None and value <= 0:
                    self.error(node, f"the time step must be positive, got {value}")
                elif value is not None:
                    time_step = value
            elif tag == "gravity":
                gravity = attrs.vector("value", n=3, default=gravity, required=True)
            elif tag == "erp":
                solver["erp"] = attrs.number("erp", default=solver["erp"])
                solver["erp2"] = attrs.number("erp2", default=solver["erp2"])
            elif tag == "material":
                self.materials(node, solver)
            elif tag == "objects":
                objects.extend(node.children)
            elif tag in ("wire", "camera"):
                later.append(node)
            elif tag == "object_class":
                self.warn(node, "object_class templates are not supported: ignored")
            else:
                self.warn(node, f"unknown element <{node.tag}>: ignored")
        scene = self.scene
        scene.add(new_record("time_step", dt=time_step))
        if gravity is not None:
            scene.add(new_record("gravity", gravity=gravity))
        record = new_record("solver", iterations=solver.pop("iterations"), tolerance=solver.pop("tolerance"),
                            erp=solver.pop("erp"))
        for key, value in solver.items():
            set_extra(record, key, value)
        scene.add(record)
        for node in objects:
            self.object(node)
        for node in later:
            if _tag(node) == "wire":
                self.wire(node)
            else:
                self.camera(node)
        if self.errors:
            raise FormatError(self.errors)
        return scene

    def materials(self, node: Node, solver: dict) -> None:
        for child in node.children:
            tag = _tag(child)
            attrs = _Attrs(self, child)
            if tag == "default":
                friction = attrs.number("friction", default=solver["defaultFriction"])
                solver["defaultFriction"] = friction
                solver["defaultRestitution"] = attrs.number("restitution", default=solver["defaultRestitution"])
                solver["defaultRestitutionThreshold"] = attrs.number(
                    "restitution_threshold", default=solver["defaultRestitutionThreshold"])
                solver["defaultStaticFriction"] = attrs.number("static_friction", default=friction)
                if attrs.has("static_friction_velocity_threshold"):
                    solver["defaultStaticFrictionVelocityThreshold"] = attrs.number(
                        "static_friction_velocity_threshold")
            elif tag == "pair_prop":
                name1, name2 = attrs.text("name1"), attrs.text("name2")
                if not name1 or not name2:
                    self.error(child, "pair_prop needs name1 and name2")
                    continue
                friction = attrs.number("friction", required=True, default=0.8)
                self.scene.add(new_record(
                    "contact_material", materialA=name1, materialB=name2, friction=friction,
                    restitution=attrs.number("restitution", default=0.0),
                    restitutionThreshold=attrs.number("restitution_threshold", default=0.001),
                    staticFriction=attrs.number("static_friction", default=friction),
                    staticFrictionVelocityThreshold=attrs.number("static_friction_velocity_threshold",
                                                                 default=0.001),
                    rollingFriction=attrs.number("rolling_friction", default=0.0),
                    spinningFriction=attrs.number("spinning_friction", default=0.0)))
            else:
                self.warn(child, f"unknown material element <{child.tag}>: ignored")

    # -- objects --------------------------------------------------------------------------------------

    def _path(self, node: Node, attrs: _Attrs, default: str) -> tuple[str, str | None]:
        name = attrs.text("name")
        path = self.paths.take(sanitize_name(name or "", default))
        if name is not None:
            self.by_name.setdefault(name, path)
        return path, name

    def _common(self, record, node: Node, attrs: _Attrs, name: str | None, path: str) -> None:
        if name is not None and leaf_name(path) != name:
            set_extra(record, "raisimName", name)
        appearance = attrs.text("appearance")
        if appearance is not None:
            set_extra(record, "appearance", appearance)

    def _appearance(self, attrs: _Attrs) -> tuple[str, bool]:
        """(material id, visible) for an element's appearance."""
        appearance = attrs.text("appearance")
        if appearance is None:
            return "engine_default", True
        if appearance.strip().lower() == "hidden":
            return "engine_default", False
        rgba = _rgba(appearance)
        if rgba is None:
            return "engine_default", True
        return color_material(self.scene, rgba, self.colors, "appearance"), True

    def _state(self, node: Node):
        state = node.find("state")
        if state is None:
            return (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), None, None
        attrs = _Attrs(self, state)
        pos = attrs.vector("pos", n=3, default=(0.0, 0.0, 0.0))
        quat = attrs.vector("quat", n=4, default=(1.0, 0.0, 0.0, 0.0))
        if quat is not None and not any(quat):
            self.error(state, "quat is zero")
        given = attrs.values  # (most states give no velocities: no call for an absent one)
        lin = attrs.vector("lin_vel", n=3, default=None) if "lin_vel" in given else None
        ang = attrs.vector("ang_vel", n=3, default=None) if "ang_vel" in given else None
        return pos, quat, lin, ang

    def _inertia(self, record, node: Node) -> None:
        inertia = node.find("inertia")
        if inertia is None:
            return
        attrs = _Attrs(self, inertia)
        xx, xy, xz, yy, yz, zz = (attrs.number(k, default=0.0, required=True)
                                  for k in ("xx", "xy", "xz", "yy", "yz", "zz"))
        set_extra(record, "customInertia", True)
        set_extra(record, "inertiaDiagonal", (xx, yy, zz))
        if xy or xz or yz:
            set_extra(record, "inertiaOffDiagonal", (xy, xz, yz))

    def _dims(self, node: Node, kind: str, required: bool = True) -> _Attrs:
        dim = node.find("dim") or node.find("dimension")
        if dim is None:
            if required:
                self.error(node, f"<{node.tag}> needs a <dim> child")
            return _Attrs(self, Node("dim", {}, node.file, node.line))
        return _Attrs(self, dim)

    def object(self, node: Node) -> None:
        tag = _tag(node)
        if tag in _SHAPES:
            self.single_body(node, tag)
        elif tag == "compound":
            self.compound(node)
        elif tag == "heightmap":
            self.heightmap(node)
        elif tag == "articulated_system":
            self.articulated(node)
        else:
            self.warn(node, f"unknown object <{node.tag}>: ignored")

    def single_body(self, node: Node, tag: str) -> None:
        attrs = _Attrs(self, node)
        path, name = self._path(node, attrs, tag)
        material, visible = self._appearance(attrs)
        values = dict(path=path, primitive=tag, contactMaterial=attrs.text("material", default="default"),
                      material=material, visible=visible)
        mesh_ref = None
        lin = ang = None
        if tag == "ground":
            height = attrs.number("height", "z", default=0.0)
            values.update(position=(0.0, 0.0, height), scale=(GROUND_DRAW_SIZE, GROUND_DRAW_SIZE, 1.0),
                          bodyMode="static")
        else:
            pos, quat, lin, ang = self._state(node)
            values.update(position=pos, quaternion=quat,
                          mass=attrs.number("mass", default=1.0, required=True),
                          bodyMode=self._body_type(node, attrs))
            if tag == "mesh":
                file_name = attrs.text("file_name", "file", "mesh")
                if not file_name:
                    self.error(node, "<mesh> needs a file_name")
                    file_name = ""
                mesh_ref = self.ref(file_name)
                values.update(mesh=mesh_ref, scale=attrs.vector("scale", default=(1.0, 1.0, 1.0)))
                if len(values["scale"]) == 1:
                    values["scale"] = values["scale"] * 3
                elif len(values["scale"]) != 3:
                    self.error(node, "scale needs 1 or 3 numbers")
                    values["scale"] = (1.0, 1.0, 1.0)
            else:
                dims = self._dims(node, tag)
                if tag == "sphere":
                    values["radius"] = dims.number("radius", required=True, default=0.5)
                elif tag == "box":
                    values["scale"] = (dims.number("x", required=True, default=1.0),
                                       dims.number("y", required=True, default=1.0),
                                       dims.number("z", required=True, default=1.0))
                else:
                    values["radius"] = dims.number("radius", required=True, default=0.5)
                    values["height"] = dims.number("height", required=True, default=1.0)
            self.positions[path] = pos
        given = attrs.values  # (an absent attribute is its default: no call)
        values["collisionGroup"] = attrs.group("collision_group", default=1) if "collision_group" in given else 1
        values["collisionMask"] = (attrs.group("collision_mask", default=ALL_GROUPS) if "collision_mask" in given
                                   else ALL_GROUPS)
        if values.get("mass", 1.0) <= 0 and values.get("bodyMode") == "dynamic":
            self.error(node, f"mass must be positive for a dynamic body, got {values['mass']}")
            values["mass"] = 1.0
        record = self._object_record(values) if tag != "ground" else new_record("object", **values)
        self._common(record, node, attrs, name, path)
        if tag != "ground":
            if lin is not None and any(lin):
                set_extra(record, "initialLinearVelocity", lin)
            if ang is not None and any(ang):
                set_extra(record, "initialAngularVelocity", ang)
            self._inertia(record, node)
            com = attrs.vector("com", n=3, default=None) if "com" in given else None
            if com is not None:
                set_extra(record, "centerOfMass", com)
        else:
            self.positions[path] = values["position"]
        if mesh_ref is not None and mesh_ref:
            self.check_file(node, mesh_ref, "mesh file")
        self.scene.add(record)

    def _object_record(self, values: dict):
        """``new_record("object", **values)``, by a ``Record.maker`` per set of the fields other than path
        and position (and, past a few hundred of those, quaternion): an ``<array>`` of shapes repeats one
        size, mass, material and orientation. A zero (or False) among the other fields takes the plain way:
        -0.0 == 0.0 as a key, but their texts differ (the quaternion's key holds the signs of its numbers)."""
        items = tuple(values.items())  # single_body's order: path first, position and quaternion 6th, 7th
        scale = values.get("scale")
        if (0 in values.values() or (scale is not None and 0 in scale)
                or (items[0][0], items[5][0], items[6][0]) != _POSE):
            return new_record("object", **values)
        fixed = items[1:5] + items[7:]
        quat = values["quaternion"]
        key = (fixed, quat, tuple(map(math.copysign, _ONES, quat)))
        make = self.makers.get(key, _MISSING)
        if make is _MISSING and len(self.makers) < _MAX_MAKERS:
            make = self.makers[key] = _OBJECT.maker({**dict(fixed), "quaternion": quat}, ("path", "position"))
        if make is not _MISSING:
            return new_record("object", **values) if make is None else make(values["path"], values["position"])
        make = self.pose_makers.get(fixed, _MISSING)  # many orientations: the quaternion varies too
        if make is _MISSING:
            make = self.pose_makers[fixed] = _OBJECT.maker(dict(fixed), _POSE)
        if make is None:
            return new_record("object", **values)
        return make(values["path"], values["position"], quat)

    def _body_type(self, node: Node, attrs: _Attrs) -> str:
        raw = (attrs.text("body_type", default="dynamic") or "dynamic").strip().lower()
        if raw not in ("dynamic", "kinematic", "static"):
            self.error(node, f"body_type={raw!r}: expected dynamic, kinematic or static")
            return "dynamic"
        return raw

    def compound(self, node: Node) -> None:
        attrs = _Attrs(self, node)
        path, name = self._path(node, attrs, "compound")
        pos, quat, lin, ang = self._state(node)
        material, visible = self._appearance(attrs)
        mass = attrs.number("mass", default=1.0, required=True)
        record = new_record("compound", path=path, position=pos, quaternion=quat, mass=mass,
                            bodyMode=self._body_type(node, attrs), visible=visible)
        record.set("collisionGroup", attrs.group("collision_group", default=1))
        record.set("collisionMask", attrs.group("collision_mask", default=ALL_GROUPS))
        com = attrs.vector("com", n=3, default=None)
        if com is not None:
            record.set("centerOfMass", com)
        self._common(record, node, attrs, name, path)
        if material != "engine_default":
            set_extra(record, "material", material)
        if lin is not None and any(lin):
            set_extra(record, "initialLinearVelocity", lin)
        if ang is not None and any(ang):
            set_extra(record, "initialAngularVelocity", ang)
        self._inertia(record, node)
        self.scene.add(record)
        self.positions[path] = pos
        children = node.find("children")
        if children is None or not children.children:
            self.error(node, "<compound> needs a <children> element with at least one shape")
            return
        for child in children.children:
            self.compound_child(path, child)

    def compound_child(self, compound: str, node: Node) -> None:
        tag = _tag(node)
        if tag not in ("sphere", "box", "capsule", "cylinder"):
            self.warn(node, f"unknown compound child <{node.tag}>: ignored")
            return
        attrs = _Attrs(self, node)
        pos, quat, _, _ = self._state(node)
        dims = self._dims(node, tag)
        material, _ = self._appearance(attrs)
        record = new_record("compound_child", compound=compound, primitive=tag, position=pos, quaternion=quat)
        if tag == "box":
            record.set("size", (dims.number("x", required=True, default=1.0),
                                dims.number("y", required=True, default=1.0),
                                dims.number("z", required=True, default=1.0)))
        else:
            record.set("radius", dims.number("radius", required=True, default=0.5))
            if tag != "sphere":
                record.set("height", dims.number("height", required=True, default=1.0))
        record.set("contactMaterial", attrs.text("material", default="default"))
        record.set("material", material)
        for key in ("name", "appearance"):
            if attrs.has(key):
                set_extra(record, key, attrs.text(key))
        if attrs.has("mass"):
            set_extra(record, "mass", attrs.number("mass", default=1.0))
        self.scene.add(record)

    # -- height maps -----------------------------------------------------------------------------------

    def heightmap(self, node: Node) -> None:
        attrs = _Attrs(self, node)
        path, name = self._path(node, attrs, "heightmap")
        cx = attrs.number("center_x", default=0.0)
        cy = attrs.number("center_y", default=0.0)
        keys: dict = {}
        props_node = node.find("terrain_properties") or node.find("terrainProperties")
        if attrs.has("png"):
            ref = self.ref(attrs.text("png"))
            scale = attrs.number("z_scale", "height_scale", default=1.0)
            offset = attrs.number("z_offset", "height_offset", default=0.0)
            keys.update(sourcePath=ref, pngHeightScale=scale, pngHeightOffset=offset, heightSource="png")
            if not self.check_file(node, ref, "height map image"):
                return
            try:
                pixels = pngcodec.read_grey(self.absolute(ref))
            except (pngcodec.PngError, OSError) as exc:
                self.error(node, f"cannot read height map image {ref}: {exc}")
                return
            ys, xs = pixels.shape
            heights = pixels.ravel() * scale + offset
            x_size = attrs.number("x_size", required=True, default=1.0)
            y_size = attrs.number("y_size", required=True, default=1.0)
        elif attrs.has("text"):
            ref = self.ref(attrs.text("text"))
            keys.update(sourcePath=ref, heightSource="text")
            if not self.check_file(node, ref, "height map text file"):
                return
            parsed, problem = read_height_text(self.absolute(ref))
            if parsed is None:
                self.error(node, problem)
                return
            xs, ys, x_size, y_size, heights = parsed
        elif props_node is not None:
            pa = _Attrs(self, props_node)
            xs = attrs.integer("x_sample", required=True, default=2)
            ys = attrs.integer("y_sample", required=True, default=2)
            x_size = attrs.number("x_size", required=True, default=1.0)
            y_size = attrs.number("y_size", required=True, default=1.0)
            props = terrain_gen.TerrainProperties(
                frequency=pa.number("frequency", default=0.1), x_size=x_size, y_size=y_size,
                z_scale=pa.number("z_scale", default=2.0), x_samples=xs, y_samples=ys,
                fractal_octaves=pa.integer("fractal_octaves", default=5),
                fractal_lacunarity=pa.number("fractal_lacunarity", default=2.0),
                fractal_gain=pa.number("fractal_gain", default=0.5),
                step_size=pa.number("step_size", default=0.0),
                height_offset=pa.number("height_offset", default=0.0),
                seed=pa.integer("seed", default=terrain_gen.MT_DEFAULT_SEED))
            if xs < 2 or ys < 2 or not _sample_count_ok(xs, ys) or xs * ys > terrain_gen.MAX_GENERATED_SAMPLES:
                self.error(node, f"a generated height map needs 2 to 16384 samples per axis and at most "
                           f"{terrain_gen.MAX_GENERATED_SAMPLES} in all, got {xs} x {ys}")
                return
            if not 1 <= props.fractal_octaves <= terrain_gen.MAX_OCTAVES:
                self.error(props_node, f"fractal_octaves={props.fractal_octaves}: 1 to {terrain_gen.MAX_OCTAVES}")
                return
            if xs * ys * props.fractal_octaves > terrain_gen.MAX_GENERATED_WORK:
                self.error(node, f"{xs} x {ys} samples x {props.fractal_octaves} octaves of generated terrain: more "
                           f"than {terrain_gen.MAX_GENERATED_WORK} sample-octaves")
                return
            heights = terrain_gen.generate(props)
            keys.update(heightSource="procedural", proceduralFrequency=props.frequency,
                        proceduralZScale=props.z_scale, proceduralOctaves=props.fractal_octaves,
                        proceduralLacunarity=props.fractal_lacunarity, proceduralGain=props.fractal_gain,
                        proceduralStepSize=props.step_size, proceduralHeightOffset=props.height_offset,
                        proceduralSeed=props.seed & 0x7FFFFFFF if props.seed < 2**31 else None)
            if props.seed >= 2**31:
                keys["raisimSeed"] = props.seed
        else:
            xs = attrs.integer("x_sample", required=True, default=2)
            ys = attrs.integer("y_sample", required=True, default=2)
            x_size = attrs.number("x_size", required=True, default=1.0)
            y_size = attrs.number("y_size", required=True, default=1.0)
            values = attrs.vector("height", required=True, default=None)
            if values is None:
                return
            heights = np.asarray(values, dtype=np.float64)
            if heights.size != xs * ys:
                self.error(node, f"height has {heights.size} values, expected x_sample*y_sample = {xs}*{ys} = {xs * ys}")
                return
        if xs < 2 or ys < 2 or x_size <= 0 or y_size <= 0 or not _sample_count_ok(xs, ys):
            self.error(node, f"a height map needs at least 2x2 samples and a positive size, got {xs}x{ys}, "
                       f"{x_size}x{y_size}")
            return
        if not np.isfinite(heights).all():  # finite scale, offset or noise parameters can still overflow
            self.error(node, "the height map's heights are not all finite numbers (check the scale, offset and "
                       "terrain parameters)")
            return
        material, _ = self._appearance(attrs)  # a terrain stays visible (RaiSim's reader requires it)
        record = new_record("terrain_region", path=path, xSamples=xs, ySamples=ys, xSize=x_size, ySize=y_size,
                            center=(cx, cy, 0.0))
        record.set("heights", np.asarray(heights, dtype=np.float64))
        record.set("contactMaterial", attrs.text("material", default="default"))
        record.set("material", material)
        for key, value in keys.items():
            set_extra(record, key, value)
        if attrs.has("collision_mask"):
            set_extra(record, "collisionMask", attrs.group("collision_mask", default=ALL_GROUPS))
        self._common(record, node, attrs, name, path)
        self.positions[path] = (cx, cy, 0.0)
        self.scene.add(record)

    # -- articulated systems ----------------------------------------------------------------------------

    def articulated(self, node: Node) -> None:
        attrs = _Attrs(self, node)
        path, name = self._path(node, attrs, "articulated_system")
        urdf = attrs.text("urdf_path", "urdf")
        if not urdf:
            self.error(node, "<articulated_system> needs a urdf_path")
            return
        urdf_ref = self.ref(urdf)
        res_ref = self.ref(attrs.text("res_dir", default="") or "")
        found = self.check_file(node, urdf_ref, "URDF file")
        resource_id = sanitize_name(leaf_name(path), "robot") + "_resource"
        while resource_id in self.resource_ids:
            resource_id += "_"
        self.resource_ids.add(resource_id)
        resource = new_record("articulated_resource", id=resource_id, name=leaf_name(path), sourcePath=urdf_ref)
        if res_ref:
            resource.set("resourceDirectory", res_ref)
        modules = attrs.text("modules")
        if modules:
            resource.set("modules", tuple(modules.split()))
        self.scene.add(resource)
        state = node.find("state")
        qpos = qvel = None
        if state is not None:
            sa = _Attrs(self, state)
            qpos = sa.vector("qpos", default=None)
            qvel = sa.vector("qvel", default=None)
        floating = bool(qpos is not None and len(qpos) >= 7 and not (found and _fixed_base(self.absolute(urdf_ref))))
        position, quaternion = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)
        if floating and any(qpos[3:7]):
            position, quaternion = tuple(qpos[:3]), tuple(qpos[3:7])
        record = new_record("articulated", path=path, resourceId=resource_id, position=position,
                            quaternion=quaternion)
        record.set("sourcePath", urdf_ref)
        if res_ref:
            record.set("resourceDirectory", res_ref)
        if modules:
            record.set("modules", tuple(modules.split()))
        record.set("collisionGroup", attrs.group("collision_group", default=1))
        record.set("collisionMask", attrs.group("collision_mask", default=ALL_GROUPS))
        if qpos is not None:
            record.set("generalizedCoordinate", np.asarray(qpos))
        if qvel is not None:
            record.set("generalizedVelocity", np.asarray(qvel))
        set_extra(record, "floatingBase", floating)
        self._common(record, node, attrs, name, path)
        self.positions[path] = position
        self.scene.add(record)

    # -- wires and camera --------------------------------------------------------------------------------

    def wire(self, node: Node) -> None:
        attrs = _Attrs(self, node)
        name = attrs.text("name")
        path = self.paths.take(sanitize_name(name or "", "wire"))
        kind = (attrs.text("type", default="stiff") or "stiff").strip().lower()
        if kind not in ("stiff", "compliant", "custom"):
            self.error(node, f"wire type {kind!r}: expected stiff, compliant or custom")
            kind = "stiff"
        bodies = []
        extras = {}
        for index, tag in enumerate(("object1", "object2")):
            end = node.find(tag)
            side = "AB"[index]
            if end is None:
                self.error(node, f"<wire> needs <{tag}>")
                bodies.append("")
                continue
            ea = _Attrs(self, end)
            target = ea.text("name", default="")
            if target not in self.by_name:
                self.error(end, f"{tag} names {target!r}, which is not an object of this world")
                bodies.append("")
                continue
            bodies.append(self.by_name[target])
            if ea.has("frame"):
                extras[f"frame{side}"] = ea.text("frame")
            extras[f"localIndex{side}"] = ea.integer("local_index", default=0)
            extras[f"localPosition{side}"] = ea.vector("pos", n=3, default=(0.0, 0.0, 0.0))
        if len(bodies) < 2 or not all(bodies):
            return
        record = new_record("wire", path=path, kind=kind, bodyA=bodies[0], bodyB=bodies[1],
                            length=attrs.number("length", default=1.0, required=True))
        for key, value in extras.items():
            set_extra(record, key, value)
        if attrs.has("stiffness"):
            record.set("stiffness", attrs.number("stiffness", default=1000.0))
        for key, field in (("damping", "damping"), ("compliance", "compliance")):
            if attrs.has(key):
                record.set(field, attrs.number(key, default=0.0))
        if attrs.has("stretch_type"):
            set_extra(record, "stretchType", attrs.text("stretch_type"))
        if name is not None and leaf_name(path) != name:
            set_extra(record, "raisimName", name)
        self.scene.add(record)

    def camera(self, node: Node) -> None:
        attrs = _Attrs(self, node)
        offset = (attrs.number("x", default=1.0), attrs.number("y", default=1.0), attrs.number("z", default=1.0))
        follow = attrs.text("follow", default="")
        target_path = self.by_name.get(follow)
        target = self.positions.get(target_path, (0.0, 0.0, 0.0)) if target_path else (0.0, 0.0, 0.0)
        eye = tuple(t + o for t, o in zip(target, offset))
        if not all(math.isfinite(v) for v in eye):  # finite offset + finite target can still overflow
            self.error(node, f"camera position {eye} is out of range")
            return
        record = new_record("camera", path=self.paths.take("Camera"), position=eye,
                            quaternion=quat_look_at(eye, target), verticalFov=60.0, near=0.05, far=1000.0,
                            width=1280, height=720, renderMode="rgb", enabled=True)
        set_extra(record, "follow", follow)
        set_extra(record, "followOffset", offset)
        self.scene.add(record)


def _sample_count_ok(xs: int, ys: int) -> bool:
    """RaiSim's (and the .rscene reader's) limits: at most 16384 samples per axis and 64 Mi in all."""
    return xs <= 16384 and ys <= 16384 and xs * ys <= 64 * 2**20


def read_height_text(path: str):
    """A RaiSim height map text file: ``xSamples ySamples xSize ySize`` then the heights.

    Returns ((xs, ys, x_size, y_size, heights), None) or (None, problem).
    """
    try:
        numbers = [float(t) for t in files.read_text(path).split()]
    except (OSError, ValueError) as exc:
        return None, f"cannot read height map text file {path}: {exc}"
    if len(numbers) < 4 or not float(numbers[0]).is_integer() or not float(numbers[1]).is_integer():
        return None, f"{path}: expected 'xSamples ySamples xSize ySize' then the heights"
    xs, ys = int(numbers[0]), int(numbers[1])
    heights = np.array(numbers[4:], dtype=np.float64)
    if heights.size != xs * ys:
        return None, f"{path}: {heights.size} heights, expected {xs}*{ys} = {xs * ys}"
    return (xs, ys, numbers[2], numbers[3], heights), None


def _fixed_base(urdf_path: str) -> bool:
    """Whether the URDF attaches its root to a link named ``world`` (RaiSim then has no floating base)."""
    try:
        text = files.read_text(urdf_path)
    except OSError:  # a FIFO, a device, a huge file: read (and refused) as the robot itself later
        return False
    return bool(re.search(r"<parent\s+link\s*=\s*[\"']world[\"']", text))


def loads(text: str, path: str = "<string>", params: dict | None = None) -> Scene:
    """Read a RaiSim world XML from text (``path`` names it in errors and anchors relative files)."""
    return _Reader(path, params).read(parse(text, path))


def read(path: str, params: dict | None = None) -> Scene:
    """Read a RaiSim world XML file. ``params`` overrides its ``<params>`` (``@@name`` values)."""
    return loads(read_source(path), path, params)


# =========================================================================================================
# Writing


def _num(value: float) -> str:
    return encode_number(float(value))


def _vec(values, sep: str = " ") -> str:
    return sep.join(_num(v) for v in values)


def _group(value: int) -> str:
    return "-1" if int(value) == ALL_GROUPS else str(int(value))


class _Writer:
    SUPPORTED = {"raisim_engine_scene", "time_step", "gravity", "solver", "contact_material", "object",
                 "compound", "compound_child", "terrain_region", "articulated", "articulated_resource",
                 "wire", "camera", "material", "asset_root", "group", "scene_graph"}

    def __init__(self, scene: Scene, path: str | None):
        self.scene = scene
        self.target_dir = os.path.dirname(os.path.abspath(path)) if path else scene.directory
        self.out = XmlWriter("    ")
        self.warnings: list[str] = []
        self.names: dict[str, str] = {}  # path/id -> XML name
        self.dropped: dict[str, list[str]] = {}

    def drop(self, record, why: str = "") -> None:
        self.dropped.setdefault(record.tag + (f" ({why})" if why else ""), []).append(record_label(record))

    def file_ref(self, ref: str) -> str:
        if not ref:
            return ref
        absolute = ref if os.path.isabs(ref) else self.scene.resolve(ref)
        try:
            rel = os.path.relpath(absolute, self.target_dir).replace(os.sep, "/")
        except ValueError:
            return absolute
        return "[THIS_DIR]/" + rel

    def name_of(self, record) -> str:
        return extra_text(record, "raisimName") or leaf_name(record.path)

    def appearance(self, record, visible: bool, material: str | None) -> str | None:
        if not visible:
            return "hidden"
        raw = extra_text(record, "appearance")
        if raw is not None and raw.strip().lower() != "hidden":
            return raw
        color = material_color(self.scene, material) if material and material != "engine_default" else None
        if color is not None:
            return _vec(color)
        return None

    def write(self) -> str:
        scene, out = self.scene, self.out
        out.open("raisim", {"version": "2.0.0"})
        out.empty("timeStep", {"value": _num(scene.time_step)})
        if scene.of("gravity"):
            out.empty("gravity", {"value": _vec(scene.gravity, ", ")})
        solver = scene.setting("solver")
        erp, erp2 = solver.get("erp"), solver.get("erp2")
        if not scene.of("solver") or (erp, erp2) != (WORLD_SOLVER["erp"], WORLD_SOLVER["erp2"]):
            out.empty("erp", {"erp": _num(erp), "erp2": _num(erp2)})
        self.materials(solver)
        out.open("objects")
        for record in scene.records:
            self.record(record)
        out.close("objects")
        for record in scene.of("wire"):
            self.wire(record)
        for record in scene.of("camera"):
            follow = extra_text(record, "follow")
            if follow is None:
                self.drop(record, "only a camera that follows an object")
                continue
            offset = extra_vec(record, "followOffset", 3, (1.0, 1.0, 1.0))
            out.empty("camera", {"follow": follow, "x": _num(offset[0]), "y": _num(offset[1]), "z": _num(offset[2])})
        out.close("raisim")
        for record in scene.records:
            if record.tag not in self.SUPPORTED:
                self.drop(record)
        self.warnings.extend(loss_warnings(FORMAT, self.dropped))
        return out.text()

    def materials(self, solver) -> None:
        out = self.out
        pairs = self.scene.of("contact_material")
        out.open("material")
        friction = solver.get("defaultFriction")
        out.empty("default", {"friction": _num(friction), "restitution": _num(solver.get("defaultRestitution")),
                              "restitution_threshold": _num(solver.get("defaultRestitutionThreshold"))})
        if solver.get("defaultStaticFriction") != friction or solver.get("defaultRollingFriction") \
                or solver.get("defaultSpinningFriction"):
            self.warnings.append("raisim_xml cannot hold the default material's static, rolling and spinning "
                                 "friction (only friction, restitution and restitution_threshold)")
        for pair in pairs:
            attrib = {"name1": pair.get("materialA"), "name2": pair.get("materialB"),
                      "friction": _num(pair.get("friction")), "restitution": _num(pair.get("restitution")),
                      "restitution_threshold": _num(pair.get("restitutionThreshold"))}
            if pair.get("staticFriction") != pair.get("friction") or pair.get("staticFrictionVelocityThreshold") != 0.001:
                attrib["static_friction"] = _num(pair.get("staticFriction"))
                attrib["static_friction_velocity_threshold"] = _num(pair.get("staticFrictionVelocityThreshold"))
            if pair.get("rollingFriction"):
                attrib["rolling_friction"] = _num(pair.get("rollingFriction"))
            if pair.get("spinningFriction"):
                attrib["spinning_friction"] = _num(pair.get("spinningFriction"))
            out.empty("pair_prop", attrib)
        out.close("material")

    def record(self, record) -> None:
        if record.tag == "object":
            self.single_body(record)
        elif record.tag == "compound":
            self.compound(record)
        elif record.tag == "terrain_region":
            self.heightmap(record)
        elif record.tag == "articulated":
            self.articulated(record)

    def _common(self, record, attrib: dict, visible: bool, material: str | None) -> None:
        appearance = self.appearance(record, visible, material)
        if appearance is not None:
            attrib["appearance"] = appearance

    def _inertia(self, record) -> None:
        diagonal = extra_vec(record, "inertiaDiagonal", 3)
        if not extra_flag(record, "customInertia", record.tag == "compound" and diagonal is not None) or diagonal is None:
            return
        xy, xz, yz = extra_vec(record, "inertiaOffDiagonal", 3, (0.0, 0.0, 0.0))
        self.out.empty("inertia", {"xx": _num(diagonal[0]), "xy": _num(xy), "xz": _num(xz),
                                   "yy": _num(diagonal[1]), "yz": _num(yz), "zz": _num(diagonal[2])})

    def _state(self, record, position, quaternion) -> None:
        attrib = {"pos": _vec(position), "quat": _vec(quaternion)}
        lin = extra_vec(record, "initialLinearVelocity", 3)
        ang = extra_vec(record, "initialAngularVelocity", 3)
        if lin is not None:
            attrib["lin_vel"] = _vec(lin)
        if ang is not None:
            attrib["ang_vel"] = _vec(ang)
        self.out.empty("state", attrib)

    def single_body(self, record) -> None:
        mode, primitive = record.get("bodyMode"), record.get("primitive")
        if mode == "visual_only" or not record.get("collidable"):
            self.drop(record, "visual-only")
            return
        mesh = record.get("collisionMeshPath") or record.get("mesh") or record.get("renderMeshPath")
        if primitive == "mesh" and not mesh:
            self.drop(record, "mesh without a file")
            return
        name = self.name_of(record)
        attrib = {"name": name}
        sx, sy, sz = record.get("scale")
        visible = record.get("visible")
        if primitive == "ground":
            attrib["height"] = _num(record.get("position")[2])
            if record.get("contactMaterial") != "default":
                attrib["material"] = record.get("contactMaterial")
            if record.get("collisionMask") != ALL_GROUPS:
                attrib["collision_mask"] = _group(record.get("collisionMask"))
            if record.get("collisionGroup") != 1:
                attrib["collision_group"] = _group(record.get("collisionGroup"))
            self._common(record, attrib, visible, record.get("material"))
            self.out.empty("ground", attrib)
            self.names[record.path] = name
            self.names[record.id] = name
            return
        attrib["mass"] = _num(record.get("mass"))
        attrib["body_type"] = mode
        if record.get("contactMaterial") != "default":
            attrib["material"] = record.get("contactMaterial")
        attrib["collision_group"] = _group(record.get("collisionGroup"))
        attrib["collision_mask"] = _group(record.get("collisionMask"))
        self._common(record, attrib, visible, record.get("material"))
        com = extra_vec(record, "centerOfMass", 3)
        if primitive == "mesh":
            attrib["file_name"] = self.file_ref(mesh)
            attrib["scale"] = _vec((sx, sy, sz))
            attrib["com"] = _vec(com if com is not None else (0.0, 0.0, 0.0))
        elif com is not None:
            attrib["com"] = _vec(com)
        self.out.open(primitive, attrib)
        r, h = record.get("radius"), record.get("height")
        if primitive == "sphere":
            if not (sx == sy == sz):
                self.warnings.append(f"{record.path}: raisim_xml spheres are round; scale {sx},{sy},{sz} uses x")
            self.out.empty("dim", {"radius": _num(r * sx)})
        elif primitive in ("capsule", "cylinder"):
            self.out.empty("dim", {"radius": _num(r * sx), "height": _num(h * sz)})
        elif primitive == "box":
            self.out.empty("dim", {"x": _num(sx), "y": _num(sy), "z": _num(sz)})
        self._inertia(record)
        self._state(record, record.get("position"), record.get("quaternion"))
        self.out.close(primitive)
        self.names[record.path] = name
        self.names[record.id] = name

    def compound(self, record) -> None:
        name = self.name_of(record)
        if record.get("bodyMode") == "visual_only" or not record.get("collidable"):
            self.drop(record, "visual-only")
            return
        attrib = {"name": name, "mass": _num(record.get("mass")), "body_type": record.get("bodyMode"),
                  "com": _vec(record.get("centerOfMass")),
                  "collision_group": _group(record.get("collisionGroup")),
                  "collision_mask": _group(record.get("collisionMask"))}
        self._common(record, attrib, record.get("visible"), extra_text(record, "material"))
        if tuple(record.get("scale")) != (1.0, 1.0, 1.0):
            self.warnings.append(f"{record.path}: raisim_xml compounds have no scale; {record.get('scale')} dropped")
        out = self.out
        out.open("compound", attrib)
        self._inertia(record)
        out.open("children")
        children = [c for c in self.scene.of("compound_child") if c.get("compound") in (record.path, record.id)]
        for child in children:
            primitive = child.get("primitive")
            if primitive not in ("sphere", "box", "capsule", "cylinder"):
                self.drop(child, f"{primitive} child")
                continue
            cattrib = {"name": extra_text(child, "name") or primitive,
                       "mass": _num(extra_number(child, "mass", record.get("mass") / max(1, len(children))))}
            if child.get("contactMaterial") != "default":
                cattrib["material"] = child.get("contactMaterial")
            self._common(child, cattrib, True, child.get("material"))
            out.open(primitive, cattrib)
            sx, sy, sz = child.get("scale")
            if primitive == "box":
                size = child.get("size")
                out.empty("dim", {"x": _num(size[0] * sx), "y": _num(size[1] * sy), "z": _num(size[2] * sz)})
            elif primitive == "sphere":
                out.empty("dim", {"radius": _num(child.get("radius") * sx)})
            else:
                out.empty("dim", {"radius": _num(child.get("radius") * sx), "height": _num(child.get("height") * sz)})
            out.empty("state", {"pos": _vec(child.get("position")), "quat": _vec(child.get("quaternion"))})
            out.close(primitive)
        out.close("children")
        self._state(record, record.get("position"), record.get("quaternion"))
        out.close("compound")
        self.names[record.path] = name
        self.names[record.id] = name

    def heightmap(self, record) -> None:
        name = self.name_of(record)
        cx, cy, cz = record.get("center")
        heights = np.asarray(record.get("heights"), dtype=np.float64)
        xs, ys = record.get("xSamples"), record.get("ySamples")
        if heights.size == 0:
            heights = np.zeros(xs * ys)
        attrib = {"name": name, "center_x": _num(cx), "center_y": _num(cy)}
        if record.get("contactMaterial") != "default":
            attrib["material"] = record.get("contactMaterial")
        mask = extra_text(record, "collisionMask")
        if mask:
            attrib["collision_mask"] = _group(int(mask))
        self._common(record, attrib, record.get("visible"), record.get("material"))
        source = extra_text(record, "heightSource")
        size = {"x_size": _num(record.get("xSize")), "y_size": _num(record.get("ySize"))}
        samples = {"x_sample": str(xs), "y_sample": str(ys)}
        written = False
        if cz == 0 and source == "procedural":
            props = _procedural(record)
            if props is not None and terrain_gen.matches(props, heights):
                self.out.open("heightmap", {**attrib, **samples, **size})
                self.out.empty("terrain_properties", {
                    "frequency": _num(props.frequency), "z_scale": _num(props.z_scale),
                    "fractal_octaves": str(props.fractal_octaves), "fractal_lacunarity": _num(props.fractal_lacunarity),
                    "fractal_gain": _num(props.fractal_gain), "step_size": _num(props.step_size),
                    "height_offset": _num(props.height_offset), "seed": str(props.seed)})
                self.out.close("heightmap")
                written = True
        elif cz == 0 and source in ("png", "text"):
            ref = record.get("sourcePath")
            absolute = self.scene.resolve(ref) if ref else ""
            if source == "png" and absolute and os.path.exists(absolute):
                scale, offset = record.get("pngHeightScale"), record.get("pngHeightOffset")
                try:
                    pixels = pngcodec.read_grey(absolute)
                except (pngcodec.PngError, OSError):
                    pixels = None
                if pixels is not None and pixels.shape == (ys, xs) and \
                        np.array_equal(pixels.ravel() * scale + offset, heights):
                    self.out.empty("heightmap", {**attrib, "png": self.file_ref(ref), **size,
                                                 "z_scale": _num(scale), "z_offset": _num(offset)})
                    written = True
            elif source == "text" and absolute and os.path.exists(absolute):
                parsed, _ = read_height_text(absolute)
                if parsed is not None and parsed[0] == xs and parsed[1] == ys and \
                        parsed[2] == record.get("xSize") and parsed[3] == record.get("ySize") and \
                        np.array_equal(parsed[4], heights):
                    self.out.empty("heightmap", {**attrib, "text": self.file_ref(ref)})
                    written = True
        if not written:
            self.out.empty("heightmap", {**attrib, **samples, **size, "height": _vec(heights + cz)})
        self.names[record.path] = name
        self.names[record.id] = name

    def articulated(self, record) -> None:
        name = self.name_of(record)
        resource = next((r for r in self.scene.of("articulated_resource")
                         if r.get("id") == record.get("resourceId")), None)
        urdf = record.get("sourcePath") or (resource.get("sourcePath") if resource else "")
        res_dir = record.get("resourceDirectory") or (resource.get("resourceDirectory") if resource else "")
        if not urdf:
            self.drop(record, "no URDF path")
            return
        attrib = {"name": name}
        if res_dir:
            attrib["res_dir"] = self.file_ref(res_dir)
        attrib["urdf_path"] = self.file_ref(urdf)
        attrib["collision_group"] = _group(record.get("collisionGroup"))
        attrib["collision_mask"] = _group(record.get("collisionMask"))
        modules = record.get("modules") or (resource.get("modules") if resource else ())
        if modules:
            attrib["modules"] = " ".join(modules)
        gc = np.asarray(record.get("generalizedCoordinate"), dtype=np.float64).copy()
        if extra_flag(record, "floatingBase", False) and gc.size >= 7:
            gc[:3] = record.get("position")
            gc[3:7] = record.get("quaternion")
        state = {}
        if gc.size:
            state["qpos"] = _vec(gc, ", ")
        gv = np.asarray(record.get("generalizedVelocity"), dtype=np.float64)
        if gv.size:
            state["qvel"] = _vec(gv, ", ")
        if state:
            self.out.open("articulated_system", attrib)
            self.out.empty("state", state)
            self.out.close("articulated_system")
        else:
            self.out.empty("articulated_system", attrib)
        self.names[record.path] = name
        self.names[record.id] = name

    def wire(self, record) -> None:
        name = extra_text(record, "raisimName") or leaf_name(record.path)
        if not record.get("enabled"):
            self.drop(record, "disabled")
            return
        attrib = {"name": name, "type": record.get("kind"), "length": _num(record.get("length"))}
        if record.get("kind") == "compliant" or "stiffness" in record.raw_keys:
            attrib["stiffness"] = _num(record.get("stiffness"))
        if record.get("damping"):
            attrib["damping"] = _num(record.get("damping"))
        if record.get("compliance"):
            attrib["compliance"] = _num(record.get("compliance"))
        stretch = extra_text(record, "stretchType")
        if stretch:
            attrib["stretch_type"] = stretch
        ends = []
        for side in "AB":
            body = record.get(f"body{side}")
            target = self.names.get(body)
            if target is None:
                self.drop(record, f"body {body!r} not written")
                return
            end = {"name": target}
            frame = extra_text(record, f"frame{side}")
            if frame:
                end["frame"] = frame
            else:
                end["local_index"] = str(record.get(f"localIndex{side}"))
                end["pos"] = _vec(record.get(f"localPosition{side}"))
            ends.append(end)
        self.out.open("wire", attrib)
        self.out.empty("object1", ends[0])
        self.out.empty("object2", ends[1])
        self.out.close("wire")


def _procedural(record) -> terrain_gen.TerrainProperties | None:
    seed = extra_number(record, "raisimSeed")
    return terrain_gen.TerrainProperties(
        frequency=record.get("proceduralFrequency"), x_size=record.get("xSize"), y_size=record.get("ySize"),
        z_scale=record.get("proceduralZScale"), x_samples=record.get("xSamples"), y_samples=record.get("ySamples"),
        fractal_octaves=record.get("proceduralOctaves"), fractal_lacunarity=record.get("proceduralLacunarity"),
        fractal_gain=record.get("proceduralGain"), step_size=record.get("proceduralStepSize"),
        height_offset=record.get("proceduralHeightOffset"),
        seed=int(seed) if seed is not None else record.get("proceduralSeed"))


dumps, write = text_writer(_Writer, "(XML text, warnings about what the file cannot hold). ``path`` anchors "
                                    "``[THIS_DIR]`` references.")

