"""Compiled contact rows of robot links: link sample points against planes (``link_contacts`` for plane geoms,
``ArticulatedSystem._ground_contacts``) and link against link inside one system or between two
(``link_pairs``: bounding-sphere broadphase, sample points against primitive shapes both ways with the box
face-tie rule, capsule axes against capsule axes, near-duplicates dropped). Same tests, same formulas, same
order as the numpy modules, which stay the reference.

Shapes per system (``sim.robot_arrays``): sample points ``pts`` (P, 4: x y z radius, link frame) of link i at
``pts[p0[i]:p0[i + 1]]``; primitive shapes ``st`` (type), ``ss`` (size), ``so`` (4x4 origin in the link) of
link i at ``s0[i]:s0[i + 1]``; bounding spheres ``bc`` (centre, link frame) and ``br`` (radius, < 0: none).
Rows: (C, 3, nv) Jacobians of the normal and two tangents, normal from the other side towards the link.

The leaves that allocate nothing compile without reference counting (``_nrt=False``): with it every view and
array argument costs an atomic increment and decrement, a third of the self-contact pass of a Laikago step.
"""
from __future__ import annotations

import numpy as np
from numba import njit


SPHERE, BOX, CAPSULE, CYLINDER = 0, 1, 2, 3
DUPLICATE = 1e-3  # as link_pairs.DUPLICATE
FACE_TIE = 1e-9  # as link_pairs.FACE_TIE
SLACK = 1e-9  # m: the exact culls (shape boxes) widened by this, far above round-off, so they never drop a contact


@njit(cache=True, _nrt=False)
def tangents_into(out, n):
    """out (3, 3) = ``base.spatial.tangent_basis`` of one unit normal: rows n, t1, t2 (no allocation: once
    per contact)."""
    nx, ny, nz = n[0], n[1], n[2]
    sign = 1.0 if nz >= 0 else -1.0
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    out[0, 0], out[0, 1], out[0, 2] = nx, ny, nz
    out[1, 0], out[1, 1], out[1, 2] = 1.0 + sign * nx * nx * a, sign * b, -sign * nx
    out[2, 0], out[2, 1], out[2, 2] = b, sign + ny * ny * a, -ny


@njit(cache=True, _nrt=False)
def targets(gap, vn, vn0, restitution, threshold, dt, erp, slop):
    """``link_contacts.contact_targets``: (closes this step, velocity target, position-correction target)."""
    if gap > 0 and gap + dt * vn > 0:
        return False, 0.0, 0.0
    target = -gap / dt if gap > 0 else 0.0
    if restitution > 0 and -vn0 > threshold and gap + min(vn, vn0) * dt <= 0:
        target = max(target, -restitution * vn0)
    return True, target, erp * max(-gap - slop, 0.0) / dt


@njit(cache=True, _nrt=False)
def _point_jacobian_into(jac, i, p, parent, ds0, nd, S):
    """jac (3, nv) = ``point_jacobian(i, p)`` (no allocation: once per contact)."""
    for r in range(3):
        for col in range(jac.shape[1]):
            jac[r, col] = 0.0
    k = i
    while k >= 0:
        for c in range(nd[k]):
            col = ds0[k] + c
            # linear part minus p x angular part
            jac[0, col] = S[k, 3, c] - (p[1] * S[k, 2, c] - p[2] * S[k, 1, c])
            jac[1, col] = S[k, 4, c] - (p[2] * S[k, 0, c] - p[0] * S[k, 2, c])
            jac[2, col] = S[k, 5, c] - (p[0] * S[k, 1, c] - p[1] * S[k, 0, c])
        k = parent[k]


@njit(cache=True, _nrt=False)
def _rows_into(rows, c, basis, jp):
    """rows[c] = basis @ jp."""
    for a in range(3):
        for col in range(jp.shape[1]):
            rows[c, a, col] = basis[a, 0] * jp[0, col] + basis[a, 1] * jp[1, col] + basis[a, 2] * jp[2, col]


@njit(cache=True)
def _world_centres(frames, centres):
    """(L, 3) world points of each link's local point ``centres[i]`` in its frame ``frames[i]``."""
    out = np.empty((centres.shape[0], 3))
    for i in range(centres.shape[0]):
        # element by element: ``out[i] = vector`` compiles numpy's broadcasting (with its error messages),
        # which was a sixth of the robot kernels' first compile
        for r in range(3):
            out[i, r] = (frames[i, r, 0] * centres[i, 0] + frames[i, r, 1] * centres[i, 1]
                         + frames[i, r, 2] * centres[i, 2] + frames[i, r, 3])
    return out


