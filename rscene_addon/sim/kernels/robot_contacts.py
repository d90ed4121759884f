"""Compiled contact rows of robot links: link sample points against planes (``link_contacts`` for plane geoms,
``ArticulatedSystem._ground_contacts``) and link against link inside one system or between two
(``link_pairs``: bounding-sphere broadphase, sample points against primitive shapes both ways with the box
face-tie rule, capsule axes against capsule axes, near-duplicates dropped). Same tests, same formulas, same
order as the numpy modules, which stay the reference.

Shapes per system (``sim.robot_arrays``): sample points ``pts`` (P, 4: x y z radius, link frame) of link i at
``pts[p0[i]:p0[i + 1]]``; primitive shapes ``st`` (type), ``ss`` (size), ``so`` (4x4 origin in the link) of
link i at ``s0[i]:s0[i + 1]``; bounding spheres ``bc`` (centre, link frame) and ``br`` (radius, < 0: none).
Rows: (C, 3, nv) Jacobians of the normal and two tangents, normal from the other side towards the link.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .articulated import dot, mm, mv, tmv

SPHERE, BOX, CAPSULE, CYLINDER = 0, 1, 2, 3
DUPLICATE = 1e-3  # as link_pairs.DUPLICATE
FACE_TIE = 1e-9  # as link_pairs.FACE_TIE


@njit(cache=True)
def tangents(n):
    """``base.spatial.tangent_basis`` of one unit normal: (3, 3) rows n, t1, t2."""
    nx, ny, nz = n[0], n[1], n[2]
    sign = 1.0 if nz >= 0 else -1.0
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    out = np.empty((3, 3))
    out[0, 0], out[0, 1], out[0, 2] = nx, ny, nz
    out[1, 0], out[1, 1], out[1, 2] = 1.0 + sign * nx * nx * a, sign * b, -sign * nx
    out[2, 0], out[2, 1], out[2, 2] = b, sign + ny * ny * a, -ny
    return out


@njit(cache=True)
def targets(gap, vn, vn0, restitution, threshold, dt, erp, slop):
    """``link_contacts.contact_targets``: (closes this step, velocity target, position-correction target)."""
    if gap > 0 and gap + dt * vn > 0:
        return False, 0.0, 0.0
    target = -gap / dt if gap > 0 else 0.0
    if restitution > 0 and -vn0 > threshold and gap + min(vn, vn0) * dt <= 0:
        target = max(target, -restitution * vn0)
    return True, target, erp * max(-gap - slop, 0.0) / dt


@njit(cache=True)
def point_jacobian(i, p, parent, ds0, nd, S, nv):
    """3 x nv Jacobian of the world velocity of point ``p`` fixed on body ``i``
    (``ArticulatedSystem.point_jacobian``)."""
    jac = np.zeros((3, nv))
    k = i
    while k >= 0:
        for c in range(nd[k]):
            s = S[k, :, c]
            col = ds0[k] + c
            # linear part minus p x angular part
            jac[0, col] = s[3] - (p[1] * s[2] - p[2] * s[1])
            jac[1, col] = s[4] - (p[2] * s[0] - p[0] * s[2])
            jac[2, col] = s[5] - (p[0] * s[1] - p[1] * s[0])
        k = parent[k]
    return jac


@njit(cache=True)
def _world_point(frame, x):
    out = np.empty(3)
    for r in range(3):
        out[r] = frame[r, 0] * x[0] + frame[r, 1] * x[1] + frame[r, 2] * x[2] + frame[r, 3]
    return out


@njit(cache=True)
def plane_rows(frames, pts, p0, allowed, pn, pd, reach, vbody, friction, restitution, threshold, erp, slop,
               u_free, u0, parent, ds0, nd, S, dt):
    """Contacts of link sample points with planes (normal ``pn`` (G, 3), n.x = ``pd``; ``allowed`` (L, G)):
    per link, per plane, per point within ``reach[g]``, as ``WorldContacts.contacts`` and
    ``_ground_contacts`` add them. ``vbody`` (G, 3): the velocity of each plane's body (a kinematic plane
    may translate; the caller takes the numpy route for a spinning one).
    Returns link, plane, point, normal, depth, target, push, speed, rows (C, 3, nv) (normal, t1, t2)."""
    L = p0.shape[0] - 1
    G = pn.shape[0]
    nv = u_free.shape[0]
    cap = max(1, pts.shape[0] * G)
    link = np.empty(cap, np.int64)
    plane = np.empty(cap, np.int64)
    point = np.empty((cap, 3))
    normal = np.empty((cap, 3))
    depth = np.empty(cap)
    tgt = np.empty(cap)
    push = np.empty(cap)
    speed = np.empty(cap)
    rows = np.empty((cap, 3, nv))
    c = 0
    for i in range(L):
        if p0[i + 1] == p0[i]:
            continue
        for g in range(G):
            if not allowed[i, g]:
                continue
            n = pn[g]
            for k in range(p0[i], p0[i + 1]):
                x = _world_point(frames[i], pts[k])
                gap = n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - pd[g] - pts[k, 3]
                if not gap < reach[g]:
                    continue
                p = x - pts[k, 3] * n
                jp = point_jacobian(i, p, parent, ds0, nd, S, nv)
                vb = n[0] * vbody[g, 0] + n[1] * vbody[g, 1] + n[2] * vbody[g, 2]
                vn = 0.0
                vn0 = 0.0
                for col in range(nv):
                    jn = n[0] * jp[0, col] + n[1] * jp[1, col] + n[2] * jp[2, col]
                    vn += jn * u_free[col]
                    vn0 += jn * u0[col]
                vn -= vb
                vn0 -= vb
                ok, t0, t1 = targets(gap, vn, vn0, restitution[g], threshold[g], dt, erp[g], slop[g])
                if not ok:
                    continue
                basis = tangents(n)
                rows[c] = mm(basis, jp)
                link[c], plane[c], point[c], normal[c], depth[c] = i, g, p, n, -gap
                tgt[c], push[c], speed[c] = t0, t1, max(0.0, -vn0)
                c += 1
    return link[:c], plane[:c], point[:c], normal[:c], depth[:c], tgt[:c], push[:c], speed[:c], rows[:c]


@njit(cache=True)
def _sdf(kind, size, c, R, x):
    """``sdf.geom_distance`` of one point against a sphere, box, capsule or cylinder: (distance, normal)."""
    nrm = np.zeros(3)
    if kind == SPHERE:
        d = x - c
        dist = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if dist > 1e-12:
            nrm = d / max(dist, 1e-300)
        else:
            nrm[2] = 1.0
        return dist - size[0], nrm
    xl = tmv(R, x - c)
    nl = np.zeros(3)
    if kind == BOX:
        q = np.abs(xl) - size
        out2 = 0.0
        for r in range(3):
            if q[r] > 0:
                out2 += q[r] * q[r]
        out_len = np.sqrt(out2)
        if out_len > 0:
            for r in range(3):
                s = 1.0 if xl[r] > 0 else (-1.0 if xl[r] < 0 else 0.0)
                nl[r] = s * max(q[r], 0.0) / max(out_len, 1e-300)
            return out_len, mv(R, nl)
        k = 0
        for r in range(1, 3):
            if q[r] > q[k]:
                k = r
        s = 1.0 if xl[k] > 0 else (-1.0 if xl[k] < 0 else 0.0)
        nl[k] = s + (1.0 if xl[k] == 0 else 0.0)
        return q[k], mv(R, nl)
    if kind == CAPSULE:
        r0, hh = size[0], size[1]
        zc = min(max(xl[2], -hh), hh)
        d = np.array([xl[0], xl[1], xl[2] - zc])
        dist = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if dist > 1e-12:
            nl = d / max(dist, 1e-300)
        else:
            nl[0] = 1.0
        return dist - r0, mv(R, nl)
    # cylinder
    r0, hh = size[0], size[1]
    rho = np.hypot(xl[0], xl[1])
    er = np.zeros(3)
    if rho > 1e-12:
        er[0], er[1] = xl[0] / max(rho, 1e-300), xl[1] / max(rho, 1e-300)
    else:
        er[0] = 1.0
    dr, dz = rho - r0, abs(xl[2]) - hh
    ez = np.zeros(3)
    ez[2] = (1.0 if xl[2] > 0 else (-1.0 if xl[2] < 0 else 0.0)) + (1.0 if xl[2] == 0 else 0.0)
    out = np.hypot(max(dr, 0.0), max(dz, 0.0))
    if out > 0:
        nl = (er * max(dr, 0.0) + ez * max(dz, 0.0)) / max(out, 1e-300)
        return out, mv(R, nl)
    nl = er if dr > dz else ez
    return max(dr, dz), mv(R, nl)


@njit(cache=True)
def _face_tie(size, c, R, x, nrm, towards):
    """``link_pairs._face_ties`` for one point on (or in) a box at several faces' depth at once."""
    local = tmv(R, x - c)
    q = np.abs(local) - size
    qmax = max(q[0], max(q[1], q[2]))
    if qmax > FACE_TIE:
        return nrm
    count = 0
    for r in range(3):
        if q[r] >= qmax - FACE_TIE:
            count += 1
    if count < 2:
        return nrm
    look = tmv(R, towards - c)
    best, bv = -1, -1e300
    for r in range(3):
        if q[r] >= qmax - FACE_TIE:
            s = np.sign(local[r]) if local[r] != 0 else np.sign(look[r])
            v = s * look[r] / size[r]
            if v > bv:
                best, bv = r, v
    n = np.zeros(3)
    if local[best] != 0:
        n[best] = np.sign(local[best])
    else:
        sl = np.sign(look[best])
        n[best] = sl if sl != 0 else 1.0
    return mv(R, n)


