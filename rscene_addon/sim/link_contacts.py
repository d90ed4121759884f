"""Contacts between the links of an ``ArticulatedSystem`` and the geoms of a rigid ``World`` (two-way).

    env = WorldContacts(world)
    system = ArticulatedSystem(robot, environment=env)
    system.step(); world.step()          # the robot's contact impulses also act on the world's bodies

Every step the system asks ``contacts(system, u, dt)`` for contact rows: the links' collision sample points
(``link_points.contact_points``: box and cylinder vertices, sphere and capsule centres with their radius) are
tested against every world geom that passes the group/mask rule (``sdf.geom_distance``: planes, height
fields, spheres, boxes, capsules, cylinders, convex hulls), and the corners and centres of the world's
boxes, spheres, capsules and hulls against the links' primitive shapes (so a box corner poking into a flat
link face is seen too). A contact whose other side is a dynamic body carries that body's inverse mass; the
system's constraint solver then exchanges impulses with it and ``apply`` writes the body's new velocity
back into the world's state (waking it). Static and kinematic geoms have infinite mass (a kinematic body's
velocity still moves the contact).

Materials and solver settings are the world's, as for its own contacts: friction, restitution and the
restitution threshold come from the material table entry between the geom's material and ``material``
(default: "default"); penetration deeper than ``SLOP`` is removed at the world's ``erp`` per step, by
pseudo velocities (split impulse) that change the robot's positions, never its velocities, except against
dynamic bodies: the world integrates those after the robots' solve, with its other contacts, so there the
correction is a velocity target the world's solver can weigh, no faster than ``MAX_PUSH_SPEED``, up to
``DEEP``; deeper, both sides are moved by split impulse (``shift``).

Only the public model and state arrays of the World are used (``model.geom_*``, ``model.body_*``,
``model.solver``, ``state.position/quaternion/linear_velocity/angular_velocity/sleeping``, ``World.wake``,
``World.geom_poses``).
"""
from __future__ import annotations

import numpy as np

from .geometry import BOX, CAPSULE, CONVEX, CYLINDER, HEIGHTFIELD, PLANE, SPHERE
from .mathutil import cross, quat_integrate, quat_to_matrix, tangent_basis
from .physics_model import ALL_GROUPS, DYNAMIC, FRICTION, RESTITUTION, RESTITUTION_THRESHOLD
from .narrowphase import Frames
from .sdf import geom_distance
from .spatial_algebra import cross3

__all__ = ["DEEP", "MAX_PUSH_SPEED", "SLOP", "WorldContacts", "contact_targets", "world_erp"]

MARGIN = 0.02  # speculative contact distance (m), plus what the velocities cover in one step

_LINK_KINDS = {"sphere": SPHERE, "box": BOX, "capsule": CAPSULE, "cylinder": CYLINDER}


class _LinkShapes:
    """The primitive collision shapes of one robot link, laid out like a sim ``Model``'s geom arrays so that
    ``sdf.geom_distance`` measures distances to them (sizes: sphere r; box half extents; capsule and
    cylinder r, half length)."""

    def __init__(self, link):
        types, sizes, origins = [], [], []
        for shape in link.collisions:
            g = shape.geometry
            kind = _LINK_KINDS.get(g.kind)
            if kind is None:
                continue
            if kind == SPHERE:
                size = (float(g.radius), 0.0, 0.0)
            elif kind == BOX:
                size = tuple(0.5 * float(s) for s in g.size)
            else:
                size = (float(g.radius), 0.5 * float(g.length), 0.0)
            types.append(kind)
            sizes.append(size)
            origins.append(np.asarray(shape.origin, dtype=float))
        self.geom_type = np.array(types, dtype=np.int64)
        self.geom_size = np.array(sizes, dtype=float).reshape(-1, 3)
        self.geom_poly = [None] * len(types)
        self.geom_hfield = [None] * len(types)
        self.origins = origins
        self.radius = np.array([_bounding_radius(t, sz) for t, sz in zip(types, self.geom_size)])

    def __len__(self):
        return len(self.geom_type)

    def frames(self, link_frame: np.ndarray) -> Frames:
        pos = np.array([(link_frame @ o)[:3, 3] for o in self.origins]).reshape(-1, 3)
        rot = np.array([(link_frame @ o)[:3, :3] for o in self.origins]).reshape(-1, 3, 3)
        return Frames(self, pos, rot)