@njit(cache=True)
def plane_rows(frames, pts, p0, allowed, pn, pd, reach, vbody, pmat, erp, slop, u_free, u0, parent, ds0, nd, S, dt):
    """Contacts of link sample points with planes (normal ``pn`` (G, 3), n.x = ``pd``; ``allowed`` (L, G)):
    per link, per plane, per point within ``reach[g]``, as ``WorldContacts.contacts`` and
    ``_ground_contacts`` add them. ``vbody`` (G, 3): the velocity of each plane's body (a kinematic plane
    may translate; the caller takes the numpy route for a spinning one); ``pmat`` (G, 3): friction,
    restitution and its threshold velocity per plane. Returns link, plane, point, normal, depth, target, push, speed, rows (C, 3, nv) (normal, t1, t2)."""
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
    # the normal speed of every point in reach (most do not close this step): from the bodies' velocities
    vel_free = body_velocities(u_free, parent, ds0, nd, S)
    vel0 = body_velocities(u0, parent, ds0, nd, S)
    p = np.empty(3)
    c = np.int64(0)  # not the constant 0: numba would compile _rows_into for it apart
    for i in range(L):
        if p0[i + 1] == p0[i]:
            continue
        for g in range(G):
            if not allowed[i, g]:
                continue
            n = pn[g]
            f = frames[i]
            # the plane in the link's frame (normal R^T n, offset n.o - d): a point's gap in three products,
            # widened by ``SLACK`` for its round-off, rejects most points before their world position
            m0 = n[0] * f[0, 0] + n[1] * f[1, 0] + n[2] * f[2, 0]
            m1 = n[0] * f[0, 1] + n[1] * f[1, 1] + n[2] * f[2, 1]
            m2 = n[0] * f[0, 2] + n[1] * f[1, 2] + n[2] * f[2, 2]
            base = n[0] * f[0, 3] + n[1] * f[1, 3] + n[2] * f[2, 3] - pd[g] - reach[g] - SLACK
            for k in range(p0[i], p0[i + 1]):
                pk = pts[k]
                if m0 * pk[0] + m1 * pk[1] + m2 * pk[2] + base - pk[3] >= 0.0:
                    continue
                x0 = f[0, 0] * pk[0] + f[0, 1] * pk[1] + f[0, 2] * pk[2] + f[0, 3]
                x1 = f[1, 0] * pk[0] + f[1, 1] * pk[1] + f[1, 2] * pk[2] + f[1, 3]
                x2 = f[2, 0] * pk[0] + f[2, 1] * pk[1] + f[2, 2] * pk[2] + f[2, 3]
                gap = n[0] * x0 + n[1] * x1 + n[2] * x2 - pd[g] - pts[k, 3]
                if not gap < reach[g]:
                    continue
                p[0], p[1], p[2] = x0 - pts[k, 3] * n[0], x1 - pts[k, 3] * n[1], x2 - pts[k, 3] * n[2]
                vb = n[0] * vbody[g, 0] + n[1] * vbody[g, 1] + n[2] * vbody[g, 2]
                vn = _normal_speed(vel_free, i, p, n) - vb
                vn0 = _normal_speed(vel0, i, p, n) - vb
                ok, t0, t1 = targets(gap, vn, vn0, pmat[g, 1], pmat[g, 2], dt, erp[g], slop[g])
                if not ok:
                    continue
                for r in range(3):
                    point[c, r], normal[c, r] = p[r], n[r]
                link[c], plane[c], depth[c] = i, g, -gap
                tgt[c], push[c], speed[c] = t0, t1, max(0.0, -vn0)
                c += 1
    # the rows of the contacts found (a buffer for every point in reach was P G 3 nv floats a step)
    rows = np.empty((c, 3, nv))
    jp = np.empty((3, nv))
    basis = np.empty((3, 3))
    for x in range(c):
        _point_jacobian_into(jp, link[x], point[x], parent, ds0, nd, S)
        tangents_into(basis, normal[x])
        _rows_into(rows, x, basis, jp)
    return link[:c], plane[:c], point[:c], normal[:c], depth[:c], tgt[:c], push[:c], speed[:c], rows


