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
from .robot_contacts import pair_rows, plane_rows, tangents_into
from .robot_solve import solve_rows


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def system_step(q, u, q_target, u_target, kp, kd, damp, tau_ext, locked, limit, armature, gravity, lower, upper,
                lim_g, lim_d, parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local,
                inertia_local, frames, S, vel, inertia, pts, p0, st, ss, so, s0, bc, br, self_allowed, self_mat,
                pallow, pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw, erp, slop, margin, dt, iterations, warm,
                tolerance):
    """One step; returns (ok, q, u, PD torque, frames, S, vel, com, inertia, contacts) with the contacts
    flat: C rows of CONTACT values (kind: 0 plane, 1 self; a: link; b: plane or other link; point;
    normal; depth; target; push; speed; friction; impulse (3)), then their rows (C x 3 x nv). ``warm``
    (C', CONTACT): the system's last contacts (their kind, a, b and impulse start the solve: ``warm_start``).
    ok False: a mass matrix was not positive definite (nothing moved, no contacts; the caller takes the
    numpy route). ``_system_step`` on the arguments flat (timing scripts; ``step_alone`` calls
    ``_system_step`` itself)."""
    return _system_step(q, u, (q_target, u_target, kp, kd, damp, tau_ext, locked, limit, armature, gravity, lower,
                               upper, lim_g, lim_d),
                        (parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local, inertia_local),
                        (frames, S, vel, inertia), (pts, p0, st, ss, so, s0, bc, br, self_allowed, self_mat),
                        (pallow, pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw), erp, slop, margin, dt,
                        iterations, warm, tolerance)


