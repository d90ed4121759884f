"""Height maps, collision groups, stacking and the documented example scene."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.scenes import ALL, ground, header, obj, scene_from
from rscene_addon.formats import rscene
from rscene_addon.sim import World, simulate
from rscene_addon.base.spatial import quat_rotate
from tests.corpus import require_corpus

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")

EXAMPLE = "/work/shared/corpus/rscene/docs-examples/RsceneFile_example.rscene"


def _terrain(nx, ny, xs, ys, cz, H, path="/World/Terrain"):
    heights = ",".join(repr(float(h)) for h in np.asarray(H).ravel())
    return f"terrain_region {path} {nx} {ny} {xs} {ys} 0 0 {cz} heights={heights}"


def test_sphere_in_height_map_valley_and_box_on_plateau_rest_without_drift():
    # heights[y * nx + x]: a V valley along y (z = 0.2 |x|) next to a flat plateau at z = 0.6 for x >= 3
    nx, ny = 13, 5
    xs = np.linspace(-3.0, 3.0, nx)
    H = np.tile(np.where(xs >= 2.0, 0.6, 0.2 * np.abs(xs)), (ny, 1))
    H[:, xs >= 2.0] = 0.4
    r = 0.2
    z_ball = r * math.sqrt(1 + 0.2 ** 2)  # touching both flanks: r / cos(atan 0.2)
    lines = header(dt=0.005, sleeping=False) + [
        _terrain(nx, ny, 6, 4, 0.0, H),
        obj("/World/Ball", "sphere", pos=(0, 0.1, z_ball), radius=r),
        obj("/World/Box", "box", pos=(2.6, -0.3, 0.4 + 0.15), scale=(0.3, 0.4, 0.3)),
    ]
    world = World.from_scene(scene_from(lines))
    p0 = world.origin_positions().copy()
    for _ in range(1000):  # 5 s
        world.step()
    p = world.origin_positions()
    assert np.abs(p - p0).max() < 1e-4
    assert p[1, 2] == pytest.approx(z_ball, abs=1e-4)
    assert p[2, 2] == pytest.approx(0.55, abs=1e-4)


def test_group_mask_rule_lets_a_pair_pass_through():
    lines = header(dt=0.002) + [
        ground(),
        obj("/World/Table", "box", pos=(0, 0, 0.5), mode="static"),  # group 1
        # group 2, mask without bit 0: the table (group 1) is not in its mask -> passes through
        obj("/World/Ghost", "sphere", pos=(0, 0, 2), radius=0.1, group=2, mask=ALL ^ 1),
        obj("/World/Solid", "sphere", pos=(0.2, 0.2, 2), radius=0.1),
        # the table's own mask may also exclude a group: this one's group 4 is not in the table's mask
        obj("/World/Table2", "box", pos=(3, 0, 0.5), mode="static", mask=ALL ^ 4),
        obj("/World/Ghost2", "sphere", pos=(3, 0, 2), radius=0.1, group=4),
    ]
    tr = simulate(scene_from(lines), 1.2, 30)
    z = dict(zip(tr.names.tolist(), tr.position[-1, :, 2]))
    assert z["/World/Ghost"] == pytest.approx(0.1, abs=1e-3)  # on the ground, under the table
    assert z["/World/Ghost2"] == pytest.approx(0.1, abs=1e-3)
    assert z["/World/Solid"] == pytest.approx(1.1, abs=1e-3)  # on the table


def test_terrain_group_is_bit_63():
    H = np.zeros((3, 3))
    lines = header(dt=0.002) + [
        _terrain(3, 3, 4, 4, 0.0, H),
        obj("/World/Through", "sphere", pos=(0, 0, 0.5), radius=0.1, mask=ALL ^ (1 << 63)),
        obj("/World/On", "sphere", pos=(1, 0, 0.5), radius=0.1),
    ]
    tr = simulate(scene_from(lines), 0.6, 30)
    z = dict(zip(tr.names.tolist(), tr.position[-1, :, 2]))
    assert z["/World/Through"] < -0.5
    assert z["/World/On"] == pytest.approx(0.1, abs=1e-3)


def test_stack_of_five_boxes_stays_standing():
    lines = header(dt=1 / 240, sleeping=False) + [ground()] + [
        obj(f"/World/B{i}", "box", pos=(0.01 * i, 0, 0.25 + 0.5 * i), scale=(0.5, 0.5, 0.5))
        for i in range(5)]
    tr = simulate(scene_from(lines), 2.0, 24)
    assert np.abs(tr.position[-1] - tr.position[0]).max() < 1e-3
    # still upright: the box z axis stays vertical
    up = quat_rotate(tr.quaternion[-1], np.array([0.0, 0.0, 1.0]))
    assert np.all(up[:, 2] > 0.9999)


def _terrain_envelope(xs_grid, ys_grid, Hz, x, y):
    """Lower envelope of the two possible triangulations of a sampled height map at (x, y)."""
    i = np.clip(np.searchsorted(xs_grid, x) - 1, 0, len(xs_grid) - 2)
    j = np.clip(np.searchsorted(ys_grid, y) - 1, 0, len(ys_grid) - 2)
    u = (x - xs_grid[i]) / (xs_grid[i + 1] - xs_grid[i])
    v = (y - ys_grid[j]) / (ys_grid[j + 1] - ys_grid[j])
    z00, z10, z01, z11 = Hz[j, i], Hz[j, i + 1], Hz[j + 1, i], Hz[j + 1, i + 1]
    a = np.where(u >= v, z00 + u * (z10 - z00) + v * (z11 - z10), z00 + v * (z01 - z00) + u * (z11 - z01))
    b = np.where(u + v <= 1, z00 + u * (z10 - z00) + v * (z01 - z00),
                 z11 + (1 - u) * (z01 - z11) + (1 - v) * (z10 - z11))
    return np.minimum(a, b)


def test_documented_example_settles_above_the_terrain():
    require_corpus(EXAMPLE)
    scene = rscene.read(EXAMPLE)
    tr = simulate(scene, 3.0, 30)
    assert tr.names.tolist() == ["/World/Crate", "/World/Ball"]
    assert np.all(np.isfinite(tr.position))
    # the documented grid: 3x3 samples over 4 m x 4 m centred at the origin
    g = np.array([-2.0, 0.0, 2.0])
    Hz = np.array([0.3, 0.15, 0.3, 0.15, 0, 0.15, 0.3, 0.15, 0.3]).reshape(3, 3)
    crate, ball = tr.position[-1]
    q = tr.quaternion[-1, 0]
    corners = np.array([[sx, sy, sz] for sx in (-0.25, 0.25) for sy in (-0.25, 0.25) for sz in (-0.25, 0.25)])
    cw = quat_rotate(np.broadcast_to(q, (8, 4)), corners) + crate
    assert np.all(cw[:, 2] >= _terrain_envelope(g, g, Hz, cw[:, 0], cw[:, 1]) - 2e-3)
    # the ball: its lowest point above the surface below it (sampled over its footprint)
    ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    for rho in (0.0, 0.05, 0.1, 0.15):
        x, y = ball[0] + rho * np.cos(ang), ball[1] + rho * np.sin(ang)
        surface = _terrain_envelope(g, g, Hz, x, y)
        assert np.all(ball[2] - np.sqrt(max(0.15 ** 2 - rho ** 2, 0.0)) >= surface - 2e-3)
    # both came to rest inside the bowl
    assert np.linalg.norm(tr.linear_velocity[-1], axis=1).max() < 0.05
    assert np.all(np.abs(tr.position[-1, :, :2]) < 2.0)
    assert crate[2] < 1.0 and ball[2] < 1.0
