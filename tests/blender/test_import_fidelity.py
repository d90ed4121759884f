"""Import fidelity as an artist meets it: a CoppeliaSim inline mesh is a real mesh with the file's vertices and
its ``ambientDiffuse`` colour, a camera under a dummy stays under it, and an untouched export is unchanged.
Truth: the numbers written in the test file and the manual's frame rules (R = Rx Ry Rz, camera along +z)."""
import re
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Vector

from rscene_addon.blender import compat, extract, scene_import
from rscene_addon.formats import coppelia_xml, rscene
from tests.corpus import EXAMPLE

XML = Path(__file__).resolve().parents[1] / "unit" / "formats" / "data" / "inline_mesh.simscene.xml"


def _file_numbers(tag: str) -> np.ndarray:
    text = re.search(rf"<{tag}>([^<]*)</{tag}>", XML.read_text()).group(1)
    return np.array([float(t) for t in text.split()])


def _object(path):
    return next(ob for ob in bpy.data.objects if ob.rscene.path == path)


def _import():
    assert bpy.ops.import_scene.coppelia_xml(filepath=str(XML)) == {"FINISHED"}
    bpy.context.view_layer.update()


def test_inline_mesh_is_a_mesh_with_the_files_vertices_and_colour(blank):
    _import()
    crate = _object("/World/crate")
    assert crate.type == "MESH" and not crate.name.startswith("MISSING")
    mesh = crate.data
    coords = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", coords)
    expected = _file_numbers("vertices").reshape(-1, 3)
    assert len(mesh.vertices) == len(expected) == 8
    np.testing.assert_allclose(coords.reshape(-1, 3), expected, atol=1e-7)  # float32 in Blender
    assert len(mesh.polygons) == len(_file_numbers("indices")) // 3 == 12
    bsdf = next(n for n in mesh.materials[0].node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert tuple(bsdf.inputs["Base Color"].default_value)[:3] == pytest.approx((1.0, 167 / 255, 36 / 255))
    assert crate.matrix_world.translation == Vector((0.0, 0.0, 0.3))


def test_primitive_ambient_diffuse_colour_is_on_its_material(blank):
    _import()
    floor = _object("/World/floor")
    material = floor.material_slots[0].material
    assert tuple(material.diffuse_color)[:3] == pytest.approx((209 / 255,) * 3)


def test_camera_under_a_dummy_keeps_its_parent_and_follows_it(blank):
    _import()
    mount, camera = _object("/World/cameraMount"), _object("/World/cameraMount/DefaultCamera")
    assert camera.parent is mount
    # dummy at (1, 0, 1) turned 90 deg about z; camera 0.1 m along the dummy's x: world (1, 0.1, 1)
    assert tuple(camera.matrix_world.translation) == pytest.approx((1.0, 0.1, 1.0), abs=1e-6)
    # a CoppeliaSim camera looks along its local +z; Rz leaves z alone: it looks up the world z axis
    view = camera.matrix_world.to_3x3() @ Vector((0.0, 0.0, -1.0))  # Blender cameras look along -z
    assert tuple(view) == pytest.approx((0.0, 0.0, 1.0), abs=1e-6)
    mount.location.x += 2.0
    bpy.context.view_layer.update()
    assert tuple(camera.matrix_world.translation) == pytest.approx((3.0, 0.1, 1.0), abs=1e-6)


def test_untouched_export_is_unchanged(blank, tmp_path):
    _import()
    out = tmp_path / "out.simscene.xml"
    assert bpy.ops.export_scene.coppelia_xml(filepath=str(out)) == {"FINISHED"}
    expected, _ = coppelia_xml.dumps(coppelia_xml.read(str(XML)), str(out))
    assert out.read_text() == expected
    assert "<vertices>" in expected and "MISSING" not in expected


def test_untouched_rscene_export_of_the_converted_scene_is_byte_identical(blank, tmp_path):
    source = tmp_path / "converted.rscene"
    source.write_text(rscene.dumps(coppelia_xml.read(str(XML))))
    scene_import.import_scene_file(str(source), bpy.context.scene)
    assert _object("/World/cameraMount/DefaultCamera").parent is _object("/World/cameraMount")
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == source.read_bytes()


def _terrain_base_color(ob):
    """The terrain material's Base Color input: (the colour attribute feeding it, or None; its own value)."""
    material = ob.data.materials[0]
    bsdf = next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    socket = bsdf.inputs["Base Color"]
    source = socket.links[0].from_node if socket.is_linked else None
    return material, source


def test_terrain_material_shows_the_terrain_texture_colour(blank):
    """The newer document's example: terrain_texture 0 grass color=0.3,0.45,0.2 and a terrain with
    material=- and baseTexture=0: every sample is that grass colour, not the light grey default."""
    scene_import.import_scene_file(str(EXAMPLE), bpy.context.scene)
    terrain = _object("/World/Terrain")
    material, source = _terrain_base_color(terrain)
    assert source is not None and source.type == "ATTRIBUTE"
    attribute = terrain.data.color_attributes[source.attribute_name]
    assert attribute.domain == "POINT" and len(attribute.data) == 9
    colors = np.empty(len(attribute.data) * 4, dtype=np.float32)
    attribute.data.foreach_get("color", colors)
    np.testing.assert_allclose(colors.reshape(-1, 4), np.tile((0.3, 0.45, 0.2, 1.0), (9, 1)), atol=1e-7)
    assert tuple(material.diffuse_color) == pytest.approx((0.3, 0.45, 0.2, 1.0))
    bsdf = next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert bsdf.inputs["Roughness"].default_value == pytest.approx(0.9)  # the grass layer's roughness


def test_a_terrain_that_names_a_material_keeps_it(blank, tmp_path):
    text = EXAMPLE.read_text().replace("terrain_region /World/Terrain 3 3 4 4 0 0 0 parentGroupId=- material=-",
                                       "terrain_region /World/Terrain 3 3 4 4 0 0 0 parentGroupId=- material=crate")
    assert text != EXAMPLE.read_text()
    path = tmp_path / "named.rscene"
    path.write_text(text)
    scene_import.import_scene_file(str(path), bpy.context.scene)
    material, source = _terrain_base_color(_object("/World/Terrain"))
    assert source is None and material.get("rscene_id") == "crate"


def test_a_compound_part_with_inline_triangles_is_a_mesh(blank, tmp_path):
    text = XML.read_text()
    mesh = re.search(r"<mesh>.*?</mesh>", text, re.S).group(0)
    path = tmp_path / "compound.simscene.xml"
    path.write_text(text.replace(mesh, f"<compound>{mesh}<primitive><type>cuboid</type></primitive></compound>"))
    assert bpy.ops.import_scene.coppelia_xml(filepath=str(path)) == {"FINISHED"}
    crate = _object("/World/crate")
    parts = {ob.get("rscene_compound_child"): ob for ob in crate.children}
    assert len(parts) == 2 and all(ob.type == "MESH" for ob in parts.values())
    mesh_part = next(ob for ob in parts.values() if len(ob.data.vertices) == 8 and len(ob.data.polygons) == 12)
    coords = np.empty(24)
    mesh_part.data.vertices.foreach_get("co", coords)
    np.testing.assert_allclose(coords.reshape(-1, 3), _file_numbers("vertices").reshape(-1, 3), atol=1e-7)


def test_terrain_renders_in_its_grass_colour(blank, tmp_path):
    """Cycles, a camera straight down on the example's terrain under a uniform white sky, linear EXR: the
    pixels have the grass colour's proportions (0.3 : 0.45 : 0.2), not the grey default's (B > G > R)."""
    scene_import.import_scene_file(str(EXAMPLE), bpy.context.scene)
    bl = bpy.context.scene
    for ob in bl.objects:
        if ob.type != "CAMERA" and ob.rscene.path != "/World/Terrain":
            ob.hide_render = True
    camera = bl.camera
    camera.location, camera.rotation_mode, camera.rotation_euler = (0.0, 0.0, 3.0), "XYZ", (0.0, 0.0, 0.0)
    camera.data.type, camera.data.ortho_scale = "ORTHO", 1.0  # the middle metre of the 4 m terrain
    world = bpy.data.worlds.new("white")
    compat.enable_world_nodes(world)
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (1.0, 1.0, 1.0, 1.0)
    bl.world = world
    bl.render.engine = "CYCLES"
    bl.cycles.samples, bl.cycles.device = 16, "CPU"
    bl.render.resolution_x = bl.render.resolution_y = 4
    bl.render.resolution_percentage = 100
    bl.render.image_settings.file_format = "OPEN_EXR"
    bl.render.filepath = str(tmp_path / "terrain.exr")
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(tmp_path / "terrain.exr"))
    pixels = np.array(image.pixels[:]).reshape(4, 4, 4)[..., :3].reshape(-1, 3).mean(axis=0)
    r, g, b = pixels
    assert g > r > b > 0
    assert r / g == pytest.approx(0.3 / 0.45, abs=0.08) and b / g == pytest.approx(0.2 / 0.45, abs=0.08)


def test_bodies_the_simulator_moves_stay_unparented(blank):
    """The manual's BubbleRob: a dynamic wheel under a joint under the dynamic body. The wheel moves on its
    own (bake keys its world pose, so a Blender parent would move it twice); the joint marker, which the
    simulator does not move, rides on the body."""
    assert bpy.ops.import_scene.coppelia_xml(filepath=str(XML.parent / "bubblerob.simscene.xml")) == {"FINISHED"}
    body = _object("/World/bubbleRob")
    joint = _object("/World/bubbleRob/bubbleRobLeftMotor")
    wheel = _object("/World/bubbleRob/bubbleRobLeftMotor/bubbleRobLeftWheel")
    assert body.rscene.body_mode == "dynamic" and body.parent is None
    assert joint.parent is body and wheel.parent is None
    bpy.context.view_layer.update()
    assert tuple(wheel.matrix_world.translation) == pytest.approx((0.05, 0.1, 0.04), abs=1e-6)  # as read
