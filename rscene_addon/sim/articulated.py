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

Coordinates follow ``robots.robot``: ``q`` (gc_dim: a floating base first as x y z w x y z, one value per
1-dof joint, a quaternion per spherical joint, 7 per floating joint, 3 per planar joint) and ``u`` (dof_dim:
linear then angular for floating, angular velocity in the joint's parent frame for spherical).

Dynamics: spatial vectors in world-origin Plücker coordinates (angular first). The mass matrix comes from the
composite-rigid-body algorithm, the bias forces h(q, u) (gravity, Coriolis, centrifugal) from the recursive
Newton-Euler algorithm. A step is semi-implicit Euler: joint damping and PD terms are integrated implicitly
(stable at high gains), then one-sided constraints (joint limits, contacts with Coulomb friction) are
solved as sequential impulses in joint space, then ``q`` is integrated with the new ``u`` (quaternions
renormalised) and limited joints are projected back inside their range. Everything is deterministic.

Contacts: ``ground_height`` (a height) gives a flat ground of its own; an ``environment``
(``link_contacts.WorldContacts``) gives contacts with a rigid World's geoms, where an impulse on a dynamic
body also changes that body's velocity (its inverse mass is part of each contact's effective mass); links
of one system touch each other (``link_pairs``: not across a joint, group/mask and
``ignore_collision_between`` respected) and ``multibody_solver.step_systems`` steps several systems with one solve, so their
links touch each other too. Contacts follow the rigid world's solver: restitution above its threshold,
speculative contacts, penetration beyond ``contact_slop`` removed at ``erp`` per step by pseudo velocities
(split impulse) that move ``q`` without changing ``u``. Every step appends contact-begin events (a pair of
link or body names that touches now and did not at the last step) to ``events``, in the rigid world's
format with links named ``<system name>/<link>``.

