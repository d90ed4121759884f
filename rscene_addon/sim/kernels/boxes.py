"""Box-box and box-plane contacts, compiled, pair by pair: the rules and the point sets of
``sim.boxbox.box_box`` and ``sim.narrowphase.box_plane`` (SAT over 3 + 3 face and 9 edge axes, face axes
preferred by FACE_TOL, one midpoint for an edge contact, else the incident face clipped by the reference
face as 4 + 16 + 4 candidates, repeats on a 1e-7 m grid dropped, more than ``max_points`` reduced to the
deepest then farthest-point sampling). Outputs are filled per pair in the numpy code's order.

Scalar arithmetic and loops over scratch arrays allocated once per call, no numpy array expressions: each
of those makes numba generate and compile a ufunc loop (seconds on a cold cache) and allocates per pair."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

FACE_TOL = 1e-3  # as sim.boxbox.FACE_TOL
GRID = 1e-7  # as sim.boxbox._GRID
EPS = 1e-9
QUAD = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _reduce(pts, sep, ok, k, keep, dmin):
    """Keep at most k of the ``ok`` candidates: the deepest, then the farthest from those kept. ``keep``
    (bool) and ``dmin`` (float) are scratch at least as long as ``ok``."""
    n = ok.shape[0]
    count = 0
    for c in range(n):
        if ok[c]:
            count += 1
    if count <= k:
        return
    first = -1
    for c in range(n):
        if ok[c] and (first < 0 or sep[c] < sep[first]):
            first = c
    for c in range(n):
        keep[c] = c == first
        if ok[c]:
            dx = pts[c, 0] - pts[first, 0]
            dy = pts[c, 1] - pts[first, 1]
            dz = pts[c, 2] - pts[first, 2]
            dmin[c] = math.sqrt(dx * dx + dy * dy + dz * dz)
        else:
            dmin[c] = -1.0
    for _ in range(k - 1):
        i = 0
        for c in range(1, n):
            if dmin[c] > dmin[i]:
                i = c
        if not dmin[i] > 1e-9:
            break
        keep[i] = True
        for c in range(n):
            if ok[c]:
                dx = pts[c, 0] - pts[i, 0]
                dy = pts[c, 1] - pts[i, 1]
                dz = pts[c, 2] - pts[i, 2]
                d = math.sqrt(dx * dx + dy * dy + dz * dz)
                if d < dmin[c]:
                    dmin[c] = d
    for c in range(n):
        ok[c] = keep[c]


@njit(cache=True)
def box_plane(pidx, pos, rot, h, n, d, margin, max_points, out_pair, out_pt, out_n, out_sep, count):
    """Box corners below ``margin`` over planes (n (K, 3) up, offsets d (K,)); normals -n (box to
    plane). Appends to the out arrays from ``count``; returns the new count."""
    K = pidx.shape[0]
    pts = np.empty((8, 3))
    sep = np.empty(8)
    ok = np.empty(8, dtype=np.bool_)
    keep = np.empty(8, dtype=np.bool_)
    dmin = np.empty(8)
    for k in range(K):
        # read once: for all LLVM knows, the scratch writes below could change the inputs
        hx, hy, hz, dk, mk = h[k, 0], h[k, 1], h[k, 2], d[k], margin[k]
        for c in range(8):
            sx = -1.0 if c % 2 == 0 else 1.0
            sy = -1.0 if (c // 2) % 2 == 0 else 1.0
            sz = -1.0 if c // 4 == 0 else 1.0
            s = 0.0
            for i in range(3):
                x = (rot[k, i, 0] * (sx * hx) + rot[k, i, 1] * (sy * hy) + rot[k, i, 2] * (sz * hz)
                     + pos[k, i])
                pts[c, i] = x
                s += x * n[k, i]
            sep[c] = s - dk
            ok[c] = sep[c] < mk
            if ok[c]:  # only live corners are read after this
                for i in range(3):
                    pts[c, i] -= n[k, i] * (0.5 * sep[c])
        live = 0
        for c in range(8):  # a loop of its own: counted in the one above, the kernel ran slower
            live += ok[c]
        if live > max_points:
            _reduce(pts, sep, ok, max_points, keep, dmin)
        for c in range(8):
            if ok[c]:
                out_pair[count] = pidx[k]
                for i in range(3):
                    out_pt[count, i] = pts[c, i]
                    out_n[count, i] = -n[k, i]
                out_sep[count] = sep[c]
                count += 1
    return count


@njit(cache=True)
def closest_segments(p1, q1, p2, q2):
    """``closest.closest_segment_segment`` for one pair: (s, t) on p1-q1 and p2-q2 (sim.closest's rules)."""
    eps = 1e-12
    d1 = (q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2])
    d2 = (q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2])
    r = (p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2])
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(d1, r), _dot(d1, d2)
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > eps * max(a * e, eps) else 0.0
    t = (b * s + f) / e if e > eps else 0.0
    aa = a if a > eps else 1.0
    if t < 0:
        s = min(max(-c / aa, 0.0), 1.0)
    if t > 1:
        s = min(max((b - c) / aa, 0.0), 1.0)
    t = min(max(t, 0.0), 1.0)
    first_point = a <= eps
    second_point = e <= eps
    if first_point:
        s = 0.0
    if first_point and not second_point:
        t = min(max(f / (e if e > eps else 1.0), 0.0), 1.0)
    if second_point and not first_point:
        s = min(max(-c / aa, 0.0), 1.0)
    if second_point:
        t = 0.0
    return s, t


