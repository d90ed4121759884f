"""Projected Gauss-Seidel over constraint row blocks, compiled: the same update as ``sim.solver.solve``
(normal row with cfm softening, clamped at 0, friction scaled back into the Coulomb disc, all from one
velocity read per block), but row by row in sequence, so no colouring is needed."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def warm_start(V, a, b, MJ, lam):
    """V (N, 6) += M^-1 J^T lam for every row block (previous step's impulses)."""
    M, R = lam.shape
    for m in range(M):
        ia, ib = a[m], b[m]
        for r in range(R):
            lr = lam[m, r]
            if lr == 0.0:
                continue
            for c in range(6):
                V[ia, c] += MJ[m, r, c] * lr
                V[ib, c] += MJ[m, r, 6 + c] * lr


@njit(cache=True)
def _sweep3(V, a, b, J, MJ, kinv, target, ck, mu, lam, forward):
    """One sweep of normal + friction row blocks (R = 3): the bodies' 12 velocities are read into locals
    once per block and written back once (the generic loop below reads and writes them per row)."""
    M = lam.shape[0]
    v = np.empty(12)
    for step in range(M):
        m = step if forward else M - 1 - step
        ia, ib = a[m], b[m]
        for c in range(6):
            v[c] = V[ia, c]
            v[6 + c] = V[ib, c]
        j0 = 0.0
        j1 = 0.0
        j2 = 0.0
        for c in range(12):
            vc = v[c]
            j0 += J[m, 0, c] * vc
            j1 += J[m, 1, c] * vc
            j2 += J[m, 2, c] * vc
        o0, o1, o2 = lam[m, 0], lam[m, 1], lam[m, 2]
        n0 = o0 - kinv[m, 0] * j0 + target[m] * kinv[m, 0] - ck[m] * o0
        n1 = o1 - kinv[m, 1] * j1
        n2 = o2 - kinv[m, 2] * j2
        if n0 < 0.0:
            n0 = 0.0
        mag = np.sqrt(n1 * n1 + n2 * n2)  # (hypot is slower; no overflow at these magnitudes)
        lim = mu[m] * n0
        if mag > lim:
            s = lim / mag
            n1 *= s
            n2 *= s
        d0, d1, d2 = n0 - o0, n1 - o1, n2 - o2
        lam[m, 0], lam[m, 1], lam[m, 2] = n0, n1, n2
        for c in range(6):
            V[ia, c] = v[c] + (MJ[m, 0, c] * d0 + MJ[m, 1, c] * d1 + MJ[m, 2, c] * d2)
            V[ib, c] = v[6 + c] + (MJ[m, 0, 6 + c] * d0 + MJ[m, 1, 6 + c] * d1 + MJ[m, 2, 6 + c] * d2)


@njit(cache=True)
def solve(V, a, b, J, MJ, kinv, k, target, ck, mu, lam, iterations, tolerance, forward, friction, lever):
    """Sweeps over the rows (forward or backward) until no body's velocity (linear, angular times
    ``lever``) changes by more than ``tolerance`` in a sweep, or ``iterations`` sweeps; with an empty
    ``lever`` the measure is each row's |delta impulse| * k. Returns the sweeps done."""
    M, R = lam.shape
    N = V.shape[0]
    if M == 0:
        return 0
    use_lever = lever.shape[0] == N
    # only the rows' bodies change: the stopping measure reads those (a pile's 1000 bodies, a row's two)
    bodies = np.empty(N, np.int64)
    nb = 0
    if use_lever:
        seen = np.zeros(N, np.bool_)
        for m in range(M):
            for i in (a[m], b[m]):
                if not seen[i]:
                    seen[i] = True
                    bodies[nb] = i
                    nb += 1
    before = np.empty((nb, 6))
    old = np.empty(3)
    new = np.empty(3)
    sweep = 0
    for it in range(1, iterations + 1):
        sweep = it
        for j in range(nb):
            i = bodies[j]
            for c in range(6):
                before[j, c] = V[i, c]
        worst = 0.0
        if R == 3 and friction and use_lever:
            _sweep3(V, a, b, J, MJ, kinv, target, ck, mu, lam, forward)
        for step in range(M if not (R == 3 and friction and use_lever) else 0):
            m = step if forward else M - 1 - step
            ia, ib = a[m], b[m]
            for r in range(R):
                jv = 0.0
                for c in range(6):
                    jv += J[m, r, c] * V[ia, c] + J[m, r, 6 + c] * V[ib, c]
                old[r] = lam[m, r]
                new[r] = old[r] - kinv[m, r] * jv
            new[0] += target[m] * kinv[m, 0] - ck[m] * old[0]
            if new[0] < 0.0:
                new[0] = 0.0
            if R == 3:
                if friction:
                    mag = np.sqrt(new[1] * new[1] + new[2] * new[2])
                    lim = mu[m] * new[0]
                    if mag > lim:  # (mag 0: nothing to scale)
                        s = lim / mag
                        new[1] *= s
                        new[2] *= s
                else:
                    new[1] = old[1]
                    new[2] = old[2]
            for r in range(R):
                d = new[r] - old[r]
                lam[m, r] = new[r]
                if d != 0.0:
                    for c in range(6):
                        V[ia, c] += MJ[m, r, c] * d
                        V[ib, c] += MJ[m, r, 6 + c] * d
                    if not use_lever:
                        w = abs(d) * k[m, r]
                        if w > worst:
                            worst = w
        for j in range(nb):
            i = bodies[j]
            for c in range(6):
                w = abs(V[i, c] - before[j, c])
                if c >= 3:
                    w *= lever[i]
                if w > worst:
                    worst = w
        if worst < tolerance:
            break
    return sweep
