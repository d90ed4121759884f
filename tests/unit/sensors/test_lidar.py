"""Spinning lidar pattern, timing and hit points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sensors.lidar import LidarPattern, hits_to_points


@pytest.fixture
def vlp16():
    return LidarPattern.symmetric(16, 1800, 30.0, update_rate_hz=10.0)


def test_ray_count_unit_length_and_fov(vlp16):
    d = vlp16.ray_directions()
    assert d.shape == (28800, 3) and vlp16.num_rays == 28800
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-15)
    el = vlp16.elevations_deg()
    assert el[0] == -15.0 and el[-1] == 15.0  # exactly the FOV limits
    np.testing.assert_allclose(np.diff(el), 2.0)
    # Elevations recovered from the unit vectors span the FOV.
    el_rays = np.degrees(np.arcsin(d[:, 2]))
    assert el_rays.min() == pytest.approx(-15, abs=1e-12) and el_rays.max() == pytest.approx(15, abs=1e-12)
    assert len(np.unique(np.round(el_rays, 9))) == 16


def test_full_circle_azimuths(vlp16):
    az = vlp16.azimuths_deg()
    assert az.shape == (1800,) and az[0] == -180.0
    np.testing.assert_allclose(np.diff(az), 0.2)
    assert az[-1] < 180.0  # no duplicate at the seam
    d = vlp16.ray_directions()
    az_rays = np.degrees(np.arctan2(d[:, 1], d[:, 0]))
    assert len(np.unique(np.round(az_rays % 360, 6))) == 1800


def test_direction_convention():
    # 4 columns at -180, -90, 0, 90 deg; one horizontal channel.
    d = LidarPattern(1, 4, 0, 0).ray_directions()
    np.testing.assert_allclose(d, [[-1, 0, 0], [0, -1, 0], [1, 0, 0], [0, 1, 0]], atol=1e-15)
    # Two channels at -90/+90 deg: straight down then straight up, ring 0 lowest.
    d = LidarPattern(2, 1, -90, 90).ray_directions()
    np.testing.assert_allclose(d, [[0, 0, -1], [0, 0, 1]], atol=1e-15)


def test_partial_fov_and_single_channel():
    p = LidarPattern(1, 3, -10, 20, horizontal_fov_deg=90)
    np.testing.assert_array_equal(p.azimuths_deg(), [-45, 0, 45])
    np.testing.assert_array_equal(p.elevations_deg(), [5])  # middle of the FOV
    assert not p.full_circle


def test_ray_order_rings_and_columns(vlp16):
    rings, cols = vlp16.ray_rings(), vlp16.ray_columns()
    assert rings[:17].tolist() == list(range(16)) + [0]
    assert cols[:17].tolist() == [0] * 16 + [1]
    d = vlp16.ray_directions()
    el = np.degrees(np.arcsin(d[:, 2]))
    np.testing.assert_allclose(el, -15 + 2 * rings, atol=1e-12)


def test_timestamps(vlp16):
    t = vlp16.ray_times(t0=5.0)
    assert t[0] == 5.0
    assert np.all(np.diff(t) >= 0)  # monotone in firing order
    assert t.max() < 5.0 + 0.1  # one revolution takes 1/10 s
    np.testing.assert_allclose(t.max(), 5.0 + 0.1 - 0.1 / 1800)
    # All channels of a column fire together.
    assert np.all(t.reshape(1800, 16) == t.reshape(1800, 16)[:, :1])
    # Azimuth grows with time: the head turns counter-clockwise.
    az = vlp16.azimuths_deg()
    assert np.all(np.diff(az) > 0)


def test_window_over_one_revolution_fires_every_ray_once(vlp16):
    fired = vlp16.rays_in_window(0.0, 0.1)
    assert sorted(fired.ray_index.tolist()) == list(range(28800))
    np.testing.assert_allclose(fired.time, vlp16.ray_times()[fired.ray_index])
    assert np.all(fired.revolution == 0)


def test_frame_windows_partition_the_firings(vlp16):
    fps = 24.0
    windows = [vlp16.rays_in_window(f / fps, (f + 1) / fps) for f in range(24)]
    times = np.concatenate([w.time for w in windows])
    # One second at 10 Hz: ten revolutions, each ray exactly ten times, never twice at one time.
    assert len(times) == 10 * 28800
    assert np.all(np.diff(times) >= 0)
    idx = np.concatenate([w.ray_index for w in windows])
    assert np.all(np.bincount(idx, minlength=28800) == 10)
    for f, w in enumerate(windows):
        assert np.all((w.time >= f / fps - 1e-12) & (w.time < (f + 1) / fps))


def test_window_edges_are_half_open(vlp16):
    # Column 1800 (revolution 1, column 0) fires at exactly 0.1 s.
    before = vlp16.rays_in_window(0.05, 0.1)
    after = vlp16.rays_in_window(0.1, 0.15)
    assert before.time.max() < 0.1
    assert after.time[0] == pytest.approx(0.1) and after.revolution[0] == 1
    assert after.ray_index[:16].tolist() == list(range(16))
    # Scan start offset and a window before it.
    early = vlp16.rays_in_window(0.95, 1.0, scan_start=1.0)
    # The last half revolution before the scan start: columns 900..1799 of revolution -1.
    assert np.all(early.revolution == -1) and len(early.time) == 16 * 900
    assert early.ray_index[0] == 900 * 16 and early.ray_index[-1] == 28799
    assert len(vlp16.rays_in_window(0.3, 0.3).ray_index) == 0
    with pytest.raises(ValueError):
        vlp16.rays_in_window(0.2, 0.1)


def test_hits_to_points():
    d = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0.6, 0.8, 0], [0, 0, -1.0], [1, 0, 0]])
    dist = np.array([2.0, np.inf, 0.05, 10.0, np.nan, 120.0])
    pts, valid = hits_to_points(d, dist, min_range=0.1, max_range=100.0)
    assert valid.tolist() == [True, False, False, True, False, False]
    np.testing.assert_allclose(pts[0], [2, 0, 0])
    np.testing.assert_allclose(pts[3], [6, 8, 0])
    assert np.all(np.isnan(pts[~valid]))
    dense, _ = hits_to_points(d, dist, min_range=0.1, max_range=100.0, keep_misses=False)
    np.testing.assert_allclose(dense, [[2, 0, 0], [6, 8, 0]])
    # max_range 0 is the records' "unset": no upper limit; range limits are inclusive.
    _, valid = hits_to_points(d, dist, min_range=0.05, max_range=0)
    assert valid.tolist() == [True, False, True, True, False, True]
    with pytest.raises(ValueError):
        hits_to_points(d, dist[:3])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(channels=0, samples_per_revolution=10, vertical_fov_min_deg=0, vertical_fov_max_deg=0),
        dict(channels=4, samples_per_revolution=10, vertical_fov_min_deg=10, vertical_fov_max_deg=-10),
        dict(channels=4, samples_per_revolution=10, vertical_fov_min_deg=-95, vertical_fov_max_deg=0),
        dict(channels=4, samples_per_revolution=10, vertical_fov_min_deg=0, vertical_fov_max_deg=0,
             horizontal_fov_deg=400),
        dict(channels=4, samples_per_revolution=10, vertical_fov_min_deg=0, vertical_fov_max_deg=0,
             update_rate_hz=0),
        dict(channels=2.5, samples_per_revolution=10, vertical_fov_min_deg=0, vertical_fov_max_deg=0),
    ],
)
def test_bad_patterns_rejected(kwargs):
    with pytest.raises(ValueError):
        LidarPattern(**kwargs)


def test_periods():
    p = LidarPattern.symmetric(32, 2048, 40, update_rate_hz=20)
    assert p.period_s == 0.05 and p.column_period_s == pytest.approx(0.05 / 2048)
    assert math.isclose(p.vertical_fov_min_deg, -20) and math.isclose(p.vertical_fov_max_deg, 20)
