"""The other formats through Blender: import operators and export twins, via the shared scene model."""
import bpy

from rscene_addon.formats import registry
from rscene_addon.ops import io_ops
from tests.corpus import CORPUS


def test_raisim_xml_imports_through_its_operator_and_exports_back(blank, tmp_path):
    source = next(p for p in sorted((CORPUS / "raisim_xml").rglob("*.xml")) if registry.detect(str(p)) == "raisim_xml")
    expected = registry.read_scene(str(source))
    result = bpy.ops.import_scene.raisim_xml(filepath=str(source))
    assert result == {"FINISHED"}
    objects = [ob for ob in bpy.data.objects if ob.rscene.kind == "object"]
    assert len(objects) == len(expected.of("object"))
    out = tmp_path / "out.xml"
    assert bpy.ops.export_scene.raisim_xml(filepath=str(out)) == {"FINISHED"}
    assert len(registry.read_scene(str(out)).of("object")) == len(expected.of("object"))


class _RecordingLayout:
    def __init__(self):
        self.drawn = []

    def operator(self, idname, text=""):
        self.drawn.append((idname, text))


def _drawn(menu):
    holder = type("Menu", (), {})()
    holder.layout = _RecordingLayout()
    menu(holder, bpy.context)
    return holder.layout.drawn


def test_menus_list_every_format(blank):
    """File > Import and File > Export draw one entry per writable format of the registry, each an operator
    that exists, labelled with the format's extension."""
    imports, exports = _drawn(io_ops.menu_import), _drawn(io_ops.menu_export)
    # robots (URDF, MJCF) are read, not written: File > Import > Robot, and no export entry
    robot = [(idname, text) for idname, text in imports if idname == "import_scene.rscene_robot"]
    assert len(robot) == 1 and ".urdf" in robot[0][1] and "MJCF" in robot[0][1]
    assert hasattr(bpy.ops.import_scene, "rscene_robot")
    imports = [entry for entry in imports if entry not in robot]
    fmt_of = {"rscene": "rscene", **{suffix: fmt for fmt, suffix, _, _ in io_ops.OTHER_FORMATS}}
    for drawn, category in ((imports, "import_scene"), (exports, "export_scene")):
        suffixes = [idname.split(".")[1] for idname, _ in drawn]
        assert all(idname.startswith(category + ".") for idname, _ in drawn)
        assert sorted(fmt_of[s] for s in suffixes) == sorted(registry.WRITABLE)
        for idname, text in drawn:
            suffix = idname.split(".")[1]
            assert hasattr(getattr(bpy.ops, category), suffix)
            assert any(f"({ext})" in text for ext in registry.FILE_EXTENSIONS[fmt_of[suffix]]), (idname, text)


def test_include_panel_shows_in_our_importers_only(blank):
    """The "Include" panel draws our import options: it must not appear in glTF's, FBX's or OBJ's file browser."""
    def context(idname):
        space = type("Space", (), {"active_operator": type("Op", (), {"bl_idname": idname})()})()
        return type("Context", (), {"space_data": space})()

    panel = io_ops.RSCENE_PT_import_include
    for ours in ("IMPORT_SCENE_OT_rscene", "IMPORT_SCENE_OT_raisim_xml", "IMPORT_SCENE_OT_airsim_scene"):
        assert panel.poll(context(ours)), ours
    for theirs in ("IMPORT_SCENE_OT_gltf", "IMPORT_SCENE_OT_fbx", "WM_OT_obj_import", "EXPORT_SCENE_OT_rscene"):
        assert not panel.poll(context(theirs)), theirs
    empty = type("Context", (), {"space_data": type("Space", (), {"active_operator": None})()})()
    assert not panel.poll(empty)