@njit(cache=True)
def _segment_closest(ca, ha, cb, hb):
    """``link_pairs._segment_closest``."""
    d1, d2 = 2.0 * ha, 2.0 * hb
    r = (ca - ha) - (cb - hb)
    a, e, f = dot(d1, d1), dot(d2, d2), dot(d2, r)
    c, bb = dot(d1, r), dot(d1, d2)
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


@njit(cache=True)
def sphere_speeds(u, parent, ds0, nd, S, centres, radii):
    """``link_pairs._sphere_speeds``: the fastest any point of each link's bounding sphere moves at ``u``."""
    n = parent.shape[0]
    vel = np.zeros((n, 6))
    out = np.zeros(n)
    for i in range(n):
        if parent[i] >= 0:
            vel[i] = vel[parent[i]]
        for c in range(nd[i]):
            for r in range(6):
                vel[i, r] += S[i, r, c] * u[ds0[i] + c]
        w, c3 = vel[i, :3], centres[i]
        v = np.array([vel[i, 3] + w[1] * c3[2] - w[2] * c3[1], vel[i, 4] + w[2] * c3[0] - w[0] * c3[2],
                      vel[i, 5] + w[0] * c3[1] - w[1] * c3[0]])
        out[i] = np.sqrt(dot(v, v)) + np.sqrt(dot(w, w)) * max(radii[i], 0.0)
    return out


