"""Import/export of .rscene through Blender, checked against the values written in the files."""
import math
import os
import shutil

import bpy
import pytest
from bpy_extras.object_utils import world_to_camera_view
from tests.corpus import EXAMPLE, RSCENE_FILES
from mathutils import Quaternion, Vector

from rscene_addon.blender import scene_import, extract, sources
from rscene_addon.blender.transaction import ID_COLLECTIONS
from rscene_addon.formats import rscene


def _nodes(kind):
    return {ob.rscene.path: ob for ob in bpy.data.objects if ob.rscene.kind == kind}


def _import(path, **options):
    return scene_import.import_scene_file(str(path), bpy.context.scene, scene_import.ImportOptions(**options))


@pytest.mark.parametrize("path", RSCENE_FILES, ids=lambda p: p.name)
def test_corpus_imports_with_one_object_per_record(blank, path):
    scene = rscene.read(str(path))
    _import(path)
    for kind in ("object", "light", "camera", "terrain_region", "instanced_visual"):
        assert len(_nodes(kind)) == len({r.path for r in scene.of(kind)}), kind


@pytest.mark.parametrize("path", RSCENE_FILES, ids=lambda p: p.name)
def test_import_then_export_is_byte_identical(blank, path, tmp_path):
    _import(path)
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == path.read_bytes()


def test_objects_are_placed_and_sized_as_raisim_builds_them(blank):
    scene = rscene.read(str(EXAMPLE))
    _import(EXAMPLE)
    objects = _nodes("object")
    bpy.context.view_layer.update()
    crate = scene.by_path("/World/Crate")
    ob = objects["/World/Crate"]
    assert tuple(ob.location) == pytest.approx(crate.get("position"))
    # a box's scale is its full side lengths (0.5 m cube in the example)
    assert tuple(ob.dimensions) == pytest.approx((0.5, 0.5, 0.5), abs=1e-6)
    ball = scene.by_path("/World/Ball")
    radius = ball.get("radius") * ball.get("scale")[0]
    assert max(objects["/World/Ball"].dimensions) == pytest.approx(2 * radius, rel=1e-3)


def test_camera_looks_along_its_plus_x_axis(blank):
    scene = rscene.read(str(EXAMPLE))
    record = scene.of("camera")[0]
    _import(EXAMPLE)
    ob = _nodes("camera")[record.path]
    bpy.context.view_layer.update()
    # a point 5 m along the RaiSim camera's local +x must project to the image centre
    w, x, y, z = record.get("quaternion")
    from mathutils import Quaternion
    forward = Quaternion((w, x, y, z)).normalized() @ Vector((1, 0, 0))
    target = Vector(record.get("position")) + 5.0 * forward
    u, v, depth = world_to_camera_view(bpy.context.scene, ob, target)
    assert (u, v) == pytest.approx((0.5, 0.5), abs=1e-6)
    assert depth == pytest.approx(5.0, rel=1e-6)
    # the camera's up (+z) points up in the image
    up = Vector(record.get("position")) + 5.0 * forward + Quaternion((w, x, y, z)).normalized() @ Vector((0, 0, 0.5))
    assert world_to_camera_view(bpy.context.scene, ob, up)[1] > 0.5
    # vertical field of view and resolution
    scene_bl = bpy.context.scene
    assert (scene_bl.render.resolution_x, scene_bl.render.resolution_y) == (record.get("width"), record.get("height"))
    assert math.degrees(ob.data.angle_y) == pytest.approx(record.get("verticalFov"), rel=1e-5)
    assert scene_bl.camera == ob


def test_orthographic_camera_keeps_its_view_width_both_ways(blank, tmp_path):
    path = tmp_path / "ortho.rscene"
    line = ("camera /World/Top 0 0 10 0.707107 0 0.707107 0 55 0.05 100 400 200 rgb true "
            "projection=orthographic orthoScale=4")
    path.write_text(f"raisim_engine_scene 2\n{line}\n")
    _import(path)
    ob = _nodes("camera")["/World/Top"]
    bpy.context.view_layer.update()
    assert ob.data.type == "ORTHO" and ob.data.ortho_scale == pytest.approx(4.0)
    # looking straight down (+x turned to -z): a point 2 m (half the view width) to the image's right
    # lands on its right edge, 1 m (half the height of a 2:1 image) up on its top edge
    right = ob.matrix_world.to_quaternion() @ Vector((1, 0, 0))
    up = ob.matrix_world.to_quaternion() @ Vector((0, 1, 0))
    assert world_to_camera_view(bpy.context.scene, ob, Vector((0, 0, 0)) + 2.0 * right)[:2] == \
        pytest.approx((1.0, 0.5), abs=1e-6)
    assert world_to_camera_view(bpy.context.scene, ob, Vector((0, 0, 0)) + 1.0 * up)[:2] == \
        pytest.approx((0.5, 1.0), abs=1e-6)
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_text() == path.read_text()
    ob.data.ortho_scale = 6.5
    extract.export_scene(bpy.context.scene, str(out))
    assert rscene.read(str(out)).by_path("/World/Top").get("orthoScale") == pytest.approx(6.5)


