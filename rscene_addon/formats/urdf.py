"""URDF reader: a ``robots.robot.Robot`` from a ``<robot>`` file (RaiSim's dialect included).

Handles links (visual / collision geometry: box, cylinder, sphere, capsule, mesh with scale; origin xyz/rpy;
materials by name or inline, rgba in 0..1 or 0..255; inertials), joints (fixed, revolute, continuous,
prismatic, floating, planar and RaiSim's ``spherical``; axis, origin, limit, dynamics) and the tree.
``package://pkg/rest`` and relative mesh paths resolve against the resource directory (default: the file's
folder); the first candidate that exists wins. Text before the XML declaration is tolerated (xmltree).

``read(path)`` (used by formats.registry) returns a Scene holding one ``articulated_resource`` and one
``articulated`` record that point at the file; ``read_robot`` returns the Robot itself.
"""
from __future__ import annotations

import os
import re

import numpy as np

from ..model import Diagnostic, FormatError, Scene, new_record
from ..robots.robot import Geometry, Inertial, Joint, Link, Material, Robot, Shape
from ..base.spatial import homogeneous, rpy_to_matrix
from . import sensor_sets, xmltree
from .atomic import read_source
from .xml_expr import ExprError, expand_braces

__all__ = ["loads_robot", "read", "read_robot", "resolve_resource"]

_JOINT_ALIASES = {"ball": "spherical", "free": "floating"}


def resolve_resource(filename: str, file_dir: str, resource_directory: str = "") -> str:
    """Absolute path of a mesh reference. ``package://pkg/rest`` (and Gazebo's ``model://pkg/rest``) tries ``resdir/rest``, ``resdir/pkg/rest``,
    then the file's folder and its parents (``dir/rest``, ``dir/pkg/rest``); ``file://`` and absolute paths
    are kept; relative paths try the resource directory, then the file's folder. Returns the first
    candidate that exists, else the first candidate."""
    if not filename:
        return ""
    if filename.startswith("file://"):
        return os.path.normpath(filename[len("file://"):])
    if os.path.isabs(filename):
        return os.path.normpath(filename)
    bases = []
    if resource_directory:
        bases.append(resource_directory if os.path.isabs(resource_directory)
                     else os.path.join(file_dir, resource_directory))
    candidates: list[str] = []
    scheme = next((p for p in ("package://", "model://") if filename.startswith(p)), None)
    if scheme is not None:   # Gazebo's model://name/rest resolves as ROS's package://name/rest
        rest = filename[len(scheme):]
        package, _, inner = rest.partition("/")
        here = os.path.abspath(file_dir)
        parents = [here]
        while os.path.dirname(parents[-1]) != parents[-1] and len(parents) < 6:
            parents.append(os.path.dirname(parents[-1]))
        for base in bases + parents:
            candidates += [os.path.join(base, inner), os.path.join(base, package, inner)]
            if os.path.basename(os.path.normpath(base)) == package:
                candidates.append(os.path.join(base, inner))
    else:
        for base in bases + [file_dir]:
            candidates.append(os.path.join(base, filename))
    candidates = [os.path.normpath(os.path.abspath(c)) for c in candidates]
    return next((c for c in candidates if os.path.exists(c)), candidates[0])


