"""MJCF (MuJoCo XML) reader for the subset RaiSim's experimental reader supports, into a ``robots.robot.Robot``.

Supported: ``<compiler angle eulerseq meshdir coordinate="local">``, ``<default>`` classes (nested, ``class`` /
``childclass``), ``<asset>`` meshes (file, scale) and materials (rgba), ``<worldbody>`` bodies (pos, quat,
axisangle, euler, xyaxes, zaxis), joints ``free`` / ``slide`` / ``hinge`` / ``ball`` and ``<freejoint>``, primitive
geoms (plane, sphere, capsule, ellipsoid, cylinder, box; ``size`` or ``fromto``; MJCF half sizes become the
model's full box extents) and mesh geoms, ``<inertial>`` (diaginertia / fullinertia), joint ``armature``.
``<include file>`` anywhere, as MuJoCo does it: the included file's root element is dropped and its children
take the include's place; the path is relative to the main file's folder; a file is included at most once
in a model (so a cycle is an error naming it), within ``xmltree.IncludeBudget``.
Not supported: tendons, equality, actuators (ignored), global coordinates (error).

Mass as MuJoCo's compiler gives it: ``inertiafromgeom`` (auto: a body without ``<inertial>`` takes the mass
of its primitive geoms, solid, from the geom's ``mass`` or ``density`` (1000); true: always from the geoms),
``inertiagrouprange`` and ``settotalmass``. Mesh geoms have no volume here (a warning names them).

Mapping: one link per body. A body with several joints gets a chain of virtual links (``body/joint``) so that
every joint has its own link; a joint's anchor ``pos`` becomes ``origin @ translate(pos)`` with ``child_offset =
translate(-pos)``. A single top-level body whose first joint is free becomes a floating base (its model pose
in ``Robot.initial_base_pose``); otherwise the root is a ``world`` link. Worldbody geoms go to
``Robot.world_shapes``. Joint coordinates are displacements from the model pose (MJCF ``ref`` is kept in
``Joint.reference``). Every geom is a visual; geoms with contype = conaffinity = 0 are not collisions.
"""
from __future__ import annotations

import os

import numpy as np

from ..model import Diagnostic, FormatError, Scene
from ..robots.robot import Geometry, Inertial, Joint, Link, Material, Robot, Shape
from ..base.spatial import axis_angle_matrix, homogeneous, matrix_to_quat, quat_to_matrix
from . import xmltree
from .urdf import parse_xml, parse_xml_file, scene_for_robot

__all__ = ["loads_robot", "read", "read_robot"]

_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)
_JOINT_KINDS = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "floating"}


MAX_SIZE = 1e9  # metres: a geom beyond this is a broken file, and its volume would overflow


