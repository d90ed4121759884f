"""Reduced-coordinate articulated-system dynamics of a ``robots.Robot`` (RaiSim's ArticulatedSystem; numpy).

    from rscene_addon.formats import urdf
    from rscene_addon.sim.articulated import ArticulatedSystem

    robot = urdf.read_robot("cartpole.urdf")
    system = ArticulatedSystem(robot, dt=0.001)
    system.set_generalized_coordinate(q0)
    system.set_pd_gains(kp, kd); system.set_pd_targets(q_target, u_target)
    for _ in range(1000):
        system.step()
    poses = system.link_poses()          # {link: 4x4 world transform}

Coordinates follow ``robots.model``: ``q`` (gc_dim: a floating base first as x y z w x y z, one value per
1-dof joint, a quaternion per spherical joint, 7 per floating joint, 3 per planar joint) and ``u`` (dof_dim:
linear then angular for floating, angular velocity in the joint's parent frame for spherical).

Dynamics: spatial vectors in world-origin Plücker coordinates (angular first). The mass matrix comes from the
composite-rigid-body algorithm, the bias forces h(q, u) (gravity, Coriolis, centrifugal) from the recursive
Newton-Euler algorithm. A step is semi-implicit Euler: joint damping and PD terms are integrated implicitly
(stable at high gains), then one-sided constraints (joint limits, contacts with Coulomb friction) are
solved as sequential impulses in joint space, then ``q`` is integrated with the new ``u`` (quaternions
renormalised) and limited joints are projected back inside their range. Everything is deterministic.

Contacts: ``ground_height`` gives a flat ground of its own; an ``environment``
(``link_contacts.WorldContacts``) gives contacts with a rigid World's geoms, where an impulse on a dynamic
body also changes that body's velocity (its inverse mass is part of each contact's effective mass). Links
do not collide with each other or with other robots.
"""
from __future__ import annotations

import numpy as np

from ..robots.kinematics import integrate as _integrate_q
from ..robots.kinematics import plane_axes
from ..robots.model import Robot
from ..robots.transforms import axis_angle_matrix, log_rotation, quat_multiply, quat_normalize, quat_to_matrix
from .geometry import reduce_points
from .meshio import MeshFormatError, read_mesh

__all__ = ["ArticulatedSystem", "contact_points", "ground_height", "systems_for_scene"]


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _cross(a, b) -> np.ndarray:
    """a x b of two 3-vectors (np.cross costs several times more on vectors this small)."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _crm(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Spatial motion cross product v x m (v, m: [angular; linear])."""
    w, vl = v[:3], v[3:]
    return np.concatenate([_cross(w, m[:3]), _cross(w, m[3:]) + _cross(vl, m[:3])])


