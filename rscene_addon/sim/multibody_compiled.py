"""The numba backend's ``step_systems``: the same step as ``multibody_solver`` (predict, joint limits, ground,
world-plane, self and robot-robot contacts, one joint-space solve, integration), each part one compiled call
(``kernels.robots``) on flat arrays built once per system (``RobotArrays``).

What stays numpy (the reference, and the route for what the kernels do not cover): contacts with non-plane
world geoms (``WorldContacts.contacts`` on them; their rows join the compiled solve), and a whole step whose
rows touch a dynamic world body or a spinning plane, or whose mass matrix is not positive definite
(``multibody_solver.step_systems``'s own solve, which handles them).
"""
from __future__ import annotations

import operator

import numpy as np

from .geometry import PLANE
from .link_contacts import MARGIN
from .link_pairs import _filter, _geometry, _properties
from .multibody_solver import TOLERANCE, contact_key, warm_impulses
from . import robot_pack
from .physics_model import DYNAMIC

__all__ = ["RobotArrays", "contact_dicts", "step_compiled", "update_kinematics"]

_KIND = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 2, "spherical": 3, "floating": 4, "planar": 5}
_SHAPE = {"sphere": 0, "box": 1, "capsule": 2, "cylinder": 3}


class RobotArrays:
    """One system's model as the kernels take it (built once; the robot's tree and shapes never change)."""

    def __init__(self, system):
        from ..robots.kinematics import plane_axes
        bodies = system.bodies
        n = len(bodies)
        self.parent = np.array([b.parent for b in bodies], np.int64)
        self.kind = np.array([_KIND[b.kind] for b in bodies], np.int64)
        self.gs0 = np.array([b.gs.start for b in bodies], np.int64)
        self.ds0 = np.array([b.ds.start for b in bodies], np.int64)
        self.nd = np.array([b.ds.stop - b.ds.start for b in bodies], np.int64)
        self.origin = np.ascontiguousarray([b.origin for b in bodies], dtype=float).reshape(n, 4, 4)
        self.offset = np.ascontiguousarray([b.offset for b in bodies], dtype=float).reshape(n, 4, 4)
        self.axis = np.ascontiguousarray([b.axis for b in bodies], dtype=float).reshape(n, 3)
        pu, pv = np.zeros((n, 3)), np.zeros((n, 3))
        for i, b in enumerate(bodies):
            if b.kind == "planar":
                pu[i], pv[i] = plane_axes(b.axis)
        self.pu, self.pv = pu, pv
        self.mass = np.array([b.mass for b in bodies], dtype=float)
        self.com_local = np.ascontiguousarray([b.com_local for b in bodies], dtype=float).reshape(n, 3)
        self.inertia_local = np.ascontiguousarray([b.inertia_local for b in bodies], dtype=float).reshape(n, 3, 3)
        # collision: sample points and primitive shapes per link, bounding spheres (link_pairs._Geometry)
        pts = system._contact_local
        self.p0 = np.cumsum([0] + [len(p) for p in pts]).astype(np.int64)
        self.pts = np.ascontiguousarray(np.vstack([p.reshape(-1, 4) for p in pts]) if n else np.zeros((0, 4)))
        geo = _geometry(system)
        self.s0 = np.cumsum([0] + [len(s) for s in geo.shapes]).astype(np.int64)
        st, ss, so = [], [], []
        for shapes in geo.shapes:
            st += [int(t) for t in shapes.geom_type]
            ss += [row for row in shapes.geom_size]
            so += list(shapes.origins)
        # link_contacts' shape kinds are sim.geometry's SPHERE, BOX, CAPSULE, CYLINDER = 0..3: the kernels' own
        self.st = np.array(st, np.int64)
        self.ss = np.ascontiguousarray(ss, dtype=float).reshape(-1, 3)
        self.so = np.ascontiguousarray(so, dtype=float).reshape(-1, 4, 4)
        self.bc = np.ascontiguousarray(geo.centres, dtype=float)
        self.br = np.ascontiguousarray(geo.radii, dtype=float)
        self.has_sphere = bool((self.br >= 0).any())
        self._limits = (None, None, None)

    def limits(self, system):
        """(gc index, dof index) arrays of the limited joints (``system._limited`` may grow)."""
        if self._limits[0] != len(system._limited):
            lim = np.array(system._limited, np.int64).reshape(-1, 2)
            self._limits = (len(system._limited), lim[:, 0].copy(), lim[:, 1].copy())
        return self._limits[1], self._limits[2]


