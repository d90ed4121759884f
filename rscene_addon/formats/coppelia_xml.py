"""CoppeliaSim "simple" XML scenes and models (``<CoppeliaSim>``): reader and writer.

Scene objects nest: an element inside another is its child, positioned by ``common/localFrame``
(``position`` in metres, ``euler`` alpha/beta/gamma in degrees, ``R = Rx(a) Ry(b) Rz(g)``) relative to the
parent. The reader composes world transforms and writes every node in world coordinates; a child's
``parentGroupId`` names its parent node, and the scene gets ``scene_graph inheritedTransforms=false``
(the documented way to keep parents without inherited transforms). Node paths follow the nesting
(``/World/bubbleRob/bubbleRobLeftMotor``).

Mapping (XML -> records):

* ``shape`` with ``primitive`` cuboid/sphere/cylinder -> ``object`` box/sphere/cylinder (cone, plane and disc
  have no scene primitive: cylinder, thin box and thin cylinder, marked ``coppeliaPrimitive``, with a
  warning); ``mesh`` -> ``object`` mesh (``fileName`` relative to the XML file; inline ``vertices``/
  ``indices`` kept as the extra keys ``meshVertices``/``meshIndices``); ``heightfield`` -> ``terrain_region``
  (CoppeliaSim centres a height field's frame in its bounding box, so the region's centre z is the frame's
  z minus the middle of the height range); ``compound`` -> ``compound`` + ``compound_child`` records.
* ``dynamics``: ``static`` (default true) -> body mode static, else dynamic; ``respondable`` false -> a
  visual-only object when static, a dynamic body that collides with nothing (mask 0) otherwise; ``mass``;
  ``principalMomentOfInertia`` (CoppeliaSim stores it per unit mass) and ``localInertiaFrame`` ->
  ``inertiaDiagonal``/``inertiaOffDiagonal``/``centerOfMass`` in the body frame; Bullet ``friction`` -> extra key ``friction``. Colors (``ambientDiffuse``, 0-255) -> materials.
* ``joint`` -> a visual-only cylinder (length x diameter) with ``jointType``, ``jointMode``, limits in SI
  units (radians for revolute joints), ``jointPosition``, ``jointMaxForce``... The scene model has no
  joint constraint, so the bodies under a joint are independent bodies (reported as a warning).
* ``dummy`` -> a visual-only sphere (``coppeliaType=dummy``). ``camera`` -> ``camera`` (CoppeliaSim cameras
  look along local +z with +y up; scene cameras look along +x with +z up, the quaternion is converted).
* ``light`` omni/spot/directional -> ``light`` point/spot/directional (direction = local +z; colors 0-255).
* ``proximitySensor``, ``forceSensor``, ``visionSensor`` -> ``sensor`` records (pose relative to the parent).
* ``childScript``/``customizationScript`` text -> extra keys ``childScript``/``customizationScript``.
* Every other leaf element of an object is kept as an extra key ``cs.<path>`` (``cs.common.
  localObjectProperty.selectable=false``) and written back in place.

The writer emits a ``simpleScene`` (or the ``simpleModel`` the scene was read from).
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
from xml.etree.ElementTree import Element as Node  # the reader's tree (xmltree.parse_elements)

from ..model import RECORD_CLASSES, Diagnostic, FormatError, Scene, new_record
from ..model.values import encode_number, remember
from .atomic import read_source, text_writer
from .sceneutil import (PathAllocator, color_material, extra_flag, extra_list, extra_number, extra_text,
                        extra_vec, leaf_name, loss_warnings, material_color, record_label, sanitize_name,
                        set_extra, warn)
from ..base.spatial import IDENTITY, ORIGIN, compose, quat_from_z_to, relative, same_rotation
from ..base.spatial import quat_to_matrix as matrix_from_quat
from ..base.spatial import record_coppelia_euler as coppelia_euler_from_quat
from ..base.spatial import record_quat_from_coppelia_euler as quat_from_coppelia_euler
from ..base.spatial import record_quat_from_matrix as quat_from_matrix
from ..base.spatial import record_quat_mul as quat_mul
from ..base.spatial import record_rotate as quat_rotate
from .xmltree import XmlWriter, element_text, parse_elements

FORMAT = "coppelia_xml"
EXTENSIONS = (".simscene.xml", ".simmodel.xml", ".xml")
OBJECT_TAGS = ("shape", "joint", "dummy", "camera", "light", "proximitySensor", "forceSensor", "visionSensor")
UNSUPPORTED_OBJECT_TAGS = ("path", "graph", "octree", "pointCloud", "mill", "mirror")
THIN = 0.001  # thickness given to planes and discs, which have none in CoppeliaSim
# Camera frames: CoppeliaSim (+z forward, +y up) in scene-camera axes (+x forward, +z up).
_CAMERA_FIX = quat_from_matrix(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
_LIGHT_TYPES = {"omni": "point", "spot": "spot", "directional": "directional"}
_PROXIMITY_KINDS = "proximity"
_ANY_OBJECT_TAG = frozenset(OBJECT_TAGS + UNSUPPORTED_OBJECT_TAGS)
_GEOMETRY_DONE: dict = {}  # (geometry tag, keys read) -> consumed paths, for leftovers_geometry
# What ``dynamics`` reads itself of a shape's <dynamics>; ``leftovers`` keeps the rest.
_DYNAMICS_DONE = frozenset(f"dynamics.{d}" for d in (
    "switches.static", "switches.respondable", "mass", "principalMomentOfInertia", "localInertiaFrame.position",
    "localInertiaFrame.euler", "material.engines.bullet.friction"))


_VISIT_CONSUMED = frozenset(("common.alias", "common.name", "common.localFrame.position", "common.localFrame.euler"))
_HANDLERS = {tag: "read_" + tag for tag in OBJECT_TAGS}
_SEPARATORS = re.compile(r"[,\s]+")
_SCRIPT_TAGS = ("childScript", "customizationScript")
_OBJECT = RECORD_CLASSES["object"]
_BOX, _BALL, _CYLINDER = ("scale",), ("radius",), ("radius", "height")  # the size fields of a primitive


def _floats(text: str | None) -> tuple[float, ...] | None:
    """The numbers of an element's text (separated by spaces or commas), or None if one is not a finite
    number. Remembered per text: sizes, angles, masses and flags' numbers repeat from shape to shape."""
    if text is None:
        return None
    values = _FLOATS.get(text, _MISSING)
    if values is _MISSING:
        # str.split() splits at the very characters \s matches (str.isspace), without a regex call per value
        parts = filter(None, _SEPARATORS.split(text.strip())) if "," in text else text.split()
        try:
            values = tuple(map(float, parts))
        except ValueError:
            values = None
        else:  # the sum is one test for all; an overflowing sum of finite values takes the exact test
            if not math.isfinite(sum(values)) and not all(map(math.isfinite, values)):
                values = None
        if len(text) <= 64:  # short texts only: a mesh's vertex list is read once
            remember(_FLOATS, text, values, 65536)
    return values


_FLOATS: dict = {}
_MISSING = object()


# Euler angles -> quaternion per distinct angle triple: a scene repeats few rotations (most are 0 0 0),
# and the conversion is two numpy matrix products. Keyed with the zeros' signs, which can show in the
# result (0.0 == -0.0 as a dict key).
_EULER_QUATS: dict = {}


def _euler_quat(euler: tuple) -> tuple:
    key = euler if all(euler) else (euler, tuple(math.copysign(1.0, v) for v in euler))
    quat = _EULER_QUATS.get(key)
    if quat is None:
        quat = remember(_EULER_QUATS, key, quat_from_coppelia_euler(*euler), 65536)
    return quat


# compose()'s quaternion per (parent, local) rotation pair: it depends on the values only (a zero's sign
# changes no bit of it), and a scene repeats few rotations, so two compositions per shape of products,
# normalisations and their cleaning become a dict look-up.
_COMPOSED: dict = {}