def test_light_shines_along_the_record_direction(blank):
    scene = rscene.read(str(EXAMPLE))
    record = scene.of("light")[0]
    _import(EXAMPLE)
    ob = _nodes("light")[record.path]
    bpy.context.view_layer.update()
    shine = (ob.matrix_world.to_quaternion() @ Vector((0, 0, -1))).normalized()
    expected = Vector(record.get("direction")).normalized()
    assert tuple(shine) == pytest.approx(tuple(expected), abs=1e-6)
    assert ob.data.type == "SUN"


def test_groups_become_nested_collections(blank, tmp_path):
    path = tmp_path / "groups.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "group /World/Props id=folder_props\n"
        "group /World/Props/Small id=folder_small parentId=folder_props visible=false\n"
        "object /World/Props/Small/Box box 0 0 1 1 0 0 0 1 2 3 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615 parentGroupId=folder_small\n")
    root = _import(path)
    props = next(c for c in root.children if c.name == "Props")
    small = next(c for c in props.children if c.name == "Small")
    assert [o.rscene.path for o in small.objects] == ["/World/Props/Small/Box"]
    assert small.hide_viewport


def test_edits_are_written_back_and_nothing_else_changes(blank, tmp_path):
    source = tmp_path / "scene.rscene"
    shutil.copy(EXAMPLE, source)
    _import(source)
    crate = _nodes("object")["/World/Crate"]
    crate.location = (1.0, 2.0, 3.0)
    crate.rscene.mass = 7.5
    sun = _nodes("light")["/World/Sun"]
    sun.data.energy = 5.0
    bpy.data.objects.remove(_nodes("object")["/World/Ball"])
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    before = source.read_text().splitlines()
    after = out.read_text().splitlines()
    edited = rscene.read(str(out))
    new_crate = edited.by_path("/World/Crate")
    assert new_crate.get("position") == pytest.approx((1.0, 2.0, 3.0))
    assert new_crate.get("mass") == 7.5
    assert edited.by_path("/World/Sun").get("intensity") == pytest.approx(5.0)
    assert edited.by_path("/World/Ball") is None
    untouched = [line for line in before if not line.startswith(("object /World/Crate", "object /World/Ball", "light "))]
    assert [line for line in after if not line.startswith(("object /World/Crate", "light "))] == untouched


def test_renamed_object_keeps_its_id(blank, tmp_path):
    source = tmp_path / "scene.rscene"
    shutil.copy(EXAMPLE, source)
    _import(source)
    _nodes("object")["/World/Crate"].name = "BigCrate"
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    edited = rscene.read(str(out))
    record = edited.by_path("/World/BigCrate")
    assert record is not None and record.id == "object_/World/Crate"


def test_failed_import_leaves_blender_data_untouched(blank, monkeypatch):
    before = {name: len(getattr(bpy.data, name)) for name in ID_COLLECTIONS if hasattr(bpy.data, name)}

    def explode(self, record):
        raise RuntimeError("boom")
    monkeypatch.setattr(scene_import.SceneBuilder, "build_camera", explode)
    with pytest.raises(RuntimeError):
        _import(EXAMPLE)
    after = {name: len(getattr(bpy.data, name)) for name in before}
    assert after == before
    assert bpy.context.scene.world is None


def test_malformed_file_reports_line_and_adds_nothing(blank, tmp_path):
    bad = tmp_path / "bad.rscene"
    bad.write_text("raisim_engine_scene 2\nobject /World/A box 0 0 zero 1 0 0 0 1 1 1 0.5 1 1\n")
    count = len(bpy.data.objects)
    with pytest.raises(Exception) as info:
        _import(bad)
    assert "bad.rscene:2 (object)" in str(info.value)
    assert len(bpy.data.objects) == count