def arrays(system) -> RobotArrays:
    a = system.__dict__.get("_arrays")
    if a is None:
        a = system._arrays = RobotArrays(system)
    return a


def update_kinematics(system, kern) -> None:
    """``ArticulatedSystem._update_kinematics`` in one compiled call."""
    a = arrays(system)
    frames, S, vel, com, inertia = kern.kinematics(system.q, system.u, a.parent, a.kind, a.gs0, a.ds0, a.nd,
                                                   a.origin, a.axis, a.offset, a.pu, a.pv, a.mass, a.com_local,
                                                   a.inertia_local)
    system.frames, system.vel, system.com, system.inertia = frames, vel, com, inertia
    system._S = S
    system._S_list = None  # built from _S when numpy code asks for it


class _Rows:
    """The rows of one step as lists of arrays, concatenated for the solve."""

    def __init__(self):
        self.sa, self.sb, self.nax, self.ja, self.jb, self.fixed = [], [], [], [], [], []
        self.target, self.push, self.friction = [], [], []
        self.meta = []  # per block: (kind, data) to build the contact dicts after the solve

    def add(self, sa, sb, nax, ja, jb, fixed, target, push, friction, meta):
        c = len(target)
        if not c:
            return
        self.sa.append(np.full(c, sa, np.int64))
        self.sb.append(np.full(c, sb, np.int64))
        self.nax.append(np.full(c, nax, np.int64))
        self.ja.append(ja)
        self.jb.append(jb)
        self.fixed.append(np.zeros((c, 3)) if fixed is None else fixed)
        self.target.append(np.asarray(target, float))
        self.push.append(np.asarray(push, float))
        self.friction.append(np.broadcast_to(np.asarray(friction, float), (c,)))
        self.meta.append((c, meta))


def _pad(blocks, nv_max: int) -> np.ndarray:
    out = np.zeros((sum(len(b) for b in blocks), 3, nv_max))
    r = 0
    for b in blocks:
        out[r:r + len(b), :, :b.shape[2]] = b
        r += len(b)
    return out


def _plane_table(env, system, allowed):
    """The world's plane geoms this system may touch: (geom indices, normals, offsets, body velocities,
    friction, restitution, threshold) or None when one moves in a way the kernel does not model."""
    world = env.world
    m, st = world.model, world.state
    planes = np.nonzero((m.geom_type == PLANE) & allowed.any(axis=0))[0]
    if not len(planes):
        return planes, None
    pos, rot = world.geom_poses()
    normals = np.ascontiguousarray(rot[planes][:, :, 2])
    offsets = np.einsum("gi,gi->g", normals, pos[planes])
    bodies = m.geom_body[planes]
    if np.any(m.body_mode[bodies] == DYNAMIC) or np.any(st.angular_velocity[bodies] != 0):
        return planes, False
    vbody = np.ascontiguousarray(st.linear_velocity[bodies], dtype=float)
    mats = np.zeros((len(planes), 3))
    for k, g in enumerate(planes):
        props = env.properties(int(m.geom_material[g]))
        mats[k] = props if props is not None else (system.friction, system.restitution,
                                                   system.restitution_threshold)
    return planes, (normals, offsets, vbody, mats)


