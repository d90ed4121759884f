"""File > Import / Export operators for RaiSim scenes, and drag-and-drop through a FileHandler. Thin:
read the options, call blender.scene_import / blender.extract, turn errors into reports."""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..model import FormatError, describe


def _reporter(operator):
    def report(level: str, message: str) -> None:
        operator.report({level}, message)
        if bpy.app.background:
            print(f"{level.lower()}: {message}")
    return report


class ImportSceneBase(ImportHelper):
    """Shared by the import operators of every format (a mixin: Blender cannot subclass operators)."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
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
        from ..blender.scene_import import ImportOptions, import_scene_file
        options = ImportOptions(self.import_cameras, self.import_lights, self.physics_helpers,
                                self.placeholders, self.set_active_camera, self.import_world,
                                ground=getattr(self, "add_ground", False))
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
                    for line in describe(exc, path)[1:]:
                        self.report({"ERROR"}, line.strip())
                except OSError as exc:
                    failed += 1
                    self.report({"ERROR"}, f"{path}: {exc.strerror or exc}")
        finally:
            wm.progress_end()
        if failed == len(paths):
            return {"CANCELLED"}
        return {"FINISHED"}


class RSCENE_OT_import(ImportSceneBase, bpy.types.Operator):
    """Import RaiSim Engine 2 scenes (.rscene): objects, materials, lights, cameras, terrain, sky"""

    bl_idname = "import_scene.rscene"
    bl_label = "Import RaiSim Scene"
    filename_ext = ".rscene"
    filter_glob: StringProperty(default="*.rscene", options={"HIDDEN"})


class RSCENE_OT_import_robot(ImportSceneBase, bpy.types.Operator):
    """Import a robot (URDF or MJCF) alone, standing where its file puts it, on a ground if asked"""

    bl_idname = "import_scene.rscene_robot"
    bl_label = "Import Robot"
    filename_ext = ".urdf"
    filter_glob: StringProperty(default="*.urdf;*.xml;*.mjcf", options={"HIDDEN"})
    add_ground: BoolProperty(name="Ground", default=False,
                             description="Add a static ground plane at z = 0 under the robot")


class RSCENE_OT_export(bpy.types.Operator, ExportHelper):
    """Export the scene as a RaiSim Engine 2 scene (.rscene); unedited records are written unchanged"""

    bl_idname = "export_scene.rscene"
    bl_label = "Export RaiSim Scene"
    bl_options = {"REGISTER"}

    filename_ext = ".rscene"
    filter_glob: StringProperty(default="*.rscene", options={"HIDDEN"})
    use_current_frame: BoolProperty(
        name="Current Frame Pose", default=False,
        description="Write baked bodies where the playhead shows them (off: at their start pose, as "
                    "before the bake)")

    def execute(self, context):
        from ..blender.extract import export_scene
        try:
            export_scene(context.scene, self.filepath, warn=lambda m: self.report({"WARNING"}, m),
                         current_frame=self.use_current_frame)
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
        # only our importers: the glTF, FBX, OBJ ... importers share the IMPORT_SCENE_OT_ prefix
        operator = getattr(context.space_data, "active_operator", None)
        return operator is not None and operator.bl_idname in _OUR_IMPORTERS

    def draw(self, context):
        operator = context.space_data.active_operator
        layout = self.layout
        layout.use_property_split = True
        for name in ("import_cameras", "import_lights", "import_world", "physics_helpers", "placeholders",
                     "set_active_camera", "add_ground"):
            if hasattr(operator, name):
                layout.prop(operator, name)


class DropOnViews:
    """FileHandler mixin: a dropped file imports over the 3D viewport or the outliner."""

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type in {"VIEW_3D", "OUTLINER"}


class RSCENE_FH_rscene(DropOnViews, bpy.types.FileHandler):
    bl_idname = "RSCENE_FH_rscene"
    bl_label = "RaiSim Scene"
    bl_import_operator = "import_scene.rscene"
    bl_export_operator = "export_scene.rscene"
    bl_file_extensions = ".rscene"


# The other formats share the import/export code; only the file type differs.
OTHER_FORMATS = (
    # (format key in formats.registry, operator suffix, label, extensions)
    ("raisim_xml", "raisim_xml", "RaiSim World XML", ".xml"),
    ("coppelia_xml", "coppelia_xml", "CoppeliaSim Simple XML", ".xml"),
    ("airsim", "airsim_scene", "Project AirSim Scene", ".jsonc;.json"),
)


def _format_operators(fmt: str, suffix: str, label: str, extensions: str):
    glob = ";".join(f"*{e}" for e in extensions.split(";"))
    first = extensions.split(";")[0]

    class Import(ImportSceneBase, bpy.types.Operator):
        bl_idname = f"import_scene.{suffix}"
        bl_label = f"Import {label}"
        bl_description = f"Import a {label} file as a scene (converted through the .rscene scene model)"
        filename_ext = first
        filter_glob: StringProperty(default=glob, options={"HIDDEN"})

    class Export(bpy.types.Operator, ExportHelper):
        bl_idname = f"export_scene.{suffix}"
        bl_label = f"Export {label}"
        bl_description = f"Export the scene as {label}; what the format cannot hold is reported"
        filename_ext = first
        filter_glob: StringProperty(default=glob, options={"HIDDEN"})
        use_current_frame: BoolProperty(
            name="Current Frame Pose", default=False,
            description="Write baked bodies where the playhead shows them (off: at their start pose)")

        def execute(self, context):
            from ..blender.extract import scene_from_blender, source_text
            from ..formats import registry
            text = source_text(context.scene)
            path = (text.get("rscene_path") if text is not None else "") or self.filepath
            try:
                scene = scene_from_blender(context.scene, path, lambda m: self.report({"WARNING"}, m),
                                           current_frame=self.use_current_frame)
                warnings = registry.write_scene(scene, self.filepath, fmt)
            except (FormatError, OSError, ValueError) as exc:
                self.report({"ERROR"}, f"export failed, nothing written: {exc}")
                return {"CANCELLED"}
            for warning in warnings:
                self.report({"WARNING"}, warning)
            return {"FINISHED"}

    Import.__name__ = f"RSCENE_OT_import_{suffix}"
    Export.__name__ = f"RSCENE_OT_export_{suffix}"
    return Import, Export


FORMAT_OPERATORS = [_format_operators(*spec) for spec in OTHER_FORMATS]


def _runtime_idname(idname: str) -> str:
    """``import_scene.rscene`` as an operator instance reports it: ``IMPORT_SCENE_OT_rscene``."""
    category, _, name = idname.partition(".")
    return f"{category.upper()}_OT_{name}"


_OUR_IMPORTERS = frozenset(_runtime_idname(op.bl_idname)
                           for op in [RSCENE_OT_import, RSCENE_OT_import_robot] + [imp for imp, _ in FORMAT_OPERATORS])


class RSCENE_FH_robot(DropOnViews, bpy.types.FileHandler):
    bl_idname = "RSCENE_FH_robot"
    bl_label = "Robot (URDF, MJCF)"
    bl_import_operator = "import_scene.rscene_robot"
    bl_file_extensions = ".urdf;.mjcf"


class RSCENE_FH_other_formats(DropOnViews, bpy.types.FileHandler):
    bl_idname = "RSCENE_FH_other_formats"
    bl_label = "Robotics scene (XML, JSONC)"
    bl_import_operator = "import_scene.airsim_scene"
    bl_file_extensions = ".jsonc"


def menu_import(self, context):
    self.layout.operator(RSCENE_OT_import.bl_idname, text="RaiSim Scene (.rscene)")
    for (_, _, label, extensions), (imp, _) in zip(OTHER_FORMATS, FORMAT_OPERATORS):
        self.layout.operator(imp.bl_idname, text=f"{label} ({extensions.split(';')[0]})")
    self.layout.operator(RSCENE_OT_import_robot.bl_idname, text="Robot (.urdf, MJCF .xml)")


def menu_export(self, context):
    self.layout.operator(RSCENE_OT_export.bl_idname, text="RaiSim Scene (.rscene)")
    for (_, _, label, extensions), (_, exp) in zip(OTHER_FORMATS, FORMAT_OPERATORS):
        self.layout.operator(exp.bl_idname, text=f"{label} ({extensions.split(';')[0]})")


CLASSES = (RSCENE_OT_import, RSCENE_OT_import_robot, RSCENE_OT_export, RSCENE_PT_import_include, RSCENE_FH_rscene,
           RSCENE_FH_robot, RSCENE_FH_other_formats) + tuple(cls for pair in FORMAT_OPERATORS for cls in pair)


def register_extra():
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister_extra():
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
