"""Compiled articulated-body dynamics: the numba twins of ``sim.articulated``'s kinematics, composite-rigid-body
mass matrix, recursive Newton-Euler bias forces, implicit PD prediction and integration (same formulas, same
order; the numpy methods stay the reference).

A system is flat arrays built once (``sim.robot_arrays``): per body ``parent``, ``kind`` (``KINDS``), the first
coordinate ``gs0``, first velocity ``ds0`` and velocity count ``nd``, joint ``origin`` and ``offset`` (4x4),
``axis``, planar axes ``pu``/``pv``, ``mass``, ``com_local``, ``inertia_local``. Spatial vectors are
[angular; linear] in world-origin Plücker coordinates; ``S[i, :, :nd[i]]`` is body i's motion subspace.
"""
from __future__ import annotations

import numpy as np
from numba import njit

FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FLOATING, PLANAR = 0, 1, 2, 3, 4, 5


# numba's ``@`` and ``np.dot`` need SciPy's BLAS, which is not shipped: small loops instead. Element loops also
# replace array expressions (``a + b``, ``x[i] = v``, ``np.where``) throughout these kernels: numba compiles
# each array expression as a function of its own, which tripled the first compile.


@njit(cache=True)
def mm(a, b):
    """a @ b of two matrices."""
    out = np.zeros((a.shape[0], b.shape[1]))
    mm_into(a, b, out)
    return out


@njit(cache=True)
def mm_into(a, b, out):
    """out[:n, :m] = a @ b (the sums of ``mm``, no allocation; ``out`` distinct from a and b)."""
    n, k, m = a.shape[0], a.shape[1], b.shape[1]
    for i in range(n):
        for j in range(m):
            t = 0.0
            for r in range(k):
                t += a[i, r] * b[r, j]
            out[i, j] = t


@njit(cache=True)
def mv(a, v):
    """a @ v."""
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        t = 0.0
        for r in range(a.shape[1]):
            t += a[i, r] * v[r]
        out[i] = t
    return out


@njit(cache=True)
def tmv(a, v):
    """a.T @ v."""
    out = np.zeros(a.shape[1])
    for j in range(a.shape[1]):
        t = 0.0
        for r in range(a.shape[0]):
            t += a[r, j] * v[r]
        out[j] = t
    return out


@njit(cache=True)
def dot(a, b):
    t = 0.0
    for r in range(a.shape[0]):
        t += a[r] * b[r]
    return t


@njit(cache=True)
def quat_matrix(w, x, y, z, out):
    """Rotation of a quaternion (normalised first; zero: identity) into out (3, 3)."""
    n = np.sqrt(w * w + x * x + y * y + z * z)
    if n > 0:
        w, x, y, z = w / n, x / n, y / n, z / n
    else:
        w, x, y, z = 1.0, 0.0, 0.0, 0.0
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - w * z)
    out[0, 2] = 2 * (x * z + w * y)
    out[1, 0] = 2 * (x * y + w * z)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - w * x)
    out[2, 0] = 2 * (x * z - w * y)
    out[2, 1] = 2 * (y * z + w * x)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True)
def _axis_angle(a, angle, out, k, kk):
    """I + s K + (1 - c) K K about unit axis a (as ``base.spatial.axis_angle_matrix``); k, kk: 3x3 scratch."""
    c, s = np.cos(angle), np.sin(angle)
    for r in range(3):
        for col in range(3):
            k[r, col] = 0.0
    k[0, 1], k[0, 2], k[1, 0], k[1, 2], k[2, 0], k[2, 1] = -a[2], a[1], a[2], -a[0], -a[1], a[0]
    mm_into(k, k, kk)
    for r in range(3):
        for col in range(3):
            out[r, col] = (1.0 if r == col else 0.0) + s * k[r, col] + (1 - c) * kk[r, col]


