"""Robot operators: inverse kinematics onto a target, re-posing from the joint values, robot panels.

``rscene.solve_ik`` moves a link of the selected robot to a target (another object, else the 3D cursor),
optionally with the target's orientation, using the scene's ``articulated_ik`` record for that robot as
options when there is one; the result is applied and keyframed: on the rig's bones where the robot has an
armature, else on the root's ``["rscene_joint_values"]``. The panel picks the link from the robot's links
and the target from the file's objects (``Object.rscene_ik``). A ``frame_change_post`` handler re-poses
robots whose ``["rscene_joint_values"]`` are keyframed when the frame changes (a rig plays its own keys).
"""
from __future__ import annotations

import bpy
import numpy as np
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty, StringProperty

from ..blender import sources

VALUES_PATH = '["rscene_joint_values"]'


def _ik_record(root):
    """The ``articulated_ik`` record of ``root``'s robot in the stored source text (None when none)."""
    scene = sources.document(root.rscene.source if hasattr(root, "rscene") else "")  # None: no or broken Text
    if scene is None:
        return None
    names = {root.rscene.path, root.rscene.record_id}
    names.discard("")
    for record in scene.of("articulated_ik"):
        if str(record.get("articulated")) in names and record.get("enabled", True):
            return record
    return None


def _default_link(robot, record) -> str:
    if record is not None and str(record.get("frame")) in robot.links:
        return str(record.get("frame"))
    order = robot.link_order()
    return order[-1] if order else robot.root


def _target(context, root, name: str):
    """World 4x4 of the target: the named object, else another selected object, else the 3D cursor."""
    ob = bpy.data.objects.get(name) if name else None
    if ob is None and not name:
        ob = next((o for o in context.selected_objects if o is not root and o.parent is not root
                   and (o.parent is None or o.parent.get("rscene_link") is None)), None)
    if ob is not None:
        return np.array(ob.matrix_world), ob.name
    cursor = context.scene.cursor
    return np.array(cursor.matrix), "3D cursor"


def keyframe_joint_values(root, frame: int) -> None:
    """Key the robot's joints at ``frame``: its bones' joint channels, else its joint-values array."""
    from ..blender import robots as rb
    from ..blender.robot_rig import bone_channel
    arm = rb.rig_of(root)
    if arm is None:
        root.keyframe_insert(VALUES_PATH, frame=frame)
        return
    robot = rb.robot_of(root)
    for name in robot.movable_joints():
        prop, indices = bone_channel(robot.joints[name])
        for index in indices:
            arm.pose.bones[name].keyframe_insert(prop, index=index, frame=frame)


DEFAULT_LINK = "__default__"
_LINK_ITEMS: list = []   # Blender needs the enum items kept alive while shown


def _link_items(self, context):
    from ..blender import robots as rb
    root = rb.robot_root_of(self.id_data)
    _LINK_ITEMS[:] = [(DEFAULT_LINK, "Default", "The articulated_ik record's frame, else the last link")]
    if root is not None:
        try:
            _LINK_ITEMS.extend((name, name, "") for name in rb.robot_of(root).link_order())
        except Exception:  # noqa: BLE001 - the robot file is gone: only the default
            pass
    return _LINK_ITEMS


class RSCENE_PG_robot_ik(bpy.types.PropertyGroup):
    """The IK panel's choices, kept on the robot root."""
    link: EnumProperty(name="Link", items=_link_items, description="The link to move")
    target: PointerProperty(name="Target", type=bpy.types.Object,
                            description="The object to reach (none: another selected object, else the cursor)")