def _bounding_radius(kind: int, size: np.ndarray) -> float:
    """Radius of a sphere about a primitive's centre that holds it."""
    if kind == BOX:
        return float(np.linalg.norm(size))
    if kind == CAPSULE:
        return float(size[0] + size[1])
    if kind == CYLINDER:
        return float(np.hypot(size[0], size[1]))
    return float(size[0])


def _geom_points(m, fr, g: int) -> np.ndarray:
    """Sample points (K, 4: x, y, z, radius) of a world geom for the reverse test: box and hull corners,
    sphere centres and capsule end centres with their radius; other kinds give none."""
    t = int(m.geom_type[g])
    c, rot = fr.pos[g], fr.rot[g]
    if t == SPHERE:
        return np.array([[*c, m.geom_size[g, 0]]])
    if t == CAPSULE:
        r, hh = m.geom_size[g, 0], m.geom_size[g, 1]
        return np.array([[*(c + s * hh * rot[:, 2]), r] for s in (-1.0, 1.0)])
    if t in (BOX, CONVEX) and m.geom_poly[g] is not None:
        v = m.geom_poly[g].vertices @ rot.T + c
        return np.column_stack((v, np.zeros(len(v))))
    if t == BOX:
        h = m.geom_size[g]
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
        return np.column_stack((corners @ rot.T + c, np.zeros(8)))
    return np.zeros((0, 4))


def contact_targets(gap: float, vn: float, vn0: float, restitution: float, threshold: float, dt: float,
                    erp: float, slop: float):
    """(velocity target, position-correction target) of a contact's normal row, as the rigid world sets them,
    or None when the contact will not close this step. ``gap``: separation (negative: penetration);
    ``vn``/``vn0``: normal relative velocity after this step's forces / at the step's start (negative:
    approaching). A speculative contact may close its gap; a contact hit faster than ``threshold`` bounces
    back at ``restitution`` times its approach speed; penetration beyond ``slop`` is removed at ``erp``
    per step by pseudo velocities (split impulse), which move positions without adding energy."""
    if gap > 0 and gap + dt * vn > 0:
        return None
    target = -gap / dt if gap > 0 else 0.0
    if restitution > 0 and -vn0 > threshold and gap + min(vn, vn0) * dt <= 0:
        target = max(target, -restitution * vn0)
    return target, erp * max(-gap - slop, 0.0) / dt


def world_erp(world) -> float:
    """The world's split-impulse ERP (``erp`` above 0.8 is capped, as the world does)."""
    return min(max(float(world.model.solver.erp), 0.0), 0.8)


SLOP = 1e-4  # penetration (m) left uncorrected, as in the rigid world's solver
# The fastest a penetration against a dynamic body is corrected (m/s): there the correction is real velocity
# (see the module's docstring), and erp x depth / dt grows without bound (a crate made overlapping a robot,
# 1.5 m deep at dt 1/480, left at 74 m/s). Box2D v3 caps its push-out the same way, at 3 m/s
# (b2WorldDef.contactPushMaxVelocity / contactPushoutVelocity).
MAX_PUSH_SPEED = 3.0
# Deeper than this (m), a contact with a dynamic body is corrected by split impulse on both sides (the body is
# moved, not sped up), as Bullet corrects contacts deeper than its splitImpulsePenetrationThreshold (4 cm):
# links lying inside a body push it along opposite faces, velocity targets that cannot all hold, and their
# impulses (and the friction those allow) grew sweep after sweep (a 1 m box around Laikago's legs was thrown
# at 15 m/s, the robot at 4 m/s).
DEEP = 0.04