@njit(cache=True)
def _motion(kind, qj, axis, pu, pv, t, k3, kk3):
    """The joint's motion transform into t (4x4); k3, kk3: 3x3 scratch."""
    for r in range(4):
        for c in range(4):
            t[r, c] = 1.0 if r == c else 0.0
    if kind == REVOLUTE:
        _axis_angle(axis, qj[0], t[:3, :3], k3, kk3)
    elif kind == PRISMATIC:
        for r in range(3):
            t[r, 3] = qj[0] * axis[r]
    elif kind == SPHERICAL:
        quat_matrix(qj[0], qj[1], qj[2], qj[3], t[:3, :3])
    elif kind == FLOATING:
        quat_matrix(qj[3], qj[4], qj[5], qj[6], t[:3, :3])
        for r in range(3):
            t[r, 3] = qj[r]
    elif kind == PLANAR:
        for r in range(3):
            t[r, 3] = qj[0] * pu[r] + qj[1] * pv[r]
        _axis_angle(axis, qj[2], t[:3, :3], k3, kk3)


@njit(cache=True)
def _cross_into(a0, a1, a2, b0, b1, b2, out, o):
    out[o] = a1 * b2 - a2 * b1
    out[o + 1] = a2 * b0 - a0 * b2
    out[o + 2] = a0 * b1 - a1 * b0


@njit(cache=True)
def kinematics(q, u, parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local, inertia_local):
    """Frames (n, 4, 4), motion subspaces S (n, 6, 6), spatial velocities (n, 6), COMs (n, 3) and spatial
    inertias about the world origin (n, 6, 6): ``ArticulatedSystem._update_kinematics``."""
    n = parent.shape[0]
    frames = np.zeros((n, 4, 4))
    S = np.zeros((n, 6, 6))
    vel = np.zeros((n, 6))
    com = np.zeros((n, 3))
    inertia = np.zeros((n, 6, 6))
    # scratch, reused by every body (no allocation per body)
    jf = np.empty((4, 4))
    tm = np.empty((4, 4))
    mvd = np.empty((4, 4))
    k3 = np.empty((3, 3))
    kk3 = np.empty((3, 3))
    t3 = np.empty((3, 3))
    ic = np.empty((3, 3))
    cx = np.zeros((3, 3))
    top = np.empty((3, 3))
    for i in range(n):
        if parent[i] < 0:
            for r in range(4):
                for c in range(4):
                    jf[r, c] = origin[i, r, c]
        else:
            mm_into(frames[parent[i]], origin[i], jf)
        k = kind[i]
        if k != FIXED:
            _motion(k, q[gs0[i]:], axis[i], pu[i], pv[i], tm, k3, kk3)
            mm_into(jf, tm, mvd)
            moved = mvd
        else:
            moved = jf
        mm_into(moved, offset[i], frames[i])
        frame = frames[i]
        rot = jf[:3, :3]
        p = jf[:3, 3]
        s = S[i]
        if k == REVOLUTE:
            a = mv(rot, axis[i])
            s[0, 0], s[1, 0], s[2, 0] = a[0], a[1], a[2]
            _cross_into(p[0], p[1], p[2], a[0], a[1], a[2], s[:, 0], 3)
        elif k == PRISMATIC:
            a = mv(rot, axis[i])
            s[3, 0], s[4, 0], s[5, 0] = a[0], a[1], a[2]
        elif k == SPHERICAL:
            for c in range(3):
                s[0, c], s[1, c], s[2, c] = rot[0, c], rot[1, c], rot[2, c]
                _cross_into(p[0], p[1], p[2], rot[0, c], rot[1, c], rot[2, c], s[:, c], 3)
        elif k == FLOATING:
            cpos = moved[:3, 3]
            for c in range(3):
                for r in range(3):
                    s[3 + r, c] = rot[r, c]
                    s[r, 3 + c] = rot[r, c]
                _cross_into(cpos[0], cpos[1], cpos[2], rot[0, c], rot[1, c], rot[2, c], s[:, 3 + c], 3)
        elif k == PLANAR:
            cpos = moved[:3, 3]
            a = mv(rot, axis[i])
            du = mv(rot, pu[i])
            dv = mv(rot, pv[i])
            for r in range(3):
                s[3 + r, 0] = du[r]
                s[3 + r, 1] = dv[r]
                s[r, 2] = a[r]
            _cross_into(cpos[0], cpos[1], cpos[2], a[0], a[1], a[2], s[:, 2], 3)
        fr = frame[:3, :3]
        c3 = mv(fr, com_local[i])
        for r in range(3):
            c3[r] += frame[r, 3]
            com[i, r] = c3[r]
        mm_into(fr, inertia_local[i], t3)
        mm_into(t3, fr.T, ic)
        m = mass[i]
        # spatial_inertia(m, c, Ic): [[Ic + m cx cx^T, m cx], [m cx^T, m I]]
        cx[0, 1], cx[0, 2], cx[1, 0], cx[1, 2], cx[2, 0], cx[2, 1] = -c3[2], c3[1], c3[2], -c3[0], -c3[1], c3[0]
        mm_into(cx, cx.T, top)
        for r in range(3):
            for c in range(3):
                inertia[i, r, c] = ic[r, c] + m * top[r, c]
                inertia[i, r, 3 + c] = m * cx[r, c]
                inertia[i, 3 + r, c] = m * cx[c, r]
            inertia[i, 3 + r, 3 + r] = m
        if parent[i] >= 0:
            for r in range(6):
                vel[i, r] = vel[parent[i], r]
        for c in range(nd[i]):
            uc = u[ds0[i] + c]
            for r in range(6):
                vel[i, r] += s[r, c] * uc
    return frames, S, vel, com, inertia