class _Reader:
    def __init__(self, path: str):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else os.getcwd()
        self.degree = True
        self.eulerseq = "xyz"
        self.meshdir = ""
        self.classes: dict[str, dict[str, dict[str, str]]] = {}
        self.meshes: dict[str, tuple[str, str, tuple]] = {}
        self.materials: dict[str, Material] = {}
        self.robot: Robot | None = None
        self.inertia_from_geom = "auto"
        self.inertia_groups = (0, 5)
        self.total_mass = -1.0

    def fail(self, node: xmltree.Node, message: str):
        raise FormatError(Diagnostic(self.path, node.line, node.tag, message))

    # -- values -------------------------------------------------------------------------------------------

    def floats(self, node, attrs: dict, name: str, default=None, counts=None):
        text = attrs.get(name)
        if text is None or not text.strip():
            return default
        try:
            values = np.array([float(v) for v in text.split()], dtype=float)
        except ValueError:
            self.fail(node, f"{name}={text!r}: expected numbers")
        if counts is not None and len(values) not in counts:
            self.fail(node, f"{name}={text!r}: expected {' or '.join(map(str, counts))} numbers")
        if not np.all(np.isfinite(values)):
            self.fail(node, f"{name}={text!r}: not a finite number")
        return values

    def angle(self, value: float) -> float:
        return float(np.radians(value)) if self.degree else float(value)

    def rotation(self, node, attrs: dict) -> np.ndarray:
        if _given(attrs, "quat"):
            return quat_to_matrix(self.floats(node, attrs, "quat", counts=(4,)))
        if _given(attrs, "axisangle"):
            v = self.floats(node, attrs, "axisangle", counts=(4,))
            n = np.linalg.norm(v[:3])
            if n == 0:
                self.fail(node, "axisangle with a zero axis")
            return axis_angle_matrix(v[:3] / n, self.angle(v[3]))
        if _given(attrs, "euler"):
            v = self.floats(node, attrs, "euler", counts=(3,))
            r = np.eye(3)
            for axis_name, value in zip(self.eulerseq, v):
                axis = np.eye(3)["xyz".index(axis_name.lower())]
                step = axis_angle_matrix(axis, self.angle(value))
                r = r @ step if axis_name.islower() else step @ r  # lower case: intrinsic (moving) axes
            return r
        if _given(attrs, "xyaxes"):
            v = self.floats(node, attrs, "xyaxes", counts=(6,))
            x = v[:3] / np.linalg.norm(v[:3])
            y = v[3:] - np.dot(v[3:], x) * x
            y /= np.linalg.norm(y)
            return np.column_stack([x, y, np.cross(x, y)])
        if _given(attrs, "zaxis"):
            return _z_to(self.floats(node, attrs, "zaxis", counts=(3,)))
        return np.eye(3)

    def frame(self, node, attrs: dict) -> np.ndarray:
        return homogeneous(self.rotation(node, attrs), self.floats(node, attrs, "pos", np.zeros(3), (3,)))

    # -- defaults -----------------------------------------------------------------------------------------

    def read_defaults(self, node: xmltree.Node, parent: dict[str, dict[str, str]] | None) -> None:
        name = node.get("class", "main")
        merged = {tag: dict(attrs) for tag, attrs in (parent or {}).items()}
        for child in node.children:
            if child.tag != "default":
                merged.setdefault(child.tag, {}).update(child.attrib)
        self.classes[name] = merged
        for child in node.findall("default"):
            self.read_defaults(child, merged)

    def attrs(self, node: xmltree.Node, childclass: str) -> dict[str, str]:
        cls = node.get("class", childclass)
        if cls not in self.classes:
            if node.get("class"):
                self.fail(node, f"unknown default class {cls!r}")
            cls = "main"
        merged = dict(self.classes.get(cls, {}).get(node.tag, {}))
        merged.update(node.attrib)
        return merged

    # -- document -----------------------------------------------------------------------------------------

    def read(self, root: xmltree.Node) -> Robot:
        if root.tag != "mujoco":
            self.fail(root, f"not an MJCF file: root element <{root.tag}>, expected <mujoco>")
        robot = self.robot = Robot(root.get("model", "") or "", self.path, "mjcf")
        for node in root.findall("compiler"):
            if node.get("angle"):
                if node.get("angle") not in ("degree", "radian"):
                    self.fail(node, f"angle={node.get('angle')!r}: expected degree or radian")
                self.degree = node.get("angle") == "degree"
            if node.get("eulerseq"):
                seq = node.get("eulerseq")
                if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq):
                    self.fail(node, f"eulerseq={seq!r}: expected three of x, y, z, X, Y, Z")
                self.eulerseq = seq
            if node.get("meshdir") is not None:
                self.meshdir = node.get("meshdir")
            if node.get("inertiafromgeom") is not None:
                self.inertia_from_geom = node.get("inertiafromgeom")
            # a blank value reads as absent, as everywhere in ``floats``
            groups = self.floats(node, node.attrib, "inertiagrouprange", counts=(2,))
            if groups is not None:
                self.inertia_groups = (int(groups[0]), int(groups[1]))
            total = self.floats(node, node.attrib, "settotalmass", counts=(1,))
            if total is not None:
                self.total_mass = float(total[0])
            if node.get("coordinate") == "global":
                self.fail(node, "coordinate=\"global\" is not supported (only local coordinates)")
        self.classes["main"] = {}
        for node in root.findall("default"):
            self.read_defaults(node, None)
        for asset in root.findall("asset"):
            for node in asset.findall("mesh"):
                attrs = self.attrs(node, "main")
                file = attrs.get("file", "")
                name = attrs.get("name") or os.path.splitext(os.path.basename(file))[0]
                scale = tuple(self.floats(node, attrs, "scale", np.ones(3), (3,)))
                base = os.path.join(self.dir, self.meshdir) if self.meshdir else self.dir
                self.meshes[name] = (file, os.path.normpath(os.path.join(base, file)) if file else "", scale)
            for node in asset.findall("material"):
                attrs = self.attrs(node, "main")
                rgba = self.floats(node, attrs, "rgba", None, (4,))
                self.materials[attrs.get("name", "")] = Material(attrs.get("name", ""),
                                                                 tuple(rgba) if rgba is not None else None,
                                                                 attrs.get("texture", ""))
        robot.materials = dict(self.materials)
        world = root.find("worldbody")
        if world is None:
            self.fail(root, "no <worldbody>")
        for node in world.findall("geom"):
            robot.world_shapes.append(self.geom(node, self.attrs(node, "main")))
        bodies = world.findall("body")
        floating = len(bodies) == 1 and self._first_joint_free(bodies[0])
        if floating:
            attrs = self.attrs(bodies[0], "main")
            pose = self.frame(bodies[0], attrs)
            robot.floating_base = True
            robot.initial_base_pose = np.concatenate([pose[:3, 3], matrix_to_quat(pose[:3, :3])])
            self.body(bodies[0], None, np.eye(4), "main", skip_free=True)
        else:
            robot.links["world"] = Link("world", line=world.line)
            for node in bodies:
                self.body(node, "world", None, "main")
        if not robot.links:
            self.fail(world, "no <body> in the worldbody")
        if self.total_mass > 0:
            self._scale_to_total_mass(robot)
        robot.finalize()
        return robot

    def _first_joint_free(self, node: xmltree.Node) -> bool:
        for child in node.children:
            if child.tag == "freejoint":
                return True
            if child.tag == "joint":
                return self.attrs(child, node.get("childclass", "main")).get("type", "hinge") == "free"
        return False

    def body(self, node: xmltree.Node, parent: str | None, frame: np.ndarray | None, childclass: str,
             skip_free: bool = False) -> None:
        robot = self.robot
        childclass = node.get("childclass", childclass)
        attrs = self.attrs(node, childclass) if node.tag != "body" else dict(node.attrib)
        name = attrs.get("name") or f"body{len(robot.links)}"
        if name in robot.links:
            self.fail(node, f"duplicate body name {name!r}")
        local = self.frame(node, attrs) if frame is None else frame
        joints = [c for c in node.children if c.tag in ("joint", "freejoint")]
        if skip_free and joints:
            joints = joints[1:]
        link = Link(name, line=node.line)
        if parent is not None and not joints:
            robot.links[name] = link
            robot.joints[f"{name}_fixed"] = Joint(f"{name}_fixed", "fixed", parent, name, local, line=node.line)
        elif parent is None:
            robot.links[name] = link
        else:
            previous = parent
            origin_prefix = local
            for index, jnode in enumerate(joints):
                jattrs = self.attrs(jnode, childclass)
                kind = "free" if jnode.tag == "freejoint" else jattrs.get("type", "hinge")
                if kind not in _JOINT_KINDS:
                    self.fail(jnode, f"joint type {kind!r} is not supported (free, slide, hinge, ball)")
                jname = jattrs.get("name") or f"{name}_joint{index}"
                if jname in robot.joints:
                    self.fail(jnode, f"duplicate joint name {jname!r}")
                child = name if index == len(joints) - 1 else f"{name}/{jname}"
                if child != name:
                    robot.links[child] = Link(child, line=jnode.line, virtual=True)
                else:
                    robot.links[name] = link
                anchor = self.floats(jnode, jattrs, "pos", np.zeros(3), (3,))
                axis = self.floats(jnode, jattrs, "axis", np.array([0.0, 0.0, 1.0]), (3,))
                norm = np.linalg.norm(axis)
                if norm == 0:
                    self.fail(jnode, f"joint {jname!r}: zero axis")
                joint = Joint(jname, _JOINT_KINDS[kind], previous, child, origin_prefix @ homogeneous(None, anchor),
                              axis=axis / norm, child_offset=homogeneous(None, -anchor), line=jnode.line)
                rng = self.floats(jnode, jattrs, "range", None, (2,))
                joint.damping = float(self.floats(jnode, jattrs, "damping", np.zeros(1), (1,))[0])
                joint.friction = float(self.floats(jnode, jattrs, "frictionloss", np.zeros(1), (1,))[0])
                joint.armature = float(self.floats(jnode, jattrs, "armature", np.zeros(1), (1,))[0])
                ref = float(self.floats(jnode, jattrs, "ref", np.zeros(1), (1,))[0])
                joint.reference = self.angle(ref) if kind == "hinge" else ref
                if rng is not None and jattrs.get("limited", "auto") != "false" and kind in ("hinge", "slide"):
                    lo, hi = (self.angle(v) for v in rng) if kind == "hinge" else rng
                    if hi > lo:  # the range is in MuJoCo's qpos; our coordinate is qpos - ref
                        joint.lower, joint.upper = float(lo) - joint.reference, float(hi) - joint.reference
                robot.joints[jname] = joint
                previous = child
                origin_prefix = np.eye(4)
        massive = []  # (shape, mass or None, density) of the geoms that count for the body's inertia
        for child in node.children:
            if child.tag == "geom":
                shape = self.geom(child, self.attrs(child, childclass))
                link.visuals.append(shape)
                gattrs = self.attrs(child, childclass)
                if not (gattrs.get("contype", "1") == "0" and gattrs.get("conaffinity", "1") == "0"):
                    link.collisions.append(shape)
                group = int(self.floats(child, gattrs, "group", np.zeros(1), (1,))[0])
                if self.inertia_groups[0] <= group <= self.inertia_groups[1]:
                    mass = self.floats(child, gattrs, "mass", None, (1,))
                    density = float(self.floats(child, gattrs, "density", np.array([1000.0]), (1,))[0])
                    massive.append((shape, None if mass is None else float(mass[0]), density))
            elif child.tag == "inertial":
                link.inertial = self.inertial(child, self.attrs(child, childclass))
        if massive and (self.inertia_from_geom == "true"
                        or (self.inertia_from_geom == "auto" and link.inertial is None)):
            link.inertial = self._geom_inertial(node, massive)
        for child in node.findall("body"):
            self.body(child, name, None, childclass)

    def _geom_inertial(self, node, massive) -> Inertial | None:
        """The body's inertial from its geoms (solid primitives, MuJoCo's formulas), about the joint COM."""
        parts = []
        for shape, mass, density in massive:
            props = _solid(shape.geometry)
            if props is None:
                if shape.geometry.kind == "mesh":
                    self.robot.warnings.append(Diagnostic(
                        self.path, node.line, "geom",
                        f"mesh geom {shape.geometry.filename!r}: no volume here, so it adds no mass",
                        "warning"))
                continue
            volume, unit = props  # unit: inertia per unit mass about the geom centre, geom axes
            m = mass if mass is not None else density * volume
            rot = shape.origin[:3, :3]
            parts.append((m, shape.origin[:3, 3], m * rot @ np.diag(unit) @ rot.T))
        total = sum(p[0] for p in parts)
        if total <= 0:
            return None
        com = sum(m * c for m, c, _ in parts) / total
        inertia = np.zeros((3, 3))
        for m, c, i_c in parts:
            d = c - com
            inertia += i_c + m * (d @ d * np.eye(3) - np.outer(d, d))
        return Inertial(total, homogeneous(None, com), inertia)

    def _scale_to_total_mass(self, robot: Robot) -> None:
        links = [lk for lk in robot.links.values() if lk.inertial is not None and lk.inertial.mass > 0]
        total = sum(lk.inertial.mass for lk in links)
        if total > 0:
            for lk in links:
                lk.inertial.mass *= self.total_mass / total
                lk.inertial.inertia = lk.inertial.inertia * (self.total_mass / total)

    def inertial(self, node, attrs) -> Inertial:
        out = Inertial(origin=self.frame(node, attrs))
        out.mass = float(self.floats(node, attrs, "mass", np.zeros(1), (1,))[0])
        diag = self.floats(node, attrs, "diaginertia", None, (3,))
        full = self.floats(node, attrs, "fullinertia", None, (6,))
        if full is not None:
            xx, yy, zz, xy, xz, yz = full
            out.inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        elif diag is not None:
            out.inertia = np.diag(diag)
        return out

    def geom(self, node: xmltree.Node, attrs: dict) -> Shape:
        kind = attrs.get("type") or ("mesh" if attrs.get("mesh") else "sphere")
        size = self.floats(node, attrs, "size", np.zeros(0))
        fromto = self.floats(node, attrs, "fromto", None, (6,))
        origin = self.frame(node, attrs)
        if fromto is not None and kind in ("capsule", "cylinder", "box", "ellipsoid"):
            a, b = fromto[:3], fromto[3:]
            origin = homogeneous(_z_to(b - a), (a + b) / 2)
            half = np.linalg.norm(b - a) / 2
            size = np.array([size[0] if len(size) else 0.0, half, half])
            if kind in ("box", "ellipsoid"):
                size = np.array([size[0], size[0], half])

        def s(i, default=0.0):
            return float(size[i]) if len(size) > i else default

        if kind in ("sphere", "capsule", "cylinder", "box", "ellipsoid") and (size[:3] < 0).any():
            self.fail(node, f"size={attrs.get('size')!r}: a {kind} size cannot be negative")
        if (np.abs(size) > MAX_SIZE).any():  # volumes and inertias of such sizes overflow a double
            self.fail(node, f"size={attrs.get('size')!r}: beyond {MAX_SIZE:g} m")

        if kind == "sphere":
            geometry = Geometry("sphere", radius=s(0))
        elif kind in ("capsule", "cylinder"):
            geometry = Geometry(kind, radius=s(0), length=2 * s(1))
        elif kind == "box":
            geometry = Geometry("box", size=(2 * s(0), 2 * s(1, s(0)), 2 * s(2, s(0))))
        elif kind == "ellipsoid":
            geometry = Geometry("ellipsoid", size=(s(0), s(1, s(0)), s(2, s(0))))
        elif kind == "plane":
            geometry = Geometry("plane", size=(s(0), s(1), s(2)))
        elif kind == "mesh":
            mesh = attrs.get("mesh", "")
            if mesh not in self.meshes:
                self.fail(node, f"geom names unknown mesh asset {mesh!r}")
            file, path, scale = self.meshes[mesh]
            geometry = Geometry("mesh", filename=file, path=path, scale=scale)
        else:
            self.fail(node, f"geom type {kind!r} is not supported")
        rgba = self.floats(node, attrs, "rgba", None, (4,))
        material = None
        if attrs.get("material") in self.materials and rgba is None:
            material = self.materials[attrs["material"]]
        if material is None or material.rgba is None:
            material = Material(attrs.get("material", ""), tuple(float(v) for v in rgba) if rgba is not None
                                else (material.rgba if material and material.rgba else _DEFAULT_RGBA))
        return Shape(geometry, origin, attrs.get("name", ""), material, node.line)


