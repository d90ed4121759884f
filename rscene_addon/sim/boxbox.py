"""Box-box contacts for all candidate pairs at once (SAT and face clipping, vectorised over pairs).

The same rules as the general polytope routine (``narrowphase.polytope_polytope``), specialised to boxes
so that nothing runs per pair in Python:

* separating-axis test on the 3 + 3 face axes and the 9 edge-edge axes (the box's projection radii are
  closed-form sums over its half extents);
* an edge axis wins only when it beats both face axes by ``FACE_TOL``; it gives one point midway between
  the closest points of the two support edges;
* otherwise the reference face (A's unless B's is better by ``FACE_TOL``) clips the incident face (the
  other box's face most opposed to the reference normal). The clipped polygon's vertices are the incident
  corners inside the reference rectangle, the incident edges' crossings of the rectangle's sides and the
  rectangle's corners inside the incident face: the same point set as Sutherland-Hodgman clipping, with a
  fixed number of candidates (4 + 16 + 4) per pair;
* points below the margin are kept; more than ``max_points`` are reduced as ``reduce_manifold`` does (the
  deepest, then farthest-point sampling).
"""
from __future__ import annotations

import numpy as np

from .closest import closest_segment_segment
from .mathutil import cross, norm

FACE_TOL = 1e-3  # a face axis is preferred over a slightly better edge / other face axis by this much (m)
_GRID = 1e-7  # candidates that round to one point of this grid (m) on the reference face are one point
# incident face corners in the face's (s, t) coordinates, counter-clockwise
_QUAD = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_NEXT_AXIS = np.array([[1, 2], [2, 0], [0, 1]])  # the two other axes of axis 0, 1, 2
_ROLL = np.array([1, 2, 3, 0])  # the next corner (np.roll(x, -1, axis=1) without its overhead)
_EDGE_A = np.repeat(np.arange(3), 3)  # edge axis A_i x B_j for i, j = 0 0, 0 1, 0 2, 1 0, ...
_EDGE_B = np.tile(np.arange(3), 3)
# the reference face's 4 side lines: in-plane axis and side (-h, +h)
_LINE_AXIS = np.array([0, 0, 1, 1])
_LINE_SIDE = np.array([-1.0, 1.0, -1.0, 1.0])


def _mat_vec(M, v):
    """M (K, P, Q) times v (K, Q) -> (K, P)."""
    return np.matmul(M, v[:, :, None])[:, :, 0]


def _vec_mat(v, M):
    """v (K, P) times M (K, P, Q) -> (K, Q) (v^T M, e.g. a world vector in a box's axes)."""
    return np.matmul(v[:, None, :], M)[:, 0, :]


def _take(arr, idx):
    """arr (K, 3, ...) indexed along axis 1 by idx (K,)."""
    return arr[np.arange(len(idx)), idx]


