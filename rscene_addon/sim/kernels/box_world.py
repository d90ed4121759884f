"""A whole rigid-body step in one compiled call, for worlds of one-geom boxes on planes (the common pile):
the numba backend's ``World.step`` from the forces to sleeping (body frames, contacts, waking, rows, warm
start, both solves, impulse cache, contact-begin pairs, integration, islands), calling the same kernels in
the same order, so it gives the same numbers without a Python round trip between them.

Its parts (``begin``, ``candidates``, ``contact_geoms``, ``wake``, ``finish``) are shared with
``shape_world.step``, the same step for worlds with other shapes; only the narrowphase differs
(``contacts.box_contacts`` here), so a box world never compiles the other shapes' kernels.

Constants passed to other kernels are typed (``np.bool_(True)``, not ``True``): numba compiles a callee
once more for every literal argument it is called with.

``World`` keeps what needs Python objects: kinematic targets, event dicts, the contact dict, particles.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .body import body_frames, sleep
from .bounds import aabbs
from .contacts import box_contacts
from .events import touch_events
from .order import argsort
from .pairs import candidate_pairs
from .pgs import solve, warm_start
from .rows import contact_rows
from .step import integrate, warm

ERP_MAX = 0.8  # as World._rows: erp above is capped
SLOP = 1e-4  # m of penetration left to the position pass


@njit(cache=True)
def _speeds(lin, ang, radius, awake, kinematic):
    """Which bodies move (awake, or kinematic with a velocity) and their bound speed |v| + |w| r."""
    N = lin.shape[0]
    moving = np.empty(N, np.bool_)
    speed = np.zeros(N)
    for i in range(N):
        kin_moving = (abs(lin[i, 0]) + abs(lin[i, 1]) + abs(lin[i, 2])
                      + abs(ang[i, 0]) + abs(ang[i, 1]) + abs(ang[i, 2])) > 0
        moving[i] = awake[i] or (kinematic[i] and kin_moving)
        if moving[i]:
            speed[i] = (np.sqrt(lin[i, 0] * lin[i, 0] + lin[i, 1] * lin[i, 1] + lin[i, 2] * lin[i, 2])
                        + np.sqrt(ang[i, 0] * ang[i, 0] + ang[i, 1] * ang[i, 1] + ang[i, 2] * ang[i, 2]) * radius[i])
    return moving, speed


@njit(cache=True)
def candidates(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody, gtype, gsize, glocal, is_plane,
               plane_z, ggroup, gmask, margin0, dt, fixed, fixed_lo, fixed_hi):
    """``World._detect`` up to the narrowphase: candidate pairs (P, 2) and their margins (P,)."""
    moving, speed = _speeds(lin, ang, radius, awake, kinematic)
    G = gbody.shape[0]
    pad = np.empty(G)
    g_moving = np.empty(G, np.bool_)
    g_dynamic = np.empty(G, np.bool_)
    for g in range(G):
        b = gbody[g]
        pad[g] = 0.5 * margin0 + speed[b] * dt
        g_moving[g] = moving[b]
        g_dynamic[g] = dynamic[b]
    lo, hi = aabbs(gtype, gsize, glocal, g_pos, g_rot, pad)
    for g in range(G):  # height fields: their stored bounds
        if fixed[g]:
            for x in range(3):
                lo[g, x] = fixed_lo[g, x]
                hi[g, x] = fixed_hi[g, x]
    pairs = candidate_pairs(lo, hi, is_plane, plane_z, gbody, g_moving, g_dynamic, ggroup, gmask)
    P = pairs.shape[0]
    margins = np.empty(P)
    for p in range(P):
        margins[p] = margin0 + (speed[gbody[pairs[p, 0]]] + speed[gbody[pairs[p, 1]]]) * dt
    return pairs, margins


@njit(cache=True)
def _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody, gtype, gsize, glocal, is_plane,
            plane_z, ggroup, gmask, margin0, max_pts, dt, fixed, fixed_lo, fixed_hi):
    """``World._detect`` for boxes on planes: (pairs (P, 2), pair index, point, normal, separation)."""
    pairs, margins = candidates(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody, gtype, gsize,
                                glocal, is_plane, plane_z, ggroup, gmask, margin0, dt, fixed, fixed_lo, fixed_hi)
    pidx, point, normal, sep = box_contacts(pairs, gtype, g_pos, g_rot, gsize, margins, max_pts)
    return pairs, pidx, point, normal, sep


@njit(cache=True)
def contact_geoms(pairs, pidx, gbody):
    """Each contact's geoms and bodies."""
    C = pidx.shape[0]
    ga = np.empty(C, np.int64)
    gb = np.empty(C, np.int64)
    A = np.empty(C, np.int64)
    B = np.empty(C, np.int64)
    for c in range(C):
        ga[c] = pairs[pidx[c], 0]
        gb[c] = pairs[pidx[c], 1]
        A[c] = gbody[ga[c]]
        B[c] = gbody[gb[c]]
    return ga, gb, A, B


