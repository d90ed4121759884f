"""Granular material: discrete-element particles (DEM), vectorised with numpy.

Spheres interact through a Hertz (or linear) normal spring with a dashpot, a tangential spring with
history clamped by Coulomb friction (Cundall-Strack), rolling friction and optional cohesion. Neighbours
come from a uniform grid (cell = largest diameter plus the bulk's skins; a particle's skin is how far it
can move in the step, a fast one searches the cells its own reach needs), rebuilt once per world step
into a Verlet list reused by the substeps. Particles also collide with every rigid geom (signed distances); dynamic
bodies receive the reactions as external forces. Substeps are raised automatically until the explicit
integration is stable for the given stiffness.
"""
from __future__ import annotations

import math

import numpy as np

from .broadphase import compute_aabbs
from .geometry import CONVEX, PLANE
from .physics_model import DYNAMIC, GranularSpec
from .mathutil import cross
from .sdf import geom_distance, geom_point_velocity

_FORWARD = np.array([(dx, dy, dz) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                     if (dz, dy, dx) > (0, 0, 0)], dtype=np.int64)
MAX_SUBSTEPS = 64


class _History:
    """Tangential spring displacement per contact key, carried between pair lists."""

    def __init__(self):
        self.keys = np.zeros(0, dtype=np.int64)
        self.xi = np.zeros((0, 3))

    def lookup(self, keys: np.ndarray, kern=None) -> np.ndarray:
        if kern is not None:  # the same springs, by a compiled merge (a fifth of the step's numpy time)
            return kern.carry(keys, self.keys, self.xi)
        xi = np.zeros((len(keys), 3))
        if len(self.keys) and len(keys):
            pos = np.searchsorted(self.keys, keys)
            pos = np.minimum(pos, len(self.keys) - 1)
            hit = self.keys[pos] == keys
            xi[hit] = self.xi[pos[hit]]
        return xi

    def store(self, keys: np.ndarray, xi: np.ndarray, active: np.ndarray) -> None:
        keys, xi = keys[active], xi[active]
        order = np.argsort(keys, kind="stable")
        self.keys, self.xi = keys[order], xi[order]


def _contact_forces(spec, dt, xi, n, overlap, vn, vt, m_cap, hertz):
    """Normal force magnitude (K,), tangential force (K, 3) and the updated spring xi (K, 3).

    ``m_cap`` (K,): the mass whose relative velocity a dashpot may at most stop within the substep, the
    contact's reduced mass over twice the larger contact count of its particles: together a particle's
    dashpots then remove at most half its relative velocity per substep, which keeps the explicit
    integration stable in a dense pack (capping each contact at its reduced mass alone let six contacts
    overshoot six-fold: piles threw particles out at several m/s)."""
    kn, cn, kt, ct, mu = (spec.normal_stiffness, spec.normal_damping, spec.tangential_stiffness,
                          spec.tangential_damping, spec.friction)
    d = np.maximum(overlap, 0.0)
    spring = kn * d * np.sqrt(d) if hertz else kn * d
    # dashpot, never more than stops the relative normal motion within the substep (stable)
    damp = -np.sign(vn) * np.minimum(cn * np.abs(vn), m_cap * np.abs(vn) / dt)
    fn = np.maximum(spring + damp, 0.0)
    # tangential spring with history, kept in the tangent plane
    xi = xi + vt * dt
    xi = xi - np.sum(xi * n, axis=1, keepdims=True) * n
    ct_eff = np.minimum(ct, m_cap / dt)[:, None]
    ft = -kt * xi - ct_eff * vt
    fmax = mu * fn
    mag = np.linalg.norm(ft, axis=1)
    slip = mag > fmax
    if slip.any():
        scale = np.where(slip, fmax / np.maximum(mag, 1e-300), 1.0)
        ft = ft * scale[:, None]
        xi = np.where(slip[:, None], -(ft + ct_eff * vt) / max(kt, 1e-300), xi)
    return fn, ft, xi