def _step_group(systems, dt: float, kern) -> bool:
    """One step of ``systems`` (near each other, or with rows the one-system kernel does not build) on the
    compiled kernels, one call per part; False (nothing changed) when a part needs the numpy route."""
    K = len(systems)
    arr = [arrays(s) for s in systems]
    u_free, chols, pds = [], [], []
    for s, a in zip(systems, arr):
        m = kern.mass_matrix(a.parent, a.ds0, a.nd, s._S, s.inertia, s.armature)
        h = kern.bias_forces(s.u, a.parent, a.kind, a.ds0, a.nd, s._S, s.vel, s.inertia, s.gravity)
        e = kern.position_error(s.q, s.q_target, a.kind, a.gs0, a.ds0, a.nd, s.nv) if s.kp.any() else _zeros(s)
        limit = s.effort if s.enforce_effort_limits else _inf(s)
        u, pd, chol, ok = kern.predict(m, h, e, s.u, s.kp, s.kd, s.damping, s.u_target, s.tau_ext, s.locked,
                                       limit, dt)
        if not ok:
            return False
        u_free.append(u)
        chols.append(chol)
        pds.append(pd)
    rows = _Rows()
    # joint limits first, as the numpy solver sweeps them
    for k, (s, a) in enumerate(zip(systems, arr)):
        lg, ld = a.limits(s)
        if not len(lg):
            continue
        dof, sign, target = kern.limit_rows(s.q, u_free[k], lg, ld, s.lower, s.upper, s.locked, dt)
        if len(dof):
            ja = np.zeros((len(dof), 3, s.nv))
            ja[np.arange(len(dof)), 0, dof] = sign
            rows.add(k, -1, 1, ja, ja[:, :, :0], None, target, np.zeros(len(dof)), 0.0, None)
    # link-ground and link-world contacts, per system
    for k, (s, a) in enumerate(zip(systems, arr)):
        uf = u_free[k]
        if s.ground_height is not None and s.collidable:
            reach = max(0.02, 2.0 * dt * float(np.abs(uf).max(initial=0.0)))
            res = kern.plane_rows(s.frames, a.pts, a.p0, _all_links(s), _Z, np.array([float(s.ground_height)]),
                                  np.array([reach]), _ZV,
                                  np.array([[s.friction, s.restitution, s.restitution_threshold]]), np.array([s.erp]),
                                  np.array([s.contact_slop]), uf, s.u, a.parent, a.ds0, a.nd, s._S, dt)
            rows.add(k, -1, 3, res[8], res[8][:, :, :0], None, res[5], res[6], s.friction,
                     ("ground", s, res, s.friction))
        env = s.environment
        if env is None:
            continue
        allowed = env._allowed(s)
        if not allowed.any():
            continue
        planes, table = _plane_table(env, s, allowed)
        if table is False:
            return False
        if table is not None:
            normals, offsets, vbody, mats = table
            st = env.world.state
            reach = MARGIN + 2.0 * dt * (float(np.abs(uf).max(initial=0.0))
                                         + float(np.abs(st.linear_velocity).max(initial=0.0)))
            G = len(planes)
            res = kern.plane_rows(s.frames, a.pts, a.p0, np.ascontiguousarray(allowed[:, planes]), normals,
                                  offsets, np.full(G, reach), vbody, mats, np.full(G, env.erp),
                                  np.full(G, env.slop), uf, s.u,
                                  a.parent, a.ds0, a.nd, s._S, dt)
            fixed = _plane_velocity(res[3], vbody[res[1]]) if np.any(vbody) else None
            rows.add(k, -1, 3, res[8], res[8][:, :, :0], fixed, res[5], res[6], mats[res[1], 0],
                     ("world", s, res, (env, planes, mats)))
        others = allowed.copy()
        others[:, planes] = False
        if others.any():
            dicts = env.contacts(s, uf, dt, skip=planes)
            for c in dicts:
                if c["body_inv"] is not None:
                    return False
            if dicts:
                ja = np.array([np.array(c["jacobian"]) for c in dicts])
                fixed = np.array([c["body_jac"] @ env.body_velocity(c["body_index"]) for c in dicts])
                rows.add(k, -1, 3, ja, ja[:, :, :0], fixed, [c["target"] for c in dicts],
                         [c["push"] for c in dicts], [c["friction"] for c in dicts], ("dicts", s, dicts, None))
    # link-link contacts: each system with itself and with every later one whose bounding sphere is near
    live = [k for k, s in enumerate(systems) if s.collidable and len(s.bodies)]
    near = None
    if len(live) > 1:
        c, r, v = _system_spheres(systems, arr, u_free, live, kern)
        dist = np.linalg.norm(c[:, None, :] - c[None, :, :], axis=2)
        near = dist < r[:, None] + r[None, :] + MARGIN + 2.0 * dt * (v[:, None] + v[None, :])
    for x, ka in enumerate(live):
        a, A = systems[ka], arr[ka]
        for y, kb in enumerate(live[x:], start=x):
            b, B = systems[kb], arr[kb]
            same = ka == kb
            if same:
                if not a.self_collision:
                    continue
                allowed = np.triu(a.self_pairs())
            else:
                if not near[x, y]:
                    continue
                allowed = _filter(a.collision_group, a.collision_mask, b.collision_group, b.collision_mask)
            if not allowed.any():
                continue
            props = _properties(a, b)
            res = kern.pair_rows(same, np.ascontiguousarray(allowed), a.frames, A.pts, A.p0, A.st, A.ss, A.so,
                                 A.s0, A.bc, A.br, u_free[ka], a.u, A.parent, A.ds0, A.nd, a._S,
                                 b.frames, B.pts, B.p0, B.st, B.ss, B.so, B.s0, B.bc, B.br, u_free[kb], b.u,
                                 B.parent, B.ds0, B.nd, b._S, props[0], props[1], props[2], a.erp,
                                 a.contact_slop, MARGIN, dt)
            if not len(res[0]):
                continue
            rows.add(ka, -1 if same else kb, 3, res[8], -res[9], None, res[5], res[6], props[0],
                     ("pair", a, res, (b, props[0])))
    # the solve
    nvs = [s.nv for s in systems]
    off = np.cumsum([0] + nvs).astype(np.int64)
    vel0 = np.concatenate(u_free) if K else np.zeros(0)
    if rows.target:
        nv_max = max(max(nvs), 1)
        chol = np.zeros((K, nv_max, nv_max))
        free = np.zeros((K, nv_max), np.bool_)
        for k, s in enumerate(systems):
            chol[k, :s.nv, :s.nv] = chols[k]
            free[k, :s.nv] = ~s.locked
        iterations = max(s.contact_iterations for s in systems)
        vel, push, lam, _ = kern.solve_rows(vel0, off, chol, free, np.concatenate(rows.sa), np.concatenate(rows.sb),
                                            np.concatenate(rows.nax), _pad(rows.ja, nv_max), _pad(rows.jb, nv_max),
                                            np.concatenate(rows.fixed), np.concatenate(rows.target),
                                            np.concatenate(rows.push), np.concatenate(rows.friction), iterations,
                                            _warm(rows), TOLERANCE)
    else:
        vel, push, lam = vel0, np.zeros_like(vel0), np.zeros((0, 3))
    contacts = _contact_dicts(rows, lam)
    for k, (s, a) in enumerate(zip(systems, arr)):
        u = vel[off[k]:off[k + 1]].copy()
        lg, ld = a.limits(s)
        s.last_pd_torque = pds[k]
        s.q = kern.integrate(s.q, u, push[off[k]:off[k + 1]], dt, a.kind, a.gs0, a.ds0, a.nd, lg, ld, s.lower,
                             s.upper) if s.nv else s.q.copy()
        s.u = u
        s.time += dt
        update_kinematics(s, kern)
        s.last_contacts = [c for c in contacts if c["system"] is s or c.get("other_system") is s]
        s._record_events(s.last_contacts)
    return True


