"""Contacts between robot links: self-collision inside an ``ArticulatedSystem`` and contacts between systems.

    rows = link_pair_contacts([robot_a, robot_b], {robot_a: u_a, robot_b: u_b}, dt)

``multibody_solver.step_systems`` solves these rows together with every system's joint limits and world
contacts, so impulses between two robots change both robots' velocities.

Which link pairs are tested: links of two systems when each one's collision group is in the other's mask
(RaiSim's rule); links of one system by the same rule, except pairs that move as one rigid body or sit
across a joint (MuJoCo's and RaiSim's default: a link never collides with its parent; links welded by fixed
joints count as one body) and pairs passed to ``ArticulatedSystem.ignore_collision_between``.
``self_collision`` False turns a system's own pairs off, ``collidable`` False every pair of it.

Narrow phase, as for link-world contacts: each link's sample points (``link_points.contact_points``: box and
cylinder vertices, sphere and capsule centres with their radius) against the other link's primitive shapes
(signed distances, ``sdf.geom_distance``), both ways, and capsule axes against capsule axes (closest points
of the two segments, so crossing capsules touch in their middles); a point found twice is kept once. Mesh
links have sample points but no shape, so two mesh links do not touch each other.

A row's normal points from the second link towards the first; ``jacobian`` holds the first system's rows
(normal, two tangents) and ``other_jacobian`` the second system's (relative velocity = J1 u1 - J2 u2); a
self contact has the difference of the two points' Jacobians as ``jacobian`` and no ``other_jacobian``.
Materials: with ``WorldContacts`` environments of one world, the world's material table entry between the
two systems' materials (friction, restitution, restitution threshold); otherwise the mean of the two
systems' own values. Penetration beyond the first system's ``contact_slop`` is removed at its ``erp``.
"""
from __future__ import annotations

import weakref

import numpy as np

from .geometry import BOX
from .link_contacts import MARGIN, _LinkShapes, contact_targets
from .mathutil import tangent_basis
from .sdf import geom_distance
from .spatial_algebra import cross3

__all__ = ["link_pair_contacts", "self_collision_pairs"]

DUPLICATE = 1e-3  # m: two contacts of one link pair closer than this (with similar normals) are one
FACE_TIE = 1e-9  # m: a point this close to the depth of several box faces sits on their edge or corner
_CAPSULE = "capsule"

_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Geometry:
    """One system's link shapes, capsule axes and bounding spheres (link frames), built once."""

    def __init__(self, system):
        self.shapes = [_LinkShapes(system.robot.links[b.link]) for b in system.bodies]
        self.capsules = []  # per link: [(origin 4x4, radius, half length)]
        centres, radii = [], []
        for b, shapes, pts in zip(system.bodies, self.shapes, system._contact_local):
            link = system.robot.links[b.link]
            self.capsules.append([(np.asarray(s.origin, float), float(s.geometry.radius),
                                   0.5 * float(s.geometry.length))
                                  for s in link.collisions if s.geometry.kind == _CAPSULE])
            xyz = [p[:3] for p in pts] + [o[:3, 3] for o in shapes.origins]
            if not xyz:
                centres.append(np.zeros(3))
                radii.append(-1.0)  # nothing to collide with
                continue
            c = np.mean(xyz, axis=0)
            r = max([float(np.linalg.norm(p[:3] - c) + p[3]) for p in pts]
                    + [float(np.linalg.norm(o[:3, 3] - c) + rad)
                       for o, rad in zip(shapes.origins, shapes.radius)])
            centres.append(c)
            radii.append(r)
        self.centres = np.array(centres).reshape(-1, 3)
        self.radii = np.array(radii)


def _geometry(system) -> _Geometry:
    geo = _cache.get(system)
    if geo is None:
        geo = _cache[system] = _Geometry(system)
    return geo


