"""Compiled joint-space sequential impulses for articulated systems: ``multibody_solver._solve_rows`` for rows
whose sides are systems (joint limits, contacts with static or kinematic geoms, self contacts, contacts
between systems); the numpy solver stays the reference and takes rows with dynamic world bodies.

All systems' velocities are one vector: system k owns ``vel[off[k]:off[k + 1]]``. Row r acts on system
``sa[r]`` with Jacobian ``ja[r, :, :nv]`` and, when ``sb[r] >= 0``, on system ``sb[r]`` with ``jb[r]`` (the
second side's rows as they enter the relative velocity, i.e. already negated); ``nax[r]`` is 1 for a joint
limit (normal only) and 3 for a contact (normal, two tangents). ``chol[k]`` is the Cholesky factor of system
k's mass matrix on its free dofs (``articulated.predict``).

Same sweeps, same order, same impulses as the reference; two evaluations of them. One system with few rows
(a robot alone: ``robot_step``) sweeps on the Delassus matrix W = J M^-1 J^T of its row axes (A x A, built
once): a row's relative velocity is b + W lam, one short dot product, where joint space needs a dot and an
update of nv. Several systems keep joint-space sweeps. Both take M^-1 J^T from M^-1 formed once per system:
a mat-vec per row axis has independent sums, where two triangular solves per axis were chains of dependent
multiply-adds (20 us of a Laikago step's 65 us solve).
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
def solve_rows(vel0, off, chol, free, sa, sb, nax, ja, jb, fixed, target, push_target, friction, iterations):
    """(velocities, pseudo velocities, impulses (R, 3)): velocity sweeps over the rows in order (each
    row's axes in order, the tangents boxed by friction times the normal impulse), then a split-impulse
    pass on the normals of rows with a position target. A sweep that changes no impulse ends the sweeps
    (every later one would repeat it exactly)."""
    R = sa.shape[0]
    NV = ja.shape[2]
    minv = _inverses(chol, free, off)
    wa = np.zeros((R, 3, NV))
    wb = np.zeros((R, 3, NV))
    eff = np.zeros((R, 3))
    one = off.shape[0] == 2
    A = 0
    for r in range(R):
        A += nax[r]
        if sb[r] >= 0:
            one = False
    for r in range(R):
        for ax in range(nax[r]):
            denom = 0.0
            for side in range(2):
                # w = M_k^-1 j (M^-1 symmetric: a sum of its rows, skipping j's zeros), denom += j . w
                k = sa[r] if side == 0 else sb[r]
                if k < 0:
                    continue
                j = ja if side == 0 else jb
                w = wa if side == 0 else wb
                n = off[k + 1] - off[k]
                for c in range(n):
                    w[r, ax, c] = 0.0
                for x in range(n):
                    jx = j[r, ax, x]
                    if jx != 0.0:
                        for c in range(n):
                            w[r, ax, c] += jx * minv[k, x, c]
                for x in range(n):
                    denom += j[r, ax, x] * w[r, ax, x]
            eff[r, ax] = 1.0 / denom if denom > 1e-12 else 0.0
    # W costs A^2 nv to build and A^2 a sweep, joint space 2 A nv a sweep (in dependent sums, which W's
    # four running sums avoid): W while A is within a few nv
    if one and A <= 4 * NV:
        row = np.empty(A, np.int64)
        axis = np.empty(A, np.int64)
        i = 0
        for r in range(R):
            for ax in range(nax[r]):
                row[i], axis[i] = r, ax
                i += 1
        return _solve_one(vel0, nax, ja, wa, eff, fixed, target, push_target, friction, iterations, row, axis)
    vel = vel0.copy()
    lam = np.zeros((R, 3))
    for _ in range(iterations):
        changed = False
        for r in range(R):
            ka, kb = sa[r], sb[r]
            a0, a1 = off[ka], off[ka + 1]
            b0, b1 = 0, 0
            if kb >= 0:
                b0, b1 = off[kb], off[kb + 1]
            for ax in range(nax[r]):
                rel = 0.0
                for k in range(a1 - a0):
                    rel += ja[r, ax, k] * vel[a0 + k]
                rel -= fixed[r, ax]
                if kb >= 0:
                    t = 0.0
                    for k in range(b1 - b0):
                        t += jb[r, ax, k] * vel[b0 + k]
                    rel += t
                old = lam[r, ax]
                if ax == 0:
                    new = max(old + eff[r, 0] * (target[r] - rel), 0.0)
                else:
                    bound = friction[r] * lam[r, 0]
                    new = min(max(old - eff[r, ax] * rel, -bound), bound)
                dl = new - old
                if dl == 0.0:
                    continue
                changed = True
                for k in range(a1 - a0):
                    vel[a0 + k] += wa[r, ax, k] * dl
                if kb >= 0:
                    for k in range(b1 - b0):
                        vel[b0 + k] += wb[r, ax, k] * dl
                lam[r, ax] = new
        if not changed:
            break
    push = np.zeros(vel.shape[0])
    any_push = False
    for r in range(R):
        if nax[r] == 3 and push_target[r] > 0:
            any_push = True
    if any_push:
        plam = np.zeros(R)
        for _ in range(iterations):
            changed = False
            for r in range(R):
                if nax[r] != 3 or not push_target[r] > 0:
                    continue
                ka, kb = sa[r], sb[r]
                a0, a1 = off[ka], off[ka + 1]
                rel = 0.0
                for k in range(a1 - a0):
                    rel += ja[r, 0, k] * push[a0 + k]
                if kb >= 0:
                    b0, b1 = off[kb], off[kb + 1]
                    t = 0.0
                    for k in range(b1 - b0):
                        t += jb[r, 0, k] * push[b0 + k]
                    rel += t
                new = max(plam[r] + eff[r, 0] * (push_target[r] - rel), 0.0)
                dl = new - plam[r]
                if dl == 0.0:
                    continue
                changed = True
                for k in range(a1 - a0):
                    push[a0 + k] += wa[r, 0, k] * dl
                if kb >= 0:
                    b0, b1 = off[kb], off[kb + 1]
                    for k in range(b1 - b0):
                        push[b0 + k] += wb[r, 0, k] * dl
                plam[r] = new
            if not changed:
                break
    return vel, push, lam


@njit(cache=True)
def _delassus(ja, wa, row, axis, n):
    """W[i, j] = J_i . (M^-1 J_j^T) over the axes (row ``row[i]``, axis ``axis[i]``): J_i's nonzeros times
    the rows of the transposed M^-1 J^T (sums of whole rows, no dependent chains). W is symmetric: the
    upper triangle is summed, the lower one mirrors it (half the work; the two differ by rounding only)."""
    m = row.shape[0]
    wt = np.empty((n, m))
    for j in range(m):
        for k in range(n):
            wt[k, j] = wa[row[j], axis[j], k]
    W = np.zeros((m, m))
    for i in range(m):
        ri, ai = row[i], axis[i]
        for k in range(n):
            jk = ja[ri, ai, k]
            if jk != 0.0:
                for j in range(i, m):
                    W[i, j] += jk * wt[k, j]
        for j in range(i):
            W[i, j] = W[j, i]
    return W


@njit(cache=True)
def _solve_one(vel0, nax, ja, wa, eff, fixed, target, push_target, friction, iterations, row, axis):
    """``solve_rows`` for one system on W: axis i's relative velocity is b_i + W_i lam with
    b = J vel0 - fixed; the split-impulse pass on the normals' block of W. Then the velocities
    vel0 + M^-1 J^T lam and pseudo velocities M^-1 J_n^T plam. ``row``/``axis``: each row axis in sweep
    order. (One function with its sums written out: every kernel and every call signature is a compile.)"""
    R = nax.shape[0]
    n = vel0.shape[0]
    A = row.shape[0]
    W = _delassus(ja, wa, row, axis, n)
    b = np.empty(A)
    for i in range(A):
        t = 0.0
        for k in range(n):
            t += ja[row[i], axis[i], k] * vel0[k]
        b[i] = t - fixed[row[i], axis[i]]
    lam = np.zeros(A)
    # rel = b + W lam kept up to date: a changed impulse adds its column of W (a row: W is symmetric) to
    # every axis's relative velocity, independent sums the compiler vectorises, where a dot product per
    # axis was one dependent chain (the sweeps were a quarter of a Laikago step)
    rel = b.copy()
    for _ in range(iterations):
        changed = False
        for i in range(A):
            r, ax = row[i], axis[i]
            old = lam[i]
            if ax == 0:
                new = max(old + eff[r, 0] * (target[r] - rel[i]), 0.0)
            else:
                bound = friction[r] * lam[i - ax]
                new = min(max(old - eff[r, ax] * rel[i], -bound), bound)
            if new != old:
                changed = True
                lam[i] = new
                dl = new - old
                for j in range(A):
                    rel[j] += W[i, j] * dl
        if not changed:
            break
    out = np.zeros((R, 3))
    vel = vel0.copy()
    pick = np.zeros(A, np.bool_)  # the normals that push
    for i in range(A):
        r, ax = row[i], axis[i]
        out[r, ax] = lam[i]
        if lam[i] != 0.0:
            for k in range(n):
                vel[k] += wa[r, ax, k] * lam[i]
        pick[i] = ax == 0 and nax[r] == 3 and push_target[r] > 0
    push = np.zeros(n)
    m = 0
    for i in range(A):
        if pick[i]:
            m += 1
    if m == 0:
        return vel, push, out
    prow = np.empty(m, np.int64)
    m = 0
    for i in range(A):
        if pick[i]:
            prow[m] = row[i]
            m += 1
    P = _delassus(ja, wa, prow, np.zeros(m, np.int64), n)
    plam = np.zeros(m)
    prel = np.zeros(m)  # P plam, kept up to date as rel above
    for _ in range(iterations):
        changed = False
        for i in range(m):
            r = prow[i]
            new = max(plam[i] + eff[r, 0] * (push_target[r] - prel[i]), 0.0)
            if new != plam[i]:
                changed = True
                dl = new - plam[i]
                plam[i] = new
                for j in range(m):
                    prel[j] += P[i, j] * dl
        if not changed:
            break
    for i in range(m):
        if plam[i] != 0.0:
            for k in range(n):
                push[k] += wa[prow[i], 0, k] * plam[i]
    return vel, push, out
