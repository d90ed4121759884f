"""IMU readings against analytic motions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sensors.imu import angular_velocity_body, second_derivative, simulate_imu

G = 9.81
SQ = math.sqrt(0.5)


def spin_about_z(w, t, phase=0.0):
    """Quaternions (F, 4) of a body turning at w rad/s about world/body z."""
    half = 0.5 * (w * t + phase)
    return np.c_[np.cos(half), np.zeros_like(t), np.zeros_like(t), np.sin(half)]


def test_at_rest_reads_plus_g_and_zero_rate():
    t = np.linspace(0, 1, 101)
    imu = simulate_imu(t, np.tile([1.0, 2.0, 0.5], (101, 1)), np.tile([1.0, 0, 0, 0], (101, 1)), 200)
    assert imu.time.shape == (201,)
    np.testing.assert_allclose(imu.time, np.arange(201) / 200, atol=1e-15)
    np.testing.assert_allclose(imu.specific_force, np.tile([0, 0, G], (201, 1)), atol=1e-9)
    np.testing.assert_allclose(imu.angular_velocity, 0, atol=1e-12)


def test_at_rest_tilted():
    # Body turned +90 deg about x: its +y axis points up, so the accelerometer reads +g on +y.
    t = np.linspace(0, 1, 11)
    imu = simulate_imu(t, np.zeros((11, 3)), np.tile([SQ, SQ, 0, 0], (11, 1)), 10)
    np.testing.assert_allclose(imu.specific_force, np.tile([0, G, 0], (11, 1)), atol=1e-9)


def test_spinning_body_with_lever_arm():
    w, r = 2.0, 0.5
    t = np.arange(0, 2.0 + 1e-12, 1e-3)
    imu = simulate_imu(t, np.zeros((len(t), 3)), spin_about_z(w, t), 200, mount_position=[r, 0, 0])
    # Rate about z; centripetal w^2 r towards the axis, i.e. along the sensor's -x.
    np.testing.assert_allclose(imu.angular_velocity, np.tile([0, 0, w], (len(imu.time), 1)), atol=1e-12)
    # Central second difference: relative error (w h)^2 / 12 ~ 3e-7; one-sided ends ~ 11/12 (w h)^2.
    expected = np.tile([-w * w * r, 0, G], (len(imu.time), 1))
    np.testing.assert_allclose(imu.specific_force[1:-1], expected[1:-1], rtol=0, atol=2e-6)
    np.testing.assert_allclose(imu.specific_force, expected, rtol=0, atol=1e-5)


def test_rotated_mount_sees_rotated_readings():
    # Sensor turned +90 deg about body z: sensor x = body y, sensor y = body -x.
    w, r = 2.0, 0.5
    t = np.arange(0, 1.0 + 1e-12, 1e-3)
    q_mount = [SQ, 0, 0, SQ]
    imu = simulate_imu(t, np.zeros((len(t), 3)), spin_about_z(w, t), 100, [r, 0, 0], q_mount)
    np.testing.assert_allclose(imu.specific_force[50], [0, w * w * r, G], atol=1e-5)
    np.testing.assert_allclose(imu.angular_velocity[50], [0, 0, w], atol=1e-12)
    # Body rolling about its x axis: the sensor sees the rate on its -y axis.
    q_roll = np.c_[np.cos(0.5 * w * t), np.sin(0.5 * w * t), 0 * t, 0 * t]
    imu = simulate_imu(t, np.zeros((len(t), 3)), q_roll, 100, [0, 0, 0], q_mount)
    np.testing.assert_allclose(imu.angular_velocity, np.tile([0, -w, 0], (len(imu.time), 1)), atol=1e-12)


def test_free_fall_reads_zero_while_tumbling():
    t = np.linspace(0, 1, 501)
    p = np.array([0, 0, 100.0]) + np.outer(t, [1.0, -2.0, 3.0]) + 0.5 * np.outer(t * t, [0, 0, -G])
    # Tumbling about a fixed axis through the sensor (mount at the body origin).
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    half = 0.5 * 3.0 * t
    q = np.c_[np.cos(half), np.sin(half)[:, None] * axis]
    imu = simulate_imu(t, p, q, 100)
    np.testing.assert_allclose(imu.specific_force, 0, atol=1e-8)
    np.testing.assert_allclose(imu.angular_velocity, np.tile(3.0 * axis, (101, 1)), atol=1e-12)


def test_constant_acceleration_in_rotated_body():
    # World acceleration +1 m/s^2 along x; body yawed +90 deg (body x = world y, body y = world -x).
    t = np.linspace(0, 2, 201)
    p = 0.5 * np.outer(t * t, [1.0, 0, 0])
    imu = simulate_imu(t, p, np.tile([SQ, 0, 0, SQ], (201, 1)), 50)
    np.testing.assert_allclose(imu.specific_force, np.tile([0, -1.0, G], (101, 1)), atol=1e-9)


def test_time_varying_rate_has_the_central_difference_error():
    # Yaw angle b t^3 about z: rate 3 b t^2. A central difference of a cubic errs by exactly
    # theta''' h^2 / 6 = b h^2 (and the one-sided three-point ends by twice that).
    b = 2.0
    for h in (1e-2, 5e-3):
        t = np.arange(0, 1.0 + 1e-12, h)
        q = np.c_[np.cos(0.5 * b * t**3), 0 * t, 0 * t, np.sin(0.5 * b * t**3)]
        w = angular_velocity_body(t, q)
        np.testing.assert_allclose(w[1:-1, 2] - 3 * b * t[1:-1] ** 2, b * h * h, rtol=1e-6)
        np.testing.assert_allclose(np.abs(w[[0, -1], 2] - 3 * b * t[[0, -1]] ** 2), 2 * b * h * h, rtol=1e-6)
        np.testing.assert_allclose(w[:, :2], 0, atol=1e-12)


def test_second_derivative_exact_for_parabolas_on_uneven_steps():
    t = np.cumsum(np.random.default_rng(0).uniform(0.01, 0.05, 40))
    f = np.c_[3 * t * t - t + 2, -0.5 * t * t]
    np.testing.assert_allclose(second_derivative(t, f), np.tile([6.0, -1.0], (40, 1)), atol=1e-7)
    # Cubics on uniform steps, end samples included: f'' = 6 t.
    t = np.linspace(0, 1, 21)
    np.testing.assert_allclose(second_derivative(t, (t**3)[:, None])[:, 0], 6 * t, atol=1e-9)


def test_quaternion_sign_flips_do_not_matter():
    t = np.arange(0, 1.0 + 1e-12, 1e-2)
    q = spin_about_z(1.5, t)
    q[::3] *= -1  # same orientations, alternating signs
    imu = simulate_imu(t, np.zeros((len(t), 3)), q, None)
    np.testing.assert_allclose(imu.angular_velocity[:, 2], 1.5, atol=1e-12)
    np.testing.assert_array_equal(imu.time, t)


def test_resampling_window_and_errors():
    t = np.linspace(0, 1, 11)
    p, q = np.zeros((11, 3)), np.tile([1.0, 0, 0, 0], (11, 1))
    imu = simulate_imu(t, p, q, 30, t_start=0.25, t_end=0.75)
    np.testing.assert_allclose(imu.time, 0.25 + np.arange(16) / 30)
    assert imu.as_array().shape == (16, 7)
    with pytest.raises(ValueError):
        simulate_imu(t[:2], p[:2], q[:2], 10)
    with pytest.raises(ValueError):
        simulate_imu(t[::-1], p, q, 10)
    with pytest.raises(ValueError):
        simulate_imu(t, p, q, 10, t_end=2.0)
    with pytest.raises(ValueError):
        simulate_imu(t, p[:, :2], q, 10)
