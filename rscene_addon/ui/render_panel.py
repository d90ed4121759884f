"""Output properties > RaiSim Sensors: the sensor render's settings and its button."""
import bpy


class RSCENE_PT_render_sensors(bpy.types.Panel):
    bl_label = "RaiSim Sensors"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "output"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        return getattr(context.scene, "rscene_render", None) is not None

    def draw(self, context):
        scene = context.scene
        settings = scene.rscene_render
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        source = getattr(getattr(scene, "rscene", None), "source", "")
        col.label(text=f"Records: {source}" if source else "No imported scene: renders the scene camera",
                  icon="FILE_TEXT" if source else "CAMERA_DATA")
        col.prop(settings, "sensors")
        col.prop(settings, "output_dir")
        col.prop(settings, "use_scene_range")
        sub = col.column(align=True)
        sub.enabled = not settings.use_scene_range
        sub.prop(settings, "frame_start")
        sub.prop(settings, "frame_end", text="End")
        col.prop(settings, "products")
        col.prop(settings, "previews")
        col.label(text=f"Resolution: {scene.render.resolution_percentage}% of each sensor's size",
                  icon="IMAGE_PLANE")
        col.prop(settings, "use_gpu")
        col.prop(settings, "samples")
        col.prop(settings, "rgb_16bit")
        col.prop(settings, "range_image")
        col.prop(settings, "keep_exr")
        col.prop(settings, "cryptomatte")
        sub = col.column()
        sub.enabled = settings.cryptomatte
        sub.prop(settings, "cryptomatte_levels")
        col.prop(settings, "coco")
        col.prop(settings, "bop")
        layout.operator("rscene.render_sensors", icon="RENDER_ANIMATION")


CLASSES = (RSCENE_PT_render_sensors,)