@njit(cache=True, inline="always")
def _system_step(q, u, controls, model, state, shapes, planes, erp, slop, margin, dt, iterations, warm, tolerance):
    """``system_step`` with its arguments in groups (flattened, ``system_step``'s order): inlined into
    ``step_alone`` (numba inlines no call of more than 30 arguments: CPython passes those as ``*args``), so
    the step's call tree is optimized and compiled once, inside ``step_alone``, not again in a library of
    its own."""
    q_target, u_target, kp, kd, damp, tau_ext, locked, limit, armature, gravity, lower, upper, lim_g, lim_d = controls
    parent, kind, gs0, ds0, nd, origin, axis, offset, pu, pv, mass, com_local, inertia_local = model
    frames, S, vel, inertia = state
    pts, p0, st, ss, so, s0, bc, br, self_allowed, self_mat = shapes
    pallow, pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw = planes
    nv = u.shape[0]
    m = mass_matrix(parent, ds0, nd, S, inertia, armature)
    h = bias_forces(u, parent, kind, ds0, nd, S, vel, inertia, gravity)
    pd_on = False
    for k in range(nv):
        pd_on = pd_on or kp[k] != 0
    e = position_error(q, q_target, kind, gs0, ds0, nd, nv) if pd_on else np.zeros(nv)
    uf, pdt, chol, ok = predict(m, h, e, u, kp, kd, damp, u_target, tau_ext, locked, limit, dt)
    if not ok:
        return False, q, u, pdt, frames, S, vel, np.zeros((frames.shape[0], 3)), inertia, np.empty(0)
    dof, sign, ltarget = limit_rows(q, uf, lim_g, lim_d, lower, upper, locked, dt)
    umax = 0.0
    for k in range(nv):
        umax = max(umax, abs(uf[k]))
    G = pn.shape[0]
    reach = np.empty(G)
    for g in range(G):
        reach[g] = max(rmin[g], rbase[g] + 2.0 * dt * (umax + vw[g]))
    # each result unpacked once: an item of a returned tuple read in a loop costs its reference counting
    # there, in lowering (compile) and at run time
    pl_link, pl_plane, pl_point, pl_normal, pl_depth, pl_tgt, pl_push, pl_speed, pl_rows = plane_rows(
        frames, pts, p0, pallow, pn, pd, reach, vbody, pmat, perp, pslop, uf, u, parent, ds0, nd, S, dt)
    sp_a, sp_b, sp_point, sp_normal, sp_depth, sp_tgt, sp_push, sp_speed, sp_rows, _ = pair_rows(
        np.bool_(True), self_allowed, frames, pts, p0, st, ss, so, s0, bc, br, uf, u, parent, ds0, nd, S,
        frames, pts, p0, st, ss, so, s0, bc, br, uf, u, parent, ds0, nd, S,
        self_mat[0], self_mat[1], self_mat[2], erp, slop, margin, dt)
    nl, npl, nsp = dof.shape[0], pl_link.shape[0], sp_a.shape[0]
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
    basis = np.empty((3, 3))
    for c in range(npl):
        r = nl + c
        _copy_rows(ja, r, pl_rows, c)
        g = pl_plane[c]
        tangents_into(basis, pl_normal[c])
        for ax in range(3):
            fixed[r, ax] = basis[ax, 0] * vbody[g, 0] + basis[ax, 1] * vbody[g, 1] + basis[ax, 2] * vbody[g, 2]
        target[r], push[r], friction[r] = pl_tgt[c], pl_push[c], pmat[g, 0]
    for c in range(nsp):
        r = nl + npl + c
        _copy_rows(ja, r, sp_rows, c)
        target[r], push[r], friction[r] = sp_tgt[c], sp_push[c], self_mat[0]
    off = np.zeros(2, np.int64)
    off[1] = nv
    free = np.zeros((1, nv1), np.bool_)
    for k in range(nv):
        free[0, k] = not locked[k]
    ch = chol.reshape((1, nv, nv)) if nv else np.zeros((1, 1, 1))  # the factor itself (not read again here)
    if R > 0:
        lam0 = warm_start(warm, nl, pl_link, pl_plane, sp_a, sp_b)
        vel_new, pvel, lam, _ = solve_rows(uf, off, ch, free, np.zeros(R, np.int64), np.full(R, -1, np.int64),
                                           nax, ja, ja, fixed, target, push, friction, iterations, lam0, tolerance)
    else:
        vel_new, pvel, lam = uf.copy(), np.zeros(nv), np.zeros((0, 3))
    u_new = vel_new[:nv].copy()
    pvel = pvel[:nv].copy()
    q_new = integrate(q, u_new, pvel, dt, kind, gs0, ds0, nd, lim_g, lim_d, lower, upper) if nv else q.copy()
    frames2, S2, vel2, com2, inertia2 = kinematics(q_new, u_new, parent, kind, gs0, ds0, nd, origin, axis, offset,
                                                   pu, pv, mass, com_local, inertia_local)
    # the contacts, flat: C rows of CONTACT values (plane contacts, then self contacts), then their rows
    blob = np.empty(C * CONTACT + C * 3 * nv)
    for c in range(C):
        at = c * CONTACT
        if c < npl:
            x, g = c, pl_plane[c]
            blob[at], blob[at + 1], blob[at + 2] = 0.0, pl_link[x], g
            blob[at + 9], blob[at + 10], blob[at + 11] = pl_depth[x], pl_tgt[x], pl_push[x]
            blob[at + 12], blob[at + 13] = pl_speed[x], pmat[g, 0]
            for i in range(3):
                blob[at + 3 + i], blob[at + 6 + i] = pl_point[x, i], pl_normal[x, i]
        else:
            x = c - npl
            blob[at], blob[at + 1], blob[at + 2] = 1.0, sp_a[x], sp_b[x]
            blob[at + 9], blob[at + 10], blob[at + 11] = sp_depth[x], sp_tgt[x], sp_push[x]
            blob[at + 12], blob[at + 13] = sp_speed[x], self_mat[0]
            for i in range(3):
                blob[at + 3 + i], blob[at + 6 + i] = sp_point[x, i], sp_normal[x, i]
        for i in range(3):
            blob[at + 14 + i] = lam[nl + c, i]
    at = C * CONTACT
    for c in range(npl):
        for a in range(3):
            for k in range(nv):
                blob[at] = pl_rows[c, a, k]
                at += 1
    for x in range(nsp):
        for a in range(3):
            for k in range(nv):
                blob[at] = sp_rows[x, a, k]
                at += 1
    return True, q_new, u_new, pdt, frames2, S2, vel2, com2, inertia2, blob


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
def warm_start(warm, nl, pa, pb, sa, sb):
    """(nl + C, 3): the solve's first impulses: 0 for the nl joint limits, then per contact (plane contacts
    (link ``pa``, plane ``pb``), then self contacts (``sa``, ``sb``)) the impulse of the same contact in
    ``warm`` (the last step's contacts (C', CONTACT)): the n-th contact of a (kind, link, other) is the n-th
    of the last step's (``multibody_solver.warm_impulses``, by names, on the numpy route)."""
    npl, nsp = pa.shape[0], sa.shape[0]
    lam = np.zeros((nl + npl + nsp, 3))
    W = warm.shape[0]
    if W == 0:
        return lam
    used = np.zeros(W, np.bool_)
    for c in range(npl + nsp):
        kind = 0 if c < npl else 1
        a = pa[c] if c < npl else sa[c - npl]
        b = pb[c] if c < npl else sb[c - npl]
        for w in range(W):
            if not used[w] and warm[w, 0] == kind and warm[w, 1] == a and warm[w, 2] == b:
                used[w] = True
                for i in range(3):
                    lam[nl + c, i] = warm[w, 14 + i]
                break
    return lam


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
def _copy_rows(dst, r, src, c):
    """dst[r, :, :nv] = src[c] (nv: src's row length)."""
    for a in range(3):
        for k in range(src.shape[2]):
            dst[r, a, k] = src[c, a, k]


