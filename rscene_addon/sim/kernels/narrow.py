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
    # Each kernel is called here with only the arrays it reads, one by one: numba counts a reference to
    # every array a call passes (each of a tuple's too), and one dispatcher taking them all cost more per
    # pair than a sphere pair's whole test. Constants passed on are typed (``np.bool_(True)``): numba
    # compiles a callee once more for every literal it is called with.
    sc = convex.scratch(big)
    poly, ref, tmp, seps, ok, keep, dmin, keep_a, keep_b, xa, xb, fd_a, fd_b = sc[4:]
    (poly_of, v_start, verts, f_start, normals, offsets, fv_start, fv, e_start, edges, edge_dir_of, d_start, dirs,
     t_start, tris, cen, inr, edge_faces, slot_of, axes) = polys
    # each geom's polytope turned into the world once (``convex.world_poly``, on its first pair)
    gv, gf, gd, done, WV, WN, WO, WD = convex.posed_cache(polys, types.shape[0])
    pts, sep8, ok8, keep8, dmin8 = np.empty((8, 3)), np.empty(8), np.empty(8, np.bool_), np.empty(8, np.bool_), \
        np.empty(8)
    nr = 0
    for i in range(no):
        p = other[i]
        g0, g1 = pairs[p, 0], pairs[p, 1]
        t0, t1 = types[g0], types[g1]
        swap = t0 > t1
        ga, gb = (g1, g0) if swap else (g0, g1)  # ordered by type: ta <= tb, normals a->b
        ta, tb = min(t0, t1), max(t0, t1)
        margin = margins[p]
        posing = not (tb == HEIGHTFIELD or (ta == SPHERE and tb != CONVEX) or (ta == CYLINDER and tb == PLANE))
        for g in (ga, gb):
            if posing and poly_of[g] >= 0 and not done[g]:
                convex.world_poly(poly_of[g], g, pos, rot, v_start, verts, f_start, normals, offsets, d_start, dirs,
                                  WV[gv[g]:gv[g + 1]], WN[gf[g]:gf[g + 1]], WO[gf[g]:gf[g + 1]], WD[gd[g]:gd[g + 1]])
                done[g] = True
        start = nr
        if ta == SPHERE:
            if tb == SPHERE:
                nr = prim.sphere_sphere(p, ga, gb, pos, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == BOX:
                nr = prim.sphere_box(p, ga, gb, pos, rot, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == CAPSULE:
                nr = prim.sphere_capsule(p, ga, gb, pos, rot, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == CYLINDER:
                nr = prim.sphere_cylinder(p, ga, gb, pos, rot, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == CONVEX:
                nr = convex.sphere_polytope(p, ga, poly_of[gb], WV[gv[gb]:gv[gb + 1]], WN[gf[gb]:gf[gb + 1]],
                                            WO[gf[gb]:gf[gb + 1]], t_start, tris, pos, size, margin, r_pair, r_pt,
                                            r_n, r_sep, nr)
            elif tb == PLANE:
                nr = prim.sphere_plane(p, ga, gb, pos, rot, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == HEIGHTFIELD:
                nr = terrain.round_heightfield(p, ga, gb, hfs, pos, rot, size, np.bool_(True), margin, max_points,
                                               r_pair, r_pt, r_n, r_sep, nr)
        elif ta == CAPSULE:
            if tb == CAPSULE:
                nr = prim.capsule_capsule(p, ga, gb, pos, rot, size, margin, r_pair, r_pt, r_n, r_sep, nr)
            elif tb == CYLINDER or tb == CONVEX:
                nr = convex.capsule_polytope(p, ga, poly_of[gb], WV[gv[gb]:gv[gb + 1]], WN[gf[gb]:gf[gb + 1]],
                                             WO[gf[gb]:gf[gb + 1]], WD[gd[gb]:gd[gb + 1]], f_start, fv_start, fv,
                                             e_start, edges, pos, rot, size, margin, np.float64(-1.0), r_pair, r_pt,
                                             r_n, r_sep, nr)
            elif tb == PLANE:
                nr = prim.capsule_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep8, ok8, keep8, dmin8,
                                        r_pair, r_pt, r_n, r_sep, nr)
            elif tb == HEIGHTFIELD:
                nr = terrain.round_heightfield(p, ga, gb, hfs, pos, rot, size, np.bool_(False), margin, max_points,
                                               r_pair, r_pt, r_n, r_sep, nr)
        elif ta == BOX and tb == CAPSULE:  # the capsule is b: polytope->capsule is a->b
            nr = convex.capsule_polytope(p, gb, poly_of[ga], WV[gv[ga]:gv[ga + 1]], WN[gf[ga]:gf[ga + 1]],
                                         WO[gf[ga]:gf[ga + 1]], WD[gd[ga]:gd[ga + 1]], f_start, fv_start, fv, e_start,
                                         edges, pos, rot, size, margin, np.float64(1.0), r_pair, r_pt, r_n, r_sep, nr)
        elif ta == CYLINDER and tb == PLANE:
            nr = prim.cylinder_plane(p, ga, gb, pos, rot, size, margin, max_points, pts, sep8, ok8, keep8, dmin8,
                                     r_pair, r_pt, r_n, r_sep, nr)
        elif ta == CONVEX and tb == PLANE:
            nr = convex.convex_plane(p, WV[gv[ga]:gv[ga + 1]], gb, pos, rot, margin, max_points, poly, seps, ok, keep,
                                     dmin, r_pair, r_pt, r_n, r_sep, nr)
        elif tb == HEIGHTFIELD and ta != PLANE:
            nr = terrain.polytope_heightfield(p, ga, gb, polys, hfs, pos, rot, margin, max_points, sc, r_pair, r_pt,
                                              r_n, r_sep, nr)
        elif tb == BOX or tb == CYLINDER or tb == CONVEX:  # box, cylinder prism and hull among themselves
            ia, ib = slot_of[ga], slot_of[gb]
            if ia >= 0 and ib >= 0:
                # the pair's last separating axis (``convex.polytope_pair``'s cache) when a face: its test here
                # spares most separated pairs the whole call
                code = axes[ia, ib]
                kind = code >> 48
                if kind == convex.FACE_A or kind == convex.FACE_B:
                    f = (code >> 24) & convex.LOW
                    gn, gw = (ga, gb) if kind == convex.FACE_A else (gb, ga)  # the face's polytope, the other one
                    k = gf[gn] + f
                    lo = np.inf
                    for v in range(gv[gw], gv[gw + 1]):
                        lo = min(lo, WV[v, 0] * WN[k, 0] + WV[v, 1] * WN[k, 1] + WV[v, 2] * WN[k, 2])
                    if lo - WO[k] > margin:
                        continue
            nr = convex.polytope_pair(p, ga, gb, poly_of[ga], poly_of[gb], WV[gv[ga]:gv[ga + 1]], WN[gf[ga]:gf[ga + 1]],
                                      WO[gf[ga]:gf[ga + 1]], WD[gd[ga]:gd[ga + 1]], WV[gv[gb]:gv[gb + 1]],
                                      WN[gf[gb]:gf[gb + 1]], WO[gf[gb]:gf[gb + 1]], WD[gd[gb]:gd[gb + 1]], pos, rot,
                                      cen, inr, f_start, fv_start, fv, e_start, edges, edge_dir_of, edge_faces, ia, ib,
                                      axes, margin, max_points, poly, ref, tmp, seps, ok, keep, dmin, keep_a, keep_b,
                                      xa, xb, fd_a, fd_b, r_pair, r_pt, r_n, r_sep, nr)
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