def _given(attrs: dict, name: str) -> bool:
    """An attribute that is there and not blank (``quat=""`` is as good as absent)."""
    return bool((attrs.get(name) or "").strip())


def _solid(g) -> tuple[float, np.ndarray] | None:
    """(volume, diagonal inertia per unit mass about the centre) of a solid primitive; None: no volume."""
    if g.kind == "sphere":
        r = g.radius
        return 4.0 / 3.0 * np.pi * r ** 3, np.full(3, 0.4 * r * r)
    if g.kind == "box":
        x, y, z = g.size  # full extents
        return x * y * z, np.array([y * y + z * z, x * x + z * z, x * x + y * y]) / 12.0
    if g.kind == "ellipsoid":
        a, b, c = g.size  # half extents
        return 4.0 / 3.0 * np.pi * a * b * c, np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 5.0
    if g.kind == "cylinder":
        r, h = g.radius, g.length
        return np.pi * r * r * h, np.array([(3 * r * r + h * h) / 12, (3 * r * r + h * h) / 12, r * r / 2])
    if g.kind == "capsule":
        # a cylinder plus two hemispheres (each a distance h/2 + 3r/8 from the centre to its own COM)
        r, h = g.radius, g.length
        v_cyl, v_sph = np.pi * r * r * h, 4.0 / 3.0 * np.pi * r ** 3
        if not v_cyl + v_sph > 0:
            return None
        f_cyl, f_sph = v_cyl / (v_cyl + v_sph), v_sph / (v_cyl + v_sph)
        perp = f_cyl * (3 * r * r + h * h) / 12 + f_sph * (0.4 * r * r + h * (2 * h + 3 * r) / 8)
        return v_cyl + v_sph, np.array([perp, perp, f_cyl * r * r / 2 + f_sph * 0.4 * r * r])
    return None