class RSCENE_OT_solve_ik(bpy.types.Operator):
    """Move a link of the selected robot to the target object (or the 3D cursor) by inverse kinematics
    and keyframe the joint values"""

    bl_idname = "rscene.solve_ik"
    bl_label = "Solve IK"
    bl_options = {"REGISTER", "UNDO"}

    link: StringProperty(name="Link", default="",
                         description="Link to move (empty: the articulated_ik frame, else the last link)")
    target: StringProperty(name="Target", default="",
                           description="Target object (empty: another selected object, else the 3D cursor)")
    use_orientation: BoolProperty(name="Orientation", default=False,
                                  description="Also match the target's orientation")
    keyframe: BoolProperty(name="Keyframe", default=True, description="Keyframe the joint values")

    @classmethod
    def poll(cls, context):
        from ..blender.robots import robot_root_of
        return robot_root_of(context.active_object) is not None

    def execute(self, context):
        from ..robots.ik import IKOptions, options_from_record, solve_ik
        from ..blender import robots as rb
        root = rb.robot_root_of(context.active_object)
        if root is None:
            self.report({"ERROR"}, "select a robot")
            return {"CANCELLED"}
        try:
            robot = rb.robot_of(root)
        except Exception as exc:  # noqa: BLE001 - file gone or unreadable
            self.report({"ERROR"}, f"cannot read the robot: {exc}")
            return {"CANCELLED"}
        record = _ik_record(root)
        options = options_from_record(record) if record is not None else IKOptions()
        choice = getattr(root, "rscene_ik", None)
        if choice is not None and not self.link and not self.target:   # the panel's picks
            self.link = "" if choice.link == DEFAULT_LINK else choice.link
            self.target = choice.target.name if choice.target is not None else ""
        link = self.link or _default_link(robot, record)
        if link not in robot.links:
            self.report({"ERROR"}, f"{robot.name} has no link named {link!r}")
            return {"CANCELLED"}
        context.view_layer.update()
        target, target_name = _target(context, root, self.target)
        orientation = target[:3, :3] / np.linalg.norm(target[:3, :3], axis=0) if self.use_orientation else None
        base, q0 = rb.configuration(root)
        if q0.size != robot.gc_dim:
            q0 = robot.default_configuration()
        result = solve_ik(robot, q0, link, target[:3, 3], orientation, options, base=base)
        root["rscene_ik_converged"] = bool(result.converged)
        root["rscene_ik_position_error"] = float(result.position_error)
        root["rscene_ik_orientation_error"] = float(result.orientation_error)
        if result.converged or options.apply_best_on_failure:
            rb.apply_joint_values(root, result.q)
            if self.keyframe:
                keyframe_joint_values(root, context.scene.frame_current)
        if result.converged:
            self.report({"INFO"}, f"{link} reached {target_name} (residual {result.position_error:.3g} m)")
            return {"FINISHED"}
        detail = f"residual position error {result.position_error:.6g} m"
        if orientation is not None:
            detail += f", orientation error {result.orientation_error:.6g} rad"
        self.report({"WARNING"}, f"{target_name} is unreachable for {link}: {detail}")
        return {"FINISHED"} if options.apply_best_on_failure else {"CANCELLED"}


class RSCENE_OT_apply_joint_values(bpy.types.Operator):
    """Re-pose the selected robot's links from its joint values"""

    bl_idname = "rscene.apply_joint_values"
    bl_label = "Apply Joint Values"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        from ..blender.robots import robot_root_of
        return robot_root_of(context.active_object) is not None

    def execute(self, context):
        from ..blender import robots as rb
        root = rb.robot_root_of(context.active_object)
        try:
            rb.apply_joint_values(root, rb.joint_values(root))
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        return {"FINISHED"}


class RSCENE_OT_robot_pd_gains(bpy.types.Operator):
    """Drive the selected robot's joints with PD gains during a bake (they follow the joints keyframed on its
    rig, or hold its start pose), or make it passive again"""

    bl_idname = "rscene.robot_pd_gains"
    bl_label = "Robot PD Gains"
    bl_options = {"REGISTER", "UNDO"}

    kp: FloatProperty(name="Stiffness", default=200.0, min=0.0, description="kp, N m/rad (N/m if prismatic)")
    kd: FloatProperty(name="Damping", default=5.0, min=0.0, description="kd, N m s/rad (N s/m if prismatic)")
    passive: BoolProperty(name="Passive", default=False, description="Remove the gains: the joints go limp")

    @classmethod
    def poll(cls, context):
        from ..blender.robots import robot_root_of
        return robot_root_of(context.active_object) is not None

    def execute(self, context):
        from ..blender.bake import GAINS_KEY
        from ..blender.robots import robot_root_of
        root = robot_root_of(context.active_object)
        if self.passive:
            if GAINS_KEY in root.keys():
                del root[GAINS_KEY]
        else:
            root[GAINS_KEY] = [float(self.kp), float(self.kd)]
        return {"FINISHED"}


