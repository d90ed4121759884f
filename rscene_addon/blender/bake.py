"""Trajectories -> ordinary keyframes (location + rotation_quaternion), fast on Blender 4.5 and 5.0.

Keys are written with ``keyframe_points.add(n)`` + ``foreach_set('co', ...)`` (about 200x faster than
``keyframe_insert`` per frame). F-curves come from ``Action.fcurve_ensure_for_datablock``, which exists
in both versions (5.0 removed ``Action.fcurves``). Baked actions are tagged so ``clear_bake`` removes
exactly what a bake made.
"""
from __future__ import annotations

import os
from contextlib import contextmanager

import bpy
import numpy as np

BAKE_TAG = "rscene_bake"
# What a body showed before its first bake (the record's pose unless edited): Clear Bake puts it back and
# export writes it, so a bake never changes the file. Location + quaternion (w, x, y, z) and the rotation mode.
REST_KEY = "rscene_rest_pose"
REST_MODE_KEY = "rscene_rest_rotation_mode"
REST_BONES_KEY = "rscene_rest_bones"   # on a rig: 'bone|property' -> the values before the bake
REST_MESH_KEY = "rscene_rest_mesh"     # cloth and particles: the imported mesh (a bake swaps in its own)
GAINS_KEY = "rscene_pd_gains"   # (kp, kd) on a robot root (every joint) or on a rig's pose bone (its joint)
CACHE_MODIFIER = "rscene simulation cache"  # modifiers take no custom properties: known by name


def nodes_by_path(bl_scene) -> dict:
    paths = ((ob.rscene.path, ob) for ob in bl_scene.objects)  # read once: it is looked up in the source
    return {path: ob for path, ob in paths if path}


def _write_channel(action, ob, data_path: str, index: int, co: np.ndarray, values: np.ndarray,
                   linear: np.ndarray) -> None:
    """One F-curve of a new action: ``co`` (2F,) float32 holds the frames at [0::2] (the values are
    written into [1::2]); ``linear`` (F,) int32 the LINEAR interpolation code. Buffers are shared by all
    channels of a bake."""
    fcurve = action.fcurve_ensure_for_datablock(ob, data_path, index=index)
    points = fcurve.keyframe_points
    if len(points):  # only an action someone else keyed before has points
        points.clear()
    points.add(len(linear))
    co[1::2] = values
    points.foreach_set("co", co)
    points.foreach_set("interpolation", linear)
    # no fcurve.update(): the keys are written in frame order and LINEAR keys never read their handles
    # (Blender recomputes handles itself if someone later switches a key to Bezier); it would cost as
    # much as writing the keys


_LINEAR = bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items["LINEAR"].value


def bake_trajectory(bl_scene, trajectory, frame_start: int = 1, progress=None, skip=(), made=None) -> int:
    """Key every body of ``trajectory`` that has a Blender object; returns how many were baked.

    ``trajectory`` has names (N,), position (F,N,3) and quaternion (F,N,4) w,x,y,z. Bodies named in
    ``skip`` (kinematic bodies driven by their own animation) keep their keys. ``made``: objects made in
    Blender by the path their new record got in the simulated scene (``extract.scene_from_blender``).
    """
    objects = nodes_by_path(bl_scene)
    objects.update(made or {})
    frames = frame_start + np.arange(len(trajectory.time), dtype=np.float32)
    position = np.asarray(trajectory.position)
    quaternion = np.asarray(trajectory.quaternion).copy()
    # keep consecutive quaternions in one hemisphere so linear interpolation does not flip
    if len(quaternion) > 1:
        step = np.where(np.sum(quaternion[1:] * quaternion[:-1], axis=2) < 0, -1.0, 1.0)
        quaternion[1:] *= np.cumprod(step, axis=0)[..., None]
    baked = 0
    names = [str(n) for n in trajectory.names]
    buffers = _key_buffers(frames)
    rigged = bake_rigs(bl_scene, names, position, quaternion, frames, buffers)
    baked += len(rigged)
    links = _robot_links(bl_scene, skip=rigged)
    local = _link_local_poses(links, names, position, quaternion)
    for i, name in enumerate(names):
        ob = objects.get(name) or links.get(name)
        if ob is None or name in skip:
            continue
        pos, rot = local.get(name, (position[:, i], quaternion[:, i]))
        _key_pose(ob, frames, pos, rot, buffers)
        baked += 1
        if progress and i % 16 == 0:
            progress(i / max(len(names), 1))
    baked += bake_deforming(bl_scene, trajectory, frame_start)
    bl_scene.frame_start = frame_start
    bl_scene.frame_end = int(frames[-1]) if len(frames) else frame_start
    return baked