@njit(cache=True)
def _closest_segments(p1, q1, p2, q2, out):
    """Write into ``out`` the midpoint of the closest points of segments p1-q1 and p2-q2."""
    s, t = closest_segments(p1, q1, p2, q2)
    for x in range(3):
        out[x] = 0.5 * ((p1[x] + (q1[x] - p1[x]) * s) + (p2[x] + (q2[x] - p2[x]) * t))


@njit(cache=True)
def box_box(pidx, ca_all, cb_all, Ra_all, Rb_all, ha_all, hb_all, margin, max_points,
            out_pair, out_pt, out_n, out_sep, count):
    """Contacts of box pairs (K) with normals from A to B, appended from ``count``; returns the count."""
    K = pidx.shape[0]
    C = np.empty((3, 3))
    da = np.empty(3)
    db = np.empty(3)
    sep_a = np.empty(3)
    sep_b = np.empty(3)
    cand = np.empty((24, 3))
    flat = np.empty((24, 2))
    seps = np.empty(24)
    ok = np.empty(24, dtype=np.bool_)
    P = np.empty((4, 2))
    corners = np.empty((4, 3))
    key = np.empty((24, 2), dtype=np.int64)  # grid points of the candidates kept so far
    d = np.empty(3)
    n = np.empty(3)
    n_i = np.empty(3)
    face_c = np.empty(3)
    T0 = np.empty(3)
    T1 = np.empty(3)
    U0 = np.empty(3)
    U1 = np.empty(3)
    i_c = np.empty(3)
    rc = np.empty(3)
    axis = np.empty(3)
    mid_a = np.empty(3)
    mid_b = np.empty(3)
    a0 = np.empty(3)  # the ends of the two closest edges (edge-edge contacts)
    a1 = np.empty(3)
    b0 = np.empty(3)
    b1 = np.empty(3)
    keep = np.empty(24, dtype=np.bool_)
    dmin = np.empty(24)
    for k in range(K):
        ca, cb, Ra, Rb, ha, hb = ca_all[k], cb_all[k], Ra_all[k], Rb_all[k], ha_all[k], hb_all[k]
        mg = margin[k]
        for x in range(3):
            d[x] = cb[x] - ca[x]
        for i in range(3):
            da[i] = Ra[0, i] * d[0] + Ra[1, i] * d[1] + Ra[2, i] * d[2]
            db[i] = Rb[0, i] * d[0] + Rb[1, i] * d[1] + Rb[2, i] * d[2]
            for j in range(3):
                C[i, j] = abs(Ra[0, i] * Rb[0, j] + Ra[1, i] * Rb[1, j] + Ra[2, i] * Rb[2, j])
        for i in range(3):
            sep_a[i] = abs(da[i]) - ha[i] - (C[i, 0] * hb[0] + C[i, 1] * hb[1] + C[i, 2] * hb[2])
            sep_b[i] = abs(db[i]) - hb[i] - (ha[0] * C[0, i] + ha[1] * C[1, i] + ha[2] * C[2, i])
        fa = 0
        fb = 0
        for i in range(1, 3):
            if sep_a[i] > sep_a[fa]:
                fa = i
            if sep_b[i] > sep_b[fb]:
                fb = i
        sa, sb = sep_a[fa], sep_b[fb]
        if not (sa <= mg and sb <= mg):
            continue
        # edge axes A_i x B_j
        se = -math.inf
        e_i, e_j = 0, 0
        e_du = e_u0 = e_u1 = e_u2 = 0.0
        for i in range(3):
            for j in range(3):
                u0 = Ra[1, i] * Rb[2, j] - Ra[2, i] * Rb[1, j]
                u1 = Ra[2, i] * Rb[0, j] - Ra[0, i] * Rb[2, j]
                u2 = Ra[0, i] * Rb[1, j] - Ra[1, i] * Rb[0, j]
                ln = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
                if not ln > 1e-6:
                    continue
                u0, u1, u2 = u0 / ln, u1 / ln, u2 / ln
                rad = 0.0
                for q in range(3):
                    rad += abs(u0 * Ra[0, q] + u1 * Ra[1, q] + u2 * Ra[2, q]) * ha[q]
                for q in range(3):
                    rad += abs(u0 * Rb[0, q] + u1 * Rb[1, q] + u2 * Rb[2, q]) * hb[q]
                du = u0 * d[0] + u1 * d[1] + u2 * d[2]
                s = abs(du) - rad
                if s > se:
                    se, e_i, e_j, e_du = s, i, j, du
                    e_u0, e_u1, e_u2 = u0, u1, u2
        if not se <= mg:
            continue
        if se > max(sa, sb) + FACE_TOL:  # edge-edge: one point
            sg = 1.0 if e_du >= 0 else -1.0
            axis[0], axis[1], axis[2] = e_u0 * sg, e_u1 * sg, e_u2 * sg
            for x in range(3):
                mid_a[x] = ca[x]
                mid_b[x] = cb[x]
            # the two edges' midpoints: over the other axes, to the side facing the other box
            for q in range(3):
                if q != e_i:
                    sg = 1.0 if (axis[0] * Ra[0, q] + axis[1] * Ra[1, q] + axis[2] * Ra[2, q]) >= 0 else -1.0
                    for x in range(3):
                        mid_a[x] += Ra[x, q] * (sg * ha[q])
                if q != e_j:
                    sg = -1.0 if (axis[0] * Rb[0, q] + axis[1] * Rb[1, q] + axis[2] * Rb[2, q]) >= 0 else 1.0
                    for x in range(3):
                        mid_b[x] += Rb[x, q] * (sg * hb[q])
            for x in range(3):
                half_a = Ra[x, e_i] * ha[e_i]
                half_b = Rb[x, e_j] * hb[e_j]
                a0[x], a1[x] = mid_a[x] - half_a, mid_a[x] + half_a
                b0[x], b1[x] = mid_b[x] - half_b, mid_b[x] + half_b
            _closest_segments(a0, a1, b0, b1, out_pt[count])
            out_pair[count] = pidx[k]
            for x in range(3):
                out_n[count, x] = axis[x]
            out_sep[count] = se
            count += 1
            continue
        # face contact: reference face clips the incident face (scratch arrays: no allocation per pair)
        use_b = sb > sa + FACE_TOL
        if use_b:
            Rr, Ri, cr, ci, hr, hi, f = Rb, Ra, cb, ca, hb, ha, fb
            drf = -db[f]
        else:
            Rr, Ri, cr, ci, hr, hi, f = Ra, Rb, ca, cb, ha, hb, fa
            drf = da[f]
        sg = 1.0 if drf >= 0 else -1.0
        h_n = hr[f]
        t0, t1 = (f + 1) % 3, (f + 2) % 3
        ht0, ht1 = hr[t0], hr[t1]
        for x in range(3):
            n[x] = Rr[x, f] * sg
            face_c[x] = cr[x] + n[x] * h_n
            T0[x] = Rr[x, t0]
            T1[x] = Rr[x, t1]
        offset = (n[0] * cr[0] + n[1] * cr[1] + n[2] * cr[2]) + h_n
        g = 0
        best = -1.0
        dg = 0.0
        for j in range(3):
            dj = n[0] * Ri[0, j] + n[1] * Ri[1, j] + n[2] * Ri[2, j]
            if abs(dj) > best:
                best, g, dg = abs(dj), j, dj
        sg = 1.0 if dg >= 0 else -1.0
        i0, i1 = (g + 1) % 3, (g + 2) % 3
        for x in range(3):
            n_i[x] = -Ri[x, g] * sg
            U0[x] = Ri[x, i0] * hi[i0]
            U1[x] = Ri[x, i1] * hi[i1]
            i_c[x] = ci[x] + n_i[x] * hi[g]
        for q in range(4):
            p0 = 0.0
            p1 = 0.0
            for x in range(3):
                cx = i_c[x] + (QUAD[q, 0] * U0[x] + QUAD[q, 1] * U1[x])
                corners[q, x] = cx
                cand[q, x] = cx
                p0 += (cx - face_c[x]) * T0[x]
                p1 += (cx - face_c[x]) * T1[x]
            P[q, 0] = p0
            P[q, 1] = p1
            flat[q, 0] = p0
            flat[q, 1] = p1
            ok[q] = abs(p0) <= ht0 + EPS and abs(p1) <= ht1 + EPS
        # incident edges q -> q + 1 across the reference rectangle's 4 side lines
        for line in range(4):
            la = 0 if line < 2 else 1
            lim = (-1.0 if line % 2 == 0 else 1.0) * (ht0 if la == 0 else ht1)
            h_along = ht1 if la == 0 else ht0
            for q in range(4):
                c = 4 + line * 4 + q
                q2 = (q + 1) % 4
                p0 = P[q, la] - lim
                p1 = P[q2, la] - lim
                ok[c] = False
                if p0 * p1 < 0:
                    t = p0 / (p0 - p1)
                    other = P[q, 1 - la] + (P[q2, 1 - la] - P[q, 1 - la]) * t
                    if abs(other) <= h_along + EPS:
                        ok[c] = True
                        for x in range(3):
                            cand[c, x] = corners[q, x] + (corners[q2, x] - corners[q, x]) * t
                        if la == 0:
                            flat[c, 0], flat[c, 1] = lim, other
                        else:
                            flat[c, 0], flat[c, 1] = other, lim
        # reference corners inside the incident face, lifted onto its plane along n
        area = 0.0
        for q in range(4):
            q2 = (q + 1) % 4
            area += P[q, 0] * P[q2, 1] - P[q, 1] * P[q2, 0]
        orient = 1.0 if area >= 0 else -1.0
        denom = _dot(n_i, n)
        if not abs(denom) > 1e-12:
            denom = 1.0
        off_i = _dot(n_i, i_c)
        for cc in range(4):
            c = 20 + cc
            r0, r1 = QUAD[cc, 0] * ht0, QUAD[cc, 1] * ht1
            inside = True
            for q in range(4):
                q2 = (q + 1) % 4
                ex, ey = P[q2, 0] - P[q, 0], P[q2, 1] - P[q, 1]
                if (ex * (r1 - P[q, 1]) - ey * (r0 - P[q, 0])) * orient < -EPS:
                    inside = False
            rn = 0.0
            for x in range(3):
                rc[x] = QUAD[cc, 0] * (ht0 * T0[x]) + QUAD[cc, 1] * (ht1 * T1[x]) + face_c[x]
                rn += rc[x] * n_i[x]
            lift = (off_i - rn) / denom
            for x in range(3):
                cand[c, x] = rc[x] + n[x] * lift
            flat[c, 0], flat[c, 1] = r0, r1
            ok[c] = inside
        # live candidates only (_reduce and the output read nothing else; the rest may be stale); one on
        # the grid point of a candidate kept before is a repeat
        live = 0
        for c in range(24):
            if not ok[c]:
                continue
            seps[c] = (cand[c, 0] * n[0] + cand[c, 1] * n[1] + cand[c, 2] * n[2]) - offset
            if not seps[c] < mg:
                ok[c] = False
                continue
            gx = round(flat[c, 0] / GRID)  # half to even, as np.rint
            gy = round(flat[c, 1] / GRID)
            for j in range(live):
                if key[j, 0] == gx and key[j, 1] == gy:
                    ok[c] = False
                    break
            if ok[c]:
                key[live, 0], key[live, 1] = gx, gy
                live += 1
                for x in range(3):
                    cand[c, x] -= n[x] * (0.5 * seps[c])  # midway between the surfaces
        if live > max_points:
            _reduce(cand, seps, ok, max_points, keep, dmin)
        sgn = -1.0 if use_b else 1.0
        for c in range(24):
            if ok[c]:
                out_pair[count] = pidx[k]
                for x in range(3):
                    out_pt[count, x] = cand[c, x]
                    out_n[count, x] = n[x] * sgn
                out_sep[count] = seps[c]
                count += 1
    return count
