"""Robots an animator poses and drives (#23): Laikago and ANYmal C (RaiSim's own URDFs) import with one
armature each, a bone per movable joint locked to its axis and limited to the URDF's range; posing a bone
and exporting changes only that robot's generalizedCoordinate; with PD gains ANYmal C stands (passive, it
falls), a keyframed trot of its joint targets moves it forward, and the baked motion plays on the rig."""
from __future__ import annotations

import numpy as np
import pytest

import bpy

from rscene_addon.base.spatial import quat_to_matrix
from rscene_addon.blender import robots as rb
from rscene_addon.blender.bake import GAINS_KEY, bake_trajectory, current_scene_model, robot_drives
from rscene_addon.formats import registry
from rscene_addon.formats.robot_files import posed_links_for_record, read_robot_file, robot_for_record
from rscene_addon.robots.kinematics import forward_kinematics
from rscene_addon.sim import simulate
from rscene_addon.sim.link_points import lowest_point
from tests.corpus import CORPUS, require_corpus

RSC = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc"
LAIKAGO = RSC / "laikago" / "laikago.urdf"
ANYMAL_C = RSC / "anymal_c" / "urdf" / "anymal.urdf"
# RaiSim's nominal ANYmal C stance (raisimGym's anymal environment): LF, RF, LH, RH x (HAA, HFE, KFE)
ANYMAL_STANCE = [0.03, 0.4, -0.8, -0.03, 0.4, -0.8, 0.03, -0.4, 0.8, -0.03, -0.4, 0.8]
GROUND = ("object /World/Ground ground 0 0 0 1 0 0 0 20 20 1 0.5 1 1 default - false true false - static true "
          "1 18446744073709551615")
FPS, SUBSTEPS = 60, 4          # dt = 1/240 s
GAINS = (1000.0, 20.0)         # N m/rad, N m s/rad


@pytest.fixture(autouse=True)
def _corpus():
    require_corpus("robots")