def _z_to(direction) -> np.ndarray:
    """A rotation taking +z to ``direction`` (minimal rotation)."""
    d = np.asarray(direction, dtype=float)
    n = np.linalg.norm(d)
    if n == 0:
        return np.eye(3)
    d = d / n
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, d)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.eye(3) if d[2] > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_matrix(axis / s, np.arctan2(s, np.dot(z, d)))


def expand_includes(root: xmltree.Node, path: str) -> xmltree.Node:
    """Replace every ``<include file="...">`` under ``root`` (read from ``path``) by the children of the
    included file's root, recursively. Raises FormatError naming the include's file and line."""
    main_dir = os.path.dirname(os.path.abspath(path)) if path and not path.startswith("<") else os.getcwd()
    included = {os.path.normpath(os.path.abspath(path))} if path and not path.startswith("<") else set()
    budget = xmltree.IncludeBudget()
    work = [root]
    while work:
        node = work.pop()
        out: list[xmltree.Node] = []
        pending = list(reversed(node.children))
        while pending:
            child = pending.pop()
            if child.tag != "include":
                out.append(child)
                work.append(child)
                continue
            pending.extend(reversed(_include(child, main_dir, included, budget).children))
        node.children = out
    if _depth(root) > xmltree.MAX_DEPTH:
        raise FormatError(Diagnostic(root.file or path, root.line, root.tag, "elements nested deeper than "
                                     f"{xmltree.MAX_DEPTH} levels once includes are in place"))
    return root