@njit(cache=True, _nrt=False)
def _local(R, c, x):
    """R^T (x - c) as three scalars (no array: these run once per point and shape)."""
    d0, d1, d2 = x[0] - c[0], x[1] - c[1], x[2] - c[2]
    return (R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2, R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2,
            R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2)


@njit(cache=True, _nrt=False)
def _rot(R, n0, n1, n2):
    """R @ n as three scalars, summed in ``mv``'s order."""
    return (0.0 + R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2, 0.0 + R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2,
            0.0 + R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2)


@njit(cache=True, _nrt=False)
def _sgn(v):
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)


@njit(cache=True, _nrt=False)
def _sdf(kind, size, c, R, x):
    """``sdf.geom_distance`` of one point against a sphere, box, capsule or cylinder: (distance, normal x,
    y, z), scalars (this runs for every point near a shape: no heap arrays)."""
    if kind == SPHERE:
        d0, d1, d2 = x[0] - c[0], x[1] - c[1], x[2] - c[2]
        dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if dist > 1e-12:
            return dist - size[0], d0 / dist, d1 / dist, d2 / dist
        return dist - size[0], 0.0, 0.0, 1.0
    x0, x1, x2 = _local(R, c, x)
    dist = 0.0
    n0, n1, n2 = 0.0, 0.0, 0.0
    if kind == BOX:
        q0, q1, q2 = abs(x0) - size[0], abs(x1) - size[1], abs(x2) - size[2]
        p0, p1, p2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
        out_len = np.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        if out_len > 0:
            n0, n1, n2 = _sgn(x0) * p0 / out_len, _sgn(x1) * p1 / out_len, _sgn(x2) * p2 / out_len
            dist = out_len
        else:
            k, dist = 0, q0
            if q1 > dist:
                k, dist = 1, q1
            if q2 > dist:
                k, dist = 2, q2
            if k == 0:
                n0 = _sgn(x0) + (1.0 if x0 == 0 else 0.0)
            elif k == 1:
                n1 = _sgn(x1) + (1.0 if x1 == 0 else 0.0)
            else:
                n2 = _sgn(x2) + (1.0 if x2 == 0 else 0.0)
    elif kind == CAPSULE:
        zc = min(max(x2, -size[1]), size[1])
        d0, d1, d2 = x0, x1, x2 - zc
        length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if length > 1e-12:
            n0, n1, n2 = d0 / length, d1 / length, d2 / length
        else:
            n0 = 1.0
        dist = length - size[0]
    else:  # cylinder
        rho = np.hypot(x0, x1)
        e0, e1 = 1.0, 0.0
        if rho > 1e-12:
            e0, e1 = x0 / rho, x1 / rho
        dr, dz = rho - size[0], abs(x2) - size[1]
        ez = _sgn(x2) + (1.0 if x2 == 0 else 0.0)
        out = np.hypot(max(dr, 0.0), max(dz, 0.0))
        if out > 0:
            n0, n1, n2 = e0 * max(dr, 0.0) / out, e1 * max(dr, 0.0) / out, ez * max(dz, 0.0) / out
            dist = out
        else:
            if dr > dz:
                n0, n1 = e0, e1
            else:
                n2 = ez
            dist = max(dr, dz)
    w0, w1, w2 = _rot(R, n0, n1, n2)
    return dist, w0, w1, w2


@njit(cache=True, _nrt=False)
def _face_tie(size, c, R, x, n0, n1, n2, towards):
    """``link_pairs._face_ties`` for one point on (or in) a box at several faces' depth at once: the normal
    (three scalars; unchanged when the point is not at a tie)."""
    l0, l1, l2 = _local(R, c, x)
    q0, q1, q2 = abs(l0) - size[0], abs(l1) - size[1], abs(l2) - size[2]
    qmax = max(q0, max(q1, q2))
    if qmax > FACE_TIE:
        return n0, n1, n2
    count = 0
    for qr in (q0, q1, q2):
        if qr >= qmax - FACE_TIE:
            count += 1
    if count < 2:
        return n0, n1, n2
    k0, k1, k2 = _local(R, c, towards)
    best, bv, lb, kb = -1, -1e300, 0.0, 0.0
    for r in range(3):
        qr = q0 if r == 0 else (q1 if r == 1 else q2)
        lr = l0 if r == 0 else (l1 if r == 1 else l2)
        kr = k0 if r == 0 else (k1 if r == 1 else k2)
        if qr >= qmax - FACE_TIE:
            sg = _sgn(lr) if lr != 0 else _sgn(kr)
            v = sg * kr / size[r]
            if v > bv:
                best, bv, lb, kb = r, v, lr, kr
    if lb != 0:
        m = _sgn(lb)
    else:
        sl = _sgn(kb)
        m = sl if sl != 0 else 1.0
    return _rot(R, m if best == 0 else 0.0, m if best == 1 else 0.0, m if best == 2 else 0.0)


