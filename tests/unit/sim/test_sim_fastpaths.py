"""The step's fast paths give what the plain formulations give: greedy colouring, inertia products, contact
Jacobians against their definition, geom frames and a colouring reused between steps."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.sim import World
from rscene_addon.sim.mathutil import norm, quat_normalize, quat_to_matrix
from tests.scenes import ground, header, obj, scene_from
from rscene_addon.sim.solver import _inertia_times, color_rows, jacobians


def _greedy(a, b, movable):
    """The colouring rule written out: each row takes the smallest colour free at both movable bodies."""
    used: dict[int, set] = {}
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        taken = (used.get(x, set()) if movable[x] else set()) | (used.get(y, set()) if movable[y] else set())
        c = next(c for c in range(len(taken) + 1) if c not in taken)
        for z in (x, y):
            if movable[z]:
                used.setdefault(z, set()).add(c)
        out.append(c)
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("seed,n,m", [(0, 5, 0), (1, 12, 40), (2, 60, 400), (3, 4, 300), (4, 200, 900)])
def test_color_rows_is_the_greedy_colouring(seed, n, m):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    movable = rng.random(n) < 0.8
    colors = color_rows(a, b, movable)
    assert np.array_equal(colors, _greedy(a, b, movable.tolist()))
    if seed == 3:  # 300 rows on 4 bodies: more than 62 colours (the slow exact path)
        assert colors.max() > 62


def test_inertia_products_match_einsum():
    rng = np.random.default_rng(5)
    I, ang = rng.normal(size=(37, 3, 3)), rng.normal(size=(37, 3, 3))
    assert np.allclose(_inertia_times(I, ang), np.einsum("mij,mrj->mri", I, ang), rtol=0, atol=1e-14)


def test_contact_jacobians_are_the_relative_velocity_and_the_effective_mass():
    """Against the definitions, with np.cross and a 12 x 12 inverse mass matrix per contact: row d of J maps
    body velocities (va, wa, vb, wb) to d . (velocity of b's point - velocity of a's point); MJ = M^-1 J^T;
    k = diag(J M^-1 J^T); the three directions are the normal and two unit tangents orthogonal to it."""
    rng = np.random.default_rng(6)
    m = 37
    ra, rb, n = rng.normal(size=(3, m, 3))
    n /= norm(n)[:, None]
    ma, mb = rng.uniform(0.1, 2.0, size=(2, m))
    Ia, Ib = (a @ np.swapaxes(a, 1, 2) + 0.1 * np.eye(3) for a in rng.normal(size=(2, m, 3, 3)))  # SPD
    J, MJ, k = jacobians(ra, rb, n, ma, mb, Ia, Ib)
    assert J.shape == MJ.shape == (m, 3, 12) and k.shape == (m, 3)
    D = J[:, :, 6:9]  # b's linear block: the directions themselves
    np.testing.assert_allclose(D[:, 0], n, atol=1e-15)
    np.testing.assert_allclose(np.einsum("mri,msi->mrs", D, D), np.broadcast_to(np.eye(3), (m, 3, 3)), atol=1e-12)
    va, wa, vb, wb = rng.normal(size=(4, m, 3))
    rel = (vb + np.cross(wb, rb)) - (va + np.cross(wa, ra))
    v = np.concatenate((va, wa, vb, wb), axis=1)
    np.testing.assert_allclose(np.einsum("mrk,mk->mr", J, v), np.einsum("mri,mi->mr", D, rel), atol=1e-12)
    Minv = np.zeros((m, 12, 12))
    Minv[:, 0:3, 0:3] = ma[:, None, None] * np.eye(3)
    Minv[:, 3:6, 3:6] = Ia
    Minv[:, 6:9, 6:9] = mb[:, None, None] * np.eye(3)
    Minv[:, 9:12, 9:12] = Ib
    np.testing.assert_allclose(MJ, np.einsum("mkl,mrl->mrk", Minv, J), atol=1e-12)
    np.testing.assert_allclose(k, np.einsum("mrk,mkl,mrl->mr", J, Minv, J), rtol=1e-12)


def _pile(n=12):
    rng = np.random.default_rng(11)
    lines = header(dt=1 / 240) + [ground()]
    for i in range(n):
        q = quat_normalize(rng.normal(size=4))
        pos = ((i % 3) * 0.4, (i // 3 % 2) * 0.4, 0.3 + 0.35 * (i // 6))
        lines.append(obj(f"/World/B{i}", "box", pos=pos, quat=q, scale=(0.3, 0.25, 0.2)))
    return World.from_scene(scene_from(lines))


def _run(world, steps=240):
    for _ in range(steps):
        world.step()
    return world.state.position.copy(), world.state.quaternion.copy()


def test_world_inverse_inertia_is_R_Iinv_RT():
    w = _pile()
    assert w._inv_inertia_diag is not None  # boxes: principal axes
    R = quat_to_matrix(quat_normalize(np.random.default_rng(2).normal(size=(w.model.num_bodies, 4))))
    plain = np.einsum("nij,njk,nlk->nil", R, w.model.body_inv_inertia, R)
    assert np.allclose(w._world_inv_inertia(R), plain, rtol=0, atol=1e-14)
    w._inv_inertia_diag = None  # the general path
    assert np.array_equal(w._world_inv_inertia(R), plain)


def test_reused_colouring_and_body_frames_change_nothing():
    fast = _run(_pile())
    plain = _pile()
    plain._geom_at_body = False  # geom frames through the quaternion product

    def recolour(a, b, movable):
        return color_rows(a, b, movable)

    plain._colors = recolour  # no reuse
    ref = _run(plain)
    assert np.array_equal(fast[0], ref[0]) and np.array_equal(fast[1], ref[1])