class RSCENE_PT_robot_joints(bpy.types.Panel):
    """Joint values of the selected robot"""

    bl_label = "Robot Joints"
    bl_idname = "RSCENE_PT_robot_joints"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "RScene"

    @classmethod
    def poll(cls, context):
        from ..blender.robots import robot_root_of
        return robot_root_of(context.active_object) is not None

    def draw(self, context):
        from ..blender import robots as rb
        root = rb.robot_root_of(context.active_object)
        layout = self.layout
        layout.label(text=root.get("rscene_robot_name", root.name))
        arm = rb.rig_of(root)
        if arm is not None:   # the bones are the joints: each joint's value by name
            box = layout.box()
            box.label(text="Joints (pose the rig's bones)")
            for bone in arm.pose.bones:
                prop = "location" if bone.lock_rotation[1] else "rotation_euler"
                if bone.rotation_mode == "QUATERNION":
                    box.prop(bone, "rotation_quaternion", text=bone.name)
                else:
                    box.prop(bone, prop, index=1, text=bone.name)
        else:
            layout.column(align=True).prop(root, VALUES_PATH, text="")
            order = list(root.get("rscene_joint_order", ()))
            if order:
                box = layout.box()
                for name in order:
                    box.label(text=name)
            layout.operator(RSCENE_OT_apply_joint_values.bl_idname, text="Apply")
        box = layout.box()   # actuation during a bake (kept on the robot in the .blend)
        if "rscene_pd_gains" in root.keys():
            box.prop(root, '["rscene_pd_gains"]', text="PD gains (kp, kd)")
            box.operator(RSCENE_OT_robot_pd_gains.bl_idname, text="Make Passive").passive = True
        else:
            box.label(text="Passive during a bake")
            box.operator(RSCENE_OT_robot_pd_gains.bl_idname, text="Drive Joints (PD)")
        choice = getattr(root, "rscene_ik", None)
        if choice is not None:
            box = layout.box()
            box.prop(choice, "link")
            box.prop_search(choice, "target", context.scene, "objects")
            box.operator(RSCENE_OT_solve_ik.bl_idname, text="Solve IK")


def _animates_values(ob) -> bool:
    anim = ob.animation_data
    if anim is None or anim.action is None:
        return False
    from ..blender.bake import action_fcurves
    return any(fc.data_path == VALUES_PATH for fc in action_fcurves(ob))


@persistent
def repose_animated_robots(scene, depsgraph=None):
    """After a frame change: re-pose robots whose joint-values array is animated."""
    from ..blender import robots as rb
    for ob in scene.objects:
        if not rb.is_robot_root(ob) or not _animates_values(ob):
            continue
        try:
            rb.apply_joint_values(ob, rb.stored_values(ob))
        except (ValueError, OSError):
            pass


def register_extra():
    bpy.types.Object.rscene_ik = PointerProperty(type=RSCENE_PG_robot_ik)
    if repose_animated_robots not in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.append(repose_animated_robots)


def unregister_extra():
    if repose_animated_robots in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.remove(repose_animated_robots)
    if hasattr(bpy.types.Object, "rscene_ik"):
        del bpy.types.Object.rscene_ik


CLASSES = (RSCENE_PG_robot_ik, RSCENE_OT_solve_ik, RSCENE_OT_apply_joint_values, RSCENE_OT_robot_pd_gains,
           RSCENE_PT_robot_joints)
