"""File > Import / Export operators for RaiSim scenes, and drag-and-drop through a FileHandler. Thin:
read the options, call blender.build / blender.extract, turn errors into reports."""
from __future__ import annotations

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..model import FormatError


def _reporter(operator):
    def report(level: str, message: str) -> None:
        operator.report({level}, message)
        if bpy.app.background:
            print(f"{level.lower()}: {message}")
    return report


class RSCENE_OT_import(bpy.types.Operator, ImportHelper):
    """Import RaiSim Engine 2 scenes (.rscene): objects, materials, lights, cameras, terrain, sky"""

    bl_idname = "import_scene.rscene"
    bl_label = "Import RaiSim Scene"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".rscene"
    filter_glob: StringProperty(default="*.rscene", options={"HIDDEN"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    import_cameras: BoolProperty(name="Cameras", default=True)
    import_lights: BoolProperty(name="Lights", default=True)
    import_world: BoolProperty(name="World and Sky", default=True)
    physics_helpers: BoolProperty(name="Physics-only Objects", default=True,
                                  description="Invisible collision-only bodies, shown as wireframes")
    placeholders: BoolProperty(name="Placeholders for Missing Assets", default=True)
    set_active_camera: BoolProperty(name="Set Active Camera and Resolution", default=True)

    def _paths(self) -> list[str]:
        if self.files and self.directory:
            return [os.path.join(self.directory, f.name) for f in self.files if f.name]
        return [self.filepath]

    def draw(self, context):
        pass  # options are drawn by the panels below (File browser sidebar)

    def execute(self, context):
        from ..blender.build import ImportOptions, import_scene_file
        options = ImportOptions(self.import_cameras, self.import_lights, self.physics_helpers,
                                self.placeholders, self.set_active_camera, self.import_world)
        wm = context.window_manager
        paths = self._paths()
        wm.progress_begin(0, 100 * len(paths))
        failed = 0
        try:
            for i, path in enumerate(paths):
                def progress(fraction, base=i):
                    wm.progress_update(int(100 * (base + fraction)))
                try:
                    import_scene_file(path, context.scene, options, _reporter(self), progress)
                except FormatError as exc:
                    failed += 1
                    for diagnostic in exc.diagnostics[:20]:
                        self.report({"ERROR"}, str(diagnostic))
                except OSError as exc:
                    failed += 1
                    self.report({"ERROR"}, f"{path}: {exc.strerror or exc}")
        finally:
            wm.progress_end()
        if failed == len(paths):
            return {"CANCELLED"}
        return {"FINISHED"}


class RSCENE_OT_export(bpy.types.Operator, ExportHelper):
    """Export the scene as a RaiSim Engine 2 scene (.rscene); unedited records are written unchanged"""

    bl_idname = "export_scene.rscene"
    bl_label = "Export RaiSim Scene"
    bl_options = {"REGISTER"}

    filename_ext = ".rscene"
    filter_glob: StringProperty(default="*.rscene", options={"HIDDEN"})

    def execute(self, context):
        from ..blender.extract import export_scene
        try:
            export_scene(context.scene, self.filepath, warn=lambda m: self.report({"WARNING"}, m))
        except (FormatError, OSError, ValueError) as exc:
            self.report({"ERROR"}, f"export failed, nothing written: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"wrote {self.filepath}")
        return {"FINISHED"}


class RSCENE_PT_import_include(bpy.types.Panel):
    bl_space_type = "FILE_BROWSER"
    bl_region_type = "TOOL_PROPS"
    bl_label = "Include"
    bl_parent_id = "FILE_PT_operator"

    @classmethod
    def poll(cls, context):
        return context.space_data.active_operator.bl_idname == "IMPORT_SCENE_OT_rscene"

    def draw(self, context):
        operator = context.space_data.active_operator
        layout = self.layout
        layout.use_property_split = True
        for name in ("import_cameras", "import_lights", "import_world", "physics_helpers", "placeholders",
                     "set_active_camera"):
            layout.prop(operator, name)


class RSCENE_FH_rscene(bpy.types.FileHandler):
    bl_idname = "RSCENE_FH_rscene"
    bl_label = "RaiSim Scene"
    bl_import_operator = "import_scene.rscene"
    bl_export_operator = "export_scene.rscene"
    bl_file_extensions = ".rscene"

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type in {"VIEW_3D", "OUTLINER"}


def menu_import(self, context):
    self.layout.operator(RSCENE_OT_import.bl_idname, text="RaiSim Scene (.rscene)")


def menu_export(self, context):
    self.layout.operator(RSCENE_OT_export.bl_idname, text="RaiSim Scene (.rscene)")


CLASSES = (RSCENE_OT_import, RSCENE_OT_export, RSCENE_PT_import_include, RSCENE_FH_rscene)


def register_extra():
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister_extra():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
