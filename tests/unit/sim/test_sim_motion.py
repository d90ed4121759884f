"""Free motion, resting contact, restitution and friction against closed-form results."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.scenes import ground, header, obj, scene_from
from rscene_addon.sim import World, simulate
from rscene_addon.base.spatial import quat_from_axis_angle, quat_rotate

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")

G = 9.81


def test_free_fall_matches_half_g_t_squared():
    """Semi-implicit Euler: z_n = z0 - g dt^2 n (n + 1) / 2 exactly, i.e. 1/2 g t^2 plus g dt t / 2."""
    dt, n, z0 = 0.001, 1000, 10.0
    lines = header(dt=dt) + [obj("/World/Ball", "sphere", pos=(0, 0, z0), radius=0.1)]
    world = World.from_scene(scene_from(lines))
    for _ in range(n):
        world.step()
    t = n * dt
    z = world.origin_positions()[0, 2]
    assert z == pytest.approx(z0 - G * dt * dt * n * (n + 1) / 2, abs=1e-9)
    # error bound of the integrator against the exact parabola: g dt t / 2 (= 4.9 mm here)
    assert abs(z - (z0 - 0.5 * G * t * t)) <= 0.5 * G * dt * t + 1e-9
    assert world.state.linear_velocity[0, 2] == pytest.approx(-G * t, rel=1e-12)
    assert np.allclose(world.state.linear_velocity[0, :2], 0.0)


@pytest.mark.parametrize("sleeping,dt", [(True, 0.0025), (False, 0.01)])
def test_box_and_sphere_rest_on_ground_without_drift(sleeping, dt):
    lines = header(dt=dt, sleeping=sleeping) + [
        ground(),
        obj("/World/Box", "box", pos=(0.3, -0.2, 0.5), quat=(math.cos(0.2), 0, 0, math.sin(0.2))),
        obj("/World/Ball", "sphere", pos=(2.0, 0.0, 0.25), radius=0.25),
    ]
    world = World.from_scene(scene_from(lines))
    p0 = world.origin_positions().copy()
    for _ in range(int(round(10.0 / dt))):
        world.step()
    drift = np.abs(world.origin_positions() - p0).max()
    assert drift < 1e-4
    assert world.origin_positions()[1, 2] == pytest.approx(0.5, abs=1e-4)
    assert world.origin_positions()[2, 2] == pytest.approx(0.25, abs=1e-4)


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_restitution_bounce_height_is_e_squared_h(e):
    h, r = 1.0, 0.1
    lines = header(dt=0.001, restitution=e, rest_threshold=0.01) + [
        ground(), obj("/World/Ball", "sphere", pos=(0, 0, h + r), radius=r)]
    tr = simulate(scene_from(lines), 1.6, 500)
    z = tr.position[:, 0, 2] - r
    impact = int(np.argmin(z[:300]))  # first impact at t = sqrt(2h/g) = 0.45 s
    apex = z[impact:].max()
    assert apex == pytest.approx(e * e * h, rel=0.03)
    assert any(ev["body_b"] == "/World/Ball" and ev["speed"] == pytest.approx(math.sqrt(2 * G * h), rel=0.02)
               for ev in tr.events)


def _slope_scene(angle_deg, mu, sleeping=False):
    th = math.radians(angle_deg)
    q = quat_from_axis_angle([0.0, 1.0, 0.0], th)
    slab = -quat_rotate(q, np.array([0.0, 0.0, 0.5]))
    box = quat_rotate(q, np.array([0.0, 0.0, 0.1]))
    return scene_from(header(dt=0.002, friction=mu, sleeping=sleeping) + [
        obj("/World/Slope", "box", pos=slab, quat=q, scale=(20, 4, 1), mode="static"),
        obj("/World/Box", "box", pos=box, quat=q, scale=(0.2, 0.2, 0.2)),
    ])


@pytest.mark.parametrize("angle,mu", [(30.0, 0.3), (20.0, 0.2)])
def test_box_slides_down_slope_at_g_sin_minus_mu_cos(angle, mu):
    th = math.radians(angle)
    tr = simulate(_slope_scene(angle, mu), 1.0, 50)
    speed = np.linalg.norm(tr.linear_velocity[:, 0], axis=1)
    a = np.polyfit(tr.time[10:], speed[10:], 1)[0]
    assert a == pytest.approx(G * (math.sin(th) - mu * math.cos(th)), rel=0.01)
    # it slides straight down the slope: the slope's normal (sin, 0, cos) leans toward +x
    d = tr.position[-1, 0] - tr.position[0, 0]
    assert d[0] > 0 and d[2] < 0 and abs(d[1]) < 1e-6
    assert d[2] / d[0] == pytest.approx(-math.tan(th), rel=1e-3)


def test_box_sticks_below_the_friction_angle():
    mu = 0.6
    angle = math.degrees(math.atan(mu)) - 3.0
    tr = simulate(_slope_scene(angle, mu), 1.0, 25)
    assert np.abs(tr.position[-1, 0] - tr.position[0, 0]).max() < 1e-4
    assert np.linalg.norm(tr.linear_velocity[-1, 0]) < 1e-4