# Columns of ``step_alone``'s layout table (one row per system): sizes, then offsets into its buffers.
L_, NQ, NV, NP, NS, NLIM, NG, ITER, EFFORT = 0, 1, 2, 3, 4, 5, 6, 7, 8  # sizes, iterations, limit flag
# model floats ``mf``
M_ORIGIN, M_AXIS, M_OFFSET, M_PU, M_PV, M_MASS, M_COM, M_INERTIA, M_PTS, M_SS, M_SO, M_BC, M_BR = range(9, 22)
# model ints ``mi``
I_PARENT, I_KIND, I_GS0, I_DS0, I_ND, I_P0, I_ST, I_S0, I_LG, I_LD = range(22, 32)
# controls ``cf`` (floats) and ``cb`` (locked)
C_QT, C_UT, C_KP, C_KD, C_DAMP, C_TAU, C_EFFORT, C_ARM, C_GRAV, C_LO, C_HI, C_SCAL, C_LOCKED = range(32, 45)
# state (``sin`` read, ``out`` written, the same layout)
S_Q, S_U, S_PD, S_FRAMES, S_S, S_VEL, S_COM, S_INERTIA = range(45, 53)
# planes ``pf`` (15 G, column by column: normal (G, 3), offset, body velocity (G, 3), material (G, 3), erp, slop,
# rmin, rbase, vw; then the self material, 3) and ``pb`` (pallow L x G, then the self pairs L x L)
P_F, P_ALLOW, P_SELF = 53, 54, 55
COLUMNS = 56
CONTACT = 17  # a contact row of ``step_alone``: kind, a, b, point, normal, depth, target, push, speed, friction, lam


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def step_alone(lay, mf, mi, cf, cb, sin, pf, pb, scal, warm, wrange):
    """``system_step`` for K systems alone on planes in one call, on packed buffers (``robot_pack``):
    row k of ``lay`` (K, COLUMNS) gives system k's sizes and where its arrays start in the model, control,
    state and plane buffers; ``scal`` = (margin, dt, touch impulse, solve tolerance); ``warm`` (flat, rows of
    CONTACT): the last step's contacts, system k's ``warm[wrange[k, 0]:wrange[k, 1]]`` (rows; its solve starts
    from their impulses). Reads the state from ``sin`` and writes
    the next one into a new buffer (``sin`` is left as it was: the arrays handed out for the last step keep
    their values). Two arrays come back (each returned array costs microseconds to hand to Python):

    out: float, the new state (the layout of ``sin``), then the contacts (C, CONTACT), then the rows (flat:
    C_k x 3 x nv_k per system). meta: int, ok (K: 0 or 1), then starts (3, K + 1): per system its first
    contact, first touch code and first row value, then (K, 2) per system its first contact and the end (the
    next step's ``wrange``), then the touch codes (sorted per system: kind << 42 | other << 21 | link of the
    contacts whose normal impulse exceeds the touch impulse).
    ok 0: that system's mass matrix was not positive definite; its state in ``out`` is a copy of ``sin``
    and it has no contacts (the caller takes another route for it)."""
    K = lay.shape[0]
    margin, dt, touch_impulse, tolerance = scal[0], scal[1], scal[2], scal[3]
    warm2 = warm.reshape((warm.shape[0] // CONTACT, CONTACT))
    n = sin.shape[0]
    # each system's result is written out as soon as it is computed: its state into ``st``, its contacts and
    # rows into one flat ``blob`` (a list of tuples of arrays compiled to ~20k lines of reference counting)
    st = np.empty(n)
    ok = np.zeros(K, np.bool_)
    starts = np.zeros((3, K + 1), np.int64)
    blobs = []
    for k in range(K):
        r = lay[k]
        L, nq, nv, P, NSH, nlim, G = r[L_], r[NQ], r[NV], r[NP], r[NS], r[NLIM], r[NG]
        q = sin[r[S_Q]:r[S_Q] + nq]
        u = sin[r[S_U]:r[S_U] + nv]
        frames = sin[r[S_FRAMES]:r[S_FRAMES] + 16 * L].reshape((L, 4, 4))
        S = sin[r[S_S]:r[S_S] + 36 * L].reshape((L, 6, 6))
        vel = sin[r[S_VEL]:r[S_VEL] + 6 * L].reshape((L, 6))
        inertia = sin[r[S_INERTIA]:r[S_INERTIA] + 36 * L].reshape((L, 6, 6))
        effort = cf[r[C_EFFORT]:r[C_EFFORT] + nv]
        limit = effort if r[EFFORT] else np.full(nv, np.inf)
        sc = cf[r[C_SCAL]:r[C_SCAL] + 2]
        res = _system_step(
            q, u, (cf[r[C_QT]:r[C_QT] + nq], cf[r[C_UT]:r[C_UT] + nv], cf[r[C_KP]:r[C_KP] + nv],
                   cf[r[C_KD]:r[C_KD] + nv], cf[r[C_DAMP]:r[C_DAMP] + nv], cf[r[C_TAU]:r[C_TAU] + nv],
                   cb[r[C_LOCKED]:r[C_LOCKED] + nv], limit, cf[r[C_ARM]:r[C_ARM] + nv], cf[r[C_GRAV]:r[C_GRAV] + 3],
                   cf[r[C_LO]:r[C_LO] + nq], cf[r[C_HI]:r[C_HI] + nq], mi[r[I_LG]:r[I_LG] + nlim],
                   mi[r[I_LD]:r[I_LD] + nlim]),
            (mi[r[I_PARENT]:r[I_PARENT] + L], mi[r[I_KIND]:r[I_KIND] + L],
             mi[r[I_GS0]:r[I_GS0] + L], mi[r[I_DS0]:r[I_DS0] + L], mi[r[I_ND]:r[I_ND] + L],
             mf[r[M_ORIGIN]:r[M_ORIGIN] + 16 * L].reshape((L, 4, 4)), mf[r[M_AXIS]:r[M_AXIS] + 3 * L].reshape((L, 3)),
             mf[r[M_OFFSET]:r[M_OFFSET] + 16 * L].reshape((L, 4, 4)), mf[r[M_PU]:r[M_PU] + 3 * L].reshape((L, 3)),
             mf[r[M_PV]:r[M_PV] + 3 * L].reshape((L, 3)), mf[r[M_MASS]:r[M_MASS] + L],
             mf[r[M_COM]:r[M_COM] + 3 * L].reshape((L, 3)), mf[r[M_INERTIA]:r[M_INERTIA] + 9 * L].reshape((L, 3, 3))),
            (frames, S, vel, inertia),
            (mf[r[M_PTS]:r[M_PTS] + 4 * P].reshape((P, 4)), mi[r[I_P0]:r[I_P0] + L + 1],
             mi[r[I_ST]:r[I_ST] + NSH], mf[r[M_SS]:r[M_SS] + 3 * NSH].reshape((NSH, 3)),
             mf[r[M_SO]:r[M_SO] + 16 * NSH].reshape((NSH, 4, 4)), mi[r[I_S0]:r[I_S0] + L + 1],
             mf[r[M_BC]:r[M_BC] + 3 * L].reshape((L, 3)), mf[r[M_BR]:r[M_BR] + L],
             pb[r[P_SELF]:r[P_SELF] + L * L].reshape((L, L)), pf[r[P_F] + 15 * G:r[P_F] + 15 * G + 3]),
            (pb[r[P_ALLOW]:r[P_ALLOW] + L * G].reshape((L, G)),) + _plane_columns(pf, r[P_F], G),
            sc[0], sc[1], margin, dt, r[ITER], warm2[wrange[k, 0]:wrange[k, 1]], tolerance)
        ok[k] = res[0]
        if res[0]:
            _put(st, r[S_Q], res[1])
            _put(st, r[S_U], res[2])
            _put(st, r[S_PD], res[3])
            _put(st, r[S_FRAMES], res[4].ravel())
            _put(st, r[S_S], res[5].ravel())
            _put(st, r[S_VEL], res[6].ravel())
            _put(st, r[S_COM], res[7].ravel())
            _put(st, r[S_INERTIA], res[8].ravel())
        else:  # its state as it was, field by field (a field holds every system's values, one after another)
            for j in range(8):
                size = nq if j == 0 else (nv if j < 3 else L * (16, 36, 6, 3, 36)[j - 3])
                for x in range(r[S_Q + j], r[S_Q + j] + size):
                    st[x] = sin[x]
        blob = res[9]
        C = blob.shape[0] // (CONTACT + 3 * nv)
        T = 0
        for c in range(C):
            if blob[c * CONTACT + 14] > touch_impulse:
                T += 1
        blobs.append(blob)
        starts[0, k + 1] = starts[0, k] + C
        starts[1, k + 1] = starts[1, k] + T
        starts[2, k + 1] = starts[2, k] + C * 3 * nv
    out = np.empty(n + starts[0, K] * CONTACT + starts[2, K])
    _put(out, 0, st)
    rows0 = n + starts[0, K] * CONTACT
    meta = np.empty(K + 3 * (K + 1) + 2 * K + starts[1, K], np.int64)
    for k in range(K):
        meta[k] = 1 if ok[k] else 0
    for i in range(3):
        for k in range(K + 1):
            meta[K + i * (K + 1) + k] = starts[i, k]
    t = K + 3 * (K + 1)
    for k in range(K):  # the next step's ``wrange``: each system's contacts
        meta[t + 2 * k], meta[t + 2 * k + 1] = starts[0, k], starts[0, k + 1]
    t += 2 * K
    for k in range(K):
        blob = blobs[k]
        C = starts[0, k + 1] - starts[0, k]
        for x in range(C * CONTACT):
            out[n + starts[0, k] * CONTACT + x] = blob[x]
        for x in range(starts[2, k + 1] - starts[2, k]):
            out[rows0 + starts[2, k] + x] = blob[C * CONTACT + x]
        t0 = t
        for c in range(C):
            at = c * CONTACT
            if blob[at + 14] > touch_impulse:
                meta[t] = (np.int64(blob[at]) << 42) | (np.int64(blob[at + 2]) << 21) | np.int64(blob[at + 1])
                t += 1
        _sort_range(meta, t0, t)
    return out, meta


@njit(cache=True, inline="always")
def _sort_range(a, lo, hi):
    """a[lo:hi] sorted in place (insertion sort: a few touch codes per system). ``a[lo:hi] = np.sort(..)``
    compiled numba's quicksort and its slice-assignment error message (str formatting): ~6 s of first
    compile."""
    for i in range(lo + 1, hi):
        x = a[i]
        j = i - 1
        while j >= lo and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit(cache=True, inline="always")
def _plane_columns(pf, at, G):
    """The plane table of G planes at ``pf[at:]`` (column by column, ``pack``) as views: normal (G, 3), offset,
    body velocity (G, 3), material (G, 3), erp, slop, rmin, rbase, vw (G,) (copies of each column of a
    G x 15 table were nine arrays allocated a step)."""
    pn, pd = pf[at:at + 3 * G].reshape((G, 3)), pf[at + 3 * G:at + 4 * G]
    vbody, pmat = pf[at + 4 * G:at + 7 * G].reshape((G, 3)), pf[at + 7 * G:at + 10 * G].reshape((G, 3))
    perp, pslop, rmin = pf[at + 10 * G:at + 11 * G], pf[at + 11 * G:at + 12 * G], pf[at + 12 * G:at + 13 * G]
    return pn, pd, vbody, pmat, perp, pslop, rmin, pf[at + 13 * G:at + 14 * G], pf[at + 14 * G:at + 15 * G]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
def _put(dst, at, src):
    for i in range(src.shape[0]):
        dst[at + i] = src[i]


_OWNER: dict = {}
for _col in range(M_ORIGIN, M_BR + 1):
    _OWNER[_col] = "mf"
for _col in range(I_PARENT, I_LD + 1):
    _OWNER[_col] = "mi"
for _col in range(C_QT, C_SCAL + 1):
    _OWNER[_col] = "cf"
_OWNER[C_LOCKED] = "cb"
for _col in range(S_Q, S_INERTIA + 1):
    _OWNER[_col] = "st"
_OWNER[P_F] = "pf"
_OWNER[P_ALLOW] = _OWNER[P_SELF] = "pb"
_DTYPE = {"mf": np.float64, "mi": np.int64, "cf": np.float64, "cb": np.bool_, "st": np.float64,
          "pf": np.float64, "pb": np.bool_}


def pack(rows):
    """The layout table and buffers of ``step_alone`` (plain Python, run when the systems change).

    ``rows``: per system (sizes: the first EFFORT + 1 columns; {column: array}) with an array for every
    offset column (planes ``P_F``: the plane table column by column, then the self material). Returns (lay (K, COLUMNS),
    {buffer name: flat array}); a column's arrays lie in system order, one after another (the state's
    ``S_FRAMES`` of all systems is one (sum L, 4, 4) block, ``S_VEL`` one (sum L, 6) block)."""
    lay = np.zeros((len(rows), COLUMNS), np.int64)
    parts: dict = {name: [] for name in _DTYPE}
    used = dict.fromkeys(_DTYPE, 0)
    for k, (sizes, _) in enumerate(rows):
        lay[k, :len(sizes)] = sizes
    # column by column, the systems in order within each: all systems' frames (and velocities) lie together
    for col in sorted(_OWNER):
        name = _OWNER[col]
        for k, (_, arrays) in enumerate(rows):
            flat = np.ravel(np.asarray(arrays[col], dtype=_DTYPE[name]))
            lay[k, col] = used[name]
            parts[name].append(flat)
            used[name] += flat.size
    return lay, {n: np.concatenate(p) if p else np.zeros(0, _DTYPE[n]) for n, p in parts.items()}
