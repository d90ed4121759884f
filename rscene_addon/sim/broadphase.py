"""Broadphase: world AABBs of the geoms and candidate pairs by sweep-and-prune.

The sweep sorts the AABBs' lower bounds along one axis (the one along which the geoms spread most) and
finds, with one ``searchsorted``, every geom whose interval starts inside another's: O(n log n + pairs),
fully vectorised. Unbounded planes are tested against all geoms separately. Pairs are then filtered by the
other two axes, by body (a body never collides with itself; two non-moving bodies need no test) and by
RaiSim's group/mask rule: a pair collides only when ``(groupA & maskB) and (groupB & maskA)``.
"""
from __future__ import annotations

import numpy as np

from .geometry import BOX, CAPSULE, CONVEX, CYLINDER, HEIGHTFIELD, PLANE, SPHERE

_INF = 1e300


def compute_aabbs(m, pos: np.ndarray, rot: np.ndarray, pad: np.ndarray):
    """World AABBs (G, 3) lo and hi of all geoms, each grown by ``pad`` (G,). Planes get infinite boxes."""
    G = len(pos)
    ext = np.zeros((G, 3))
    centre = pos.copy()
    t = m.geom_type
    size = m.geom_size
    sel = t == SPHERE
    if sel.any():
        ext[sel] = size[sel, :1]
    sel = t == CAPSULE
    if sel.any():
        ext[sel] = np.abs(rot[sel][:, :, 2]) * size[sel, 1:2] + size[sel, :1]
    sel = t == CYLINDER
    if sel.any():
        a = rot[sel][:, :, 2]
        ext[sel] = np.abs(a) * size[sel, 1:2] + size[sel, :1] * np.sqrt(np.clip(1 - a * a, 0.0, 1.0))
    sel = (t == BOX) | (t == CONVEX)
    if sel.any():
        R = rot[sel]
        c_l, e_l = m.geom_local_aabb[sel, 0], m.geom_local_aabb[sel, 1]
        centre[sel] = pos[sel] + np.einsum("kij,kj->ki", R, c_l)
        ext[sel] = np.einsum("kij,kj->ki", np.abs(R), e_l)
    lo = centre - ext - pad[:, None]
    hi = centre + ext + pad[:, None]
    sel = t == HEIGHTFIELD
    for g in np.nonzero(sel)[0]:
        lo[g], hi[g] = m.geom_hfield[g].aabb
    sel = t == PLANE
    lo[sel] = -_INF
    hi[sel] = _INF
    return lo, hi


def group_mask_ok(group: np.ndarray, mask: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """RaiSim's rule for geom pairs (a, b): each one's group is in the other's mask."""
    return ((group[a] & mask[b]) != 0) & ((group[b] & mask[a]) != 0)


def sweep_and_prune(lo: np.ndarray, hi: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Pairs (P, 2) among geoms ``idx`` whose AABBs overlap, as geom indices with [:, 0] < [:, 1].

    The sweep runs along the axis of largest spread, inside strips across the second-largest one (as
    wide as the widest box there, so a box lies in one or two strips): geoms far apart across the sweep
    axis are never paired, and a pile that is wide in two directions does not cost O(n^2)."""
    if len(idx) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    L, H = lo[idx], hi[idx]
    # np.var's own steps, without its Python-level overhead (the same bits)
    mid = (L + H) * 0.5
    mid -= np.add.reduce(mid, axis=0) / len(mid)
    spread = np.add.reduce(mid * mid, axis=0) / len(mid)
    axis = int(np.argmax(spread[:2])) if spread[2] <= max(spread[0], spread[1]) else 2
    rest = [a for a in range(3) if a != axis]
    across = rest[int(np.argmax(spread[rest]))]
    width = max(float(np.max(H[:, across] - L[:, across])), 1e-9)
    s_lo = np.floor((L[:, across] - L[:, across].min()) / width).astype(np.int64)
    s_hi = np.floor((H[:, across] - L[:, across].min()) / width).astype(np.int64)
    n_strips = s_hi - s_lo + 1  # 1 or 2 (3 only by rounding)
    member = np.repeat(np.arange(len(idx)), n_strips)
    strip = s_lo[member] + (np.arange(len(member)) - np.repeat(np.cumsum(n_strips) - n_strips, n_strips))
    # one sorted line: strips laid end to end, far enough apart that no interval reaches the next strip
    x0 = L[:, axis].min()
    span = float(H[:, axis].max() - x0) + 1.0
    start_x = L[member, axis] - x0 + strip * span
    end_x = H[member, axis] - x0 + strip * span
    order = np.lexsort((idx[member], start_x))  # ties broken by geom index: deterministic
    ls, hs = start_x[order], end_x[order]
    end = np.searchsorted(ls, hs, side="right")
    n = len(order)
    counts = np.maximum(end - np.arange(n) - 1, 0)
    total = int(counts.sum())
    if total == 0:
        return np.zeros((0, 2), dtype=np.int64)
    i = np.repeat(np.arange(n), counts)
    first = np.cumsum(counts) - counts
    j = i + 1 + (np.arange(total) - np.repeat(first, counts))
    geom = idx[member[order]]  # the geom at each place of the sorted line
    gi, gj = geom[i], geom[j]
    over = (lo[gi] <= hi[gj]) & (lo[gj] <= hi[gi])
    ok = over[:, 0] & over[:, 1] & over[:, 2] & (gi != gj)  # (np.all over 3 columns is slower)
    a, b = np.minimum(gi[ok], gj[ok]), np.maximum(gi[ok], gj[ok])
    if len(member) > len(idx):  # a pair of boxes that both lie in two strips was found twice
        code = np.unique(a * (int(idx.max()) + 1) + b)
        a, b = np.divmod(code, int(idx.max()) + 1)
    return np.stack((a, b), axis=1)


def candidate_pairs(m, lo, hi, geom_moving: np.ndarray, geom_active: np.ndarray,
                    geom_dynamic: np.ndarray | None = None) -> np.ndarray:
    """Candidate geom pairs (P, 2), sorted, for one step.

    geom_moving (G,): the geom's body is an awake dynamic or a moving kinematic body; geom_active (G,):
    the geom takes part at all (sleeping bodies are active but not moving); geom_dynamic (G,): the geom's
    body is dynamic. A pair needs a moving geom and (when given) a dynamic one: kinematic and static
    bodies do not act on each other.
    """
    planes = np.nonzero((m.geom_type == PLANE) & geom_active)[0]
    bounded = np.nonzero((m.geom_type != PLANE) & geom_active)[0]
    pairs = [sweep_and_prune(lo, hi, bounded)]
    for p in planes:
        n = np.array([0.0, 0.0, 1.0])  # ground planes are horizontal half spaces
        cand = bounded[geom_moving[bounded]]
        if len(cand) == 0:
            continue
        z = m.geom_pos[p, 2]  # plane geoms sit on static bodies at the origin
        near = lo[cand] @ n <= z
        cand = cand[near]
        pairs.append(np.stack((np.minimum(cand, p), np.maximum(cand, p)), axis=1))
    pairs = np.concatenate(pairs).astype(np.int64)
    if len(pairs) == 0:
        return pairs
    a, b = pairs[:, 0], pairs[:, 1]
    body = m.geom_body
    keep = (body[a] != body[b]) & (geom_moving[a] | geom_moving[b])
    if geom_dynamic is not None:
        keep &= geom_dynamic[a] | geom_dynamic[b]
    keep &= group_mask_ok(m.geom_group, m.geom_mask, a, b)
    pairs = pairs[keep]
    if len(pairs):
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    return pairs
