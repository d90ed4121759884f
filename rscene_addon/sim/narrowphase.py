"""Narrowphase: contact points for candidate geom pairs.

Every contact has a world point (midway between the surfaces), a unit normal pointing from geom A to
geom B and a separation (negative when the shapes overlap). Contacts are produced for separations below
a per-pair margin (speculative contacts), so the solver can stop approaching bodies before they touch.

Exact, vectorised paths: sphere-sphere, sphere-box, sphere-capsule, sphere-cylinder, box-box (``boxbox``),
every shape against a plane. Per pair: capsule-capsule (two points when parallel), SAT with face
clipping for other polytope pairs (box-hull, cylinder prisms, hulls), SAT for capsule-polytope, closest
points on triangles for sphere-hull, and height fields (closest points on triangles for spheres and
capsules, vertices and terrain samples for polytopes).
"""
from __future__ import annotations

import numpy as np

from .boxbox import FACE_TOL, box_box  # noqa: F401 (FACE_TOL: one value for both SAT routines)
from .closest import (closest_point_segment, closest_point_triangles, closest_segment_segment,
                      segment_triangles)
from .geometry import BOX, CAPSULE, CONVEX, CYLINDER, HEIGHTFIELD, PLANE, SPHERE
from .mathutil import cross, normalize, tangent_basis

PARALLEL = 1e-6  # edges whose unit directions' cross product is shorter give no edge axis
ARC_EPS = 1e-20  # |n1 x n2|^2 of an edge's face normals below: an arc of no length or a half circle
_BOX_SIGNS = np.array([[sx, sy, sz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)], dtype=np.float64)


class WorldPoly:
    """A polytope in world coordinates."""

    __slots__ = ("poly", "verts", "normals", "offsets", "edge_dirs", "centre")

    def __init__(self, poly, pos, rot):
        self.poly = poly
        self.verts = poly.vertices @ rot.T + pos
        self.normals = poly.normals @ rot.T
        self.offsets = poly.offsets + self.normals @ pos
        self.edge_dirs = poly.edge_dirs @ rot.T
        self.centre = pos


class Frames:
    """World poses of all geoms for one step: pos (G, 3), rot (G, 3, 3); polytopes on demand."""

    def __init__(self, model, pos, rot, static_cache: dict | None = None, static: np.ndarray | None = None):
        self.model = model
        self.pos = pos
        self.rot = rot
        self._poly: dict[int, WorldPoly] = {}
        self._static_cache = static_cache  # world polytopes of geoms on static bodies, kept between steps
        self._static = static

    def poly(self, g: int) -> WorldPoly:
        wp = self._poly.get(g)
        if wp is None:
            keep = self._static_cache is not None and self._static[g]
            wp = self._static_cache.get(g) if keep else None
            if wp is None:
                wp = WorldPoly(self.model.geom_poly[g], self.pos[g], self.rot[g])
                if keep:
                    self._static_cache[g] = wp
            self._poly[g] = wp
        return wp


class ContactBuffer:
    def __init__(self):
        self.pair, self.point, self.normal, self.sep = [], [], [], []

    def add(self, pair, point, normal, sep):
        pair = np.asarray(pair, dtype=np.int64).reshape(-1)
        if len(pair) == 0:
            return
        self.pair.append(pair)
        self.point.append(np.asarray(point, dtype=np.float64).reshape(-1, 3))
        self.normal.append(np.asarray(normal, dtype=np.float64).reshape(-1, 3))
        self.sep.append(np.asarray(sep, dtype=np.float64).reshape(-1))

    def finish(self):
        if not self.pair:
            return np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)
        pair = np.concatenate(self.pair)
        order = np.argsort(pair, kind="stable")
        return (pair[order], np.concatenate(self.point)[order], np.concatenate(self.normal)[order],
                np.concatenate(self.sep)[order])


def reduce_manifold(points: np.ndarray, seps: np.ndarray, k: int) -> np.ndarray:
    """Indices of at most ``k`` points: the deepest, then farthest-point sampling (spread support)."""
    n = len(points)
    if n <= k:
        return np.arange(n)
    chosen = [int(np.argmin(seps))]
    dmin = np.linalg.norm(points - points[chosen[0]], axis=1)
    while len(chosen) < k:
        i = int(np.argmax(dmin))
        if dmin[i] <= 1e-9:
            break
        chosen.append(i)
        dmin = np.minimum(dmin, np.linalg.norm(points - points[i], axis=1))
    return np.array(sorted(chosen), dtype=np.int64)