def box_box(m, fr, ga, gb, margin, pidx, buf, max_points):
    """Contacts between boxes ``ga`` and ``gb`` (K,), normals from A to B, into ``buf``."""
    K = len(ga)
    if K == 0:
        return
    ca, cb = fr.pos[ga], fr.pos[gb]
    Ra, Rb = fr.rot[ga], fr.rot[gb]  # columns: the boxes' axes in the world
    ha, hb = m.geom_size[ga, :3], m.geom_size[gb, :3]
    d = cb - ca
    C = np.matmul(Ra.transpose(0, 2, 1), Rb)  # C[i, j] = A_i . B_j
    absC = np.abs(C)
    da = _vec_mat(d, Ra)  # d in A's axes
    db = _vec_mat(d, Rb)
    sep_a = np.abs(da) - ha - _mat_vec(absC, hb)
    sep_b = np.abs(db) - hb - _vec_mat(ha, absC)
    fa = np.argmax(sep_a, axis=1)
    fb = np.argmax(sep_b, axis=1)
    sa = _take(sep_a, fa)
    sb = _take(sep_b, fb)
    # pairs apart along a face axis need no edge axes (the costliest part): most broadphase pairs of a pile
    near = (sa <= margin) & (sb <= margin)
    if not near.all():
        if not near.any():
            return
        ca, cb, Ra, Rb, ha, hb, d, da, db = ca[near], cb[near], Ra[near], Rb[near], ha[near], hb[near], \
            d[near], da[near], db[near]
        sa, sb, fa, fb, margin, pidx = sa[near], sb[near], fa[near], fb[near], margin[near], pidx[near]
        ga, gb = ga[near], gb[near]
    # edge axes A_i x B_j (K, 9, 3)
    Ax = Ra.transpose(0, 2, 1)[:, _EDGE_A]  # A_0, A_0, A_0, A_1, ...
    Bx = Rb.transpose(0, 2, 1)[:, _EDGE_B]  # B_0, B_1, B_2, B_0, ...
    ax = cross(Ax, Bx)
    ln = norm(ax)
    valid = ln > 1e-6
    u = ax / np.where(valid, ln, 1.0)[:, :, None]
    rad_a = np.abs(np.matmul(u, Ra)) @ ha[:, :, None]
    rad_b = np.abs(np.matmul(u, Rb)) @ hb[:, :, None]
    du = _mat_vec(u, d)
    s_edge = np.where(valid, np.abs(du) - rad_a[:, :, 0] - rad_b[:, :, 0], -np.inf)
    e = np.argmax(s_edge, axis=1)
    se = _take(s_edge, e)
    hit = se <= margin  # the face axes passed above
    face_best = np.maximum(sa, sb)
    edge = hit & (se > face_best + FACE_TOL)
    face = hit & ~edge
    if edge.any():
        _edge_contacts(np.nonzero(edge)[0], e, u, du, se, ca, cb, Ra, Rb, ha, hb, pidx, buf)
    if face.any():
        _face_contacts(m, fr, ga, gb, np.nonzero(face)[0], sa, sb, fa, fb, da, db, margin, pidx, buf,
                       max_points)


def _edge_contacts(sel, e, u, du, se, ca, cb, Ra, Rb, ha, hb, pidx, buf):
    k = np.arange(len(sel))
    ia, ib = np.divmod(e[sel], 3)
    axis = u[sel, e[sel]] * np.where(du[sel, e[sel]] >= 0, 1.0, -1.0)[:, None]  # from A to B
    Ra, Rb, ha, hb = Ra[sel], Rb[sel], ha[sel], hb[sel]
    # support edges: A's edge along A_ia farthest along the axis, B's along B_ib farthest against it
    sgn_a = np.where(_vec_mat(axis, Ra) >= 0, 1.0, -1.0)
    sgn_b = np.where(_vec_mat(axis, Rb) >= 0, -1.0, 1.0)
    sgn_a[k, ia] = 0.0
    sgn_b[k, ib] = 0.0
    mid_a = ca[sel] + _mat_vec(Ra, sgn_a * ha)
    mid_b = cb[sel] + _mat_vec(Rb, sgn_b * hb)
    half_a = Ra[k, :, ia] * ha[k, ia][:, None]
    half_b = Rb[k, :, ib] * hb[k, ib][:, None]
    p1, p2, _, _ = closest_segment_segment(mid_a - half_a, mid_a + half_a, mid_b - half_b, mid_b + half_b)
    buf.add(pidx[sel], 0.5 * (p1 + p2), axis, se[sel])


