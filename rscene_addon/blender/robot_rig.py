"""A robot's armature: one bone per movable joint, so a robot is posed and keyframed like a character.

``build_rig(robot, root, name, links)`` makes an armature object under the robot root (identity: armature
space is the robot's base frame) with a bone per revolute, continuous, prismatic and spherical joint, named
after the joint, in the joint tree's hierarchy. A bone rests at its joint's frame at the zero configuration,
turned so that its local Y axis is the joint axis: a revolute joint's value is the bone's Y rotation (Euler,
X and Z locked), a prismatic joint's its Y location (X and Z locked), a spherical joint's the bone's
quaternion. Limits from the file become Limit Rotation / Limit Location constraints on Y (local space).
The link objects below movable joints are parented to their joint's bone, placed so that the posed rig
shows exactly ``robots.kinematics.forward_kinematics``; links below fixed joints stay under their parent
link. ``pose_rig`` writes a generalized coordinate into the bones, ``rig_values`` reads it back.

Robots with planar or floating joints below the base get no rig (their link empties are posed directly).
"""
from __future__ import annotations

import bpy
import numpy as np
from mathutils import Matrix

from ..robots.kinematics import joint_motion
from ..robots.robot import Robot

__all__ = ["RIG_KEY", "TARGET_ACTION_KEY", "bone_channel", "build_rig", "pose_rig", "riggable", "rig_of",
           "rig_values"]

RIG_KEY = "rscene_rig"                      # on the armature object: the robot's rig
TARGET_ACTION_KEY = "rscene_target_action"  # on the armature: the animator's action while a bake plays
BONE_JOINTS = ("revolute", "continuous", "prismatic", "spherical")
_KEEP = 1e-6   # a bone within this of the stored value shows that value (bones hold float32)


def riggable(robot: Robot) -> bool:
    return bool(robot.movable_joints()) and all(
        j.type in BONE_JOINTS or j.type == "fixed" for j in robot.joints.values())


def rig_of(root):
    """The armature of a robot root (None when it has none)."""
    return next((ob for ob in root.children if ob.type == "ARMATURE" and ob.get(RIG_KEY)), None)


def bone_channel(joint) -> tuple[str, tuple[int, ...]]:
    """(pose bone property, indices) holding a joint's value."""
    if joint.type in ("revolute", "continuous"):
        return "rotation_euler", (1,)
    if joint.type == "prismatic":
        return "location", (1,)
    return "rotation_quaternion", (0, 1, 2, 3)


def _align(joint) -> np.ndarray:
    """4x4 rotation whose Y column is the joint axis (identity for a spherical joint)."""
    out = np.eye(4)
    if joint.type == "spherical":
        return out
    y = np.asarray(joint.axis, dtype=float)
    y = y / (np.linalg.norm(y) or 1.0)
    helper = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = np.cross(y, helper)
    x /= np.linalg.norm(x)
    out[:3, 0], out[:3, 1], out[:3, 2] = x, y, np.cross(x, y)
    return out


def _bone_parent(robot: Robot, joint) -> str | None:
    """The nearest movable joint above ``joint`` (its bone is the parent bone)."""
    above = robot.parent_joint(joint.parent)
    while above is not None and above.type == "fixed":
        above = robot.parent_joint(above.parent)
    return above.name if above is not None else None


def _rest_frames(robot: Robot) -> dict[str, np.ndarray]:
    """Each movable joint's frame (parent link @ origin) in the base frame at the zero configuration."""
    q0 = robot.zero_configuration()
    slices = robot.gc_slices()
    world = {robot.root: np.eye(4)}
    frames = {}
    for link in robot.link_order()[1:]:
        joint = robot.parent_joint(link)
        frame = world[joint.parent] @ joint.origin
        motion = np.eye(4) if joint.type == "fixed" else joint_motion(joint, q0[None, slices[joint.name]])[0]
        world[link] = frame @ motion @ joint.child_offset
        if joint.type != "fixed":
            frames[joint.name] = frame
    return frames


def _bone_length(frames: dict) -> float:
    spans = [np.linalg.norm(f[:3, 3]) for f in frames.values()]
    spans = [s for s in spans if s > 1e-6]
    return float(np.clip(0.2 * np.median(spans), 0.01, 0.2)) if spans else 0.05


def _make_bones(arm, robot: Robot, frames: dict, length: float) -> None:
    """The bones in Edit Mode (the only way to add bones): the armature is linked to the current scene for
    the moment and unlinked after."""
    collection = bpy.context.scene.collection
    view_layer = bpy.context.view_layer
    collection.objects.link(arm)
    active = view_layer.objects.active
    if bpy.context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    view_layer.objects.active = arm
    try:
        bpy.ops.object.mode_set(mode="EDIT")
        bones = arm.data.edit_bones
        for name in robot.movable_joints():
            joint = robot.joints[name]
            bone = bones.new(name)
            bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, length, 0.0)
            bone.matrix = Matrix((frames[name] @ _align(joint)).tolist())
            parent = _bone_parent(robot, joint)
            if parent is not None:
                bone.parent = bones[parent]
            bone.use_connect = False
        bpy.ops.object.mode_set(mode="OBJECT")
    finally:
        view_layer.objects.active = active
        collection.objects.unlink(arm)


