"""Small per-step kernels: warm-start matching and integration, as ``World._warm`` and the integration
at the end of ``World.step`` compute them (one call instead of a few dozen numpy calls)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .order import lower_bound


@njit(cache=True)
def warm(cache_key, cache_local, cache_impulse, key, local, n, t1, t2, match):
    """Impulses (C, 3) in each new contact's (n, t1, t2) frame from the cached contact of the same geom
    pair nearest in body A's frame, when nearer than ``match``; else zero."""
    C = key.shape[0]
    lam = np.zeros((C, 3))
    if cache_key.shape[0] == 0:
        return lam
    K = cache_key.shape[0]
    lo = 0
    for c in range(C):
        x = key[c]
        if c and x >= key[c - 1]:  # keys come sorted: walk on from the last pair's run
            while lo < K and cache_key[lo] < x:
                lo += 1
        else:
            lo = lower_bound(cache_key, x)
        best = -1
        dbest = np.inf
        j = lo
        while j < K and cache_key[j] == x:
            dx = cache_local[j, 0] - local[c, 0]
            dy = cache_local[j, 1] - local[c, 1]
            dz = cache_local[j, 2] - local[c, 2]
            d = np.sqrt(dx * dx + dy * dy + dz * dz)
            if d < dbest:
                dbest, best = d, j
            j += 1
        if best >= 0 and dbest < match:
            P = cache_impulse[best]
            lam[c, 0] = max(P[0] * n[c, 0] + P[1] * n[c, 1] + P[2] * n[c, 2], 0.0)
            lam[c, 1] = P[0] * t1[c, 0] + P[1] * t1[c, 1] + P[2] * t1[c, 2]
            lam[c, 2] = P[0] * t2[c, 0] + P[1] * t2[c, 1] + P[2] * t2[c, 2]
    return lam


@njit(cache=True)
def integrate(pos, quat, lin, ang, V, Vp, move, dt):
    """Bodies that move take the solved velocities V (N, 6) and advance by them plus the position
    correction Vp (semi-implicit Euler; exact rotation, renormalised); the others stop."""
    N = pos.shape[0]
    for i in range(N):
        if not move[i]:
            for c in range(3):
                lin[i, c] = 0.0
                ang[i, c] = 0.0
            continue
        for c in range(3):
            lin[i, c] = V[i, c]
            ang[i, c] = V[i, 3 + c]
            pos[i, c] += (V[i, c] + Vp[i, c]) * dt
        wx, wy, wz = V[i, 3] + Vp[i, 3], V[i, 4] + Vp[i, 4], V[i, 5] + Vp[i, 5]
        angle = np.sqrt(wx * wx + wy * wy + wz * wz) * dt
        half = 0.5 * angle
        if angle < 1e-8:  # sin(half) / |w| by its series for tiny angles
            s = 0.5 * dt * (1.0 - angle * angle / 24.0)
        else:
            s = np.sin(half) / angle * dt
        aw, ax, ay, az = np.cos(half), wx * s, wy * s, wz * s
        bw, bx, by, bz = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
        qw = aw * bw - ax * bx - ay * by - az * bz
        qx = aw * bx + ax * bw + ay * bz - az * by
        qy = aw * by - ax * bz + ay * bw + az * bx
        qz = aw * bz + ax * by - ay * bx + az * bw
        norm = np.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        if norm > 0:
            quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = qw / norm, qx / norm, qy / norm, qz / norm
        else:
            quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3] = 1.0, 0.0, 0.0, 0.0
