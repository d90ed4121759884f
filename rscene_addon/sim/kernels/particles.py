"""The granular (DEM) substeps of one world step, compiled: ``Granular.step``'s numpy loop (the reference)
in one call, the same contact law in the same order per contact (sums of forces per particle are taken
in pair order instead of numpy's ``bincount``, so results agree to rounding, not to the bit).

Per substep: particle pairs (Hertz or linear normal spring with a bounded dashpot, a tangential spring
with history clamped by Coulomb friction, rolling friction, cohesion), then particle-geom contacts (signed
distances of ``particles_sdf``), then explicit integration. The pairs and the geom candidates are the
caller's (once per world step, with each one's margin); their tangential springs ``xi`` / ``wxi`` are
updated in place and ``active_pair`` / ``active_wall`` say which touched at the last substep.
``substeps_in_order`` runs them on the particles in the neighbour search's cell order (the caller's order
outside); ``carry`` finds the springs of the last step's contacts.

Cost (the spec's sand box, 57k candidate pairs, 31k touching): the touching pairs' law and torques are
three quarters of a substep, ~100-150 ns each, most of it instructions (a dependent chain of square roots,
divisions and branches per contact), not memory: the cell order took a fifth off, splitting the passes
into functions and fusing stages did not move it.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .order import lower_bound
from .particles_sdf import _PLANE, geom_distance
from .terrain import height_normal

_HEIGHTFIELD = 6  # geometry.HEIGHTFIELD


@njit(cache=True, inline="always")
def _law(mat, h, inv_h, xi, q, n0, n1, n2, overlap, vn, t0, t1, t2, m_cap):
    """``granular._contact_forces`` for one contact: the normal force and the tangential force (returned),
    the updated spring in row q of xi (inlined, rows by index: a view per contact cost a reference count
    each). Divisions by h are products with inv_h = 1 / h (rounding apart, the same law)."""
    kn, cn, kt, ct, mu, hertz = mat[0], mat[1], mat[2], mat[3], mat[4], mat[8]
    d = max(overlap, 0.0)
    spring = kn * d * math.sqrt(d) if hertz != 0.0 else kn * d
    avn = abs(vn)
    sgn = 1.0 if vn > 0.0 else (-1.0 if vn < 0.0 else 0.0)
    fn = max(spring + (-sgn * min(cn * avn, m_cap * avn * inv_h)), 0.0)
    x0, x1, x2 = xi[q, 0] + t0 * h, xi[q, 1] + t1 * h, xi[q, 2] + t2 * h
    dn = x0 * n0 + x1 * n1 + x2 * n2
    x0, x1, x2 = x0 - dn * n0, x1 - dn * n1, x2 - dn * n2
    ct_eff = min(ct, m_cap * inv_h)
    f0, f1, f2 = -kt * x0 - ct_eff * t0, -kt * x1 - ct_eff * t1, -kt * x2 - ct_eff * t2
    fmax = mu * fn
    mag = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    if mag > fmax:
        sc = fmax / max(mag, 1e-300)
        f0, f1, f2 = f0 * sc, f1 * sc, f2 * sc
        k = max(kt, 1e-300)
        x0, x1, x2 = -(f0 + ct_eff * t0) / k, -(f1 + ct_eff * t1) / k, -(f2 + ct_eff * t2) / k
    xi[q, 0], xi[q, 1], xi[q, 2] = x0, x1, x2
    return fn, f0, f1, f2


@njit(cache=True)
def substeps(x, v, w, r, mass, inertia, pi, pj, xi, m_pair, r_eff, mat, wp, wg, wxi, g_type, g_pos, g_rot,
             g_size, p_start, p_normals, p_offsets, hfs, g_vel, g_omega, g_com, g_dyn, gravity, n_sub, h, dt,
             active_pair, active_wall, body_f, body_t):
    """Advance particles x, v, w (P, 3) by ``n_sub`` substeps of ``h``.

    Pairs pi, pj (N,) with springs xi (N, 3), reduced masses m_pair and radii r_eff (N,); ``mat`` (9,):
    normal stiffness, normal damping, tangential stiffness, tangential damping, friction, rolling friction,
    cohesion stiffness, cohesion distance, Hertz (1) or linear (0). Geom contacts: particle wp (K,) with
    geom wg (K,), springs wxi (K, 3); per geom (G,): type, world pose, size, convex faces, height fields
    (``terrain.pack``), its body's velocity, angular velocity, centre and whether it is dynamic. body_f, body_t (G, 3) receive the
    reactions on each geom's body averaged over the step (the caller adds them to the bodies).

    Each pass is a function of its own: one function holding every array spilled most of them to the
    stack (a third of its instructions)."""
    P, N, K = x.shape[0], pi.shape[0], wp.shape[0]
    F = np.zeros((P, 3))
    T = np.zeros((P, 3))
    Z = np.zeros(P, np.int64)
    shp = np.empty(P)  # each particle's share 1 / (2 max(Z, 1)): a contact's is the smaller of its two
    live = np.empty(N, np.int64)
    sep = np.empty(N)  # each pair's distance this substep
    wsd = np.empty(K)  # each geom contact's signed distance and normal this substep
    wn = np.empty((K, 3))
    for _ in range(n_sub):
        # this substep's touching contacts per particle: the dashpots' share (granular._contact_forces)
        Z[:] = 0
        nl = _touching(x, r, pi, pj, xi, mat, sep, live, Z, active_pair)
        _geom_gaps(x, r, wp, wg, g_type, g_pos, g_rot, g_size, p_start, p_normals, p_offsets, hfs, wsd, wn, Z)
        for p in range(P):
            shp[p] = 1.0 / (2.0 * max(Z[p], 1))
        F[:] = 0.0
        T[:] = 0.0
        _pair_forces(x, v, w, r, inertia, pi, pj, xi, m_pair, r_eff, mat, sep, live, nl, shp, h, active_pair, F, T)
        _geom_forces(x, v, w, r, mass, inertia, wp, wg, wxi, mat, wsd, wn, shp, g_vel, g_omega, g_com, g_dyn, h,
                     h / dt, active_wall, F, T, body_f, body_t)
        for p in range(P):
            for a in range(3):
                v[p, a] += (F[p, a] / mass[p] + gravity[a]) * h
                w[p, a] += T[p, a] / inertia[p] * h
                x[p, a] += v[p, a] * h


@njit(cache=True)
def _touching(x, r, pi, pj, xi, mat, sep, live, Z, active_pair):
    """Each pair's distance into sep (N,), its particles' contact counts Z (P,) raised when it touches; the
    pairs that touch (or attract) listed in live, their count returned; the others' springs reset."""
    cs, cd = mat[6], mat[7]
    cohesive = cs > 0.0 and cd > 0.0
    nl = 0
    for q in range(pi.shape[0]):
        i, j = np.uint64(pi[q]), np.uint64(pj[q])  # (unsigned: indexing skips the negative-index fix-up)
        d0, d1, d2 = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
        dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        sep[q] = dist
        overlap = r[i] + r[j] - dist
        if overlap > 0.0:
            Z[i] += 1
            Z[j] += 1
            live[nl] = q
            nl += 1
        else:
            active_pair[q] = False
            xi[q, 0] = xi[q, 1] = xi[q, 2] = 0.0
            if cohesive and -overlap < cd:
                live[nl] = q
                nl += 1
    return nl