class _Reader:
    def __init__(self, path: str, resource_directory: str = ""):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else os.getcwd()
        self.resource_directory = resource_directory

    def fail(self, node: xmltree.Node, message: str):
        raise FormatError(Diagnostic(self.path, node.line, node.tag, message))

    def floats(self, node: xmltree.Node, attr: str, count: int, default=None) -> tuple[float, ...] | None:
        text = node.get(attr)
        if text is None or not text.strip():
            return default
        try:
            values = tuple(float(v) for v in text.replace(",", " ").split())
        except ValueError:
            self.fail(node, f"{attr}={text!r}: expected {count} numbers")
        if len(values) != count:
            if count == 3 and len(values) == 1 and attr == "scale":
                return values * 3
            self.fail(node, f"{attr}={text!r}: expected {count} numbers, got {len(values)}")
        if not all(np.isfinite(values)):
            self.fail(node, f"{attr}={text!r}: not a finite number")
        return values

    def number(self, node: xmltree.Node, attr: str, default: float | None = None) -> float | None:
        values = self.floats(node, attr, 1, None)
        return default if values is None else values[0]

    def origin(self, parent: xmltree.Node) -> np.ndarray:
        node = parent.find("origin")
        if node is None:
            return np.eye(4)
        xyz = self.floats(node, "xyz", 3, (0.0, 0.0, 0.0))
        rpy = self.floats(node, "rpy", 3, (0.0, 0.0, 0.0))
        return homogeneous(rpy_to_matrix(rpy), xyz)

    def material(self, node: xmltree.Node) -> Material:
        mat = Material(name=node.get("name", "") or "")
        color = node.find("color")
        if color is not None:
            rgba = self.floats(color, "rgba", 4, None)
            if rgba is None:
                rgb = self.floats(color, "rgb", 3, None)
                rgba = rgb + (1.0,) if rgb else None
            if rgba is not None:
                if max(rgba) > 1.0:  # some files write 0..255
                    rgba = tuple(v / 255.0 for v in rgba)
                mat.rgba = tuple(float(v) for v in rgba)
        texture = node.find("texture")
        if texture is not None and texture.get("filename"):
            mat.texture = resolve_resource(texture.get("filename"), self.dir, self.resource_directory)
        return mat

    def geometry(self, parent: xmltree.Node) -> Geometry | None:
        node = parent.find("geometry")
        if node is None:
            self.fail(parent, "no <geometry>")
        shape = next(iter(node.children), None)
        if shape is None:
            self.fail(node, "empty <geometry>")
        kind = shape.tag
        if kind == "box":
            return Geometry("box", size=self.floats(shape, "size", 3, (0.0, 0.0, 0.0)))
        if kind in ("cylinder", "capsule"):
            return Geometry(kind, radius=self.number(shape, "radius", 0.0), length=self.number(shape, "length", 0.0))
        if kind == "sphere":
            return Geometry("sphere", radius=self.number(shape, "radius", 0.0))
        if kind == "mesh":
            filename = shape.get("filename", "") or ""
            if not filename:
                self.fail(shape, "mesh without filename")
            return Geometry("mesh", filename=filename, scale=self.floats(shape, "scale", 3, (1.0, 1.0, 1.0)),
                            path=resolve_resource(filename, self.dir, self.resource_directory))
        self.fail(shape, f"unknown geometry <{kind}>")
        return None

    def shape(self, node: xmltree.Node, materials: dict[str, Material]) -> Shape:
        item = Shape(self.geometry(node), self.origin(node), node.get("name", "") or "", None, node.line)
        mat_node = node.find("material")
        if mat_node is not None:
            mat = self.material(mat_node)
            if mat.rgba is None and not mat.texture and mat.name in materials:
                mat = materials[mat.name]
            elif mat.name and mat.name not in materials:
                materials[mat.name] = mat
            item.material = mat
        return item

    def inertial(self, node: xmltree.Node) -> Inertial:
        out = Inertial(origin=self.origin(node))
        mass = node.find("mass")
        if mass is not None:
            out.mass = self.number(mass, "value", 0.0)
        inertia = node.find("inertia")
        if inertia is not None:
            v = {k: self.number(inertia, k, 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            out.inertia = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                                    [v["ixz"], v["iyz"], v["izz"]]])
        return out

    def read(self, root: xmltree.Node) -> Robot:
        if root.tag != "robot":
            self.fail(root, f"not a URDF file: root element <{root.tag}>, expected <robot>")
        robot = Robot(root.get("name", "") or "", self.path, "urdf")
        for node in root.findall("material"):
            mat = self.material(node)
            robot.materials[mat.name] = mat
        for node in root.findall("link"):
            name = node.get("name")
            if not name:
                self.fail(node, "link without a name")
            if name in robot.links:
                self.fail(node, f"duplicate link name {name!r}")
            link = Link(name, line=node.line)
            link.visuals = [self.shape(v, robot.materials) for v in node.findall("visual")]
            link.collisions = [self.shape(c, robot.materials) for c in node.findall("collision")]
            inertial = node.find("inertial")
            link.inertial = self.inertial(inertial) if inertial is not None else None
            if node.get("sensor"):
                sensor_sets.attach(self, robot, link, node)
            robot.links[name] = link
        if not robot.links:
            self.fail(root, "no <link> in the robot")
        for node in root.findall("joint"):
            self.joint(robot, node)
        robot.finalize()
        robot.floating_base = robot.root != "world"
        return robot

    def joint(self, robot: Robot, node: xmltree.Node) -> None:
        name = node.get("name")
        if not name:
            self.fail(node, "joint without a name")
        if name in robot.joints:
            self.fail(node, f"duplicate joint name {name!r}")
        kind = (node.get("type") or "").strip().lower()
        kind = _JOINT_ALIASES.get(kind, kind)
        if kind not in ("fixed", "revolute", "continuous", "prismatic", "floating", "planar", "spherical"):
            self.fail(node, f"joint {name!r}: unknown type {node.get('type')!r}")
        parent, child = node.find("parent"), node.find("child")
        if parent is None or not parent.get("link") or child is None or not child.get("link"):
            self.fail(node, f"joint {name!r} needs <parent link=...> and <child link=...>")
        joint = Joint(name, kind, parent.get("link"), child.get("link"), self.origin(node), line=node.line)
        axis_node = node.find("axis")
        axis = np.array(self.floats(axis_node, "xyz", 3, (1.0, 0.0, 0.0)) if axis_node is not None
                        else (1.0, 0.0, 0.0), dtype=float)
        norm = np.linalg.norm(axis)
        if norm == 0:
            if kind in ("revolute", "continuous", "prismatic", "planar"):
                self.fail(axis_node, f"joint {name!r}: zero axis")
            axis = np.array([1.0, 0.0, 0.0])
            norm = 1.0
        joint.axis = axis / norm
        limit = node.find("limit")
        if limit is not None:
            joint.lower = self.number(limit, "lower", 0.0 if kind in ("revolute", "prismatic") else None)
            joint.upper = self.number(limit, "upper", 0.0 if kind in ("revolute", "prismatic") else None)
            joint.effort = self.number(limit, "effort")
            joint.velocity = self.number(limit, "velocity")
        dynamics = node.find("dynamics")
        if dynamics is not None:
            joint.damping = self.number(dynamics, "damping", 0.0)
            joint.friction = self.number(dynamics, "friction", 0.0)
        robot.joints[name] = joint