@njit(cache=True, _nrt=False)
def _segment_closest(A, oa, ha, B, ob, hb, w):
    """``link_pairs._segment_closest`` of the capsule axes of poses A @ oa and B @ ob (their z axes, half
    lengths ha, hb; the sums of ``mm`` and ``dot``): w (5, 3) scratch holding the axes d1, d2, their starts'
    difference, then the closest points on a's axis (w[3]) and on b's (w[4])."""
    for k in range(3):
        a2, a3, b2, b3 = 0.0, 0.0, 0.0, 0.0
        for m in range(4):
            a2 += A[k, m] * oa[m, 2]
            a3 += A[k, m] * oa[m, 3]
            b2 += B[k, m] * ob[m, 2]
            b3 += B[k, m] * ob[m, 3]
        w[0, k], w[1, k] = 2.0 * a2 * ha, 2.0 * b2 * hb
        w[3, k], w[4, k] = a3 - a2 * ha, b3 - b2 * hb
        w[2, k] = w[3, k] - w[4, k]
    a, e, f, c, bb = 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(3):
        a += w[0, k] * w[0, k]
        e += w[1, k] * w[1, k]
        f += w[1, k] * w[2, k]
        c += w[0, k] * w[2, k]
        bb += w[0, k] * w[1, k]
    if a < 1e-18 and e < 1e-18:
        s, t = 0.0, 0.0
    elif a < 1e-18:
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
    for k in range(3):
        w[3, k] += s * w[0, k]
        w[4, k] += t * w[1, k]


@njit(cache=True)
def body_velocities(u, parent, ds0, nd, S):
    """(n, 6) spatial velocities [w; v] (world-origin Plücker) of every body at joint velocities ``u``: a
    point p fixed on body i moves at v + w x p, which is ``point_jacobian(i, p) @ u`` without the matrix."""
    n = parent.shape[0]
    vel = np.zeros((n, 6))
    for i in range(n):
        if parent[i] >= 0:
            for r in range(6):
                vel[i, r] = vel[parent[i], r]
        for c in range(nd[i]):
            for r in range(6):
                vel[i, r] += S[i, r, c] * u[ds0[i] + c]
    return vel


@njit(cache=True, _nrt=False)
def _normal_speed(vel, i, p, n):
    """n . (velocity of the point p fixed on body i) for body velocities ``vel`` (``body_velocities``)."""
    w0, w1, w2 = vel[i, 0], vel[i, 1], vel[i, 2]
    v0 = vel[i, 3] + (w1 * p[2] - w2 * p[1])
    v1 = vel[i, 4] + (w2 * p[0] - w0 * p[2])
    v2 = vel[i, 5] + (w0 * p[1] - w1 * p[0])
    return n[0] * v0 + n[1] * v1 + n[2] * v2


@njit(cache=True)
def sphere_speeds(u, parent, ds0, nd, S, centres, radii):
    """``link_pairs._sphere_speeds``: the fastest any point of each link's bounding sphere moves at ``u``."""
    return _sphere_speeds(body_velocities(u, parent, ds0, nd, S), centres, radii)


@njit(cache=True)
def _sphere_speeds(vel, centres, radii):
    """``sphere_speeds`` from the body velocities ``vel`` (``body_velocities``)."""
    out = np.zeros(vel.shape[0])
    for i in range(vel.shape[0]):
        w0, w1, w2 = vel[i, 0], vel[i, 1], vel[i, 2]
        c0, c1, c2 = centres[i, 0], centres[i, 1], centres[i, 2]
        v0 = vel[i, 3] + w1 * c2 - w2 * c1
        v1 = vel[i, 4] + w2 * c0 - w0 * c2
        v2 = vel[i, 5] + w0 * c1 - w1 * c0
        out[i] = np.sqrt(v0 * v0 + v1 * v1 + v2 * v2) + np.sqrt(w0 * w0 + w1 * w1 + w2 * w2) * max(radii[i], 0.0)
    return out


