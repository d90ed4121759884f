"""Granular material: discrete-element particles (DEM), vectorised with numpy.

Spheres interact through a Hertz (or linear) normal spring with a dashpot, a tangential spring with
history clamped by Coulomb friction (Cundall-Strack), rolling friction and optional cohesion. Neighbours
come from a uniform grid (cell = largest diameter plus a skin), rebuilt once per world step into a Verlet
list reused by the substeps. Particles also collide with every rigid geom (signed distances); dynamic
bodies receive the reactions as external forces. Substeps are raised automatically until the explicit
integration is stable for the given stiffness.
"""
from __future__ import annotations

import math

import numpy as np

from .broadphase import compute_aabbs
from .geometry import PLANE
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

    def lookup(self, keys: np.ndarray) -> np.ndarray:
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


def _contact_forces(spec, dt, xi, n, overlap, vn, vt, m_eff, hertz):
    """Normal force magnitude (K,), tangential force (K, 3) and the updated spring xi (K, 3)."""
    kn, cn, kt, ct, mu = (spec.normal_stiffness, spec.normal_damping, spec.tangential_stiffness,
                          spec.tangential_damping, spec.friction)
    d = np.maximum(overlap, 0.0)
    spring = kn * d * np.sqrt(d) if hertz else kn * d
    # dashpot, never more than stops the relative normal motion within the substep (stable)
    damp = -np.sign(vn) * np.minimum(cn * np.abs(vn), m_eff * np.abs(vn) / dt)
    fn = np.maximum(spring + damp, 0.0)
    # tangential spring with history, kept in the tangent plane
    xi = xi + vt * dt
    xi = xi - np.sum(xi * n, axis=1, keepdims=True) * n
    ct_eff = np.minimum(ct, m_eff / dt)[:, None]
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

    def substeps(self, dt: float) -> int:
        s = self.spec
        r_min = float(self.spec.radii.min())
        m_min = float(self.mass.min())
        k = s.normal_stiffness * (1.5 * math.sqrt(0.05 * r_min) if s.hertz else 1.0)
        k = max(k, s.tangential_stiffness, 1e-12)
        dt_crit = 2.0 * math.sqrt(m_min / k)
        return int(min(max(s.substeps, math.ceil(dt / (0.25 * dt_crit))), MAX_SUBSTEPS))

    def _pairs(self, x: np.ndarray, skin: float):
        """Candidate pairs (i < j) within radius sums plus skin, from a uniform grid."""
        r = self.spec.radii
        P = len(x)
        h = 2.0 * float(r.max()) + skin
        lo = x.min(axis=0)
        cell = np.floor((x - lo) / h).astype(np.int64)
        dims = cell.max(axis=0) + 3
        cell += 1
        key = (cell[:, 2] * dims[1] + cell[:, 1]) * dims[0] + cell[:, 0]
        order = np.argsort(key, kind="stable")
        ks = key[order]
        ukeys, start, count = np.unique(ks, return_index=True, return_counts=True)
        I, J = [], []
        for off in [np.zeros(3, dtype=np.int64)] + list(_FORWARD):
            nc = cell + off
            nk = (nc[:, 2] * dims[1] + nc[:, 1]) * dims[0] + nc[:, 0]
            pos = np.searchsorted(ukeys, nk)
            pos = np.minimum(pos, len(ukeys) - 1)
            hit = ukeys[pos] == nk
            cnt = np.where(hit, count[pos], 0)
            st = np.where(hit, start[pos], 0)
            tot = int(cnt.sum())
            if tot == 0:
                continue
            i = np.repeat(np.arange(P), cnt)
            base = np.repeat(np.cumsum(cnt) - cnt, cnt)
            j = order[np.repeat(st, cnt) + np.arange(tot) - base]
            if not off.any():
                keep = i < j
                i, j = i[keep], j[keep]
            I.append(i)
            J.append(j)
        if not I:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        i, j = np.concatenate(I), np.concatenate(J)
        i, j = np.minimum(i, j), np.maximum(i, j)
        reach = r[i] + r[j] + skin
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
        vmax = float(np.sqrt(np.max(np.sum(v * v, axis=1)))) if P else 0.0
        skin = max(1.2 * vmax * dt, 0.1 * float(r.min())) + spec.cohesion_distance
        i, j = self._pairs(x, skin)
        pair_key = i * P + j
        xi = self.pair_hist.lookup(pair_key)
        # rigid geoms near the particles
        lo = x.min(axis=0) - r.max() - skin
        hi = x.max(axis=0) + r.max() + skin
        geoms = self._near_geoms(m, frames, lo, hi)
        cand = []
        for g in geoms:
            if m.geom_type[g] == PLANE:
                idx = np.arange(P)
            else:
                glo, ghi = compute_aabbs_one(m, frames, g)
                inside = np.all((x + r[:, None] + skin >= glo) & (x - r[:, None] - skin <= ghi), axis=1)
                idx = np.nonzero(inside)[0]
            if len(idx):
                cand.append((g, idx))
        G = m.num_geoms
        wall_keys = np.concatenate([idx * G + g for g, idx in cand]) if cand else np.zeros(0, np.int64)
        wxi = self.wall_hist.lookup(wall_keys)
        m_pair = self.mass[i] * self.mass[j] / (self.mass[i] + self.mass[j]) if len(i) else np.zeros(0)
        r_eff = r[i] * r[j] / (r[i] + r[j]) if len(i) else np.zeros(0)
        body_force = {}
        active_pair = np.zeros(len(i), dtype=bool)
        active_wall = np.zeros(len(wall_keys), dtype=bool)
        g_acc = m.gravity
        for _ in range(n_sub):
            F = np.zeros((P, 3))
            T = np.zeros((P, 3))
            if len(i):
                d = x[j] - x[i]
                dist = np.linalg.norm(d, axis=1)
                n = d / np.maximum(dist, 1e-12)[:, None]
                overlap = r[i] + r[j] - dist
                vrel = (v[j] + cross(w[j], -r[j, None] * n)) - (v[i] + cross(w[i], r[i, None] * n))
                vn = np.sum(vrel * n, axis=1)
                vt = vrel - vn[:, None] * n
                touch = overlap > 0
                fn, ft, xi_new = _contact_forces(spec, h, xi, n, overlap, vn, vt, m_pair, spec.hertz)
                fn = np.where(touch, fn, 0.0)
                ft = np.where(touch[:, None], ft, 0.0)
                xi = np.where(touch[:, None], xi_new, 0.0)
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
                    i_eff = np.minimum(self.inertia[i], self.inertia[j])
                    mag = np.minimum(spec.rolling_friction * fn * r_eff, wn * i_eff / h)
                    tr = -wr / np.maximum(wn, 1e-300)[:, None] * mag[:, None]
                    ti += tr
                    tj -= tr
                for c in range(3):
                    T[:, c] += np.bincount(i, ti[:, c], P) + np.bincount(j, tj[:, c], P)
            off = 0
            for g, idx in cand:
                K = len(idx)
                sd, n, valid = geom_distance(m, frames, g, x[idx])
                overlap = r[idx] - sd
                touch = valid & (overlap > 0)
                body = m.geom_body[g]
                cp = x[idx] - n * r[idx, None]
                vb = geom_point_velocity(s, body, cp)
                vrel = (v[idx] + cross(w[idx], -r[idx, None] * n)) - vb
                vn = np.sum(vrel * n, axis=1)
                vt = vrel - vn[:, None] * n
                sl = slice(off, off + K)
                fn, ft, xw = _contact_forces(spec, h, wxi[sl], n, overlap, vn, vt, self.mass[idx], spec.hertz)
                fn = np.where(touch, fn, 0.0)
                ft = np.where(touch[:, None], ft, 0.0)
                wxi[sl] = np.where(touch[:, None], xw, 0.0)
                active_wall[sl] = touch
                f = fn[:, None] * n + ft  # on the particle
                F[idx] += f
                T[idx] += cross(-r[idx, None] * n, f)
                if m.body_mode[body] == DYNAMIC and touch.any():
                    fb = -f[touch]
                    acc = body_force.setdefault(body, [np.zeros(3), np.zeros(3)])
                    acc[0] += fb.sum(axis=0) * (h / dt)
                    acc[1] += cross(cp[touch] - s.position[body], fb).sum(axis=0) * (h / dt)
                off += K
            v += (F / self.mass[:, None] + g_acc) * h
            w += T / self.inertia[:, None] * h
            x += v * h
        self.pair_hist.store(pair_key, xi, active_pair)
        self.wall_hist.store(wall_keys, wxi, active_wall)
        for body, (fb, tb) in body_force.items():
            world.external_force[body] += fb
            world.external_torque[body] += tb
            if s.sleeping[body] and np.linalg.norm(fb) > 0:
                world.wake(int(body))

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


def compute_aabbs_one(m, frames, g):
    """World AABB of geom g, computed once per Frames object for all geoms."""
    cache = getattr(frames, "_aabb", None)
    if cache is None:
        cache = compute_aabbs(m, frames.pos, frames.rot, np.zeros(len(frames.pos)))
        frames._aabb = cache
    return cache[0][g], cache[1][g]