@njit(cache=True)
def mass_matrix(parent, ds0, nd, S, inertia, armature):
    """M(q) by the composite-rigid-body algorithm (``ArticulatedSystem.mass_matrix``)."""
    n = parent.shape[0]
    nv = armature.shape[0]
    comp = inertia.copy()
    for i in range(n - 1, 0, -1):
        p = parent[i]
        if p >= 0:
            for r in range(6):
                for c in range(6):
                    comp[p, r, c] += comp[i, r, c]
    m = np.zeros((nv, nv))
    f6 = np.empty((6, 6))
    blk = np.empty((6, 6))
    for i in range(n - 1, -1, -1):
        di = nd[i]
        if di == 0:
            continue
        mm_into(comp[i], S[i, :, :di], f6)
        f = f6[:, :di]
        a = ds0[i]
        mm_into(S[i, :, :di].T, f, blk)
        for r in range(di):
            for c in range(di):
                m[a + r, a + c] = blk[r, c]
        j = parent[i]
        while j >= 0:
            dj = nd[j]
            if dj > 0:
                b = ds0[j]
                mm_into(f.T, S[j, :, :dj], blk)
                for r in range(di):
                    for c in range(dj):
                        m[a + r, b + c] = blk[r, c]
                        m[b + c, a + r] = blk[r, c]
            j = parent[j]
    for k in range(nv):
        m[k, k] += armature[k]
    return m


@njit(cache=True)
def _mcross(v, m):
    """Spatial motion cross product v x m."""
    out = np.empty(6)
    _cross_into(v[0], v[1], v[2], m[0], m[1], m[2], out, 0)
    _cross_into(v[0], v[1], v[2], m[3], m[4], m[5], out, 3)
    t = np.empty(3)
    _cross_into(v[3], v[4], v[5], m[0], m[1], m[2], t, 0)
    out[3] += t[0]
    out[4] += t[1]
    out[5] += t[2]
    return out


@njit(cache=True)
def _fcross(v, f):
    """Spatial force cross product v x* f."""
    out = np.empty(6)
    _cross_into(v[0], v[1], v[2], f[0], f[1], f[2], out, 0)
    t = np.empty(3)
    _cross_into(v[3], v[4], v[5], f[3], f[4], f[5], t, 0)
    out[0] += t[0]
    out[1] += t[1]
    out[2] += t[2]
    _cross_into(v[0], v[1], v[2], f[3], f[4], f[5], out, 3)
    return out


