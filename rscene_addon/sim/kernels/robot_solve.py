"""Compiled joint-space sequential impulses for articulated systems: ``multibody_solver._solve_rows`` for rows
whose sides are systems (joint limits, contacts with static or kinematic geoms, self contacts, contacts
between systems); the numpy solver stays the reference and takes rows with dynamic world bodies.

All systems' velocities are one vector: system k owns ``vel[off[k]:off[k + 1]]``. Row r acts on system
``sa[r]`` with Jacobian ``ja[r, :, :nv]`` and, when ``sb[r] >= 0``, on system ``sb[r]`` with ``jb[r]`` (the
second side's rows as they enter the relative velocity, i.e. already negated); ``nax[r]`` is 1 for a joint
limit (normal only) and 3 for a contact (normal, two tangents). ``chol[k]`` is the Cholesky factor of system
k's mass matrix on its free dofs (``articulated.predict``).

Same sweeps, same order, same impulses as the reference, evaluated row by row in joint space: a row's
Jacobians are zero outside its links' chains (a foot's touch the base and its leg), so its three relative
velocities are one pass over its few nonzeros; the tangents see the normal's change through the row's own
3 x 3 block of J M^-1 J^T, and the velocities take all three axes' changes in one update of M^-1 J^T (from
M^-1 formed once per system: independent sums). A row costs about nv multiply-adds three times, where the
Delassus matrix of all row axes (the previous form) cost A a sweep and A^2 nnz to build: ANYmal C standing
has 32 contacts (A = 96; its solve 90 us -> 45 us).
"""
from __future__ import annotations

import numpy as np
from numba import njit



@njit(cache=True)
def _inverses(chol, free, off):
    """(K, N, N): per system k, M^-1 on its free dofs (0 on the locked rows and columns) from its factor
    ``chol[k]``: X = L^-1 row by row (each row a sum of earlier rows), then M^-1 = X^T X."""
    K, N = chol.shape[0], chol.shape[1]
    minv = np.zeros((K, N, N))
    x = np.zeros((N, N))
    for s in range(K):
        n = off[s + 1] - off[s]
        for i in range(n):
            for c in range(n):
                x[i, c] = 0.0
            if not free[s, i]:
                continue
            x[i, i] = 1.0
            for k in range(i):
                lik = chol[s, i, k]
                if lik != 0.0 and free[s, k]:
                    for c in range(k + 1):
                        x[i, c] -= lik * x[k, c]
            d = chol[s, i, i]
            for c in range(i + 1):
                x[i, c] /= d
        for i in range(n):
            for a in range(i + 1):
                xa = x[i, a]
                if xa != 0.0:
                    for b in range(i + 1):
                        minv[s, a, b] += xa * x[i, b]
    return minv


