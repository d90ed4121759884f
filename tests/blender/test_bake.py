"""Simulation bake: the keyframes reproduce the trajectory, on Blender 4.5 and 5.0."""
import bpy
import numpy as np
import pytest

from rscene_addon.blender import bake, build
from rscene_addon.formats import rscene
from rscene_addon.sim import simulate
from tests.corpus import EXAMPLE


def test_bake_operator_keys_match_the_simulated_trajectory(blank):
    build.import_scene_file(str(EXAMPLE), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 24
    result = bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13)
    assert result == {"FINISHED"}
    # the same scene simulated without Blender gives the same motion (deterministic core)
    expected = simulate(rscene.read(str(EXAMPLE)), 12 / 24, 24)
    crate = next(ob for ob in scene.objects if ob.rscene.path == "/World/Crate")
    i = expected.index("/World/Crate")
    keys = bake.keyed_values(crate, "location", 2)
    assert len(keys) == len(expected.time) == 13
    assert keys[:, 0] == pytest.approx(np.arange(1, 14))
    assert keys[:, 1] == pytest.approx(expected.position[:, i, 2], abs=1e-5)
    scene.frame_set(13)
    assert tuple(crate.location) == pytest.approx(tuple(expected.position[-1, i]), abs=1e-5)
    assert tuple(crate.rotation_quaternion) == pytest.approx(tuple(expected.quaternion[-1, i]), abs=1e-5) or \
        tuple(crate.rotation_quaternion) == pytest.approx(tuple(-expected.quaternion[-1, i]), abs=1e-5)
    # the crate falls (it starts 1 m up) and the bake is undone by clear_bake
    assert expected.position[-1, i, 2] < expected.position[0, i, 2]
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}
    assert crate.animation_data is None or crate.animation_data.action is None
    assert not [a for a in bpy.data.actions if a.get(bake.BAKE_TAG)]
