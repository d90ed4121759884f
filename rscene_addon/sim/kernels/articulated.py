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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _unit4(w, x, y, z):
    """A quaternion normalised (zero: the identity), as four scalars."""
    n = np.sqrt(w * w + x * x + y * y + z * z)
    if n > 0:
        return w / n, x / n, y / n, z / n
    return 1.0, 0.0, 0.0, 0.0


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy", _nrt=False)
def _quat_rotation(w, x, y, z, out):
    """out[:3, :3] = the rotation of the unit quaternion (w, x, y, z)."""
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - w * z)
    out[0, 2] = 2 * (x * z + w * y)
    out[1, 0] = 2 * (x * y + w * z)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - w * x)
    out[2, 0] = 2 * (x * z - w * y)
    out[2, 1] = 2 * (y * z + w * x)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def kinematics(q, u, parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local, inertia_local):
    """Frames (n, 4, 4), motion subspaces S (n, 6, 6), spatial velocities (n, 6), COMs (n, 3) and spatial
    inertias about the world origin (n, 6, 6): ``ArticulatedSystem._update_kinematics``. Every product is
    written out by index over whole arrays (no per-body views, no allocation per body), each sum in index
    order (a matrix product's terms left to right)."""
    n = parent.shape[0]
    frames = np.zeros((n, 4, 4))
    S = np.zeros((n, 6, 6))
    vel = np.zeros((n, 6))
    com = np.zeros((n, 3))
    inertia = np.zeros((n, 6, 6))
    jf = np.empty((4, 4))  # the joint frame: parent frame @ origin
    tm = np.empty((4, 4))
    mvd = np.empty((4, 4))  # the moved frame: jf @ motion
    k3 = np.empty((3, 3))
    kk3 = np.empty((3, 3))
    t3 = np.empty((3, 3))
    ic = np.empty((3, 3))
    cx = np.zeros((3, 3))
    a = np.empty(3)
    du = np.empty(3)
    dv = np.empty(3)
    for i in range(n):
        p = parent[i]
        for r in range(4):
            for c in range(4):
                if p < 0:
                    jf[r, c] = origin[i, r, c]
                else:
                    t = 0.0
                    for m in range(4):
                        t += frames[p, r, m] * origin[i, m, c]
                    jf[r, c] = t
        k = kind[i]
        if k != FIXED:
            # the joint motion tm (``base.spatial`` axis-angle or quaternion rotation, translation), then
            # mvd = jf @ tm: written out here, not in helpers (each compiled function costs a fixed ~0.3 s)
            g = gs0[i]
            for r in range(4):
                for c in range(4):
                    tm[r, c] = 1.0 if r == c else 0.0
            if k == REVOLUTE or k == PLANAR:
                if k == PLANAR:
                    for r in range(3):
                        tm[r, 3] = q[g] * pu[i, r] + q[g + 1] * pv[i, r]
                # I + s K + (1 - c) K K about the unit axis
                ang = q[g] if k == REVOLUTE else q[g + 2]
                a0, a1, a2 = axis[i, 0], axis[i, 1], axis[i, 2]
                cs, sn = np.cos(ang), np.sin(ang)
                for r in range(3):
                    for c in range(3):
                        k3[r, c] = 0.0
                k3[0, 1], k3[0, 2], k3[1, 0], k3[1, 2], k3[2, 0], k3[2, 1] = -a2, a1, a2, -a0, -a1, a0
                for r in range(3):
                    for c in range(3):
                        t = 0.0
                        for m in range(3):
                            t += k3[r, m] * k3[m, c]
                        kk3[r, c] = t
                for r in range(3):
                    for c in range(3):
                        tm[r, c] = (1.0 if r == c else 0.0) + sn * k3[r, c] + (1 - cs) * kk3[r, c]
            elif k == PRISMATIC:
                for r in range(3):
                    tm[r, 3] = q[g] * axis[i, r]
            elif k == SPHERICAL or k == FLOATING:
                o = g if k == SPHERICAL else g + 3
                w, x, y, z = _unit4(q[o], q[o + 1], q[o + 2], q[o + 3])
                _quat_rotation(w, x, y, z, tm)
                if k == FLOATING:
                    for r in range(3):
                        tm[r, 3] = q[g + r]
            for r in range(4):
                for c in range(4):
                    t = 0.0
                    for m in range(4):
                        t += jf[r, m] * tm[m, c]
                    mvd[r, c] = t
        else:
            for r in range(4):
                for c in range(4):
                    mvd[r, c] = jf[r, c]
        for r in range(4):
            for c in range(4):
                t = 0.0
                for m in range(4):
                    t += mvd[r, m] * offset[i, m, c]
                frames[i, r, c] = t
        # motion subspace columns from the joint frame (rotation jf[:3, :3], origin jf[:3, 3])
        if k == REVOLUTE or k == PRISMATIC or k == PLANAR:
            for r in range(3):
                t = 0.0
                for m in range(3):
                    t += jf[r, m] * axis[i, m]
                a[r] = t
        p0, p1, p2 = jf[0, 3], jf[1, 3], jf[2, 3]
        if k == REVOLUTE:
            for r in range(3):
                S[i, r, 0] = a[r]
            S[i, 3, 0] = p1 * a[2] - p2 * a[1]
            S[i, 4, 0] = p2 * a[0] - p0 * a[2]
            S[i, 5, 0] = p0 * a[1] - p1 * a[0]
        elif k == PRISMATIC:
            for r in range(3):
                S[i, 3 + r, 0] = a[r]
        elif k == SPHERICAL:
            for c in range(3):
                b0, b1, b2 = jf[0, c], jf[1, c], jf[2, c]
                S[i, 0, c], S[i, 1, c], S[i, 2, c] = b0, b1, b2
                S[i, 3, c] = p1 * b2 - p2 * b1
                S[i, 4, c] = p2 * b0 - p0 * b2
                S[i, 5, c] = p0 * b1 - p1 * b0
        elif k == FLOATING:
            m0, m1, m2 = mvd[0, 3], mvd[1, 3], mvd[2, 3]
            for c in range(3):
                b0, b1, b2 = jf[0, c], jf[1, c], jf[2, c]
                for r in range(3):
                    S[i, 3 + r, c] = jf[r, c]
                    S[i, r, 3 + c] = jf[r, c]
                S[i, 3, 3 + c] = m1 * b2 - m2 * b1
                S[i, 4, 3 + c] = m2 * b0 - m0 * b2
                S[i, 5, 3 + c] = m0 * b1 - m1 * b0
        elif k == PLANAR:
            m0, m1, m2 = mvd[0, 3], mvd[1, 3], mvd[2, 3]
            for r in range(3):
                tu, tv = 0.0, 0.0
                for m in range(3):
                    tu += jf[r, m] * pu[i, m]
                    tv += jf[r, m] * pv[i, m]
                du[r], dv[r] = tu, tv
            for r in range(3):
                S[i, 3 + r, 0] = du[r]
                S[i, 3 + r, 1] = dv[r]
                S[i, r, 2] = a[r]
            S[i, 3, 2] = m1 * a[2] - m2 * a[1]
            S[i, 4, 2] = m2 * a[0] - m0 * a[2]
            S[i, 5, 2] = m0 * a[1] - m1 * a[0]
        # centre of mass, rotated inertia and the spatial inertia [[Ic + m cx cx^T, m cx], [m cx^T, m I]]
        for r in range(3):
            t = 0.0
            for m in range(3):
                t += frames[i, r, m] * com_local[i, m]
            com[i, r] = t + frames[i, r, 3]
        for r in range(3):
            for c in range(3):
                t = 0.0
                for m in range(3):
                    t += frames[i, r, m] * inertia_local[i, m, c]
                t3[r, c] = t
        for r in range(3):
            for c in range(3):
                t = 0.0
                for m in range(3):
                    t += t3[r, m] * frames[i, c, m]
                ic[r, c] = t
        ms = mass[i]
        c0, c1, c2 = com[i, 0], com[i, 1], com[i, 2]
        cx[0, 1], cx[0, 2], cx[1, 0], cx[1, 2], cx[2, 0], cx[2, 1] = -c2, c1, c2, -c0, -c1, c0
        for r in range(3):
            for c in range(3):
                t = 0.0
                for m in range(3):
                    t += cx[r, m] * cx[c, m]
                inertia[i, r, c] = ic[r, c] + ms * t
                inertia[i, r, 3 + c] = ms * cx[r, c]
                inertia[i, 3 + r, c] = ms * cx[c, r]
            inertia[i, 3 + r, 3 + r] = ms
        if p >= 0:
            for r in range(6):
                vel[i, r] = vel[p, r]
        for c in range(nd[i]):
            uc = u[ds0[i] + c]
            for r in range(6):
                vel[i, r] += S[i, r, c] * uc
    return frames, S, vel, com, inertia


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
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
    f6 = np.empty((6, 6))  # comp[i] @ S[i], by index (no views of comp or S)
    for i in range(n - 1, -1, -1):
        di = nd[i]
        if di == 0:
            continue
        for r in range(6):
            for c in range(di):
                t = 0.0
                for x in range(6):
                    t += comp[i, r, x] * S[i, x, c]
                f6[r, c] = t
        a = ds0[i]
        for r in range(di):
            for c in range(di):
                t = 0.0
                for x in range(6):
                    t += S[i, x, r] * f6[x, c]
                m[a + r, a + c] = t
        j = parent[i]
        while j >= 0:
            dj = nd[j]
            if dj > 0:
                b = ds0[j]
                for r in range(di):
                    for c in range(dj):
                        t = 0.0
                        for x in range(6):
                            t += f6[x, r] * S[j, x, c]
                        m[a + r, b + c] = t
                        m[b + c, a + r] = t
            j = parent[j]
    for k in range(nv):
        m[k, k] += armature[k]
    return m


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, gravity):
    """h(q, u) by recursive Newton-Euler (``ArticulatedSystem.inverse_dynamics(None)``). The spatial cross
    products (motion v x m: [w x mw; w x mv + v x mw], force v x* f: [w x fw + v x fv; w x fv]) are
    written out on scalars into scratch reused by every body: no allocation or view per body."""
    n = parent.shape[0]
    nv = u.shape[0]
    acc = np.zeros((n, 6))
    force = np.zeros((n, 6))
    su = np.empty(6)
    vp = np.empty(6)
    ap = np.empty(6)
    for i in range(n):
        p = parent[i]
        for r in range(6):
            vp[r] = vel[p, r] if p >= 0 else 0.0
            ap[r] = acc[p, r] if p >= 0 else 0.0
        if p < 0:
            ap[3], ap[4], ap[5] = -gravity[0], -gravity[1], -gravity[2]
        b = ds0[i]
        for r in range(6):
            su[r] = 0.0
        for c in range(nd[i]):
            for r in range(6):
                su[r] += S[i, r, c] * u[b + c]
        # sd = vp x su (motion cross product)
        w0, w1, w2, v0, v1, v2 = vp[0], vp[1], vp[2], vp[3], vp[4], vp[5]
        m0, m1, m2, m3, m4, m5 = su[0], su[1], su[2], su[3], su[4], su[5]
        sd0, sd1, sd2 = w1 * m2 - w2 * m1, w2 * m0 - w0 * m2, w0 * m1 - w1 * m0
        sd3, sd4, sd5 = w1 * m5 - w2 * m4, w2 * m3 - w0 * m5, w0 * m4 - w1 * m3
        sd3 += v1 * m2 - v2 * m1
        sd4 += v2 * m0 - v0 * m2
        sd5 += v0 * m1 - v1 * m0
        k = kind[i]
        if k == FLOATING or k == PLANAR:
            if k == FLOATING:
                vr0, vr1, vr2, wr0, wr1, wr2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                for c in range(3):
                    vr0 += S[i, 3, c] * u[b + c]
                    wr0 += S[i, 0, 3 + c] * u[b + 3 + c]
                for c in range(3):
                    vr1 += S[i, 4, c] * u[b + c]
                    wr1 += S[i, 1, 3 + c] * u[b + 3 + c]
                for c in range(3):
                    vr2 += S[i, 5, c] * u[b + c]
                    wr2 += S[i, 2, 3 + c] * u[b + 3 + c]
            else:
                vr0 = S[i, 3, 0] * u[b] + S[i, 3, 1] * u[b + 1]
                vr1 = S[i, 4, 0] * u[b] + S[i, 4, 1] * u[b + 1]
                vr2 = S[i, 5, 0] * u[b] + S[i, 5, 1] * u[b + 1]
                wr0, wr1, wr2 = S[i, 0, 2] * u[b + 2], S[i, 1, 2] * u[b + 2], S[i, 2, 2] * u[b + 2]
            sd3 += vr1 * wr2 - vr2 * wr1
            sd4 += vr2 * wr0 - vr0 * wr2
            sd5 += vr0 * wr1 - vr1 * wr0
        acc[i, 0], acc[i, 1], acc[i, 2] = ap[0] + sd0, ap[1] + sd1, ap[2] + sd2
        acc[i, 3], acc[i, 4], acc[i, 5] = ap[3] + sd3, ap[4] + sd4, ap[5] + sd5
        # force = I a + v x* (I v)
        for r in range(6):
            t = 0.0
            for c in range(6):
                t += inertia[i, r, c] * vel[i, c]
            su[r] = t  # I v
        w0, w1, w2, v0, v1, v2 = vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5]
        f0, f1, f2, f3, f4, f5 = su[0], su[1], su[2], su[3], su[4], su[5]
        fc0 = (w1 * f2 - w2 * f1) + (v1 * f5 - v2 * f4)
        fc1 = (w2 * f0 - w0 * f2) + (v2 * f3 - v0 * f5)
        fc2 = (w0 * f1 - w1 * f0) + (v0 * f4 - v1 * f3)
        fc3, fc4, fc5 = w1 * f5 - w2 * f4, w2 * f3 - w0 * f5, w0 * f4 - w1 * f3
        for r in range(6):
            t = 0.0
            for c in range(6):
                t += inertia[i, r, c] * acc[i, c]
            vp[r] = t  # I a
        force[i, 0], force[i, 1], force[i, 2] = vp[0] + fc0, vp[1] + fc1, vp[2] + fc2
        force[i, 3], force[i, 4], force[i, 5] = vp[3] + fc3, vp[4] + fc4, vp[5] + fc5
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


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def position_error(q, q_target, kind, gs0, ds0, nd, nv):
    """q_target (-) q as an nv vector (``ArticulatedSystem.position_error``); a ball or free joint's rotation
    part: the rotation vector (``base.spatial.log_rotation``) of unit(target) * conj(unit(q)), written out
    here on scalars (one compiled function instead of five)."""
    e = np.zeros(nv)
    rm = np.empty((3, 3))
    for i in range(kind.shape[0]):
        d = nd[i]
        if d == 0:
            continue
        g, b = gs0[i], ds0[i]
        k = kind[i]
        if k != SPHERICAL and k != FLOATING:
            for r in range(d):
                e[b + r] = q_target[g + r] - q[g + r]
            continue
        o, eb = g, b
        if k == FLOATING:
            o, eb = g + 3, b + 3
            for r in range(3):
                e[b + r] = q_target[g + r] - q[g + r]
        t0, t1, t2, t3 = _unit4(q_target[o], q_target[o + 1], q_target[o + 2], q_target[o + 3])
        c0, c1, c2, c3 = _unit4(q[o], q[o + 1], q[o + 2], q[o + 3])
        c1, c2, c3 = -c1, -c2, -c3
        w = t0 * c0 - t1 * c1 - t2 * c2 - t3 * c3
        x = t0 * c1 + t1 * c0 + t2 * c3 - t3 * c2
        y = t0 * c2 - t1 * c3 + t2 * c0 + t3 * c1
        z = t0 * c3 + t1 * c2 - t2 * c1 + t3 * c0
        w, x, y, z = _unit4(w, x, y, z)
        _quat_rotation(w, x, y, z, rm)
        cos = min(max((rm[0, 0] + rm[1, 1] + rm[2, 2] - 1.0) / 2.0, -1.0), 1.0)
        angle = np.arccos(cos)
        o0, o1, o2 = rm[2, 1] - rm[1, 2], rm[0, 2] - rm[2, 0], rm[1, 0] - rm[0, 1]
        if angle < 1e-7:
            o0, o1, o2 = o0 * 0.5, o1 * 0.5, o2 * 0.5
        elif np.pi - angle < 1e-4:
            best, bi = -1e300, 0
            for r in range(3):
                if (rm[r, r] + 1.0) / 2.0 > best:
                    best, bi = (rm[r, r] + 1.0) / 2.0, r
            root = np.sqrt(max(best, 1e-12))
            x0 = (rm[0, bi] + (1.0 if bi == 0 else 0.0)) / 2.0 / root
            x1 = (rm[1, bi] + (1.0 if bi == 1 else 0.0)) / 2.0 / root
            x2 = (rm[2, bi] + (1.0 if bi == 2 else 0.0)) / 2.0 / root
            norm = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
            sign = -1.0 if x0 * o0 + x1 * o1 + x2 * o2 < 0 else 1.0
            o0, o1, o2 = sign * x0 / norm * angle, sign * x1 / norm * angle, sign * x2 / norm * angle
        else:
            f = angle / (2.0 * np.sin(angle))
            o0, o1, o2 = o0 * f, o1 * f, o2 * f
        e[eb], e[eb + 1], e[eb + 2] = o0, o1, o2
    return e


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
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


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
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
        # acc with (L L^T) acc = rhs on the free dofs, 0 on the others
        y = np.zeros(nv)
        for i in range(nv):
            if not free[i]:
                continue
            t = rhs[i]
            for k in range(i):
                t -= L[i, k] * y[k]
            y[i] = t / L[i, i]
        acc = np.zeros(nv)
        for i in range(nv - 1, -1, -1):
            if not free[i]:
                continue
            t = y[i]
            for k in range(i + 1, nv):
                t -= L[k, i] * acc[k]
            acc[i] = t / L[i, i]
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


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def integrate(q, u, push, dt, kind, gs0, ds0, nd, lim_g, lim_d, lower, upper):
    """``ArticulatedSystem._finish`` before the kinematics: q moved by (u + push) dt, limited joints projected
    back inside their range (their outward velocity removed, in ``u``), quaternions normalised. A ball or
    free joint's quaternion turns by exp(dv) (``base.spatial``), written out on scalars."""
    q = q.copy()
    dv = np.empty(u.shape[0])
    for k in range(u.shape[0]):
        dv[k] = (u[k] + push[k]) * dt
    for i in range(kind.shape[0]):
        d = nd[i]
        if d == 0:
            continue
        g, b = gs0[i], ds0[i]
        k = kind[i]
        if k != FLOATING and k != SPHERICAL:
            for r in range(d):
                q[g + r] += dv[b + r]
            continue
        o, vb = g, b
        if k == FLOATING:
            o, vb = g + 3, b + 3
            for r in range(3):
                q[g + r] += dv[b + r]
        w0, w1, w2 = dv[vb], dv[vb + 1], dv[vb + 2]
        angle = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if angle < 1e-12:
            a0, a1, a2, a3 = _unit4(1.0, 0.5 * w0, 0.5 * w1, 0.5 * w2)
        else:
            sn = np.sin(angle / 2) / angle
            a0, a1, a2, a3 = np.cos(angle / 2), sn * w0, sn * w1, sn * w2
        b0, b1, b2, b3 = q[o], q[o + 1], q[o + 2], q[o + 3]
        q[o], q[o + 1], q[o + 2], q[o + 3] = _unit4(a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
                                                    a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
                                                    a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
                                                    a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)
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
            q[o], q[o + 1], q[o + 2], q[o + 3] = _unit4(q[o], q[o + 1], q[o + 2], q[o + 3])
    return q


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
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
