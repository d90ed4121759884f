"""Ideal IMU readings from a sampled rigid-body trajectory.

Inputs: sample times ``t`` ``(F,)`` (s, strictly increasing, ``F >= 3``), body positions ``(F, 3)``
(m, world) and body orientations ``(F, 4)`` (``w, x, y, z``, body-to-world). The IMU is mounted at
``mount_position`` (m, body frame) with orientation ``mount_quaternion`` (sensor-to-body).

Outputs, in the sensor frame, sampled at ``rate_hz``:

* specific force ``f = R_ws^T (a_ws - g)`` (m/s^2), where ``a_ws`` is the world acceleration of the
  sensor *point* and ``R_ws`` the world-from-sensor rotation. A body at rest reads ``-g`` (``+9.81``
  on ``+z`` for ``g = (0, 0, -9.81)`` and an upright sensor); free fall reads ``0``. Because the
  sensor point ``p + R_wb m`` is differentiated, lever-arm terms (centripetal
  ``w x (w x r)`` and tangential ``dw/dt x r``) are included.
* angular velocity ``omega_s = R_bs^T omega_b`` (rad/s), the body rate expressed in sensor axes.

Accuracy (input step ``h``): derivatives are those of the polynomial through the sample and its
neighbours, three-point central inside and one-sided with one point more at the two ends, so both
are O(h^2) on uniform steps (the central second difference errs by ``h^2/12`` times the fourth
derivative); where the step size changes the second difference drops to O(h). Angular velocity
differentiates the rotation vectors ``Log(q_i^-1 q_j)`` of the neighbours, which is exact for a
constant body rate and needs less than half a turn between neighbouring samples. Resampling
interpolates linearly (orientation by slerp), adding O(h^2); readings are instantaneous (no
band-limiting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..base.spatial import quat_conjugate, quat_multiply, quat_normalize, quat_rotate, quat_slerp, quat_to_matrix

__all__ = ["STANDARD_GRAVITY", "ImuReadings", "angular_velocity_body", "second_derivative", "simulate_imu"]

STANDARD_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class ImuReadings:
    """IMU samples: ``time`` ``(M,)`` (s), ``specific_force`` ``(M, 3)`` (m/s^2) and
    ``angular_velocity`` ``(M, 3)`` (rad/s), both in the sensor frame."""

    time: np.ndarray
    specific_force: np.ndarray
    angular_velocity: np.ndarray

    def as_array(self) -> np.ndarray:
        """``(M, 7)``: time, specific force xyz, angular velocity xyz (the CSV column order)."""
        return np.column_stack([self.time, self.specific_force, self.angular_velocity])


def _stencils(count: int, order: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(rows, stencil)`` pairs: the 3-point central stencil inside, and at each end the
    ``order + 2`` nearest samples (one-sided stencils need one point more for O(h^2))."""
    if count < 3:
        raise ValueError(f"need at least 3 samples to differentiate, got {count}")
    rows = np.arange(1, count - 1)
    width = min(order + 2, count)
    ends = np.array([np.arange(width), np.arange(count - width, count)])
    return [(rows, np.stack([rows - 1, rows, rows + 1], axis=1)), (np.array([0, count - 1]), ends)]


def _derivative_weights(t, rows, stencil, order: int) -> np.ndarray:
    """Weights ``(n, k)`` with ``sum_j w[i, j] f(t[stencil[i, j]]) = f^(order)(t[rows[i]])`` for
    every polynomial of degree < k: the derivative of the interpolating polynomial."""
    dx = t[stencil] - t[rows][:, None]
    scale = np.ptp(dx, axis=1, keepdims=True)  # unit-size nodes keep the Vandermonde well conditioned
    k = stencil.shape[1]
    vandermonde_t = (dx / scale)[:, None, :] ** np.arange(k)[None, :, None]
    rhs = np.zeros((len(rows), k, 1))
    rhs[:, order] = math.factorial(order)
    return np.linalg.solve(vandermonde_t, rhs)[..., 0] / scale**order


def second_derivative(t, values) -> np.ndarray:
    """Second time derivative ``(F, ...)`` of ``values`` ``(F, ...)`` sampled at ``t`` ``(F,)``, F >= 3.

    Central three-point difference inside (for uneven steps: the parabola through the sample and
    its neighbours), one-sided four-point at the two ends; exact for cubics on uniform steps.
    """
    t = np.asarray(t, dtype=np.float64)
    f = np.asarray(values, dtype=np.float64)
    out = np.empty_like(f)
    for rows, stencil in _stencils(len(t), 2):
        out[rows] = np.einsum("ij,ij...->i...", _derivative_weights(t, rows, stencil, 2), f[stencil])
    return out