def _include(node: xmltree.Node, main_dir: str, included: set, budget) -> xmltree.Node:
    def fail(message):
        raise FormatError(Diagnostic(node.file, node.line, "include", message))
    ref = node.get("file")
    if not ref:
        fail("<include> needs a file attribute")
    target = os.path.normpath(ref if os.path.isabs(ref) else os.path.join(main_dir, ref))
    if target in included:
        fail(f"{target} is included twice (MuJoCo includes a file at most once; an include cycle?)")
    included.add(target)
    problem = budget.charge(target)
    if problem:
        fail(problem)
    if not os.path.isfile(target):  # a FIFO or a device is named here, by the include that names it
        fail(f"included file not found (or not a regular file): {target}")
    return parse_xml_file(target)


def _depth(root: xmltree.Node) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= xmltree.MAX_DEPTH:
            stack.extend((c, depth + 1) for c in node.children)
    return deepest


def loads_robot(text: str, path: str = "<string>") -> Robot:
    return _Reader(path).read(expand_includes(parse_xml(text, path), path))


def read_robot(path: str, resource_directory: str = "", joint_order=None) -> Robot:
    """Read an MJCF file into a Robot (``resource_directory`` is accepted for symmetry and unused)."""
    robot = _Reader(path).read(expand_includes(parse_xml_file(path), path))
    if joint_order:
        robot.joint_order = joint_order
    return robot


def read(path: str) -> Scene:
    """Registry entry point: the MJCF model as a scene holding one robot instance."""
    return scene_for_robot(read_robot(path), path)
