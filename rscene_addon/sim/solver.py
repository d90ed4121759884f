"""Sequential-impulse (projected Gauss-Seidel) solver, vectorised by graph colouring.

Each constraint row block has a normal row and two friction rows (Coulomb cone, clamped as a disc). Rows
are greedily coloured so that no two rows of one colour touch the same movable body; a colour is then
solved at once with numpy, which is exactly Gauss-Seidel in colour order. Bodies' velocities are stored
as V (N, 6) = (linear, angular).

Conventions: a row couples bodies a and b; ``J`` (M, 3, 12) maps (v_a, w_a, v_b, w_b) to the normal and
tangential relative velocities, ``MJ`` (M, 3, 12) maps row impulses to velocity changes (M^-1 J^T). The
normal row enforces ``v_n >= target`` with an impulse ``lambda_n >= 0``; ``cfm`` softens it (springs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mathutil import cross, tangent_basis

_EINSUM_ROWS = 64  # colours with this many rows use einsum (faster than batched matmul for large batches)


@dataclass
class Rows:
    """M constraint row blocks, sorted by colour. ``slices`` are the colours' row ranges."""

    a: np.ndarray  # (M,)
    b: np.ndarray  # (M,)
    J: np.ndarray  # (M, 3, 12)
    MJ: np.ndarray  # (M, 3, 12)
    kinv: np.ndarray  # (M, 3) inverse effective masses (with cfm on the normal row)
    k: np.ndarray  # (M, 3) effective masses (for the convergence measure)
    target: np.ndarray  # (M,) normal velocity target
    cfm: np.ndarray  # (M,) constraint force mixing on the normal row
    mu: np.ndarray  # (M,) friction coefficient
    lam: np.ndarray  # (M, 3) accumulated impulses
    slices: list  # [(start, stop)] per colour

    @property
    def size(self) -> int:
        return len(self.a)


def jacobians(ra, rb, n, inv_mass_a, inv_mass_b, inv_inertia_a, inv_inertia_b, friction: bool = True):
    """Row Jacobians for contacts at lever arms ra, rb (M, 3) with normals n (M, 3) from a to b.

    Returns J, MJ (M, R, 12), k (M, R) with R = 3 (normal, tangent 1, tangent 2) or 1 without friction.
    """
    if friction:
        t1, t2 = tangent_basis(n)
        D = np.stack((n, t1, t2), axis=1)
    else:
        D = n[:, None, :]
    angA = cross(ra[:, None, :], D)
    angB = cross(rb[:, None, :], D)
    IangA = np.einsum("mij,mrj->mri", inv_inertia_a, angA)
    IangB = np.einsum("mij,mrj->mri", inv_inertia_b, angB)
    k = (inv_mass_a + inv_mass_b)[:, None] + np.sum(angA * IangA, axis=2) + np.sum(angB * IangB, axis=2)
    J = np.concatenate((-D, -angA, D, angB), axis=2)
    MJ = np.concatenate((-inv_mass_a[:, None, None] * D, -IangA, inv_mass_b[:, None, None] * D, IangB),
                        axis=2)
    return J, MJ, k


def color_rows(a: np.ndarray, b: np.ndarray, movable: np.ndarray) -> np.ndarray:
    """Greedy colouring: rows sharing a movable body get different colours. Returns colours (M,)."""
    used: dict[int, int] = {}
    colors = []
    mov = movable.tolist()
    for x, y in zip(a.tolist(), b.tolist()):
        mask = (used.get(x, 0) if mov[x] else 0) | (used.get(y, 0) if mov[y] else 0)
        c = ((~mask) & (mask + 1)).bit_length() - 1
        bit = 1 << c
        if mov[x]:
            used[x] = used.get(x, 0) | bit
        if mov[y]:
            used[y] = used.get(y, 0) | bit
        colors.append(c)
    return np.array(colors, dtype=np.int64)


def order_by_color(colors: np.ndarray):
    """Permutation that sorts rows by colour (stable) and the colour slices."""
    order = np.argsort(colors, kind="stable")
    c = colors[order]
    bounds = np.flatnonzero(np.diff(c)) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    stops = np.concatenate((bounds, [len(c)])).tolist()
    return order, list(zip(starts, stops))