def _constrain(pose_bone, joint, value: float | None) -> None:
    """Locks to the joint's axis and its limits as a constraint; a constraint that would move the joint from
    where the file puts it (``value`` outside the range, e.g. Laikago's calves at zero) starts muted, so
    Blender shows the file's pose as the simulator starts it (it projects the joint inside at its first
    step); unmuting it is one click."""
    outside = value is not None and joint.has_limits and not joint.lower <= value <= joint.upper
    pose_bone.lock_scale = (True, True, True)
    if joint.type == "spherical":
        pose_bone.rotation_mode = "QUATERNION"
        pose_bone.lock_location = (True, True, True)
        return
    pose_bone.rotation_mode = "XYZ"
    pose_bone.lock_ik_x = pose_bone.lock_ik_z = True
    if joint.type == "prismatic":
        pose_bone.lock_rotation = (True, True, True)
        pose_bone.lock_rotation_w = True
        pose_bone.lock_location = (True, False, True)
        pose_bone.lock_ik_y = True
        if joint.has_limits:
            c = pose_bone.constraints.new("LIMIT_LOCATION")
            c.name = "joint limits"
            c.use_min_y = c.use_max_y = True
            c.min_y, c.max_y = float(joint.lower), float(joint.upper)
            c.owner_space = "LOCAL"
            c.use_transform_limit = True
            c.mute = outside
        return
    pose_bone.lock_rotation = (True, False, True)
    pose_bone.lock_location = (True, True, True)
    if joint.has_limits:
        c = pose_bone.constraints.new("LIMIT_ROTATION")
        c.name = "joint limits"
        c.use_limit_y = True
        c.min_y, c.max_y = float(joint.lower), float(joint.upper)
        c.owner_space = "LOCAL"
        c.use_transform_limit = True
        c.mute = outside


def build_rig(robot: Robot, root, name: str, links: dict, q: np.ndarray, visible: bool = True):
    """The armature object of ``robot`` under ``root`` (not linked to a collection: the caller links it),
    posed at ``q``; ``links`` {link name: object} below movable joints are re-parented to their bones."""
    slices = robot.gc_slices()
    frames = _rest_frames(robot)
    length = _bone_length(frames)
    data = bpy.data.armatures.new(f"{name} rig")
    data.display_type = "OCTAHEDRAL"
    arm = bpy.data.objects.new(f"{name} rig", data)
    arm[RIG_KEY] = True
    arm.parent = root
    arm.show_in_front = True
    if not visible:
        arm.hide_viewport = True
    _make_bones(arm, robot, frames, length)
    tail = np.eye(4)
    tail[1, 3] = -length   # a bone-parented child hangs at the bone's tail: back to its head
    for joint_name in robot.movable_joints():
        joint = robot.joints[joint_name]
        gcs = slices[joint_name]
        _constrain(arm.pose.bones[joint_name], joint, float(q[gcs.start]) if gcs.stop - gcs.start == 1 else None)
        ob = links.get(joint.child)
        if ob is None:
            continue
        rest = np.array(arm.data.bones[joint_name].matrix_local)   # as Blender stores it (float32)
        ob.parent = arm
        ob.parent_type = "BONE"
        ob.parent_bone = joint_name
        ob.matrix_parent_inverse = Matrix.Identity(4)
        ob.matrix_basis = Matrix((tail @ np.linalg.inv(rest) @ frames[joint_name] @ joint.child_offset).tolist())
    pose_rig(arm, robot, q)
    return arm


def pose_rig(arm, robot: Robot, q: np.ndarray) -> None:
    """Put the generalized coordinate ``q`` (RaiSim order) into the bones."""
    slices = robot.gc_slices()
    bones = arm.pose.bones
    for name in robot.movable_joints():
        pose_bone = bones.get(name)
        if pose_bone is None:
            continue
        prop, indices = bone_channel(robot.joints[name])
        channel = getattr(pose_bone, prop)
        for index, value in zip(indices, q[slices[name]]):
            channel[index] = float(value)


def rig_values(arm, robot: Robot, stored: np.ndarray) -> np.ndarray:
    """The generalized coordinate the bones show: ``stored`` (the values last applied, full precision)
    where a bone still shows it within float32 rounding, else the bone's value inside the joint's limits."""
    q = np.array(stored, dtype=float)
    slices = robot.gc_slices()
    bones = arm.pose.bones
    for name in robot.movable_joints():
        pose_bone = bones.get(name)
        if pose_bone is None:
            continue
        joint = robot.joints[name]
        prop, indices = bone_channel(joint)
        channel = getattr(pose_bone, prop)
        value = np.array([float(channel[i]) for i in indices])
        old = q[slices[name]]
        if old.shape == value.shape and np.all(np.abs(value - old) <= _KEEP * np.maximum(1.0, np.abs(old))):
            continue
        if joint.type == "spherical":
            value = value / (np.linalg.norm(value) or 1.0)
        elif joint.has_limits and not _muted(pose_bone):
            value = np.clip(value, joint.lower, joint.upper)   # what the constraint shows
        q[slices[name]] = value
    return q


def _muted(pose_bone) -> bool:
    return all(c.mute for c in pose_bone.constraints if c.type in ("LIMIT_ROTATION", "LIMIT_LOCATION"))