_Z = np.array([[0.0, 0.0, 1.0]])
_ZV = np.zeros((1, 3))


def _zeros(s):
    z = s.__dict__.get("_zeros_nv")
    if z is None or len(z) != s.nv:
        z = s._zeros_nv = np.zeros(s.nv)
    return z


def _inf(s):
    z = s.__dict__.get("_inf_nv")
    if z is None or len(z) != s.nv:
        z = s._inf_nv = np.full(s.nv, np.inf)
    return z


def _all_links(s):
    z = s.__dict__.get("_all_links")
    if z is None:
        z = s._all_links = np.ones((len(s.bodies), 1), np.bool_)
    return z


def _plane_velocity(normals, v):
    """(C, 3) a moving plane's velocity along each contact's normal and tangents."""
    from ..base.spatial import tangent_basis
    t1, t2 = tangent_basis(normals)
    return np.stack((np.einsum("ci,ci->c", normals, v), np.einsum("ci,ci->c", t1, v),
                     np.einsum("ci,ci->c", t2, v)), axis=1)


def _system_spheres(systems, arr, u_free, live, kern):
    """Per live system a sphere holding its links' bounding spheres (centre (K, 3), radius (K,)) and the
    fastest its links move at ``u_free`` (K,): a superset test of ``link_pairs``' link-sphere test."""
    c = np.zeros((len(live), 3))
    r = np.full(len(live), -np.inf)
    v = np.zeros(len(live))
    for x, k in enumerate(live):
        s, a = systems[k], arr[k]
        ok = a.br >= 0
        if not ok.any():
            continue
        frames = s.frames
        centres = np.einsum("lij,lj->li", frames[:, :3, :3], a.bc) + frames[:, :3, 3]
        c[x] = centres[ok].mean(axis=0)
        r[x] = float(np.max(np.linalg.norm(centres[ok] - c[x], axis=1) + a.br[ok]))
        v[x] = float(kern.sphere_speeds(u_free[k], a.parent, a.ds0, a.nd, s._S, centres, a.br).max())
    return c, r, v


