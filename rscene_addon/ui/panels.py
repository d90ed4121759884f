"""Panels that show the scene records behind Blender data, editable where export writes them back."""
import bpy


def _made_in_blender(ob) -> bool:
    from ..blender.extract import becomes_new_record
    return ob.type == "MESH" and becomes_new_record(ob)


class RSCENE_PT_object(bpy.types.Panel):
    bl_label = "RaiSim Record"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and (ob.rscene.kind != "" or _made_in_blender(ob))

    def draw(self, context):
        props = context.object.rscene
        layout = self.layout
        layout.use_property_split = True
        col = layout.column()
        if props.kind:
            col.label(text=f"{props.kind}: {props.path}")
            col.prop(props, "record_id")
        else:  # a mesh made in Blender: export writes it as a new object, a bake simulates it so
            col.label(text="New object (made in Blender)", icon="ADD")
        if props.missing_file:
            col.label(text=f"Missing file: {props.missing_file}", icon="ERROR")
        if props.kind == "object" or not props.kind:
            col.separator()
            col.prop(props, "body_mode")
            col.prop(props, "mass")
            col.prop(props, "collidable")
            col.prop(props, "collision_group")
            col.prop(props, "collision_mask")
            col.separator()
            col.prop(props, "semantic_class")
            col.prop(props, "instance_id")


class RSCENE_PT_scene(bpy.types.Panel):
    bl_label = "RaiSim Scene"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "scene"

    def draw(self, context):
        scene = context.scene
        props = scene.rscene
        layout = self.layout
        layout.use_property_split = True
        col = layout.column()
        if props.source:
            col.label(text=f"Source: {props.source}")
        col.prop(scene, "gravity")
        col.prop(props, "time_step")
        col.prop(props, "solver_iterations")
        col.prop(props, "erp")
        col.prop(props, "default_friction")
        col.prop(props, "default_restitution")


CLASSES = (RSCENE_PT_object, RSCENE_PT_scene)
