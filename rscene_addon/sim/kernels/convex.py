"""Contacts of convex polytopes (boxes in mixed pairs, cylinder prisms, mesh hulls), compiled, one pair per
call: the rules and point sets of ``sim.narrowphase`` (``polytope_polytope``: SAT over face and edge axes
with face clipping; ``sphere_polytope``; ``capsule_polytope_one``; ``convex_plane``).

Polytopes travel packed (``pack``): per polytope runs of vertices, faces (normal, offset, vertex ids),
edges, edge directions and triangles in flat arrays, ``poly_of[g]`` naming each geom's. A pair turns its
two polytopes into the world in scratch arrays (``scratch``), allocated once per narrowphase call."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .boxes import FACE_TOL, _reduce
from .primitives import closest_segments, emit, plane_of, segment

PARALLEL = 1e-6  # as narrowphase.PARALLEL
ARC_EPS = 1e-20  # as narrowphase.ARC_EPS
CACHED_MAX = 1024  # polytope geoms up to which each pair's last separating axis is kept (8 MiB)


def pack(geom_poly):
    """The polytopes of ``geom_poly`` (a Polytope or None per geom; shared ones packed once) as a tuple
    (poly_of (G,), v_start, verts, f_start, normals, offsets, fv_start, fv, e_start, edges, edge_dir_of,
    d_start, dirs, t_start, tris, centre, inradius, edge_faces, slot_of, axis_cache); ``*_start`` (P + 1,) index
    the runs, vertex ids are the polytope's own; centre: the mean of its vertices (inside it), inradius: the
    radius of the ball about the centre inside it (what bounds an axis's separation from above, see
    ``polytope_pair``); slot_of (G,): each polytope geom's row in axis_cache (S, S), the last separating
    axis of each ordered pair (``polytope_pair``; none for worlds of more than ``CACHED_MAX`` polytopes)."""
    index: dict[int, int] = {}
    polys = []
    poly_of = np.full(len(geom_poly), -1, np.int64)
    for g, poly in enumerate(geom_poly):
        if poly is None:
            continue
        k = index.get(id(poly))
        if k is None:
            k = index[id(poly)] = len(polys)
            polys.append(poly)
        poly_of[g] = k

    def starts(sizes):
        return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)

    def cat(arrays, cols, dtype=np.float64):
        if not arrays:
            return np.zeros((0, cols) if cols else 0, dtype)
        out = np.concatenate([np.asarray(a, dtype).reshape((-1, cols) if cols else -1) for a in arrays])
        return np.ascontiguousarray(out)

    faces = [f for p in polys for f in p.faces]
    slot_of = np.full(len(geom_poly), -1, np.int64)
    S = int(np.sum(poly_of >= 0))
    if S > CACHED_MAX:
        S = 0
    else:
        slot_of[poly_of >= 0] = np.arange(S)
    return (poly_of,
            starts([len(p.vertices) for p in polys]), cat([p.vertices for p in polys], 3),
            starts([len(p.faces) for p in polys]), cat([p.normals for p in polys], 3),
            cat([p.offsets for p in polys], 0),
            starts([len(f) for f in faces]), cat(faces, 0, np.int64),
            starts([len(p.edges) for p in polys]), cat([p.edges for p in polys], 2, np.int64),
            cat([p.edge_dir_of for p in polys], 0, np.int64),
            starts([len(p.edge_dirs) for p in polys]), cat([p.edge_dirs for p in polys], 3),
            starts([len(p.tri_index) for p in polys]), cat([p.tri_index for p in polys], 3, np.int64),
            cat([p.vertices.mean(axis=0) for p in polys], 3),
            cat([np.min(p.offsets - p.normals @ p.vertices.mean(axis=0)) for p in polys], 0),
            cat([p.edge_faces for p in polys], 2, np.int64),
            slot_of, np.zeros((S, S), np.int64))


def largest(polys):
    """The scratch sizes a pair needs: most vertices, faces, edges, edge directions, face vertices,
    triangles."""
    (_, v_start, _, f_start, _, _, fv_start, _, e_start, _, _, d_start, _, t_start, _, _, _, _, _, _) = polys
    big = 1
    for s in (v_start, f_start, e_start, d_start, t_start, fv_start):
        if len(s) > 1:
            big = max(big, int(np.diff(s).max()))
    return big


@njit(cache=True)
def world_poly(k, g, pos, rot, v_start, verts, f_start, normals, offsets, d_start, dirs, wv, wn, wo, wd):
    """Polytope k at geom g's pose: vertices, face normals and offsets, edge directions (into wv, wn, wo,
    wd). Returns (vertices, faces, directions). The packed arrays come one by one, not as ``pack``'s tuple:
    numba counts a reference to every array of a tuple on each call, which cost more than the work."""
    nv = v_start[k + 1] - v_start[k]
    for i in range(nv):
        v = verts[v_start[k] + i]
        for x in range(3):
            wv[i, x] = rot[g, x, 0] * v[0] + rot[g, x, 1] * v[1] + rot[g, x, 2] * v[2] + pos[g, x]
    nf = f_start[k + 1] - f_start[k]
    for i in range(nf):
        nrm = normals[f_start[k] + i]
        for x in range(3):
            wn[i, x] = rot[g, x, 0] * nrm[0] + rot[g, x, 1] * nrm[1] + rot[g, x, 2] * nrm[2]
        wo[i] = offsets[f_start[k] + i] + wn[i, 0] * pos[g, 0] + wn[i, 1] * pos[g, 1] + wn[i, 2] * pos[g, 2]
    nd = d_start[k + 1] - d_start[k]
    for i in range(nd):
        d = dirs[d_start[k] + i]
        for x in range(3):
            wd[i, x] = rot[g, x, 0] * d[0] + rot[g, x, 1] * d[1] + rot[g, x, 2] * d[2]
    return nv, nf, nd


@njit(cache=True)
def posed_cache(polys, G):
    """Per-geom runs for the world data of every geom's polytope in one narrowphase call: (vertex, face and
    direction run starts (G + 1,), done (G,), vertices, normals, offsets, directions), filled on a geom's
    first pair (``world_poly``, by ``narrow.shape_contacts``), so a hull in many pairs turns into the world
    once, not once per pair."""
    poly_of, v_start, f_start, d_start = polys[0], polys[1], polys[3], polys[11]
    gv = np.zeros(G + 1, np.int64)
    gf = np.zeros(G + 1, np.int64)
    gd = np.zeros(G + 1, np.int64)
    for g in range(G):
        k = poly_of[g]
        nv = nf = nd = 0
        if k >= 0:
            nv, nf, nd = v_start[k + 1] - v_start[k], f_start[k + 1] - f_start[k], d_start[k + 1] - d_start[k]
        gv[g + 1], gf[g + 1], gd[g + 1] = gv[g] + nv, gf[g] + nf, gd[g] + nd
    return (gv, gf, gd, np.zeros(G, np.bool_), np.empty((gv[G], 3)), np.empty((gf[G], 3)), np.empty(gf[G]),
            np.empty((gd[G], 3)))


@njit(cache=True)
def _farthest_face(wn, wo, nf, cx, cy, cz):
    """The face plane that point c is farthest outside (world normals wn, offsets wo): (its signed
    distance, the face; the first of equals)."""
    f = 0
    best = -np.inf
    for i in range(nf):
        s = wn[i, 0] * cx + wn[i, 1] * cy + wn[i, 2] * cz - wo[i]
        if s > best:
            best, f = s, i
    return best, f


@njit(cache=True)
def _face_sep(wv_b, nv_b, wn_a, wo_a, nf_a, cx, cy, cz, room, margin, fd):
    """max over A's faces of (min over B's vertices of n . v) - offset, and that face (the first of equals);
    stops early once beyond the margin (then no contact, whichever face). B holds the ball of radius rho
    about c, so a face separates by at most n . c - rho - offset: first the face of the highest bound is
    projected, then only the faces whose bound (``room``: rho less rounding) reaches its separation, since
    no other can be the maximum (the same maximum and the same face with most projections skipped).
    ``fd``: each face's n . c - offset (``_farthest_face``'s arithmetic), kept for ``_arc_edges``."""
    f0 = 0
    top = -np.inf
    for i in range(nf_a):
        fd[i] = wn_a[i, 0] * cx + wn_a[i, 1] * cy + wn_a[i, 2] * cz - wo_a[i]
        if fd[i] > top:
            top, f0 = fd[i], i
    lo = np.inf
    for i in range(nv_b):
        lo = min(lo, wv_b[i, 0] * wn_a[f0, 0] + wv_b[i, 1] * wn_a[f0, 1] + wv_b[i, 2] * wn_a[f0, 2])
    floor = lo - wo_a[f0]
    if floor > margin:
        return floor, f0
    best = -np.inf
    fa = 0
    for f in range(nf_a):
        if f != f0 and fd[f] - room < floor:
            continue
        lo = np.inf
        for i in range(nv_b):
            s = wv_b[i, 0] * wn_a[f, 0] + wv_b[i, 1] * wn_a[f, 1] + wv_b[i, 2] * wn_a[f, 2]
            if s < lo:
                lo = s
        s = lo - wo_a[f]
        if s > best:
            best, fa = s, f
    return best, fa


@njit(cache=True)
def _project(wv, nv, x, y, z):
    lo, hi = np.inf, -np.inf
    for i in range(nv):
        s = wv[i, 0] * x + wv[i, 1] * y + wv[i, 2] * z
        lo = min(lo, s)
        hi = max(hi, s)
    return lo, hi


@njit(cache=True)
def clip(poly, n_poly, ref, n_ref, nx, ny, nz, tmp):
    """Sutherland-Hodgman (``narrowphase.clip_polygon``): clip poly[:n_poly] in place by the side planes of
    the convex polygon ref[:n_ref] (counter-clockwise about n). Returns the new length."""
    for i in range(n_ref):
        if n_poly == 0:
            break
        j1 = (i + 1) % n_ref
        ex, ey, ez = ref[j1, 0] - ref[i, 0], ref[j1, 1] - ref[i, 1], ref[j1, 2] - ref[i, 2]
        sx, sy, sz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
        sd = sx * ref[i, 0] + sy * ref[i, 1] + sz * ref[i, 2]
        out_any = False
        for j in range(n_poly):
            if poly[j, 0] * sx + poly[j, 1] * sy + poly[j, 2] * sz - sd > 0:
                out_any = True
                break
        if not out_any:
            continue
        m = 0
        for j in range(n_poly):
            jn = (j + 1) % n_poly
            dj = poly[j, 0] * sx + poly[j, 1] * sy + poly[j, 2] * sz - sd
            dn = poly[jn, 0] * sx + poly[jn, 1] * sy + poly[jn, 2] * sz - sd
            if dj <= 0:
                for x in range(3):
                    tmp[m, x] = poly[j, x]
                m += 1
            if (dj <= 0) != (dn <= 0):
                t = dj / (dj - dn)
                for x in range(3):
                    tmp[m, x] = poly[j, x] + (poly[jn, x] - poly[j, x]) * t
                m += 1
        for j in range(m):
            for x in range(3):
                poly[j, x] = tmp[j, x]
        n_poly = m
    return n_poly


@njit(cache=True)
def scratch(big):
    """For polytopes of at most ``big`` of anything: one polytope's world data (vertices, normals, offsets,
    directions), then ``polytope_pair``'s clipping buffers (poly, ref, tmp, seps, ok, keep, dmin), edge
    lists (keep_a, keep_b, xa, xb) and face bounds (fd_a, fd_b)."""
    n = big + 1
    return (np.empty((n, 3)), np.empty((n, 3)), np.empty(n), np.empty((n, 3)),
            np.empty((4 * n + 8, 3)), np.empty((4 * n + 8, 3)), np.empty((4 * n + 8, 3)), np.empty(4 * n + 8),
            np.empty(4 * n + 8, np.bool_), np.empty(4 * n + 8, np.bool_), np.empty(4 * n + 8),
            np.empty(n, np.int64), np.empty(n, np.int64), np.empty((n, 3)), np.empty((n, 3)), np.empty(n),
            np.empty(n))


@njit(cache=True)
def _arc_edges(e0, e1, edge_faces, wn, dx, dy, dz, reach, near, keep, xs, fd):
    """The edges e0..e1 whose arc on the Gauss map (between their faces' normals n1, n2) holds a direction
    n with n . d >= reach, into keep, with n2 x n1 into xs (an arc of no length or of half a circle, whose
    n2 x n1 vanishes, is always kept). Returns how many. ``fd``: the faces' n . c - offset (``_face_sep``).

    Most arcs fail a tighter, cheaper test first: on the arc of an edge with a vertex v, the polytope's
    support is n . v, so an axis there separates by at most n . (c - v) - rho (c, rho: the other
    polytope's centre and inradius), n . (c - v) = n . c - offset at the arc's ends (v lies on both
    faces) and n . (c - v) <= max(n1 . (c - v), n2 . (c - v)) / cos(t / 2) on an arc of angle t (<= that
    maximum when it is negative). ``near``: the least such bound worth keeping (the best so far + rho
    less rounding)."""
    n2 = near * near * (1.0 - 1e-9)
    k = 0
    for e in range(e0, e1):
        f1, f2 = edge_faces[e, 0], edge_faces[e, 1]
        ax, ay, az = wn[f1, 0], wn[f1, 1], wn[f1, 2]
        bx, by, bz = wn[f2, 0], wn[f2, 1], wn[f2, 2]
        c = ax * bx + ay * by + az * bz
        if abs(c) < 1.0 - 1e-6:  # clearly neither of no length nor a half circle (those are always kept)
            top = max(fd[f1], fd[f2])
            if top <= 0.0:
                if top < near:
                    continue
            elif near > 0.0 and top * top < n2 * 0.5 * (1.0 + c):
                continue
        mx, my, mz = by * az - bz * ay, bz * ax - bx * az, bx * ay - by * ax  # n2 x n1
        mm = mx * mx + my * my + mz * mz
        high = max(ax * dx + ay * dy + az * dz, bx * dx + by * dy + bz * dz)
        if mm < ARC_EPS:
            high = np.inf
        elif high < reach:  # the arc's highest point may be inside it: d's part in the arc's plane
            md = (mx * dx + my * dy + mz * dz) / mm
            tx, ty, tz = dx - mx * md, dy - my * md, dz - mz * md
            # t between n1 and n2 (t = a n1 + b n2, a, b >= 0), with a little room for rounding
            u = ((ty * bz - tz * by) * mx + (tz * bx - tx * bz) * my + (tx * by - ty * bx) * mz)  # (t x n2).m
            v = ((ay * tz - az * ty) * mx + (az * tx - ax * tz) * my + (ax * ty - ay * tx) * mz)  # (n1 x t).m
            if u <= 1e-12 and v <= 1e-12:
                high = math.sqrt(tx * tx + ty * ty + tz * tz)
        if high >= reach:
            keep[k] = e
            xs[k, 0], xs[k, 1], xs[k, 2] = mx, my, mz
            k += 1
    return k


@njit(cache=True)
def _face_gap(wv, nv, wn, wo, f):
    """min over the vertices wv of n_f . v - offset_f: one face axis of ``_face_sep``, its arithmetic."""
    lo = np.inf
    for i in range(nv):
        lo = min(lo, wv[i, 0] * wn[f, 0] + wv[i, 1] * wn[f, 1] + wv[i, 2] * wn[f, 2])
    return lo - wo[f]


@njit(cache=True)
def _edge_gap(e, f, edges, edge_dir_of, edge_faces, wva, wna, wda, nva, wvb, wnb, wdb, nvb, cax, cay, caz):
    """The separation along the axis of A's edge e and B's edge f as ``polytope_pair``'s edge search has it
    (the same arithmetic), or -inf where that search never projects the pair (arcs that do not cross on
    the Gauss maps, parallel edges)."""
    a1, a2 = wna[edge_faces[e, 0]], wna[edge_faces[e, 1]]
    b1, b2 = wnb[edge_faces[f, 0]], wnb[edge_faces[f, 1]]
    xa0, xa1, xa2 = a2[1] * a1[2] - a2[2] * a1[1], a2[2] * a1[0] - a2[0] * a1[2], a2[0] * a1[1] - a2[1] * a1[0]
    xb0, xb1, xb2 = b2[1] * b1[2] - b2[2] * b1[1], b2[2] * b1[0] - b2[0] * b1[2], b2[0] * b1[1] - b2[1] * b1[0]
    if xa0 * xa0 + xa1 * xa1 + xa2 * xa2 >= ARC_EPS and xb0 * xb0 + xb1 * xb1 + xb2 * xb2 >= ARC_EPS:
        cba = -b1[0] * xa0 - b1[1] * xa1 - b1[2] * xa2
        dba = -b2[0] * xa0 - b2[1] * xa1 - b2[2] * xa2
        adc = a1[0] * xb0 + a1[1] * xb1 + a1[2] * xb2
        bdc = a2[0] * xb0 + a2[1] * xb1 + a2[2] * xb2
        if not (cba * dba < 0 and adc * bdc < 0 and cba * bdc > 0):
            return -np.inf
    da, db = wda[edge_dir_of[e]], wdb[edge_dir_of[f]]
    cx = da[1] * db[2] - da[2] * db[1]
    cy = da[2] * db[0] - da[0] * db[2]
    cz = da[0] * db[1] - da[1] * db[0]
    ln = math.sqrt(cx * cx + cy * cy + cz * cz)
    if not ln > PARALLEL:
        return -np.inf
    cx, cy, cz = cx / ln, cy / ln, cz / ln
    va = wva[edges[e, 0]]
    if cx * (va[0] - cax) + cy * (va[1] - cay) + cz * (va[2] - caz) < 0:
        cx, cy, cz = -cx, -cy, -cz
    return _project(wvb, nvb, cx, cy, cz)[0] - _project(wva, nva, cx, cy, cz)[1]


FACE_A, FACE_B, EDGES = 1, 2, 3  # the kinds of a cached axis: (kind << 48) | (i << 24) | j
LOW = (1 << 24) - 1


@njit(cache=True)
def polytope_pair(p, ga, gb, ka, kb, wva, wna, woa, wda, wvb, wnb, wob, wdb, pos, rot, cen, inr, f_start, fv_start,
                  fv, e_start, edges, edge_dir_of, edge_faces, ia, ib, axes, margin, max_points, poly, ref, tmp, seps,
                  ok, keep, dmin, keep_a, keep_b, xa, xb, fd_a, fd_b, out_pair, out_pt, out_n, out_sep, count):
    """``narrowphase.polytope_polytope``: SAT (face axes, and edge axes of the edge pairs that form faces
    of the Minkowski difference), then one edge-edge midpoint or the incident face clipped by the
    reference face, normal A->B. Geoms ga, gb hold polytopes ka, kb (``pack``'s arrays, given one by one),
    posed in the world as wv*, wn*, wo*, wd* (vertices, face normals and offsets, edge directions: runs of
    ``posed_cache``); ia, ib: their rows in the axis cache ``axes`` (-1: none); then ``scratch``'s buffers."""
    nva, nfa, nvb, nfb = wva.shape[0], wna.shape[0], wvb.shape[0], wnb.shape[0]
    # Each polytope holds the ball of its inradius rho about its centre c: that bounds every axis's
    # separation from above (faces: ``_face_sep``; edges: below), which skips most projections.
    cax, cay, caz = pos[ga, 0], pos[ga, 1], pos[ga, 2]
    cbx, cby, cbz = pos[gb, 0], pos[gb, 1], pos[gb, 2]
    dcx, dcy, dcz = pos[gb, 0] - cax, pos[gb, 1] - cay, pos[gb, 2] - caz
    for x in range(3):
        cax += rot[ga, 0, x] * cen[ka, x]
        cay += rot[ga, 1, x] * cen[ka, x]
        caz += rot[ga, 2, x] * cen[ka, x]
        cbx += rot[gb, 0, x] * cen[kb, x]
        cby += rot[gb, 1, x] * cen[kb, x]
        cbz += rot[gb, 2, x] * cen[kb, x]
        dcx += rot[gb, 0, x] * cen[kb, x] - rot[ga, 0, x] * cen[ka, x]
        dcy += rot[gb, 1, x] * cen[kb, x] - rot[ga, 1, x] * cen[ka, x]
        dcz += rot[gb, 2, x] * cen[kb, x] - rot[ga, 2, x] * cen[ka, x]
    # rounding: a bound never drops below what is projected (coordinates up to |c|)
    tol = 1e-9 * (1.0 + abs(cax) + abs(cay) + abs(caz) + abs(cbx) + abs(cby) + abs(cbz))
    # The axis that last separated this pair beyond the margin (a face of A, of B, or an edge pair the
    # search below would project) is tried first: piles at rest keep their gaps, so most separated pairs
    # end here. Any such axis beyond the margin means no contact whatever the rest finds (the face and
    # edge searches stop at the first axis past the margin), so the outcome is the same.
    cached = ia >= 0 and ib >= 0
    if cached:
        code = axes[ia, ib]
        kind, i, j = code >> 48, (code >> 24) & LOW, code & LOW
        gap = -np.inf
        if kind == FACE_A:
            gap = _face_gap(wvb, nvb, wna, woa, i)
        elif kind == FACE_B:
            gap = _face_gap(wva, nva, wnb, wob, i)
        elif kind == EDGES:
            gap = _edge_gap(i, j, edges, edge_dir_of, edge_faces, wva, wna, wda, nva, wvb, wnb, wdb, nvb, cax, cay,
                            caz)
        if gap > margin:
            return count
    sa, fa = _face_sep(wvb, nvb, wna, woa, nfa, cbx, cby, cbz, inr[kb] - tol, margin, fd_a)
    if sa > margin:
        if cached:
            axes[ia, ib] = (FACE_A << 48) | (fa << 24)
        return count
    sb, fb = _face_sep(wva, nva, wnb, wob, nfb, cax, cay, caz, inr[ka] - tol, margin, fd_b)
    if sb > margin:
        if cached:
            axes[ia, ib] = (FACE_B << 48) | (fb << 24)
        return count
    # Edge axes: the edge pairs whose arcs cross on the Gauss maps of A and -B (narrowphase.minkowski_edges).
    # Only an edge axis beyond floor changes the outcome (past the margin: no contact; past the best face
    # by FACE_TOL: an edge contact along the first best axis); below it the faces decide whatever its
    # value. So the search starts at floor: the same outcome with most pairs skipped.
    floor = min(max(sa, sb) + FACE_TOL, margin)
    best_edge = floor
    found = False
    e_a, e_b = -1, -1
    ex, ey, ez = 0.0, 0.0, 0.0
    # An axis n separates by at most n . (c_B - c_A) - rho_A - rho_B: an edge whose arc holds no n reaching
    # the best so far, and a pair whose axis does not, skip their projections (the same maximum and the
    # same first pair reaching it).
    rho = inr[ka] + inr[kb] - 1e-9 * (1.0 + abs(dcx) + abs(dcy) + abs(dcz))  # rounding: never prune a winner
    n_a = _arc_edges(e_start[ka], e_start[ka + 1], edge_faces, wna, dcx, dcy, dcz, best_edge + rho,
                     best_edge + inr[kb] - tol, keep_a, xa, fd_a)
    n_b = _arc_edges(e_start[kb], e_start[kb + 1], edge_faces, wnb, -dcx, -dcy, -dcz, best_edge + rho,
                     best_edge + inr[ka] - tol, keep_b, xb, fd_b)
    for i in range(n_a):
        e = keep_a[i]
        flat_a = xa[i, 0] * xa[i, 0] + xa[i, 1] * xa[i, 1] + xa[i, 2] * xa[i, 2] < ARC_EPS
        a1, a2 = wna[edge_faces[e, 0]], wna[edge_faces[e, 1]]
        da = wda[edge_dir_of[e]]
        va = wva[edges[e, 0]]
        for j in range(n_b):
            f = keep_b[j]
            if not flat_a and xb[j, 0] * xb[j, 0] + xb[j, 1] * xb[j, 1] + xb[j, 2] * xb[j, 2] >= ARC_EPS:
                b1, b2 = wnb[edge_faces[f, 0]], wnb[edge_faces[f, 1]]  # C = -b1, D = -b2
                cba = -b1[0] * xa[i, 0] - b1[1] * xa[i, 1] - b1[2] * xa[i, 2]
                dba = -b2[0] * xa[i, 0] - b2[1] * xa[i, 1] - b2[2] * xa[i, 2]
                adc = a1[0] * xb[j, 0] + a1[1] * xb[j, 1] + a1[2] * xb[j, 2]
                bdc = a2[0] * xb[j, 0] + a2[1] * xb[j, 1] + a2[2] * xb[j, 2]
                if not (cba * dba < 0 and adc * bdc < 0 and cba * bdc > 0):
                    continue
            db = wdb[edge_dir_of[f]]
            cx = da[1] * db[2] - da[2] * db[1]
            cy = da[2] * db[0] - da[0] * db[2]
            cz = da[0] * db[1] - da[1] * db[0]
            ln = math.sqrt(cx * cx + cy * cy + cz * cz)
            if not ln > PARALLEL:
                continue
            cx, cy, cz = cx / ln, cy / ln, cz / ln
            if cx * (va[0] - cax) + cy * (va[1] - cay) + cz * (va[2] - caz) < 0:  # away from A's centre
                cx, cy, cz = -cx, -cy, -cz
            if cx * dcx + cy * dcy + cz * dcz - rho <= best_edge:
                continue
            vb = wvb[edges[f, 0]]  # B's lowest vertex is at most vb's height, A's highest at least va's
            if cx * (vb[0] - va[0]) + cy * (vb[1] - va[1]) + cz * (vb[2] - va[2]) <= best_edge:
                continue
            s = _project(wvb, nvb, cx, cy, cz)[0] - _project(wva, nva, cx, cy, cz)[1]
            if s > best_edge:
                best_edge = s
                found = True
                e_a, e_b = e, f
                ex, ey, ez = cx, cy, cz
                if best_edge > margin:  # separated beyond the margin: no contact, whatever follows
                    if cached:
                        axes[ia, ib] = (EDGES << 48) | (e << 24) | f
                    return count
    if found:  # beyond floor, within the margin: beyond the best face, an edge contact
        a0, a1 = wva[edges[e_a, 0]], wva[edges[e_a, 1]]
        b0, b1 = wvb[edges[e_b, 0]], wvb[edges[e_b, 1]]
        s, t = closest_segments(a0, a1, b0, b1)
        return emit(p, 0.5 * ((a0[0] + (a1[0] - a0[0]) * s) + (b0[0] + (b1[0] - b0[0]) * t)),
                    0.5 * ((a0[1] + (a1[1] - a0[1]) * s) + (b0[1] + (b1[1] - b0[1]) * t)),
                    0.5 * ((a0[2] + (a1[2] - a0[2]) * s) + (b0[2] + (b1[2] - b0[2]) * t)),
                    ex, ey, ez, best_edge, out_pair, out_pt, out_n, out_sep, count)
    if sb > sa + FACE_TOL:  # B's face is the reference: the normal turns to point from A to B
        flip, f = True, fb
        kr, ki = kb, ka
        wvr, wnr, wor, wvi, wni, nfi = wvb, wnb, wob, wva, wna, nfa
    else:
        flip, f = False, fa
        kr, ki = ka, kb
        wvr, wnr, wor, wvi, wni, nfi = wva, wna, woa, wvb, wnb, nfb
    nx, ny, nz = wnr[f, 0], wnr[f, 1], wnr[f, 2]
    d = wor[f]
    fi = 0
    lo = np.inf
    for i in range(nfi):
        s = wni[i, 0] * nx + wni[i, 1] * ny + wni[i, 2] * nz
        if s < lo:
            lo, fi = s, i
    gi = f_start[ki] + fi
    n_poly = fv_start[gi + 1] - fv_start[gi]
    for j in range(n_poly):
        for x in range(3):
            poly[j, x] = wvi[fv[fv_start[gi] + j], x]
    gr = f_start[kr] + f
    n_ref = fv_start[gr + 1] - fv_start[gr]
    for j in range(n_ref):
        for x in range(3):
            ref[j, x] = wvr[fv[fv_start[gr] + j], x]
    n_poly = clip(poly, n_poly, ref, n_ref, nx, ny, nz, tmp)
    for j in range(n_poly):
        seps[j] = poly[j, 0] * nx + poly[j, 1] * ny + poly[j, 2] * nz - d
        ok[j] = seps[j] < margin
        h = 0.5 * seps[j]
        poly[j, 0], poly[j, 1], poly[j, 2] = poly[j, 0] - nx * h, poly[j, 1] - ny * h, poly[j, 2] - nz * h
    live = 0
    for j in range(n_poly):
        live += ok[j]
    if live > max_points:
        _reduce(poly[:n_poly], seps[:n_poly], ok[:n_poly], max_points, keep, dmin)
    sg = -1.0 if flip else 1.0
    for j in range(n_poly):
        if ok[j]:
            count = emit(p, poly[j, 0], poly[j, 1], poly[j, 2], sg * nx, sg * ny, sg * nz, seps[j], out_pair,
                         out_pt, out_n, out_sep, count)
    return count


@njit(cache=True)
def convex_plane(p, wva, gb, pos, rot, margin, max_points, pts, seps, ok, keep, dmin, out_pair, out_pt, out_n,
                 out_sep, count):
    """Hull vertices wva (posed) below the margin over plane gb, normal -n; then ``scratch``'s buffers."""
    nv = wva.shape[0]
    nx, ny, nz, d = plane_of(pos, rot, gb)
    for i in range(nv):
        seps[i] = wva[i, 0] * nx + wva[i, 1] * ny + wva[i, 2] * nz - d
        ok[i] = seps[i] < margin
        h = 0.5 * seps[i]
        pts[i, 0], pts[i, 1], pts[i, 2] = wva[i, 0] - nx * h, wva[i, 1] - ny * h, wva[i, 2] - nz * h
    live = 0
    for i in range(nv):
        live += ok[i]
    if live > max_points:
        _reduce(pts[:nv], seps[:nv], ok[:nv], max_points, keep, dmin)
    for i in range(nv):
        if ok[i]:
            count = emit(p, pts[i, 0], pts[i, 1], pts[i, 2], -nx, -ny, -nz, seps[i], out_pair, out_pt, out_n,
                         out_sep, count)
    return count


@njit(cache=True)
def closest_on_triangle(px, py, pz, a, b, c):
    """``closest.closest_point_triangles`` for one point and triangle (Ericson's regions, in its order)."""
    abx, aby, abz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    acx, acy, acz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    apx, apy, apz = px - a[0], py - a[1], pz - a[2]
    bpx, bpy, bpz = px - b[0], py - b[1], pz - b[2]
    cpx, cpy, cpz = px - c[0], py - c[1], pz - c[2]
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    e1, e2 = d4 - d3, d5 - d6
    if d1 <= 0 and d2 <= 0:
        return a[0], a[1], a[2]
    if d3 >= 0 and d4 <= d3:
        return b[0], b[1], b[2]
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        t = d1 / (d1 - d3 if d1 - d3 != 0 else 1.0)
        return a[0] + abx * t, a[1] + aby * t, a[2] + abz * t
    if d6 >= 0 and d5 <= d6:
        return c[0], c[1], c[2]
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        t = d2 / (d2 - d6 if d2 - d6 != 0 else 1.0)
        return a[0] + acx * t, a[1] + acy * t, a[2] + acz * t
    if va <= 0 and e1 >= 0 and e2 >= 0:
        t = e1 / (e1 + e2 if e1 + e2 != 0 else 1.0)
        return b[0] + (c[0] - b[0]) * t, b[1] + (c[1] - b[1]) * t, b[2] + (c[2] - b[2]) * t
    denom = va + vb + vc
    v = vb / denom if denom != 0 else 0.0
    w = vc / denom if denom != 0 else 0.0
    return a[0] + abx * v + acx * w, a[1] + aby * v + acy * w, a[2] + abz * v + acz * w


@njit(cache=True)
def sphere_polytope(p, ga, k, wv, wn, wo, t_start, tris, pos, size, margin, out_pair, out_pt, out_n, out_sep,
                    count):
    """Sphere ga against polytope k posed as wv, wn, wo (vertices, face normals and offsets): the face plane
    the centre is farthest outside; inside: that face, else the nearest triangle point."""
    nf = wn.shape[0]
    cx, cy, cz, r = pos[ga, 0], pos[ga, 1], pos[ga, 2], size[ga, 0]
    best, f = _farthest_face(wn, wo, nf, cx, cy, cz)
    if best - r > margin:
        return count
    if best <= 0:
        nx, ny, nz, sep = wn[f, 0], wn[f, 1], wn[f, 2], best - r
    else:
        dist = np.inf
        qx = qy = qz = 0.0
        for t in range(t_start[k], t_start[k + 1]):
            x, y, z = closest_on_triangle(cx, cy, cz, wv[tris[t, 0]], wv[tris[t, 1]], wv[tris[t, 2]])
            dd = math.sqrt((cx - x) ** 2 + (cy - y) ** 2 + (cz - z) ** 2)
            if dd < dist:
                dist, qx, qy, qz = dd, x, y, z
        m = max(dist, 1e-300)
        nx, ny, nz, sep = (cx - qx) / m, (cy - qy) / m, (cz - qz) / m, dist - r
    if sep < margin:
        h = r + 0.5 * sep
        count = emit(p, cx - nx * h, cy - ny * h, cz - nz * h, -nx, -ny, -nz, sep, out_pair, out_pt, out_n, out_sep,
                     count)
    return count


@njit(cache=True)
def capsule_polytope(p, gc, k, wv, wn, wo, wd, f_start, fv_start, fv, e_start, edges, pos, rot, size, margin, sign,
                     out_pair, out_pt, out_n, out_sep, count):
    """``narrowphase.capsule_polytope_one`` (capsule gc against polytope k posed as wv, wn, wo, wd); the
    normals are ``sign`` times polytope->capsule."""
    nv, nf, nd = wv.shape[0], wn.shape[0], wd.shape[0]
    e = segment(pos, rot, size, gc)
    ax, ay, az, bx, by, bz = e
    r = size[gc, 0]
    f = 0
    sep_f = -np.inf
    for i in range(nf):
        sa = wn[i, 0] * ax + wn[i, 1] * ay + wn[i, 2] * az
        sb = wn[i, 0] * bx + wn[i, 1] * by + wn[i, 2] * bz
        s = min(sa, sb) - wo[i] - r
        if s > sep_f:
            sep_f, f = s, i
    if sep_f > margin:
        return count
    ux, uy, uz = bx - ax, by - ay, bz - az
    lu = math.sqrt(ux * ux + uy * uy + uz * uz)
    best_edge = -np.inf
    has_axis = False
    xx = xy = xz = 0.0
    if lu > 1e-9:
        vx, vy, vz = ux / lu, uy / lu, uz / lu
        for i in range(nd):
            cx = vy * wd[i, 2] - vz * wd[i, 1]
            cy = vz * wd[i, 0] - vx * wd[i, 2]
            cz = vx * wd[i, 1] - vy * wd[i, 0]
            ln = math.sqrt(cx * cx + cy * cy + cz * cz)
            if not ln > 1e-6:
                continue
            cx, cy, cz = cx / ln, cy / ln, cz / ln
            lo, hi = _project(wv, nv, cx, cy, cz)
            pa = cx * ax + cy * ay + cz * az
            pb = cx * bx + cy * by + cz * bz
            s_pos = min(pa, pb) - hi - r
            s_neg = lo - max(pa, pb) - r
            s = max(s_pos, s_neg)
            if s > best_edge:
                best_edge = s
                sg = 1.0 if s_pos >= s_neg else -1.0
                xx, xy, xz = sg * cx, sg * cy, sg * cz
                has_axis = True
        if has_axis and best_edge > margin:
            return count
    if best_edge <= sep_f + FACE_TOL:
        nx, ny, nz = wn[f, 0], wn[f, 1], wn[f, 2]
        gf = f_start[k] + f
        m = fv_start[gf + 1] - fv_start[gf]
        t0, t1 = 0.0, 1.0
        for i in range(m):
            r0 = wv[fv[fv_start[gf] + i]]
            r1 = wv[fv[fv_start[gf] + (i + 1) % m]]
            ex, ey, ez = r1[0] - r0[0], r1[1] - r0[1], r1[2] - r0[2]
            sx, sy, sz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
            da = sx * ax + sy * ay + sz * az - (sx * r0[0] + sy * r0[1] + sz * r0[2])
            du = sx * ux + sy * uy + sz * uz
            if abs(du) < 1e-15:
                if da > 0:
                    t0, t1 = 1.0, 0.0
                    break
                continue
            t = -da / du
            if du > 0:
                t1 = min(t1, t)
            else:
                t0 = max(t0, t)
        if t1 >= t0:
            for j in range(1 if t1 - t0 < 1e-9 else 2):
                t = t0 if j == 0 else t1
                qx, qy, qz = ax + ux * t, ay + uy * t, az + uz * t
                s = qx * nx + qy * ny + qz * nz - wo[f] - r
                if s < margin:
                    h = r + 0.5 * s
                    count = emit(p, qx - nx * h, qy - ny * h, qz - nz * h, sign * nx, sign * ny, sign * nz, s,
                                 out_pair, out_pt, out_n, out_sep, count)
            return count
        if not has_axis:
            xx, xy, xz = nx, ny, nz
    # edge contact: the closest points of the segment and the polytope's nearest edge
    a = np.array((ax, ay, az))
    b = np.array((bx, by, bz))
    dist = np.inf
    p1 = np.empty(3)
    p2 = np.empty(3)
    for i in range(e_start[k], e_start[k + 1]):
        e0, e1 = wv[edges[i, 0]], wv[edges[i, 1]]
        s, t = closest_segments(a, b, e0, e1)
        x1, y1, z1 = ax + ux * s, ay + uy * s, az + uz * s
        x2 = e0[0] + (e1[0] - e0[0]) * t
        y2 = e0[1] + (e1[1] - e0[1]) * t
        z2 = e0[2] + (e1[2] - e0[2]) * t
        dd = math.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2 + (z1 - z2) ** 2)
        if dd < dist:
            dist = dd
            p1[0], p1[1], p1[2], p2[0], p2[1], p2[2] = x1, y1, z1, x2, y2, z2
    if dist > 1e-9:
        nx, ny, nz = (p1[0] - p2[0]) / dist, (p1[1] - p2[1]) / dist, (p1[2] - p2[2]) / dist
        s = dist - r
    else:
        nx, ny, nz, s = xx, xy, xz, best_edge
    if s >= margin:
        return count
    h = r + 0.5 * s
    return emit(p, p1[0] - nx * h, p1[1] - ny * h, p1[2] - nz * h, sign * nx, sign * ny, sign * nz, s, out_pair,
                out_pt, out_n, out_sep, count)