def _face_contacts(m, fr, ga, gb, sel, sa, sb, fa, fb, da, db, margin, pidx, buf, max_points):
    K = len(sel)
    k = np.arange(K)
    use_b = sb[sel] > sa[sel] + FACE_TOL  # B's face is the reference: the normal is flipped at the end
    # reference box (r), incident box (i); the reference face's outward normal n points at the other box
    ga, gb = ga[sel], gb[sel]
    g_r, g_i = np.where(use_b, gb, ga), np.where(use_b, ga, gb)
    Rr, Ri = fr.rot[g_r], fr.rot[g_i]
    cr, ci = fr.pos[g_r], fr.pos[g_i]
    hr, hi = m.geom_size[g_r], m.geom_size[g_i]
    f = np.where(use_b, fb[sel], fa[sel])
    dr = np.where(use_b[:, None], -db[sel], da[sel])  # the incident centre from the reference's, in its axes
    sign = np.where(_take(dr, f) >= 0, 1.0, -1.0)
    n = Rr[k, :, f] * sign[:, None]
    h_n = hr[k, f]
    offset = np.einsum("ki,ki->k", n, cr) + h_n  # n . x <= offset inside the reference box
    face_c = cr + n * h_n[:, None]
    t_ax = _NEXT_AXIS[f]  # (K, 2) the reference face's in-plane axes
    T = np.stack((Rr[k, :, t_ax[:, 0]], Rr[k, :, t_ax[:, 1]]), axis=1)  # (K, 2, 3)
    h_t = np.stack((hr[k, t_ax[:, 0]], hr[k, t_ax[:, 1]]), axis=1)  # (K, 2)
    # incident face: the incident box's face most opposed to n
    dots = _vec_mat(n, Ri)
    g = np.argmax(np.abs(dots), axis=1)
    n_i = -Ri[k, :, g] * np.where(_take(dots, g) >= 0, 1.0, -1.0)[:, None]  # outward incident normal
    i_ax = _NEXT_AXIS[g]
    U = np.stack((Ri[k, :, i_ax[:, 0]] * hi[k, i_ax[:, 0]][:, None],
                  Ri[k, :, i_ax[:, 1]] * hi[k, i_ax[:, 1]][:, None]), axis=1)  # (K, 2, 3) half edges
    i_c = ci + n_i * hi[k, g][:, None]
    corners = i_c[:, None, :] + np.matmul(_QUAD, U)  # (K, 4, 3)
    # 2-D coordinates in the reference face
    rel = corners - face_c[:, None, :]
    P = np.matmul(rel, T.transpose(0, 2, 1))  # (K, 4, 2)
    eps = 1e-9
    inside_v = np.all(np.abs(P) <= h_t[:, None, :] + eps, axis=2)  # (K, 4)
    # incident edges q -> q+1 against the 4 side lines (axis a, side +-)
    Q = P[:, _ROLL]
    Q3 = corners[:, _ROLL]
    # all 4 lines at once: arrays (K, line, edge); "other" is the coordinate along the line
    lim = _LINE_SIDE * h_t[:, _LINE_AXIS]  # (K, 4) the lines' positions
    P_on, Q_on = P[:, :, _LINE_AXIS].transpose(0, 2, 1), Q[:, :, _LINE_AXIS].transpose(0, 2, 1)
    P_along, Q_along = P[:, :, 1 - _LINE_AXIS].transpose(0, 2, 1), Q[:, :, 1 - _LINE_AXIS].transpose(0, 2, 1)
    p0, p1 = P_on - lim[:, :, None], Q_on - lim[:, :, None]
    cross_ = (p0 * p1) < 0
    t = p0 / np.where(cross_, p0 - p1, 1.0)
    other = P_along + (Q_along - P_along) * t
    ok_e = cross_ & (np.abs(other) <= h_t[:, 1 - _LINE_AXIS][:, :, None] + eps)
    pts_e = corners[:, None] + (Q3 - corners)[:, None] * t[..., None]  # (K, 4, 4, 3)
    flat_e = np.empty((K, 4, 4, 2))  # the crossings in reference-face coordinates
    flat_e[:, :2, :, 0] = lim[:, :2, None]
    flat_e[:, :2, :, 1] = other[:, :2]
    flat_e[:, 2:, :, 0] = other[:, 2:]
    flat_e[:, 2:, :, 1] = lim[:, 2:, None]
    # reference corners inside the incident face (projected along n onto its plane)
    rc = np.matmul(_QUAD, h_t[:, :, None] * T) + face_c[:, None, :]  # (K, 4, 3)
    rc2 = _QUAD * h_t[:, None, :]
    edge2 = Q - P  # (K, 4, 2) incident polygon edges in 2-D
    to_c = rc2[:, :, None, :] - P[:, None, :, :]  # (K, 4 corners, 4 edges, 2)
    cr2 = edge2[:, None, :, 0] * to_c[..., 1] - edge2[:, None, :, 1] * to_c[..., 0]
    area = np.sum(P[:, :, 0] * Q[:, :, 1] - P[:, :, 1] * Q[:, :, 0], axis=1)
    orient = np.where(area >= 0, 1.0, -1.0)
    inside_c = np.all(cr2 * orient[:, None, None] >= -eps, axis=2)  # (K, 4)
    denom = np.einsum("ki,ki->k", n_i, n)
    off_i = np.einsum("ki,ki->k", n_i, i_c)
    lift = (off_i[:, None] - _mat_vec(rc, n_i)) / np.where(np.abs(denom) > 1e-12, denom, 1.0)[:, None]
    rc3 = rc + n[:, None, :] * lift[:, :, None]
    cand = np.concatenate((corners, pts_e.reshape(K, 16, 3), rc3), axis=1)  # (K, 24, 3)
    ok = np.concatenate((inside_v, ok_e.reshape(K, 16), inside_c), axis=1)
    seps = _mat_vec(cand, n) - offset[:, None]
    ok &= seps < margin[sel][:, None]
    # one point per location (coinciding candidates of aligned boxes): all lie on the incident face,
    # so their reference-face coordinates tell them apart; keep the first of equal ones
    rows, cols = np.nonzero(ok)
    if len(rows) > 1:
        flat = np.concatenate((P, flat_e.reshape(K, 16, 2), rc2), axis=1)[rows, cols]
        key = np.rint(flat / _GRID).astype(np.int64)
        order = np.lexsort((cols, key[:, 1], key[:, 0], rows))
        r_o, k_o = rows[order], key[order]
        repeat = np.zeros(len(order), dtype=bool)
        repeat[1:] = (r_o[1:] == r_o[:-1]) & np.all(k_o[1:] == k_o[:-1], axis=1)
        ok[rows[order[repeat]], cols[order[repeat]]] = False
    ok = _reduce(cand, n, seps, ok, max_points)
    rows, cols = np.nonzero(ok)
    if len(rows) == 0:
        return
    sep = seps[rows, cols]
    pts = cand[rows, cols] - n[rows] * (0.5 * sep)[:, None]  # midway between the surfaces
    normal = np.where(use_b[:, None], -n, n)
    buf.add(pidx[sel][rows], pts, normal[rows], sep)


def _reduce(cand, n, seps, ok, k):
    """Rows with more than k candidates keep the deepest, then the farthest from those kept (the points
    midway between the surfaces, made only for these rows)."""
    over = np.count_nonzero(ok, axis=1) > k
    if not over.any():
        return ok
    S, M = seps[over], ok[over]
    P = cand[over] - n[over][:, None, :] * (0.5 * S)[:, :, None]
    rows = np.arange(len(P))
    first = np.argmin(np.where(M, S, np.inf), axis=1)
    keep = np.zeros_like(M)
    keep[rows, first] = True
    dmin = np.where(M, norm(P - P[rows, first][:, None, :]), -1.0)
    for _ in range(k - 1):
        i = np.argmax(dmin, axis=1)
        grow = dmin[rows, i] > 1e-9
        keep[rows[grow], i[grow]] = True
        dist = norm(P - P[rows, i][:, None, :])
        dmin = np.where(grow[:, None], np.minimum(dmin, np.where(M, dist, -1.0)), dmin)
    out = ok.copy()
    out[over] = keep
    return out
