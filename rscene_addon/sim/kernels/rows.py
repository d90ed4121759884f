"""Contact rows, compiled: per contact the normal and two friction rows of ``sim.solver.jacobians``
(tangents by ``mathutil.tangent_basis``), the restitution / speculative target, the friction coefficient
(static below its velocity threshold) and the approach speed, as ``World._rows`` computes them."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def contact_rows(A, B, p, n, sep, x, R, V, V0, inv_m, inv_I, props, dt):
    """Returns J, MJ (C, 3, 12), k (C, 3), target, mu, vn0 (C,), t1, t2 (C, 3) and ``local`` (C, 3), the
    contact points in body A's frame (for matching last step's impulses)."""
    C = A.shape[0]
    J = np.zeros((C, 3, 12))
    MJ = np.zeros((C, 3, 12))
    k = np.empty((C, 3))
    target = np.empty(C)
    mu = np.empty(C)
    vn0_out = np.empty(C)
    t1 = np.empty((C, 3))
    t2 = np.empty((C, 3))
    local = np.empty((C, 3))
    D = np.empty((3, 3))
    ra = np.empty(3)
    rb = np.empty(3)
    for c in range(C):
        a, b = A[c], B[c]
        nx, ny, nz = n[c, 0], n[c, 1], n[c, 2]
        sign = 1.0 if nz >= 0 else -1.0
        aa = -1.0 / (sign + nz)
        bb = nx * ny * aa
        t1[c, 0], t1[c, 1], t1[c, 2] = 1.0 + sign * nx * nx * aa, sign * bb, -sign * nx
        t2[c, 0], t2[c, 1], t2[c, 2] = bb, sign + ny * ny * aa, -ny
        for i in range(3):
            D[0, i] = n[c, i]
            D[1, i] = t1[c, i]
            D[2, i] = t2[c, i]
            ra[i] = p[c, i] - x[a, i]
            rb[i] = p[c, i] - x[b, i]
        for i in range(3):
            local[c, i] = R[a, 0, i] * ra[0] + R[a, 1, i] * ra[1] + R[a, 2, i] * ra[2]
        ma, mb = inv_m[a], inv_m[b]
        for r in range(3):
            ga = _cross(ra[0], ra[1], ra[2], D[r, 0], D[r, 1], D[r, 2])
            gb = _cross(rb[0], rb[1], rb[2], D[r, 0], D[r, 1], D[r, 2])
            kk = ma + mb
            for i in range(3):
                ia = inv_I[a, i, 0] * ga[0] + inv_I[a, i, 1] * ga[1] + inv_I[a, i, 2] * ga[2]
                ib = inv_I[b, i, 0] * gb[0] + inv_I[b, i, 1] * gb[1] + inv_I[b, i, 2] * gb[2]
                kk += ga[i] * ia + gb[i] * ib
                J[c, r, i] = -D[r, i]
                J[c, r, 3 + i] = -ga[i]
                J[c, r, 6 + i] = D[r, i]
                J[c, r, 9 + i] = gb[i]
                MJ[c, r, i] = -ma * D[r, i]
                MJ[c, r, 3 + i] = -ia
                MJ[c, r, 6 + i] = mb * D[r, i]
                MJ[c, r, 9 + i] = ib
            k[c, r] = kk
        # relative velocities at the contact before forces (V0) and now (V)
        wa = _cross(V0[a, 3], V0[a, 4], V0[a, 5], ra[0], ra[1], ra[2])
        wb = _cross(V0[b, 3], V0[b, 4], V0[b, 5], rb[0], rb[1], rb[2])
        vr0 = np.empty(3)
        for i in range(3):
            vr0[i] = (V0[b, i] + wb[i]) - (V0[a, i] + wa[i])
        vn0 = vr0[0] * nx + vr0[1] * ny + vr0[2] * nz
        vt = np.sqrt((vr0[0] - vn0 * nx) ** 2 + (vr0[1] - vn0 * ny) ** 2 + (vr0[2] - vn0 * nz) ** 2)
        wa = _cross(V[a, 3], V[a, 4], V[a, 5], ra[0], ra[1], ra[2])
        wb = _cross(V[b, 3], V[b, 4], V[b, 5], rb[0], rb[1], rb[2])
        vn = 0.0
        for i in range(3):
            vn += ((V[b, i] + wb[i]) - (V[a, i] + wa[i])) * n[c, i]
        mu[c] = props[c, 3] if vt < props[c, 4] else props[c, 0]
        s = sep[c]
        tg = -s / dt if s > 0 else 0.0
        e = props[c, 1]
        if e > 0 and -vn0 > props[c, 2] and s + min(vn, vn0) * dt <= 0:
            tg = max(tg, -e * vn0)
        target[c] = tg
        vn0_out[c] = vn0
    return J, MJ, k, target, mu, vn0_out, t1, t2, local
