"""Cloth: a sheet drapes over a ball and rests on it (both backends), and the compiled substeps
(``kernels.cloth``) follow the numpy reference from the same state: the same formulas in the same order, so
whole runs agree to rounding (XPBD on a resting sheet is not chaotic, unlike a granular pile)."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.sim import World, kernels
from rscene_addon.sim.narrowphase import Frames
from rscene_addon.sim.sdf import geom_distance
from tests.scenes import ground, header, obj, scene_from

BALL_R, BALL_Z, CONTACT = 0.3, 0.3, 0.01


def _sheet(z=0.8, spacing=0.1, substeps=4, iterations=10, damping=0.1, extra=""):
    return (f"deformable /World/Sheet cloth - 0 0 {z} 1 0 0 0 1 1 1 totalMass=0.2 damping={damping} "
            f"collisionRadius={CONTACT} iterations={iterations} substeps={substeps} particleSpacing={spacing} "
            f"{extra}").rstrip()


def _drape_lines():
    ball = obj("/World/Ball", "sphere", pos=(0, 0, BALL_Z), radius=BALL_R, mode="static")
    return header(dt=1 / 60) + [ground(), ball, _sheet(damping=2.0)]


@pytest.mark.usefixtures("sim_backend")
def test_a_sheet_drapes_over_a_ball_and_rests_on_it():
    world = World.from_scene(scene_from(_drape_lines()))
    spec = world.model.cloth[0]
    for _ in range(150):  # 2.5 s
        world.step()
    before = world.state.cloth[0].copy()
    for _ in range(6):
        world.step()
    x = world.state.cloth[0]
    centre = np.array([0.0, 0.0, BALL_Z])
    # the vertex over the top rests on the ball: its surface plus the collision radius
    top = int(np.argmin(np.hypot(x[:, 0], x[:, 1])))
    assert np.hypot(x[top, 0], x[top, 1]) < 0.01  # the sheet stayed centred (Gauss-Seidel order drifts it mm)
    assert x[top, 2] == pytest.approx(BALL_Z + BALL_R + CONTACT, abs=1e-3)
    # nothing inside the ball or the ground
    assert np.linalg.norm(x - centre, axis=1).min() > BALL_R + CONTACT - 1e-3
    assert x[:, 2].min() > CONTACT - 1e-3
    # draped, not balanced flat (a flat sheet on the top would average 0.61 m): it hangs, part of it below
    # the ball's equator (a square cannot fit a sphere: it folds, so not every corner hangs as low)
    assert x[:, 2].mean() < 0.45 and x[:, 2].min() < BALL_Z
    # inextensible enough: the edges within 6% of their rest lengths
    stretch = np.linalg.norm(x[spec.edges[:, 0]] - x[spec.edges[:, 1]], axis=1) / spec.rest
    assert stretch.max() < 1.06 and stretch.min() > 0.9
    # at rest: under 1 cm/s on average over the last 0.1 s (it fell at 2 m/s)
    speed = np.linalg.norm(x - before, axis=1).mean() / 0.1
    assert speed < 0.01


numba_only = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


def _run_both(lines, steps):
    worlds = {b: World.from_scene(scene_from(lines), backend=b) for b in ("numpy", "numba")}
    out = {b: [] for b in worlds}
    for _ in range(steps):
        for b, w in worlds.items():
            w.step()
            out[b].append(w.state.cloth[0].copy())
    return worlds, {b: np.array(v) for b, v in out.items()}


@numba_only
def test_compiled_cloth_follows_numpy_over_every_shape():
    """A pinned sheet falls onto a static sphere, box, capsule and cylinder on the ground: the compiled
    substeps end every step where numpy's do (to 1e-9 m over 40 steps)."""
    lines = header(dt=1 / 120) + [
        ground(),
        obj("/World/Ball", "sphere", pos=(-0.25, -0.25, 0.15), radius=0.15, mode="static"),
        obj("/World/Box", "box", pos=(0.25, -0.25, 0.1), quat=(0.92388, 0, 0, 0.38268), scale=(0.3, 0.3, 0.2),
            mode="static"),
        obj("/World/Capsule", "capsule", pos=(-0.25, 0.25, 0.1), quat=(0.70711, 0.70711, 0, 0), radius=0.08,
            height=0.3, mode="static"),
        obj("/World/Cylinder", "cylinder", pos=(0.25, 0.25, 0.1), radius=0.1, height=0.2, mode="static"),
        _sheet(z=0.35, substeps=2, iterations=6, extra="pinnedVertices=60"),
    ]
    worlds, x = _run_both(lines, 40)
    assert worlds["numba"]._cloth[0]._tables is not None  # the compiled path ran
    assert worlds["numpy"]._cloth[0]._tables is None
    np.testing.assert_allclose(x["numba"], x["numpy"], rtol=0, atol=1e-9)
    assert np.array_equal(x["numba"][:, 60], np.broadcast_to(x["numba"][0, 60], (40, 3)))  # the pin held
    # contacts under test: the sheet touches every shape at the end
    w = worlds["numpy"]
    frames = Frames(w.model, *w.geom_poses())
    touching = [geom_distance(w.model, frames, g, x["numpy"][-1])[0].min() < CONTACT + 1e-6
                for g in range(w.model.num_geoms)]
    assert all(touching), touching


@numba_only
def test_compiled_cloth_falls_back_to_numpy_on_a_height_field():
    """The compiled distances do not cover height fields: a cloth that could meet one steps with numpy."""
    hs = ",".join(["0.0"] * 25)
    lines = header(dt=1 / 120) + [f"terrain_region /World/Terrain 5 5 2.0 2.0 0 0 0 heights={hs}",
                                  _sheet(z=0.05, substeps=2, iterations=4)]
    worlds, x = _run_both(lines, 20)
    assert worlds["numba"]._cloth[0]._tables is None
    assert np.array_equal(x["numba"], x["numpy"])
    assert abs(x["numpy"][-1][:, 2].mean() - CONTACT) < 2e-3  # it landed on the terrain
