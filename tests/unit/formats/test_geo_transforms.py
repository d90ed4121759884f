"""NED <-> scene frame, WGS84 geodesy, rotations and Euler conventions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats import geo
from rscene_addon.base import spatial as tf


def test_ned_to_model_is_a_rotation_of_pi_about_x():
    assert geo.ned_to_model((1.0, 2.0, 3.0)) == (1.0, -2.0, -3.0)
    assert geo.model_to_ned(geo.ned_to_model((4.0, -5.0, 6.0))) == (4.0, -5.0, 6.0)
    c = np.diag([1.0, -1.0, -1.0])
    q = tf.record_quat_from_rpy(0.3, -0.2, 1.1)
    expected = c @ tf.quat_to_matrix(q) @ c
    assert np.allclose(tf.quat_to_matrix(geo.quat_ned_to_model(q)), expected)


def test_yaw_in_ned_turns_the_other_way_in_the_scene():
    # NED yaw +90 deg turns north (x) to east (+y NED), which is -y in the scene.
    q = geo.quat_ned_to_model(tf.record_quat_from_rpy(0, 0, math.pi / 2))
    assert np.allclose(tf.record_rotate(q, (1, 0, 0)), (0, -1, 0), atol=1e-12)


def test_ecef_of_known_points():
    assert geo.geodetic_to_ecef(0, 0, 0) == pytest.approx((geo.WGS84_A, 0, 0))
    x, y, z = geo.geodetic_to_ecef(90, 0, 0)
    b = geo.WGS84_A * (1 - geo.WGS84_F)
    assert (x, y, z) == pytest.approx((0, 0, b), abs=1e-6)


def test_ecef_round_trip():
    for point in [(47.641468, -122.140165, 122.0), (-33.9, 151.2, -20.0), (89.5, 10.0, 1000.0)]:
        back = geo.ecef_to_geodetic(*geo.geodetic_to_ecef(*point))
        assert back == pytest.approx(point, abs=1e-7)


def test_local_ned_small_offsets_by_hand():
    home = (47.641468, -122.140165, 122.0)
    point = (47.641586, -122.14108, 106.0)  # scene_hello_gis.jsonc
    north, east, down = geo.geodetic_to_ned(point, home)
    # Radii of curvature at the home latitude.
    lat = math.radians(home[0])
    e2 = geo.WGS84_F * (2 - geo.WGS84_F)
    m = geo.WGS84_A * (1 - e2) / (1 - e2 * math.sin(lat) ** 2) ** 1.5
    n = geo.WGS84_A / math.sqrt(1 - e2 * math.sin(lat) ** 2)
    assert north == pytest.approx(math.radians(point[0] - home[0]) * (m + home[2]), abs=0.01)
    assert east == pytest.approx(math.radians(point[1] - home[1]) * (n + home[2]) * math.cos(lat), abs=0.01)
    assert down == pytest.approx(16.0, abs=0.01)
    assert geo.ned_to_geodetic((north, east, down), home) == pytest.approx(point, abs=1e-9)


def test_coppelia_euler_convention():
    # R = Rx(a) Ry(b) Rz(g): a pure beta of 90 deg turns x to -z.
    q = tf.record_quat_from_coppelia_euler(0, 90, 0)
    assert np.allclose(tf.record_rotate(q, (1, 0, 0)), (0, 0, -1), atol=1e-12)
    q = tf.record_quat_from_coppelia_euler(30, 0, 0) 
    assert np.allclose(tf.quat_to_matrix(q)[1:, 1:], [[math.cos(math.pi / 6), -0.5], [0.5, math.cos(math.pi / 6)]])
    rng = np.random.default_rng(0)
    for angles in rng.uniform(-179, 179, size=(50, 3)):
        angles[1] = angles[1] / 2.1
        q = tf.record_quat_from_coppelia_euler(*angles)
        assert np.allclose(tf.record_coppelia_euler(q), angles, atol=1e-9)
        ra, rb, rg = (math.radians(v) for v in angles)
        rx = np.array([[1, 0, 0], [0, math.cos(ra), -math.sin(ra)], [0, math.sin(ra), math.cos(ra)]])
        ry = np.array([[math.cos(rb), 0, math.sin(rb)], [0, 1, 0], [-math.sin(rb), 0, math.cos(rb)]])
        rz = np.array([[math.cos(rg), -math.sin(rg), 0], [math.sin(rg), math.cos(rg), 0], [0, 0, 1]])
        assert np.allclose(tf.quat_to_matrix(q), rx @ ry @ rz)


def test_rpy_round_trip_and_gimbal_lock():
    for rpy in [(0.1, 0.2, 0.3), (-2.0, 1.2, 3.0), (0, 0, -math.pi / 4)]:
        assert tf.record_rpy(tf.record_quat_from_rpy(*rpy)) == pytest.approx(rpy)
    q = tf.record_quat_from_rpy(0.3, math.pi / 2, 0.0)
    assert tf.same_rotation(tf.record_quat_from_rpy(*tf.record_rpy(q)), q, 1e-12)


def test_pose_algebra():
    a = ((1.0, 2.0, 3.0), tf.record_quat_from_rpy(0.1, 0.2, 0.3))
    b = ((-0.5, 0.0, 2.0), tf.record_quat_from_rpy(-0.4, 0.0, 1.0))
    ab = tf.compose(a, b)
    back = tf.relative(a, ab)
    assert np.allclose(back[0], b[0]) and tf.same_rotation(back[1], b[1], 1e-12)
    identity = tf.compose(a, tf.inverse(a))
    assert np.allclose(identity[0], 0, atol=1e-12) and tf.same_rotation(identity[1], tf.IDENTITY, 1e-12)


def test_look_at_and_z_to():
    q = tf.quat_look_at((0, 0, 0), (0, 5, 0))
    assert np.allclose(tf.record_rotate(q, (1, 0, 0)), (0, 1, 0))
    assert np.allclose(tf.record_rotate(q, (0, 0, 1)), (0, 0, 1))
    for d in [(0, 0, 1), (0, 0, -1), (1, 2, -3)]:
        q = tf.quat_from_z_to(d)
        assert np.allclose(tf.record_rotate(q, (0, 0, 1)), np.asarray(d) / np.linalg.norm(d))