def is_baked(ob) -> bool:
    animation = ob.animation_data
    return animation is not None and animation.action is not None and bool(animation.action.get(BAKE_TAG))


def _remember_rest(ob) -> None:
    """Keep the pose ``ob`` shows before its first bake (a rebake keeps the first one)."""
    if is_baked(ob) and REST_KEY in ob.keys():
        return
    q = ob.rotation_quaternion if ob.rotation_mode == "QUATERNION" else ob.matrix_basis.to_quaternion()
    ob[REST_KEY] = [*map(float, ob.location), *map(float, q)]
    ob[REST_MODE_KEY] = ob.rotation_mode


def _apply_rest(ob) -> None:
    """Show the pre-bake pose (object and rig bones) without removing anything."""
    rest = ob.get(REST_KEY)
    if rest is not None and len(rest) == 7:
        from mathutils import Quaternion
        ob.location = tuple(rest[:3])
        q = Quaternion(tuple(rest[3:]))
        mode = ob.get(REST_MODE_KEY, "QUATERNION")
        ob.rotation_mode = mode
        if mode == "QUATERNION":
            ob.rotation_quaternion = q
        elif mode == "AXIS_ANGLE":
            axis, angle = q.to_axis_angle()
            ob.rotation_axis_angle = (angle, *axis)
        else:
            ob.rotation_euler = q.to_euler(mode)
    bones = ob.get(REST_BONES_KEY)
    if bones is not None and ob.pose is not None:
        for key, values in bones.items():
            name, _, prop = key.partition("|")
            bone = ob.pose.bones.get(name)
            if bone is not None:
                setattr(bone, prop, tuple(values))


def _restore_rest(ob) -> None:
    """Clear Bake: back to the pre-bake pose and mesh; the remembered values are dropped."""
    _apply_rest(ob)
    mesh = ob.get(REST_MESH_KEY)
    if mesh is not None and ob.data is not mesh:
        simulated = ob.data
        ob.data = mesh
        if simulated is not None and simulated.users == 0:
            bpy.data.meshes.remove(simulated)
    for key in (REST_KEY, REST_MODE_KEY, REST_BONES_KEY, REST_MESH_KEY):
        if key in ob.keys():
            del ob[key]


@contextmanager
def rest_pose_shown(bl_scene):
    """Within the block, baked bodies show their pre-bake pose (matrices updated); afterwards the scene
    is evaluated at its frame again, so the bake plays as before."""
    baked = [ob for ob in bl_scene.objects if is_baked(ob)
             and (REST_KEY in ob.keys() or REST_BONES_KEY in ob.keys())]
    if not baked:
        yield
        return
    try:
        for ob in baked:
            _apply_rest(ob)
        for layer in bl_scene.view_layers:
            layer.update()
        yield
    finally:
        bl_scene.frame_set(bl_scene.frame_current)