class Granular:
    """One ``granular`` system attached to a world (state lives in ``world.state``)."""

    def __init__(self, spec: GranularSpec, model):
        self.spec = spec
        r = spec.radii
        self.mass = spec.density * 4.0 / 3.0 * math.pi * r ** 3
        self.inertia = 0.4 * self.mass * r * r
        self.pair_hist = _History()
        self.wall_hist = _History()
        self.substeps_used = spec.substeps
        self._geoms = None  # the compiled step's per-geom tables (built on its first step)

    def substeps(self, dt: float) -> int:
        s = self.spec
        r_min = float(self.spec.radii.min())
        m_min = float(self.mass.min())
        k = s.normal_stiffness * (1.5 * math.sqrt(0.05 * r_min) if s.hertz else 1.0)
        k = max(k, s.tangential_stiffness, 1e-12)
        dt_crit = 2.0 * math.sqrt(m_min / k)
        return int(min(max(s.substeps, math.ceil(dt / (0.25 * dt_crit))), MAX_SUBSTEPS))

    def _pairs(self, x: np.ndarray, skin: np.ndarray):
        """Candidate pairs (i < j) with |x_j - x_i| < r_i + r_j + skin_i + skin_j, sorted, from a uniform grid.

        ``skin`` (P,): how far each particle may move this step. The cells are sized for the skins of the
        bulk (their 90th percentile): particles beyond it (a few thrown out fast) search the rings of cells
        their own reach needs, so one fast particle costs its own neighbourhood, not every particle's (a
        single skin from the fastest made the whole pile's lists explode)."""
        r = self.spec.radii
        s_cell = _bulk_skin(skin)
        h = 2.0 * float(r.max()) + 2.0 * s_cell
        lo = x.min(axis=0)
        cell = np.floor((x - lo) / h).astype(np.int64)
        dims = cell.max(axis=0) + 3
        cell += 1
        key = (cell[:, 2] * dims[1] + cell[:, 1]) * dims[0] + cell[:, 0]
        order = np.argsort(key, kind="stable")
        ks = key[order]
        ukeys, start, count = np.unique(ks, return_index=True, return_counts=True)
        fast = skin > s_cell
        I, J = [], []

        def gather(src, offsets):
            """Particles in the cells at ``offsets`` (O, 3) from each particle of ``src``."""
            nc = (cell[src][:, None, :] + offsets[None, :, :]).reshape(-1, 3)
            owner = np.repeat(src, len(offsets))
            nk = (nc[:, 2] * dims[1] + nc[:, 1]) * dims[0] + nc[:, 0]
            pos = np.minimum(np.searchsorted(ukeys, nk), len(ukeys) - 1)
            ok = ((nc >= 0) & (nc < dims)).all(axis=1)  # keys of cells off the grid could alias others
            hit = (ukeys[pos] == nk) & ok
            cnt = np.where(hit, count[pos], 0)
            st = np.where(hit, start[pos], 0)
            tot = int(cnt.sum())
            if tot == 0:
                return np.zeros(0, np.int64), np.zeros(0, np.int64)
            base = np.repeat(np.cumsum(cnt) - cnt, cnt)
            return np.repeat(owner, cnt), order[np.repeat(st, cnt) + np.arange(tot) - base]

        # the bulk among itself: each pair once, from the half-stencil of forward cells
        slow = np.flatnonzero(~fast)
        for off in [np.zeros(3, dtype=np.int64)] + list(_FORWARD):
            i, j = gather(slow, off[None, :])
            keep = ~fast[j] & ((i < j) if not off.any() else True)
            I.append(i[keep])
            J.append(j[keep])
        # a fast particle with everything slower (ties by index) within its own reach
        for k in np.unique(np.ceil((r[fast] + float(r.max()) + 2.0 * skin[fast]) / h).astype(np.int64)):
            src = np.flatnonzero(fast)[np.ceil((r[fast] + float(r.max()) + 2.0 * skin[fast]) / h) == k]
            ring = np.arange(-k, k + 1)
            offsets = np.stack(np.meshgrid(ring, ring, ring, indexing="ij"), axis=-1).reshape(-1, 3)
            i, j = gather(src, offsets)
            keep = (skin[j] < skin[i]) | ((skin[j] == skin[i]) & (j < i))
            I.append(i[keep])
            J.append(j[keep])
        if not I:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        i, j = np.concatenate(I), np.concatenate(J)
        i, j = np.minimum(i, j), np.maximum(i, j)
        reach = r[i] + r[j] + skin[i] + skin[j]
        d2 = np.sum((x[j] - x[i]) ** 2, axis=1)
        keep = d2 < reach * reach
        i, j = i[keep], j[keep]
        srt = np.lexsort((j, i))
        return i[srt], j[srt]

    def step(self, world, k: int, frames, dt: float) -> None:
        s, spec, m = world.state, self.spec, world.model
        if spec.fixed:
            return
        x, v, w = s.particles[k], s.particle_velocity[k], s.particle_omega[k]
        P = len(x)
        if P == 0:
            return
        n_sub = self.substeps(dt)
        self.substeps_used = n_sub
        h = dt / n_sub
        r = spec.radii
        kern = _compiled() if world.backend == "numba" else None
        # each particle's own margin: how far it can move this step (one fast particle widens only its own)
        speed = np.sqrt(np.sum(v * v, axis=1))
        skin = np.maximum(1.2 * speed * dt, 0.1 * float(r.min())) + spec.cohesion_distance
        order = None
        if kern is not None:
            i, j, order = kern.neighbour_pairs(x, r, skin, _bulk_skin(skin))
        else:
            i, j = self._pairs(x, skin)
        pair_key = i * P + j
        xi = self.pair_hist.lookup(pair_key, kern)
        # rigid geoms near the particles
        reach = r + skin
        lo = (x - reach[:, None]).min(axis=0)
        hi = (x + reach[:, None]).max(axis=0)
        geoms = self._near_geoms(m, frames, lo, hi)
        cand = []
        for g in geoms:
            if m.geom_type[g] == PLANE:
                idx = np.arange(P)
            else:
                glo, ghi = compute_aabbs_one(m, frames, g)
                inside = np.all((x + reach[:, None] >= glo) & (x - reach[:, None] <= ghi), axis=1)
                idx = np.nonzero(inside)[0]
            if len(idx):
                cand.append((g, idx))
        G = m.num_geoms
        wall_keys = np.concatenate([idx * G + g for g, idx in cand]) if cand else np.zeros(0, np.int64)
        wxi = self.wall_hist.lookup(wall_keys, kern)
        m_pair = self.mass[i] * self.mass[j] / (self.mass[i] + self.mass[j]) if len(i) else np.zeros(0)
        r_eff = r[i] * r[j] / (r[i] + r[j]) if len(i) else np.zeros(0)
        if kern is not None:
            active_pair, active_wall, body_force = self._solve_compiled(
                kern, world, frames, order, x, v, w, i, j, xi, m_pair, r_eff, cand, wxi, n_sub, h, dt)
        else:
            active_pair, active_wall, body_force = self._solve(
                world, frames, x, v, w, i, j, xi, m_pair, r_eff, cand, wxi, n_sub, h, dt)
        self.pair_hist.store(pair_key, xi, active_pair)
        self.wall_hist.store(wall_keys, wxi, active_wall)
        for body, (fb, tb) in body_force.items():
            world.external_force[body] += fb
            world.external_torque[body] += tb
            if s.sleeping[body] and np.linalg.norm(fb) > 0:
                world.wake(int(body))

    def _solve_compiled(self, kern, world, frames, order, x, v, w, i, j, xi, m_pair, r_eff, cand, wxi, n_sub, h, dt):
        """``_solve`` as one compiled call (``kernels.particles.substeps_in_order``: on the particles in the
        neighbour search's cell order); xi, wxi updated in place."""
        s, spec, m = world.state, self.spec, world.model
        if self._geoms is None:
            self._geoms = _geom_tables(m)
        g_type, g_size, p_start, p_normals, p_offsets, hfs = self._geoms
        body = m.geom_body
        wp = np.concatenate([idx for _, idx in cand]) if cand else np.zeros(0, np.int64)
        wg = np.concatenate([np.full(len(idx), g, np.int64) for g, idx in cand]) if cand else np.zeros(0, np.int64)
        G = m.num_geoms
        body_f, body_t = np.zeros((G, 3)), np.zeros((G, 3))
        active_pair, active_wall = np.zeros(len(i), bool), np.zeros(len(wp), bool)
        mat = np.array([spec.normal_stiffness, spec.normal_damping, spec.tangential_stiffness,
                        spec.tangential_damping, spec.friction, spec.rolling_friction, spec.cohesion_stiffness,
                        spec.cohesion_distance, 1.0 if spec.hertz else 0.0])
        kern.substeps(order, x, v, w, spec.radii, self.mass, self.inertia, i, j, xi, m_pair, r_eff, mat, wp, wg, wxi,
                      g_type, np.ascontiguousarray(frames.pos, dtype=np.float64),
                      np.ascontiguousarray(frames.rot, dtype=np.float64), g_size, p_start, p_normals, p_offsets, hfs,
                      np.ascontiguousarray(s.linear_velocity[body]), np.ascontiguousarray(s.angular_velocity[body]),
                      np.ascontiguousarray(s.position[body]), np.ascontiguousarray(m.body_mode[body] == DYNAMIC),
                      np.asarray(m.gravity, dtype=np.float64), n_sub, h, dt, active_pair, active_wall, body_f,
                      body_t)
        body_force = {}
        for g, _ in cand:
            if m.body_mode[body[g]] == DYNAMIC:
                acc = body_force.setdefault(body[g], [np.zeros(3), np.zeros(3)])
                acc[0] += body_f[g]
                acc[1] += body_t[g]
        return active_pair, active_wall, body_force

    def _solve(self, world, frames, x, v, w, i, j, xi, m_pair, r_eff, cand, wxi, n_sub, h, dt):
        """The substeps with numpy (the reference): x, v, w, xi and wxi updated in place; returns which
        pairs and geom contacts touch at the last substep and the reactions on dynamic bodies."""
        s, spec, m = world.state, self.spec, world.model
        P = len(x)
        r = spec.radii
        body_force = {}
        active_pair = np.zeros(len(i), dtype=bool)
        active_wall = np.zeros(len(wxi), dtype=bool)
        g_acc = m.gravity
        for _ in range(n_sub):
            F = np.zeros((P, 3))
            T = np.zeros((P, 3))
            # this substep's touching contacts per particle (pairs, then geoms): the dashpots' share
            walls = []
            for g, idx in cand:
                sd, n, valid = geom_distance(m, frames, g, x[idx])
                walls.append((g, idx, n, r[idx] - sd, valid & (r[idx] - sd > 0)))
            if len(i):
                d = x[j] - x[i]
                dist = np.linalg.norm(d, axis=1)
                overlap = r[i] + r[j] - dist
                touch = overlap > 0
            Z = np.zeros(P, np.int64)
            if len(i):
                Z += np.bincount(i[touch], minlength=P) + np.bincount(j[touch], minlength=P)
            for _, idx, _, _, tw in walls:
                Z += np.bincount(idx[tw], minlength=P)
            share = 1.0 / (2.0 * np.maximum(Z, 1))
            if len(i):
                n = d / np.maximum(dist, 1e-12)[:, None]
                vrel = (v[j] + cross(w[j], -r[j, None] * n)) - (v[i] + cross(w[i], r[i, None] * n))
                vn = np.sum(vrel * n, axis=1)
                vt = vrel - vn[:, None] * n
                sh = np.minimum(share[i], share[j])
                fn, ft, xi_new = _contact_forces(spec, h, xi, n, overlap, vn, vt, m_pair * sh, spec.hertz)
                fn = np.where(touch, fn, 0.0)
                ft = np.where(touch[:, None], ft, 0.0)
                xi[:] = np.where(touch[:, None], xi_new, 0.0)
                active_pair = touch
                f = fn[:, None] * n + ft  # on j
                if spec.cohesion_stiffness > 0 and spec.cohesion_distance > 0:
                    gap = -overlap
                    near = gap < spec.cohesion_distance
                    reach = spec.cohesion_distance - np.maximum(gap, 0.0)
                    fc = np.where(near, spec.cohesion_stiffness * reach, 0.0)
                    f = f - fc[:, None] * n
                for c in range(3):
                    F[:, c] += np.bincount(j, f[:, c], P) - np.bincount(i, f[:, c], P)
                # torques: contact point r_i n from i, -r_j n from j
                ti = cross(r[i, None] * n, -f)
                tj = cross(-r[j, None] * n, f)
                if spec.rolling_friction > 0:
                    wr = w[i] - w[j]
                    wn = np.linalg.norm(wr, axis=1)
                    i_eff = np.minimum(self.inertia[i], self.inertia[j]) * sh
                    mag = np.minimum(spec.rolling_friction * fn * r_eff, wn * i_eff / h)
                    tr = -wr / np.maximum(wn, 1e-300)[:, None] * mag[:, None]
                    ti += tr
                    tj -= tr
                for c in range(3):
                    T[:, c] += np.bincount(i, ti[:, c], P) + np.bincount(j, tj[:, c], P)
            off = 0
            for g, idx, n, overlap, touch in walls:
                K = len(idx)
                body = m.geom_body[g]
                cp = x[idx] - n * r[idx, None]
                vb = geom_point_velocity(s, body, cp)
                vrel = (v[idx] + cross(w[idx], -r[idx, None] * n)) - vb
                vn = np.sum(vrel * n, axis=1)
                vt = vrel - vn[:, None] * n
                sl = slice(off, off + K)
                fn, ft, xw = _contact_forces(spec, h, wxi[sl], n, overlap, vn, vt, self.mass[idx] * share[idx],
                                             spec.hertz)
                fn = np.where(touch, fn, 0.0)
                ft = np.where(touch[:, None], ft, 0.0)
                wxi[sl] = np.where(touch[:, None], xw, 0.0)
                active_wall[sl] = touch
                f = fn[:, None] * n + ft  # on the particle
                F[idx] += f
                tp = cross(-r[idx, None] * n, f)
                if spec.rolling_friction > 0:  # a particle rolls against geoms too (else it rolls forever)
                    wr = w[idx] - s.angular_velocity[body]
                    wn = np.linalg.norm(wr, axis=1)
                    mag = np.minimum(spec.rolling_friction * fn * r[idx], wn * (self.inertia[idx] * share[idx]) / h)
                    tr = -wr / np.maximum(wn, 1e-300)[:, None] * mag[:, None]
                    tp += tr
                T[idx] += tp
                if m.body_mode[body] == DYNAMIC and touch.any():
                    fb = -f[touch]
                    acc = body_force.setdefault(body, [np.zeros(3), np.zeros(3)])
                    acc[0] += fb.sum(axis=0) * (h / dt)
                    tb = cross(cp[touch] - s.position[body], fb)
                    if spec.rolling_friction > 0:
                        tb -= tr[touch]
                    acc[1] += tb.sum(axis=0) * (h / dt)
                off += K
            v += (F / self.mass[:, None] + g_acc) * h
            w += T / self.inertia[:, None] * h
            x += v * h
        return active_pair, active_wall, body_force

    @staticmethod
    def _near_geoms(m, frames, lo, hi):
        out = []
        for g in range(m.num_geoms):
            if m.geom_type[g] == PLANE:
                out.append(g)
                continue
            glo, ghi = compute_aabbs_one(m, frames, g)
            if np.all(glo <= hi) and np.all(ghi >= lo):
                out.append(g)
        return out