@njit(cache=True)
def _points_vs_shapes(fp, pts, k0, k1, fs, st, ss, so, s0, s1, towards, reach, flip, fa, fb, fn, fg, cnt):
    """Sample points pts[k0:k1] (frame ``fp``) against shapes s0:s1 (frame ``fs``), appended to the found
    lists as (point on a, point on b, normal b -> a, gap); ``flip``: the points are b's."""
    if k1 == k0 or s1 == s0:
        return cnt
    for sh in range(s0, s1):
        t = mm(fs, so[sh])
        c, R = t[:3, 3].copy(), t[:3, :3].copy()
        for k in range(k0, k1):
            x = _world_point(fp, pts[k])
            dist, nrm = _sdf(st[sh], ss[sh], c, R, x)
            if st[sh] == BOX:
                nrm = _face_tie(ss[sh], c, R, x, nrm, towards)
            gap = dist - pts[k, 3]
            if not gap < reach:
                continue
            on_points = x - pts[k, 3] * nrm
            on_shape = x - dist * nrm
            if cnt >= fa.shape[0]:
                return cnt
            if flip:
                fa[cnt], fb[cnt], fn[cnt] = on_shape, on_points, -nrm
            else:
                fa[cnt], fb[cnt], fn[cnt] = on_points, on_shape, nrm
            fg[cnt] = gap
            cnt += 1
    return cnt