def _rotation_vector(q) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` (rad) of unit quaternions ``(..., 4)``, shortest arc."""
    q = np.where(q[..., :1] < 0.0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    # angle / s -> 2 / w as s -> 0; both forms agree to rounding for s < 1e-12.
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0 / q[..., :1])
    return scale * v


def angular_velocity_body(t, quaternions) -> np.ndarray:
    """Body-frame angular velocity ``(F, 3)`` (rad/s) from orientations ``(F, 4)`` at ``t`` ``(F,)``.

    Around each sample ``q_i`` the neighbours become rotation vectors ``Log(q_i^-1 q_j)`` (body
    frame, 0 at ``t_i``), whose time derivative at ``t_i`` is the body rate; it is taken with the
    same stencils as :func:`second_derivative` (3-point central, 3-point one-sided at the ends).
    """
    t = np.asarray(t, dtype=np.float64)
    q = quat_normalize(quaternions)
    out = np.empty((len(t), 3))
    for rows, stencil in _stencils(len(t), 1):
        rel = quat_multiply(quat_conjugate(q[rows])[:, None, :], q[stencil])
        weights = _derivative_weights(t, rows, stencil, 1)
        out[rows] = np.einsum("ij,ijk->ik", weights, _rotation_vector(rel))
    return out


def _interp_rows(t_out, t, values) -> np.ndarray:
    return np.stack([np.interp(t_out, t, values[:, k]) for k in range(values.shape[1])], axis=-1)


def _slerp_at(t_out, t, q) -> np.ndarray:
    i = np.clip(np.searchsorted(t, t_out, side="right") - 1, 0, len(t) - 2)
    s = (t_out - t[i]) / (t[i + 1] - t[i])
    return quat_slerp(q[i], q[i + 1], s)


def _output_times(t, rate_hz, t_start, t_end) -> np.ndarray:
    t_start = t[0] if t_start is None else float(t_start)
    t_end = t[-1] if t_end is None else float(t_end)
    if not t[0] <= t_start <= t_end <= t[-1]:
        raise ValueError(f"need {t[0]} <= t_start <= t_end <= {t[-1]}, got {t_start}, {t_end}")
    if rate_hz is None:
        return t[(t >= t_start) & (t <= t_end)]
    if not rate_hz > 0:
        raise ValueError(f"rate_hz must be positive, got {rate_hz}")
    count = int(np.floor((t_end - t_start) * rate_hz + 1e-9)) + 1
    return t_start + np.arange(count) / rate_hz


def _check_trajectory(times, positions, quaternions):
    t = np.asarray(times, dtype=np.float64)
    p = np.asarray(positions, dtype=np.float64)
    q = np.asarray(quaternions, dtype=np.float64)
    if t.ndim != 1 or len(t) < 3:
        raise ValueError(f"need at least 3 sample times (F,), got shape {t.shape}")
    if p.shape != (len(t), 3) or q.shape != (len(t), 4):
        raise ValueError(
            f"need positions (F, 3) and quaternions (F, 4) for F={len(t)}, got {p.shape}, {q.shape}"
        )
    if not np.all(np.diff(t) > 0):
        raise ValueError("sample times must be strictly increasing")
    return t, p, q


def simulate_imu(
    times,
    positions,
    quaternions,
    rate_hz: float | None,
    mount_position=(0.0, 0.0, 0.0),
    mount_quaternion=(1.0, 0.0, 0.0, 0.0),
    gravity=STANDARD_GRAVITY,
    t_start: float | None = None,
    t_end: float | None = None,
) -> ImuReadings:
    """Ideal IMU readings (see the module docstring) at ``t_start + k / rate_hz <= t_end``.

    ``t_start``/``t_end`` default to the first/last sample time; ``rate_hz=None`` reports at the
    input sample times. Noise is added separately (:mod:`.noise`).
    """
    t, p, q = _check_trajectory(times, positions, quaternions)
    mount_p = np.asarray(mount_position, dtype=np.float64)
    mount_q = quat_normalize(mount_quaternion)

    sensor_p = p + quat_rotate(quat_normalize(q), mount_p)
    accel_world = second_derivative(t, sensor_p)
    omega_body = angular_velocity_body(t, q)

    t_out = _output_times(t, rate_hz, t_start, t_end)
    q_sensor = quat_multiply(_slerp_at(t_out, t, q), mount_q)
    r_sensor = quat_to_matrix(q_sensor)  # (M, 3, 3) world-from-sensor
    accel_minus_g = _interp_rows(t_out, t, accel_world) - np.asarray(gravity, dtype=np.float64)
    specific_force = np.einsum("mji,mj->mi", r_sensor, accel_minus_g)
    angular_velocity = _interp_rows(t_out, t, omega_body) @ quat_to_matrix(mount_q)
    return ImuReadings(t_out, specific_force, angular_velocity)