def _crates(count, bad_line=None):
    """A generated scene: ``count`` boxes in two groups, a light and a camera between them."""
    lines = ["raisim_engine_scene 2", "material crate 0.8 0.5 0.2 1 0 0.6", "group /World/A", "group /World/B",
             "light /World/Sun 0 -1 -1 3 type=directional parentGroupId=/World/A"]
    for i in range(count):
        q = ("2 0 0 0", "0 0 0 0", "0.5 0.5 0.5 0.5", "1 2 3 4")[i % 4]  # unnormalised, zero, unit, any
        lines.append(f"object /World/C{i} {'box' if i % 3 else 'sphere'} {i} {-i / 7:.6g} {i % 5} {q} "
                     f"{1 + i % 2} 2 3 0.25 1 2 default crate false {'false' if i % 11 == 5 else 'true'} false - "
                     f"dynamic true 1 1 parentGroupId=/World/{'AB'[i % 2]}")
        if i == count // 2:
            lines.append("camera /World/Cam 0 0 2 1 0 0 0 60 0.1 100 64 48 rgb true parentGroupId=/World/B")
    if bad_line is not None:
        lines[bad_line - 1] = lines[bad_line - 1].replace(" 2 3 0.25 ", " 2 3 0.25x ")
    return "\n".join(lines) + "\n"


def test_generated_objects_get_their_poses_beside_other_objects(blank, tmp_path):
    """Poses are set in bulk per collection; each object, and the light and camera in the same collections
    (posed by their own builders), must end up where the records say."""
    path = tmp_path / "crates.rscene"
    path.write_text(_crates(60))
    scene = rscene.read(str(path))
    _import(path)
    objects, lights, cameras = _nodes("object"), _nodes("light"), _nodes("camera")
    for record in scene.of("object"):
        ob = objects[record.path]
        assert ob.users_collection[0].name == record.get("parentGroupId").rsplit("/", 1)[1]
        assert ob.rotation_mode == "QUATERNION"
        assert tuple(ob.location) == pytest.approx(record.get("position"), abs=1e-6)
        q = Quaternion(record.get("quaternion"))
        expected = tuple(q.normalized()) if q.magnitude > 1e-12 else (1.0, 0.0, 0.0, 0.0)
        assert tuple(ob.rotation_quaternion) == pytest.approx(expected, abs=1e-6)
        size = record.get("scale")
        if record.get("primitive") == "sphere":
            assert tuple(ob.scale) == (1.0, 1.0, 1.0)
            assert max(ob.dimensions) == pytest.approx(2 * 0.25 * size[0], rel=1e-3)
        else:
            assert tuple(ob.scale) == pytest.approx(size)
        assert ob.hide_render == (not record.get("visible"))
    sun, cam = scene.of("light")[0], scene.of("camera")[0]
    direction = Vector(sun.get("direction")).normalized()
    assert tuple(lights[sun.path].rotation_quaternion.to_matrix() @ Vector((0, 0, -1))) == pytest.approx(tuple(direction), abs=1e-6)
    assert tuple(cameras[cam.path].location) == pytest.approx((0, 0, 2))
    assert cameras[cam.path].rotation_mode == "QUATERNION"
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    written, read = out.read_text().splitlines(), path.read_text().splitlines()
    assert len(written) == len(read)
    # a zero quaternion is imported as the identity, which export writes back (as before the bulk poses)
    changed = [(a.split(), b.split()) for a, b in zip(read, written) if a != b]
    assert changed and all(a[6:10] == ["0"] * 4 and b[6:10] == ["1", "0", "0", "0"] and a[:6] + a[10:] == b[:6] + b[10:]
                           for a, b in changed)


def test_bad_value_deep_in_a_large_file_names_its_line_and_adds_nothing(blank, tmp_path):
    """The column-wise check of many same-layout records still names the record's line."""
    path = tmp_path / "big.rscene"
    path.write_text(_crates(3000, bad_line=2345))
    before = {name: len(getattr(bpy.data, name)) for name in ID_COLLECTIONS if hasattr(bpy.data, name)}
    with pytest.raises(Exception) as info:
        _import(path)
    assert "big.rscene:2345 (object)" in str(info.value) and "0.25x" in str(info.value)
    assert {name: len(getattr(bpy.data, name)) for name in before} == before


def test_operator_imports_several_files(blank, tmp_path):
    for name in ("a", "b"):
        shutil.copy(EXAMPLE, tmp_path / f"{name}.rscene")
    result = bpy.ops.import_scene.rscene(directory=str(tmp_path), files=[{"name": "a.rscene"}, {"name": "b.rscene"}],
                                         filepath=str(tmp_path / "a.rscene"))
    assert result == {"FINISHED"}
    roots = [c.name for c in bpy.context.scene.collection.children]
    assert roots == ["a", "b"]
    assert os.path.exists(tmp_path / "a.rscene")