@njit(cache=True)
def bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, gravity):
    """h(q, u) by recursive Newton-Euler (``ArticulatedSystem.inverse_dynamics(None)``)."""
    n = parent.shape[0]
    nv = u.shape[0]
    acc = np.zeros((n, 6))
    force = np.zeros((n, 6))
    a0 = np.zeros(6)
    a0[3], a0[4], a0[5] = -gravity[0], -gravity[1], -gravity[2]
    vp = np.zeros(6)
    for i in range(n):
        if parent[i] < 0:
            for r in range(6):
                vp[r] = 0.0
            ap = a0
        else:
            for r in range(6):
                vp[r] = vel[parent[i], r]
            ap = acc[parent[i]]
        d = nd[i]
        s = S[i]
        su = np.zeros(6)
        for c in range(d):
            for r in range(6):
                su[r] += s[r, c] * u[ds0[i] + c]
        sd = _mcross(vp, su)
        k = kind[i]
        if k == FLOATING or k == PLANAR:
            vr = np.zeros(3)
            wr = np.zeros(3)
            b = ds0[i]
            if k == FLOATING:
                for r in range(3):
                    for c in range(3):
                        vr[r] += s[3 + r, c] * u[b + c]
                        wr[r] += s[r, 3 + c] * u[b + 3 + c]
            else:
                for r in range(3):
                    vr[r] = s[3 + r, 0] * u[b] + s[3 + r, 1] * u[b + 1]
                    wr[r] = s[r, 2] * u[b + 2]
            t = np.empty(3)
            _cross_into(vr[0], vr[1], vr[2], wr[0], wr[1], wr[2], t, 0)
            sd[3] += t[0]
            sd[4] += t[1]
            sd[5] += t[2]
        for r in range(6):
            acc[i, r] = ap[r] + sd[r]
        v = vel[i]
        iv = mv(inertia[i], v)
        fa = mv(inertia[i], acc[i])
        fc = _fcross(v, iv)
        for r in range(6):
            force[i, r] = fa[r] + fc[r]
    tau = np.zeros(nv)
    for i in range(n - 1, -1, -1):
        for c in range(nd[i]):
            t = 0.0
            for r in range(6):
                t += S[i, r, c] * force[i, r]
            tau[ds0[i] + c] = t
        if parent[i] >= 0:
            for r in range(6):
                force[parent[i], r] += force[i, r]
    return tau


@njit(cache=True)
def _log_rotation(r):
    """Rotation vector of a rotation matrix (``base.spatial.log_rotation``)."""
    cos = min(max((r[0, 0] + r[1, 1] + r[2, 2] - 1.0) / 2.0, -1.0), 1.0)
    angle = np.arccos(cos)
    out = np.empty(3)
    out[0], out[1], out[2] = r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]
    if angle < 1e-7:
        for k in range(3):
            out[k] *= 0.5
        return out
    if np.pi - angle < 1e-4:
        best, bi = -1e300, 0
        for k in range(3):
            if (r[k, k] + 1.0) / 2.0 > best:
                best, bi = (r[k, k] + 1.0) / 2.0, k
        ax = np.empty(3)
        for k in range(3):
            ax[k] = (r[k, bi] + (1.0 if k == bi else 0.0)) / 2.0 / np.sqrt(max(best, 1e-12))
        norm = np.sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2])
        sign = -1.0 if ax[0] * out[0] + ax[1] * out[1] + ax[2] * out[2] < 0 else 1.0
        for k in range(3):
            out[k] = sign * ax[k] / norm * angle
        return out
    f = angle / (2.0 * np.sin(angle))
    for k in range(3):
        out[k] *= f
    return out


@njit(cache=True)
def _unit(q):
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    out = np.zeros(4)
    if n > 0:
        for k in range(4):
            out[k] = q[k] / n
    else:
        out[0] = 1.0
    return out


@njit(cache=True)
def _qmul(a, b):
    out = np.empty(4)
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    return out


