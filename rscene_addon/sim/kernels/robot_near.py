"""Which of several systems have another system's links within reach this step
(``multibody_compiled._alone``), in one compiled pass over all their links instead of a dozen numpy calls."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def near_systems(frames, vel, bc, br, starts, margin, horizon):
    """Per system k (links ``starts[k]:starts[k + 1]`` of the stacked ``frames`` (N, 4, 4), spatial ``vel``
    (N, 6) (angular first), bounding spheres ``bc`` (N, 3) local and ``br`` (N,), negative: none): True when
    another system's sphere comes within ``margin`` + ``horizon`` * (both speeds). A system's sphere: the mean
    of its links' sphere centres, radius reaching every link sphere; its speed: its fastest link sphere."""
    K = starts.shape[0] - 1
    N = frames.shape[0]
    centres = np.empty((N, 3))
    for n in range(N):
        for i in range(3):
            centres[n, i] = (frames[n, i, 0] * bc[n, 0] + frames[n, i, 1] * bc[n, 1] + frames[n, i, 2] * bc[n, 2]
                             + frames[n, i, 3])
    c = np.zeros((K, 3))
    r = np.full(K, -np.inf)
    v = np.zeros(K)
    for k in range(K):
        count = 0
        for n in range(starts[k], starts[k + 1]):
            if br[n] >= 0:
                count += 1
                for i in range(3):
                    c[k, i] += centres[n, i]
        if count:
            for i in range(3):
                c[k, i] /= count
        for n in range(starts[k], starts[k + 1]):
            if br[n] >= 0:
                e0, e1, e2 = centres[n, 0] - c[k, 0], centres[n, 1] - c[k, 1], centres[n, 2] - c[k, 2]
                d = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
                r[k] = max(r[k], d + br[n])
            wx, wy, wz = vel[n, 0], vel[n, 1], vel[n, 2]
            px, py, pz = centres[n, 0], centres[n, 1], centres[n, 2]
            lx = vel[n, 3] + wy * pz - wz * py
            ly = vel[n, 4] + wz * px - wx * pz
            lz = vel[n, 5] + wx * py - wy * px
            speed = np.sqrt(lx * lx + ly * ly + lz * lz) + np.sqrt(wx * wx + wy * wy + wz * wz) * max(br[n], 0.0)
            v[k] = max(v[k], speed)
    near = np.zeros(K, np.bool_)
    for x in range(K):
        for y in range(x + 1, K):
            e0, e1, e2 = c[x, 0] - c[y, 0], c[x, 1] - c[y, 1], c[x, 2] - c[y, 2]
            d = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2)  # products, not ** 2 (numba's integer power: one compile more)
            if d < r[x] + r[y] + margin + horizon * (v[x] + v[y]):
                near[x] = True
                near[y] = True
    return near