Around this module: ``spatial_algebra`` (6D vector algebra), ``link_points`` (where links touch),
``multibody_solver`` (one solve for several systems) and ``robot_scene`` (systems from a scene's records).
"""
from __future__ import annotations

import numpy as np

from ..base.spatial import axis_angle_matrix, quat_normalize, quat_to_matrix, skew
from ..robots.kinematics import integrate as _integrate_q
from ..robots.kinematics import plane_axes
from ..robots.robot import Robot
from . import kernels
from .link_contacts import SLOP, contact_targets
from .link_pairs import self_collision_pairs
from .link_points import contact_points
from .multibody_solver import step_systems
from .physics_model import ALL_GROUPS
from .robot_pack import control_attributes, state_attributes
from .spatial_algebra import cross3, force_cross, motion_cross, pose_matrix, quat_error, spatial_inertia

__all__ = ["ArticulatedSystem"]


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


TOUCH_IMPULSE = 1e-12  # N s: a normal impulse up to this is round-off, not a touch (contact events)


class ArticulatedSystem:
    """Reduced-coordinate dynamics of one robot. ``base``: 4x4 placing the robot's root frame in the world
    (a fixed-base root is welded there; a floating base's coordinates are relative to it).
    ``friction``/``restitution``/``restitution_threshold``: the material against ``ground_height`` and
    against other links when no world's material table applies; ``erp``/``contact_slop``: position
    correction of penetrating contacts; ``collision_group``/``collision_mask``: every link's
    (``set_collision_filter`` sets one link's); ``self_collision`` False: its links never touch each other;
    ``collidable`` False: no contacts at all; ``collide_with_parent``: a link touches its parent link too
    (RaiSim's ``doNotCollideWithParent=false``; links welded by fixed joints never touch each other);
    ``backend``: ``numpy``, ``numba`` or ``auto`` (``kernels.resolve``; None: the environment's)."""

    # after a packed compiled step these read the step's buffer, cut when first read (robot_pack.PackedState);
    # an assigned array (the numpy route, the setters) is the instance's own and wins
    q, u, last_pd_torque, frames, _S, vel, com, inertia = state_attributes()
    # and the controls of a system in a pack read its control buffer (robot_pack.PackedControl)
    q_target, u_target, kp, kd, damping, tau_ext, effort, armature, gravity, lower, upper, locked = control_attributes()

    def __init__(self, robot: Robot, *, dt: float = 0.001, gravity=(0.0, 0.0, -9.81), base=None,
                 ground_height: float | None = None, friction: float = 0.8, restitution: float = 0.0,
                 restitution_threshold: float = 0.001, contact_iterations: int = 30, erp: float = 0.2,
                 contact_slop: float = SLOP, name: str = "", environment=None, collision_group: int = 1,
                 collision_mask: int = ALL_GROUPS, self_collision: bool = True, collidable: bool = True,
                 collide_with_parent: bool = False, backend: str | None = None):
        self.robot = robot
        self.backend = kernels.resolve(backend)
        self.name = name or robot.name
        self.dt = float(dt)
        self.gravity = np.asarray(gravity, dtype=float)
        self.base = np.eye(4) if base is None else np.asarray(base, dtype=float)
        self.ground_height = ground_height
        # material of the flat ground and of link-link contacts without a world's material table
        self.friction = float(friction)
        self.restitution = float(restitution)
        self.restitution_threshold = float(restitution_threshold)
        self.contact_iterations = int(contact_iterations)
        self.erp = float(erp)
        self.contact_slop = float(contact_slop)
        self.self_collision = bool(self_collision)
        self.collide_with_parent = bool(collide_with_parent)
        self.collidable = bool(collidable)
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
        # per link collision group and mask (RaiSim's rule: each side's group in the other's mask)
        nl = len(self.bodies)
        self.collision_group = np.full(nl, int(collision_group) & ALL_GROUPS, dtype=np.uint64)
        self.collision_mask = np.full(nl, int(collision_mask) & ALL_GROUPS, dtype=np.uint64)
        self.ignored_pairs: set[tuple[int, int]] = set()
        self._self_pairs = (None, None)
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
        self._last_contacts: list[dict] | None = []
        self._contact_arrays = None  # the compiled step's contacts, turned into dicts when asked for
        self._S_list = None
        self.events: list[dict] = []  # contact-begin events since the last clear
        self._touching: set = set()
        self._update_kinematics()

    # -- state -----------------------------------------------------------------------------------------

    @classmethod
    def from_record(cls, scene, record, **kwargs) -> "ArticulatedSystem":
        """A system for an ``articulated`` record: its robot, base pose, generalizedCoordinate/Velocity."""
        from ..formats.robot_files import robot_for_record
        from ..robots.scene_io import record_configuration
        robot = robot_for_record(scene, record)
        kwargs.setdefault("name", str(record.get("path", "") or getattr(record, "path", "") or robot.name))
        # a generalizedCoordinate of the wrong length: the default configuration, placed (validate says so)
        base, q = record_configuration(robot, record, strict=False)
        system = cls(robot, base=base, **kwargs)
        system.set_generalized_coordinate(q)
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

    @property
    def last_contacts(self) -> list[dict]:
        """The contacts of the last step (dicts: link, body, point, normal, depth, impulse, ...)."""
        if self._last_contacts is None:
            from .multibody_compiled import contact_dicts
            self._last_contacts = contact_dicts(self)
        return self._last_contacts

    @last_contacts.setter
    def last_contacts(self, contacts: list[dict]) -> None:
        self._last_contacts = contacts
        self._contact_arrays = None

    @property
    def S(self) -> list:
        """Per body its 6 x d motion subspace (world-origin Plücker coordinates)."""
        if self._S_list is None:
            self._S_list = [self._S[i, :, :d] for i, d in enumerate(self._arrays.nd.tolist())]
        return self._S_list

    @S.setter
    def S(self, value: list) -> None:
        self._S_list = value

    # -- collision filtering ---------------------------------------------------------------------------

    def _link_index(self, link: str) -> int:
        try:
            return self.link_names.index(link)
        except ValueError:
            raise KeyError(f"{self.name or 'the robot'} has no link {link!r}") from None

    def set_collision_filter(self, group: int, mask: int, link: str | None = None) -> None:
        """Collision group and mask of one link (None: every link)."""
        sel = slice(None) if link is None else self._link_index(link)
        self.collision_group[sel] = int(group) & ALL_GROUPS
        self.collision_mask[sel] = int(mask) & ALL_GROUPS

    def ignore_collision_between(self, link_a: str, link_b: str) -> None:
        """Never let these two links of this system touch each other."""
        i, j = sorted((self._link_index(link_a), self._link_index(link_b)))
        self.ignored_pairs.add((i, j))

    def self_pairs(self) -> np.ndarray:
        """(L, L) bool: which pairs of this system's links may touch each other (``link_pairs``)."""
        key = (self.collision_group.tobytes(), self.collision_mask.tobytes(), frozenset(self.ignored_pairs),
               self.self_collision, self.collidable, self.collide_with_parent)
        if self._self_pairs[0] != key:
            self._self_pairs = (key, self_collision_pairs(self))
        return self._self_pairs[1]

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
            return pose_matrix(qj[:3], qj[3:7])
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
            return np.concatenate([a, cross3(p, a)])[:, None]
        if k == "prismatic":
            return np.concatenate([np.zeros(3), rot @ b.axis])[:, None]
        if k == "spherical":
            return np.vstack([rot, skew(p) @ rot])
        if k == "floating":
            c = moved[:3, 3]
            s = np.zeros((6, 6))
            s[3:, :3] = rot
            s[:3, 3:] = rot
            s[3:, 3:] = skew(c) @ rot
            return s
        if k == "planar":
            u, v = plane_axes(b.axis)
            n = rot @ b.axis
            c = moved[:3, 3]
            s = np.zeros((6, 3))
            s[3:, 0] = rot @ u
            s[3:, 1] = rot @ v
            s[:3, 2] = n
            s[3:, 2] = cross3(c, n)
            return s
        return np.zeros((6, 0))

    def _update_kinematics(self) -> None:
        if self.backend == "numba":
            from .multibody_compiled import update_kinematics
            update_kinematics(self, kernels.load_robots())
            return
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
            self.inertia[i] = spatial_inertia(b.mass, com, rot @ b.inertia_local @ rot.T)
            vp = np.zeros(6) if b.parent < 0 else self.vel[b.parent]
            self.vel[i] = vp + self.S[i] @ u[b.ds]

    def _sdot_u(self, i: int, vp: np.ndarray) -> np.ndarray:
        """d(S_i)/dt u_i: v_parent x (S u), plus [0; v_rel x w_rel] for joints rotating about a moving
        centre (floating, planar)."""
        b = self.bodies[i]
        su = self.S[i] @ self.u[b.ds]
        out = motion_cross(vp, su)
        if b.kind in ("floating", "planar"):
            s = self.S[i]
            ud = self.u[b.ds]
            if b.kind == "floating":
                v_rel, w_rel = s[3:, :3] @ ud[:3], s[:3, 3:] @ ud[3:]
            else:
                v_rel, w_rel = s[3:, :2] @ ud[:2], s[:3, 2] * ud[2]
            out[3:] += cross3(v_rel, w_rel)
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
            force[i] = inertia @ acc[i] + force_cross(v, inertia @ v)
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
                e[b.ds] = quat_error(qt, qc)
            elif b.kind == "floating":
                e[b.ds.start:b.ds.start + 3] = qt[:3] - qc[:3]
                e[b.ds.start + 3:b.ds.stop] = quat_error(qt[3:7], qc[3:7])
            else:
                e[b.ds] = qt - qc
        return e

    # -- stepping --------------------------------------------------------------------------------------

    def step(self, dt: float | None = None) -> None:
        """Advance one step (contacts with the ground, the environment and its own links)."""
        step_systems([self], dt)

    def _predict(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(M, u after this step's forces): gravity, bias forces, joint damping and PD terms, the last two
        integrated implicitly (stable at high gains)."""
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
        return m, u_new

    def _limit_rows(self, u: np.ndarray, dt: float) -> list[tuple[np.ndarray, float]]:
        """Joint-limit rows (J (nv,), velocity target): q + dt u stays inside [lower, upper]."""
        rows = []
        for gi, di in self._limited:
            if self.locked[di]:
                continue
            qv = self.q[gi]
            lo_gap = qv - self.lower[gi]
            hi_gap = self.upper[gi] - qv
            if lo_gap + dt * u[di] < 0:
                j = np.zeros(self.nv)
                j[di] = 1.0
                rows.append((j, -lo_gap / dt))
            if hi_gap - dt * u[di] < 0:
                j = np.zeros(self.nv)
                j[di] = -1.0
                rows.append((j, -hi_gap / dt))
        return rows

    def _finish(self, u: np.ndarray, push: np.ndarray, dt: float) -> None:
        """Take the solved velocity ``u``, move ``q`` by ``u`` plus the pseudo velocity ``push``."""
        self.u = u
        q = _integrate_q(self.robot, self.q, (u + push) * dt) if self.nv else self.q.copy()
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

    def _inverse_mass(self, m: np.ndarray):
        """x -> M^-1 x on the free dofs (locked dofs do not move)."""
        free = ~self.locked
        m_free = m[np.ix_(free, free)]
        try:
            chol = np.linalg.cholesky(m_free)

            def solve(x):
                return np.linalg.solve(chol.T, np.linalg.solve(chol, x))
        except np.linalg.LinAlgError:
            pinv = np.linalg.pinv(m_free)

            def solve(x):
                return pinv @ x

        def minv(x):
            out = np.zeros(self.nv)
            if free.any():
                out[free] = solve(x[free])
            return out
        return minv

    def _record_events(self, contacts: list[dict]) -> None:
        """Contact-begin events of the contacts this system owns: one per pair of names that touches (normal
        impulse above round-off) now and did not at the last step, at its fastest-approaching point."""
        best: dict = {}
        for c in contacts:
            if c["system"] is not self or c["impulse"][0] <= TOUCH_IMPULSE:
                continue
            pair = (c["body"], f"{self.name}/{c['link']}")
            key = tuple(sorted(pair))
            if key not in best or c["speed"] > best[key][1]["speed"]:
                best[key] = (pair, c)
        for key, (pair, c) in best.items():
            if key not in self._touching:
                self.events.append(dict(time=self.time, body_a=pair[0], body_b=pair[1],
                                        point=np.array(c["point"], dtype=float),
                                        normal=np.array(c["normal"], dtype=float), speed=float(c["speed"]),
                                        impulse=float(c["impulse"][0])))
        self._touching = set(best)

    def point_jacobian(self, body: int, point_world: np.ndarray) -> np.ndarray:
        """3 x nv Jacobian of the world velocity of a point fixed on body ``body``."""
        jac = np.zeros((6, self.nv))
        i = body
        while i >= 0:
            b = self.bodies[i]
            if b.ds.stop > b.ds.start:
                jac[:, b.ds] = self.S[i]
            i = b.parent
        return jac[3:] - skew(point_world) @ jac[:3]

    def _ground_contacts(self, u: np.ndarray, dt: float) -> list[dict]:
        if self.ground_height is None or not self.collidable:
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
                vn0 = float(jp[2] @ self.u)
                targets = contact_targets(float(low[k] - hz), float(jp[2] @ u), vn0, self.restitution,
                                          self.restitution_threshold, dt, self.erp, self.contact_slop)
                if targets is None:
                    continue  # will not reach the ground this step
                out.append(dict(link=self.bodies[i].link, body="ground", point=p, normal=n,
                                depth=float(hz - low[k]), target=targets[0], push=targets[1],
                                friction=self.friction, speed=max(0.0, -vn0), system=self,
                                jacobian=(n @ jp, t1 @ jp, t2 @ jp)))
        return out

    # -- output ----------------------------------------------------------------------------------------

    def link_poses(self) -> dict[str, np.ndarray]:
        """{link name: 4x4 world transform} at the current state."""
        return {b.link: self.frames[i].copy() for i, b in enumerate(self.bodies)}

    def link_positions_quaternions(self) -> tuple[np.ndarray, np.ndarray]:
        """(L, 3) positions and (L, 4) quaternions w, x, y, z of the links in ``link_names`` order."""
        from ..base.spatial import matrix_to_quat
        frames = np.array(self.frames).reshape(-1, 4, 4)
        return frames[:, :3, 3].copy(), matrix_to_quat(frames[:, :3, :3]).reshape(-1, 4)

    def link_velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """(L, 3) linear velocities of the link frame origins and (L, 3) angular velocities (world)."""
        lin = np.array([v[3:] + cross3(v[:3], f[:3, 3])
                        for v, f in zip(self.vel, self.frames)]).reshape(-1, 3)
        ang = np.array([v[:3] for v in self.vel]).reshape(-1, 3)
        return lin, ang