def _warm(rows) -> np.ndarray:
    """(R, 3): the solve's first impulses, as the numpy route takes them (``warm_impulses``): 0 for joint
    limits, the last step's impulse of the same contact (link and body names) for contacts."""
    keys = []
    for c, meta in rows.meta:
        if meta is None:
            keys += [None] * c
            continue
        kind, s, res, extra = meta
        if kind == "dicts":
            keys += [(s, contact_key(d)) for d in res]
        elif kind == "pair":
            b = extra[0]
            keys += [(s, (s.bodies[i].link, f"{b.name}/{b.bodies[j].link}")) for i, j in zip(res[0], res[1])]
        elif kind == "ground":
            keys += [(s, (s.bodies[i].link, "ground")) for i in res[0]]
        else:
            env, planes, _ = extra
            m = env.world.model
            keys += [(s, (s.bodies[i].link, m.body_name[int(m.geom_body[int(planes[g])])]))
                     for i, g in zip(res[0], res[1])]
    lam = np.zeros((len(keys), 3))
    at = [r for r, k in enumerate(keys) if k is not None]
    if at:
        lam[at] = warm_impulses([keys[r] for r in at])
    return lam


def _contact_dicts(rows, lam) -> list[dict]:
    """The contacts of the solve as the numpy route lists them (``last_contacts``, events)."""
    out = []
    r = 0
    for c, meta in rows.meta:
        if meta is None:
            r += c
            continue
        kind, s, res, extra = meta
        if kind == "dicts":
            for d in res:
                d["impulse"] = lam[r].copy()
                out.append(d)
                r += 1
            continue
        if kind == "pair":
            b, friction = extra
            li, lj, point, normal, depth, target, push, speed, ja, jb = res
            for x in range(c):
                d = {"link": s.bodies[li[x]].link, "body": f"{b.name}/{b.bodies[lj[x]].link}", "point": point[x],
                     "normal": normal[x], "depth": float(depth[x]), "target": float(target[x]),
                     "push": float(push[x]), "friction": friction, "speed": float(speed[x]), "system": s,
                     "other_system": b, "other_link": b.bodies[lj[x]].link, "jacobian": tuple(ja[x]),
                     "impulse": lam[r].copy()}
                if b is not s:
                    d["other_jacobian"] = jb[x]
                out.append(d)
                r += 1
            continue
        link, plane, point, normal, depth, target, push, speed, J = res
        for x in range(c):
            if kind == "ground":
                body, friction = "ground", extra
            else:
                env, planes, mats = extra
                m = env.world.model
                body = m.body_name[int(m.geom_body[int(planes[plane[x]])])]
                friction = float(mats[plane[x], 0])
            out.append({"link": s.bodies[link[x]].link, "body": body, "point": point[x], "normal": normal[x],
                        "depth": float(depth[x]), "target": float(target[x]), "push": float(push[x]),
                        "friction": friction, "speed": float(speed[x]), "system": s, "jacobian": tuple(J[x]),
                        "impulse": lam[r].copy()})
            r += 1
    return out


def step_compiled(systems, dt: float, kern) -> bool:
    """One step of ``systems``: every system alone (no other system's links within reach) on planes in one
    compiled call for all of them (``robot_pack``), the others together through the per-part kernels. False
    (nothing changed) when the numpy route must take the whole step."""
    one = len(systems) == 1
    # one world-state key per world and plane body for all systems of this step
    memo: dict | None = None if one else {}
    last = robot_pack.last_pack(systems)
    # the last step's pack as it stands: its tables are the ones the full check would find (the same inputs),
    # and no system's links come near another's (checked on its state buffer once the attributes are in)
    if last is not None and last.inputs is not None and _inputs_of(systems, last.arrs, memo) == last.inputs:
        last.sync()
        if one or not _near_any(last, dt, kern):
            for s in last.advance(dt, _touch_impulse()):
                _step_group([s], dt, kern) or _numpy_step(s, dt)
            return True
    memo = {}
    arr = [arrays(s) for s in systems]
    alone = _alone(systems, arr, dt, kern)
    tables = [_plane_arrays(s, a, memo) if ok else None for s, a, ok in zip(systems, arr, alone)]
    rest = [s for s, t in zip(systems, tables) if t is None]
    if rest and not _step_group(rest, dt, kern):
        return False
    packed = [k for k, t in enumerate(tables) if t is not None]
    if packed:
        ps = [systems[k] for k in packed]
        pa = [arr[k] for k in packed]
        inputs = _inputs_of(ps, pa, memo)
        pack = robot_pack.pack_for(ps, pa, [tables[k] for k in packed], [_self_pairs(s, a) for s, a in zip(ps, pa)],
                                   kern)
        pack.inputs = None if None in inputs else inputs
        pack.arrs = pa
        for s in pack.step(dt, _touch_impulse()):
            _step_group([s], dt, kern) or _numpy_step(s, dt)
    return True


