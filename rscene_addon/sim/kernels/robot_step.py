"""A whole step of one articulated system in one compiled call, for a system alone (no other system's links
near it) on planes: ``multibody_compiled.step_compiled`` for one system without a Python round trip between
its parts (bias forces, mass matrix, implicit PD prediction, joint-limit, plane and self-contact rows, the
solve, integration, the next kinematics). The same kernels in the same order, so the same numbers.

Planes (ground_height and the world's plane geoms, G of them): normal ``pn``, offset ``pd``, allowed links
``pallow`` (L, G), the body velocity ``vbody``, material (friction, restitution, threshold) ``pmat`` (G, 3),
``perp``/``pslop`` position correction, and reach max(``rmin``, ``rbase`` + 2 dt (max |u| + ``vw``)) (the
flat ground's rule and the world's).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .articulated import bias_forces, integrate, kinematics, limit_rows, mass_matrix, position_error, predict
from .robot_contacts import pair_rows, plane_rows, tangents
from .robot_solve import solve_rows


@njit(cache=True)
def system_step(q, u, q_target, u_target, kp, kd, damp, tau_ext, locked, limit, armature, gravity, lower, upper,
                lim_g, lim_d, parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local,
                inertia_local, frames, S, vel, inertia, pts, p0, st, ss, so, s0, bc, br, self_allowed, self_mat,
                pallow, pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw, erp, slop, margin, dt, iterations):
    """One step; returns (ok, q, u, PD torque, frames, S, vel, com, inertia, contacts) with contacts
    (kind (C,): 0 plane, 1 self; a: link; b: plane or other link; point; normal; depth; target; push;
    speed; friction; impulse (C, 3); rows (C, 3, nv)). ok False: a mass matrix was not positive definite
    (nothing moved; the caller takes the numpy route)."""
    nv = u.shape[0]
    m = mass_matrix(parent, ds0, nd, S, inertia, armature)
    h = bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, gravity)
    pd_on = False
    for k in range(nv):
        pd_on = pd_on or kp[k] != 0
    e = position_error(q, q_target, kind, gs0, ds0, nd, nv) if pd_on else np.zeros(nv)
    uf, pdt, chol, ok = predict(m, h, e, u, kp, kd, damp, u_target, tau_ext, locked, limit, dt)
    if not ok:
        return False, q, u, pdt, frames, S, vel, np.zeros((frames.shape[0], 3)), inertia, _no_contacts(nv)
    dof, sign, ltarget = limit_rows(q, uf, lim_g, lim_d, lower, upper, locked, dt)
    umax = 0.0
    for k in range(nv):
        umax = max(umax, abs(uf[k]))
    G = pn.shape[0]
    reach = np.empty(G)
    for g in range(G):
        reach[g] = max(rmin[g], rbase[g] + 2.0 * dt * (umax + vw[g]))
    pl = plane_rows(frames, pts, p0, pallow, pn, pd, reach, vbody, pmat, perp, pslop, uf, u, parent, ds0, nd, S, dt)
    sp = pair_rows(np.bool_(True), self_allowed, frames, pts, p0, st, ss, so, s0, bc, br, uf, u, parent, ds0, nd, S,
                   frames, pts, p0, st, ss, so, s0, bc, br, uf, u, parent, ds0, nd, S,
                   self_mat[0], self_mat[1], self_mat[2], erp, slop, margin, dt)
    nl, npl, nsp = dof.shape[0], pl[0].shape[0], sp[0].shape[0]
    R = nl + npl + nsp
    C = npl + nsp
    nv1 = max(nv, 1)
    ja = np.zeros((R, 3, nv1))
    fixed = np.zeros((R, 3))
    target = np.zeros(R)
    push = np.zeros(R)
    friction = np.zeros(R)
    nax = np.full(R, 3, np.int64)
    for r in range(nl):
        ja[r, 0, dof[r]] = sign[r]
        target[r] = ltarget[r]
        nax[r] = 1
    for c in range(npl):
        r = nl + c
        _copy_rows(ja, r, pl[8], c)
        g = pl[1][c]
        basis = tangents(pl[3][c])
        for ax in range(3):
            fixed[r, ax] = basis[ax, 0] * vbody[g, 0] + basis[ax, 1] * vbody[g, 1] + basis[ax, 2] * vbody[g, 2]
        target[r], push[r], friction[r] = pl[5][c], pl[6][c], pmat[g, 0]
    for c in range(nsp):
        r = nl + npl + c
        _copy_rows(ja, r, sp[8], c)
        target[r], push[r], friction[r] = sp[5][c], sp[6][c], self_mat[0]
    off = np.zeros(2, np.int64)
    off[1] = nv
    free = np.zeros((1, nv1), np.bool_)
    ch = np.zeros((1, nv1, nv1))
    for k in range(nv):
        free[0, k] = not locked[k]
        for j in range(nv):
            ch[0, k, j] = chol[k, j]
    if R > 0:
        vel_new, pvel, lam = solve_rows(uf, off, ch, free, np.zeros(R, np.int64), np.full(R, -1, np.int64), nax,
                                        ja, ja, fixed, target, push, friction, iterations)
    else:
        vel_new, pvel, lam = uf.copy(), np.zeros(nv), np.zeros((0, 3))
    u_new = vel_new[:nv].copy()
    pvel = pvel[:nv].copy()
    q_new = integrate(q, u_new, pvel, dt, kind, gs0, ds0, nd, lim_g, lim_d, lower, upper) if nv else q.copy()
    frames2, S2, vel2, com2, inertia2 = kinematics(q_new, u_new, parent, kind, gs0, ds0, nd, origin, axis, offset,
                                                   pu, pv, mass, com_local, inertia_local)
    ckind = np.empty(C, np.int64)
    ca = np.empty(C, np.int64)
    cb = np.empty(C, np.int64)
    cpoint = np.empty((C, 3))
    cnormal = np.empty((C, 3))
    cdepth = np.empty(C)
    ctarget = np.empty(C)
    cpush = np.empty(C)
    cspeed = np.empty(C)
    cfric = np.empty(C)
    crows = np.empty((C, 3, nv))
    for c in range(npl):
        ckind[c], ca[c], cb[c] = 0, pl[0][c], pl[1][c]
        cdepth[c] = pl[4][c]
        ctarget[c], cpush[c], cspeed[c], cfric[c] = pl[5][c], pl[6][c], pl[7][c], pmat[pl[1][c], 0]
        for r in range(3):
            cpoint[c, r], cnormal[c, r] = pl[2][c, r], pl[3][c, r]
        _copy_rows(crows, c, pl[8], c)
    for x in range(nsp):
        c = npl + x
        ckind[c], ca[c], cb[c] = 1, sp[0][x], sp[1][x]
        cdepth[c] = sp[4][x]
        ctarget[c], cpush[c], cspeed[c], cfric[c] = sp[5][x], sp[6][x], sp[7][x], self_mat[0]
        for r in range(3):
            cpoint[c, r], cnormal[c, r] = sp[2][x, r], sp[3][x, r]
        _copy_rows(crows, c, sp[8], x)
    return (True, q_new, u_new, pdt, frames2, S2, vel2, com2, inertia2,
            (ckind, ca, cb, cpoint, cnormal, cdepth, ctarget, cpush, cspeed, cfric, lam[nl:].copy(), crows))


@njit(cache=True)
def _copy_rows(dst, r, src, c):
    """dst[r, :, :nv] = src[c] (nv: src's row length)."""
    for a in range(3):
        for k in range(src.shape[2]):
            dst[r, a, k] = src[c, a, k]


@njit(cache=True)
def _no_contacts(nv):
    z = np.zeros(0)
    zi = np.zeros(0, np.int64)
    z3 = np.zeros((0, 3))
    return zi, zi, zi, z3, z3, z, z, z, z, z, z3, np.zeros((0, 3, nv))