def _import_robot(path):
    assert bpy.ops.import_scene.rscene_robot(filepath=str(path), add_ground=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    roots = [ob for ob in bpy.data.objects if rb.is_robot_root(ob)]
    assert len(roots) == 1
    return roots[0]


def _rest_axes(robot) -> dict:
    """Each movable joint's axis in the base frame at the zero configuration (forward kinematics)."""
    poses = forward_kinematics(robot, robot.zero_configuration())
    out = {}
    for name in robot.movable_joints():
        joint = robot.joints[name]
        frame = poses[joint.parent] @ joint.origin
        out[name] = frame[:3, :3] @ (np.asarray(joint.axis) / np.linalg.norm(joint.axis))
    return out


@pytest.mark.parametrize("path", [LAIKAGO, ANYMAL_C], ids=["laikago", "anymal_c"])
def test_one_bone_per_joint_locked_and_limited_as_the_urdf(blank, path):
    root = _import_robot(path)
    robot = read_robot_file(str(path))
    rigs = [ob for ob in root.children_recursive if ob.type == "ARMATURE"]
    assert rigs == [rb.rig_of(root)]
    rig = rigs[0]
    assert sorted(b.name for b in rig.data.bones) == sorted(robot.movable_joints()) and len(rig.data.bones) == 12
    axes = _rest_axes(robot)
    for bone in rig.pose.bones:
        joint = robot.joints[bone.name]
        assert tuple(bone.lock_rotation) == (True, False, True) and all(bone.lock_location)
        # the bone's free axis (local Y) is the joint axis
        y = np.array(rig.data.bones[bone.name].matrix_local)[:3, 1]
        np.testing.assert_allclose(y, axes[bone.name], atol=1e-6, err_msg=bone.name)
        (limit,) = [c for c in bone.constraints if c.type == "LIMIT_ROTATION"]
        assert limit.use_limit_y and not limit.use_limit_x and not limit.use_limit_z
        assert (limit.min_y, limit.max_y) == pytest.approx((joint.lower, joint.upper), rel=1e-6), bone.name
        # the link below the joint hangs from its bone
        link = rb.link_objects(root)[joint.child]
        assert link.parent == rig and link.parent_type == "BONE" and link.parent_bone == bone.name


def test_a_posed_bone_moves_the_links_as_forward_kinematics(blank):
    root = _import_robot(ANYMAL_C)
    robot = rb.robot_of(root)
    rig = rb.rig_of(root)
    rig.pose.bones["LF_KFE"].rotation_euler[1] = -1.1
    rig.pose.bones["RH_HFE"].rotation_euler[1] = 0.7
    bpy.context.view_layer.update()
    q = np.array(rb.joint_values(root))
    order = robot.joint_order
    assert q[7 + order.index("LF_KFE")] == pytest.approx(-1.1, abs=1e-6)
    assert q[7 + order.index("RH_HFE")] == pytest.approx(0.7, abs=1e-6)
    for name, pose in forward_kinematics(robot, q).items():
        np.testing.assert_allclose(np.array(rb.link_objects(root)[name].matrix_world), pose, atol=1e-5,
                                   err_msg=name)


def _gc_of(text: str, path: str) -> np.ndarray:
    """The generalizedCoordinate field of the record at ``path``, read from the file text (not our reader)."""
    line = next(line for line in text.splitlines() if line.startswith(f"articulated {path} "))
    field = next(word for word in line.split() if word.startswith("generalizedCoordinate="))
    return np.array([float(v) for v in field.split("=", 1)[1].split(",")])


def test_posing_a_bone_exports_only_that_robots_coordinate(blank, tmp_path):
    from rscene_addon.blender.extract import export_scene
    from rscene_addon.blender.scene_import import import_scene_file
    laikago_gc = [0, 0, 0.5, 1, 0, 0, 0] + [0.1, 0.7, -1.3, -0.1, 0.6, -1.2, 0.05, 0.8, -1.4, -0.05, 0.5, -1.1]
    anymal_gc = [2, 0, 0.55, 1, 0, 0, 0] + ANYMAL_STANCE
    path = tmp_path / "two.rscene"
    path.write_text("\n".join([
        "raisim_engine_scene 2", "time_step 0.004",
        f"articulated_resource laikago_res Laikago {LAIKAGO}",
        f"articulated_resource anymal_res Anymal {ANYMAL_C}",
        "articulated /World/Laikago laikago_res 0 0 0.5 1 0 0 0 true true generalizedCoordinate="
        + ",".join(map(repr, map(float, laikago_gc))),
        "articulated /World/Anymal anymal_res 2 0 0.55 1 0 0 0 true true generalizedCoordinate="
        + ",".join(map(repr, map(float, anymal_gc))),
        GROUND]) + "\n")
    import_scene_file(str(path), bpy.context.scene)
    roots = {ob.rscene.path: ob for ob in bpy.data.objects if rb.is_robot_root(ob)}
    assert all(rb.rig_of(root) is not None for root in roots.values()) and len(roots) == 2
    unedited = tmp_path / "unedited.rscene"
    export_scene(bpy.context.scene, str(unedited))
    assert unedited.read_text() == path.read_text()

    anymal = roots["/World/Anymal"]
    index = 7 + rb.robot_of(anymal).joint_order.index("LF_KFE")
    rb.rig_of(anymal).pose.bones["LF_KFE"].rotation_euler[1] = -1.25   # what Pose Mode does
    posed = tmp_path / "posed.rscene"
    export_scene(bpy.context.scene, str(posed))
    before, after = path.read_text().splitlines(), posed.read_text().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    assert after[changed[0]].startswith("articulated /World/Anymal ")
    gc = _gc_of(posed.read_text(), "/World/Anymal")
    expected = np.array(anymal_gc, dtype=float)
    expected[index] = -1.25
    np.testing.assert_allclose(gc, expected, atol=1e-6)
    assert np.count_nonzero(gc != np.array(anymal_gc)) == 1
    np.testing.assert_array_equal(_gc_of(posed.read_text(), "/World/Laikago"), laikago_gc)


# -- driven by PD -------------------------------------------------------------------------------------


def _standing_anymal(tmp_path):
    """ANYmal C in RaiSim's nominal stance with its lowest collision shape on the ground, as a scene file
    (the stance placed by forward kinematics, independent of Blender)."""
    scene = registry.read_scene(str(ANYMAL_C))
    record = next(iter(scene.of("articulated")))
    robot = robot_for_record(scene, record)
    gc = [0.0, 0.0, 0.6, 1.0, 0.0, 0.0, 0.0] + ANYMAL_STANCE
    record.set("generalizedCoordinate", gc)
    gc[2] -= lowest_point(robot, posed_links_for_record(scene, record, robot))
    path = tmp_path / "anymal.rscene"
    path.write_text("\n".join([
        "raisim_engine_scene 2", f"time_step {1.0 / (FPS * SUBSTEPS)!r}",
        f"articulated_resource anymal_res Anymal {ANYMAL_C}",
        f"articulated /World/Anymal anymal_res {gc[0]} {gc[1]} {gc[2]} 1 0 0 0 true true "
        "generalizedCoordinate=" + ",".join(map(repr, gc)), GROUND]) + "\n")
    from rscene_addon.blender.scene_import import import_scene_file
    import_scene_file(str(path), bpy.context.scene)
    bl_scene = bpy.context.scene
    bl_scene.render.fps, bl_scene.render.fps_base = FPS, 1.0
    root = next(ob for ob in bpy.data.objects if rb.is_robot_root(ob))
    return root, gc[2]


def _base_track(trajectory, name="/World/Anymal/base"):
    return trajectory.position[:, trajectory.index(name)]


STAND_SECONDS = 5


def test_pd_gains_stand_passive_falls_and_the_bake_plays_on_the_rig(blank, tmp_path):
    """5 s on the compiled robot step (where numba imports; numpy otherwise). With gains and no keys the robot holds its
    start: the base stays within 2 cm of its start height; passive, the same robot sinks more than 5 cm
    within 0.5 s. The bake keys the rig: at every frame each link is where the simulator put it."""
    root, start_height = _standing_anymal(tmp_path)
    bl_scene = bpy.context.scene
    bl_scene.frame_set(1)
    model = current_scene_model(bl_scene)
    assert robot_drives(bl_scene, 1, 31) == {}          # no gains: passive, as before
    passive = simulate(model, 0.5, FPS, substeps=SUBSTEPS)
    assert _base_track(passive)[:, 2].min() < start_height - 0.05

    root[GAINS_KEY] = list(GAINS)
    drives = robot_drives(bl_scene, 1, STAND_SECONDS * FPS + 1)
    assert list(drives) == ["/World/Anymal"] and drives["/World/Anymal"].targets is None   # no keys: hold
    held = simulate(model, STAND_SECONDS, FPS, substeps=SUBSTEPS, actuation=drives)
    heights = _base_track(held)[:, 2]
    assert heights[0] == pytest.approx(start_height, abs=1e-9)
    assert np.abs(heights - start_height).max() < 0.02

    assert bake_trajectory(bl_scene, held, 1) >= 1
    rig = rb.rig_of(root)
    assert rig.animation_data.action.get("rscene_bake")
    links = rb.link_objects(root)
    for frame in (1, 30, STAND_SECONDS * FPS + 1):
        bl_scene.frame_set(frame)
        bpy.context.view_layer.update()
        for name, ob in links.items():
            i = held.index(f"/World/Anymal/{name}")
            want = np.eye(4)
            want[:3, :3] = quat_to_matrix(held.quaternion[frame - 1, i])
            want[:3, 3] = held.position[frame - 1, i]
            np.testing.assert_allclose(np.array(ob.matrix_world), want, atol=2e-5, err_msg=f"{name} {frame}")


def _trot(q0: np.ndarray, frames: int, swing: float, lift: float = 0.35, hz: float = 2.0) -> np.ndarray:
    """Joint targets of a trot: diagonal leg pairs (LF+RH, RF+LH) in antiphase; a leg lifts (knee flexed)
    while its hip swings it forward, then pushes back on the ground."""
    t = np.arange(frames) / FPS
    q = np.tile(q0, (frames, 1))
    ramp = np.minimum(1.0, t / 0.25)
    for leg, phase in enumerate((0.0, np.pi, np.pi, 0.0)):   # LF RF LH RH
        angle = 2 * np.pi * hz * t + phase
        hip, knee = ANYMAL_STANCE[3 * leg + 1], ANYMAL_STANCE[3 * leg + 2]
        q[:, 7 + 3 * leg + 1] = hip + ramp * swing * np.cos(angle)
        q[:, 7 + 3 * leg + 2] = knee + ramp * np.sign(knee) * lift * np.maximum(0.0, np.sin(angle))
    return q


TROT_SWING = 0.25   # rad; its sign picks the walking direction


def test_a_keyframed_trot_walks_forward(blank, tmp_path):
    """The animator keys a trot on the rig's bones; the bake (operator) drives the joints towards them and
    the base moves forward (+x, the robot's heading) by more than 15 cm in 1.5 s (0.45 m measured)."""
    root, _ = _standing_anymal(tmp_path)
    root[GAINS_KEY] = list(GAINS)
    rig = rb.rig_of(root)
    robot = rb.robot_of(root)
    frames = int(1.5 * FPS) + 1
    targets = _trot(np.array(rb.joint_values(root)), frames, TROT_SWING)
    for f in range(frames):
        rb.apply_joint_values(root, np.r_[rb.stored_values(root)[:7], targets[f, 7:]])
        for name in robot.joint_order:
            rig.pose.bones[name].keyframe_insert("rotation_euler", index=1, frame=1 + f)
    bl_scene = bpy.context.scene
    bl_scene.frame_set(1)
    drives = robot_drives(bl_scene, 1, frames)
    np.testing.assert_allclose(drives["/World/Anymal"].targets[:, 7:], targets[:, 7:], atol=1e-6)
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=frames, substeps=SUBSTEPS) == {"FINISHED"}
    start = np.array(root.matrix_world.translation)
    bl_scene.frame_set(frames)
    end = np.array(root.matrix_world.translation)
    assert end[0] - start[0] > 0.15            # 0.45 m measured with the numpy path
    assert abs(end[1] - start[1]) < 0.1 and end[2] > start[2] - 0.15   # walking, not falling
    # the animator's keys are kept aside while the bake plays, and come back when it is cleared
    assert rig.animation_data.action.get("rscene_bake")
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}
    assert not rig.animation_data.action.get("rscene_bake")
    assert len(rig.animation_data.action.name) and rb.rig_of(root)["rscene_target_action"] == rig.animation_data.action