def _numpy_step(system, dt) -> bool:
    from .multibody_solver import _numpy_step_systems
    _numpy_step_systems([system], dt)
    return True


def _alone(systems, arr, dt, kern) -> list[bool]:
    """Per system: no other collidable system's links can reach it this step (bounding spheres of all its
    links, apart by more than the margin and four steps at both systems' current link speeds)."""
    out = [True] * len(systems)
    if len(systems) < 2:
        return out
    live = [k for k, s in enumerate(systems) if s.collidable and len(s.bodies) and arr[k].has_sphere]
    if len(live) < 2:
        return out
    # all live systems' links in one compiled pass (a numpy pass per system cost a third of a 16-robot step,
    # one stacked numpy pass still ~17 us a robot)
    bc, br, starts = _alone_tables([arr[k] for k in live])
    lives = [systems[k] for k in live]
    stacked = robot_pack.blocks(lives)  # the last step's pack holds them stacked when they all stepped alone
    if stacked is None:
        stacked = (np.concatenate([s.frames for s in lives]), np.concatenate([s.vel for s in lives]))
    near = kern.near_systems(stacked[0], stacked[1], bc, br, starts, MARGIN, 4.0 * dt)
    for x in np.flatnonzero(near).tolist():
        out[live[x]] = False
    return out


def _near_any(pack, dt: float, kern) -> bool:
    """``_alone`` of a synced pack's systems, all at once: True when a system's links may reach another's
    (the same spheres and rule, on the pack's state buffer when every system is live)."""
    near = pack.near
    if near is None:
        systems, arr = pack.systems, pack.arrs
        live = [k for k, s in enumerate(systems) if s.collidable and len(s.bodies) and arr[k].has_sphere]
        near = pack.near = (live, _alone_tables([arr[k] for k in live]) if len(live) > 1 else None,
                            len(live) == len(systems))
    live, tables, whole = near
    if tables is None:
        return False
    if whole:
        frames, vel = pack.state_blocks()
    else:
        frames = np.concatenate([pack.systems[k].frames for k in live])
        vel = np.concatenate([pack.systems[k].vel for k in live])
    bc, br, starts = tables
    return True in kern.near_systems(frames, vel, bc, br, starts, MARGIN, 4.0 * dt).tolist()


_ALONE_TABLES: list = [None, None]  # (the RobotArrays they were built from, the tables)


def _alone_tables(arrs):
    """Bounding spheres of the links of several systems stacked: centres (N, 3), radii (N,; negative: none),
    each system's first row and the end (K + 1,); kept while the same systems step (holding them keeps ids
    unique)."""
    if _ALONE_TABLES[0] is None or len(_ALONE_TABLES[0]) != len(arrs) or any(
            x is not y for x, y in zip(_ALONE_TABLES[0], arrs)):
        starts = np.cumsum([0] + [len(a.br) for a in arrs]).astype(np.int64)
        _ALONE_TABLES[0], _ALONE_TABLES[1] = list(arrs), (np.ascontiguousarray(np.concatenate([a.bc for a in arrs])),
                                                          np.concatenate([a.br for a in arrs]), starts)
    return _ALONE_TABLES[1]


def _plane_arrays(s, a, memo=None):
    """``_planes`` kept while nothing it reads changes (a static plane, a quiet world: the common case);
    ``memo`` shares the world state's part of the key between the systems of one step."""
    env = s.environment
    key = (s.ground_height, s.collidable, s.friction, s.restitution, s.restitution_threshold, s.erp,
           s.contact_slop)
    if env is not None:
        st = env.world.state
        allowed = env._allowed(s)
        planes = a.__dict__.get("_env_planes")
        if planes is not None and planes[0] is allowed and planes[1] is env and len(planes[2]):
            key += (id(allowed), _world_key(st, planes[5], memo), env.erp, env.slop)
        else:
            key = None
    cached = a.__dict__.get("_planes_cache")
    if key is not None and cached is not None and cached[0] == key:
        return cached[1]
    out = _planes(s, a)
    a._planes_cache = (key, out)
    return out


