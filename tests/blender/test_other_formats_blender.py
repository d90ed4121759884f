"""The other formats through Blender: import operators and export twins, via the shared scene model."""
import bpy

from rscene_addon.formats import registry
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


def test_menus_list_every_format(blank):
    names = {op.bl_idname for op in bpy.types.Operator.__subclasses__()}
    for suffix in ("rscene", "raisim_xml", "coppelia_xml", "airsim_scene"):
        assert hasattr(bpy.ops.import_scene, suffix) and hasattr(bpy.ops.export_scene, suffix), (suffix, len(names))
