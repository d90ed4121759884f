"""Compiled joint-space sequential impulses for articulated systems: ``multibody_solver._solve_rows`` for rows
whose sides are systems (joint limits, contacts with static or kinematic geoms, self contacts, contacts
between systems); the numpy solver stays the reference and takes rows with dynamic world bodies.

All systems' velocities are one vector: system k owns ``vel[off[k]:off[k + 1]]``. Row r acts on system
``sa[r]`` with Jacobian ``ja[r, :, :nv]`` and, when ``sb[r] >= 0``, on system ``sb[r]`` with ``jb[r]`` (the
second side's rows as they enter the relative velocity, i.e. already negated); ``nax[r]`` is 1 for a joint
limit (normal only) and 3 for a contact (normal, two tangents). ``chol[k]`` is the Cholesky factor of system
k's mass matrix on its free dofs (``articulated.predict``).
"""
from __future__ import annotations

import numpy as np
from numba import njit



@njit(cache=True)
def _chol_solve_row(L, k, n, free, b, r, ax, y, out):
    """out[r, ax, :n] = x with (L L^T) x = b[r, ax, :n] for system k's factor ``L[k]`` on its free dofs (0 on
    the others): ``chol_solve`` by index, no views or allocation (a view costs a reference count each);
    ``y``: scratch of length >= n."""
    for i in range(n):
        if not free[k, i]:
            y[i] = 0.0
            continue
        t = b[r, ax, i]
        for j in range(i):
            t -= L[k, i, j] * y[j]
        y[i] = t / L[k, i, i]
    for i in range(n - 1, -1, -1):
        if not free[k, i]:
            out[r, ax, i] = 0.0
            continue
        t = y[i]
        for j in range(i + 1, n):
            t -= L[k, j, i] * out[r, ax, j]
        out[r, ax, i] = t / L[k, i, i]


@njit(cache=True)
def solve_rows(vel0, off, chol, free, sa, sb, nax, ja, jb, fixed, target, push_target, friction, iterations):
    """(velocities, pseudo velocities, impulses (R, 3)): velocity sweeps over the rows in order (each
    row's axes in order, the tangents boxed by friction times the normal impulse), then a split-impulse
    pass on the normals of rows with a position target. A sweep that changes no impulse ends the sweeps
    (every later one would repeat it exactly). Loops by index throughout: slicing a row or a velocity
    into a view per row and sweep cost more than the arithmetic."""
    R = sa.shape[0]
    NV = ja.shape[2]
    vel = vel0.copy()
    wa = np.zeros((R, 3, NV))
    wb = np.zeros((R, 3, NV))
    eff = np.zeros((R, 3))
    y = np.empty(max(NV, 1))
    for r in range(R):
        ka = sa[r]
        na = off[ka + 1] - off[ka]
        kb = sb[r]
        for ax in range(nax[r]):
            _chol_solve_row(chol, ka, na, free, ja, r, ax, y, wa)
            denom = 0.0
            for k in range(na):
                denom += ja[r, ax, k] * wa[r, ax, k]
            if kb >= 0:
                nb = off[kb + 1] - off[kb]
                _chol_solve_row(chol, kb, nb, free, jb, r, ax, y, wb)
                for k in range(nb):
                    denom += jb[r, ax, k] * wb[r, ax, k]
            eff[r, ax] = 1.0 / denom if denom > 1e-12 else 0.0
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