@njit(cache=True)
def _geom_gaps(x, r, wp, wg, g_type, g_pos, g_rot, g_size, p_start, p_normals, p_offsets, hfs, wsd, wn, Z):
    """Each geom contact's signed distance into wsd (K,), its normal into wn (K, 3); Z raised where it touches.
    A height field's (``sdf.geom_distance``): the height over the surface times the normal's z, infinite
    (never touching) off the field."""
    for c in range(wp.shape[0]):
        p, g = wp[c], wg[c]
        if g_type[g] == _PLANE:  # inline: the ground meets every particle, the call cost 20% of the substeps
            z0, z1, z2 = g_rot[g, 0, 2], g_rot[g, 1, 2], g_rot[g, 2, 2]
            wn[c, 0], wn[c, 1], wn[c, 2] = z0, z1, z2
            wsd[c] = ((x[p, 0] * z0 + x[p, 1] * z1 + x[p, 2] * z2)
                      - (z0 * g_pos[g, 0] + z1 * g_pos[g, 1] + z2 * g_pos[g, 2]))
        elif g_type[g] == _HEIGHTFIELD:
            z, m0, m1, m2, inside = height_normal(hfs, hfs[0][g], x[p, 0], x[p, 1])
            wn[c, 0], wn[c, 1], wn[c, 2] = m0, m1, m2
            wsd[c] = (x[p, 2] - z) * m2 if inside else np.inf
        else:
            wsd[c] = geom_distance(g_type[g], g_pos, g_rot, g_size, g, p_start, p_normals, p_offsets,
                                   x[p, 0], x[p, 1], x[p, 2], wn, c)
        if r[p] - wsd[c] > 0.0:
            Z[p] += 1


