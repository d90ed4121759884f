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

from .articulated import chol_solve, dot


@njit(cache=True)
def solve_rows(vel0, off, chol, free, sa, sb, nax, ja, jb, fixed, target, push_target, friction, iterations):
    """(velocities, pseudo velocities, impulses (R, 3)): velocity sweeps over the rows in order (each
    row's axes in order, the tangents boxed by friction times the normal impulse), then a split-impulse
    pass on the normals of rows with a position target."""
    R = sa.shape[0]
    NV = ja.shape[2]
    vel = vel0.copy()
    wa = np.zeros((R, 3, NV))
    wb = np.zeros((R, 3, NV))
    eff = np.zeros((R, 3))
    for r in range(R):
        ka = sa[r]
        na = off[ka + 1] - off[ka]
        for ax in range(nax[r]):
            w = chol_solve(chol[ka, :na, :na], free[ka, :na], ja[r, ax, :na])
            denom = 0.0
            for k in range(na):
                wa[r, ax, k] = w[k]
                denom += ja[r, ax, k] * w[k]
            kb = sb[r]
            if kb >= 0:
                nb = off[kb + 1] - off[kb]
                w = chol_solve(chol[kb, :nb, :nb], free[kb, :nb], jb[r, ax, :nb])
                for k in range(nb):
                    wb[r, ax, k] = w[k]
                    denom += jb[r, ax, k] * w[k]
            eff[r, ax] = 1.0 / denom if denom > 1e-12 else 0.0
    lam = np.zeros((R, 3))
    for _ in range(iterations):
        for r in range(R):
            ka, kb = sa[r], sb[r]
            a0, a1 = off[ka], off[ka + 1]
            for ax in range(nax[r]):
                rel = dot(ja[r, ax, :a1 - a0], vel[a0:a1]) - fixed[r, ax]
                if kb >= 0:
                    b0, b1 = off[kb], off[kb + 1]
                    rel += dot(jb[r, ax, :b1 - b0], vel[b0:b1])
                old = lam[r, ax]
                if ax == 0:
                    new = max(old + eff[r, 0] * (target[r] - rel), 0.0)
                else:
                    bound = friction[r] * lam[r, 0]
                    new = min(max(old - eff[r, ax] * rel, -bound), bound)
                dl = new - old
                for k in range(a1 - a0):
                    vel[a0 + k] += wa[r, ax, k] * dl
                if kb >= 0:
                    for k in range(b1 - b0):
                        vel[b0 + k] += wb[r, ax, k] * dl
                lam[r, ax] = new
    push = np.zeros(vel.shape[0])
    any_push = False
    for r in range(R):
        if nax[r] == 3 and push_target[r] > 0:
            any_push = True
    if any_push:
        plam = np.zeros(R)
        for _ in range(iterations):
            for r in range(R):
                if nax[r] != 3 or not push_target[r] > 0:
                    continue
                ka, kb = sa[r], sb[r]
                a0, a1 = off[ka], off[ka + 1]
                rel = dot(ja[r, 0, :a1 - a0], push[a0:a1])
                if kb >= 0:
                    b0, b1 = off[kb], off[kb + 1]
                    rel += dot(jb[r, 0, :b1 - b0], push[b0:b1])
                new = max(plam[r] + eff[r, 0] * (push_target[r] - rel), 0.0)
                dl = new - plam[r]
                for k in range(a1 - a0):
                    push[a0 + k] += wa[r, 0, k] * dl
                if kb >= 0:
                    for k in range(b1 - b0):
                        push[b0 + k] += wb[r, 0, k] * dl
                plam[r] = new
    return vel, push, lam
