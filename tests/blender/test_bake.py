"""Simulation bake: the keyframes reproduce the trajectory, on Blender 4.5 and 5.0."""
import bpy
import numpy as np
import pytest

from rscene_addon.blender import bake, scene_import
from rscene_addon.formats import rscene
from rscene_addon.sim import simulate
from tests.corpus import EXAMPLE


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_bake_operator_keys_match_the_simulated_trajectory(blank, backend, monkeypatch):
    import rscene_addon.sim
    scene_import.import_scene_file(str(EXAMPLE), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.rscene.sim_backend = backend  # the scene panel's "Physics backend"
    used = []

    def spy(*args, **kwargs):
        used.append(kwargs.get("backend"))
        return simulate(*args, **kwargs)
    monkeypatch.setattr(rscene_addon.sim, "simulate", spy)
    result = bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13)
    assert result == {"FINISHED"}
    assert used == [backend]
    # the same scene simulated without Blender gives the same motion (deterministic core)
    expected = simulate(rscene.read(str(EXAMPLE)), 12 / 24, 24, backend=backend)
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


def test_bake_operator_keys_nothing_from_a_non_finite_trajectory(blank, monkeypatch):
    """The panel's bake refuses NaN poses as the bake and render commands do (one path for all three)."""
    import rscene_addon.sim
    scene_import.import_scene_file(str(EXAMPLE), bpy.context.scene)

    def blow_up(*args, **kwargs):
        trajectory = simulate(*args, **kwargs)
        trajectory.position[-1, 0, 2] = np.nan  # what an overflowing step leaves
        return trajectory
    monkeypatch.setattr(rscene_addon.sim, "simulate", blow_up)
    with pytest.raises(RuntimeError, match="not a finite number.*nothing baked"):  # the ERROR report
        bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=5)
    assert not [a for a in bpy.data.actions if a.get(bake.BAKE_TAG)]


def test_animated_kinematic_body_drives_the_simulation(blank, tmp_path):
    path = tmp_path / "push.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "object /World/Ground ground 0 0 0 1 0 0 0 10 10 1 0.5 1 1 default - false true false - static true 1 18446744073709551615\n"
        "object /World/Pusher box -1 0 0.25 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - kinematic true 1 18446744073709551615\n"
        "object /World/Crate box 0.5 0 0.25 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 30
    pusher = next(ob for ob in scene.objects if ob.rscene.path == "/World/Pusher")
    crate = next(ob for ob in scene.objects if ob.rscene.path == "/World/Crate")
    pusher.location = (-1.0, 0.0, 0.25)
    pusher.keyframe_insert("location", frame=1)  # two user keys, not a bake loop
    pusher.location = (0.5, 0.0, 0.25)
    pusher.keyframe_insert("location", frame=31)
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=31) == {"FINISHED"}
    scene.frame_set(31)
    assert pusher.location.x == pytest.approx(0.5)  # the user's animation is kept, not baked over
    assert crate.location.x > 0.6  # and it pushed the crate


PENDULUM_URDF = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="world"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
      <inertia ixx="0.1667" iyy="0.1667" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 -0.5"/><geometry><box size="0.05 0.05 1"/></geometry></visual>
  </link>
  <joint name="hinge" type="revolute"><parent link="world"/><child link="rod"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
</robot>
"""


def test_robot_links_are_baked_to_their_simulated_world_poses(blank, tmp_path):
    (tmp_path / "pendulum.urdf").write_text(PENDULUM_URDF)
    path = tmp_path / "robot.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "articulated_resource pendulum_res pendulum pendulum.urdf\n"
        "articulated /World/Pendulum pendulum_res 0 0 2 1 0 0 0 true true generalizedCoordinate=0.4\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 24
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13) == {"FINISHED"}
    expected = simulate(rscene.read(str(path)), 12 / 24, 24)
    i = expected.index("/World/Pendulum/rod")
    rod = next(ob for ob in bpy.data.objects if ob.get("rscene_link") == "rod")
    for frame in (1, 7, 13):
        scene.frame_set(frame)
        location, rotation, _ = rod.matrix_world.decompose()
        assert tuple(location) == pytest.approx(tuple(expected.position[frame - 1, i]), abs=1e-5)
        q = np.array(rotation)
        e = expected.quaternion[frame - 1, i]
        assert abs(abs(float(np.dot(q, e))) - 1.0) < 1e-6
    assert not np.allclose(expected.quaternion[0, i], expected.quaternion[-1, i], atol=1e-3)  # it swings


def test_cloth_is_baked_as_a_point_cache_that_plays_the_simulated_vertices(blank, tmp_path):
    path = tmp_path / "cloth.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "deformable /World/Flag cloth - 0 0 1.5 1 0 0 0 1 1 1 pinnedVertices=0,10 particleSpacing=0.1\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 24
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=9) == {"FINISHED"}
    expected = simulate(rscene.read(str(path)), 8 / 24, 24)
    cloth = expected.cloth["/World/Flag"]
    flag = next(ob for ob in scene.objects if ob.rscene.path == "/World/Flag")
    for frame in (1, 9):
        scene.frame_set(frame)
        evaluated = flag.evaluated_get(bpy.context.evaluated_depsgraph_get()).to_mesh()
        co = np.empty(len(evaluated.vertices) * 3, dtype=np.float32)
        evaluated.vertices.foreach_get("co", co)
        world = co.reshape(-1, 3) @ np.array(flag.matrix_world)[:3, :3].T + np.array(flag.matrix_world)[:3, 3]
        assert world == pytest.approx(cloth[frame - 1], abs=1e-5)
        flag.evaluated_get(bpy.context.evaluated_depsgraph_get()).to_mesh_clear()
    assert not np.allclose(cloth[0], cloth[-1], atol=1e-3)  # it moved
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}
    assert not [m for m in flag.modifiers if m.type == "MESH_CACHE"]


def test_baked_keys_are_linear_between_frames_and_rebake_replaces_them(blank):
    """Keys are written in frame order without an F-curve update: evaluation between two frames is the
    straight line between the simulated poses, and a second bake replaces the first one's keys."""
    from rscene_addon.sim.trajectory import Trajectory
    scene_import.import_scene_file(str(EXAMPLE), bpy.context.scene)
    scene = bpy.context.scene
    crate = next(ob for ob in scene.objects if ob.rscene.path == "/World/Crate")
    names = np.array(["/World/Crate"])
    F = 6
    pos = np.zeros((F, 1, 3))
    pos[:, 0, 2] = [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]  # a parabola: any smoothing would bend it
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (F, 1, 1))
    for scale in (1.0, 2.0):
        tr = Trajectory(time=np.arange(F) / 24, names=names, position=pos * scale, quaternion=quat,
                        linear_velocity=np.zeros((F, 1, 3)), angular_velocity=np.zeros((F, 1, 3)))
        assert bake.bake_trajectory(scene, tr, frame_start=3) == 1
        keys = bake.keyed_values(crate, "location", 2)
        assert keys[:, 0] == pytest.approx(np.arange(3, 3 + F))
        assert keys[:, 1] == pytest.approx(pos[:, 0, 2] * scale)
        for f in (3.5, 5.25, 7.75):
            k = f - 3
            lo = int(np.floor(k))
            expect = scale * (pos[lo, 0, 2] + (k - lo) * (pos[lo + 1, 0, 2] - pos[lo, 0, 2]))
            scene.frame_set(int(np.floor(f)), subframe=f - np.floor(f))
            assert crate.location.z == pytest.approx(expect, abs=1e-5)
    assert len([a for a in bpy.data.actions if a.get(bake.BAKE_TAG)]) == 1  # the first bake's action is gone