def _compiled():
    """The compiled particle kernels (imported after ``kernels.load`` has chosen numba's cache folder)."""
    from . import kernels
    kernels.load()
    from .kernels import particles, particles_grid
    return _Kernels(particles.substeps_in_order, particles_grid.neighbour_pairs, particles.carry)


class _Kernels:
    def __init__(self, substeps, neighbour_pairs, carry):
        self.substeps, self.neighbour_pairs, self.carry = substeps, neighbour_pairs, carry


def _bulk_skin(skin: np.ndarray) -> float:
    """The skin the grid's cells are sized for: the bulk's (90th percentile), so a few fast particles
    search their own rings instead of widening every cell."""
    return float(np.quantile(skin, 0.9)) if len(skin) > 10 else float(skin.max())


def _geom_tables(m):
    """Per geom: type (G,), size (G, 3), the face planes of convex geoms (p_start (G + 1,), normals
    (F, 3), offsets (F,)) for ``kernels.particles_sdf``, and the height fields packed (``kernels.terrain``)."""
    from .kernels.terrain import pack
    normals, offsets, start = [], [], [0]
    for g in range(m.num_geoms):
        poly = m.geom_poly[g] if m.geom_type[g] == CONVEX else None
        if poly is not None:
            normals.append(np.asarray(poly.normals, dtype=np.float64).reshape(-1, 3))
            offsets.append(np.asarray(poly.offsets, dtype=np.float64).reshape(-1))
        start.append(start[-1] + (len(offsets[-1]) if poly is not None else 0))
    return (np.ascontiguousarray(m.geom_type, dtype=np.int64), np.ascontiguousarray(m.geom_size, dtype=np.float64),
            np.array(start, dtype=np.int64),
            np.ascontiguousarray(np.concatenate(normals) if normals else np.zeros((0, 3))),
            np.ascontiguousarray(np.concatenate(offsets) if offsets else np.zeros(0)), pack(m.geom_hfield))


def compute_aabbs_one(m, frames, g):
    """World AABB of geom g, computed once per Frames object for all geoms."""
    cache = getattr(frames, "_aabb", None)
    if cache is None:
        cache = compute_aabbs(m, frames.pos, frames.rot, np.zeros(len(frames.pos)))
        frames._aabb = cache
    return cache[0][g], cache[1][g]