def warm_start(V: np.ndarray, rows: Rows) -> None:
    """Apply the accumulated impulses (from the previous step) to the velocities."""
    if rows.size == 0 or not np.any(rows.lam):
        return
    d = np.einsum("mrk,mr->mk", rows.MJ, rows.lam)
    np.add.at(V, rows.a, d[:, :6])
    np.add.at(V, rows.b, d[:, 6:])


def solve(V: np.ndarray, rows: Rows, iterations: int, tolerance: float, forward: bool,
          friction: bool = True, lever: np.ndarray | None = None) -> int:
    """Projected Gauss-Seidel sweeps over the colours, in colour order (``forward``) or reversed (the
    world alternates the direction every step, as RaiSim does). Returns the number of sweeps done.

    Stops when a sweep changes no velocity by more than ``tolerance`` (m/s). With ``lever`` (N,) (a
    length per body, m) that is the bodies' velocities: linear, and angular times ``lever``. Impulses
    that only move between redundant contacts (four corners of a resting face carry its weight in many
    ways) change no velocity and do not keep the solver going. Without ``lever`` it is each row's own
    velocity change, ``|delta impulse| * k``.

    The per-colour work is a fixed, short list of whole-array numpy calls (numpy's per-call cost, not
    arithmetic, dominates at these sizes); the change is measured once per sweep."""
    if rows.size == 0:
        return 0
    R = rows.J.shape[1]
    use_friction = friction and R == 3
    # flat indices of the two bodies' 6 velocity entries: take/put on the flat view are the cheapest
    # gather and scatter numpy has
    flat = ((np.stack((rows.a, rows.b), axis=1) * 6)[:, :, None] + np.arange(6)).reshape(-1, 12)
    if not V.flags.c_contiguous:
        raise ValueError("V must be C-contiguous (it is updated through a flat view)")
    Vf = V.reshape(-1)
    # rows pre-scaled by their inverse effective masses: new = lam + goal * kinv - (J * kinv) @ X
    kinv = rows.kinv[:, :R]
    Jk = rows.J * kinv[:, :, None]
    b = np.zeros((rows.size, R))
    b[:, 0] = rows.target * kinv[:, 0]
    ck = rows.cfm * kinv[:, 0]  # cfm (wires) softens the normal row: it pulls back on its own impulse
    soft = bool(np.any(ck))
    batches = []
    for s, e in (rows.slices if forward else rows.slices[::-1]):
        batches.append((flat[s:e], Jk[s:e], rows.MJ[s:e], b[s:e], ck[s:e], rows.mu[s:e], rows.lam[s:e],
                        e - s >= _EINSUM_ROWS))
    lam_all = rows.lam
    k_all = rows.k[:, :R]
    sweep = 0
    for sweep in range(1, iterations + 1):
        before = lam_all.copy() if lever is None else V.copy()
        for idx, Jk, MJ, b, ck, mu, lam, big in batches:
            X = Vf.take(idx)
            new = lam + b
            new -= np.einsum("mrk,mk->mr", Jk, X) if big else np.matmul(Jk, X[:, :, None])[:, :, 0]
            if soft:
                new[:, 0] -= ck * lam[:, 0]
            ln = new[:, 0]
            np.maximum(ln, 0.0, out=ln)
            if use_friction:
                # Coulomb disc: the tangential impulse scaled back to at most mu * normal impulse
                mag = np.hypot(new[:, 1], new[:, 2])
                mag += 1e-200
                scale = mu * ln
                scale /= mag
                np.minimum(scale, 1.0, out=scale)
                new[:, 1:] *= scale[:, None]
            elif R == 3:
                new[:, 1:] = lam[:, 1:]  # friction rows keep their impulses
            d = new - lam
            lam[...] = new
            X += np.einsum("mr,mrk->mk", d, MJ) if big else np.matmul(d[:, None, :], MJ)[:, 0]
            Vf[idx] = X
        if lever is None:
            before -= lam_all
            np.abs(before, out=before)
            before *= k_all
            err = before.max()
        else:
            before -= V
            np.abs(before, out=before)
            err = max(before[:, :3].max(), (before[:, 3:] * lever[:, None]).max())
        if err < tolerance:
            break
    return sweep