@njit(cache=True)
def _take(a, order):
    out = np.empty_like(a)
    for i in range(order.shape[0]):
        out[i] = a[order[i]]
    return out


@njit(cache=True)
def _take_rows(a, order):
    out = np.empty_like(a)
    for i in range(order.shape[0]):
        for x in range(a.shape[1]):
            out[i, x] = a[order[i], x]
    return out


@njit(cache=True)
def _wake_touched(A, B, lin, awake, kinematic, sleeping, quiet, island):
    """``World._wake_touched``: sleeping bodies touched by moving ones wake with their islands."""
    N = lin.shape[0]
    any_asleep = False
    for i in range(N):
        if sleeping[i]:
            any_asleep = True
            break
    if not any_asleep:
        return False
    hit = np.zeros(N, np.bool_)
    woke = False
    for c in range(A.shape[0]):
        a, b = A[c], B[c]
        ma = awake[a] or (kinematic[a] and (abs(lin[a, 0]) + abs(lin[a, 1]) + abs(lin[a, 2])) > 0)
        mb = awake[b] or (kinematic[b] and (abs(lin[b, 0]) + abs(lin[b, 1]) + abs(lin[b, 2])) > 0)
        if (sleeping[a] and mb) or (sleeping[b] and ma):
            hit[a] = True
            hit[b] = True
            woke = True
    if not woke:
        return False
    for i in range(N):  # in body order, as np.unique gives them
        if hit[i] and sleeping[i]:
            isl = island[i]
            for j in range(N):
                if (island[j] == isl) if isl >= 0 else (j == i):
                    sleeping[j] = False
                    quiet[j] = 0
    return True


@njit(cache=True)
def begin(pos, quat, lin, ang, sleeping, ext_f, ext_t, dynamic, inv_mass, inv_I_body, gravity, gbody, at_body,
          geom_pos, geom_rot, dt):
    """A step's start: velocities before forces V0 (N, 6), awake bodies, body frames R and world inverse
    inertias (the forces applied, then cleared) and the geoms' world poses."""
    N = pos.shape[0]
    G = gbody.shape[0]
    V0 = np.empty((N, 6))
    awake = np.empty(N, np.bool_)
    for i in range(N):
        for c in range(3):
            V0[i, c] = lin[i, c]
            V0[i, 3 + c] = ang[i, c]
        awake[i] = dynamic[i] and not sleeping[i]
    R, Iw = body_frames(quat, inv_I_body, awake, gravity, inv_mass, ext_f, ext_t, lin, ang, dt)
    ext_f[:] = 0.0
    ext_t[:] = 0.0
    g_pos = np.empty((G, 3))
    g_rot = np.empty((G, 3, 3))
    for g in range(G):
        b = gbody[g]
        if at_body:  # every geom at its body's centre of mass, unrotated
            for x in range(3):
                g_pos[g, x] = pos[b, x]
                for y in range(3):
                    g_rot[g, x, y] = R[b, x, y]
        else:  # x_b + R_b p_g, R_b R_g
            for x in range(3):
                g_pos[g, x] = pos[b, x] + R[b, x, 0] * geom_pos[g, 0] + R[b, x, 1] * geom_pos[g, 1] \
                    + R[b, x, 2] * geom_pos[g, 2]
                for y in range(3):
                    g_rot[g, x, y] = R[b, x, 0] * geom_rot[g, 0, y] + R[b, x, 1] * geom_rot[g, 1, y] \
                        + R[b, x, 2] * geom_rot[g, 2, y]
    return V0, awake, R, Iw, g_pos, g_rot