@njit(cache=True)
def _quat_error(tq, cq):
    t, c = _unit(tq), _unit(cq)
    for k in range(1, 4):
        c[k] = -c[k]
    d = _qmul(t, c)
    r = np.empty((3, 3))
    quat_matrix(d[0], d[1], d[2], d[3], r)
    return _log_rotation(r)


@njit(cache=True)
def position_error(q, q_target, kind, gs0, ds0, nd, nv):
    """q_target (-) q as an nv vector (``ArticulatedSystem.position_error``)."""
    e = np.zeros(nv)
    for i in range(kind.shape[0]):
        d = nd[i]
        if d == 0:
            continue
        g, b = gs0[i], ds0[i]
        if kind[i] == SPHERICAL:
            qe = _quat_error(q_target[g:g + 4], q[g:g + 4])
            for r in range(3):
                e[b + r] = qe[r]
        elif kind[i] == FLOATING:
            qe = _quat_error(q_target[g + 3:g + 7], q[g + 3:g + 7])
            for r in range(3):
                e[b + r] = q_target[g + r] - q[g + r]
                e[b + 3 + r] = qe[r]
        else:
            for r in range(d):
                e[b + r] = q_target[g + r] - q[g + r]
    return e


@njit(cache=True)
def cholesky(a, free):
    """Lower factor L of ``a`` restricted to the ``free`` dofs (other rows and columns: identity), and
    whether ``a`` was positive definite there."""
    n = a.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        if not free[j]:
            L[j, j] = 1.0
            continue
        s = a[j, j]
        for k in range(j):
            if free[k]:
                s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return L, False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            if not free[i]:
                continue
            t = a[i, j]
            for k in range(j):
                if free[k]:
                    t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    return L, True


@njit(cache=True)
def chol_solve(L, free, b):
    """x with (L L^T) x = b on the free dofs, 0 on the others."""
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        if not free[i]:
            continue
        t = b[i]
        for k in range(i):
            t -= L[i, k] * y[k]
        y[i] = t / L[i, i]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        if not free[i]:
            continue
        t = y[i]
        for k in range(i + 1, n):
            t -= L[k, i] * x[k]
        x[i] = t / L[i, i]
    return x


@njit(cache=True)
def predict(m, h, e, u, kp, kd, damp, u_target, tau_ext, locked, limit, dt):
    """``ArticulatedSystem._predict`` after M and h: (u after this step's forces, PD torque, Cholesky factor
    of M on the free dofs, ok). ok False: a matrix was not positive definite (the caller takes numpy's
    least-squares route instead)."""
    nv = u.shape[0]
    free = np.empty(nv, np.bool_)
    for k in range(nv):
        free[k] = not locked[k]
    clamped = np.zeros(nv, np.bool_)
    clamp_tau = np.zeros(nv)
    acc = np.zeros(nv)
    rhs = np.empty(nv)
    ok = True
    for _ in range(3):
        # implicit PD + damping: (M + dt (Kd + D) + dt^2 Kp) a = Kp (e - dt u) + Kd (u* - u) - D u + tau - h
        a = m.copy()
        for k in range(nv):
            kp_i = 0.0 if clamped[k] else kp[k]
            kd_i = 0.0 if clamped[k] else kd[k]
            rhs[k] = (kp_i * (e[k] - dt * u[k]) + kd_i * (u_target[k] - u[k]) + clamp_tau[k] - damp[k] * u[k]
                      + tau_ext[k] - h[k])
            a[k, k] += dt * (kd_i + damp[k]) + dt * dt * kp_i
        L, good = cholesky(a, free)
        if not good:
            ok = False
            break
        acc = chol_solve(L, free, rhs)
        over = False
        for k in range(nv):
            u_try = u[k] + dt * acc[k]
            tau_pd = kp[k] * (e[k] - dt * u_try) + kd[k] * (u_target[k] - u_try)
            if abs(tau_pd) > limit[k] and not clamped[k] and (kp[k] != 0 or kd[k] != 0):
                over = True
                clamped[k] = True
                clamp_tau[k] = min(max(tau_pd, -limit[k]), limit[k])
        if not over:
            break
    pd = np.empty(nv)
    u_new = np.empty(nv)
    for k in range(nv):
        if clamped[k]:
            pd[k] = clamp_tau[k]
        else:
            pd[k] = kp[k] * (e[k] - dt * (u[k] + dt * acc[k])) + kd[k] * (u_target[k] - u[k] - dt * acc[k])
        u_new[k] = 0.0 if locked[k] else u[k] + dt * acc[k]
    Lm, good = cholesky(m, free)
    return u_new, pd, Lm, ok and good