@njit(cache=True)
def _pair_forces(x, v, w, r, inertia, pi, pj, xi, m_pair, r_eff, mat, sep, live, nl, shp, h, active_pair, F, T):
    """The forces F and torques T (P, 3) of the listed pairs (live[:nl]) on their particles."""
    rf, cs, cd = mat[5], mat[6], mat[7]
    cohesive = cs > 0.0 and cd > 0.0
    inv_h = 1.0 / h
    for e in range(nl):
        q = np.uint64(live[e])
        i, j = np.uint64(pi[q]), np.uint64(pj[q])  # (unsigned: indexing skips the negative-index fix-up)
        d0, d1, d2 = x[j, 0] - x[i, 0], x[j, 1] - x[i, 1], x[j, 2] - x[i, 2]
        dist = sep[q]
        overlap = r[i] + r[j] - dist
        touch = overlap > 0.0
        active_pair[q] = touch
        inv = 1.0 / max(dist, 1e-12)
        n0, n1, n2 = d0 * inv, d1 * inv, d2 * inv
        ri, rj = r[i], r[j]
        # contact points' velocities: v_j + w_j x (-r_j n) minus v_i + w_i x (r_i n)
        a0, a1, a2 = -rj * n0, -rj * n1, -rj * n2
        b0, b1, b2 = ri * n0, ri * n1, ri * n2
        u0 = (v[j, 0] + (w[j, 1] * a2 - w[j, 2] * a1)) - (v[i, 0] + (w[i, 1] * b2 - w[i, 2] * b1))
        u1 = (v[j, 1] + (w[j, 2] * a0 - w[j, 0] * a2)) - (v[i, 1] + (w[i, 2] * b0 - w[i, 0] * b2))
        u2 = (v[j, 2] + (w[j, 0] * a1 - w[j, 1] * a0)) - (v[i, 2] + (w[i, 0] * b1 - w[i, 1] * b0))
        vn = u0 * n0 + u1 * n1 + u2 * n2
        t0, t1, t2 = u0 - vn * n0, u1 - vn * n1, u2 - vn * n2
        fn = 0.0
        f0 = f1 = f2 = 0.0
        sh = min(shp[i], shp[j])
        if touch:
            fn, g0, g1, g2 = _law(mat, h, inv_h, xi, q, n0, n1, n2, overlap, vn, t0, t1, t2, m_pair[q] * sh)
            f0, f1, f2 = fn * n0 + g0, fn * n1 + g1, fn * n2 + g2
        if cohesive:
            gap = -overlap
            if gap < cd:
                fc = cs * (cd - max(gap, 0.0))
                f0, f1, f2 = f0 - fc * n0, f1 - fc * n1, f2 - fc * n2
        F[j, 0] += f0
        F[j, 1] += f1
        F[j, 2] += f2
        F[i, 0] -= f0
        F[i, 1] -= f1
        F[i, 2] -= f2
        # torques: (r_i n) x (-f) on i, (-r_j n) x f on j
        ti0, ti1, ti2 = -(b1 * f2 - b2 * f1), -(b2 * f0 - b0 * f2), -(b0 * f1 - b1 * f0)
        tj0, tj1, tj2 = a1 * f2 - a2 * f1, a2 * f0 - a0 * f2, a0 * f1 - a1 * f0
        if rf > 0.0 and fn > 0.0:
            e0, e1, e2 = w[i, 0] - w[j, 0], w[i, 1] - w[j, 1], w[i, 2] - w[j, 2]
            wr = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
            mag = min(rf * fn * r_eff[q], wr * (min(inertia[i], inertia[j]) * sh) * inv_h)
            s = mag / max(wr, 1e-300)
            ti0, ti1, ti2 = ti0 - e0 * s, ti1 - e1 * s, ti2 - e2 * s
            tj0, tj1, tj2 = tj0 + e0 * s, tj1 + e1 * s, tj2 + e2 * s
        T[i, 0] += ti0
        T[i, 1] += ti1
        T[i, 2] += ti2
        T[j, 0] += tj0
        T[j, 1] += tj1
        T[j, 2] += tj2