def _compose(a: tuple, b: tuple) -> tuple:
    """``spatial.compose(a, b)``, bit for bit, for the common poses (a parent at the identity rotation,
    or no local offset) with the rotation product remembered; the rest goes to ``compose``."""
    (pa, qa), (pb, qb) = a, b
    quat = _COMPOSED.get((qa, qb))
    if quat is None:
        pose = compose(a, b)
        remember(_COMPOSED, (qa, qb), pose[1], 65536)
        return pose
    # compose's own shortcuts, in its order (same finiteness tests, same sums, same -0.0 cleaning)
    x, y, z = pb
    if (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)
            and qa[0] == 1.0 and qa[1] == 0.0 and qa[2] == 0.0 and qa[3] == 0.0):
        return (pa[0] + x + 0.0, pa[1] + y + 0.0, pa[2] + z + 0.0), quat
    if x == 0.0 and y == 0.0 and z == 0.0 and all(map(math.isfinite, qa)):
        return (pa[0] + 0.0 + 0.0, pa[1] + 0.0 + 0.0, pa[2] + 0.0 + 0.0), quat
    return compose(a, b)[0], quat


def _plain_common(common: Node) -> bool:
    """Whether a ``<common>`` holds nothing but what ``visit`` reads: an ``<alias>`` or ``<name>`` and a
    ``<localFrame>`` of a ``<position>`` and an ``<euler>``, each once, none with children."""
    seen = set()
    for child in common:
        tag = child.tag
        if tag in seen:
            return False
        seen.add(tag)
        if tag == "localFrame":
            inner = set()
            for part in child:
                if part.tag not in ("position", "euler") or part.tag in inner or len(part):
                    return False
                inner.add(part.tag)
        elif tag not in ("alias", "name") or len(child):
            return False
    return True


_NO_FRAME = (ORIGIN, IDENTITY)


def _plain_frame(frame: Node) -> tuple | None:
    """The pose of a ``localFrame`` of at most a ``<position>`` and an ``<euler>`` (leaves, each once, three
    numbers each), as ``_Reader.frame`` reads it; None for any other (which ``frame`` reads, or reports)."""
    if len(frame) > 2:
        return None
    position, euler = ORIGIN, (0.0, 0.0, 0.0)
    seen = None
    for part in frame:
        tag = part.tag
        if tag == seen or len(part) or (tag != "position" and tag != "euler"):
            return None
        seen = tag
        values = _floats(part.text or "")
        if values is None or len(values) != 3:
            return None
        if tag == "position":
            position = values
        else:
            euler = values
    return position, _euler_quat(euler)


def _switches(dynamics: Node | None) -> tuple[bool, bool, float]:
    """(static, respondable, mass) of a shape's ``<dynamics>``, as ``_Reader.dynamics`` reads them (which
    reports what is wrong with them: here a malformed value just takes its default)."""
    static = respondable = True
    mass = 1.0
    if dynamics is not None:
        switches = dynamics.find("switches")
        if switches is not None:
            static = _flag(_child_text(switches, "static"), True)
            respondable = _flag(_child_text(switches, "respondable"), True)
        node = dynamics.find("mass")
        values = _floats(element_text(node)) if node is not None else None
        mass = values[0] if values and len(values) == 1 else 1.0
        if mass <= 0 and not static:
            mass = 1.0
    return static, respondable, mass


def _body_fields(static: bool, respondable: bool, mass: float, visual_only_field=True) -> dict:
    """The record fields a shape's dynamics switches and mass give."""
    if static and not respondable:
        # a static shape that nothing collides with takes no part in the physics: visual only
        fields = {"mass": mass, "bodyMode": "visual_only", "collidable": False}
        if visual_only_field:
            fields["visualOnly"] = True
        return fields
    fields = {"mass": mass, "bodyMode": "static" if static else "dynamic"}
    if not respondable:
        fields["collisionMask"] = 0  # a dynamic body that collides with nothing
    return fields


def _flag(text: str | None, default: bool) -> bool:
    if text is None:
        return default
    low = text.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    return default


def _child_text(node: Node, tag: str, default: str | None = None) -> str | None:
    """The stripped text of the first child ``tag``, or ``default`` without one."""
    child = node.find(tag)
    return element_text(child).strip() if child is not None else default


def _path(node: Node, dotted: str) -> Node | None:
    for part in dotted.split("."):
        if node is None:
            return None
        node = node.find(part)
    return node


