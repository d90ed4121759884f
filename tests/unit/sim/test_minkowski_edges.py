"""The polytope SAT's edge axes come only from edge pairs whose Gauss-map arcs cross (faces of the Minkowski
difference). Truth: for two convex polytopes that overlap, the least penetration over *every* edge-pair
axis and face axis (the brute-force SAT) is reached on a face axis or a Minkowski-face axis, so the pruned
search finds the same depth; and aligned boxes have no Minkowski face from an edge pair."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.sim.geometry import box_polytope, hull_polytope, prism_polytope
from rscene_addon.sim.mathutil import cross, quat_to_matrix
from rscene_addon.sim.narrowphase import WorldPoly, minkowski_edges


def _pebble(seed):
    d = np.random.default_rng(seed).normal(size=(24, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return hull_polytope(d * np.array([0.18, 0.14, 0.11]))


def _axis_seps(wa, wb, axes):
    return (wb.verts @ axes.T).min(axis=0) - (wa.verts @ axes.T).max(axis=0), \
        (wa.verts @ axes.T).min(axis=0) - (wb.verts @ axes.T).max(axis=0)


def _face_best(wa, wb):
    sa = ((wb.verts @ wa.normals.T).min(axis=0) - wa.offsets).max()
    sb = ((wa.verts @ wb.normals.T).min(axis=0) - wb.offsets).max()
    return max(sa, sb)


def _random_pose(rng):
    q = rng.normal(size=4)
    return quat_to_matrix(q / np.linalg.norm(q))


@pytest.mark.parametrize("kinds", [("pebble", "pebble"), ("box", "pebble"), ("prism", "pebble"), ("prism", "box")])
def test_pruned_edge_axes_find_the_brute_force_penetration(kinds):
    polys = {"pebble": _pebble(3), "box": box_polytope(np.array([0.15, 0.1, 0.12])),
             "prism": prism_polytope(0.12, 0.15)}
    pa, pb = polys[kinds[0]], polys[kinds[1]]
    rng = np.random.default_rng(11)
    checked = edge_wins = 0
    for _ in range(150):
        wa = WorldPoly(pa, np.zeros(3), _random_pose(rng))
        wb = WorldPoly(pb, rng.uniform(-0.22, 0.22, 3), _random_pose(rng))
        # brute force: every pair of edge directions, both orientations
        ax = cross(wa.edge_dirs[:, None, :], wb.edge_dirs[None, :, :]).reshape(-1, 3)
        ax = ax[np.linalg.norm(ax, axis=1) > 1e-6]
        ax /= np.linalg.norm(ax, axis=1, keepdims=True)
        brute = max(np.maximum(*_axis_seps(wa, wb, ax)).max(), _face_best(wa, wb))
        if brute >= 0:  # apart: the pruned search only promises a valid bound there
            continue
        checked += 1
        ia, ib = np.nonzero(minkowski_edges(wa.normals[pa.edge_faces], -wb.normals[pb.edge_faces]))
        mx = cross(wa.edge_dirs[pa.edge_dir_of[ia]], wb.edge_dirs[pb.edge_dir_of[ib]])
        mx = mx[np.linalg.norm(mx, axis=1) > 1e-6]
        mx /= np.linalg.norm(mx, axis=1, keepdims=True)
        pruned = max(np.maximum(*_axis_seps(wa, wb, mx)).max(), _face_best(wa, wb))
        assert pruned == pytest.approx(brute, abs=1e-12)
        edge_wins += np.maximum(*_axis_seps(wa, wb, mx)).max() > _face_best(wa, wb)
        assert len(ia) < pa.edges.shape[0] * pb.edges.shape[0]  # and most pairs are skipped
    assert checked >= 30 and edge_wins >= 3  # overlapping poses, some decided by an edge axis


def test_aligned_boxes_have_no_edge_axis():
    """Two boxes in the same orientation: their Gauss-map arcs coincide or meet only at face normals, so
    no edge pair forms a Minkowski face (their SAT is the face axes alone, as for any aligned boxes)."""
    a, b = box_polytope(np.full(3, 0.5)), box_polytope(np.array([0.2, 0.3, 0.1]))
    wa, wb = WorldPoly(a, np.zeros(3), np.eye(3)), WorldPoly(b, np.ones(3), np.eye(3))
    assert not minkowski_edges(wa.normals[a.edge_faces], -wb.normals[b.edge_faces]).any()
