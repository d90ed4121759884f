"""All contacts of a step's candidate pairs in one compiled call, for worlds made only of boxes and
planes (the common pile): what ``narrowphase.collide`` gives with the compiled box-box and box-plane
handlers (same kernels, same points, normals from pairs[:, 0] to pairs[:, 1], sorted by pair index), but
without its per-type Python grouping, buffers and sort."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry import BOX
from .boxes import box_box, box_plane


@njit(cache=True)
def box_contacts(pairs, types, pos, rot, size, margins, max_points):
    """(pair index (C,), point (C, 3), normal (C, 3), separation (C,)) of box-box and box-plane pairs."""
    P = pairs.shape[0]
    bb = np.empty(P, np.int64)
    bp = np.empty(P, np.int64)
    nbb = 0
    nbp = 0
    for p in range(P):
        if types[pairs[p, 0]] == BOX and types[pairs[p, 1]] == BOX:
            bb[nbb] = p
            nbb += 1
        else:
            bp[nbp] = p
            nbp += 1
    bb = bb[:nbb]
    bp = bp[:nbp]
    per = max(1, min(24, max_points))
    q_pair, q_pt, q_n, q_sep = (np.empty(nbb * per, np.int64), np.empty((nbb * per, 3)), np.empty((nbb * per, 3)),
                                np.empty(nbb * per))
    ga = pairs[bb, 0]
    gb = pairs[bb, 1]
    nq = box_box(bb, pos[ga], pos[gb], rot[ga], rot[gb], size[ga], size[gb], margins[bb], max_points,
                 q_pair, q_pt, q_n, q_sep, np.int64(0))  # typed: a literal 0 would compile box_box again
    per = max(1, min(8, max_points))
    r_pair, r_pt, r_n, r_sep = (np.empty(nbp * per, np.int64), np.empty((nbp * per, 3)), np.empty((nbp * per, 3)),
                                np.empty(nbp * per))
    box = np.empty(nbp, np.int64)
    plane = np.empty(nbp, np.int64)
    flip = np.zeros(P, np.bool_)
    for k in range(nbp):
        p = bp[k]
        if types[pairs[p, 0]] == BOX:
            box[k], plane[k] = pairs[p, 0], pairs[p, 1]
        else:  # the plane first: its normals turn to point from it to the box
            box[k], plane[k] = pairs[p, 1], pairs[p, 0]
            flip[p] = True
    n = np.empty((nbp, 3))
    d = np.empty(nbp)
    for k in range(nbp):
        g = plane[k]
        for i in range(3):
            n[k, i] = rot[g, i, 2]
        d[k] = n[k, 0] * pos[g, 0] + n[k, 1] * pos[g, 1] + n[k, 2] * pos[g, 2]
    nr = box_plane(bp, pos[box], rot[box], size[box], n, d, margins[bp], max_points, r_pair, r_pt, r_n, r_sep,
                   np.int64(0))
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
            p = r_pair[j]
            o_pair[c], o_sep[c] = p, r_sep[j]
            s = -1.0 if flip[p] else 1.0
            for x in range(3):
                o_pt[c, x] = r_pt[j, x]
                o_n[c, x] = s * r_n[j, x]
            j += 1
    return o_pair, o_pt, o_n, o_sep