def _emit_masked(buf, pidx, pts, nrm, sep, mask, max_points):
    """Emit candidate points (K, P, ...) where ``mask`` (K, P); rows with more than ``max_points`` are
    reduced."""
    counts = mask.sum(axis=1)
    over = counts > max_points
    if over.any():
        mask = mask.copy()
        for r in np.nonzero(over)[0]:
            idx = np.nonzero(mask[r])[0]
            keep = idx[reduce_manifold(pts[r, idx], sep[r, idx], max_points)]
            mask[r] = False
            mask[r, keep] = True
    rows, cols = np.nonzero(mask)
    if len(rows) == 0:
        return
    n = nrm[rows] if nrm.ndim == 2 else nrm[rows, cols]
    buf.add(pidx[rows], pts[rows, cols], n, sep[rows, cols])


# ---------------------------------------------------------------------------------------------------------
# Vectorised primitive pairs. Arguments: geom indices ga, gb (K,), margins (K,), pair indices (K,).


def _balls(ca, ra, cb, rb, margin, pidx, buf):
    """Contacts of balls at ``ca``/``cb`` (K, 3) with radii ``ra``/``rb`` (K,): normal from a to b (+z when
    the centres coincide), the point midway between the surfaces."""
    d = cb - ca
    dist = np.linalg.norm(d, axis=1)
    n = np.where(dist[:, None] > 1e-12, d / np.maximum(dist, 1e-300)[:, None], np.array([0.0, 0.0, 1.0]))
    sep = dist - ra - rb
    keep = sep < margin
    pt = ca + n * (ra + 0.5 * sep)[:, None]
    buf.add(pidx[keep], pt[keep], n[keep], sep[keep])


def sphere_sphere(m, fr, ga, gb, margin, pidx, buf, max_points):
    _balls(fr.pos[ga], m.geom_size[ga, 0], fr.pos[gb], m.geom_size[gb, 0], margin, pidx, buf)


def sphere_box(m, fr, ga, gb, margin, pidx, buf, max_points):
    c, r = fr.pos[ga], m.geom_size[ga, 0]
    R, h = fr.rot[gb], m.geom_size[gb]
    cl = np.einsum("kji,kj->ki", R, c - fr.pos[gb])  # R^T (c - pos)
    q = np.clip(cl, -h, h)
    d = cl - q
    dist = np.linalg.norm(d, axis=1)
    outside = dist > 1e-12
    # inside: the face of least penetration
    pen = h - np.abs(cl)
    k = np.argmin(pen, axis=1)
    rows = np.arange(len(k))
    n_in = np.zeros_like(cl)
    n_in[rows, k] = np.where(cl[rows, k] >= 0, 1.0, -1.0)  # outward from the box
    n_out_l = np.where(outside[:, None], d / np.maximum(dist, 1e-300)[:, None], n_in)
    sep = np.where(outside, dist - r, -(pen[rows, k] + r))
    q_in = cl.copy()
    q_in[rows, k] = n_in[rows, k] * h[rows, k]
    surf_b = np.where(outside[:, None], q, q_in)
    n_out = np.einsum("kij,kj->ki", R, n_out_l)
    pb = np.einsum("kij,kj->ki", R, surf_b) + fr.pos[gb]
    pt = pb + n_out * (0.5 * sep)[:, None]
    keep = sep < margin
    buf.add(pidx[keep], pt[keep], -n_out[keep], sep[keep])


def _segments(fr, m, g):
    axis = fr.rot[g][:, :, 2]
    hh = m.geom_size[g, 1]
    return fr.pos[g] - axis * hh[:, None], fr.pos[g] + axis * hh[:, None]


def sphere_capsule(m, fr, ga, gb, margin, pidx, buf, max_points):
    # the sphere against the ball of the capsule's radius at the closest point of its axis
    c = fr.pos[ga]
    a, b = _segments(fr, m, gb)
    q, _ = closest_point_segment(c, a, b)
    _balls(c, m.geom_size[ga, 0], q, m.geom_size[gb, 0], margin, pidx, buf)


