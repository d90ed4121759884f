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
# constants of the sweep as 0-d arrays: numpy converts a Python float on every call
_ZERO, _ONE, _TINY = np.zeros(()), np.ones(()), np.full((), 1e-200)


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


def jacobians(ra, rb, n, inv_mass_a, inv_mass_b, inv_inertia_a, inv_inertia_b, friction: bool = True,
              basis: tuple | None = None):
    """Row Jacobians for contacts at lever arms ra, rb (M, 3) with normals n (M, 3) from a to b.

    ``basis``: the tangents ``tangent_basis(n)`` when the caller has them already.
    Returns J, MJ (M, R, 12), k (M, R) with R = 3 (normal, tangent 1, tangent 2) or 1 without friction.
    """
    if friction:
        t1, t2 = tangent_basis(n) if basis is None else basis
        D = np.stack((n, t1, t2), axis=1)
    else:
        D = n[:, None, :]
    angA = cross(ra[:, None, :], D)
    angB = cross(rb[:, None, :], D)
    IangA = _inertia_times(inv_inertia_a, angA)
    IangB = _inertia_times(inv_inertia_b, angB)
    k = (inv_mass_a + inv_mass_b)[:, None] + np.sum(angA * IangA, axis=2) + np.sum(angB * IangB, axis=2)
    J = np.concatenate((-D, -angA, D, angB), axis=2)
    MJ = np.concatenate((-inv_mass_a[:, None, None] * D, -IangA, inv_mass_b[:, None, None] * D, IangB),
                        axis=2)
    return J, MJ, k


def _inertia_times(I, ang):
    """(M, R, 3): each row's ``I @ ang[:, r]`` for I (M, 3, 3), ang (M, R, 3).

    Three broadcast products: about twice as fast as ``einsum("mij,mrj->mri")``, and summed in the order
    numpy 1.26's einsum sums (j = 0, 2, then 1), so rows and trajectories stay bit for bit what they were
    with the einsum (another order would differ in the last bit only)."""
    t0 = I[:, None, :, 0] * ang[:, :, None, 0]
    t0 += I[:, None, :, 2] * ang[:, :, None, 2]
    t0 += I[:, None, :, 1] * ang[:, :, None, 1]
    return t0


def color_rows(a: np.ndarray, b: np.ndarray, movable: np.ndarray) -> np.ndarray:
    """Greedy colouring: rows sharing a movable body get different colours. Returns colours (M,)."""
    # bodies that cannot move share one extra slot that is cleared after every row, so the loop needs no
    # tests (a Python loop: the per-row cost is what matters)
    N = len(movable)
    sink = np.where(movable, np.arange(N), N)
    used = [0] * (N + 1)
    colors = []
    push = colors.append
    for x, y in zip(sink[a].tolist(), sink[b].tolist()):
        mask = used[x] | used[y]
        free = ~mask & (mask + 1)
        used[x] |= free
        used[y] |= free
        used[N] = 0
        push(free)
    if len(colors) == 0 or max(colors).bit_length() > 62:
        return np.array([c.bit_length() - 1 for c in colors], dtype=np.int64)
    # the colour is the index of the single set bit: the exponent of a power of two (exact in float64)
    return np.frexp(np.array(colors, dtype=np.float64))[1].astype(np.int64) - 1


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


def _batch(idx, Jk, MJ, b, ck, mu, lam):
    """One colour's rows (views) with the work buffers and views ``solve`` runs its kernels into."""
    m, R = lam.shape
    new, d, X = np.empty((m, R)), np.empty((m, R)), np.empty((m, 12))
    jx, dx = np.empty((m, R)), np.empty((m, 12))
    t1, t2 = (new[:, 1], new[:, 2]) if R == 3 else (None, None)
    mag, scale = np.empty(m), np.empty(m)
    return (idx, Jk, MJ, b, ck, mu, lam, m >= _EINSUM_ROWS, new, new[:, 0], t1, t2, new[:, 1:],
            lam[:, 0], lam[:, 1:], d, d[:, None, :], X, X[:, :, None], jx, jx[:, :, None], dx, dx[:, None, :],
            mag, scale)


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
    soft = bool(ck.any())
    # one colour's arrays and work buffers, made once per call: a sweep then only runs numpy kernels
    # into them (no temporaries, no new views; the same operations in the same order as on fresh arrays)
    batches = [_batch(flat[s:e], Jk[s:e], rows.MJ[s:e], b[s:e], ck[s:e], rows.mu[s:e], rows.lam[s:e])
               for s, e in (rows.slices if forward else rows.slices[::-1])]
    lam_all = rows.lam
    lever_col = None if lever is None else lever[:, None]
    k_all = rows.k[:, :R]
    watched = lam_all if lever is None else V
    before = np.empty_like(watched)
    sweep = 0
    for sweep in range(1, iterations + 1):
        np.copyto(before, watched)
        for (idx, Jk, MJ, b, ck, mu, lam, big, new, ln, t1, t2, tang, lam_n, lam_t, d, d3, X, X3, jx, jx3, dx,
             dx3, mag, scale) in batches:
            Vf.take(idx, out=X, mode="clip")  # (indices are valid: "raise" would buffer the output)
            np.add(lam, b, out=new)
            if big:
                np.einsum("mrk,mk->mr", Jk, X, out=jx)
            else:
                np.matmul(Jk, X3, out=jx3)
            new -= jx
            if soft:
                np.multiply(ck, lam_n, out=mag)
                ln -= mag
            np.maximum(ln, _ZERO, out=ln)
            if use_friction:
                # Coulomb disc: the tangential impulse scaled back to at most mu * normal impulse
                np.hypot(t1, t2, out=mag)
                np.add(mag, _TINY, out=mag)
                np.multiply(mu, ln, out=scale)
                scale /= mag
                np.minimum(scale, _ONE, out=scale)
                t1 *= scale
                t2 *= scale
            elif R == 3:
                tang[...] = lam_t  # friction rows keep their impulses
            np.subtract(new, lam, out=d)
            lam[...] = new
            if big:
                np.einsum("mr,mrk->mk", d, MJ, out=dx)
            else:
                np.matmul(d3, MJ, out=dx3)
            X += dx
            Vf[idx] = X
        if lever is None:
            before -= lam_all
            np.abs(before, out=before)
            before *= k_all
            err = before.max()
        else:
            before -= V
            np.abs(before, out=before)
            before[:, 3:] *= lever_col
            err = before.max()
        if err < tolerance:
            break
    return sweep