@njit(cache=True)
def _geom_forces(x, v, w, r, mass, inertia, wp, wg, wxi, mat, wsd, wn, shp, g_vel, g_omega, g_com, g_dyn, h,
                 share, active_wall, F, T, body_f, body_t):
    """The forces F and torques T (P, 3) of the geom contacts on their particles; ``share`` (h / dt) of
    the reactions added to body_f, body_t (G, 3) of dynamic geoms."""
    rf = mat[5]
    inv_h = 1.0 / h
    for c in range(wp.shape[0]):
        p, g = wp[c], wg[c]
        rp = r[p]
        overlap = rp - wsd[c]
        touch = overlap > 0.0
        active_wall[c] = touch
        if not touch:
            wxi[c, 0] = wxi[c, 1] = wxi[c, 2] = 0.0
            continue
        n0, n1, n2 = wn[c, 0], wn[c, 1], wn[c, 2]
        a0, a1, a2 = -rp * n0, -rp * n1, -rp * n2
        cp0, cp1, cp2 = x[p, 0] - n0 * rp, x[p, 1] - n1 * rp, x[p, 2] - n2 * rp
        o0, o1, o2 = cp0 - g_com[g, 0], cp1 - g_com[g, 1], cp2 - g_com[g, 2]
        wb0, wb1, wb2 = g_omega[g, 0], g_omega[g, 1], g_omega[g, 2]
        vb0 = g_vel[g, 0] + (wb1 * o2 - wb2 * o1)
        vb1 = g_vel[g, 1] + (wb2 * o0 - wb0 * o2)
        vb2 = g_vel[g, 2] + (wb0 * o1 - wb1 * o0)
        u0 = (v[p, 0] + (w[p, 1] * a2 - w[p, 2] * a1)) - vb0
        u1 = (v[p, 1] + (w[p, 2] * a0 - w[p, 0] * a2)) - vb1
        u2 = (v[p, 2] + (w[p, 0] * a1 - w[p, 1] * a0)) - vb2
        vn = u0 * n0 + u1 * n1 + u2 * n2
        t0, t1, t2 = u0 - vn * n0, u1 - vn * n1, u2 - vn * n2
        fn, g0, g1, g2 = _law(mat, h, inv_h, wxi, c, n0, n1, n2, overlap, vn, t0, t1, t2, mass[p] * shp[p])
        f0, f1, f2 = fn * n0 + g0, fn * n1 + g1, fn * n2 + g2
        F[p, 0] += f0
        F[p, 1] += f1
        F[p, 2] += f2
        tp0, tp1, tp2 = a1 * f2 - a2 * f1, a2 * f0 - a0 * f2, a0 * f1 - a1 * f0
        s0 = s1 = s2 = 0.0
        if rf > 0.0:  # rolling friction against the geom's body
            e0, e1, e2 = w[p, 0] - wb0, w[p, 1] - wb1, w[p, 2] - wb2
            wr = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
            mag = min(rf * fn * rp, wr * (inertia[p] * shp[p]) * inv_h)
            sc = mag / max(wr, 1e-300)
            s0, s1, s2 = -e0 * sc, -e1 * sc, -e2 * sc
            tp0, tp1, tp2 = tp0 + s0, tp1 + s1, tp2 + s2
        T[p, 0] += tp0
        T[p, 1] += tp1
        T[p, 2] += tp2
        if g_dyn[g]:
            body_f[g, 0] -= f0 * share
            body_f[g, 1] -= f1 * share
            body_f[g, 2] -= f2 * share
            body_t[g, 0] -= ((o1 * f2 - o2 * f1) + s0) * share
            body_t[g, 1] -= ((o2 * f0 - o0 * f2) + s1) * share
            body_t[g, 2] -= ((o0 * f1 - o1 * f0) + s2) * share