def sphere_cylinder(m, fr, ga, gb, margin, pidx, buf, max_points):
    c, r = fr.pos[ga], m.geom_size[ga, 0]
    R = fr.rot[gb]
    rad, hh = m.geom_size[gb, 0], m.geom_size[gb, 1]
    cl = np.einsum("kji,kj->ki", R, c - fr.pos[gb])
    rho = np.hypot(cl[:, 0], cl[:, 1])
    er = np.where(rho[:, None] > 1e-12, np.column_stack((cl[:, 0], cl[:, 1], np.zeros_like(rho)))
                  / np.maximum(rho, 1e-300)[:, None], np.array([1.0, 0.0, 0.0]))
    scale = np.minimum(1.0, rad / np.maximum(rho, 1e-300))
    q = np.column_stack((cl[:, 0] * scale, cl[:, 1] * scale, np.clip(cl[:, 2], -hh, hh)))
    d = cl - q
    dist = np.linalg.norm(d, axis=1)
    outside = dist > 1e-12
    side_pen = rad - rho
    cap_pen = hh - np.abs(cl[:, 2])
    use_side = side_pen < cap_pen
    ez = np.column_stack((np.zeros_like(rho), np.zeros_like(rho), np.where(cl[:, 2] >= 0, 1.0, -1.0)))
    n_in = np.where(use_side[:, None], er, ez)
    pen = np.where(use_side, side_pen, cap_pen)
    q_in = np.where(use_side[:, None], np.column_stack((er[:, :2] * rad[:, None], cl[:, 2])),
                    np.column_stack((cl[:, :2], ez[:, 2] * hh)))
    n_out_l = np.where(outside[:, None], d / np.maximum(dist, 1e-300)[:, None], n_in)
    sep = np.where(outside, dist - r, -(pen + r))
    surf = np.where(outside[:, None], q, q_in)
    n_out = np.einsum("kij,kj->ki", R, n_out_l)
    pt = np.einsum("kij,kj->ki", R, surf) + fr.pos[gb] + n_out * (0.5 * sep)[:, None]
    keep = sep < margin
    buf.add(pidx[keep], pt[keep], -n_out[keep], sep[keep])


def _plane(fr, gb):
    n = fr.rot[gb][:, :, 2]
    return n, np.einsum("ki,ki->k", n, fr.pos[gb])


def sphere_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n, d = _plane(fr, gb)
    c, r = fr.pos[ga], m.geom_size[ga, 0]
    sep = np.einsum("ki,ki->k", n, c) - d - r
    keep = sep < margin
    pt = c - n * (r + 0.5 * sep)[:, None]
    buf.add(pidx[keep], pt[keep], -n[keep], sep[keep])


def box_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n, d = _plane(fr, gb)
    corners = np.einsum("kij,kpj->kpi", fr.rot[ga], _BOX_SIGNS[None] * m.geom_size[ga][:, None, :]) \
        + fr.pos[ga][:, None, :]
    sep = np.einsum("kpi,ki->kp", corners, n) - d[:, None]
    mask = sep < margin[:, None]
    pts = corners - n[:, None, :] * (0.5 * sep)[:, :, None]
    _emit_masked(buf, pidx, pts, -n, sep, mask, max_points)


def capsule_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n, d = _plane(fr, gb)
    a, b = _segments(fr, m, ga)
    r = m.geom_size[ga, 0]
    ends = np.stack((a, b), axis=1)
    sep = np.einsum("kpi,ki->kp", ends, n) - d[:, None] - r[:, None]
    mask = sep < margin[:, None]
    pts = ends - n[:, None, :] * (r[:, None] + 0.5 * sep)[:, :, None]
    _emit_masked(buf, pidx, pts, -n, sep, mask, max_points)


def cylinder_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n, d = _plane(fr, gb)
    R = fr.rot[ga]
    axis = R[:, :, 2]
    rad, hh = m.geom_size[ga, 0], m.geom_size[ga, 1]
    u = -(n - axis * np.einsum("ki,ki->k", n, axis)[:, None])
    un = np.linalg.norm(u, axis=1)
    u = np.where(un[:, None] > 1e-9, u / np.maximum(un, 1e-300)[:, None], R[:, :, 0])
    w = cross(axis, u)
    cands = []
    for sgn in (-1.0, 1.0):
        cap = fr.pos[ga] + axis * (sgn * hh)[:, None]
        for dirv in (u, -u, w, -w):
            cands.append(cap + dirv * rad[:, None])
    pts0 = np.stack(cands, axis=1)  # (K, 8, 3)
    sep = np.einsum("kpi,ki->kp", pts0, n) - d[:, None]
    mask = sep < margin[:, None]
    pts = pts0 - n[:, None, :] * (0.5 * sep)[:, :, None]
    _emit_masked(buf, pidx, pts, -n, sep, mask, max_points)