def self_collision_pairs(system) -> np.ndarray:
    """(L, L) bool, symmetric: which pairs of ``system``'s links may touch each other (adjacency, explicit
    exclusions, collision group/mask, ``self_collision`` and ``collidable``); a link and its parent touch only when
    the system's ``collide_with_parent`` is set (RaiSim's ``doNotCollideWithParent=false``)."""
    n = len(system.bodies)
    if not (system.self_collision and system.collidable):
        return np.zeros((n, n), dtype=bool)
    # rigid[i]: the body link i moves with (fixed joints weld a link to its parent)
    rigid = np.arange(n)
    for i, b in enumerate(system.bodies):
        if b.kind == "fixed" and b.parent >= 0:
            rigid[i] = rigid[b.parent]
    parent = np.array([rigid[system.bodies[r].parent] if system.bodies[r].parent >= 0 else -1 for r in rigid])
    ra, rb = rigid[:, None], rigid[None, :]
    adjacent = ra == rb
    if not getattr(system, "collide_with_parent", False):  # RaiSim's doNotCollideWithParent (its default)
        adjacent = adjacent | (parent[:, None] == rb) | (parent[None, :] == ra)
    ok = _filter(system.collision_group, system.collision_mask, system.collision_group, system.collision_mask)
    ok &= ~adjacent & ~np.eye(n, dtype=bool)
    for i, j in system.ignored_pairs:
        ok[i, j] = ok[j, i] = False
    return ok


def _filter(group_a, mask_a, group_b, mask_b) -> np.ndarray:
    """(La, Lb) RaiSim's rule: each link's group is in the other's mask."""
    return ((group_a[:, None] & mask_b[None, :]) != 0) & ((group_b[None, :] & mask_a[:, None]) != 0)


def _world_spheres(system, geo: _Geometry):
    frames = np.array(system.frames).reshape(-1, 4, 4)
    return np.einsum("lij,lj->li", frames[:, :3, :3], geo.centres) + frames[:, :3, 3]