def _key_pose(ob, frames: np.ndarray, position: np.ndarray, quaternion: np.ndarray, buffers=None) -> None:
    _remember_rest(ob)
    clear_object_bake(ob)
    ob.rotation_mode = "QUATERNION"
    ob.animation_data_create()
    action = bpy.data.actions.new(f"{ob.name} simulation")
    action[BAKE_TAG] = True
    ob.animation_data.action = action
    co, linear = buffers or _key_buffers(frames)
    for axis in range(3):
        _write_channel(action, ob, "location", axis, co, position[:, axis], linear)
    for axis in range(4):
        _write_channel(action, ob, "rotation_quaternion", axis, co, quaternion[:, axis], linear)


def _key_buffers(frames: np.ndarray):
    """The (2F,) float32 ``co`` buffer with the frames filled in and the (F,) LINEAR codes."""
    co = np.empty(2 * len(frames), dtype=np.float32)
    co[0::2] = frames
    return co, np.full(len(frames), _LINEAR, dtype=np.int32)


def _robot_roots(bl_scene) -> list:
    from .robots import is_robot_root
    return [ob for ob in bl_scene.objects if ob.rscene.kind == "articulated" and is_robot_root(ob)]


def bake_rigs(bl_scene, names: list, position: np.ndarray, quaternion: np.ndarray, frames: np.ndarray,
              buffers) -> set:
    """Robots with an armature: the simulated link poses become joint values keyed on the rig's bones
    (and a floating base's pose on the root), so the robot plays like an animated character. The
    animator's own action on the rig (the PD targets) is kept in ``rig["rscene_target_action"]``.
    Returns the record paths baked this way."""
    from ..base.spatial import quat_to_matrix
    from ..robots.joint_recovery import configuration_from_poses
    from . import robots as rb
    from .robot_rig import bone_channel
    index = {name: i for i, name in enumerate(names)}
    done = set()
    for root in _robot_roots(bl_scene):
        arm, path = rb.rig_of(root), root.rscene.path
        if arm is None:
            continue
        try:
            robot = rb.robot_of(root)
        except (OSError, ValueError):
            continue
        poses = {}
        for link in robot.links:
            i = index.get(f"{path}/{link}")
            if i is not None:
                m = np.tile(np.eye(4), (len(frames), 1, 1))
                m[:, :3, :3] = quat_to_matrix(quaternion[:, i])
                m[:, :3, 3] = position[:, i]
                poses[link] = m
        if robot.root not in poses:
            continue
        base = np.eye(4) if robot.floating_base else np.array(root.matrix_world)
        inverse = np.linalg.inv(base)   # joint values are relative; a floating base is read in the world
        q = configuration_from_poses(robot, {k: inverse @ v for k, v in poses.items()},
                                     np.asarray(rb.stored_values(root), dtype=float))
        if robot.floating_base:
            _key_pose(root, frames, q[:, 0:3], q[:, 3:7], buffers)
        if not is_baked(arm) or REST_BONES_KEY not in arm.keys():
            arm[REST_BONES_KEY] = {f"{name}|{bone_channel(robot.joints[name])[0]}":
                                   [float(v) for v in getattr(arm.pose.bones[name], bone_channel(robot.joints[name])[0])]
                                   for name in robot.movable_joints() if name in arm.pose.bones}
        action = _rig_action(arm)
        co, linear = buffers
        slices = robot.gc_slices()
        for name in robot.movable_joints():
            if name not in arm.pose.bones:
                continue
            prop, indices = bone_channel(robot.joints[name])
            for k, channel in enumerate(indices):
                _write_channel(action, arm, f'pose.bones["{name}"].{prop}', channel, co,
                               q[:, slices[name].start + k], linear)
        done.add(path)
    return done


def _rig_action(arm):
    """A new bake action on the rig; the animator's action (if any) is kept aside for clear_bake and for
    the next bake's PD targets."""
    from .robot_rig import TARGET_ACTION_KEY
    anim = arm.animation_data_create()
    current = anim.action
    if current is not None and not current.get(BAKE_TAG):
        current.use_fake_user = True
        arm[TARGET_ACTION_KEY] = current
    clear_object_bake(arm)
    action = bpy.data.actions.new(f"{arm.name} simulation")
    action[BAKE_TAG] = True
    anim.action = action
    return action


