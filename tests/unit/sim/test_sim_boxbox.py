"""The vectorised box-box routine against the general polytope SAT (one pair at a time)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sim import geometry as geo
from rscene_addon.sim.boxbox import box_box
from rscene_addon.base.spatial import quat_to_matrix
from rscene_addon.sim.narrowphase import ContactBuffer, WorldPoly, polytope_polytope

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")


class _Frames:
    def __init__(self, pos, rot):
        self.pos, self.rot = pos, rot


class _Model:
    def __init__(self, half):
        self.geom_size = half


def _random_pairs(rng, k):
    half = rng.uniform(0.05, 0.5, (2 * k, 3))
    q = rng.normal(size=(2 * k, 4))
    rot = quat_to_matrix(q / np.linalg.norm(q, axis=1, keepdims=True))
    pos = np.zeros((2 * k, 3))
    pos[1::2] = rng.normal(size=(k, 3)) * 0.5  # B near A, so that many pairs touch
    return half, pos, rot


def _by_pair(buf, k):
    pair, pts, nrm, sep = buf.finish()
    return {p: (pts[pair == p], nrm[pair == p], sep[pair == p]) for p in range(k) if (pair == p).any()}


@pytest.mark.parametrize("max_points", [4, 8])
def test_box_box_matches_polytope_sat(max_points):
    rng = np.random.default_rng(3)
    k = 400
    half, pos, rot = _random_pairs(rng, k)
    ga, gb = np.arange(0, 2 * k, 2), np.arange(1, 2 * k, 2)
    margin = np.full(k, 0.02)
    buf = ContactBuffer()
    box_box(_Model(half), _Frames(pos, rot), ga, gb, margin, np.arange(k), buf, max_points)
    got = _by_pair(buf, k)
    touching = 0
    for p in range(k):
        wa = WorldPoly(geo.box_polytope(half[ga[p]]), pos[ga[p]], rot[ga[p]])
        wb = WorldPoly(geo.box_polytope(half[gb[p]]), pos[gb[p]], rot[gb[p]])
        ref = polytope_polytope(wa, wb, 0.02, max_points)
        if ref is None:
            assert p not in got
            continue
        touching += 1
        pts, nrm, sep = got[p]
        r_pts, r_n, r_sep = ref
        assert len(pts) == len(r_pts)
        assert np.allclose(nrm, r_n, atol=1e-9)
        # the same points (any order) and separations
        d = np.linalg.norm(pts[:, None, :] - r_pts[None, :, :], axis=2)
        assert np.all(d.min(axis=1) < 1e-9) and np.all(d.min(axis=0) < 1e-9)
        assert np.allclose(np.sort(sep), np.sort(r_sep), atol=1e-9)
    assert touching > k // 4  # the sample exercises contacts, not only misses


def test_box_on_box_face_and_edge_contacts():
    half = np.array([[0.5, 0.5, 0.5], [0.25, 0.25, 0.25], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])
    c, s = math.cos(0.3), math.sin(0.3)
    rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    r1 = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])  # 45 degrees about x
    r2 = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # 45 degrees about y
    pos = np.array([[0, 0, 0], [0.1, 0, 0.74], [0, 0, 0], [0, 0, 2 * math.sqrt(0.5) - 0.01]])
    rot = np.stack((np.eye(3), rz, r1, r2))
    buf = ContactBuffer()
    box_box(_Model(half), _Frames(pos, rot), np.array([0, 2]), np.array([1, 3]), np.full(2, 0.01),
            np.arange(2), buf, 4)
    got = _by_pair(buf, 2)
    pts, n, seps = got[0]  # a small box resting on a face: its whole bottom face, 4 points
    assert len(pts) == 4 and np.allclose(n, [0, 0, 1]) and np.allclose(seps, 0.74 - 0.25 - 0.5)
    assert np.allclose(np.sort(np.abs(pts[:, :2] - [0.1, 0]).max(axis=1)), 0.25 * (c + s) / 1, atol=0.2)
    pts, n, seps = got[1]  # crossed edges: one point, the analytic overlap
    assert len(pts) == 1 and np.allclose(n, [0, 0, 1], atol=1e-6)
    assert seps[0] == pytest.approx(-0.01, abs=1e-9)
    assert np.allclose(pts[0], [0, 0, math.sqrt(0.5) - 0.005], atol=1e-9)


def test_aligned_equal_boxes_give_their_four_shared_corners_once():
    # every incident corner lies on the reference rectangle's corner: candidates coincide and must merge
    half = np.full((2, 3), 0.15)
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.299]])
    buf = ContactBuffer()
    box_box(_Model(half), _Frames(pos, np.stack([np.eye(3)] * 2)), np.array([0]), np.array([1]),
            np.full(1, 0.01), np.arange(1), buf, 8)
    _, pts, n, seps = buf.finish()
    assert len(pts) == 4 and np.allclose(n, [0, 0, 1]) and np.allclose(seps, -0.001)
    assert np.allclose(np.sort(np.abs(pts[:, :2]), axis=0), 0.15) and np.allclose(pts[:, 2], 0.1495)
