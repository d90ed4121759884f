"""All contacts of a step's candidate pairs in one compiled call, for every shape pair the simulator
supports: what ``narrowphase.collide`` gives (the same handlers' rules and points, normals from
pairs[:, 0] to pairs[:, 1], sorted by pair index) without its per-type Python grouping and per-pair loops.

Box-box and box-plane pairs go through ``contacts.box_contacts`` (one batched call; a world of boxes on
planes gives exactly its contacts), every other pair through its kernel in ``primitives``, ``convex`` or
``terrain``; the two sorted runs are merged."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry import BOX, CAPSULE, CONVEX, CYLINDER, HEIGHTFIELD, PLANE, SPHERE
from . import convex, primitives as prim, terrain
from .contacts import box_contacts


@njit(cache=True)
def _one(p, ga, gb, ta, tb, pos, rot, size, margin, max_points, polys, wc, hfs, sc, pl, out_pair, out_pt, out_n,
         out_sep, count):
    """The contacts of pair p, geoms ordered by type (ta <= tb), normals a->b. Constants passed on are
    typed (``np.bool_(True)``): numba compiles a callee once more for every literal it is called with."""
    pts, sep, ok, keep, dmin = pl
    if ta == SPHERE:
        if tb == SPHERE:
            return prim.sphere_sphere(p, ga, gb, pos, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == BOX:
            return prim.sphere_box(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == CAPSULE:
            return prim.sphere_capsule(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == CYLINDER:
            return prim.sphere_cylinder(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == CONVEX:
            return convex.sphere_polytope(p, ga, gb, polys, wc, pos, rot, size, margin, out_pair, out_pt, out_n,
                                          out_sep, count)
        if tb == PLANE:
            return prim.sphere_plane(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == HEIGHTFIELD:
            return terrain.round_heightfield(p, ga, gb, hfs, pos, rot, size, np.bool_(True), margin, max_points, out_pair,
                                             out_pt, out_n, out_sep, count)
        return count
    if ta == CAPSULE:
        if tb == CAPSULE:
            return prim.capsule_capsule(p, ga, gb, pos, rot, size, margin, out_pair, out_pt, out_n, out_sep, count)
        if tb == CYLINDER or tb == CONVEX:
            return convex.capsule_polytope(p, ga, gb, polys, wc, pos, rot, size, margin, np.float64(-1.0), out_pair,
                                           out_pt, out_n, out_sep, count)
        if tb == PLANE:
            return prim.capsule_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep, ok, keep, dmin,
                                      out_pair, out_pt, out_n, out_sep, count)
        if tb == HEIGHTFIELD:
            return terrain.round_heightfield(p, ga, gb, hfs, pos, rot, size, np.bool_(False), margin, max_points, out_pair,
                                             out_pt, out_n, out_sep, count)
        return count
    if ta == BOX and tb == CAPSULE:  # the capsule is b: polytope->capsule is a->b
        return convex.capsule_polytope(p, gb, ga, polys, wc, pos, rot, size, margin, np.float64(1.0), out_pair, out_pt,
                                       out_n, out_sep, count)
    if ta == CYLINDER and tb == PLANE:
        return prim.cylinder_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep, ok, keep, dmin,
                                   out_pair, out_pt, out_n, out_sep, count)
    if ta == CONVEX and tb == PLANE:
        return convex.convex_plane(p, ga, gb, polys, wc, pos, rot, margin, max_points, sc, out_pair, out_pt, out_n,
                                   out_sep, count)
    if tb == HEIGHTFIELD and ta != PLANE:
        return terrain.polytope_heightfield(p, ga, gb, polys, hfs, pos, rot, margin, max_points, sc, out_pair,
                                            out_pt, out_n, out_sep, count)
    if tb == BOX or tb == CYLINDER or tb == CONVEX:  # box, cylinder prism and hull among themselves
        return convex.polytope_pair(p, ga, gb, polys, wc, pos, rot, margin, max_points, sc, out_pair, out_pt, out_n,
                                    out_sep, count)
    return count


@njit(cache=True)
def shape_contacts(pairs, types, pos, rot, size, margins, max_points, polys, hfs, big):
    """(pair index (C,), point (C, 3), normal (C, 3), separation (C,)) of candidate pairs (P, 2) of any
    shapes; ``polys``/``hfs``: ``convex.pack`` / ``terrain.pack``; ``big``: ``convex.largest``."""
    P = pairs.shape[0]
    boxy = np.empty(P, np.int64)
    other = np.empty(P, np.int64)
    nb = 0
    no = 0
    for p in range(P):
        ta, tb = types[pairs[p, 0]], types[pairs[p, 1]]
        if (ta == BOX and (tb == BOX or tb == PLANE)) or (ta == PLANE and tb == BOX):
            boxy[nb] = p
            nb += 1
        else:
            other[no] = p
            no += 1
    if no == 0:  # boxes on planes: exactly box_contacts
        return box_contacts(pairs, types, pos, rot, size, margins, max_points)
    bpairs = np.empty((nb, 2), np.int64)
    bmarg = np.empty(nb)
    for i in range(nb):
        bpairs[i, 0], bpairs[i, 1] = pairs[boxy[i], 0], pairs[boxy[i], 1]
        bmarg[i] = margins[boxy[i]]
    q_pair, q_pt, q_n, q_sep = box_contacts(bpairs, types, pos, rot, size, bmarg, max_points)
    nq = q_pair.shape[0]
    for c in range(nq):
        q_pair[c] = boxy[q_pair[c]]
    per = max(2, max_points)
    r_pair, r_pt, r_n, r_sep = np.empty(no * per, np.int64), np.empty((no * per, 3)), np.empty((no * per, 3)), \
        np.empty(no * per)
    sc = convex.scratch(big)
    wc = convex.posed_cache(polys, types.shape[0])  # each geom's polytope turned into the world once
    pl = (np.empty((8, 3)), np.empty(8), np.empty(8, np.bool_), np.empty(8, np.bool_), np.empty(8))
    slot_of, axes = polys[18], polys[19]
    gv, gf, WV, WN, WO = wc[0], wc[1], wc[4], wc[5], wc[6]
    nr = 0
    for i in range(no):
        p = other[i]
        g0, g1 = pairs[p, 0], pairs[p, 1]
        t0, t1 = types[g0], types[g1]
        swap = t0 > t1
        ga, gb = (g1, g0) if swap else (g0, g1)
        if slot_of[ga] >= 0 and slot_of[gb] >= 0:
            # two polytopes (``convex.polytope_pair``; box-box pairs are not here) whose last separating axis was a face (``convex.polytope_pair``'s cache): that
            # face's test here, on the posed arrays by index, spares most separated pairs the whole call
            code = axes[slot_of[ga], slot_of[gb]]
            kind = code >> 48
            if kind == convex.FACE_A or kind == convex.FACE_B:
                f = (code >> 24) & convex.LOW
                gn, gw = (ga, gb) if kind == convex.FACE_A else (gb, ga)  # the face's polytope, the other one
                convex.posed(polys, wc, pos, rot, gn)
                convex.posed(polys, wc, pos, rot, gw)
                k = gf[gn] + f
                lo = np.inf
                for v in range(gv[gw], gv[gw + 1]):
                    lo = min(lo, WV[v, 0] * WN[k, 0] + WV[v, 1] * WN[k, 1] + WV[v, 2] * WN[k, 2])
                if lo - WO[k] > margins[p]:
                    continue
        start = nr
        nr = _one(p, ga, gb, min(t0, t1), max(t0, t1), pos, rot, size, margins[p], max_points, polys, wc, hfs, sc,
                  pl, r_pair, r_pt, r_n, r_sep, nr)
        if swap:
            for c in range(start, nr):
                for x in range(3):
                    r_n[c, x] = -r_n[c, x]
    C = nq + nr
    o_pair, o_pt, o_n, o_sep = np.empty(C, np.int64), np.empty((C, 3)), np.empty((C, 3)), np.empty(C)
    i = 0
    j = 0
    for c in range(C):  # merge the two runs (each sorted by pair index; no pair in both)
        if j >= nr or (i < nq and q_pair[i] < r_pair[j]):
            o_pair[c], o_sep[c] = q_pair[i], q_sep[i]
            for x in range(3):
                o_pt[c, x] = q_pt[i, x]
                o_n[c, x] = q_n[i, x]
            i += 1
        else:
            o_pair[c], o_sep[c] = r_pair[j], r_sep[j]
            for x in range(3):
                o_pt[c, x] = r_pt[j, x]
                o_n[c, x] = r_n[j, x]
            j += 1
    return o_pair, o_pt, o_n, o_sep
