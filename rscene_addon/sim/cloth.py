"""Cloth: extended position-based dynamics (XPBD, Macklin et al. 2016) on a triangle mesh.

Distance constraints along the mesh edges and bending constraints between the vertices opposite each
shared edge, with compliances from the ``deformable`` record. Constraints are coloured so that a colour
shares no free vertex and is solved at once with numpy (Gauss-Seidel order). Pinned vertices have zero
inverse mass and stay where they are. Vertices collide with the rigid geoms as spheres of the collision
radius (position projection with friction); the rigid bodies do not feel the cloth.

On the numba backend the substeps of a world step are one compiled call (``kernels.cloth``, the same
formulas in the same order, constraints sorted by colour); numpy stays the reference, and runs a step
whose cloth meets a height field.
"""
from __future__ import annotations

import numpy as np

from .geometry import HEIGHTFIELD, PLANE
from .granular import _geom_tables, compute_aabbs_one
from .physics_model import ClothSpec
from .sdf import geom_distance


def _color(pairs: np.ndarray, free: np.ndarray) -> list[np.ndarray]:
    used: dict[int, int] = {}
    colors = []
    fr = free.tolist()
    for a, b in pairs.tolist():
        mask = (used.get(a, 0) if fr[a] else 0) | (used.get(b, 0) if fr[b] else 0)
        c = ((~mask) & (mask + 1)).bit_length() - 1
        if fr[a]:
            used[a] = used.get(a, 0) | (1 << c)
        if fr[b]:
            used[b] = used.get(b, 0) | (1 << c)
        colors.append(c)
    colors = np.array(colors, dtype=np.int64)
    return [np.nonzero(colors == c)[0] for c in range(int(colors.max()) + 1)] if len(colors) else []