@njit(cache=True)
def wake(A, B, lin, awake, dynamic, kinematic, sleeping, quiet, island, gravity, dt):
    """Sleeping bodies touched by moving ones wake (with this step's gravity, as the others got);
    True when any did, and the contacts are detected again."""
    if A.shape[0] == 0 or not _wake_touched(A, B, lin, awake, kinematic, sleeping, quiet, island):
        return False
    for i in range(lin.shape[0]):
        if dynamic[i] and not sleeping[i] and not awake[i]:  # woken: this step's forces, as the others
            for c in range(3):
                lin[i, c] += gravity[c] * dt
        awake[i] = dynamic[i] and not sleeping[i]
    return True


@njit(cache=True)
def finish(pos, quat, lin, ang, sleeping, quiet, island, dynamic, kinematic, inv_mass, radius, gmaterial,
           material_table, cache_key, cache_local, cache_impulse, touching, V0, awake, R, Iw, ga, gb, A, B, point,
           normal, sep, dt, vel_iterations, pos_iterations, tolerance, forward, erp, sleeping_enabled, sleep_lin,
           sleep_ang, sleep_steps, warm_match):
    """A step after its contacts: rows, warm start, both solves, impulse cache, contact-begin pairs,
    integration, sleeping (``step``'s return value)."""
    N = pos.shape[0]
    G = gmaterial.shape[0]
    C = ga.shape[0]
    # constraint rows (World._rows with the compiled rows; no wires here)
    inv_m = np.empty(N)
    inv_I = np.zeros((N, 3, 3))
    V = np.empty((N, 6))
    for i in range(N):
        inv_m[i] = inv_mass[i] if awake[i] else 0.0
        if awake[i]:
            for x in range(3):
                for y in range(3):
                    inv_I[i, x, y] = Iw[i, x, y]
        for c in range(3):
            V[i, c] = lin[i, c]
            V[i, 3 + c] = ang[i, c]
    P = material_table.shape[2]
    props = np.empty((C, P))
    key = np.empty(C, np.int64)
    for c in range(C):
        for x in range(P):
            props[c, x] = material_table[gmaterial[ga[c]], gmaterial[gb[c]], x]
        key[c] = ga[c] * G + gb[c]
    J, MJ, k, target, mu, vn0, t1, t2, local = contact_rows(A, B, point, normal, sep, pos, R, V, V0, inv_m, inv_I,
                                                            props, dt)
    if cache_key.shape[0]:
        lam = warm(cache_key, cache_local, cache_impulse, key, local, normal, t1, t2, warm_match)
    else:
        lam = np.zeros((C, 3))
    kinv = np.empty((C, 3))
    for c in range(C):
        for r in range(3):
            kinv[c, r] = 1.0 / k[c, r] if k[c, r] > 0 else 0.0
    zero = np.zeros(C)
    sweeps = 0
    if C:
        warm_start(V, A, B, MJ, lam)
        sweeps = solve(V, A, B, J, MJ, kinv, k, target, zero, mu, lam, vel_iterations, tolerance, forward,
                       np.bool_(True), radius)
    # position correction rows (split impulse) for penetrating contacts
    Vp = np.zeros((N, 6))
    e = min(max(erp, 0.0), ERP_MAX)
    ids = np.empty(C, np.int64)
    n_pos = 0
    if e > 0:
        for c in range(C):
            if sep[c] < -SLOP:
                ids[n_pos] = c
                n_pos += 1
    if n_pos:
        pa = np.empty(n_pos, np.int64)
        pb = np.empty(n_pos, np.int64)
        pJ = np.empty((n_pos, 1, 12))
        pMJ = np.empty((n_pos, 1, 12))
        kn = np.empty((n_pos, 1))
        kninv = np.empty((n_pos, 1))
        p_target = np.empty(n_pos)
        for j in range(n_pos):
            c = ids[j]
            pa[j], pb[j] = A[c], B[c]
            for x in range(12):
                pJ[j, 0, x] = J[c, 0, x]
                pMJ[j, 0, x] = MJ[c, 0, x]
            kn[j, 0] = k[c, 0]
            kninv[j, 0] = 1.0 / kn[j, 0] if kn[j, 0] > 0 else 0.0
            p_target[j] = e * (-sep[c] - SLOP) / dt
        pz = np.zeros(n_pos)
        solve(Vp, pa, pb, pJ, pMJ, kninv, kn, p_target, pz, pz, np.zeros((n_pos, 1)), pos_iterations, tolerance,
              forward, np.bool_(False), radius)
    # impulses for warm starting (keyed by geom pair, sorted) and contact-begin pairs
    impulse = np.empty((C, 3))
    for c in range(C):
        for x in range(3):
            impulse[c, x] = lam[c, 0] * normal[c, x] + lam[c, 1] * t1[c, x] + lam[c, 2] * t2[c, x]
    ordered = True
    for c in range(1, C):
        if key[c] < key[c - 1]:
            ordered = False
            break
    if not ordered:
        o = argsort(key)
        key, local, impulse = _take(key, o), _take_rows(local, o), _take_rows(impulse, o)
    lam0 = np.empty(C)
    for c in range(C):
        lam0[c] = lam[c, 0]
    touching, events = touch_events(touching, sleeping, A, B, lam0, vn0, N)
    # integrate, then islands that stayed quiet fall asleep
    move = np.empty(N, np.bool_)
    for i in range(N):
        move[i] = awake[i] or kinematic[i]
    integrate(pos, quat, lin, ang, V, Vp, move, dt)
    if sleeping_enabled:
        sleep(lin, ang, awake, kinematic, quiet, sleeping, island, A, B, A, B, sleep_lin, sleep_ang, sleep_steps)
    return (sweeps, A, B, ga, gb, point, normal, sep, vn0, lam, key, local, impulse, touching, events)