def _robot_links(bl_scene, skip=()) -> dict:
    """Link objects of imported robots (not those in ``skip``: record paths of rigged robots), by the
    trajectory name ``<record path>/<link name>``."""
    from .robots import LINK_KEY
    links = {}
    for root in _robot_roots(bl_scene):
        if root.rscene.path not in skip:
            for ob in root.children_recursive:
                if LINK_KEY in ob.keys():
                    links[f"{root.rscene.path}/{ob[LINK_KEY]}"] = ob
    return links


def _link_local_poses(links: dict, names: list, position: np.ndarray, quaternion: np.ndarray) -> dict:
    """Robot links are parented in Blender: turn their simulated world poses into parent-relative keys.

    Returns name -> (positions (F,3), quaternions (F,4)); the parent's world pose comes from the
    trajectory when the parent is a simulated link, else from Blender (the robot root, which does not move).
    """
    from ..base.spatial import matrix_to_quat, quat_to_matrix
    index = {name: i for i, name in enumerate(names)}
    world = {}
    for name, i in index.items():
        if name in links:
            m = np.tile(np.eye(4), (len(position), 1, 1))
            m[:, :3, :3] = quat_to_matrix(quaternion[:, i])
            m[:, :3, 3] = position[:, i]
            world[name] = m
    by_object = {ob.as_pointer(): name for name, ob in links.items()}
    out = {}
    for name, m in world.items():
        ob = links[name]
        parent_name = by_object.get(ob.parent.as_pointer()) if ob.parent is not None else None
        if parent_name in world:
            parent = world[parent_name]
        else:
            parent = np.array(ob.parent.matrix_world if ob.parent is not None else np.eye(4))[None]
        parent = parent @ np.array(ob.matrix_parent_inverse)[None]
        local = np.linalg.inv(parent) @ m
        out[name] = (local[:, :3, 3], matrix_to_quat(local[:, :3, :3]))
    return out


def cache_folder() -> str:
    """Where point caches go: ``<blend name>_cache`` beside a saved .blend, else a temporary folder."""
    import tempfile
    if bpy.data.filepath:
        stem = os.path.splitext(bpy.data.filepath)[0]
        folder = f"{stem}_cache"
    else:
        folder = os.path.join(tempfile.gettempdir(), "rscene_cache")
    os.makedirs(folder, exist_ok=True)
    return folder


def bake_deforming(bl_scene, trajectory, frame_start: int) -> int:
    """Cloth vertices and granular particles: the object's mesh is rebuilt with the simulated topology
    (frame 0) and a Mesh Cache modifier plays the PC2 cache of every frame."""
    objects = nodes_by_path(bl_scene)
    done = 0
    for name, frames in list(trajectory.cloth.items()) + list(trajectory.particles.items()):
        ob = objects.get(name)
        if ob is None or ob.type != "MESH":
            continue
        faces = trajectory.cloth_faces.get(name) if name in trajectory.cloth else None
        radii = trajectory.particle_radii.get(name) if name in trajectory.particles else None
        _cache_mesh(ob, np.asarray(frames), faces, radii, frame_start)
        done += 1
    return done