class _Reader:
    def __init__(self, path: str, lines):
        self.path = path
        self.lines = lines  # xmltree.ElementLines: the line of an element a message names
        self.scene = Scene(version=2, path=None if path.startswith("<") else path)
        self.scene.source_format = FORMAT
        self.errors: list[Diagnostic] = []
        self.paths = PathAllocator("/World")
        self.colors: dict = {}
        self.parented = False
        self.joint_warned = False
        self.makers: dict = {}  # primitive_record's record makers

    def error(self, node: Node, message: str) -> None:
        self.errors.append(Diagnostic(self.path, self.lines.line(node), node.tag, message))

    def warn(self, node: Node, message: str) -> None:
        warn(self.scene, self.path, self.lines.line(node), node.tag, message)

    # -- values ---------------------------------------------------------------------------------------

    def numbers(self, node: Node | None, tag: str, n: int | None = None, default=None):
        child = node.find(tag) if node is not None else None
        if child is None:
            return default
        text = element_text(child)
        values = _floats(text)
        if values is None or (n is not None and len(values) != n):
            self.error(child, f"<{tag}> needs {n if n else 'a list of'} number(s), got {text.strip()!r}")
            return default
        return tuple(values)

    def number(self, node: Node | None, tag: str, default: float | None = None) -> float | None:
        values = self.numbers(node, tag, 1)
        return values[0] if values else default

    def frame(self, node: Node | None) -> tuple:
        """The pose of a ``localFrame`` element (identity when absent)."""
        if node is None:
            return ORIGIN, IDENTITY
        if len(node) == 2:  # the usual <position> then <euler>, both well formed: no finds, no checks
            first, second = node
            if first.tag == "position" and second.tag == "euler":
                position, euler = _floats(element_text(first)), _floats(element_text(second))
                if position is not None and euler is not None and len(position) == 3 and len(euler) == 3:
                    return position, _euler_quat(euler)
        position = self.numbers(node, "position", 3, ORIGIN)
        euler = self.numbers(node, "euler", 3, (0.0, 0.0, 0.0))
        return tuple(position), _euler_quat(euler)

    def ref(self, value: str) -> str:
        return value.strip().replace("\\", "/")

    def absolute(self, ref: str) -> str:
        return ref if os.path.isabs(ref) else os.path.normpath(os.path.join(self.scene.directory, ref))

    def color(self, node: Node | None) -> str:
        values = self.numbers(node, "ambientDiffuse", 3) if node is not None else None
        if values is None:
            return "engine_default"
        return color_material(self.scene, [v / 255.0 for v in values], self.colors, "coppelia")

    # -- leftovers ------------------------------------------------------------------------------------

    def leftovers(self, record, node: Node, consumed: set[str], prefix: str = "", skip_objects: bool = True) -> None:
        counts: dict[str, int] = {}
        skip = skip_objects and not prefix
        dot = prefix + "." if prefix else ""
        for child in node:
            tag = child.tag
            if skip and tag in _ANY_OBJECT_TAG:
                continue
            if tag in counts:
                count = counts[tag] = counts[tag] + 1
                dotted = f"{dot}{tag}#{count}"
            else:
                counts[tag] = 1
                dotted = dot + tag
            if dotted in consumed:
                continue
            if len(child):
                self.leftovers(record, child, consumed, dotted, skip_objects)
            elif not any(c.startswith(dotted + ".") for c in consumed):
                set_extra(record, "cs." + dotted, (child.text or "").strip())

    # -- top level ------------------------------------------------------------------------------------

    def read(self, root: Node) -> Scene:
        if root.tag.lower() != "coppeliasim":
            raise FormatError(Diagnostic(self.path, self.lines.line(root), root.tag,
                                         f"not a CoppeliaSim file: the root element is <{root.tag}>"))
        filetype = _child_text(root, "filetype")
        if filetype is None:
            self.error(root, "missing <filetype> (simpleScene or simpleModel)")
        elif filetype not in ("simpleScene", "simpleModel"):
            self.error(root.find("filetype"), f"filetype {filetype!r}: only the simple XML format "
                       "(simpleScene, simpleModel) is supported")
        self.scene.coppelia_filetype = filetype or "simpleScene"
        if root.find("xmlSerializationNb") is None:
            self.warn(root, "missing <xmlSerializationNb>")
        dynamics = root.find("dynamics")
        if dynamics is not None and dynamics.find("gravity") is not None:
            gravity = self.numbers(dynamics, "gravity", 3)
            if gravity:
                self.scene.add(new_record("gravity", gravity=gravity))
        simulation = root.find("simulation")
        if simulation is not None:
            dt = self.number(simulation, "simulationTimeStep") or self.number(simulation, "timeStep")
            if dt:
                self.scene.add(new_record("time_step", dt=dt))
        for child in root:
            if child.tag in OBJECT_TAGS:
                self.visit(child, (ORIGIN, IDENTITY), None, None)
            elif child.tag in UNSUPPORTED_OBJECT_TAGS:
                self.warn(child, f"<{child.tag}> objects are not supported: ignored with their children")
            elif child.tag not in ("filetype", "xmlSerializationNb", "environment", "settings", "dynamics",
                                   "simulation"):
                self.warn(child, f"unknown element <{child.tag}>: ignored")
        if self.parented:
            self.scene.add(new_record("scene_graph", inheritedTransforms=False))
        if self.errors:
            raise FormatError(self.errors)
        return self.scene

    def visit(self, node: Node, parent_world: tuple, parent_path: str | None, parent) -> None:
        """Read one object element and its children. ``parent`` is (record, world pose) or None."""
        if node.tag == "shape" and self.plain_shape(node, parent_world, parent_path, parent):
            return
        common = node.find("common")
        alias = None
        if common is not None:
            alias = _child_text(common, "alias") or _child_text(common, "name")
        path = self.paths.take(sanitize_name(alias or "", node.tag), parent_path)
        local = self.frame(common.find("localFrame") if common is not None else None)
        world = _compose(parent_world, local)
        consumed = set(_VISIT_CONSUMED)
        handler = getattr(self, _HANDLERS[node.tag])
        record, record_world, extras = handler(node, path, world, parent, consumed)
        if record is not None:
            if parent is not None and record.schema.field("parentGroupId") is not None:
                record.set("parentGroupId", parent[0].id)
                self.parented = True
            if alias is not None and leaf_name(path) != alias:
                set_extra(record, "coppeliaAlias", alias)
            self.scripts(record, node, consumed)
            if common is not None and _plain_common(common):
                consumed.add("common")  # all of it read above: leftovers() need not walk it
            self.leftovers(record, node, consumed)
            self.scene.add(record)
            for extra_record in extras:
                self.scene.add(extra_record)
            holder = (record, record_world)
        else:
            holder = parent
        for child in node:
            if child.tag in OBJECT_TAGS:
                self.visit(child, world, path, holder)
            elif child.tag in UNSUPPORTED_OBJECT_TAGS:
                self.warn(child, f"<{child.tag}> objects are not supported: ignored with their children")

    def plain_shape(self, node: Node, parent_world: tuple, parent_path: str | None, parent) -> bool:
        """``visit`` of the commonest shape, in fewer steps: a ``<common>`` that ``_plain_common`` accepts, a
        ``<primitive>`` cuboid, cylinder or sphere (a ``<type>``, a ``<size>``, a ``<color>`` of an
        ``<ambientDiffuse>``, a ``<localFrame>``) and a ``<dynamics>`` of a ``<mass>`` and ``<switches>``,
        each once, every value well formed: what needs no warning, error or extra key, and holds no object.
        Everything is read before anything is done; False (and nothing done) for any other shape, which
        ``visit`` reads. Same records, in the same order, as ``visit``: its steps in the same order."""
        common = geometry = dynamics = None
        for child in node:
            tag = child.tag
            if tag == "common" and common is None:
                common = child
            elif tag == "primitive" and geometry is None:
                geometry = child
            elif tag == "dynamics" and dynamics is None:
                dynamics = child
            else:
                return False
        if geometry is None:
            return False
        alias = None
        local = _NO_FRAME
        if common is not None:
            if not _plain_common(common):
                return False
            alias = _child_text(common, "alias") or _child_text(common, "name")
            frame = common.find("localFrame")
            if frame is not None and (local := _plain_frame(frame)) is None:
                return False
        kind = size = color = frame = None
        for part in geometry:
            tag = part.tag
            if tag == "type" and kind is None and not len(part):
                kind = (part.text or "").strip().lower()
            elif tag == "size" and size is None and not len(part):
                size = _floats(part.text or "")
                if size is None:
                    return False
            elif tag == "color" and color is None:
                if len(part) != 1 or part[0].tag != "ambientDiffuse" or len(part[0]):
                    return False
                color = _floats(part[0].text or "")
                if color is None or len(color) != 3:
                    return False
            elif tag == "localFrame" and frame is None:
                frame = part
            else:
                return False
        # single_shape's size: a short list repeats its last number, none gives 0.1 each
        size = size + (size[-1],) * (3 - len(size)) if size else (0.1, 0.1, 0.1)
        if kind == "cuboid":
            primitive, names, shape = "box", _BOX, (size[:3],)
        elif kind == "cylinder":
            primitive, names, shape = "cylinder", _CYLINDER, (size[0] / 2, size[2])
        elif kind == "sphere" and size[0] == size[1] == size[2]:
            primitive, names, shape = "sphere", _BALL, (size[0] / 2,)
        else:
            return False
        geo_local = _NO_FRAME
        if frame is not None and (geo_local := _plain_frame(frame)) is None:
            return False
        static = respondable = True
        mass = 1.0
        if dynamics is not None:
            mass_node = switches = None
            for part in dynamics:
                tag = part.tag
                if tag == "mass" and mass_node is None and not len(part):
                    mass_node = part
                elif tag == "switches" and switches is None:
                    switches = part
                else:
                    return False
            if switches is not None:
                seen = set()
                for part in switches:
                    if part.tag not in ("static", "respondable") or part.tag in seen or len(part):
                        return False
                    seen.add(part.tag)
                static = _flag(_child_text(switches, "static"), True)
                respondable = _flag(_child_text(switches, "respondable"), True)
            if mass_node is not None:
                values = _floats(mass_node.text or "")
                if values is None or len(values) != 1:
                    return False
                mass = values[0]
                if mass <= 0 and not static:
                    return False
        world = _compose(parent_world, local)
        body = _compose(world, geo_local)
        # what visit, read_shape and single_shape do with it, in their order
        path = self.paths.take(sanitize_name(alias or "", "shape"), parent_path)
        material = ("engine_default" if color is None else
                    color_material(self.scene, [v / 255.0 for v in color], self.colors, "coppelia"))
        record = self.primitive_record(path, body, material, _body_fields(static, respondable, mass), primitive,
                                       names, shape)
        if parent is not None and record.schema.field("parentGroupId") is not None:
            record.set("parentGroupId", parent[0].id)
            self.parented = True
        if alias is not None and leaf_name(path) != alias:
            set_extra(record, "coppeliaAlias", alias)
        self.scene.add(record)
        return True

    def scripts(self, record, node: Node, consumed: set[str]) -> None:
        if not any(child.tag in _SCRIPT_TAGS for child in node):
            return  # (most objects have no script: one pass instead of a find per kind)
        for kind in _SCRIPT_TAGS:
            script = node.find(kind)
            if script is None:
                continue
            text = script.find("scriptText")
            if text is not None:
                set_extra(record, kind, element_text(text))
                consumed.add(f"{kind}.scriptText")

    # -- shapes ---------------------------------------------------------------------------------------

    def read_shape(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        geometry = next((c for c in node if c.tag in ("primitive", "mesh", "heightfield", "compound")), None)
        if geometry is None:
            self.error(node, "a shape needs one of <primitive>, <mesh>, <heightfield> or <compound>")
            return None, world, ()
        consumed.add(geometry.tag)
        dynamics = node.find("dynamics")
        if geometry.tag == "heightfield":
            record = self.heightfield(geometry, path, world)
            if record is None:
                return None, world, ()
            self.leftovers_geometry(record, geometry, ("size", "data", "gridStep", "localFrame.position",
                                                        "localFrame.euler", "color.ambientDiffuse"))
            if record is not None and dynamics is not None:
                consumed.add("dynamics")
                self.leftovers(record, dynamics, set(), "dynamics", False)
            return record, world, ()
        if geometry.tag == "compound":
            record = new_record("compound", path=path, position=world[0], quaternion=world[1])
            self.dynamics(record, dynamics, consumed, world, world)
            children = self.compound_children(geometry, path, (ORIGIN, IDENTITY))
            if len(children) < 1:
                self.error(geometry, "a compound needs at least one primitive or mesh")
            return record, world, children
        # primitive or mesh
        geo_local = self.frame(geometry.find("localFrame"))
        body = _compose(world, geo_local)
        # the body fields go into the record as it is made (a set() each afterwards was a tenth of a shape);
        # dynamics() still reads the element for its errors and extra keys
        record = self.single_shape(geometry, path, body, _body_fields(*_switches(dynamics)))
        if record is None:
            return None, world, ()
        self.dynamics(record, dynamics, consumed, world, body, preset=True)
        return record, body, ()

    def leftovers_geometry(self, record, geometry: Node, consumed_inside) -> None:
        key = (geometry.tag, consumed_inside)
        consumed = _GEOMETRY_DONE.get(key)
        if consumed is None:  # a few tag and key-list pairs, made once
            consumed = _GEOMETRY_DONE[key] = frozenset(f"{geometry.tag}.{c}" for c in consumed_inside)
        # what leftovers() of a holder element around the geometry does, without making the holder: a
        # geometry element without children has nothing left over (its own tag prefixes every consumed path)
        if len(geometry):
            self.leftovers(record, geometry, consumed, geometry.tag, False)

    def single_shape(self, geometry: Node, path: str, body: tuple, fields: dict | None = None):
        """An ``object`` record of a primitive or mesh; ``fields`` (body mode, mass...) go into it as made."""
        material = self.color(geometry.find("color"))
        fields = fields or {}
        if geometry.tag == "mesh":
            record = new_record("object", path=path, primitive="mesh", position=body[0], quaternion=body[1],
                                material=material, **fields)
            file_name = _child_text(geometry, "fileName")
            if file_name:
                ref = self.ref(file_name)
                record.set("mesh", ref)
                if not os.path.exists(self.absolute(ref)):
                    self.warn(geometry, f"mesh file not found: {self.absolute(ref)}")
            else:
                vertices = self.numbers(geometry, "vertices")
                indices = self.numbers(geometry, "indices")
                if not vertices or not indices or len(vertices) % 3 or len(indices) % 3:
                    self.error(geometry, "a mesh needs a <fileName>, or <vertices> (x y z ...) and <indices> "
                               "(three per triangle)")
                    return None
                if any(i < 0 or i >= len(vertices) // 3 or not float(i).is_integer() for i in indices):
                    self.error(geometry.find("indices"), "mesh index out of range")
                    return None
                set_extra(record, "meshVertices", np.asarray(vertices))
                set_extra(record, "meshIndices", [int(i) for i in indices])
            self.leftovers_geometry(record, geometry, ("fileName", "vertices", "indices", "localFrame.position",
                                                        "localFrame.euler", "color.ambientDiffuse"))
            return record
        kind = (_child_text(geometry, "type") or "").lower()
        size = self.numbers(geometry, "size", None, (0.1, 0.1, 0.1))
        size = tuple(size) + (size[-1],) * (3 - len(size)) if size else (0.1, 0.1, 0.1)
        mark = None
        if kind == "cuboid":
            primitive, names, shape = "box", _BOX, (size[:3],)
        elif kind == "sphere":
            primitive, names, shape = "sphere", _BALL, (size[0] / 2,)
            if not (size[0] == size[1] == size[2]):
                self.warn(geometry, f"ellipsoid {size}: read as a sphere of diameter {size[0]}")
                mark = "sphere"
        elif kind in ("cylinder", "cone", "disc"):
            height = size[2] if kind != "disc" else THIN
            primitive, names, shape = "cylinder", _CYLINDER, (size[0] / 2, height)
            if kind != "cylinder":
                mark = kind
                self.warn(geometry, f"a {kind} has no scene primitive: read as a cylinder")
        elif kind == "plane":
            primitive, names, shape = "box", _BOX, ((size[0], size[1], size[2] if size[2] > 0 else THIN),)
            mark = "plane"
            self.warn(geometry, "a plane has no scene primitive: read as a thin box")
        else:
            self.error(geometry, f"primitive type {kind!r}: expected cuboid, sphere, cylinder, cone, plane or disc")
            return None
        record = self.primitive_record(path, body, material, fields, primitive, names, shape)
        if mark:
            set_extra(record, "coppeliaPrimitive", mark)
            set_extra(record, "coppeliaSize", size[:3])
        self.leftovers_geometry(record, geometry, ("type", "size", "localFrame.position", "localFrame.euler",
                                                    "color.ambientDiffuse"))
        return record

    def primitive_record(self, path: str, body: tuple, material: str, fields: dict, primitive: str,
                         names: tuple, shape: tuple):
        """``new_record("object", path=..., position=..., quaternion=..., material=..., **fields,
        primitive=..., <names>=<shape>)``, made by a ``Record.maker`` per kind of shape (its primitive,
        material and body fields): a scene's many shapes of a kind differ in path, pose and size only."""
        mass = fields.get("mass")
        key = (primitive, material, tuple(fields.items()), mass is not None and math.copysign(1.0, mass))
        make = self.makers.get(key, _MISSING)
        if make is _MISSING:  # (-0.0 == 0.0 as a key; their texts differ: the sign of the mass is in the key)
            make = self.makers[key] = _OBJECT.maker({"material": material, **fields, "primitive": primitive},
                                                    ("path", "position", "quaternion") + names)
        if make is None:
            values = dict(path=path, position=body[0], quaternion=body[1], material=material, **fields)
            values.update(primitive=primitive, **dict(zip(names, shape)))
            return new_record("object", **values)
        return make(path, body[0], body[1], *shape)

    def compound_children(self, compound: Node, path: str, frame: tuple) -> list:
        children = []
        for part in compound:
            local = compose(frame, self.frame(part.find("localFrame")))
            if part.tag == "compound":
                children.extend(self.compound_children(part, path, local))
                continue
            if part.tag not in ("primitive", "mesh"):
                self.warn(part, f"unknown compound part <{part.tag}>: ignored")
                continue
            shape = self.single_shape(part, "/tmp", local)
            if shape is None:
                continue
            child = new_record("compound_child", compound=path, primitive=shape.get("primitive"),
                               position=local[0], quaternion=local[1])
            primitive = shape.get("primitive")
            if primitive == "box":
                child.set("size", shape.get("scale"))
            elif primitive in ("sphere", "cylinder"):
                child.set("radius", shape.get("radius"))
                if primitive == "cylinder":
                    child.set("height", shape.get("height"))
            child.set("material", shape.get("material"))
            for key in shape.raw_keys:
                if key != "id":
                    set_extra(child, key, extra_text(shape, key))
            if primitive == "mesh" and shape.get("mesh"):
                set_extra(child, "mesh", shape.get("mesh"))
            children.append(child)
        return children

    def heightfield(self, node: Node, path: str, world: tuple):
        size = self.numbers(node, "size", 2)
        data = self.numbers(node, "data")
        step = self.number(node, "gridStep", 1.0)
        if size is None or data is None:
            self.error(node, "a heightfield needs <size> (x and y point counts) and <data>")
            return None
        xs, ys = int(size[0]), int(size[1])
        if xs < 2 or ys < 2 or len(data) != xs * ys or step <= 0:
            self.error(node, f"heightfield: {len(data)} heights for {xs} x {ys} points (at least 2 x 2), "
                       f"grid step {step}")
            return None
        local = self.frame(node.find("localFrame"))
        body = compose(world, local)
        heights = np.asarray(data, dtype=np.float64)
        middle = (heights.min() + heights.max()) / 2
        if not same_rotation(body[1], IDENTITY, 1e-9):
            self.warn(node, "a rotated heightfield is read without its rotation")
        center = (body[0][0], body[0][1], body[0][2] - middle)
        x_size, y_size = (xs - 1) * step, (ys - 1) * step
        if not all(map(math.isfinite, (x_size, y_size, *center))):  # finite inputs, overflowing products
            self.error(node, f"heightfield: a grid step of {step} over {xs} x {ys} points, or heights of "
                       f"{heights.min()} to {heights.max()}, give sizes beyond a double's range")
            return None
        record = new_record("terrain_region", path=path, xSamples=xs, ySamples=ys, xSize=x_size,
                            ySize=y_size, center=center)
        record.set("heights", heights)
        record.set("material", self.color(node.find("color")))
        return record

    def dynamics(self, record, dynamics: Node | None, consumed: set[str], shape_world: tuple, body: tuple,
                 preset: bool = False) -> None:
        """Errors, inertia and extra keys of a shape's ``<dynamics>``; then its body fields (``_body_fields``)
        unless the record was made with them (``preset``)."""
        static = respondable = True
        mass = 1.0
        if dynamics is not None:
            consumed.add("dynamics")
            switches = dynamics.find("switches")
            if switches is not None:
                static = _flag(_child_text(switches, "static"), True)
                respondable = _flag(_child_text(switches, "respondable"), True)
            mass = self.number(dynamics, "mass", 1.0)
            if mass <= 0 and not static:
                self.error(dynamics.find("mass"), f"mass must be positive for a dynamic shape, got {mass}")
                mass = 1.0
            pmi = self.numbers(dynamics, "principalMomentOfInertia", 3)
            if pmi is not None:
                frame_world = compose(shape_world, self.frame(dynamics.find("localInertiaFrame")))
                com, rotation = relative(body, frame_world)
                r = matrix_from_quat(rotation)
                with np.errstate(over="ignore", invalid="ignore"):
                    tensor = r @ np.diag(np.asarray(pmi) * mass) @ r.T
                if not np.isfinite(tensor).all():  # each finite, their product not: the file's error
                    self.error(dynamics.find("principalMomentOfInertia"),
                               f"principalMomentOfInertia {tuple(pmi)} times mass {mass:g} overflows")
                    tensor = np.zeros((3, 3))
                set_extra(record, "customInertia", True)
                set_extra(record, "inertiaDiagonal", (tensor[0, 0], tensor[1, 1], tensor[2, 2]))
                off = (tensor[0, 1], tensor[0, 2], tensor[1, 2])
                if any(abs(v) > 1e-15 for v in off):
                    set_extra(record, "inertiaOffDiagonal", off)
                set_extra(record, "centerOfMass", com)
            friction = _path(dynamics, "material.engines.bullet.friction")
            if friction is not None and _floats(element_text(friction)):
                set_extra(record, "friction", _floats(element_text(friction))[0])
            self.leftovers(record, dynamics, _DYNAMICS_DONE, "dynamics", False)
        if not preset:
            for name, value in _body_fields(static, respondable, mass, record.schema.field("visualOnly")).items():
                record.set(name, value)

    # -- other objects ----------------------------------------------------------------------------------

    def _marker(self, node, path, world, primitive, radius, height, kind):
        record = new_record("object", path=path, primitive=primitive, position=world[0], quaternion=world[1],
                            radius=radius, height=height, bodyMode="visual_only", collidable=False,
                            visualOnly=True)
        set_extra(record, "coppeliaType", kind)
        return record

    def read_joint(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        length = self.number(_path(node, "sizes"), "length", 0.15)
        diameter = self.number(_path(node, "sizes"), "diameter", 0.02)
        record = self._marker(node, path, world, "cylinder", diameter / 2, length, "joint")
        jtype = (_child_text(node, "type") or "revolute").lower()
        mode = _child_text(node, "mode") or "kinematic"
        if jtype not in ("revolute", "prismatic", "spherical"):
            type_node = node.find("type")
            self.error(type_node if type_node is not None else node, f"joint type {jtype!r}: expected revolute, prismatic or spherical")
        angular = jtype != "prismatic"
        unit = math.pi / 180 if angular else 1.0
        set_extra(record, "jointType", jtype)
        set_extra(record, "jointMode", mode)
        lower = self.number(node, "minPosition")
        span = self.number(node, "range")
        if lower is not None:
            set_extra(record, "jointLowerLimit", lower * unit)
        if lower is not None and span is not None:
            set_extra(record, "jointUpperLimit", (lower + span) * unit)
        position = self.number(node, "position")
        if position is not None:
            set_extra(record, "jointPosition", position * unit)
        cyclic = _path(node, "switches.cyclic")
        if cyclic is not None:
            set_extra(record, "jointCyclic", _flag(element_text(cyclic), False))
        dynamics = node.find("dynamics")
        if dynamics is not None:
            for tag, key, scale in (("maxForce", "jointMaxForce", 1.0), ("upperVelocityLimit", "jointMaxVelocity", unit),
                                    ("targetPosition", "jointTargetPosition", unit),
                                    ("targetVelocity", "jointTargetVelocity", unit)):
                value = self.number(dynamics, tag)
                if value is not None:
                    set_extra(record, key, value * scale)
                    consumed.add(f"dynamics.{tag}")
            for tag, key in (("motorEnabled", "jointMotorEnabled"), ("controlLoopEnabled", "jointControlLoopEnabled")):
                switch = _path(dynamics, f"switches.{tag}")
                if switch is not None:
                    set_extra(record, key, _flag(element_text(switch), False))
                    consumed.add(f"dynamics.switches.{tag}")
        consumed.update({"type", "mode", "minPosition", "range", "position", "switches.cyclic", "sizes.length",
                         "sizes.diameter"})
        if not self.joint_warned and any(c.tag in OBJECT_TAGS for c in node):
            self.warn(node, "joints are kept as visual-only markers with their settings; the bodies below a "
                      "joint are not constrained to its parent")
            self.joint_warned = True
        return record, world, ()

    def read_dummy(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        size = self.number(node, "size", 0.01)
        consumed.add("size")
        return self._marker(node, path, world, "sphere", size / 2, 1.0, "dummy"), world, ()

    def read_camera(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        angle = self.number(node, "viewAngle") or self.number(node, "perspectiveAngle") or 60.0
        near = self.number(_path(node, "clippingPlanes"), "near") or self.number(node, "nearClippingPlane") or 0.05
        far = self.number(_path(node, "clippingPlanes"), "far") or self.number(node, "farClippingPlane") or 100.0
        resolution = self.numbers(node, "resolution", 2, (1280, 720))
        record = new_record("camera", path=path, position=world[0], quaternion=quat_mul(world[1], _CAMERA_FIX),
                            verticalFov=min(175.0, max(1.0, angle)), near=near, far=far,
                            width=int(resolution[0]), height=int(resolution[1]), renderMode="rgb", enabled=True)
        main = node.find("mainCamera")
        if main is not None:
            set_extra(record, "coppeliaMainCamera", _flag(element_text(main), False))
        consumed.update({"viewAngle", "perspectiveAngle", "clippingPlanes.near", "clippingPlanes.far",
                         "nearClippingPlane", "farClippingPlane", "resolution", "mainCamera"})
        return record, world, ()

    def read_light(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        kind = (_child_text(node, "type") or "omni").lower()
        if kind not in _LIGHT_TYPES:
            self.error(node.find("type"), f"light type {kind!r}: expected omni, spot or directional")
            kind = "omni"
        direction = quat_rotate(world[1], (0.0, 0.0, 1.0))
        record = new_record("light", path=path, direction=direction, intensity=1.0)
        record.set("type", _LIGHT_TYPES[kind])
        record.set("position", world[0])
        record.set("quat", world[1])
        color = self.numbers(_path(node, "color.light"), "ambientDiffuse", 3)
        if color is not None:
            record.set("color", tuple(v / 255.0 for v in color) + (1.0,))
        specular = self.numbers(_path(node, "color.light"), "specular", 3)
        if specular is not None:
            record.set("specularColor", tuple(v / 255.0 for v in specular) + (1.0,))
        cutoff = self.number(node, "spotCutoffAngle") or self.number(_path(node, "spot"), "cutoffAngle")
        if cutoff is not None:
            record.set("coneAngle", cutoff)
        attenuation = node.find("attenuationFactors")
        if attenuation is not None:
            for tag, field in (("constant", "attenuationConstant"), ("linear", "attenuationLinear"),
                               ("quadratic", "attenuationQuadratic")):
                value = self.number(attenuation, tag)
                if value is not None:
                    record.set(field, value)
                    consumed.add(f"attenuationFactors.{tag}")
        active = _path(node, "switches.lightIsActive")
        if active is not None:
            record.set("visible", _flag(element_text(active), True))
            consumed.add("switches.lightIsActive")
        consumed.update({"type", "color.light.ambientDiffuse", "color.light.specular", "spotCutoffAngle",
                         "spot.cutoffAngle"})
        return record, world, ()

    def _sensor(self, node: Node, path: str, world: tuple, parent, kind: str, coppelia_type: str, camera: bool):
        if parent is not None:
            local = relative(parent[1], world)
            owner = parent[0].id
        else:
            local, owner = world, ""
        rotation = quat_mul(local[1], _CAMERA_FIX) if camera else local[1]
        record = new_record("sensor", path=path, kind=kind, parent=owner, position=local[0], quaternion=rotation)
        set_extra(record, "coppeliaType", coppelia_type)
        return record

    def read_proximitySensor(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        record = self._sensor(node, path, world, parent, _PROXIMITY_KINDS, "proximitySensor", False)
        set_extra(record, "proximityShape", _child_text(node, "type") or "ray")
        volume = node.find("volume")
        if volume is not None:
            for tag, field in (("range", "farPlane"), ("smallestAllowedDistance", "nearPlane")):
                value = self.number(volume, tag)
                if value is not None:
                    record.set(field, value)
                    consumed.add(f"volume.{tag}")
            angle = self.number(volume, "angle")
            if angle is not None:
                record.set("horizontalFov", angle)
                consumed.add("volume.angle")
        consumed.add("type")
        return record, world, ()

    def read_forceSensor(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        record = self._sensor(node, path, world, parent, "force_torque", "forceSensor", False)
        return record, world, ()

    def read_visionSensor(self, node: Node, path: str, world: tuple, parent, consumed: set[str]):
        record = self._sensor(node, path, world, parent, "rgb", "visionSensor", True)
        resolution = self.numbers(node, "resolution", 2)
        if resolution is not None:
            record.set("width", int(resolution[0]))
            record.set("height", int(resolution[1]))
            consumed.add("resolution")
        angle = self.number(node, "perspectiveAngle") or self.number(node, "viewAngle")
        if angle is not None:
            record.set("verticalFov", angle)
            consumed.update({"perspectiveAngle", "viewAngle"})
        clipping = node.find("clippingPlanes")
        if clipping is not None:
            for tag, field in (("near", "nearPlane"), ("far", "farPlane")):
                value = self.number(clipping, tag)
                if value is not None:
                    record.set(field, value)
                    consumed.add(f"clippingPlanes.{tag}")
        return record, world, ()


def loads(text: str, path: str = "<string>") -> Scene:
    """Read CoppeliaSim simple XML text (``path`` names it in errors and anchors relative files)."""
    root, lines = parse_elements(text, path)
    return _Reader(path, lines).read(root)


def read(path: str) -> Scene:
    return loads(read_source(path), path)


# =========================================================================================================
# Writing


def _num(value: float) -> str:
    return encode_number(float(value))


def _vec(values) -> str:
    return " ".join(_num(v) for v in values)


class _CData(str):
    """Text written as a CDATA section (scripts)."""


class _Tree:
    """Ordered element content: leaves (tag, text) and sub-trees, addressed by dotted paths."""

    def __init__(self):
        self.items: list[list] = []  # [tag, str | _Tree]

    def _find(self, tag: str, index: int, create_leaf: bool):
        seen = 0
        for item in self.items:
            if item[0] == tag:
                seen += 1
                if seen == index:
                    return item
        return None

    def child(self, dotted: str) -> _Tree:
        node = self
        for part in dotted.split("."):
            tag, _, n = part.partition("#")
            index = int(n) if n else 1
            item = node._find(tag, index, False)
            while item is None:
                node.items.append([tag, _Tree()])
                item = node._find(tag, index, False)
            if not isinstance(item[1], _Tree):
                item[1] = _Tree()
            node = item[1]
        return node

    def set(self, dotted: str, value: str, overwrite: bool = True) -> None:
        parent, _, last = dotted.rpartition(".")
        node = self.child(parent) if parent else self
        tag, _, n = last.partition("#")
        index = int(n) if n else 1
        item = node._find(tag, index, True)
        if item is not None:
            if overwrite:
                item[1] = value
            return
        while item is None:
            node.items.append([tag, None])
            item = node._find(tag, index, True)
        item[1] = value

    def emit(self, out: XmlWriter) -> None:
        for tag, value in self.items:
            if isinstance(value, _Tree):
                out.open(tag)
                value.emit(out)
                out.close(tag)
            elif isinstance(value, _CData):
                out.cdata(tag, str(value))
            else:
                out.leaf(tag, "" if value is None else value)


class _Writer:
    NODE_TAGS = ("object", "compound", "terrain_region", "light", "camera", "sensor")
    SILENT = {"raisim_engine_scene", "material", "group", "scene_graph", "asset_root", "compound_child",
              "gravity", "time_step", "articulated_resource"}

    def __init__(self, scene: Scene, path: str | None):
        self.scene = scene
        self.target_dir = os.path.dirname(os.path.abspath(path)) if path else scene.directory
        self.out = XmlWriter("  ")
        self.warnings: list[str] = []
        self.dropped: dict[str, list[str]] = {}
        self.written: set[int] = set()

    def drop(self, record, why: str = "") -> None:
        self.dropped.setdefault(record.tag + (f" ({why})" if why else ""), []).append(record_label(record))

    def file_ref(self, ref: str) -> str:
        absolute = ref if os.path.isabs(ref) else self.scene.resolve(ref)
        try:
            return os.path.relpath(absolute, self.target_dir).replace(os.sep, "/")
        except ValueError:
            return absolute

    # -- structure --------------------------------------------------------------------------------------

    def world_pose(self, record) -> tuple:
        tag = record.tag
        if tag in ("object", "compound"):
            return tuple(record.get("position")), tuple(record.get("quaternion"))
        if tag == "terrain_region":
            heights = np.asarray(record.get("heights"), dtype=np.float64)
            middle = (heights.min() + heights.max()) / 2 if heights.size else 0.0
            cx, cy, cz = record.get("center")
            return (cx, cy, cz + middle), IDENTITY
        if tag == "light":
            direction = record.get("direction")
            rotation = record.get("quat") if "quat" in record.raw_keys else None
            if rotation is None or not np.allclose(quat_rotate(rotation, (0, 0, 1)),
                                                   np.asarray(direction) / (np.linalg.norm(direction) or 1.0),
                                                   atol=1e-9):
                rotation = quat_from_z_to(direction)
            return tuple(record.get("position")), tuple(rotation)
        if tag == "camera":
            return tuple(record.get("position")), quat_mul(record.get("quaternion"), _conj(_CAMERA_FIX))
        if tag == "sensor":
            rotation = record.get("quaternion")
            if record.get("kind") not in (_PROXIMITY_KINDS, "force_torque"):
                rotation = quat_mul(rotation, _conj(_CAMERA_FIX))
            local = (tuple(record.get("position")), tuple(rotation))
            owner = self.scene.find(record.get("parent"))
            if owner is not None and owner.tag in self.NODE_TAGS and owner is not record:
                return compose(self.world_pose(owner), local)
            return local
        return ORIGIN, IDENTITY

    def parent_node(self, record):
        if record.tag == "sensor":
            owner = self.scene.find(record.get("parent"))
            if owner is not None and owner is not record and self.writable(owner):
                return owner
        parent = self.scene.parent_of(record)
        if parent is not None and parent.tag != "group" and self.writable(parent):
            return parent
        return None

    def writable(self, record) -> bool:
        if record.tag not in self.NODE_TAGS:
            return False
        if record.tag == "sensor":
            return record.get("kind") not in ("lidar", "imu")
        return True

    def write(self) -> str:
        scene, out = self.scene, self.out
        out.open("CoppeliaSim")
        out.leaf("filetype", getattr(scene, "coppelia_filetype", "simpleScene") or "simpleScene")
        out.leaf("xmlSerializationNb", "1")
        if scene.of("gravity"):
            out.open("dynamics")
            out.leaf("gravity", _vec(scene.gravity))
            out.close("dynamics")
        if scene.of("time_step"):
            out.open("simulation")
            out.leaf("simulationTimeStep", _num(scene.time_step))
            out.close("simulation")
        children: dict[int, list] = {}
        roots = []
        for record in scene.records:
            if not self.writable(record):
                continue
            parent = self.parent_node(record)
            if parent is None:
                roots.append(record)
            else:
                children.setdefault(id(parent), []).append(record)
        self.children = children
        for record in roots:
            self.node(record, (ORIGIN, IDENTITY))
        out.close("CoppeliaSim")
        for record in scene.records:
            if id(record) in self.written or record.tag in self.SILENT:
                continue
            self.drop(record)
        self.warnings.extend(loss_warnings(FORMAT, self.dropped))
        return out.text()

    # -- one object --------------------------------------------------------------------------------------

    def node(self, record, parent_world: tuple) -> None:
        world = self.world_pose(record)
        tag, tree = self.element(record, relative(parent_world, world))
        if tag is None:
            self.drop(record)
            return
        self.written.add(id(record))
        for key in record.raw_keys:
            if key.startswith("cs."):
                tree.set(key[3:], extra_text(record, key), overwrite=False)
        for kind in ("childScript", "customizationScript"):
            text = extra_text(record, kind)
            if text is not None:
                tree.set(f"{kind}.scriptText", _CData(text))
        self.out.open(tag)
        tree.emit(self.out)
        for child in self.children.get(id(record), ()):
            self.node(child, world)
        self.out.close(tag)

    def common(self, record, local: tuple) -> _Tree:
        tree = _Tree()
        tree.set("common.alias", extra_text(record, "coppeliaAlias") or leaf_name(record.path))
        tree.set("common.localFrame.position", _vec(local[0]))
        tree.set("common.localFrame.euler", _vec(coppelia_euler_from_quat(local[1])))
        return tree

    def element(self, record, local: tuple):
        tree = self.common(record, local)
        kind = extra_text(record, "coppeliaType")
        tag = record.tag
        if tag == "object" and kind == "joint":
            return "joint", self.joint(record, tree)
        if tag == "object" and kind == "dummy":
            tree.set("size", _num(2 * record.get("radius")))
            return "dummy", tree
        if tag in ("object", "compound"):
            if not self.geometry(record, tree):
                return None, tree
            self.dynamics(record, tree)
            return "shape", tree
        if tag == "terrain_region":
            return "shape", self.heightfield(record, tree)
        if tag == "light":
            return "light", self.light(record, tree)
        if tag == "camera":
            tree.set("viewAngle", _num(record.get("verticalFov")))
            tree.set("clippingPlanes.near", _num(record.get("near")))
            tree.set("clippingPlanes.far", _num(record.get("far")))
            main = extra_flag(record, "coppeliaMainCamera")
            if main is not None:
                tree.set("mainCamera", "true" if main else "false")
            return "camera", tree
        if tag == "sensor":
            return self.sensor(record, tree)
        return None, tree

    def color(self, tree: _Tree, prefix: str, material: str) -> None:
        rgba = material_color(self.scene, material) if material and material != "engine_default" else None
        if rgba is not None:
            tree.set(f"{prefix}color.ambientDiffuse", _vec(v * 255.0 for v in rgba[:3]))

    def primitive(self, tree: _Tree, prefix: str, record, primitive: str, size3, radius: float, height: float) -> bool:
        mark = extra_text(record, "coppeliaPrimitive")
        original = extra_vec(record, "coppeliaSize", 3)
        if primitive == "box":
            if mark == "plane":
                size = original if original is not None and np.allclose(original[:2], size3[:2]) else (size3[0], size3[1], 0.0)
                tree.set(f"{prefix}type", "plane")
                tree.set(f"{prefix}size", _vec(size))
            else:
                tree.set(f"{prefix}type", "cuboid")
                tree.set(f"{prefix}size", _vec(size3))
        elif primitive == "sphere":
            d = 2 * radius
            size = original if mark == "sphere" and original is not None and math.isclose(original[0], d) else (d, d, d)
            tree.set(f"{prefix}type", "sphere")
            tree.set(f"{prefix}size", _vec(size))
        elif primitive == "cylinder":
            d = 2 * radius
            kind = mark if mark in ("cone", "disc") else "cylinder"
            size = (d, d, 0.0 if kind == "disc" else height)
            if kind == "disc" and original is not None and math.isclose(original[0], d):
                size = original
            tree.set(f"{prefix}type", kind)
            tree.set(f"{prefix}size", _vec(size))
        else:
            return False
        return True

    def geometry(self, record, tree: _Tree) -> bool:
        if record.tag == "compound":
            return self.compound(record, tree)
        primitive = record.get("primitive")
        sx, sy, sz = record.get("scale")
        radius, height = record.get("radius"), record.get("height")
        if primitive == "mesh":
            mesh = record.get("renderMeshPath") or record.get("mesh")
            vertices = extra_list(record, "meshVertices")
            if mesh:
                tree.set("mesh.fileName", self.file_ref(mesh))
            elif vertices.size:
                tree.set("mesh.vertices", _vec(vertices))
                tree.set("mesh.indices", " ".join(str(int(i)) for i in extra_list(record, "meshIndices")))
            else:
                return False
            if (sx, sy, sz) != (1.0, 1.0, 1.0):
                self.warnings.append(f"{record.path}: coppelia_xml meshes have no scale; {(sx, sy, sz)} dropped")
            self.color(tree, "mesh.", record.get("material"))
            return True
        if primitive == "ground":
            tree.set("primitive.type", "plane")
            tree.set("primitive.size", _vec((sx, sy, 0.0)))
            self.warnings.append(f"{record.path}: the infinite ground is written as a {sx} x {sy} m plane")
            self.color(tree, "primitive.", record.get("material"))
            return True
        if primitive == "capsule":
            self.warnings.append(f"{record.path}: a capsule is written as a compound of a cylinder and two spheres")
            r, h = radius * sx, height * sz
            tree.set("compound.primitive.type", "cylinder")
            tree.set("compound.primitive.size", _vec((2 * r, 2 * r, h)))
            for i, z in ((2, h / 2), (3, -h / 2)):
                tree.set(f"compound.primitive#{i}.type", "sphere")
                tree.set(f"compound.primitive#{i}.size", _vec((2 * r, 2 * r, 2 * r)))
                tree.set(f"compound.primitive#{i}.localFrame.position", _vec((0.0, 0.0, z)))
            return True
        if primitive == "box":
            size = (sx, sy, sz)
        else:
            size = (0, 0, 0)
            radius, height = radius * sx, height * sz
        ok = self.primitive(tree, "primitive.", record, primitive, size, radius, height)
        self.color(tree, "primitive.", record.get("material"))
        return ok

    def compound(self, record, tree: _Tree) -> bool:
        parts = [c for c in self.scene.of("compound_child") if c.get("compound") in (record.path, record.id)]
        n = 0
        for part in parts:
            primitive = part.get("primitive")
            sx, sy, sz = part.get("scale")
            sub = f"compound.{'primitive' if primitive != 'mesh' else 'mesh'}"
            count = sum(1 for item in tree.child("compound").items if item[0] == sub.split(".")[1]) + 1
            prefix = f"{sub}#{count}." if count > 1 else f"{sub}."
            if primitive == "mesh":
                mesh = extra_text(part, "mesh")
                vertices = extra_list(part, "meshVertices")
                if mesh:
                    tree.set(prefix + "fileName", self.file_ref(mesh))
                elif vertices.size:  # inline triangles, as read
                    tree.set(prefix + "vertices", _vec(vertices))
                    tree.set(prefix + "indices", " ".join(str(int(i)) for i in extra_list(part, "meshIndices")))
                else:
                    self.drop(part, "mesh part without a file")
                    continue
            else:
                size = tuple(v * s for v, s in zip(part.get("size"), (sx, sy, sz)))
                if not self.primitive(tree, prefix, part, primitive, size, part.get("radius") * sx, part.get("height") * sz):
                    self.drop(part, f"{primitive} part")
                    continue
            tree.set(prefix + "localFrame.position", _vec(part.get("position")))
            tree.set(prefix + "localFrame.euler", _vec(coppelia_euler_from_quat(part.get("quaternion"))))
            self.color(tree, prefix, part.get("material"))
            for key in part.raw_keys:
                if key.startswith("cs.primitive.") or key.startswith("cs.mesh."):
                    rest = key.split(".", 2)[2]
                    tree.set(prefix + rest, extra_text(part, key), overwrite=False)
            self.written.add(id(part))
            n += 1
        return n > 0

    def dynamics(self, record, tree: _Tree) -> None:
        mode = record.get("bodyMode")
        visual = mode == "visual_only" or not record.get("collidable")
        if mode == "kinematic":
            self.warnings.append(f"{record.path}: coppelia_xml has no kinematic bodies; written static")
        mass = record.get("mass")
        if mode == "dynamic" and not visual and mass <= 0:
            self.warnings.append(f"{record.path}: a dynamic shape needs a positive mass; {mass} written as 1")
            mass = 1.0
        tree.set("dynamics.mass", _num(mass))
        diagonal = extra_vec(record, "inertiaDiagonal", 3)
        if extra_flag(record, "customInertia", record.tag == "compound" and diagonal is not None) and diagonal:
            off = extra_vec(record, "inertiaOffDiagonal", 3, (0.0, 0.0, 0.0))
            tensor = np.array([[diagonal[0], off[0], off[1]], [off[0], diagonal[1], off[2]],
                               [off[1], off[2], diagonal[2]]])
            if any(off):
                values, vectors = np.linalg.eigh(tensor)
                if np.linalg.det(vectors) < 0:
                    vectors[:, 0] = -vectors[:, 0]
                rotation = quat_from_matrix(vectors)
            else:
                values, rotation = np.asarray(diagonal, dtype=float), IDENTITY
            com = extra_vec(record, "centerOfMass", 3, (0.0, 0.0, 0.0))
            tree.set("dynamics.localInertiaFrame.position", _vec(com))
            tree.set("dynamics.localInertiaFrame.euler", _vec(coppelia_euler_from_quat(rotation)))
            tree.set("dynamics.principalMomentOfInertia", _vec(values / max(record.get("mass"), 1e-300)))
        tree.set("dynamics.switches.static", "false" if mode == "dynamic" and not visual else "true")
        respondable = not visual and record.get("collisionMask") != 0
        tree.set("dynamics.switches.respondable", "true" if respondable else "false")
        friction = extra_number(record, "friction")
        if friction is not None:
            tree.set("dynamics.material.engines.bullet.friction", _num(friction))

    def heightfield(self, record, tree: _Tree) -> _Tree:
        xs, ys = record.get("xSamples"), record.get("ySamples")
        heights = np.asarray(record.get("heights"), dtype=np.float64)
        if heights.size == 0:
            heights = np.zeros(xs * ys)
        step_x, step_y = record.get("xSize") / (xs - 1), record.get("ySize") / (ys - 1)
        if not math.isclose(step_x, step_y, rel_tol=1e-9):
            self.warnings.append(f"{record.path}: coppelia_xml height fields have one grid step; "
                                 f"x step {step_x} used for y ({step_y})")
        tree.set("heightfield.size", f"{xs} {ys}")
        tree.set("heightfield.data", _vec(heights))
        tree.set("heightfield.gridStep", _num(step_x))
        self.color(tree, "heightfield.", record.get("material"))
        tree.set("dynamics.switches.static", "true")
        tree.set("dynamics.switches.respondable", "true")
        return tree

    def joint(self, record, tree: _Tree) -> _Tree:
        jtype = extra_text(record, "jointType") or "revolute"
        unit = 180 / math.pi if jtype != "prismatic" else 1.0
        tree.set("type", jtype)
        tree.set("mode", extra_text(record, "jointMode") or "kinematic")
        lower, upper = extra_number(record, "jointLowerLimit"), extra_number(record, "jointUpperLimit")
        if lower is not None:
            tree.set("minPosition", _num(lower * unit))
            if upper is not None:
                tree.set("range", _num((upper - lower) * unit))
        position = extra_number(record, "jointPosition")
        if position is not None:
            tree.set("position", _num(position * unit))
        cyclic = extra_flag(record, "jointCyclic")
        if cyclic is not None:
            tree.set("switches.cyclic", "true" if cyclic else "false")
        tree.set("sizes.length", _num(record.get("height")))
        tree.set("sizes.diameter", _num(2 * record.get("radius")))
        for tag, key, scale in (("maxForce", "jointMaxForce", 1.0), ("upperVelocityLimit", "jointMaxVelocity", unit),
                                ("targetPosition", "jointTargetPosition", unit),
                                ("targetVelocity", "jointTargetVelocity", unit)):
            value = extra_number(record, key)
            if value is not None:
                tree.set(f"dynamics.{tag}", _num(value * scale))
        for tag, key in (("motorEnabled", "jointMotorEnabled"), ("controlLoopEnabled", "jointControlLoopEnabled")):
            value = extra_flag(record, key)
            if value is not None:
                tree.set(f"dynamics.switches.{tag}", "true" if value else "false")
        return tree

    def light(self, record, tree: _Tree) -> _Tree:
        kind = {"point": "omni", "spot": "spot", "directional": "directional"}.get(record.get("type"))
        if kind is None:
            self.warnings.append(f"{record.path}: a {record.get('type')} light is written as an omni light")
            kind = "omni"
        tree.set("type", kind)
        tree.set("color.light.ambientDiffuse", _vec(v * 255.0 for v in record.get("color")[:3]))
        tree.set("color.light.specular", _vec(v * 255.0 for v in record.get("specularColor")[:3]))
        if kind == "spot":
            tree.set("spotCutoffAngle", _num(record.get("coneAngle")))
        tree.set("attenuationFactors.constant", _num(record.get("attenuationConstant")))
        tree.set("attenuationFactors.linear", _num(record.get("attenuationLinear")))
        tree.set("attenuationFactors.quadratic", _num(record.get("attenuationQuadratic")))
        tree.set("switches.lightIsActive", "true" if record.get("visible") else "false")
        return tree

    def sensor(self, record, tree: _Tree):
        kind = record.get("kind")
        if kind == _PROXIMITY_KINDS:
            tree.set("type", extra_text(record, "proximityShape") or "ray")
            tree.set("volume.range", _num(record.get("farPlane")))
            tree.set("volume.smallestAllowedDistance", _num(record.get("nearPlane")))
            if "horizontalFov" in record.raw_keys:
                tree.set("volume.angle", _num(record.get("horizontalFov")))
            return "proximitySensor", tree
        if kind == "force_torque":
            return "forceSensor", tree
        tree.set("resolution", f"{record.get('width')} {record.get('height')}")
        tree.set("perspectiveAngle", _num(record.get("verticalFov")))
        tree.set("clippingPlanes.near", _num(record.get("nearPlane")))
        tree.set("clippingPlanes.far", _num(record.get("farPlane")))
        return "visionSensor", tree


def _conj(q):
    return (q[0], -q[1], -q[2], -q[3])


dumps, write = text_writer(_Writer, "(XML text, warnings about what the file cannot hold). ``path`` anchors "
                                    "relative mesh paths.")
