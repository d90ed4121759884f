"""Cloth: extended position-based dynamics (XPBD, Macklin et al. 2016) on a triangle mesh.

Distance constraints along the mesh edges and bending constraints between the vertices opposite each
shared edge, with compliances from the ``deformable`` record. Constraints are coloured so that a colour
shares no free vertex and is solved at once with numpy (Gauss-Seidel order). Pinned vertices have zero
inverse mass and stay where they are. Vertices collide with the rigid geoms as spheres of the collision
radius (position projection with friction); the rigid bodies do not feel the cloth.
"""
from __future__ import annotations

import numpy as np

from .geometry import PLANE
from .granular import compute_aabbs_one
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