@njit(cache=True, _nrt=False)
def _links_geometry(need, frames, pts, p0, st, ss, so, s0, wp, sc, sR, se, box):
    """Per link i with ``need[i]`` (in a pair that passed the bounding-sphere test: most links of a standing
    robot are in none): its world sample points ``wp``, shape poses (centres ``sc``, rotations ``sR``), its
    shapes' world AABB half extents and bounding radii ``se`` (NS, 4), and its boxes ``box[i]``: lo, hi of
    everything (points with their radii, shapes), then lo, hi of the points alone; from its frame
    ``frames[i]``. The shapes' boxes are exact (a box's |R| h, a cylinder's |a| h + r sqrt(1 - a^2)) and
    widened by ``SLACK``, so they hold every point their signed distances can find whatever the round-off.
    All links in one call: a call per link cost more than its body."""
    for i in range(need.shape[0]):
        if not need[i]:
            continue
        f = frames[i]
        lo0, lo1, lo2 = np.inf, np.inf, np.inf
        hi0, hi1, hi2 = -np.inf, -np.inf, -np.inf
        for k in range(p0[i], p0[i + 1]):
            x, y, z, rad = pts[k, 0], pts[k, 1], pts[k, 2], pts[k, 3]
            v0 = f[0, 0] * x + f[0, 1] * y + f[0, 2] * z + f[0, 3]
            v1 = f[1, 0] * x + f[1, 1] * y + f[1, 2] * z + f[1, 3]
            v2 = f[2, 0] * x + f[2, 1] * y + f[2, 2] * z + f[2, 3]
            wp[k, 0], wp[k, 1], wp[k, 2] = v0, v1, v2
            lo0, lo1, lo2 = min(lo0, v0 - rad), min(lo1, v1 - rad), min(lo2, v2 - rad)
            hi0, hi1, hi2 = max(hi0, v0 + rad), max(hi1, v1 + rad), max(hi2, v2 + rad)
        box[i, 0], box[i, 1], box[i, 2], box[i, 3], box[i, 4], box[i, 5] = lo0, lo1, lo2, hi0, hi1, hi2
        box[i, 6], box[i, 7], box[i, 8], box[i, 9], box[i, 10], box[i, 11] = lo0, lo1, lo2, hi0, hi1, hi2
        for sh in range(s0[i], s0[i + 1]):
            # the shape's world pose f @ so[sh] (its rotation and origin), written in place
            for r in range(3):
                for col in range(4):
                    t = 0.0
                    for m in range(4):
                        t += f[r, m] * so[sh, m, col]
                    if col < 3:
                        sR[sh, r, col] = t
                    else:
                        sc[sh, r] = t
            kind, z = st[sh], ss[sh]
            for r in range(3):
                a = sR[sh, r, 2]  # the shape's z axis (capsule and cylinder axes)
                if kind == BOX:
                    e = abs(sR[sh, r, 0]) * z[0] + abs(sR[sh, r, 1]) * z[1] + abs(a) * z[2]
                elif kind == CAPSULE:
                    e = abs(a) * z[1] + z[0]
                elif kind == CYLINDER:
                    e = abs(a) * z[1] + z[0] * np.sqrt(max(1.0 - a * a, 0.0))
                else:
                    e = z[0]
                se[sh, r] = e + SLACK
                box[i, r] = min(box[i, r], sc[sh, r] - se[sh, r])
                box[i, 3 + r] = max(box[i, 3 + r], sc[sh, r] + se[sh, r])
            if kind == BOX:
                se[sh, 3] = np.sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2])
            elif kind == CAPSULE:
                se[sh, 3] = z[0] + z[1]
            elif kind == CYLINDER:
                se[sh, 3] = np.hypot(z[0], z[1])
            else:
                se[sh, 3] = z[0]


