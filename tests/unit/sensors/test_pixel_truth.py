"""Per-pixel ground-truth maths (flow, object coordinates, NOCS, visibility) against closed forms.

Truths used: a camera translating sideways by ``b`` sees a point at depth ``z`` move by ``-fx b / z``
pixels (stereo disparity); a camera turning about its own y axis by ``a`` moves points at infinity by
``fx tan`` differences of their angles; a rotation about the optical axis turns the image about the
principal point; a unit cube's NOCS corners sit at ``0.5 +- 0.5 / sqrt(3)``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sensors import pixel_truth as pt
from rscene_addon.sensors.intrinsics import CameraIntrinsics, OrthographicIntrinsics

K = CameraIntrinsics(40, 30, 50.0, 45.0, 20.3, 14.6)


def _pose(rotation=np.eye(3), position=(0.0, 0.0, 0.0)) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = position
    return t


def _rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _centres(k):
    v, u = np.mgrid[0:k.height, 0:k.width]
    return np.stack([u.ravel() + 0.5, v.ravel() + 0.5], axis=1)


def test_rays_go_through_pixel_centres_and_give_planar_depth():
    cam = _pose(_rot_z(0.3) @ _rot_y(-0.2), (1.0, -2.0, 0.5))
    origins, directions, per_distance = pt.pixel_rays(K, cam)
    assert np.allclose(np.linalg.norm(directions, axis=1), 1.0)
    points = origins + directions * 3.0
    uv, z = pt.project(K, cam, points)
    assert np.abs(uv - _centres(K)).max() < 1e-9
    assert np.allclose(z, 3.0 * per_distance)


def test_orthographic_rays_are_parallel_from_the_camera_plane():
    k = OrthographicIntrinsics(8, 6, 4.0)
    cam = _pose(_rot_y(0.4), (0.0, 1.0, 2.0))
    origins, directions, per_distance = pt.pixel_rays(k, cam)
    assert np.allclose(directions, cam[:3, 2]) and np.all(per_distance == 1.0)
    uv, z = pt.project(k, cam, origins + 2.5 * directions)
    assert np.abs(uv - _centres(k)).max() < 1e-9 and np.allclose(z, 2.5)


def test_sideways_camera_motion_gives_the_stereo_disparity():
    depth, baseline = 4.0, 0.1
    origins, directions, per_distance = pt.pixel_rays(K, _pose())
    points = origins + directions * (depth / per_distance)[:, None]
    part = np.zeros(len(points), int)
    flow = pt.rigid_flow(K, _pose(), _pose(position=(baseline, 0, 0)), points, part, np.eye(4)[None])
    assert np.allclose(flow[:, 0], -K.fx * baseline / depth, atol=1e-9)
    assert np.allclose(flow[:, 1], 0.0, atol=1e-9)


def test_object_motion_equals_the_opposite_camera_motion():
    origins, directions, per_distance = pt.pixel_rays(K, _pose())
    points = origins + directions * (5.0 / per_distance)[:, None]
    part = np.zeros(len(points), int)
    move = _pose(_rot_z(0.05), (0.2, -0.1, 0.3))
    by_object = pt.rigid_flow(K, _pose(), _pose(), points, part, move[None])
    by_camera = pt.rigid_flow(K, _pose(), np.linalg.inv(move), points, part, np.eye(4)[None])
    assert np.abs(by_object - by_camera).max() < 1e-9


def test_background_follows_the_camera_rotation_only():
    origins, directions, _ = pt.pixel_rays(K, _pose())
    part = np.full(len(origins), -1)
    # a translation moves nothing at infinity
    still = pt.rigid_flow(K, _pose(), _pose(position=(3, 2, 1)), origins, part, np.zeros((0, 4, 4)),
                          directions)
    assert np.abs(still).max() < 1e-9
    # turning about the optical axis turns the image about the principal point
    a = 0.1
    turned = pt.rigid_flow(K, _pose(), _pose(_rot_z(a)), origins, part, np.zeros((0, 4, 4)), directions)
    x = (_centres(K) - [K.cx, K.cy]) / [K.fx, K.fy]
    c, s = math.cos(a), math.sin(a)
    expected = np.stack([c * x[:, 0] + s * x[:, 1], -s * x[:, 0] + c * x[:, 1]], axis=1)
    expected = expected * [K.fx, K.fy] + [K.cx, K.cy] - _centres(K)
    assert np.abs(turned - expected).max() < 1e-9
    # without directions background flow is undefined
    assert np.isnan(pt.rigid_flow(K, _pose(), _pose(), origins, part, np.zeros((0, 4, 4)))).all()


def test_flow_of_a_moved_point_is_its_projection_with_k_minus_the_pixel_centre():
    origins, directions, per_distance = pt.pixel_rays(K, _pose())
    points = origins + directions * (3.0 / per_distance)[:, None]
    part = np.zeros(len(points), int)
    cam_u = _pose(_rot_y(0.02), (0.05, 0.01, -0.1))
    move = _pose(_rot_z(0.03), (0.1, 0.0, 0.2))
    forward = pt.rigid_flow(K, _pose(), cam_u, points, part, move[None])
    moved = points @ move[:3, :3].T + move[:3, 3]
    in_u = (moved - cam_u[:3, 3]) @ cam_u[:3, :3]
    h = in_u @ K.K.T
    assert np.abs(forward - (h[:, :2] / h[:, 2:] - _centres(K))).max() < 1e-9


def test_points_behind_the_camera_have_no_flow():
    points = np.tile([0.0, 0.0, 1.0], (K.width * K.height, 1))
    part = np.zeros(len(points), int)
    flow = pt.rigid_flow(K, _pose(), _pose(position=(0, 0, 2.0)), points, part, np.eye(4)[None])
    assert np.isnan(flow).all()


def test_transform_rows_applies_each_rows_matrix():
    rng = np.random.default_rng(3)
    mats = np.stack([_pose(_rot_z(a) @ _rot_y(b), p) for a, b, p in zip(rng.normal(size=4), rng.normal(size=4),
                                                                          rng.normal(size=(4, 3)))])
    index = np.array([0, 3, -1, 2, 1, 3])
    points = rng.normal(size=(6, 3))
    out = pt.transform_rows(mats, index, points)
    for row, k in enumerate(index):
        if k < 0:
            assert np.isnan(out[row]).all()
        else:
            assert out[row] == pytest.approx(mats[k, :3, :3] @ points[row] + mats[k, :3, 3], abs=1e-12)


def test_nocs_of_a_unit_cube_and_a_flat_box():
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    part = np.zeros(8, int)
    out = pt.nocs(corners, part, [[-0.5] * 3], [[0.5] * 3])
    half = 0.5 / math.sqrt(3.0)
    assert np.allclose(np.abs(out - 0.5), half)
    # a 2 x 1 x 0 box: scaled by its diagonal sqrt(5), shape kept, inside [0, 1]
    flat = pt.nocs(np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]]), np.array([0, -1]), [[-1, -0.5, 0]], [[1, 0.5, 0]])
    assert flat[0] == pytest.approx([0.5 + 1 / math.sqrt(5), 0.5 + 0.5 / math.sqrt(5), 0.5])
    assert np.isnan(flat[1]).all()


def test_visibility_is_visible_over_unoccluded_pixels():
    assert pt.visibility(25, 100) == 0.25
    assert pt.visibility(0, 0) == 0.0


def test_barycentric_weights_rebuild_the_point():
    rng = np.random.default_rng(7)
    a, b, c = rng.normal(size=(3, 50, 3))
    w = rng.dirichlet([1, 1, 1], size=50)
    points = w[:, :1] * a + w[:, 1:2] * b + w[:, 2:] * c
    assert np.abs(pt.barycentric(points, a, b, c) - w).max() < 1e-8


@pytest.mark.parametrize("parts", [3, 200])
def test_transform_rows_part_by_part_and_gathered_agree_with_a_loop(parts):
    """Few parts go part by part, many through one gather: both equal a per-row loop."""
    rng = np.random.default_rng(parts)
    mats = np.stack([_pose(_rot_z(a) @ _rot_y(b), p) for a, b, p in zip(rng.normal(size=parts),
                                                                          rng.normal(size=parts),
                                                                          rng.normal(size=(parts, 3)))])
    index = rng.integers(-1, parts, size=500)
    points = rng.normal(size=(500, 3))
    out = pt.transform_rows(mats, index, points)
    expected = np.array([mats[k, :3, :3] @ q + mats[k, :3, 3] if k >= 0 else [np.nan] * 3
                         for k, q in zip(index, points)])
    assert np.allclose(out, expected, atol=1e-12, equal_nan=True)
    assert pt.rows_times(points, mats[0, :3, :3]) == pytest.approx(points @ mats[0, :3, :3])