@njit(cache=True)
def step(pos, quat, lin, ang, sleeping, quiet, island, ext_f, ext_t,
         dynamic, kinematic, inv_mass, inv_I_body, radius, gravity,
         gbody, gtype, gsize, glocal, gmaterial, ggroup, gmask, is_plane, plane_z, material_table,
         cache_key, cache_local, cache_impulse, touching, at_body, geom_pos, geom_rot, fixed, fixed_lo, fixed_hi,
         polys, hfs, big, dt, margin0, max_pts, vel_iterations, pos_iterations, tolerance, forward, erp,
         sleeping_enabled, sleep_lin, sleep_ang, sleep_steps, warm_match):
    """One step of boxes on planes; the state arrays (pos ... island) change in place and the forces are
    cleared. Returns (sweeps, contacts as (A, B, ga, gb, point, normal, sep, vn0, lam (C, 3)), the impulse
    cache (key, local, impulse), touching pairs, event contacts). ``polys, hfs, big`` are unused (the
    signature of ``shape_world.step``)."""
    V0, awake, R, Iw, g_pos, g_rot = begin(pos, quat, lin, ang, sleeping, ext_f, ext_t, dynamic, inv_mass,
                                           inv_I_body, gravity, gbody, at_body, geom_pos, geom_rot, dt)
    pairs, pidx, point, normal, sep = _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot, gbody,
                                              gtype, gsize, glocal, is_plane, plane_z, ggroup, gmask, margin0,
                                              max_pts, dt, fixed, fixed_lo, fixed_hi)
    ga, gb, A, B = contact_geoms(pairs, pidx, gbody)
    if wake(A, B, lin, awake, dynamic, kinematic, sleeping, quiet, island, gravity, dt):
        pairs, pidx, point, normal, sep = _detect(lin, ang, radius, awake, dynamic, kinematic, g_pos, g_rot,
                                                  gbody, gtype, gsize, glocal, is_plane, plane_z, ggroup, gmask,
                                                  margin0, max_pts, dt, fixed, fixed_lo, fixed_hi)
        ga, gb, A, B = contact_geoms(pairs, pidx, gbody)
    return finish(pos, quat, lin, ang, sleeping, quiet, island, dynamic, kinematic, inv_mass, radius, gmaterial,
                  material_table, cache_key, cache_local, cache_impulse, touching, V0, awake, R, Iw, ga, gb, A, B,
                  point, normal, sep, dt, vel_iterations, pos_iterations, tolerance, forward, erp, sleeping_enabled,
                  sleep_lin, sleep_ang, sleep_steps, warm_match)