@njit(cache=True, _nrt=False)
def _points_vs_shapes(wp, pts, k0, k1, box, li, st, ss, sc, sR, se, s0, s1, centres, ci, reach, flip, found, cnt):
    """World sample points wp[k0:k1] (radii in ``pts``) against shapes s0:s1 (world centres ``sc``,
    rotations ``sR``, boxes and bounding radii ``se``), appended to ``found`` as rows (point on a, point on
    b, normal b -> a, gap); ``flip``: the points are b's; ``centres[ci]``: the other link's centre (the
    face-tie rule looks towards it). Culls before any signed distance, each a superset of what the
    distance can find: a shape whose box or bounding sphere is farther than the reach from the points' box
    ``box[li, 6:12]`` skips them all; a point farther than its reach from a shape's box or bounding sphere
    is skipped. Rows by index, not views: a view argument is a struct built (and reference counted) at
    every call."""
    if k1 == k0 or s1 == s0:
        return cnt
    for sh in range(s0, s1):
        c0, c1, c2, rad = sc[sh, 0], sc[sh, 1], sc[sh, 2], se[sh, 3]
        e0 = max(box[li, 6] - c0, 0.0, c0 - box[li, 9])
        e1 = max(box[li, 7] - c1, 0.0, c1 - box[li, 10])
        e2 = max(box[li, 8] - c2, 0.0, c2 - box[li, 11])
        if np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) >= rad + reach:
            continue
        e0 = max(box[li, 6] - c0 - se[sh, 0], 0.0, c0 - se[sh, 0] - box[li, 9])
        e1 = max(box[li, 7] - c1 - se[sh, 1], 0.0, c1 - se[sh, 1] - box[li, 10])
        e2 = max(box[li, 8] - c2 - se[sh, 2], 0.0, c2 - se[sh, 2] - box[li, 11])
        if np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) >= reach:
            continue
        for k in range(k0, k1):
            # the box and bounding-sphere rejects by index: most points fail them, and a view per point
            # costs more
            d0, d1, d2 = wp[k, 0] - c0, wp[k, 1] - c1, wp[k, 2] - c2
            far = reach + pts[k, 3]
            if abs(d0) - se[sh, 0] >= far or abs(d1) - se[sh, 1] >= far or abs(d2) - se[sh, 2] >= far:
                continue
            if np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - rad - pts[k, 3] >= reach:
                continue
            c, R, x = sc[sh], sR[sh], wp[k]
            dist, m0, m1, m2 = _sdf(st[sh], ss[sh], c, R, x)
            gap = dist - pts[k, 3]
            if not gap < reach:
                continue
            if st[sh] == BOX:
                m0, m1, m2 = _face_tie(ss[sh], c, R, x, m0, m1, m2, centres[ci])
            if cnt >= found.shape[0]:
                return cnt
            sg = -1.0 if flip else 1.0
            for r in range(3):
                nr = m0 if r == 0 else (m1 if r == 1 else m2)
                on_points = x[r] - pts[k, 3] * nr
                on_shape = x[r] - dist * nr
                found[cnt, r] = on_shape if flip else on_points
                found[cnt, 3 + r] = on_points if flip else on_shape
                found[cnt, 6 + r] = sg * nr
            found[cnt, 9] = gap
            cnt += 1
    return cnt