def _cache_mesh(ob, world_frames: np.ndarray, faces, radii, frame_start: int) -> None:
    from .meshes import mesh_from_arrays
    from .point_cache import write_pc2
    inverse = np.linalg.inv(np.array(ob.matrix_world))
    local = world_frames @ inverse[:3, :3].T + inverse[:3, 3]
    faces = np.asarray(faces, dtype=np.int64) if faces is not None and len(faces) else []
    if REST_MESH_KEY not in ob.keys():
        ob[REST_MESH_KEY] = ob.data
    mesh = mesh_from_arrays(f"{ob.data.name} simulated", local[0], faces)
    for material in ob.data.materials:
        mesh.materials.append(material)
    if radii is not None:
        mesh.attributes.new("radius", "FLOAT", "POINT").data.foreach_set("value", np.asarray(radii, np.float32))
    ob.data = mesh
    path = os.path.join(cache_folder(), f"{bpy.path.clean_name(ob.name)}.pc2")
    write_pc2(path, local, frame_start)
    for modifier in list(ob.modifiers):
        if modifier.type == "MESH_CACHE" and modifier.name == CACHE_MODIFIER:
            ob.modifiers.remove(modifier)
        elif hasattr(modifier, "use_pin_to_last"):
            modifier.use_pin_to_last = True  # node modifiers (points as spheres) act on the cached mesh
    cache = ob.modifiers.new(CACHE_MODIFIER, "MESH_CACHE")
    cache.cache_format = "PC2"
    cache.filepath = path
    cache.frame_start = frame_start
    cache.deform_mode = "OVERWRITE"
    cache.forward_axis, cache.up_axis = "POS_Y", "POS_Z"


def clear_object_bake(ob) -> bool:
    """Remove a bake's action from ``ob``; a rig gets its animator's action back."""
    from .robot_rig import TARGET_ACTION_KEY
    animation = ob.animation_data
    if animation is None or animation.action is None or not animation.action.get(BAKE_TAG):
        return False
    action = animation.action
    animation.action = ob.get(TARGET_ACTION_KEY)
    if action.users == 0:
        bpy.data.actions.remove(action)
    return True


def robot_drives(bl_scene, frame_start: int, frame_count: int) -> dict:
    """PD drives of the robots with gains (``root["rscene_pd_gains"]`` = (kp, kd), a bone's own
    ``["rscene_pd_gains"]`` overriding its joint): record path -> ``sim.actuation.Drive``. The targets are
    the joints keyframed on the rig (its animator's action, also while a bake plays), sampled per frame;
    joints without keys hold the value they show now (call at the start frame)."""
    from ..sim.actuation import Drive, drive_gains
    from . import robots as rb
    from .robot_rig import TARGET_ACTION_KEY, bone_channel
    drives = {}
    for root in _robot_roots(bl_scene):
        gains = root.get(GAINS_KEY)
        if gains is None or len(gains) != 2:
            continue
        robot = rb.robot_of(root)
        arm = rb.rig_of(root)
        joints = {}
        if arm is not None:
            for bone in arm.pose.bones:
                own = bone.get(GAINS_KEY)
                if own is not None and len(own) == 2 and bone.name in robot.joints:
                    joints[bone.name] = (float(own[0]), float(own[1]))
        kp, kd = drive_gains(robot, float(gains[0]), float(gains[1]), joints)
        q0 = np.asarray(rb.joint_values(root), dtype=float)
        action = None
        if arm is not None and arm.animation_data is not None:
            action = arm.animation_data.action
            if action is not None and action.get(BAKE_TAG):
                action = arm.get(TARGET_ACTION_KEY)
        targets = None
        if action is not None:
            curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(arm, action)}
            targets = np.tile(q0, (frame_count, 1))
            slices = robot.gc_slices()
            for name in robot.movable_joints():
                prop, indices = bone_channel(robot.joints[name])
                for k, channel in enumerate(indices):
                    fc = curves.get((f'pose.bones["{name}"].{prop}', channel))
                    if fc is not None:
                        targets[:, slices[name].start + k] = [fc.evaluate(frame_start + f)
                                                              for f in range(frame_count)]
        drives[root.rscene.path] = Drive(kp, kd, targets)
    return drives


