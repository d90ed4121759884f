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


def _batch(idx, Jb, MJ, ck, mu, lam, nxt):
    """One colour's rows (views) with the work buffers and views ``solve`` runs its kernels into, once
    per parity of the sweep: even sweeps read impulses from ``lam`` and write ``nxt``, odd ones the
    other way round (swapping the buffers saves a copy per colour)."""
    m, R = lam.shape
    d, X, jx, dx = np.empty((m, R)), np.empty((m, 13)), np.empty((m, R)), np.empty((m, 13))
    mag, scale = np.empty(m), np.empty(m)
    common = (idx, Jb, MJ, ck, mu, m >= _EINSUM_ROWS, d, d[:, None, :], X, X[:, :, None], jx, jx[:, :, None],
              dx, dx[:, None, :], mag, scale)

    def views(old, new):
        return (old, new, new[:, 0], new[:, 1] if R == 3 else None, new[:, 2] if R == 3 else None,
                new[:, 1:], old[:, 0], old[:, 1:])
    return common + views(lam, nxt), common + views(nxt, lam)


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
    arithmetic, dominates at these sizes): the bodies' velocities are gathered with a 13th entry that is
    always 1, so one product gives ``J v - target`` (the target is the Jacobian's 13th column)."""
    if rows.size == 0:
        return 0
    R = rows.J.shape[1]
    use_friction = friction and R == 3
    N = len(V)
    # flat indices of the two bodies' 6 velocity entries and of the constant 1 after them: take/put on a
    # flat array are the cheapest gather and scatter numpy has
    flat = np.empty((rows.size, 13), dtype=np.int64)
    flat[:, :12] = ((np.stack((rows.a, rows.b), axis=1) * 6)[:, :, None] + np.arange(6)).reshape(-1, 12)
    flat[:, 12] = 6 * N
    Vx = np.empty(6 * N + 1)
    Vx[:-1] = V.reshape(-1)
    Vx[-1] = 1.0
    # rows pre-scaled by their inverse effective masses: new = lam - (J * kinv | -target * kinv) @ (v | 1)
    kinv = rows.kinv[:, :R]
    Jb = np.zeros((rows.size, R, 13))
    np.multiply(rows.J, kinv[:, :, None], out=Jb[:, :, :12])
    Jb[:, 0, 12] = -rows.target * kinv[:, 0]
    MJ = np.zeros((rows.size, R, 13))
    MJ[:, :, :12] = rows.MJ
    ck = rows.cfm * kinv[:, 0]  # cfm (wires) softens the normal row: it pulls back on its own impulse
    soft = bool(ck.any())
    lam_a, lam_b = rows.lam, np.empty_like(rows.lam)
    # one colour's arrays and work buffers, made once per call: a sweep then only runs numpy kernels
    # into them (no temporaries, no new views)
    batches = [_batch(flat[s:e], Jb[s:e], MJ[s:e], ck[s:e], rows.mu[s:e], lam_a[s:e], lam_b[s:e])
               for s, e in (rows.slices if forward else rows.slices[::-1])]
    even, odd = [x[0] for x in batches], [x[1] for x in batches]
    k_all = rows.k[:, :R]
    if lever is not None:
        lever_col = lever[:, None]
        before = np.empty(6 * N)
        change = before.reshape(N, 6)
    else:
        change = np.empty_like(lam_a)
    sweep = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        for sweep in range(1, iterations + 1):
            if lever is not None:
                np.copyto(before, Vx[:-1])
            for (idx, Jb, MJ, ck, mu, big, d, d3, X, X3, jx, jx3, dx, dx3, mag, scale,
                 lam, new, ln, t1, t2, tang, lam_n, lam_t) in (even if sweep % 2 else odd):
                Vx.take(idx, out=X, mode="clip")  # (indices are valid: "raise" would buffer the output)
                if big:
                    np.einsum("mrk,mk->mr", Jb, X, out=jx)
                else:
                    np.matmul(Jb, X3, out=jx3)
                np.subtract(lam, jx, out=new)
                if soft:
                    np.multiply(ck, lam_n, out=mag)
                    ln -= mag
                np.maximum(ln, _ZERO, out=ln)
                if use_friction:
                    # Coulomb disc: the tangential impulse scaled back to at most mu * normal impulse
                    # (fmin ignores the NaN of 0 / 0: no friction impulse, nothing to scale)
                    np.hypot(t1, t2, out=mag)
                    np.multiply(mu, ln, out=scale)
                    scale /= mag
                    np.fmin(scale, _ONE, out=scale)
                    t1 *= scale
                    t2 *= scale
                elif R == 3:
                    tang[...] = lam_t  # friction rows keep their impulses
                np.subtract(new, lam, out=d)
                if big:
                    np.einsum("mr,mrk->mk", d, MJ, out=dx)
                else:
                    np.matmul(d3, MJ, out=dx3)
                X += dx
                Vx[idx] = X
            if lever is None:  # the sweep's impulses are in one buffer, the last sweep's in the other
                np.subtract(lam_a, lam_b, out=change)
                np.abs(change, out=change)
                change *= k_all
            else:
                np.subtract(before, Vx[:-1], out=before)
                np.abs(before, out=before)
                change[:, 3:] *= lever_col
            if change.max() < tolerance:
                break
    if sweep % 2:  # odd sweeps wrote the other buffer
        lam_a[...] = lam_b
    V[...] = Vx[:-1].reshape(N, 6)
    return sweep