_PARAMETER = re.compile(r"@@([A-Za-z_]\w*)")


def parse_xml(text: str, path: str = "<string>", parameters: dict | None = None) -> xmltree.Node:
    """xmltree.parse, tolerating repeated XML declarations (some files paste one after a comment header),
    and expanding RaiSim template attributes: ``@@name`` from ``parameters``, then ``{math}``."""
    text = _blank_declarations(text)
    root = xmltree.parse(text, path)
    params = {str(k).removeprefix("@@"): v for k, v in (parameters or {}).items()}
    for node in root.iter():
        for key, value in node.attrib.items():
            if "@@" in value:
                def sub(match, node=node, key=key):
                    if match.group(1) not in params:
                        raise FormatError(Diagnostic(path, node.line, node.tag,
                                                     f"{key}: template parameter @@{match.group(1)} has no value "
                                                     "(pass it in parameters)"))
                    return str(params[match.group(1)])
                value = _PARAMETER.sub(sub, value)
            if "{" in value:
                try:
                    value = expand_braces(value)
                except ExprError as exc:
                    raise FormatError(Diagnostic(path, node.line, node.tag, f"{key}: {exc}")) from None
            node.attrib[key] = value
    return root


def _blank_declarations(text: str) -> str:
    pieces, last = [], 0
    for start, end in xmltree.declarations(text):
        pieces += [text[last:start], re.sub(r"[^\n]", " ", text[start:end])]
        last = end
    return "".join(pieces) + text[last:] if pieces else text


def parse_xml_file(path: str, parameters: dict | None = None) -> xmltree.Node:
    return parse_xml(read_source(path), path, parameters)


def loads_robot(text: str, path: str = "<string>", resource_directory: str = "",
                parameters: dict | None = None) -> Robot:
    return _Reader(path, resource_directory).read(parse_xml(text, path, parameters))


def read_robot(path: str, resource_directory: str = "", joint_order=None, parameters: dict | None = None) -> Robot:
    """Read a URDF file into a Robot (``joint_order``: RaiSim jointOrder, movable joint names;
    ``parameters``: values of a templated URDF's ``@@name`` placeholders)."""
    robot = _Reader(path, resource_directory).read(parse_xml_file(path, parameters))
    if joint_order:
        robot.joint_order = joint_order
    return robot


def scene_for_robot(robot: Robot, path: str) -> Scene:
    """A Scene with one articulated_resource naming ``path`` and one articulated instance of it at rest, where
    the file puts it (a floating base at its model pose: MJCF's body ``pos``, a URDF's origin)."""
    scene = Scene(path=None)
    base = os.path.splitext(os.path.basename(path))[0] or "robot"
    name = robot.name or base
    ident = "resource_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    scene.add(new_record("articulated_resource", id=ident, name=name, sourcePath=os.path.abspath(path)))
    scene.add(new_record("articulated", path="/World/" + "".join(c if c.isalnum() or c in "_-" else "_"
                                                                    for c in name),
                         resourceId=ident,
                         generalizedCoordinate=[float(v) for v in robot.default_configuration()]))
    scene.warnings.extend(robot.warnings)
    return scene


def add_ground(scene: Scene, size: float = 20.0) -> None:
    """A static ground plane at z = 0 under a robot read alone (File > Import > Robot, "Ground")."""
    scene.add(new_record("object", path="/World/Ground", primitive="ground", scale=(size, size, 1.0),
                         bodyMode="static"))


def read(path: str) -> Scene:
    """Registry entry point: the URDF as a scene holding one robot instance."""
    return scene_for_robot(read_robot(path), path)