def clear_bake(bl_scene) -> int:
    """Remove what bakes made and put every baked body back where it was before (its record pose, or
    the user's edit made before baking): the playhead's frame is not kept."""
    cleared = 0
    for ob in bl_scene.objects:
        caches = [m for m in ob.modifiers if m.type == "MESH_CACHE" and m.name == CACHE_MODIFIER]
        for modifier in caches:
            ob.modifiers.remove(modifier)
        done = clear_object_bake(ob) or bool(caches)
        if done or any(k in ob.keys() for k in (REST_KEY, REST_BONES_KEY, REST_MESH_KEY)):
            _restore_rest(ob)
        cleared += done
    return cleared


def action_fcurves(ob, action=None) -> list:
    """The F-curves ``action`` (default: the object's) animates ``ob`` with (4.5 and 5.x)."""
    from bpy_extras import anim_utils
    action = action or ob.animation_data.action
    if action is None:
        return []
    if hasattr(ob.animation_data, "action_slot") and hasattr(anim_utils, "action_get_channelbag_for_slot"):
        slot = ob.animation_data.action_slot if ob.animation_data.action == action else None
        if slot is None and len(action.slots):
            slot = action.slots[0]
        bag = anim_utils.action_get_channelbag_for_slot(action, slot) if slot is not None else None
        return list(bag.fcurves) if bag is not None else []
    return list(action.fcurves)


def keyed_values(ob, data_path: str, index: int) -> np.ndarray:
    """(K,2) frame/value pairs of one baked channel (for tests and the renderer)."""
    fcurves = action_fcurves(ob)
    fcurve = next(fc for fc in fcurves if fc.data_path == data_path and fc.array_index == index)
    co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co.reshape(-1, 2)


def kinematic_tracks(bl_scene, frame_start: int, frame_count: int) -> dict:
    """Animated kinematic bodies: record path -> (positions (F,3), quaternions (F,4)) sampled per frame.

    Only objects whose body mode is kinematic and whose animation is not a simulation bake count; the
    scene is stepped once per frame (no per-key work) and returned to the frame it was on.
    """
    animated = [ob for ob in bl_scene.objects
                if ob.rscene.body_mode == "kinematic" and ob.rscene.kind == "object"
                and ob.animation_data is not None and ob.animation_data.action is not None
                and not ob.animation_data.action.get(BAKE_TAG)]
    if not animated:
        return {}
    current = bl_scene.frame_current
    positions = np.zeros((len(animated), frame_count, 3))
    quaternions = np.zeros((len(animated), frame_count, 4))
    try:
        for f in range(frame_count):
            bl_scene.frame_set(frame_start + f)
            for k, ob in enumerate(animated):
                location, rotation, _ = ob.matrix_world.decompose()
                positions[k, f] = location
                quaternions[k, f] = rotation
    finally:
        bl_scene.frame_set(current)
    return {ob.rscene.path: (positions[k], quaternions[k]) for k, ob in enumerate(animated)}


def current_scene_model(bl_scene, from_current_pose: bool = True, made: dict | None = None):
    """The scene model to simulate: what Blender shows (edits included, objects made in Blender added and
    put in ``made`` by their record's path; a baked body at its pre-bake pose), or with ``from_current_pose``
    False the document as imported (Blender edits left out)."""
    from .extract import scene_from_blender, source_text
    from ..formats import rscene
    text = source_text(bl_scene)
    path = (text.get("rscene_path") if text is not None else "") or bpy.path.abspath("//untitled.rscene")
    if not from_current_pose and text is not None:
        return rscene.loads(text.as_string(), path)
    return scene_from_blender(bl_scene, path, made=made)


def kernel_cache_folder() -> str | None:
    """The numba cache inside Blender: the extension's user folder when running as an installed
    extension (``bl_ext.*``), else None (the sim's own default: NUMBA_CACHE_DIR or the user cache)."""
    package = __package__.rsplit(".", 1)[0]  # the add-on package, without ".blender"
    if not package.startswith("bl_ext."):
        return None
    return bpy.utils.extension_path_user(package, path="numba-cache", create=True)