@njit(cache=True)
def substeps_in_order(order, x, v, w, r, mass, inertia, pi, pj, xi, m_pair, r_eff, mat, wp, wg, wxi, g_type, g_pos,
                      g_rot, g_size, p_start, p_normals, p_offsets, hfs, g_vel, g_omega, g_com, g_dyn, gravity,
                      n_sub, h, dt, active_pair, active_wall, body_f, body_t):
    """``substeps`` run on the particles in ``order`` (P,) (cell order, from the neighbour search), its
    results written back in the caller's order: the same contacts with the same roles (i, j), listed by
    their first particle's place in that order, so that a contact's particles and its neighbours' sit
    near each other in memory (a quarter of the substeps' time went to cache misses in the caller's order)."""
    P, N, K = x.shape[0], pi.shape[0], wp.shape[0]
    rank = np.empty(P, np.int64)
    for t in range(P):
        rank[order[t]] = t
    xs, vs, ws = np.empty((P, 3)), np.empty((P, 3)), np.empty((P, 3))
    rs, ms, js = np.empty(P), np.empty(P), np.empty(P)
    for t in range(P):
        p = order[t]
        for a in range(3):
            xs[t, a], vs[t, a], ws[t, a] = x[p, a], v[p, a], w[p, a]
        rs[t], ms[t], js[t] = r[p], mass[p], inertia[p]
    po = _by_rank(rank, pi)
    qi, qj, qm, qr = np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N), np.empty(N)
    qx = np.empty((N, 3))
    for e in range(N):
        q = po[e]
        qi[e], qj[e], qm[e], qr[e] = rank[pi[q]], rank[pj[q]], m_pair[q], r_eff[q]
        qx[e, 0], qx[e, 1], qx[e, 2] = xi[q, 0], xi[q, 1], xi[q, 2]
    wo = _by_rank(rank, wp)
    cp, cg, cx = np.empty(K, np.int64), np.empty(K, np.int64), np.empty((K, 3))
    for e in range(K):
        c = wo[e]
        cp[e], cg[e] = rank[wp[c]], wg[c]
        cx[e, 0], cx[e, 1], cx[e, 2] = wxi[c, 0], wxi[c, 1], wxi[c, 2]
    qa, ca = np.zeros(N, np.bool_), np.zeros(K, np.bool_)
    substeps(xs, vs, ws, rs, ms, js, qi, qj, qx, qm, qr, mat, cp, cg, cx, g_type, g_pos, g_rot, g_size, p_start,
             p_normals, p_offsets, hfs, g_vel, g_omega, g_com, g_dyn, gravity, n_sub, h, dt, qa, ca, body_f, body_t)
    for t in range(P):
        p = order[t]
        for a in range(3):
            x[p, a], v[p, a], w[p, a] = xs[t, a], vs[t, a], ws[t, a]
    for e in range(N):
        q = po[e]
        xi[q, 0], xi[q, 1], xi[q, 2] = qx[e, 0], qx[e, 1], qx[e, 2]
        active_pair[q] = qa[e]
    for e in range(K):
        c = wo[e]
        wxi[c, 0], wxi[c, 1], wxi[c, 2] = cx[e, 0], cx[e, 1], cx[e, 2]
        active_wall[c] = ca[e]


@njit(cache=True)
def _by_rank(rank, owner):
    """The indices of ``owner`` (N,) sorted by rank[owner] (stable counting sort)."""
    P, N = rank.shape[0], owner.shape[0]
    start = np.zeros(P + 1, np.int64)
    for q in range(N):
        start[rank[owner[q]] + 1] += 1
    for t in range(P):
        start[t + 1] += start[t]
    out = np.empty(N, np.int64)
    for q in range(N):
        t = rank[owner[q]]
        out[start[t]] = q
        start[t] += 1
    return out


@njit(cache=True)
def carry(keys, old_keys, old_xi):
    """``granular._History.lookup``: the spring (N, 3) of each contact key (N,) from the last step's sorted
    keys (M,) and springs (M, 3), zero for a new contact. A merge while the keys ascend (the pairs' do),
    a binary search where they drop (between the geoms' runs)."""
    N, M = keys.shape[0], old_keys.shape[0]
    out = np.zeros((N, 3))
    pos = 0
    for q in range(N):
        k = keys[q]
        if q > 0 and k < keys[q - 1]:
            pos = lower_bound(old_keys, k)
        while pos < M and old_keys[pos] < k:
            pos += 1
        if pos < M and old_keys[pos] == k:
            out[q, 0], out[q, 1], out[q, 2] = old_xi[pos, 0], old_xi[pos, 1], old_xi[pos, 2]
    return out