def test_ik_from_the_panels_lists_poses_and_keys_bones(blank):
    """The panel's picks (link from the robot's links, target object) drive the solve; the bones take the
    solution and are keyed; the foot reaches the target (forward kinematics of another leg pose)."""
    root = _import_robot(LAIKAGO)
    robot = rb.robot_of(root)
    q = np.array(rb.joint_values(root))
    goal = q.copy()
    goal[7:10] = [0.1, 0.9, -1.6]
    target = bpy.data.objects.new("goal", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = forward_kinematics(robot, goal)["FR_foot"][:3, 3]
    from rscene_addon.ops.robot_ops import _link_items
    choices = [item[0] for item in _link_items(root.rscene_ik, bpy.context)]
    assert choices[0] == "__default__" and sorted(choices[1:]) == sorted(robot.links)
    root.rscene_ik.link = "FR_foot"
    root.rscene_ik.target = target
    bpy.context.view_layer.objects.active = root
    bpy.context.scene.frame_set(5)
    assert bpy.ops.rscene.solve_ik() == {"FINISHED"}
    assert root["rscene_ik_converged"]
    bpy.context.view_layer.update()
    foot = np.array(rb.link_objects(root)["FR_foot"].matrix_world)[:3, 3]
    assert np.linalg.norm(foot - np.array(target.location)) < 1e-3
    rig = rb.rig_of(root)
    solved = np.array(rb.joint_values(root))
    bones = [rig.pose.bones[name].rotation_euler[1] for name in robot.joint_order]
    np.testing.assert_allclose(bones, solved[7:], atol=1e-6)
    from rscene_addon.blender.bake import action_fcurves
    assert {fc.keyframe_points[0].co[0] for fc in action_fcurves(rig)} == {5.0}
