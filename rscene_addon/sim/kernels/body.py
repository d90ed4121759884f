"""Per-body kernels at the ends of a step: rotation matrices, world inverse inertias and the forces at
its start; the quiet-step count and island sleeping at its end (``World.step`` and ``World._sleep``,
one call each instead of a few dozen numpy calls)."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def body_frames(quat, inv_I_body, awake, gravity, inv_mass, ext_f, ext_t, lin, ang, dt):
    """Returns R (N, 3, 3) (``unit_quat_to_matrix``) and R I^-1 R^T (N, 3, 3); awake bodies take
    gravity, the external force and torque over ``dt`` (semi-implicit Euler) into ``lin``, ``ang``."""
    N = quat.shape[0]
    R = np.empty((N, 3, 3))
    Iw = np.empty((N, 3, 3))
    RI = np.empty((3, 3))
    for n in range(N):
        w, x, y, z = quat[n, 0], quat[n, 1], quat[n, 2], quat[n, 3]
        xx, yy, zz = x * x, y * y, z * z
        xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
        R[n, 0, 0] = 1 - 2 * (yy + zz)
        R[n, 0, 1] = 2 * (xy - wz)
        R[n, 0, 2] = 2 * (xz + wy)
        R[n, 1, 0] = 2 * (xy + wz)
        R[n, 1, 1] = 1 - 2 * (xx + zz)
        R[n, 1, 2] = 2 * (yz - wx)
        R[n, 2, 0] = 2 * (xz - wy)
        R[n, 2, 1] = 2 * (yz + wx)
        R[n, 2, 2] = 1 - 2 * (xx + yy)
        for i in range(3):
            for k in range(3):
                RI[i, k] = R[n, i, 0] * inv_I_body[n, 0, k] + R[n, i, 1] * inv_I_body[n, 1, k] \
                    + R[n, i, 2] * inv_I_body[n, 2, k]
        for i in range(3):
            for j in range(3):
                Iw[n, i, j] = RI[i, 0] * R[n, j, 0] + RI[i, 1] * R[n, j, 1] + RI[i, 2] * R[n, j, 2]
        if awake[n]:
            im = inv_mass[n]
            for i in range(3):
                lin[n, i] += (gravity[i] + ext_f[n, i] * im) * dt
                ang[n, i] += (Iw[n, i, 0] * ext_t[n, 0] + Iw[n, i, 1] * ext_t[n, 1] + Iw[n, i, 2] * ext_t[n, 2]) * dt
    return R, Iw


@njit(cache=True)
def _root(parent, x):
    while parent[x] != x:
        x = parent[x]
    return x


@njit(cache=True)
def sleep(lin, ang, awake, kinematic, quiet_steps, sleeping, island, A, B, la, lb, sleep_lin, sleep_ang,
          need_steps):
    """``World._sleep``: awake bodies below both speed limits count a quiet step (others restart at 0);
    contacts (A, B) with a moving kinematic body restart their bodies' counts; islands of awake bodies
    linked by (la, lb) whose bodies all have ``need_steps`` quiet steps fall asleep (velocities zeroed,
    ``island`` = the island's smallest body)."""
    N = lin.shape[0]
    kin_moving = np.zeros(N, np.bool_)
    any_kin = False
    for i in range(N):
        l2 = np.sqrt(lin[i, 0] * lin[i, 0] + lin[i, 1] * lin[i, 1] + lin[i, 2] * lin[i, 2])
        a2 = np.sqrt(ang[i, 0] * ang[i, 0] + ang[i, 1] * ang[i, 1] + ang[i, 2] * ang[i, 2])
        if awake[i]:
            quiet_steps[i] = quiet_steps[i] + 1 if (l2 < sleep_lin and a2 < sleep_ang) else 0
        if kinematic[i] and (l2 > 0 or a2 > 0):
            kin_moving[i] = True
            any_kin = True
    if any_kin:
        for c in range(A.shape[0]):
            if kin_moving[A[c]] or kin_moving[B[c]]:
                quiet_steps[A[c]] = 0
                quiet_steps[B[c]] = 0
    ready = np.zeros(N, np.bool_)
    any_ready = False
    for i in range(N):
        if awake[i] and quiet_steps[i] >= need_steps:
            ready[i] = True
            any_ready = True
    if not any_ready:
        return
    parent = np.arange(N)  # union-find as island_labels: a root is its component's smallest node
    for k in range(la.shape[0]):
        if not (awake[la[k]] and awake[lb[k]]):
            continue
        x = _root(parent, la[k])
        y = _root(parent, lb[k])
        if x < y:
            parent[y] = x
        elif y < x:
            parent[x] = y
    label = np.empty(N, np.int64)
    restless = np.zeros(N, np.bool_)
    for i in range(N):
        label[i] = _root(parent, i)
        if awake[i] and not ready[i]:
            restless[label[i]] = True
    for i in range(N):
        if awake[i] and not restless[label[i]]:
            sleeping[i] = True
            for c in range(3):
                lin[i, c] = 0.0
                ang[i, c] = 0.0
            island[i] = label[i]