def _crf(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Spatial force cross product v x* f."""
    w, vl = v[:3], v[3:]
    return np.concatenate([_cross(w, f[:3]) + _cross(vl, f[3:]), _cross(w, f[3:])])


def _spatial_inertia(mass: float, com: np.ndarray, inertia_c: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia at the world origin of a body: COM ``com``, inertia about it (world axes)."""
    cx = _skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_c + mass * cx @ cx.T
    out[:3, 3:] = mass * cx
    out[3:, :3] = mass * cx.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def _pose(pos, quat) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = quat_to_matrix(np.asarray(quat, dtype=float))
    t[:3, 3] = pos
    return t


class _Body:
    __slots__ = ("link", "parent", "kind", "origin", "axis", "offset", "gs", "ds", "mass", "com_local",
                 "inertia_local", "joint")

    def __init__(self, link, parent, kind, origin, axis, offset, gs, ds, inertial, joint):
        self.link, self.parent, self.kind = link, parent, kind
        self.origin, self.axis, self.offset = origin, axis, offset
        self.gs, self.ds, self.joint = gs, ds, joint
        if inertial is not None and inertial.mass > 0:
            self.mass = float(inertial.mass)
            r = inertial.origin[:3, :3]
            self.com_local = inertial.origin[:3, 3].copy()
            self.inertia_local = r @ np.asarray(inertial.inertia, dtype=float) @ r.T
        else:
            self.mass, self.com_local, self.inertia_local = 0.0, np.zeros(3), np.zeros((3, 3))


MESH_CONTACT_DIRECTIONS = 34  # sample directions whose extreme mesh vertices become contact points


def _mesh_vertices(path: str) -> np.ndarray:
    try:
        return read_mesh(path)[0]
    except (MeshFormatError, OSError, ValueError):
        return np.zeros((0, 3))


def contact_points(link) -> np.ndarray:
    """Collision sample points of a link in its own frame as rows x, y, z, radius: box vertices (radius 0),
    sphere centres and capsule end centres with their radius (the contact point is the sphere's bottom),
    cylinder rims (8 points per end), ellipsoid extreme points, up to ~40 hull-extreme vertices of a mesh
    (scaled; an unreadable mesh gives none). Planes give no points."""
    pts = []
    for shape in link.collisions:
        g, t = shape.geometry, shape.origin
        if g.kind == "box":
            hx, hy, hz = (0.5 * float(s) for s in g.size)
            for sx in (-1, 1):
                for sy in (-1, 1):
                    for sz in (-1, 1):
                        p = t @ np.array([sx * hx, sy * hy, sz * hz, 1.0])
                        pts.append([*p[:3], 0.0])
        elif g.kind == "sphere":
            pts.append([*t[:3, 3], float(g.radius)])
        elif g.kind == "capsule":
            for s in (-0.5, 0.5):
                p = t @ np.array([0.0, 0.0, s * float(g.length), 1.0])
                pts.append([*p[:3], float(g.radius)])
        elif g.kind == "cylinder":
            r, h = float(g.radius), 0.5 * float(g.length)
            for z in (-h, h):
                for k in range(8):
                    a = 2 * np.pi * k / 8
                    p = t @ np.array([r * np.cos(a), r * np.sin(a), z, 1.0])
                    pts.append([*p[:3], 0.0])
        elif g.kind == "mesh" and g.path:
            verts = _mesh_vertices(g.path)
            if len(verts):
                v = reduce_points(verts * np.asarray(g.scale, dtype=float), MESH_CONTACT_DIRECTIONS)
                for p in v @ t[:3, :3].T + t[:3, 3]:
                    pts.append([*p, 0.0])
        elif g.kind == "ellipsoid":
            # sample the six extreme points of the ellipsoid (half extents)
            for axis in range(3):
                for s in (-1, 1):
                    v = np.zeros(3)
                    v[axis] = s * float(g.size[axis])
                    p = t @ np.append(v, 1.0)
                    pts.append([*p[:3], 0.0])
    return np.array(pts, dtype=float).reshape(-1, 4)


class ArticulatedSystem:
    """Reduced-coordinate dynamics of one robot. ``base``: 4x4 placing the robot's root frame in the world
    (a fixed-base root is welded there; a floating base's coordinates are relative to it)."""

    def __init__(self, robot: Robot, *, dt: float = 0.001, gravity=(0.0, 0.0, -9.81), base=None,
                 ground_height: float | None = None, friction: float = 0.8, contact_iterations: int = 30,
                 erp: float = 0.2, contact_slop: float = 1e-3, name: str = "", environment=None):
        self.robot = robot
        self.name = name or robot.name
        self.dt = float(dt)
        self.gravity = np.asarray(gravity, dtype=float)
        self.base = np.eye(4) if base is None else np.asarray(base, dtype=float)
        self.ground_height = ground_height
        self.friction = float(friction)
        self.contact_iterations = int(contact_iterations)
        self.erp = float(erp)
        self.contact_slop = float(contact_slop)
        # link-world contacts beyond the flat ground (``link_contacts.WorldContacts``): it gives contact rows
        # whose other side may be a dynamic body, and takes that body's new velocity back
        self.environment = environment
        self.nq, self.nv = robot.gc_dim, robot.dof_dim
        gcs, dofs = robot.gc_slices(), robot.dof_slices()
        order = robot.link_order()
        index = {name: i for i, name in enumerate(order)}
        self.bodies: list[_Body] = []
        root = robot.links[robot.root]
        if robot.floating_base:
            self.bodies.append(_Body(robot.root, -1, "floating", self.base, np.zeros(3), np.eye(4), gcs[""],
                                     dofs[""], root.inertial, None))
        else:
            self.bodies.append(_Body(robot.root, -1, "fixed", self.base, np.zeros(3), np.eye(4), slice(0, 0),
                                     slice(0, 0), root.inertial, None))
        for link in order[1:]:
            j = robot.parent_joint(link)
            gs = gcs.get(j.name, slice(0, 0)) if j.type != "fixed" else slice(0, 0)
            ds = dofs.get(j.name, slice(0, 0)) if j.type != "fixed" else slice(0, 0)
            axis = np.asarray(j.axis, dtype=float)
            n = np.linalg.norm(axis)
            axis = axis / n if n > 0 else np.array([1.0, 0.0, 0.0])
            self.bodies.append(_Body(link, index[j.parent], j.type, np.asarray(j.origin, float), axis,
                                     np.asarray(j.child_offset, float), gs, ds,
                                     robot.links[link].inertial, j))
        self.link_names = [b.link for b in self.bodies]
        self._contact_local = [contact_points(robot.links[b.link]) for b in self.bodies]
        # per-dof properties
        self.damping = np.zeros(self.nv)
        self.lower = np.full(self.nq, -np.inf)
        self.upper = np.full(self.nq, np.inf)
        self.effort = np.full(self.nv, np.inf)
        self._limited: list[tuple[int, int]] = []  # (gc index, dof index) of limited 1-dof joints
        for b in self.bodies:
            j = b.joint
            if j is None or b.kind == "fixed":
                continue
            if j.damping:
                self.damping[b.ds] = float(j.damping)
            if j.effort is not None and j.effort > 0 and b.ds.stop - b.ds.start == 1:
                self.effort[b.ds] = float(j.effort)
            if j.has_limits:
                self.lower[b.gs.start] = float(j.lower)
                self.upper[b.gs.start] = float(j.upper)
                self._limited.append((b.gs.start, b.ds.start))
        self.armature = np.zeros(self.nv)
        for b in self.bodies:
            if b.joint is not None and b.kind != "fixed" and getattr(b.joint, "armature", 0.0):
                self.armature[b.ds] = float(b.joint.armature)
        self.kp = np.zeros(self.nv)
        self.kd = np.zeros(self.nv)
        self.q_target = robot.zero_configuration()
        self.u_target = np.zeros(self.nv)
        self.tau_ext = np.zeros(self.nv)
        self.locked = np.zeros(self.nv, dtype=bool)
        self.enforce_effort_limits = False
        self.q = robot.default_configuration()
        self.u = np.zeros(self.nv)
        self.time = 0.0
        self.last_contacts: list[dict] = []
        self._update_kinematics()

    # -- state -----------------------------------------------------------------------------------------

    @classmethod
    def from_record(cls, scene, record, **kwargs) -> "ArticulatedSystem":
        """A system for an ``articulated`` record: its robot, base pose, generalizedCoordinate/Velocity."""
        from ..robots.scene_io import record_base_transform, robot_for_record
        robot = robot_for_record(scene, record)
        kwargs.setdefault("name", str(record.get("path", "") or getattr(record, "path", "") or robot.name))
        system = cls(robot, base=record_base_transform(record), **kwargs)
        gc = record.get("generalizedCoordinate", None)
        gc = np.asarray(() if gc is None else gc, dtype=float).ravel()
        if gc.size == system.nq:
            system.set_generalized_coordinate(gc)
        gv = record.get("generalizedVelocity", None)
        gv = np.asarray(() if gv is None else gv, dtype=float).ravel()
        if gv.size == system.nv and system.nv:
            system.set_generalized_velocity(gv)
        return system

    def get_generalized_coordinate(self) -> np.ndarray:
        return self.q.copy()

    def get_generalized_velocity(self) -> np.ndarray:
        return self.u.copy()

    def set_generalized_coordinate(self, q) -> None:
        q = np.asarray(q, dtype=float).ravel()
        if q.size != self.nq:
            raise ValueError(f"generalized coordinate has {q.size} values; "
                             f"{self.name or 'the robot'} needs {self.nq}")
        self.q = self._normalized(q.copy())
        self._update_kinematics()

    def set_generalized_velocity(self, u) -> None:
        u = np.asarray(u, dtype=float).ravel()
        if u.size != self.nv:
            raise ValueError(f"generalized velocity has {u.size} values; "
                             f"{self.name or 'the robot'} needs {self.nv}")
        self.u = u.copy()
        self._update_kinematics()

    def set_state(self, q, u) -> None:
        self.set_generalized_coordinate(q)
        self.set_generalized_velocity(u)

    def set_pd_gains(self, kp, kd) -> None:
        self.kp = np.broadcast_to(np.asarray(kp, dtype=float), (self.nv,)).copy()
        self.kd = np.broadcast_to(np.asarray(kd, dtype=float), (self.nv,)).copy()

    def set_pd_targets(self, q_target, u_target=None) -> None:
        qt = np.asarray(q_target, dtype=float).ravel()
        if qt.size != self.nq:
            raise ValueError(f"position target needs {self.nq} values")
        self.q_target = qt.copy()
        if u_target is not None:
            self.u_target = np.broadcast_to(np.asarray(u_target, dtype=float), (self.nv,)).copy()

    def set_generalized_forces(self, tau) -> None:
        self.tau_ext = np.broadcast_to(np.asarray(tau, dtype=float), (self.nv,)).copy()

    def set_joint_damping(self, damping) -> None:
        self.damping = np.broadcast_to(np.asarray(damping, dtype=float), (self.nv,)).copy()

    def set_effort_limits(self, effort, enforce: bool = True) -> None:
        self.effort = np.broadcast_to(np.asarray(effort, dtype=float), (self.nv,)).copy()
        self.enforce_effort_limits = enforce

    def set_joint_limits(self, name: str, lower: float, upper: float) -> None:
        b = next(b for b in self.bodies if b.joint is not None and b.joint.name == name)
        if b.ds.stop - b.ds.start != 1:
            raise ValueError("limits apply to 1-dof joints")
        self.lower[b.gs.start], self.upper[b.gs.start] = float(lower), float(upper)
        if (b.gs.start, b.ds.start) not in self._limited:
            self._limited.append((b.gs.start, b.ds.start))

    def lock_joint(self, name: str, locked: bool = True) -> None:
        """Hold a joint's coordinates still (its velocities stay zero); '' is the floating base."""
        ds = self.robot.dof_slices()[name]
        self.locked[ds] = locked
        self.u[ds] = 0.0

    def _normalized(self, q: np.ndarray) -> np.ndarray:
        for b in self.bodies:
            if b.kind == "floating":
                q[b.gs.start + 3:b.gs.start + 7] = quat_normalize(q[b.gs.start + 3:b.gs.start + 7])
            elif b.kind == "spherical":
                q[b.gs] = quat_normalize(q[b.gs])
        return q

    # -- kinematics ------------------------------------------------------------------------------------

    def _motion(self, b: _Body, qj: np.ndarray) -> np.ndarray:
        k = b.kind
        if k in ("revolute", "continuous"):
            t = np.eye(4)
            t[:3, :3] = axis_angle_matrix(b.axis, float(qj[0]))
            return t
        if k == "prismatic":
            t = np.eye(4)
            t[:3, 3] = float(qj[0]) * b.axis
            return t
        if k == "spherical":
            t = np.eye(4)
            t[:3, :3] = quat_to_matrix(qj[:4])
            return t
        if k == "floating":
            return _pose(qj[:3], qj[3:7])
        if k == "planar":
            u, v = plane_axes(b.axis)
            t = np.eye(4)
            t[:3, 3] = qj[0] * u + qj[1] * v
            t[:3, :3] = axis_angle_matrix(b.axis, float(qj[2]))
            return t
        return np.eye(4)

    def _subspace(self, b: _Body, jf: np.ndarray, moved: np.ndarray) -> np.ndarray:
        """6 x d motion subspace (world-origin Plücker coordinates) of a body's joint."""
        rot, p = jf[:3, :3], jf[:3, 3]
        k = b.kind
        if k in ("revolute", "continuous"):
            a = rot @ b.axis
            return np.concatenate([a, _cross(p, a)])[:, None]
        if k == "prismatic":
            return np.concatenate([np.zeros(3), rot @ b.axis])[:, None]
        if k == "spherical":
            return np.vstack([rot, _skew(p) @ rot])
        if k == "floating":
            c = moved[:3, 3]
            s = np.zeros((6, 6))
            s[3:, :3] = rot
            s[:3, 3:] = rot
            s[3:, 3:] = _skew(c) @ rot
            return s
        if k == "planar":
            u, v = plane_axes(b.axis)
            n = rot @ b.axis
            c = moved[:3, 3]
            s = np.zeros((6, 3))
            s[3:, 0] = rot @ u
            s[3:, 1] = rot @ v
            s[:3, 2] = n
            s[3:, 2] = _cross(c, n)
            return s
        return np.zeros((6, 0))

    def _update_kinematics(self) -> None:
        n = len(self.bodies)
        self.frames = [None] * n
        self.S = [None] * n
        self.inertia = [None] * n
        self.vel = [None] * n  # spatial velocity of every body
        self.com = np.zeros((n, 3))
        q, u = self.q, self.u
        for i, b in enumerate(self.bodies):
            parent_frame = np.eye(4) if b.parent < 0 else self.frames[b.parent]
            jf = parent_frame @ b.origin
            moved = jf @ self._motion(b, q[b.gs]) if b.kind != "fixed" else jf
            frame = moved @ b.offset
            self.frames[i] = frame
            self.S[i] = self._subspace(b, jf, moved)
            rot = frame[:3, :3]
            com = frame[:3, :3] @ b.com_local + frame[:3, 3]
            self.com[i] = com
            self.inertia[i] = _spatial_inertia(b.mass, com, rot @ b.inertia_local @ rot.T)
            vp = np.zeros(6) if b.parent < 0 else self.vel[b.parent]
            self.vel[i] = vp + self.S[i] @ u[b.ds]

    def _sdot_u(self, i: int, vp: np.ndarray) -> np.ndarray:
        """d(S_i)/dt u_i: v_parent x (S u), plus [0; v_rel x w_rel] for joints rotating about a moving
        centre (floating, planar)."""
        b = self.bodies[i]
        su = self.S[i] @ self.u[b.ds]
        out = _crm(vp, su)
        if b.kind in ("floating", "planar"):
            s = self.S[i]
            ud = self.u[b.ds]
            if b.kind == "floating":
                v_rel, w_rel = s[3:, :3] @ ud[:3], s[:3, 3:] @ ud[3:]
            else:
                v_rel, w_rel = s[3:, :2] @ ud[:2], s[:3, 2] * ud[2]
            out[3:] += _cross(v_rel, w_rel)
        return out

    # -- dynamics --------------------------------------------------------------------------------------

    def mass_matrix(self) -> np.ndarray:
        """M(q) by the composite-rigid-body algorithm (plus ``armature`` on the diagonal)."""
        n = len(self.bodies)
        comp = [ic.copy() for ic in self.inertia]
        for i in range(n - 1, 0, -1):
            p = self.bodies[i].parent
            if p >= 0:
                comp[p] += comp[i]
        m = np.zeros((self.nv, self.nv))
        for i in range(n - 1, -1, -1):
            b = self.bodies[i]
            if b.ds.stop == b.ds.start:
                continue
            f = comp[i] @ self.S[i]
            m[b.ds, b.ds] = self.S[i].T @ f
            j = b.parent
            while j >= 0:
                bj = self.bodies[j]
                if bj.ds.stop > bj.ds.start:
                    blk = f.T @ self.S[j]
                    m[b.ds, bj.ds] = blk
                    m[bj.ds, b.ds] = blk.T
                j = bj.parent
        m[np.diag_indices(self.nv)] += self.armature
        return m

    def inverse_dynamics(self, qdd=None, gravity: bool = True) -> np.ndarray:
        """tau = M qdd + h by recursive Newton-Euler (``qdd`` None: the bias forces h(q, u))."""
        n = len(self.bodies)
        qdd = np.zeros(self.nv) if qdd is None else np.asarray(qdd, dtype=float)
        acc = [None] * n
        force = [None] * n
        a0 = np.concatenate([np.zeros(3), -self.gravity]) if gravity else np.zeros(6)
        for i, b in enumerate(self.bodies):
            if b.parent < 0:
                vp, ap = np.zeros(6), a0
            else:
                vp, ap = self.vel[b.parent], acc[b.parent]
            acc[i] = ap + self.S[i] @ qdd[b.ds] + self._sdot_u(i, vp)
            v = self.vel[i]
            inertia = self.inertia[i]
            force[i] = inertia @ acc[i] + _crf(v, inertia @ v)
        tau = np.zeros(self.nv)
        for i in range(n - 1, -1, -1):
            b = self.bodies[i]
            tau[b.ds] = self.S[i].T @ force[i]
            if b.parent >= 0:
                force[b.parent] = force[b.parent] + force[i]
        return tau

    def bias_forces(self) -> np.ndarray:
        return self.inverse_dynamics(None)

    def forward_dynamics(self, tau=None) -> np.ndarray:
        """qdd = M^-1 (tau - h) (locked dofs get zero)."""
        tau = self.tau_ext if tau is None else np.asarray(tau, dtype=float)
        m = self.mass_matrix()
        rhs = tau - self.bias_forces()
        free = ~self.locked
        qdd = np.zeros(self.nv)
        qdd[free] = self._solve(m[np.ix_(free, free)], rhs[free])
        return qdd

    @staticmethod
    def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.size == 0:
            return np.zeros(b.shape)
        try:
            return np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            return np.linalg.lstsq(a, b, rcond=None)[0]

    def kinetic_energy(self) -> float:
        return 0.5 * float(self.u @ self.mass_matrix() @ self.u)

    def potential_energy(self) -> float:
        return -float(sum(b.mass * (self.gravity @ self.com[i]) for i, b in enumerate(self.bodies)))

    def energy(self) -> float:
        return self.kinetic_energy() + self.potential_energy()

    def position_error(self) -> np.ndarray:
        """q_target (-) q as an nv vector (quaternion parts: rotation vectors in the parent frame)."""
        e = np.zeros(self.nv)
        for b in self.bodies:
            if b.ds.stop == b.ds.start:
                continue
            qt, qc = self.q_target[b.gs], self.q[b.gs]
            if b.kind == "spherical":
                e[b.ds] = _quat_error(qt, qc)
            elif b.kind == "floating":
                e[b.ds.start:b.ds.start + 3] = qt[:3] - qc[:3]
                e[b.ds.start + 3:b.ds.stop] = _quat_error(qt[3:7], qc[3:7])
            else:
                e[b.ds] = qt - qc
        return e

    # -- stepping --------------------------------------------------------------------------------------

    def step(self, dt: float | None = None) -> None:
        dt = self.dt if dt is None else float(dt)
        nv = self.nv
        u = self.u
        m = self.mass_matrix()
        h = self.bias_forces()
        e = self.position_error()
        kp, kd, damp = self.kp, self.kd, self.damping
        free = ~self.locked
        clamped = np.zeros(nv, dtype=bool)
        clamp_tau = np.zeros(nv)
        limit = self.effort if self.enforce_effort_limits else np.full(nv, np.inf)
        acc = np.zeros(nv)
        for _ in range(3):
            # implicit PD + damping:
            # (M + dt (Kd + D) + dt^2 Kp) a = Kp (e - dt u) + Kd (u* - u) - D u + tau - h;
            # a saturated actuator applies its effort limit as a constant torque instead
            kp_i = np.where(clamped, 0.0, kp)
            kd_i = np.where(clamped, 0.0, kd)
            rhs = kp_i * (e - dt * u) + kd_i * (self.u_target - u) + clamp_tau - damp * u + self.tau_ext - h
            a_mat = m + np.diag(dt * (kd_i + damp) + dt * dt * kp_i)
            acc = np.zeros(nv)
            acc[free] = self._solve(a_mat[np.ix_(free, free)], rhs[free])
            u_try = u + dt * acc
            tau_pd = kp * (e - dt * u_try) + kd * (self.u_target - u_try)
            over = (np.abs(tau_pd) > limit) & ~clamped & ((kp != 0) | (kd != 0))
            if not over.any():
                break
            clamped |= over
            clamp_tau = np.where(clamped, np.clip(tau_pd, -limit, limit), clamp_tau)
        self.last_pd_torque = np.where(clamped, clamp_tau, kp * (e - dt * (u + dt * acc))
                                       + kd * (self.u_target - u - dt * acc))
        u_new = u + dt * acc
        u_new[self.locked] = 0.0
        # one-sided constraints on the velocity level
        u_new = self._solve_constraints(m, u_new, dt)
        self.u = u_new
        q = _integrate_q(self.robot, self.q, u_new * dt) if nv else self.q.copy()
        # project limited joints back into range (no energy gain: the outward velocity is removed)
        for gi, di in self._limited:
            if q[gi] < self.lower[gi]:
                q[gi] = self.lower[gi]
                self.u[di] = max(self.u[di], 0.0)
            elif q[gi] > self.upper[gi]:
                q[gi] = self.upper[gi]
                self.u[di] = min(self.u[di], 0.0)
        self.q = self._normalized(q)
        self.time += dt
        self._update_kinematics()

    def _solve_constraints(self, m: np.ndarray, u: np.ndarray, dt: float) -> np.ndarray:
        rows = []  # (J row (nv,), kind, lo-bound velocity target, group)
        # joint limits: q + dt u stays inside [lower, upper]
        for gi, di in self._limited:
            if self.locked[di]:
                continue
            qv = self.q[gi]
            lo_gap = qv - self.lower[gi]
            hi_gap = self.upper[gi] - qv
            if lo_gap + dt * u[di] < 0:
                j = np.zeros(self.nv)
                j[di] = 1.0
                rows.append(("limit", j, -lo_gap / dt))
            if hi_gap - dt * u[di] < 0:
                j = np.zeros(self.nv)
                j[di] = -1.0
                rows.append(("limit", j, -hi_gap / dt))
        contacts = self._ground_contacts(u, dt)
        if self.environment is not None:
            contacts += self.environment.contacts(self, u, dt)
        self.last_contacts = contacts
        if not rows and not contacts:
            return u
        free = ~self.locked
        m_free = m[np.ix_(free, free)]
        try:
            chol = np.linalg.cholesky(m_free)

            def minv(x):
                return np.linalg.solve(chol.T, np.linalg.solve(chol, x))
        except np.linalg.LinAlgError:
            pinv = np.linalg.pinv(m_free)

            def minv(x):
                return pinv @ x
        u = u.copy()
        # velocities (linear, angular) of the dynamic bodies touched, exchanged impulse by impulse
        body_v = {c["body_index"]: self.environment.body_velocity(c["body_index"])
                  for c in contacts if c.get("body_inv") is not None}

        def prepare(j, bj=None, inv=None):
            """Robot velocity change per unit impulse, the other body's, and the inverse effective mass."""
            jf = j[free]
            wj = np.zeros(self.nv)
            wj[free] = minv(jf)
            denom = float(j @ wj)
            wb = None
            if inv is not None:
                wb = -(inv @ bj)  # the reaction pushes the body the other way
                denom += float(bj @ inv @ bj)
            return wj, wb, (1.0 / denom if denom > 1e-12 else 0.0)

        lim = [(j, target, *prepare(j)) for _, j, target in rows]
        lim_lambda = np.zeros(len(lim))
        con = []
        for c in contacts:
            bjac, inv = c.get("body_jac"), c.get("body_inv")
            b = c["body_index"] if inv is not None else None
            # a static or kinematic other side: its velocity along the rows does not change
            fixed = bjac @ self.environment.body_velocity(c["body_index"]) if bjac is not None and b is None \
                else np.zeros(3)
            axes = [(j, None if b is None else bjac[k], *prepare(j, None if b is None else bjac[k], inv))
                    for k, j in enumerate(c["jacobian"])]
            con.append((c, b, fixed, axes))
        con_lambda = np.zeros((len(con), 3))
        for _ in range(self.contact_iterations):
            for k, (j, target, wj, _, eff) in enumerate(lim):
                dl = eff * (target - j @ u)
                new = max(lim_lambda[k] + dl, 0.0)
                u += wj * (new - lim_lambda[k])
                lim_lambda[k] = new
            for k, (c, b, fixed, axes) in enumerate(con):
                for axis, (j, bj, wj, wb, eff) in enumerate(axes):
                    # velocity of the robot's contact point relative to the other side's, along this row
                    rel = j @ u - (fixed[axis] if b is None else bj @ body_v[b])
                    if axis == 0:
                        new = max(con_lambda[k, 0] + eff * (c["target"] - rel), 0.0)
                    else:
                        bound = c["friction"] * con_lambda[k, 0]
                        new = min(max(float(con_lambda[k, axis] - eff * rel), -bound), bound)
                    dl = new - con_lambda[k, axis]
                    u += wj * dl
                    if wb is not None:
                        body_v[b] += wb * dl
                    con_lambda[k, axis] = new
        for k, (c, _, _, _) in enumerate(con):
            c["impulse"] = con_lambda[k].copy()
        if body_v:
            self.environment.apply(body_v)
        return u

    def point_jacobian(self, body: int, point_world: np.ndarray) -> np.ndarray:
        """3 x nv Jacobian of the world velocity of a point fixed on body ``body``."""
        jac = np.zeros((6, self.nv))
        i = body
        while i >= 0:
            b = self.bodies[i]
            if b.ds.stop > b.ds.start:
                jac[:, b.ds] = self.S[i]
            i = b.parent
        return jac[3:] - _skew(point_world) @ jac[:3]

    def _ground_contacts(self, u: np.ndarray, dt: float) -> list[dict]:
        if self.ground_height is None:
            return []
        out = []
        hz = float(self.ground_height)
        n = np.array([0.0, 0.0, 1.0])
        t1, t2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        for i, pts in enumerate(self._contact_local):
            if not len(pts):
                continue
            frame = self.frames[i]
            world = pts[:, :3] @ frame[:3, :3].T + frame[:3, 3]
            low = world[:, 2] - pts[:, 3]
            for k in np.nonzero(low - hz < max(0.02, 2.0 * dt * float(np.abs(u).max(initial=0.0))))[0]:
                p = world[k] - np.array([0.0, 0.0, pts[k, 3]])
                jp = self.point_jacobian(i, p)
                vn = float(n @ jp @ u)
                gap = float(low[k] - hz)
                if gap + dt * vn > 0 and gap > 0:
                    continue  # will not reach the ground this step
                target = -gap / dt if gap > 0 else self.erp * max(-gap - self.contact_slop, 0.0) / dt
                out.append(dict(link=self.bodies[i].link, point=p, depth=-gap, target=target,
                                friction=self.friction, jacobian=(n @ jp, t1 @ jp, t2 @ jp)))
        return out

    # -- output ----------------------------------------------------------------------------------------

    def link_poses(self) -> dict[str, np.ndarray]:
        """{link name: 4x4 world transform} at the current state."""
        return {b.link: self.frames[i].copy() for i, b in enumerate(self.bodies)}

    def link_positions_quaternions(self) -> tuple[np.ndarray, np.ndarray]:
        """(L, 3) positions and (L, 4) quaternions w, x, y, z of the links in ``link_names`` order."""
        from ..sensors.frames import matrix_to_quat
        frames = np.array(self.frames).reshape(-1, 4, 4)
        return frames[:, :3, 3].copy(), matrix_to_quat(frames[:, :3, :3]).reshape(-1, 4)

    def link_velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """(L, 3) linear velocities of the link frame origins and (L, 3) angular velocities (world)."""
        lin = np.array([v[3:] + np.cross(v[:3], f[:3, 3])
                        for v, f in zip(self.vel, self.frames)]).reshape(-1, 3)
        ang = np.array([v[:3] for v in self.vel]).reshape(-1, 3)
        return lin, ang


def _quat_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vector r with exp(r) * current = target (left/parent-frame convention)."""
    tq = quat_normalize(target)
    cq = quat_normalize(current)
    conj = np.array([cq[0], -cq[1], -cq[2], -cq[3]])
    d = quat_multiply(tq, conj)
    return log_rotation(quat_to_matrix(d))


def systems_for_scene(scene, *, dt: float, gravity=(0.0, 0.0, -9.81), ground: float | None = None,
                      warnings: list | None = None, world=None) -> list[ArticulatedSystem]:
    """One ArticulatedSystem per ``articulated`` record of ``scene`` (named by the record's path); a record
    whose robot cannot be read is skipped with a message appended to ``warnings``. With a sim ``World`` the
    links touch its geoms (two-way, the record's collisionGroup/collisionMask/collidable respected) and
    ``ground`` is not used; without one they touch only a plane at height ``ground`` (None: nothing)."""
    out = []
    try:
        records = scene.of("articulated")
    except Exception:
        return out
    for rec in records:
        try:
            env = None
            if world is not None:
                from .link_contacts import WorldContacts
                env = WorldContacts(world, group=_record_int(rec, "collisionGroup", 1),
                                    mask=_record_int(rec, "collisionMask", 2 ** 64 - 1),
                                    collidable=bool(rec.get("collidable", True)))
            out.append(ArticulatedSystem.from_record(scene, rec, dt=dt, gravity=gravity,
                                                     ground_height=None if world is not None else ground,
                                                     environment=env))
        except Exception as exc:  # FormatError, OSError, ValueError: report and carry on
            if warnings is not None:
                warnings.append(f"{getattr(rec, 'path', '') or rec.get('path', '')}: articulated system "
                                f"not simulated: {exc}")
    return out


def _record_int(rec, name: str, default: int) -> int:
    value = rec.get(name, default)
    try:
        return int(value) if value not in (None, "", "-") else int(default)
    except (TypeError, ValueError):
        return int(default)


def ground_height(model, state=None) -> float | None:
    """Height of the highest ground plane of a sim ``Model`` (None when it has none)."""
    from .geometry import PLANE
    idx = np.nonzero(np.asarray(model.geom_type) == PLANE)[0]
    if not len(idx):
        return None
    heights = np.asarray(model.geom_pos)[idx, 2]
    if state is not None:
        heights = heights + np.asarray(state.position)[np.asarray(model.geom_body)[idx], 2]
    return float(np.max(heights))
