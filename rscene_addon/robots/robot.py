"""The robot model shared by the URDF and MJCF readers: links (visuals, collisions, inertial), joints,
materials and the kinematic tree. Pure Python and numpy.

Conventions: every transform is a 4x4 numpy array; quaternions are w, x, y, z. ``Geometry.size`` of a box is
the FULL extent (URDF's convention; the MJCF reader doubles MJCF's half sizes). A cylinder or capsule lies
along its local z axis. ``Link.line``/``Joint.line`` is the 1-based source line (0 when synthesised).

Generalized coordinates follow RaiSim: a floating base first (position x, y, z, quaternion w, x, y, z), then
one value per revolute / continuous / prismatic joint, four (a quaternion) per spherical joint, seven per
floating joint and three per planar joint, in ``Robot.joint_order`` (default: depth-first URDF tree order).
Velocities use 6 for a floating base / floating joint (linear then angular), 3 for a spherical joint
(angular velocity), 3 for a planar joint (in-plane x, y, then rate about the normal) and one per 1-dof joint;
multi-dof velocities are expressed in the joint's parent frame (the world frame for the floating base).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import Diagnostic, FormatError

__all__ = ["GC_DIM", "GEOMETRY_KINDS", "JOINT_TYPES", "DOF_DIM", "Geometry", "Inertial", "Joint", "Link",
           "Material", "Robot", "Shape"]

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "floating", "planar", "spherical")
GC_DIM = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "floating": 7, "planar": 3, "spherical": 4}
DOF_DIM = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "floating": 6, "planar": 3, "spherical": 3}
GEOMETRY_KINDS = ("box", "cylinder", "sphere", "capsule", "ellipsoid", "plane", "mesh")


@dataclass
class Material:
    name: str = ""
    rgba: tuple[float, float, float, float] | None = None
    texture: str = ""


@dataclass
class Geometry:
    kind: str  # one of GEOMETRY_KINDS
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)  # box: full extents; ellipsoid/plane: half extents
    radius: float = 0.0
    length: float = 0.0  # cylinder / capsule: length of the axis (capsule: without the caps)
    filename: str = ""  # mesh: as written in the file
    path: str = ""  # mesh: resolved absolute path ('' when it could not be resolved)
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass
class Shape:
    """A visual or collision element: geometry placed at ``origin`` in its link frame."""
    geometry: Geometry
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    name: str = ""
    material: Material | None = None
    line: int = 0


@dataclass
class Inertial:
    mass: float = 0.0
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))  # centre of mass frame in the link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about the COM, in ``origin``'s axes


@dataclass
class Link:
    name: str
    visuals: list[Shape] = field(default_factory=list)
    collisions: list[Shape] = field(default_factory=list)
    inertial: Inertial | None = None
    line: int = 0
    virtual: bool = False  # inserted by a reader (an MJCF body with several joints), not in the file


@dataclass
class Joint:
    """``child frame = parent frame @ origin @ motion(q) @ child_offset`` (child_offset: identity for URDF;
    the MJCF reader uses it for joints whose anchor is not the body origin)."""
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float = 0.0
    armature: float = 0.0  # MJCF rotor inertia added to the joint's diagonal of the mass matrix
    friction: float = 0.0
    child_offset: np.ndarray = field(default_factory=lambda: np.eye(4))
    line: int = 0
    reference: float = 0.0  # MJCF ``ref`` (the coordinate value of the model pose); informational

    @property
    def gc_dim(self) -> int:
        return GC_DIM[self.type]

    @property
    def dof_dim(self) -> int:
        return DOF_DIM[self.type]

    @property
    def has_limits(self) -> bool:
        return self.type in ("revolute", "prismatic") and self.lower is not None and self.upper is not None \
            and self.upper > self.lower


class Robot:
    """A kinematic tree. ``links``/``joints``: dicts in file order; ``root``: the root link's name;
    ``floating_base``: True when the root moves freely (RaiSim: a URDF whose root link is not ``world``,
    an MJCF root body with a free joint)."""

    def __init__(self, name: str = "", path: str = "", source_format: str = ""):
        self.name = name
        self.path = path
        self.source_format = source_format
        self.links: dict[str, Link] = {}
        self.joints: dict[str, Joint] = {}
        self.materials: dict[str, Material] = {}
        self.root = ""
        self.floating_base = False
        self.warnings: list[Diagnostic] = []
        self.world_shapes: list[Shape] = []  # geometry fixed in the world (MJCF worldbody geoms), world frame
        self.sensor_sets: list = []  # formats.sensor_sets.SensorSet of links with sensor="..." (URDF)
        self.initial_base_pose = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # floating base: x y z w x y z
        self._joint_order: list[str] | None = None
        self._cache: dict | None = None

    # -- tree ---------------------------------------------------------------------------------------------

    def finalize(self) -> "Robot":
        """Check the tree (known links, one parent per link, one root, no cycle) and find the root."""
        parent_of: dict[str, Joint] = {}
        for joint in self.joints.values():
            for end in (joint.parent, joint.child):
                if end not in self.links:
                    raise FormatError(Diagnostic(self.path, joint.line, "joint",
                                                 f"joint {joint.name!r} names unknown link {end!r}"))
            if joint.child in parent_of:
                raise FormatError(Diagnostic(self.path, joint.line, "joint",
                                             f"link {joint.child!r} has two parent joints "
                                             f"({parent_of[joint.child].name!r} and {joint.name!r})"))
            parent_of[joint.child] = joint
        roots = [name for name in self.links if name not in parent_of]
        if len(roots) != 1:
            what = "no root link (the joints form a cycle)" if not roots else \
                "more than one root link: " + ", ".join(roots)
            raise FormatError(Diagnostic(self.path, 0, "robot", what))
        self.root = roots[0]
        self._cache = None
        order = self.link_order()
        if len(order) != len(self.links):
            raise FormatError(Diagnostic(self.path, 0, "robot", "the joints form a cycle"))
        return self

    def _tree(self) -> dict:
        if self._cache is None:
            children: dict[str, list[Joint]] = {name: [] for name in self.links}
            parent: dict[str, Joint] = {}
            for joint in self.joints.values():
                children[joint.parent].append(joint)
                parent[joint.child] = joint
            self._cache = {"children": children, "parent": parent}
        return self._cache

    def child_joints(self, link: str) -> list[Joint]:
        return list(self._tree()["children"][link])

    def parent_joint(self, link: str) -> Joint | None:
        return self._tree()["parent"].get(link)

    def link_order(self) -> list[str]:
        """Links depth-first from the root, children in file order (parents before children)."""
        children = self._tree()["children"]
        order: list[str] = []
        stack = [self.root]
        seen = set()
        while stack:
            name = stack.pop()
            if name in seen:
                break
            seen.add(name)
            order.append(name)
            stack.extend(j.child for j in reversed(children[name]))
        return order

    def tree_joint_order(self) -> list[str]:
        """Joints depth-first from the root (the order RaiSim uses when no jointOrder is given)."""
        return [self.parent_joint(link).name for link in self.link_order()[1:]]

    def movable_joints(self) -> list[str]:
        return [name for name in self.tree_joint_order() if self.joints[name].type != "fixed"]

    @property
    def joint_order(self) -> list[str]:
        """Movable joints in generalized-coordinate order."""
        return list(self._joint_order) if self._joint_order is not None else self.movable_joints()

    @joint_order.setter
    def joint_order(self, names) -> None:
        names = [n for n in (names or ()) if n]
        if not names:
            self._joint_order = None
            return
        movable = self.movable_joints()
        unknown = [n for n in names if n not in self.joints]
        if unknown:
            raise ValueError(f"jointOrder names unknown joints: {', '.join(unknown)}")
        names = [n for n in names if self.joints[n].type != "fixed"]
        missing = [n for n in movable if n not in names]
        if missing or len(set(names)) != len(names):
            raise ValueError("jointOrder must name every movable joint once; missing: " + ", ".join(missing))
        self._joint_order = names

    # -- coordinate layout --------------------------------------------------------------------------------

    @property
    def base_gc_dim(self) -> int:
        return 7 if self.floating_base else 0

    @property
    def base_dof_dim(self) -> int:
        return 6 if self.floating_base else 0

    def gc_slices(self) -> dict[str, slice]:
        """Joint name -> its slice of the generalized coordinate (the base, if floating, is ``''``)."""
        return self._slices(self.base_gc_dim, "gc_dim")

    def dof_slices(self) -> dict[str, slice]:
        """Joint name -> its slice of the generalized velocity (the base, if floating, is ``''``)."""
        return self._slices(self.base_dof_dim, "dof_dim")

    def _slices(self, base: int, joint_dim: str) -> dict[str, slice]:
        out: dict[str, slice] = {"": slice(0, base)} if base else {}
        at = base
        for name in self.joint_order:
            dim = getattr(self.joints[name], joint_dim)
            out[name] = slice(at, at + dim)
            at += dim
        return out

    @property
    def gc_dim(self) -> int:
        return self.base_gc_dim + sum(self.joints[n].gc_dim for n in self.joint_order)

    @property
    def dof_dim(self) -> int:
        return self.base_dof_dim + sum(self.joints[n].dof_dim for n in self.joint_order)

    def zero_configuration(self) -> np.ndarray:
        """Identity quaternions for the base and spherical/floating joints, zeros elsewhere."""
        q = np.zeros(self.gc_dim)
        for name, sl in self.gc_slices().items():
            kind = "floating" if name == "" else self.joints[name].type
            if kind == "floating":
                q[sl.start + 3] = 1.0
            elif kind == "spherical":
                q[sl.start] = 1.0
        return q

    def default_configuration(self) -> np.ndarray:
        """``zero_configuration`` with the floating base at ``initial_base_pose`` (MJCF: the body's pose)."""
        q = self.zero_configuration()
        if self.floating_base:
            q[:7] = self.initial_base_pose
        return q

    def __repr__(self) -> str:
        return (f"<Robot {self.name!r} {len(self.links)} links {len(self.joints)} joints "
                f"gc={self.gc_dim}{' floating' if self.floating_base else ''}>")