_SMALL_WORLD = 8  # bodies: a world this small keys on its whole pose arrays (no index op per array)


def _world_key(st, b, memo=None):
    """What ``_planes`` reads of a world's state: its plane bodies' (``b``: one index, or an array) poses
    and spin, and every body's linear velocity (the reach reads their largest), as bytes (a copy costs a
    tenth of np.abs(...).max() on a small world); ``memo`` shares it between the systems of one step. A
    small world's key holds every body's pose and spin (a superset: equal keys still mean equal inputs)."""
    if memo is not None:
        mk = (id(st), b if isinstance(b, int) else b.tobytes())
        wkey = memo.get(mk)
        if wkey is None:
            wkey = memo[mk] = _world_key(st, b)
        return wkey
    pos, quat, spin, lin = st.position, st.quaternion, st.angular_velocity, st.linear_velocity
    if len(pos) <= _SMALL_WORLD:
        return pos.tobytes(), quat.tobytes(), spin.tobytes(), lin.tobytes()
    return pos[b].tobytes(), quat[b].tobytes(), spin[b].tobytes(), lin.tobytes()  # b one index: views


# what ``_inputs`` reads of a system and of its environment (one C call each, not an attribute load apiece)
_SYSTEM_INPUTS = operator.attrgetter("ground_height", "collidable", "friction", "restitution", "restitution_threshold",
                                     "erp", "contact_slop", "self_collision", "collide_with_parent",
                                     "enforce_effort_limits", "contact_iterations")
_ENV_INPUTS = operator.attrgetter("erp", "slop", "group", "mask", "collidable", "material_index")


def _inputs(s, a, memo):
    """Everything the tables of a packed system are made from (``_plane_arrays``, ``_self_pairs``,
    ``RobotArrays.limits``, the pack's sizes): while it compares equal, the last step's pack stands as it
    is. None: a system without the world planes cached (the full check runs)."""
    env = s.environment
    ignored = s.ignored_pairs
    if env is None:
        return (_SYSTEM_INPUTS(s), len(s._limited), frozenset(ignored) if ignored else None,
                s.collision_group.tobytes(), s.collision_mask.tobytes())
    planes = a.__dict__.get("_env_planes")
    if planes is None or planes[1] is not env or not len(planes[2]):
        return None
    return (_SYSTEM_INPUTS(s), len(s._limited), frozenset(ignored) if ignored else None, s.collision_group.tobytes(),
            s.collision_mask.tobytes(), env, _ENV_INPUTS(env), _world_key(env.world.state, planes[5], memo))


def _inputs_of(systems, arr, memo) -> list:
    """``_inputs`` of each system."""
    return [_inputs(s, a, memo) for s, a in zip(systems, arr)]


def _planes(s, a):
    """The planes of one system for ``robot_step.system_step`` (its flat ground first, then the world's
    plane geoms it may touch), or None when its world offers other geoms, or a plane that is dynamic or
    spins (those take the per-part route)."""
    pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw, pallow = [], [], [], [], [], [], [], [], [], []
    L = len(s.bodies)
    if s.ground_height is not None and s.collidable:
        pn.append((0.0, 0.0, 1.0))
        pd.append(float(s.ground_height))
        vbody.append((0.0, 0.0, 0.0))
        pmat.append((s.friction, s.restitution, s.restitution_threshold))
        perp.append(s.erp)
        pslop.append(s.contact_slop)
        rmin.append(0.02)
        rbase.append(0.0)
        vw.append(0.0)
        pallow.append(np.ones(L, np.bool_))
    env = s.environment
    if env is not None:
        allowed = env._allowed(s)
        if allowed.any():
            cached = a.__dict__.get("_env_planes")
            if cached is None or cached[0] is not allowed or cached[1] is not env:
                m = env.world.model
                planes = np.nonzero((m.geom_type == PLANE) & allowed.any(axis=0))[0]
                others = allowed.copy()
                others[:, planes] = False
                mats = []
                for g in planes:
                    props = env.properties(int(m.geom_material[g]))
                    mats.append(props if props is not None else (s.friction, s.restitution,
                                                                 s.restitution_threshold))
                bodies = np.unique(m.geom_body[planes])
                cached = a._env_planes = (allowed, env, planes, bool(others.any()), mats,
                                          int(bodies[0]) if len(bodies) == 1 else bodies)
            _, _, planes, others, mats, _ = cached
            if others:
                return None
            if len(planes):
                world = env.world
                st, m = world.state, world.model
                bodies = m.geom_body[planes]
                if np.any(m.body_mode[bodies] == DYNAMIC) or np.any(st.angular_velocity[bodies] != 0):
                    return None
                pos, rot = _plane_poses(world, planes, bodies)
                vmax = float(np.abs(st.linear_velocity).max(initial=0.0))
                for x, g in enumerate(planes):
                    n = rot[x][:, 2]
                    pn.append(n)
                    pd.append(float(n @ pos[x]))
                    vbody.append(st.linear_velocity[bodies[x]])
                    pmat.append(mats[x])
                    perp.append(env.erp)
                    pslop.append(env.slop)
                    rmin.append(-np.inf)
                    rbase.append(MARGIN)
                    vw.append(vmax)
                    pallow.append(allowed[:, g])
    G = len(pn)
    return (np.ascontiguousarray(np.array(pallow, np.bool_).reshape(G, L).T),
            np.array(pn, float).reshape(G, 3), np.array(pd, float), np.array(vbody, float).reshape(G, 3),
            np.array(pmat, float).reshape(G, 3), np.array(perp, float), np.array(pslop, float),
            np.array(rmin, float), np.array(rbase, float), np.array(vw, float))