class WorldContacts:
    """Link-world contacts for the systems stepping beside ``world``. ``group``/``mask``: the robot's
    collision group and mask (RaiSim's rule: each side's group is in the other's mask; None: each link's
    ``collision_group``/``collision_mask`` of the system); ``collidable`` False turns every contact off.
    ``erp`` (None: the world's) and ``slop``: split-impulse position correction."""

    def __init__(self, world, *, group: int | None = None, mask: int | None = None, material: str = "default",
                 collidable: bool = True, erp: float | None = None, slop: float = SLOP):
        self.world = world
        m = world.model
        self.group = None if group is None else np.uint64(int(group) & ALL_GROUPS)
        self.mask = None if mask is None else np.uint64(int(mask) & ALL_GROUPS)
        self.collidable = collidable
        self.erp = world_erp(world) if erp is None else float(erp)
        self.slop = float(slop)
        names = list(m.material_names)
        self.material_index = names.index(material) if material in names else (
            names.index("default") if "default" in names else -1)
        self._shapes: dict = {}  # system -> [_LinkShapes per body]
        self._filters: dict = {}  # system -> (its group/mask/collidable key, (L, G) allowed geoms)

    # -- contact rows --------------------------------------------------------------------------------------

    def _frames(self) -> Frames:
        return Frames(self.world.model, *self.world.geom_poses())

    def properties(self, other: int) -> tuple[float, float, float] | None:
        """(friction, restitution, restitution threshold) between this robot's material and material index
        ``other`` of the world's table; None when either is not in it."""
        m = self.world.model
        if self.material_index < 0 or other < 0:
            return None
        row = m.material_table[other, self.material_index]
        return float(row[FRICTION]), float(row[RESTITUTION]), float(row[RESTITUTION_THRESHOLD])

    def _allowed(self, system) -> np.ndarray:
        """(L, G) bool: which world geoms each link may touch (group/mask rule, ``collidable``)."""
        m = self.world.model
        nl = len(system.bodies)
        group = system.collision_group if self.group is None else np.full(nl, self.group, dtype=np.uint64)
        mask = system.collision_mask if self.mask is None else np.full(nl, self.mask, dtype=np.uint64)
        key = (group.tobytes(), mask.tobytes(), self.collidable and system.collidable)
        cached = self._filters.get(system)
        if cached is not None and cached[0] == key:
            return cached[1]
        ok = (((m.geom_group[None, :] & mask[:, None]) != 0)
              & ((group[:, None] & m.geom_mask[None, :]) != 0)) & key[2]
        self._filters[system] = (key, ok)
        return ok

    def contacts(self, system, u: np.ndarray, dt: float, skip=()) -> list[dict]:
        """Contact rows of ``system``'s links (at its current kinematics; ``u``: its velocity after this
        step's forces, ``system.u``: at the step's start) with the world's geoms (but those in ``skip``: the
        compiled backend finds its plane contacts itself)."""
        allowed = self._allowed(system)
        if len(skip):
            allowed = allowed.copy()
            allowed[:, skip] = False
        if not allowed.any():
            return []
        m, s = self.world.model, self.world.state
        fr = self._frames()
        shapes = self._shapes.get(system)
        if shapes is None:
            shapes = [_LinkShapes(system.robot.links[b.link]) for b in system.bodies]
            self._shapes[system] = shapes
        reach = MARGIN + 2.0 * dt * (float(np.abs(u).max(initial=0.0)) + float(
            np.abs(s.linear_velocity).max(initial=0.0)))
        out: list[dict] = []
        gtype = m.geom_type
        for i, pts in enumerate(system._contact_local):
            frame = system.frames[i]
            link_shapes = shapes[i]
            geoms = np.nonzero(allowed[i])[0]
            if (not len(pts) and not len(link_shapes)) or not len(geoms):
                continue
            world_pts = pts[:, :3] @ frame[:3, :3].T + frame[:3, 3]
            if len(pts):
                centre = world_pts.mean(axis=0)
                extent = float(np.max(np.linalg.norm(world_pts - centre, axis=1) + pts[:, 3]))
            else:
                centre = frame[:3, 3]
                extent = 0.0
            if len(link_shapes):
                sf = link_shapes.frames(frame)
                shape_reach = np.linalg.norm(sf.pos - centre, axis=1) + link_shapes.radius
                extent = max(extent, float(np.max(shape_reach)))
            unbounded = (gtype[geoms] == PLANE) | (gtype[geoms] == HEIGHTFIELD)
            near = unbounded | (np.linalg.norm(fr.pos[geoms] - centre, axis=1)
                                < extent + m.geom_radius[geoms] + _size_radius(m, geoms) + reach)
            for g in geoms[near]:
                g = int(g)
                if len(pts):
                    dist, normal, valid = geom_distance(m, fr, g, world_pts)
                    gap = dist - pts[:, 3]
                    for k in np.nonzero(valid & (gap < reach))[0]:
                        p = world_pts[k] - pts[k, 3] * normal[k]
                        self._add(out, system, i, g, p, normal[k], float(gap[k]), u, dt)
                if len(link_shapes) and gtype[g] not in (PLANE, HEIGHTFIELD):
                    gp = _geom_points(m, fr, g)
                    for sh in range(len(link_shapes)):
                        if not len(gp):
                            break
                        dist, normal, _ = geom_distance(link_shapes, sf, sh, gp[:, :3])
                        gap = dist - gp[:, 3]
                        for k in np.nonzero(gap < reach)[0]:
                            # normal[k] points out of the link; the robot touches at its surface point,
                            # the world body at its own (a sphere's or capsule cap's) surface point
                            p_link = gp[k, :3] - dist[k] * normal[k]
                            p_world = gp[k, :3] - gp[k, 3] * normal[k]
                            self._add(out, system, i, g, p_link, -normal[k], float(gap[k]), u, dt,
                                      world_point=p_world)
        return out

    def _add(self, out, system, i, g, p, n, gap, u, dt, world_point=None):
        """One contact row: robot point ``p`` on link ``i``, normal ``n`` from geom ``g`` towards the link,
        gap (negative: penetration). ``world_point``: the touching point on the geom's side (default p)."""
        m, s = self.world.model, self.world.state
        b = int(m.geom_body[g])
        jp = system.point_jacobian(i, p)
        q = p if world_point is None else world_point
        r = q - s.position[b]
        v_body = s.linear_velocity[b] + cross3(s.angular_velocity[b], r)
        vn = float(n @ (jp @ u) - n @ v_body)
        vn0 = float(n @ (jp @ system.u) - n @ v_body)
        props = self.properties(int(m.geom_material[g]))
        friction, restitution, threshold = props if props is not None else (
            system.friction, system.restitution, system.restitution_threshold)
        targets = contact_targets(gap, vn, vn0, restitution, threshold, dt, self.erp, self.slop)
        if targets is None:
            return  # will not touch this step
        t1, t2 = tangent_basis(n)
        rows = np.array([n, t1, t2])
        contact = {"link": system.bodies[i].link, "body": m.body_name[b], "point": p, "normal": n,
                   "depth": -gap, "target": targets[0], "push": targets[1], "friction": friction,
                   "speed": max(0.0, -vn0), "jacobian": (n @ jp, t1 @ jp, t2 @ jp), "system": system,
                   # the other side: velocity of its point along the rows = body_jac @ (v, w)
                   "body_jac": np.hstack((rows, cross(r, rows))), "body_index": b, "body_inv": None,
                   "environment": self}
        # a sleeping body under a robot point that is not moving stays asleep and holds like a static one
        # (waking it every step for the robot's weight would keep it awake forever)
        quiet = s.sleeping[b] and np.linalg.norm(jp @ system.u) < m.solver.sleep_linear
        if m.body_mode[b] == DYNAMIC and not quiet:
            rot = quat_to_matrix(s.quaternion[b])
            inv = np.zeros((6, 6))
            inv[:3, :3] = m.body_inv_mass[b] * np.eye(3)
            inv[3:, 3:] = rot @ m.body_inv_inertia[b] @ rot.T
            contact["body_inv"] = inv
            # the world's own solver never sees this contact and integrates the body after it: a position
            # correction must reach the body as velocity, so that the world weighs it against the body's
            # other contacts (a shifted crate would sink into the floor under it); only a deep overlap moves
            # the body itself (``shift``)
            if 0 < targets[1] and -gap <= DEEP:
                contact["target"], contact["push"] = max(targets[0], min(targets[1], MAX_PUSH_SPEED)), 0.0
        out.append(contact)

    # -- the other side ------------------------------------------------------------------------------------

    def body_velocity(self, b: int) -> np.ndarray:
        s = self.world.state
        return np.concatenate((s.linear_velocity[b], s.angular_velocity[b]))

    def shift(self, pushes: dict, dt: float) -> None:
        """Move dynamic bodies (index -> (6,) pseudo velocity: linear, angular) by ``dt`` of it: the split
        impulse of contacts deeper than ``DEEP``, which changes positions, never velocities."""
        s = self.world.state
        for b, p in pushes.items():
            if not p.any():
                continue
            s.position[b] += p[:3] * dt
            s.quaternion[b] = quat_integrate(s.quaternion[b][None], p[None, 3:], dt)[0]
            if s.sleeping[b]:
                self.world.wake(int(b))

    def apply(self, velocities: dict) -> None:
        """Write the new (6,) velocities of dynamic bodies (index -> linear, angular) into the world."""
        s = self.world.state
        for b, v in velocities.items():
            if np.array_equal(v[:3], s.linear_velocity[b]) and np.array_equal(v[3:], s.angular_velocity[b]):
                continue
            s.linear_velocity[b] = v[:3]
            s.angular_velocity[b] = v[3:]
            if s.sleeping[b]:
                self.world.wake(int(b))


def _size_radius(m, geoms: np.ndarray) -> np.ndarray:
    """A bounding radius of primitive geoms from their sizes (``geom_radius`` may be 0 for some kinds)."""
    size = m.geom_size[geoms]
    return np.linalg.norm(size, axis=1)