@njit(cache=True)
def solve_rows(vel0, off, chol, free, sa, sb, nax, ja, jb, fixed, target, push_target, friction, iterations,
               lam0, tolerance):
    """(velocities, pseudo velocities, impulses (R, 3), velocity sweeps done): velocity sweeps over the rows in order (each
    row's axes in order, the tangents boxed by friction times the normal impulse), then a split-impulse
    pass on the normals of rows with a position target. The sweeps start from the impulses ``lam0`` (R, 3)
    (a warm start: last step's impulses of the same contacts, applied to the velocities first) and end when
    a sweep moves no velocity by more than ``tolerance`` (a sweep that changes no impulse: every later one
    would repeat it exactly). A resting robot's contacts carry a load the rows share in many ways, so its
    impulses drift along that null space for thousands of sweeps while its velocities settle: the velocities
    are what converges."""
    R = sa.shape[0]
    NV = ja.shape[2]
    minv = _inverses(chol, free, off)
    # per row: its Jacobians' nonzero columns over the stacked velocity vector (a link's rows are zero
    # outside its chain: a foot's touch the base and its leg) and their values, M^-1 J^T per side, and
    # the 3 x 3 block D of J M^-1 J^T on its own axes
    cnt = np.zeros(R, np.int64)
    idx = np.empty((R, 2 * NV), np.int64)
    jv = np.empty((R, 3, 2 * NV))
    wa = np.zeros((R, 3, NV))
    two_sided = 0
    for r in range(R):
        if sb[r] >= 0:
            two_sided = R
    wb = np.zeros((two_sided, 3, NV))  # none to fill when every row acts on one system (a robot alone)
    D = np.zeros((R, 3, 3))
    eff = np.zeros((R, 3))
    for r in range(R):
        m = nax[r]
        count = 0
        for side in range(2):
            k = sa[r] if side == 0 else sb[r]
            if k < 0:
                continue
            j = ja if side == 0 else jb
            w = wa if side == 0 else wb
            k0, n = off[k], off[k + 1] - off[k]
            first = count
            for x in range(n):
                nz = False
                for ax in range(m):
                    jx = j[r, ax, x]
                    jv[r, ax, count] = jx
                    nz = nz or jx != 0.0
                if not nz:
                    continue
                idx[r, count] = k0 + x
                count += 1
                # w = M_k^-1 j (M^-1 symmetric: a sum of its rows over j's nonzeros), the three axes in one pass
                # over the row (a zero jx adds nothing; a joint limit's unused axes are never read)
                j0, j1, j2 = j[r, 0, x], j[r, 1, x], j[r, 2, x]
                for c in range(n):
                    mx = minv[k, x, c]
                    w[r, 0, c] += j0 * mx
                    w[r, 1, c] += j1 * mx
                    w[r, 2, c] += j2 * mx
            # D over this side's nonzero columns only (the zero ones add nothing)
            for ax in range(m):
                for bx in range(ax + 1):
                    t = 0.0
                    for z in range(first, count):
                        t += jv[r, ax, z] * w[r, bx, idx[r, z] - k0]
                    D[r, ax, bx] += t
        cnt[r] = count
        for ax in range(m):
            eff[r, ax] = 1.0 / D[r, ax, ax] if D[r, ax, ax] > 1e-12 else 0.0
    vel = vel0.copy()
    lam = lam0.copy()
    for r in range(R):
        if lam[r, 0] != 0.0 or lam[r, 1] != 0.0 or lam[r, 2] != 0.0:
            _add(vel, off, sa[r], wa, r, lam[r, 0], lam[r, 1], lam[r, 2], nax[r])
            if sb[r] >= 0:
                _add(vel, off, sb[r], wb, r, lam[r, 0], lam[r, 1], lam[r, 2], nax[r])
    start = np.empty(vel.shape[0])
    sweeps = 0
    for _ in range(iterations):
        sweeps += 1
        change = 0.0
        for i in range(vel.shape[0]):
            start[i] = vel[i]
        for r in range(R):
            # Gauss-Seidel over the row's axes: their relative velocities at once (one pass over its
            # nonzeros), each later axis corrected by D for the earlier axes' changes, then one velocity
            # update for all three (the same iterates as an update per axis, a third of the passes)
            if nax[r] == 1:
                rel0 = -fixed[r, 0]
                for t in range(cnt[r]):
                    rel0 += jv[r, 0, t] * vel[idx[r, t]]
                old = lam[r, 0]
                new = max(old + eff[r, 0] * (target[r] - rel0), 0.0)
                if new != old:
                    d0 = new - old
                    change = max(change, abs(d0))
                    lam[r, 0] = new
                    _add(vel, off, sa[r], wa, r, d0, 0.0, 0.0, nax[r])
                    if sb[r] >= 0:
                        _add(vel, off, sb[r], wb, r, d0, 0.0, 0.0, nax[r])
                continue
            rel0, rel1, rel2 = -fixed[r, 0], -fixed[r, 1], -fixed[r, 2]
            for t in range(cnt[r]):
                v = vel[idx[r, t]]
                rel0 += jv[r, 0, t] * v
                rel1 += jv[r, 1, t] * v
                rel2 += jv[r, 2, t] * v
            old = lam[r, 0]
            n0 = max(old + eff[r, 0] * (target[r] - rel0), 0.0)
            d0 = n0 - old
            rel1 += D[r, 1, 0] * d0
            rel2 += D[r, 2, 0] * d0
            bound = friction[r] * n0
            old = lam[r, 1]
            n1 = min(max(old - eff[r, 1] * rel1, -bound), bound)
            d1 = n1 - old
            rel2 += D[r, 2, 1] * d1
            old = lam[r, 2]
            n2 = min(max(old - eff[r, 2] * rel2, -bound), bound)
            d2 = n2 - old
            change = max(max(change, abs(d0)), max(abs(d1), abs(d2)))
            if d0 != 0.0 or d1 != 0.0 or d2 != 0.0:
                lam[r, 0], lam[r, 1], lam[r, 2] = n0, n1, n2
                _add(vel, off, sa[r], wa, r, d0, d1, d2, nax[r])
                if sb[r] >= 0:
                    _add(vel, off, sb[r], wb, r, d0, d1, d2, nax[r])
        if change == 0.0:
            break
        moved = 0.0
        for i in range(vel.shape[0]):
            moved = max(moved, abs(vel[i] - start[i]))
        if moved <= tolerance:
            break
    push = np.zeros(vel.shape[0])
    any_push = False
    for r in range(R):
        if nax[r] == 3 and push_target[r] > 0:
            any_push = True
    if not any_push:
        return vel, push, lam, sweeps
    plam = np.zeros(R)
    one = np.int64(1)  # the normal axis only; a literal 1 would compile _add once more
    for _ in range(iterations):
        change = 0.0
        for r in range(R):
            if nax[r] != 3 or not push_target[r] > 0:
                continue
            p = 0.0
            for t in range(cnt[r]):
                p += jv[r, 0, t] * push[idx[r, t]]
            new = max(plam[r] + eff[r, 0] * (push_target[r] - p), 0.0)
            if new == plam[r]:
                continue
            d0 = new - plam[r]
            change = max(change, abs(d0))
            _add(push, off, sa[r], wa, r, d0, 0.0, 0.0, one)
            if sb[r] >= 0:
                _add(push, off, sb[r], wb, r, d0, 0.0, 0.0, one)
            plam[r] = new
        if change == 0.0:
            break
    return vel, push, lam, sweeps


@njit(cache=True, _nrt=False)
def _add(vel, off, k, w, r, d0, d1, d2, m):
    """vel[system k] += w[r, :m]^T (d0, d1, d2)[:m] (independent sums: the compiler vectorises them)."""
    a0 = off[k]
    n = off[k + 1] - a0
    if m == 1:
        for c in range(n):
            vel[a0 + c] += w[r, 0, c] * d0
    else:
        for c in range(n):
            vel[a0 + c] += w[r, 0, c] * d0 + w[r, 1, c] * d1 + w[r, 2, c] * d2