class Cloth:
    def __init__(self, spec: ClothSpec, model):
        self.spec = spec
        free = spec.inv_mass > 0
        # constraints touching only pinned vertices do nothing
        e_ok = free[spec.edges[:, 0]] | free[spec.edges[:, 1]]
        self.edges, self.rest = spec.edges[e_ok], spec.rest[e_ok]
        b_ok = free[spec.bends[:, 0]] | free[spec.bends[:, 1]] if len(spec.bends) else np.zeros(0, bool)
        self.bends, self.bend_rest = spec.bends[b_ok], spec.bend_rest[b_ok]
        self.edge_colors = _color(self.edges, free)
        self.bend_colors = _color(self.bends, free)
        self.free = free
        g = model.geom_group
        mk = model.geom_mask
        grp, msk = np.uint64(spec.group), np.uint64(spec.mask)
        collide = ((g & msk) != 0) & ((grp & mk) != 0)  # RaiSim's group/mask rule
        self.geoms = np.nonzero(collide)[0] if spec.mask else np.zeros(0, np.int64)
        self._tables = None  # the compiled path's arrays, made on its first step

    def _compiled_tables(self, m):
        """Constraints sorted by colour (the order numpy solves them in), free vertices, geom tables."""
        e = np.concatenate(self.edge_colors) if self.edge_colors else np.zeros(0, np.int64)
        b = np.concatenate(self.bend_colors) if self.bend_colors else np.zeros(0, np.int64)
        c = np.ascontiguousarray
        return dict(edges=c(self.edges[e].reshape(-1, 2), dtype=np.int64), rest=c(self.rest[e], dtype=np.float64),
                    bends=c(self.bends[b].reshape(-1, 2), dtype=np.int64),
                    bend_rest=c(self.bend_rest[b], dtype=np.float64),
                    free=np.nonzero(self.free)[0].astype(np.int64), w=c(self.spec.inv_mass, dtype=np.float64),
                    geoms=self.geoms.astype(np.int64), geom_tables=_geom_tables(m))

    def _project(self, x, w, pairs, rest, colors, alpha, lam):
        for idx in colors:
            a, b = pairs[idx, 0], pairs[idx, 1]
            d = x[a] - x[b]
            L = np.linalg.norm(d, axis=1)
            n = d / np.maximum(L, 1e-12)[:, None]
            C = L - rest[idx]
            wa, wb = w[a], w[b]
            dl = (-C - alpha * lam[idx]) / np.maximum(wa + wb + alpha, 1e-300)
            lam[idx] += dl
            x[a] += (wa * dl)[:, None] * n
            x[b] -= (wb * dl)[:, None] * n

    def step(self, world, k: int, frames, dt: float) -> None:
        s, spec, m = world.state, self.spec, world.model
        x, v = s.cloth[k], s.cloth_velocity[k]
        w = spec.inv_mass
        free = self.free
        h = dt / spec.substeps
        a_d = spec.distance_compliance / (h * h)
        a_b = spec.bend_compliance / (h * h)
        damp = np.exp(-spec.damping * h)
        if world.backend == "numba" and not np.any(m.geom_type[self.geoms] == HEIGHTFIELD):
            if not (x.flags.c_contiguous and v.flags.c_contiguous):  # one compiled signature: C arrays
                s.cloth[k], s.cloth_velocity[k] = x, v = np.ascontiguousarray(x), np.ascontiguousarray(v)
            self._step_compiled(m, frames, x, v, h, a_d, a_b, damp)
            return
        for _ in range(spec.substeps):
            x_prev = x.copy()
            v[free] = (v[free] + m.gravity * h) * damp
            x[free] += v[free] * h
            lam_d = np.zeros(len(self.edges))
            lam_b = np.zeros(len(self.bends))
            for _ in range(spec.iterations):
                self._project(x, w, self.edges, self.rest, self.edge_colors, a_d, lam_d)
                if len(self.bends):
                    self._project(x, w, self.bends, self.bend_rest, self.bend_colors, a_b, lam_b)
            self._collide(m, frames, x, x_prev, free)
            v[:] = np.where(free[:, None], (x - x_prev) / h, 0.0)

    def _step_compiled(self, m, frames, x, v, h, a_d, a_b, damp):
        """``step``'s substeps as one call of ``kernels.cloth.substeps``; x, v updated in place."""
        from . import kernels
        kern = kernels.load_cloth()
        if self._tables is None:
            self._tables = self._compiled_tables(m)
        t, spec = self._tables, self.spec
        K = len(self.geoms)
        g_lo, g_hi = np.zeros((K, 3)), np.zeros((K, 3))
        for k, g in enumerate(self.geoms.tolist()):
            if m.geom_type[g] != PLANE:
                g_lo[k], g_hi[k] = compute_aabbs_one(m, frames, g)
        g_type, g_size, p_start, p_normals, p_offsets = t["geom_tables"][:5]  # height fields: numpy
        kern.substeps(x, v, t["w"], t["free"], t["edges"], t["rest"], t["bends"], t["bend_rest"],
                      np.asarray(m.gravity, dtype=np.float64), spec.substeps, spec.iterations, h, a_d, a_b, damp,
                      float(spec.radius), float(spec.friction), t["geoms"], g_lo, g_hi, g_type,
                      np.ascontiguousarray(frames.pos, dtype=np.float64),
                      np.ascontiguousarray(frames.rot, dtype=np.float64), g_size, p_start, p_normals, p_offsets)

    def _collide(self, m, frames, x, x_prev, free):
        r = self.spec.radius
        mu = self.spec.friction
        if len(self.geoms) == 0:
            return
        lo, hi = x.min(axis=0) - r, x.max(axis=0) + r
        for g in self.geoms.tolist():
            if m.geom_type[g] != PLANE:
                glo, ghi = compute_aabbs_one(m, frames, g)
                if np.any(glo > hi) or np.any(ghi < lo):
                    continue
            idx = np.nonzero(free)[0]
            sd, n, valid = geom_distance(m, frames, g, x[idx])
            pen = r - sd
            hit = valid & (pen > 0)
            if not hit.any():
                continue
            ids = idx[hit]
            nn = n[hit]
            x[ids] += nn * pen[hit][:, None]
            # friction: cancel tangential motion up to mu * penetration
            dx = x[ids] - x_prev[ids]
            dt_ = dx - np.sum(dx * nn, axis=1, keepdims=True) * nn
            lt = np.linalg.norm(dt_, axis=1)
            scale = np.minimum(mu * pen[hit] / np.maximum(lt, 1e-300), 1.0)
            x[ids] -= dt_ * scale[:, None]