@njit(cache=True)
def pair_rows(same, allowed, fa_, pts_a, p0a, st_a, ss_a, so_a, s0a, bca, bra, ua, u0a, para, ds0a, nda, Sa,
              fb_, pts_b, p0b, st_b, ss_b, so_b, s0b, bcb, brb, ub, u0b, parb, ds0b, ndb, Sb,
              friction, restitution, threshold, erp, slop, margin, dt):
    """Contact rows between the links of system a and system b (``same``: a with itself, ``allowed`` its
    upper triangle), ``link_pairs.link_pair_contacts`` for one pair of systems. ``fa_``/``fb_``: link frames
    (L, 4, 4). Returns link i, link j, point, normal, depth, target, push, speed, rows of a (C, 3, nva) and of
    b (C, 3, nvb) (same: a's rows hold the difference of the two points' Jacobians, b's are zero)."""
    La, Lb = bca.shape[0], bcb.shape[0]
    nva, nvb = ua.shape[0], ub.shape[0]
    ca = np.empty((La, 3))
    for i in range(La):
        ca[i] = _world_point(fa_[i], bca[i])
    cb = np.empty((Lb, 3))
    for j in range(Lb):
        cb[j] = _world_point(fb_[j], bcb[j])
    spa = sphere_speeds(ua, para, ds0a, nda, Sa, ca, bra)
    spb = sphere_speeds(ub, parb, ds0b, ndb, Sb, cb, brb)
    cap = 64
    li = np.empty(cap, np.int64)
    lj = np.empty(cap, np.int64)
    point = np.empty((cap, 3))
    normal = np.empty((cap, 3))
    depth = np.empty(cap)
    tgt = np.empty(cap)
    push = np.empty(cap)
    speed = np.empty(cap)
    rows_a = np.empty((cap, 3, nva))
    rows_b = np.zeros((cap, 3, nvb))
    C = 0
    FMAX = 256
    fa = np.empty((FMAX, 3))
    fb = np.empty((FMAX, 3))
    fn = np.empty((FMAX, 3))
    fg = np.empty(FMAX)
    keep = np.empty(FMAX, np.bool_)
    for i in range(La):
        if bra[i] < 0:
            continue
        for j in range(Lb):
            if not allowed[i, j] or brb[j] < 0:
                continue
            reach = margin + 2.0 * dt * (spa[i] + spb[j])
            d = ca[i] - cb[j]
            if not np.sqrt(dot(d, d)) < bra[i] + brb[j] + reach:
                continue
            A, B = fa_[i], fb_[j]
            n_found = _points_vs_shapes(A, pts_a, p0a[i], p0a[i + 1], B, st_b, ss_b, so_b, s0b[j], s0b[j + 1],
                                        ca[i], reach, False, fa, fb, fn, fg, 0)
            n_found = _points_vs_shapes(B, pts_b, p0b[j], p0b[j + 1], A, st_a, ss_a, so_a, s0a[i], s0a[i + 1],
                                        cb[j], reach, True, fa, fb, fn, fg, n_found)
            for sa in range(s0a[i], s0a[i + 1]):
                if st_a[sa] != CAPSULE:
                    continue
                ta = mm(A, so_a[sa])
                for sb in range(s0b[j], s0b[j + 1]):
                    if st_b[sb] != CAPSULE or n_found >= FMAX:
                        continue
                    tb = mm(B, so_b[sb])
                    ra, ha, rb, hb = ss_a[sa, 0], ss_a[sa, 1], ss_b[sb, 0], ss_b[sb, 1]
                    qa, qb = _segment_closest(ta[:3, 3].copy(), ta[:3, 2] * ha, tb[:3, 3].copy(), tb[:3, 2] * hb)
                    dd = qa - qb
                    length = np.sqrt(dot(dd, dd))
                    if length < 1e-12 or length - ra - rb >= reach:
                        continue
                    n = dd / length
                    fa[n_found], fb[n_found], fn[n_found] = qa - ra * n, qb + rb * n, n
                    fg[n_found] = length - ra - rb
                    n_found += 1
            for f in range(n_found):
                dup = False
                for g in range(f):
                    if not keep[g]:
                        continue
                    dd = fa[f] - fa[g]
                    if np.sqrt(dot(dd, dd)) < DUPLICATE and dot(fn[f], fn[g]) > 0.9:
                        dup = True
                        break
                keep[f] = not dup
            for f in range(n_found):
                if not keep[f]:
                    continue
                p = 0.5 * (fa[f] + fb[f])
                n = fn[f]
                ja = point_jacobian(i, p, para, ds0a, nda, Sa, nva)
                jb = point_jacobian(j, p, parb, ds0b, ndb, Sb, nvb)
                if same:
                    jrel = ja - jb
                    vrel = tmv(jrel, n)
                    vn = dot(vrel, ua)
                    vn0 = dot(vrel, u0a)
                else:
                    vn = dot(tmv(ja, n), ua) - dot(tmv(jb, n), ub)
                    vn0 = dot(tmv(ja, n), u0a) - dot(tmv(jb, n), u0b)
                ok, t0, t1 = targets(fg[f], vn, vn0, restitution, threshold, dt, erp, slop)
                if not ok:
                    continue
                if C >= cap:
                    cap *= 2
                    li, lj, point, normal = _grow_i(li, cap), _grow_i(lj, cap), _grow3(point, cap), _grow3(normal, cap)
                    depth, tgt, push, speed = _grow(depth, cap), _grow(tgt, cap), _grow(push, cap), _grow(speed, cap)
                    rows_a, rows_b = _grow_rows(rows_a, cap), _grow_rows(rows_b, cap)
                basis = tangents(n)
                if same:
                    rows_a[C] = mm(basis, jrel)
                else:
                    rows_a[C] = mm(basis, ja)
                    rows_b[C] = mm(basis, jb)
                li[C], lj[C], point[C], normal[C], depth[C] = i, j, p, n, -fg[f]
                tgt[C], push[C], speed[C] = t0, t1, max(0.0, -vn0)
                C += 1
    return li[:C], lj[:C], point[:C], normal[:C], depth[:C], tgt[:C], push[:C], speed[:C], rows_a[:C], rows_b[:C]


@njit(cache=True)
def _grow(a, cap):
    out = np.empty(cap)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _grow_i(a, cap):
    out = np.empty(cap, np.int64)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _grow3(a, cap):
    out = np.empty((cap, 3))
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _grow_rows(a, cap):
    out = np.zeros((cap, 3, a.shape[2]))
    out[:a.shape[0]] = a
    return out