def _plane_poses(world, planes, bodies):
    """World positions and rotations of the plane geoms (cached while their bodies stay put)."""
    st = world.state
    key = st.position[bodies].tobytes() + st.quaternion[bodies].tobytes()
    cached = world.__dict__.get("_robot_plane_poses")
    if cached is not None and cached[0] == key and np.array_equal(cached[1], planes):
        return cached[2], cached[3]
    pos, rot = world.geom_poses()
    out = (pos[planes].copy(), rot[planes].copy())
    world._robot_plane_poses = (key, planes.copy(), *out)
    return out


def _self_pairs(s, a):
    """(upper-triangle allowed self pairs, material) of a system, cached while its filters stay."""
    pairs = s.self_pairs() if s.self_collision else None
    cached = a.__dict__.get("_self")
    props = _properties(s, s)
    if cached is None or cached[0] is not pairs or cached[2] != props:
        L = len(s.bodies)
        allowed = np.ascontiguousarray(np.triu(pairs)) if pairs is not None else np.zeros((L, L), np.bool_)
        if not s.collidable:
            allowed = np.zeros_like(allowed)
        cached = a._self = (pairs, allowed, props, np.array(props, dtype=float))
    return cached[1], cached[3]


def _plane_body(s, g: int) -> str:
    """Name of the body of plane ``g`` of ``_plane_arrays`` (the flat ground first when there is one)."""
    if s.ground_height is not None and s.collidable:
        if g == 0:
            return "ground"
        g -= 1
    env = s.environment
    planes = s._arrays._env_planes[2]
    m = env.world.model
    return m.body_name[int(m.geom_body[int(planes[g])])]


def contact_dicts(s) -> list[dict]:
    """``last_contacts`` of a system stepped by ``robot_pack`` (``robot_pack.step_contacts``), as the numpy
    route lists them."""
    if s._contact_arrays is None:
        return []
    cont, rows = robot_pack.step_contacts(s._contact_arrays, s.nv)
    out = []
    for c in range(len(cont)):
        kind, link, other = int(cont[c, 0]), int(cont[c, 1]), int(cont[c, 2])
        d = {"link": s.bodies[link].link, "point": cont[c, 3:6], "normal": cont[c, 6:9],
             "depth": float(cont[c, 9]), "target": float(cont[c, 10]), "push": float(cont[c, 11]),
             "friction": float(cont[c, 13]), "speed": float(cont[c, 12]), "system": s, "jacobian": tuple(rows[c]),
             "impulse": cont[c, 14:17].copy()}
        if kind == 0:
            d["body"] = _plane_body(s, other)
        else:
            d["body"] = f"{s.name}/{s.bodies[other].link}"
            d["other_system"], d["other_link"] = s, s.bodies[other].link
        out.append(d)
    return out


_TOUCH: list = []


def _touch_impulse() -> float:
    """``articulated.TOUCH_IMPULSE`` (imported once: a function-level import costs microseconds a step)."""
    if not _TOUCH:
        from .articulated import TOUCH_IMPULSE
        _TOUCH.append(TOUCH_IMPULSE)
    return _TOUCH[0]