@njit(cache=True)
def _quat_exp(w0, w1, w2):
    angle = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    out = np.empty(4)
    if angle < 1e-12:
        out[0], out[1], out[2], out[3] = 1.0, 0.5 * w0, 0.5 * w1, 0.5 * w2
        return _unit(out)
    s = np.sin(angle / 2) / angle
    out[0], out[1], out[2], out[3] = np.cos(angle / 2), s * w0, s * w1, s * w2
    return out


@njit(cache=True)
def integrate(q, u, push, dt, kind, gs0, ds0, nd, lim_g, lim_d, lower, upper):
    """``ArticulatedSystem._finish`` before the kinematics: q moved by (u + push) dt, limited joints projected
    back inside their range (their outward velocity removed, in ``u``), quaternions normalised."""
    q = q.copy()
    dv = np.empty(u.shape[0])
    for k in range(u.shape[0]):
        dv[k] = (u[k] + push[k]) * dt
    for i in range(kind.shape[0]):
        d = nd[i]
        if d == 0:
            continue
        g, b = gs0[i], ds0[i]
        if kind[i] == FLOATING:
            for r in range(3):
                q[g + r] += dv[b + r]
            nq = _unit(_qmul(_quat_exp(dv[b + 3], dv[b + 4], dv[b + 5]), q[g + 3:g + 7]))
            for r in range(4):
                q[g + 3 + r] = nq[r]
        elif kind[i] == SPHERICAL:
            nq = _unit(_qmul(_quat_exp(dv[b], dv[b + 1], dv[b + 2]), q[g:g + 4]))
            for r in range(4):
                q[g + r] = nq[r]
        else:
            for r in range(d):
                q[g + r] += dv[b + r]
    for k in range(lim_g.shape[0]):
        gi, di = lim_g[k], lim_d[k]
        if q[gi] < lower[gi]:
            q[gi] = lower[gi]
            u[di] = max(u[di], 0.0)
        elif q[gi] > upper[gi]:
            q[gi] = upper[gi]
            u[di] = min(u[di], 0.0)
    for i in range(kind.shape[0]):
        g = gs0[i]
        if kind[i] == FLOATING or kind[i] == SPHERICAL:
            o = g + 3 if kind[i] == FLOATING else g
            nq = _unit(q[o:o + 4])
            for r in range(4):
                q[o + r] = nq[r]
    return q


@njit(cache=True)
def limit_rows(q, u, lim_g, lim_d, lower, upper, locked, dt):
    """Joint-limit rows (``ArticulatedSystem._limit_rows``): (dof (R,), sign (R,), velocity target (R,))."""
    R = lim_g.shape[0]
    dof = np.empty(2 * R, np.int64)
    sign = np.empty(2 * R)
    target = np.empty(2 * R)
    c = 0
    for k in range(R):
        gi, di = lim_g[k], lim_d[k]
        if locked[di]:
            continue
        lo_gap = q[gi] - lower[gi]
        hi_gap = upper[gi] - q[gi]
        if lo_gap + dt * u[di] < 0:
            dof[c], sign[c], target[c] = di, 1.0, -lo_gap / dt
            c += 1
        if hi_gap - dt * u[di] < 0:
            dof[c], sign[c], target[c] = di, -1.0, -hi_gap / dt
            c += 1
    return dof[:c], sign[:c], target[:c]