def convex_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n, d = _plane(fr, gb)
    for k in range(len(ga)):
        wp = fr.poly(int(ga[k]))
        sep = wp.verts @ n[k] - d[k]
        idx = np.nonzero(sep < margin[k])[0]
        if len(idx) == 0:
            continue
        pts = wp.verts[idx] - n[k] * (0.5 * sep[idx])[:, None]
        keep = reduce_manifold(pts, sep[idx], max_points)
        buf.add(np.full(len(keep), pidx[k]), pts[keep], np.broadcast_to(-n[k], (len(keep), 3)),
                sep[idx][keep])


# ---------------------------------------------------------------------------------------------------------
# Per-pair routines


def capsule_capsule(m, fr, ga, gb, margin, pidx, buf, max_points):
    a0, a1 = _segments(fr, m, ga)
    b0, b1 = _segments(fr, m, gb)
    ra, rb = m.geom_size[ga, 0], m.geom_size[gb, 0]
    c1, c2, _, _ = closest_segment_segment(a0, a1, b0, b1)
    for k in range(len(ga)):
        da, db = a1[k] - a0[k], b1[k] - b0[k]
        la, lb = np.linalg.norm(da), np.linalg.norm(db)
        pts = []
        if la > 1e-9 and lb > 1e-9 and np.linalg.norm(np.cross(da / la, db / lb)) < 1e-3:
            # parallel: contacts at both ends of the overlap of B's projection onto A
            ua = da / la
            t0, t1 = sorted((float((b0[k] - a0[k]) @ ua), float((b1[k] - a0[k]) @ ua)))
            lo, hi = max(t0, 0.0), min(t1, la)
            if hi > lo + 1e-6:
                for t in (lo, hi):
                    pa = a0[k] + ua * t
                    pb, _ = closest_point_segment(pa, b0[k], b1[k])
                    pts.append((pa, pb))
        if not pts:
            pts.append((c1[k], c2[k]))
        for pa, pb in pts:
            d = pb - pa
            dist = float(np.linalg.norm(d))
            if dist > 1e-12:
                n = d / dist
            else:
                n = tangent_basis((da / max(la, 1e-300)) if la > 1e-9 else np.array([1.0, 0, 0]))[0]
            sep = dist - ra[k] - rb[k]
            if sep < margin[k]:
                buf.add([pidx[k]], pa + n * (ra[k] + 0.5 * sep), n, [sep])