def _sphere_speeds(system, u: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """(L,) the fastest any point of each link's bounding sphere moves at joint velocity ``u``."""
    out = np.zeros(len(system.bodies))
    vel = [None] * len(system.bodies)
    for i, b in enumerate(system.bodies):
        v = np.zeros(6) if b.parent < 0 else vel[b.parent]
        vel[i] = v + system.S[i] @ u[b.ds]
        w, v0 = vel[i][:3], vel[i][3:]  # Plücker: v0 is the velocity of the point at the world origin
        out[i] = np.linalg.norm(v0 + cross3(w, centres[i])) + np.linalg.norm(w) * max(radii[i], 0.0)
    return out


def link_pair_contacts(systems, u_free: dict, dt: float) -> list[dict]:
    """Contact rows between links of ``systems`` (each system with itself and with every later one) at their
    current kinematics; ``u_free[system]``: its velocity after this step's forces."""
    out: list[dict] = []
    live = [s for s in systems if s.collidable and len(s.bodies)]
    geos = {s: _geometry(s) for s in live}
    centres = {s: _world_spheres(s, geos[s]) for s in live}
    speed = {s: _sphere_speeds(s, u_free[s], centres[s], geos[s].radii) for s in live}
    for ia, a in enumerate(live):
        for b in live[ia:]:
            if a is b:
                if not a.self_collision:
                    continue
                allowed = np.triu(a.self_pairs())
            else:
                allowed = _filter(a.collision_group, a.collision_mask, b.collision_group, b.collision_mask)
            ga, gb = geos[a], geos[b]
            # speculative reach: the margin plus what both links can cover in a step (twice, to be safe)
            reach = MARGIN + 2.0 * dt * (speed[a][:, None] + speed[b][None, :])
            dist = np.linalg.norm(centres[a][:, None, :] - centres[b][None, :, :], axis=2)
            near = allowed & (ga.radii[:, None] >= 0) & (gb.radii[None, :] >= 0) \
                & (dist < ga.radii[:, None] + gb.radii[None, :] + reach)
            if not near.any():
                continue
            props = _properties(a, b)
            for i, j in zip(*np.nonzero(near)):
                _link_link(out, a, int(i), b, int(j), ga, gb, float(reach[i, j]), u_free, dt, props)
    return out


def _properties(a, b) -> tuple[float, float, float]:
    """(friction, restitution, restitution threshold) between two systems' links."""
    ea, eb = a.environment, b.environment
    world_a, world_b = getattr(ea, "world", None), getattr(eb, "world", None)
    if world_a is not None and world_a is world_b:
        ia, ib = ea.material_index, eb.material_index
        if ia >= 0 and ib >= 0:
            row = world_a.model.material_table[ia, ib]
            return float(row[0]), float(row[1]), float(row[2])
    return (0.5 * (a.friction + b.friction), 0.5 * (a.restitution + b.restitution),
            0.5 * (a.restitution_threshold + b.restitution_threshold))


def _link_link(out, a, i, b, j, ga: _Geometry, gb: _Geometry, reach, u_free, dt, props) -> None:
    fa, fb = a.frames[i], b.frames[j]
    found: list = []  # (point on a, point on b, normal b -> a, gap)
    # a's sample points against b's shapes (normal out of b, towards a), then b's against a's, whose
    # normals out of a are flipped so that every entry reads "b -> a"
    for (sample, fp), (shapes, fs), centre, flip in (
            ((a._contact_local[i], fa), (gb.shapes[j], fb), fa[:3, :3] @ ga.centres[i] + fa[:3, 3], False),
            ((b._contact_local[j], fb), (ga.shapes[i], fa), fb[:3, :3] @ gb.centres[j] + fb[:3, 3], True)):
        for on_points, on_shape, normal, gap in _points_against_shapes(sample, fp, shapes, fs, centre, reach):
            found.append((on_shape, on_points, -normal, gap) if flip else (on_points, on_shape, normal, gap))
    # capsule axes against capsule axes
    for oa, ra, ha in ga.capsules[i]:
        ta = fa @ oa
        for ob, rb, hb in gb.capsules[j]:
            tb = fb @ ob
            ca, cb = _segment_closest(ta[:3, 3], ta[:3, 2] * ha, tb[:3, 3], tb[:3, 2] * hb)
            d = ca - cb
            length = float(np.linalg.norm(d))
            if length < 1e-12 or length - ra - rb >= reach:
                continue
            n = d / length
            found.append((ca - ra * n, cb + rb * n, n, length - ra - rb))
    kept: list = []
    for pa, pb, n, gap in found:
        if any(np.linalg.norm(pa - qa) < DUPLICATE and n @ qn > 0.9 for qa, _, qn, _ in kept):
            continue
        kept.append((pa, pb, n, gap))
    for pa, pb, n, gap in kept:
        _add(out, a, i, b, j, pa, pb, n, gap, u_free, dt, props)


def _points_against_shapes(sample: np.ndarray, sample_frame: np.ndarray, shapes, shape_frame: np.ndarray,
                           towards: np.ndarray, reach: float):
    """Yield (point on the sampled link, point on the shape, normal out of the shape, gap) for each sample
    point (local x, y, z, radius rows of ``sample``) within ``reach`` of one of ``shapes``."""
    if not len(sample) or not len(shapes):
        return
    pts = sample[:, :3] @ sample_frame[:3, :3].T + sample_frame[:3, 3]
    frames = shapes.frames(shape_frame)
    for sh in range(len(shapes)):
        dist, normal, _ = geom_distance(shapes, frames, sh, pts)
        normal = _face_ties(shapes, frames, sh, pts, normal, towards)
        gap = dist - sample[:, 3]
        for k in np.nonzero(gap < reach)[0]:
            yield pts[k] - sample[k, 3] * normal[k], pts[k] - dist[k] * normal[k], normal[k], float(gap[k])


def _face_ties(shapes, frames, sh: int, pts: np.ndarray, normal: np.ndarray,
               towards: np.ndarray) -> np.ndarray:
    """Box normals of points on (or in) a box at several faces' depth at once, such as a corner resting on
    a corner of an equal box, where the signed distance picks a face by round-off: the face among the tied
    ones that looks most towards the other link's centre ``towards``."""
    if shapes.geom_type[sh] != BOX:
        return normal
    c, rot, h = frames.pos[sh], frames.rot[sh], shapes.geom_size[sh]
    local = (pts - c) @ rot
    q = np.abs(local) - h
    qmax = q.max(axis=1)
    tied = (q >= qmax[:, None] - FACE_TIE) & (qmax[:, None] <= FACE_TIE)
    several = tied.sum(axis=1) > 1
    if not several.any():
        return normal
    normal = normal.copy()
    look = rot.T @ (towards - c)
    for k in np.nonzero(several)[0]:
        faces = np.nonzero(tied[k])[0]
        signs = np.where(local[k, faces] != 0, np.sign(local[k, faces]), np.sign(look[faces]))
        best = faces[np.argmax(signs * look[faces] / h[faces])]
        n = np.zeros(3)
        n[best] = np.sign(local[k, best]) if local[k, best] != 0 else np.sign(look[best]) or 1.0
        normal[k] = rot @ n
    return normal


def _segment_closest(ca, ha, cb, hb):
    """Closest points of segments ca +- ha and cb +- hb (ha, hb: half axis vectors)."""
    d1, d2, r = 2.0 * ha, 2.0 * hb, (ca - ha) - (cb - hb)
    a, e, f = float(d1 @ d1), float(d2 @ d2), float(d2 @ r)
    c, bb = float(d1 @ r), float(d1 @ d2)
    if a < 1e-18 and e < 1e-18:
        return ca - ha, cb - hb
    if a < 1e-18:
        s, t = 0.0, min(max(f / e, 0.0), 1.0)
    elif e < 1e-18:
        s, t = min(max(-c / a, 0.0), 1.0), 0.0
    else:
        denom = a * e - bb * bb
        s = min(max((bb * f - c * e) / denom, 0.0), 1.0) if denom > 1e-18 else 0.5
        t = (bb * s + f) / e
        if t < 0.0:
            t, s = 0.0, min(max(-c / a, 0.0), 1.0)
        elif t > 1.0:
            t, s = 1.0, min(max((bb - c) / a, 0.0), 1.0)
    return ca - ha + s * d1, cb - hb + t * d2


def _add(out, a, i, b, j, pa, pb, n, gap, u_free, dt, props) -> None:
    # both links take the impulse at one point, halfway between their surface points, as the rigid world
    # does: a friction impulse at two points a gap apart would be a torque out of nothing
    p = 0.5 * (pa + pb)
    ja = a.point_jacobian(i, p)
    jb = b.point_jacobian(j, p)
    same = a is b
    if same:
        jrel = ja - jb
        vn = float(n @ (jrel @ u_free[a]))
        vn0 = float(n @ (jrel @ a.u))
    else:
        vn = float(n @ (ja @ u_free[a]) - n @ (jb @ u_free[b]))
        vn0 = float(n @ (ja @ a.u) - n @ (jb @ b.u))
    friction, restitution, threshold = props
    targets = contact_targets(gap, vn, vn0, restitution, threshold, dt, a.erp, a.contact_slop)
    if targets is None:
        return  # will not touch this step
    t1, t2 = tangent_basis(n)
    rows = np.array([n, t1, t2])
    contact = {"link": a.bodies[i].link, "body": f"{b.name}/{b.bodies[j].link}", "point": p,
               "normal": n, "depth": -gap, "target": targets[0], "push": targets[1], "friction": friction,
               "speed": max(0.0, -vn0), "system": a, "other_system": b, "other_link": b.bodies[j].link}
    if same:
        contact["jacobian"] = tuple(rows @ jrel)
    else:
        contact["jacobian"] = tuple(rows @ ja)
        contact["other_jacobian"] = rows @ jb
    out.append(contact)