@njit(cache=True)
def pair_rows(same, allowed, fa_, pts_a, p0a, st_a, ss_a, so_a, s0a, bca, bra, ua, u0a, para, ds0a, nda, Sa,
              fb_, pts_b, p0b, st_b, ss_b, so_b, s0b, bcb, brb, ub, u0b, parb, ds0b, ndb, Sb,
              friction, restitution, threshold, erp, slop, margin, dt):
    """Contact rows between the links of system a and system b (``same``: a with itself, ``allowed`` its
    upper triangle, the lower one not read), ``link_pairs.link_pair_contacts`` for one pair of systems.
    ``fa_``/``fb_``: link frames (L, 4, 4). Returns link i, link j, point, normal, depth, target, push, speed,
    rows of a (C, 3, nva) and of b (C, 3, nvb) (same: a's rows hold the difference of the two points'
    Jacobians, b's are zero)."""
    La, Lb = bca.shape[0], bcb.shape[0]
    nva, nvb = ua.shape[0], ub.shape[0]
    # body velocities at the free joint velocities (the bounding spheres' speeds, and with those at the
    # current ones, once a candidate is found, the normal speed of each candidate point without its Jacobians)
    vfa = body_velocities(ua, para, ds0a, nda, Sa)
    ca = _world_centres(fa_, bca)
    spa = _sphere_speeds(vfa, ca, bra)
    # per-step geometry (``_links_geometry``, of the links in a pair that passed the bounding-sphere test):
    # world sample points, shape centres, rotations, boxes and radii, link boxes
    wpa, sca, sRa = np.empty((pts_a.shape[0], 3)), np.empty((st_a.shape[0], 3)), np.empty((st_a.shape[0], 3, 3))
    sea, boxa = np.empty((st_a.shape[0], 4)), np.empty((La, 12))
    need_a = np.zeros(La, np.bool_)
    v0a, v0b, have0 = vfa, vfa, False
    if same:
        cb, spb, vfb = ca, spa, vfa
        wpb, scb, sRb, seb, boxb, need_b = wpa, sca, sRa, sea, boxa, need_a
    else:
        vfb = body_velocities(ub, parb, ds0b, ndb, Sb)
        cb = _world_centres(fb_, bcb)
        spb = _sphere_speeds(vfb, cb, brb)
        wpb, scb, sRb = np.empty((pts_b.shape[0], 3)), np.empty((st_b.shape[0], 3)), np.empty((st_b.shape[0], 3, 3))
        seb, boxb, need_b = np.empty((st_b.shape[0], 4)), np.empty((Lb, 12)), np.zeros(Lb, np.bool_)
    # the contacts kept, one row each: i, j, point, normal, depth, target, push, speed (a few a step, grown
    # when more; their Jacobian rows after the search, once their number is known)
    rec = np.empty((8, 12))
    C = np.int64(0)  # not constants (C, flips, counts): numba compiles a callee once per constant
    found = np.empty((256, 10))  # one link pair's candidates: point on a, point on b, normal b -> a, gap
    keep = np.empty(found.shape[0], np.bool_)
    seg = np.empty((5, 3))  # capsule axes' scratch (``_segment_closest``)
    flips = np.zeros(2, np.bool_)
    flips[1] = True
    none = np.int64(0)
    p = np.empty(3)
    n = np.empty(3)
    # the links with anything to collide with (a robot's many massless frames have nothing), and of one
    # system's own pairs only the upper triangle (``allowed``'s lower one is not read)
    live_a = np.empty(La, np.int64)
    na = 0
    for i in range(La):
        if bra[i] >= 0:
            live_a[na] = i
            na += 1
    live_b, nb = live_a, na
    if not same:
        live_b = np.empty(Lb, np.int64)
        nb = 0
        for j in range(Lb):
            if brb[j] >= 0:
                live_b[nb] = j
                nb += 1
    # the pairs whose bounding spheres, padded by the pair's reach, meet (i, j, reach), in the search's order
    pairs = np.empty((na * nb, 3))
    npairs = 0
    for x in range(na):
        i = live_a[x]
        for y in range(x if same else 0, nb):
            j = live_b[y]
            if not allowed[i, j]:
                continue
            reach = margin + 2.0 * dt * (spa[i] + spb[j])
            d0, d1, d2 = ca[i, 0] - cb[j, 0], ca[i, 1] - cb[j, 1], ca[i, 2] - cb[j, 2]
            if not np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) < bra[i] + brb[j] + reach:
                continue
            pairs[npairs, 0], pairs[npairs, 1], pairs[npairs, 2] = i, j, reach
            npairs += 1
            need_a[i] = need_b[j] = True
    _links_geometry(need_a, fa_, pts_a, p0a, st_a, ss_a, so_a, s0a, wpa, sca, sRa, sea, boxa)
    if not same:
        _links_geometry(need_b, fb_, pts_b, p0b, st_b, ss_b, so_b, s0b, wpb, scb, sRb, seb, boxb)
    for pr in range(npairs):
        i, j, reach = np.int64(pairs[pr, 0]), np.int64(pairs[pr, 1]), pairs[pr, 2]
        # the link boxes, padded by the reach, must overlap too (exact shape boxes: a superset of every
        # contact the narrow phase below can find)
        apart = False
        for r in range(3):
            if boxa[i, r] - reach > boxb[j, 3 + r] or boxb[j, r] - reach > boxa[i, 3 + r]:
                apart = True
        if apart:
            continue
        n_found = _points_vs_shapes(wpa, pts_a, p0a[i], p0a[i + 1], boxa, i, st_b, ss_b, scb, sRb, seb,
                                    s0b[j], s0b[j + 1], ca, i, reach, flips[0], found, none)
        n_found = _points_vs_shapes(wpb, pts_b, p0b[j], p0b[j + 1], boxb, j, st_a, ss_a, sca, sRa, sea,
                                    s0a[i], s0a[i + 1], cb, j, reach, flips[1], found, n_found)
        for sa in range(s0a[i], s0a[i + 1]):
            if st_a[sa] != CAPSULE:
                continue
            for sb in range(s0b[j], s0b[j + 1]):
                if st_b[sb] != CAPSULE or n_found >= found.shape[0]:
                    continue
                ra, rb = ss_a[sa, 0], ss_b[sb, 0]
                _segment_closest(fa_[i], so_a[sa], ss_a[sa, 1], fb_[j], so_b[sb], ss_b[sb, 1], seg)
                d0, d1, d2 = seg[3, 0] - seg[4, 0], seg[3, 1] - seg[4, 1], seg[3, 2] - seg[4, 2]
                length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                if length < 1e-12 or length - ra - rb >= reach:
                    continue
                for r in range(3):
                    nr = (seg[3, r] - seg[4, r]) / length
                    found[n_found, r] = seg[3, r] - ra * nr
                    found[n_found, 3 + r] = seg[4, r] + rb * nr
                    found[n_found, 6 + r] = nr
                found[n_found, 9] = length - ra - rb
                n_found += 1
        for f in range(n_found):
            dup = False
            for g in range(f):
                if not keep[g]:
                    continue
                d0, d1, d2 = found[f, 0] - found[g, 0], found[f, 1] - found[g, 1], found[f, 2] - found[g, 2]
                cos = 0.0 + found[f, 6] * found[g, 6] + found[f, 7] * found[g, 7] + found[f, 8] * found[g, 8]
                if np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) < DUPLICATE and cos > 0.9:
                    dup = True
                    break
            keep[f] = not dup
        for f in range(n_found):
            if not keep[f]:
                continue
            for r in range(3):
                p[r] = 0.5 * (found[f, r] + found[f, 3 + r])
                n[r] = found[f, 6 + r]
            if not have0:
                v0a = body_velocities(u0a, para, ds0a, nda, Sa)
                v0b = v0a if same else body_velocities(u0b, parb, ds0b, ndb, Sb)
                have0 = True
            vn = _normal_speed(vfa, i, p, n) - _normal_speed(vfb, j, p, n)
            vn0 = _normal_speed(v0a, i, p, n) - _normal_speed(v0b, j, p, n)
            ok, t0, t1 = targets(found[f, 9], vn, vn0, restitution, threshold, dt, erp, slop)
            if not ok:
                continue
            if C >= rec.shape[0]:
                grown = np.empty((2 * rec.shape[0], 12))
                for x in range(C):
                    for col in range(12):
                        grown[x, col] = rec[x, col]
                rec = grown
            rec[C, 0], rec[C, 1] = i, j
            for r in range(3):
                rec[C, 2 + r], rec[C, 5 + r] = p[r], n[r]
            rec[C, 8], rec[C, 9], rec[C, 10], rec[C, 11] = -found[f, 9], t0, t1, max(0.0, -vn0)
            C += 1
    # the rows of the contacts kept: n, t1, t2 times the point's Jacobian (same: the difference of the two
    # links' Jacobians at the point)
    li = np.empty(C, np.int64)
    lj = np.empty(C, np.int64)
    rows_a = np.empty((C, 3, nva))
    rows_b = np.zeros((C, 3, nvb))
    ja = np.empty((3, nva))
    jb = np.empty((3, nvb))
    basis = np.empty((3, 3))
    for x in range(C):
        li[x], lj[x] = np.int64(rec[x, 0]), np.int64(rec[x, 1])
        for r in range(3):
            p[r], n[r] = rec[x, 2 + r], rec[x, 5 + r]
        _point_jacobian_into(ja, li[x], p, para, ds0a, nda, Sa)
        _point_jacobian_into(jb, lj[x], p, parb, ds0b, ndb, Sb)
        tangents_into(basis, n)
        if same:
            for r in range(3):
                for col in range(nva):
                    ja[r, col] -= jb[r, col]
            _rows_into(rows_a, x, basis, ja)
        else:
            _rows_into(rows_a, x, basis, ja)
            _rows_into(rows_b, x, basis, jb)
    return (li, lj, rec[:C, 2:5], rec[:C, 5:8], rec[:C, 8], rec[:C, 9], rec[:C, 10], rec[:C, 11], rows_a,
            rows_b)