def minkowski_edges(na: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """(EA, EB) mask: the arc between the normals na[i] (2, 3) crosses the arc nb[j] (2, 3) on the unit
    sphere (both shorter than a half circle); an arc of no length or of half a circle (an edge of one
    face, a flat polytope's rim) crosses every arc, so that its axes are all tried."""
    a1, a2, b1, b2 = na[:, 0], na[:, 1], nb[:, 0], nb[:, 1]
    bxa, dxc = cross(a2, a1), cross(b2, b1)
    cba, dba = b1 @ bxa.T, b2 @ bxa.T  # (EB, EA)
    adc, bdc = a1 @ dxc.T, a2 @ dxc.T  # (EA, EB)
    cross_ = (cba * dba < 0).T & (adc * bdc < 0) & (cba.T * bdc > 0)
    flat_a = np.einsum("ij,ij->i", bxa, bxa) < ARC_EPS
    flat_b = np.einsum("ij,ij->i", dxc, dxc) < ARC_EPS
    return cross_ | flat_a[:, None] | flat_b[None, :]


def polytope_polytope(wa: WorldPoly, wb: WorldPoly, margin: float, max_points: int):
    """SAT with face clipping. Returns (points (K, 3), normal A->B (3,), seps (K,)) or None."""
    # face axes of A
    sep_a = (wb.verts @ wa.normals.T).min(axis=0) - wa.offsets
    fa = int(np.argmax(sep_a))
    if sep_a[fa] > margin:
        return None
    sep_b = (wa.verts @ wb.normals.T).min(axis=0) - wb.offsets
    fb = int(np.argmax(sep_b))
    if sep_b[fb] > margin:
        return None
    # edge-edge axes: the edge pairs whose arcs cross on the Gauss map (of A and of -B), the pairs whose
    # cross product is a face normal of the Minkowski difference (Gregorius, GDC 2013); another edge axis
    # never separates more while the two overlap. Each axis points away from A's centre, its separation
    # is B's lowest vertex minus A's highest along it.
    pa_, pb_ = wa.poly, wb.poly
    ia, ib = np.nonzero(minkowski_edges(wa.normals[pa_.edge_faces], -wb.normals[pb_.edge_faces]))
    best_edge = -np.inf
    if len(ia):
        ax = cross(wa.edge_dirs[pa_.edge_dir_of[ia]], wb.edge_dirs[pb_.edge_dir_of[ib]])
        ln = np.linalg.norm(ax, axis=1)
        valid = np.nonzero(ln > PARALLEL)[0]
        ia, ib = ia[valid], ib[valid]
        axes = ax[valid] / ln[valid, None]
        out = np.einsum("kj,kj->k", axes, wa.verts[pa_.edges[ia, 0]] - wa.verts.mean(axis=0))
        axes[out < 0] *= -1.0
        if len(axes):
            s = (wb.verts @ axes.T).min(axis=0) - (wa.verts @ axes.T).max(axis=0)
            e = int(np.argmax(s))
            best_edge = float(s[e])
            if best_edge > margin:
                return None
    face_best = max(sep_a[fa], sep_b[fb])
    if best_edge > face_best + FACE_TOL:
        ea, eb = pa_.edges[ia[e]], pb_.edges[ib[e]]
        p1, p2, _, _ = closest_segment_segment(wa.verts[ea[0]], wa.verts[ea[1]], wb.verts[eb[0]], wb.verts[eb[1]])
        return (0.5 * (p1 + p2))[None, :], axes[e], np.array([best_edge])
    if sep_b[fb] > sep_a[fa] + FACE_TOL:
        ref, inc, f, flip = wb, wa, fb, True
    else:
        ref, inc, f, flip = wa, wb, fa, False
    n = ref.normals[f]
    d = ref.offsets[f]
    fi = int(np.argmin(inc.normals @ n))
    poly = inc.verts[inc.poly.faces[fi]]
    rv = ref.verts[ref.poly.faces[f]]
    poly = clip_polygon(poly, rv, n)
    if len(poly) == 0:
        return None
    seps = poly @ n - d
    keep = np.nonzero(seps < margin)[0]
    if len(keep) == 0:
        return None
    pts = poly[keep] - n * (0.5 * seps[keep])[:, None]
    seps = seps[keep]
    sel = reduce_manifold(pts, seps, max_points)
    return pts[sel], (-n if flip else n), seps[sel]


def clip_polygon(poly: np.ndarray, ref: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Sutherland-Hodgman: clip polygon (P, 3) by the side planes of the convex polygon ``ref`` (M, 3),
    counter-clockwise about ``n``."""
    m = len(ref)
    side_n = cross(np.roll(ref, -1, axis=0) - ref, np.broadcast_to(n, ref.shape))
    side_d = np.einsum("ij,ij->i", side_n, ref)
    out = poly
    for i in range(m):
        if len(out) == 0:
            break
        dist = out @ side_n[i] - side_d[i]
        if (dist <= 0).all():
            continue
        nxt = np.roll(out, -1, axis=0)
        dn = np.roll(dist, -1)
        res = []
        for j in range(len(out)):
            if dist[j] <= 0:
                res.append(out[j])
            if (dist[j] <= 0) != (dn[j] <= 0):
                t = dist[j] / (dist[j] - dn[j])
                res.append(out[j] + (nxt[j] - out[j]) * t)
        out = np.array(res).reshape(-1, 3)
    return out


def polytope_pairs(m, fr, ga, gb, margin, pidx, buf, max_points):
    for k in range(len(ga)):
        res = polytope_polytope(fr.poly(int(ga[k])), fr.poly(int(gb[k])), float(margin[k]), max_points)
        if res is not None:
            pts, n, seps = res
            buf.add(np.full(len(pts), pidx[k]), pts, np.broadcast_to(n, pts.shape), seps)


def sphere_polytope(m, fr, ga, gb, margin, pidx, buf, max_points):
    for k in range(len(ga)):
        wp = fr.poly(int(gb[k]))
        c, r = fr.pos[ga[k]], m.geom_size[ga[k], 0]
        plane_d = wp.normals @ c - wp.offsets
        f = int(np.argmax(plane_d))
        if plane_d[f] - r > margin[k]:
            continue
        if plane_d[f] <= 0:  # centre inside
            n_out, sep = wp.normals[f], plane_d[f] - r
        else:
            tri = wp.verts[wp.poly.tri_index]
            q = closest_point_triangles(c[None, :], tri[:, 0], tri[:, 1], tri[:, 2])
            dist = np.linalg.norm(c - q, axis=1)
            i = int(np.argmin(dist))
            n_out = (c - q[i]) / max(dist[i], 1e-300)
            sep = dist[i] - r
        if sep < margin[k]:
            buf.add([pidx[k]], c - n_out * (r + 0.5 * sep), -n_out, [sep])


def capsule_polytope_one(a, b, r, wp: WorldPoly, margin: float, max_points: int):
    """Capsule (segment a-b, radius r) against a polytope. Returns (points, normal polytope->capsule,
    seps) or None."""
    sa, sb = wp.normals @ a, wp.normals @ b
    sep_f = np.minimum(sa, sb) - wp.offsets - r
    f = int(np.argmax(sep_f))
    if sep_f[f] > margin:
        return None
    u = b - a
    lu = float(np.linalg.norm(u))
    best_edge, axis = -np.inf, None
    if lu > 1e-9:
        ax = cross(np.broadcast_to(u / lu, wp.edge_dirs.shape), wp.edge_dirs)
        ln = np.linalg.norm(ax, axis=1)
        ok = ln > 1e-6
        if ok.any():
            axes = ax[ok] / ln[ok, None]
            pv = wp.verts @ axes.T
            ps = np.stack((axes @ a, axes @ b))
            s_pos = ps.min(axis=0) - pv.max(axis=0) - r
            s_neg = pv.min(axis=0) - ps.max(axis=0) - r
            s = np.maximum(s_pos, s_neg)
            e = int(np.argmax(s))
            best_edge = float(s[e])
            if best_edge > margin:
                return None
            axis = axes[e] if s_pos[e] >= s_neg[e] else -axes[e]
    if best_edge <= sep_f[f] + FACE_TOL:
        n = wp.normals[f]
        rv = wp.verts[wp.poly.faces[f]]
        side_n = cross(np.roll(rv, -1, axis=0) - rv, np.broadcast_to(n, rv.shape))
        side_d = np.einsum("ij,ij->i", side_n, rv)
        t0, t1 = 0.0, 1.0
        da, du = side_n @ a - side_d, side_n @ u
        for i in range(len(rv)):
            if abs(du[i]) < 1e-15:
                if da[i] > 0:
                    t0, t1 = 1.0, 0.0
                    break
                continue
            t = -da[i] / du[i]
            if du[i] > 0:
                t1 = min(t1, t)
            else:
                t0 = max(t0, t)
        if t1 >= t0:
            ts = [t0] if t1 - t0 < 1e-9 else [t0, t1]
            pts, seps = [], []
            for t in ts:
                q = a + u * t
                s = float(q @ n - wp.offsets[f] - r)
                if s < margin:
                    pts.append(q - n * (r + 0.5 * s))
                    seps.append(s)
            if pts:
                return np.array(pts), n, np.array(seps)
            return None
        if axis is None:
            # segment outside the face region and no edge axis: closest polytope edge
            axis = n
    # edge contact: closest points between the segment and the polytope's nearest edge
    edges = wp.poly.edges
    shape = (len(edges), 3)
    p1, p2, _, _ = closest_segment_segment(np.broadcast_to(a, shape), np.broadcast_to(b, shape),
                                           wp.verts[edges[:, 0]], wp.verts[edges[:, 1]])
    dist = np.linalg.norm(p1 - p2, axis=1)
    i = int(np.argmin(dist))
    if dist[i] > 1e-9:
        n = (p1[i] - p2[i]) / dist[i]
        s = dist[i] - r
    else:
        n, s = axis, best_edge
    if s >= margin:
        return None
    return (p1[i] - n * (r + 0.5 * s))[None, :], n, np.array([s])


def capsule_polytope(m, fr, ga, gb, margin, pidx, buf, max_points, capsule_is_a=True):
    cap, pol = (ga, gb) if capsule_is_a else (gb, ga)
    a0, a1 = _segments(fr, m, cap)
    for k in range(len(ga)):
        res = capsule_polytope_one(a0[k], a1[k], m.geom_size[cap[k], 0], fr.poly(int(pol[k])),
                                   float(margin[k]),
                                   max_points)
        if res is None:
            continue
        pts, n, seps = res
        nn = -n if capsule_is_a else n
        buf.add(np.full(len(pts), pidx[k]), pts, np.broadcast_to(nn, pts.shape), seps)


def box_capsule(m, fr, ga, gb, margin, pidx, buf, max_points):
    capsule_polytope(m, fr, ga, gb, margin, pidx, buf, max_points, capsule_is_a=False)


# ---------------------------------------------------------------------------------------------------------
# Height fields (geom B)


def _shape_aabb(m, fr, g):
    t = m.geom_type[g]
    c = fr.pos[g]
    if t == SPHERE:
        e = np.full(3, m.geom_size[g, 0])
    elif t == CAPSULE:
        e = np.abs(fr.rot[g][:, 2]) * m.geom_size[g, 1] + m.geom_size[g, 0]
    else:
        wp = fr.poly(g)
        return wp.verts.min(axis=0), wp.verts.max(axis=0)
    return c - e, c + e


def round_heightfield(m, fr, ga, gb, margin, pidx, buf, max_points):
    """Spheres and capsules: closest points between the core segment and the terrain triangles."""
    for k in range(len(ga)):
        g = int(ga[k])
        hf = m.geom_hfield[int(gb[k])]
        lo, hi = _shape_aabb(m, fr, g)
        tris = hf.triangles(lo - margin[k], hi + margin[k])
        if len(tris) == 0:
            continue
        r = m.geom_size[g, 0]
        if m.geom_type[g] == SPHERE:
            a = b = fr.pos[g]
        else:
            a, b = _segments(fr, m, np.array([g]))
            a, b = a[0], b[0]
        s_pt, q_pt, dist, pierced = segment_triangles(a, b, tris)
        t0 = tris[:, 0]
        tn = normalize(np.cross(tris[:, 1] - t0, tris[:, 2] - t0))
        pa = np.einsum("ij,ij->i", tn, a - t0)
        pb = np.einsum("ij,ij->i", tn, b - t0)
        low = np.where((pa <= pb)[:, None], a, b)
        plow = np.minimum(pa, pb)
        proj = low - tn * plow[:, None]
        in_prism = _in_triangle(proj, tris, tn)
        deep = pierced | ((plow < 0) & in_prism)
        with np.errstate(invalid="ignore", divide="ignore"):
            safe = np.where(dist > 1e-9, dist, 1.0)[:, None]
            n_out = np.where((dist[:, None] > 1e-9), (s_pt - q_pt) / safe, tn)
        n_out = np.where(deep[:, None], tn, n_out)
        sep = np.where(deep, plow - r, dist - r)
        core = np.where(deep[:, None], low, s_pt)
        ok = np.nonzero(sep < margin[k])[0]
        if len(ok) == 0:
            continue
        pts = core[ok] - n_out[ok] * (r + 0.5 * sep[ok])[:, None]
        pts, nrm, sp = _dedupe(pts, n_out[ok], sep[ok])
        sel = reduce_manifold(pts, sp, min(max_points, 4))
        buf.add(np.full(len(sel), pidx[k]), pts[sel], -nrm[sel], sp[sel])


def _in_triangle(x, tris, n):
    A, B, C = tris[:, 0], tris[:, 1], tris[:, 2]
    c0 = np.einsum("ij,ij->i", np.cross(B - A, x - A), n)
    c1 = np.einsum("ij,ij->i", np.cross(C - B, x - B), n)
    c2 = np.einsum("ij,ij->i", np.cross(A - C, x - C), n)
    return (c0 >= 0) & (c1 >= 0) & (c2 >= 0)


def _dedupe(pts, nrm, sep, tol=1e-6):
    order = np.argsort(sep, kind="stable")
    keep = []
    for i in order:
        if all(np.linalg.norm(pts[i] - pts[j]) > tol for j in keep):
            keep.append(i)
    keep = np.array(sorted(keep), dtype=np.int64)
    return pts[keep], nrm[keep], sep[keep]


def polytope_heightfield(m, fr, ga, gb, margin, pidx, buf, max_points):
    """Boxes, cylinders (as prisms) and hulls: polytope vertices against the surface, and terrain samples
    inside the polytope."""
    for k in range(len(ga)):
        g = int(ga[k])
        hf = m.geom_hfield[int(gb[k])]
        wp = fr.poly(g)
        mg = float(margin[k])
        pts_l, n_l, s_l = [], [], []
        v = wp.verts
        z, tn, inside = hf.height_normal(v[:, 0], v[:, 1])
        sep = (v[:, 2] - z) * tn[:, 2]
        ok = inside & (sep < mg)
        if ok.any():
            pts_l.append(v[ok] - tn[ok] * (0.5 * sep[ok])[:, None])
            n_l.append(tn[ok])
            s_l.append(sep[ok])
        lo, hi = v.min(axis=0) - mg, v.max(axis=0) + mg
        gp = hf.grid_points(lo, hi)
        if len(gp):
            pd = gp @ wp.normals.T - wp.offsets  # (K, F)
            f = np.argmax(pd, axis=1)
            s = pd[np.arange(len(gp)), f]
            # a sample pushes only through a face that looks down onto the terrain (not sideways)
            ok = (s < mg) & (-wp.normals[f, 2] > 0.3)
            if ok.any():
                n_out = -wp.normals[f[ok]]
                pts_l.append(gp[ok] - wp.normals[f[ok]] * (0.5 * s[ok])[:, None])
                n_l.append(n_out)
                s_l.append(s[ok])
        if not pts_l:
            continue
        pts, nrm, sp = np.concatenate(pts_l), np.concatenate(n_l), np.concatenate(s_l)
        sel = reduce_manifold(pts, sp, max_points)
        buf.add(np.full(len(sel), pidx[k]), pts[sel], -nrm[sel], sp[sel])


# ---------------------------------------------------------------------------------------------------------
# Dispatch

def _swap(fn):
    """Run a handler written for (B, A) on pairs (A, B): swap the geoms and flip the normals."""
    def run(m, fr, ga, gb, margin, pidx, buf, max_points):
        sub = ContactBuffer()
        fn(m, fr, gb, ga, margin, pidx, sub, max_points)
        for i in range(len(sub.pair)):
            buf.add(sub.pair[i], sub.point[i], -sub.normal[i], sub.sep[i])
    return run


HANDLERS = {
    (SPHERE, SPHERE): sphere_sphere,
    (SPHERE, BOX): sphere_box,
    (SPHERE, CAPSULE): sphere_capsule,
    (SPHERE, CYLINDER): sphere_cylinder,
    (SPHERE, CONVEX): sphere_polytope,
    (SPHERE, PLANE): sphere_plane,
    (SPHERE, HEIGHTFIELD): round_heightfield,
    (BOX, BOX): box_box,
    (BOX, CAPSULE): box_capsule,
    (BOX, CYLINDER): polytope_pairs,
    (BOX, CONVEX): polytope_pairs,
    (BOX, PLANE): box_plane,
    (BOX, HEIGHTFIELD): polytope_heightfield,
    (CAPSULE, CAPSULE): capsule_capsule,
    (CAPSULE, CYLINDER): capsule_polytope,
    (CAPSULE, CONVEX): capsule_polytope,
    (CAPSULE, PLANE): capsule_plane,
    (CAPSULE, HEIGHTFIELD): round_heightfield,
    (CYLINDER, CYLINDER): polytope_pairs,
    (CYLINDER, CONVEX): polytope_pairs,
    (CYLINDER, PLANE): cylinder_plane,
    (CYLINDER, HEIGHTFIELD): polytope_heightfield,
    (CONVEX, CONVEX): polytope_pairs,
    (CONVEX, PLANE): convex_plane,
    (CONVEX, HEIGHTFIELD): polytope_heightfield,
}


def collide(m, fr: Frames, pairs: np.ndarray, margins: np.ndarray, max_points: int, handlers: dict | None = None):
    """Contacts of candidate pairs (P, 2) of geoms. Returns (pair index (C,), point (C, 3),
    normal from pairs[:, 0] to pairs[:, 1] (C, 3), separation (C,)), sorted by pair index.
    ``handlers``: another table than ``HANDLERS`` (the compiled backend's)."""
    table = HANDLERS if handlers is None else handlers
    buf = ContactBuffer()
    if len(pairs) == 0:
        return buf.finish()
    ta, tb = m.geom_type[pairs[:, 0]], m.geom_type[pairs[:, 1]]
    swap = ta > tb
    ga = np.where(swap, pairs[:, 1], pairs[:, 0])
    gb = np.where(swap, pairs[:, 0], pairs[:, 1])
    key = np.minimum(ta, tb) * 8 + np.maximum(ta, tb)
    pidx_all = np.arange(len(pairs))
    for kv in np.unique(key):
        sel = np.nonzero(key == kv)[0]
        handler = table.get((int(kv) // 8, int(kv) % 8))
        if handler is None:
            continue
        sub = ContactBuffer()
        handler(m, fr, ga[sel], gb[sel], margins[sel], pidx_all[sel], sub, max_points)
        for i in range(len(sub.pair)):
            flip = swap[sub.pair[i]]
            buf.add(sub.pair[i], sub.point[i], np.where(flip[:, None], -sub.normal[i], sub.normal[i]),
                    sub.sep[i])
    return buf.finish()