def test_kind_path_and_id_are_read_from_the_source_record(blank, tmp_path):
    """Only the source text and record index are stored per object; kind, path and id come from that
    record, and follow the text when this add-on rewrites it (a new revision)."""
    source = tmp_path / "scene.rscene"
    shutil.copy(EXAMPLE, source)
    _import(source)
    crate, sun = _nodes("object")["/World/Crate"], _nodes("light")["/World/Sun"]
    assert (crate.rscene.kind, crate.rscene.path, crate.rscene.record_id) == ("object", "/World/Crate",
                                                                               "object_/World/Crate")
    assert (sun.rscene.kind, sun.rscene.path) == ("light", "/World/Sun")
    assert crate.rscene.imported_name == "Crate" and crate.rscene.name_at_import == ""
    text = bpy.data.texts[crate.rscene.source]
    assert text.as_string().splitlines()[crate.rscene.uid].startswith("object /World/Crate box ")
    text.from_string(text.as_string().replace("object /World/Crate box", "object /World/Box box"))
    sources.new_revision(text)
    assert (crate.rscene.path, crate.rscene.record_id, crate.rscene.imported_name) == (
        "/World/Box", "object_/World/Box", "Box")
    mine = bpy.data.objects.new("Mine", None)  # made by the user: no record
    assert (mine.rscene.kind, mine.rscene.path, mine.rscene.record_id, mine.rscene.imported_name) == ("", "", "", "")


def test_identity_survives_saving_and_reopening_the_blend(blank, tmp_path):
    source = tmp_path / "scene.rscene"
    shutil.copy(EXAMPLE, source)
    _import(source)
    blend = tmp_path / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    sources.forget()  # as in a new session
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    assert set(_nodes("object")) == {"/World/Crate", "/World/Ball"}
    assert _nodes("camera")["/World/Camera"].rscene.record_id == rscene.read(str(EXAMPLE)).by_path("/World/Camera").id
    # a text stored before revisions existed is still read
    del bpy.data.texts[bpy.context.scene.rscene.source][sources.REVISION_KEY]
    sources.forget()
    assert set(_nodes("light")) == {"/World/Sun"}
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == EXAMPLE.read_bytes()


def test_name_taken_at_import_is_not_a_rename(blank, tmp_path):
    _import(EXAMPLE)
    _import(EXAMPLE)  # the same names again: Blender gives "Crate.001"
    crates = sorted((ob for ob in bpy.data.objects if ob.rscene.path == "/World/Crate"), key=lambda ob: ob.name)
    assert [ob.name for ob in crates] == ["Crate", "Crate.001"]
    assert [ob.rscene.name_at_import for ob in crates] == ["", "Crate.001"]
    assert [ob.rscene.imported_name for ob in crates] == ["Crate", "Crate.001"]
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))  # the second import's text
    assert out.read_bytes() == EXAMPLE.read_bytes()
    crates[1].name = "BigCrate"
    extract.export_scene(bpy.context.scene, str(out))
    record = rscene.read(str(out)).by_path("/World/BigCrate")
    assert record is not None and record.id == "object_/World/Crate"


def test_import_name_stored_by_earlier_versions_is_still_read(blank, tmp_path):
    """Files saved before the import name was derived hold it in the property group as a plain value."""
    source = tmp_path / "scene.rscene"
    shutil.copy(EXAMPLE, source)
    _import(source)
    crate = _nodes("object")["/World/Crate"]
    crate.rscene["imported_name"] = "Crate.004"  # what such a file holds after a name collision
    crate.name = "Crate.004"
    assert crate.rscene.imported_name == "Crate.004"
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == EXAMPLE.read_bytes()


def test_primitives_share_a_mesh_that_carries_their_material(blank, tmp_path):
    """The material is on the shared mesh (no slot per object); one object given its own material through
    an Object-linked slot still exports it, for its record only."""
    path = tmp_path / "materials.rscene"
    box = "box {x} 0 1 1 0 0 0 1 1 1 0.5 1 1 default {material} false true false - dynamic true 1 18446744073709551615"
    path.write_text("raisim_engine_scene 2\n"
                    "material crate 0.8 0.5 0.2 1 0 0.6 id=crate\n"
                    "material steel 0.6 0.6 0.65 1 1 0.3 id=steel\n"
                    + "".join(f"object /World/{name} {box.format(x=i, material=material)}\n"
                              for i, (name, material) in enumerate((("A", "crate"), ("B", "crate"), ("C", "steel")))))
    _import(path)
    a, b, c = (_nodes("object")[f"/World/{name}"] for name in "ABC")
    assert a.data is b.data and c.data is not a.data
    assert [slot.link for slot in a.material_slots] == ["DATA"]
    assert a.data.materials[0]["rscene_id"] == "crate" and c.data.materials[0]["rscene_id"] == "steel"
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_text() == path.read_text()
    slot = b.material_slots[0]
    slot.link = "OBJECT"
    slot.material = c.data.materials[0]
    extract.export_scene(bpy.context.scene, str(out))
    written = rscene.read(str(out))
    assert [written.by_path(f"/World/{name}").get("material") for name in "ABC"] == ["crate", "steel", "steel"]
    assert a.material_slots[0].material["rscene_id"] == "crate"
