"""support_records: wires, sensors, fog, probes, point sets, soft bodies, decals and compounds as Blender
data, checked against the records; import -> export stays byte-identical."""
from __future__ import annotations

import math

import bpy
import numpy as np
import pytest
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Matrix, Quaternion, Vector

from rscene_addon.blender import scene_import, extract
from rscene_addon.blender.support_records import build_support_record, probe_type

S = math.sqrt(0.5)
LINES = [
    "raisim_engine_scene 2",
    "time_step 0.0025",
    f"object /World/BodyA box 1 2 0.5 {S} 0 0 {S} 1 1 1 0.5 1 1 default - false true false - static true "
    "1 18446744073709551615 id=object_a",
    "compound /World/Forklift 1 -2 0.5 1 0 0 0 1 1 1 12.0 dynamic true true id=compound_forklift",
    "compound_child /World/Forklift box 0 0 0 1 0 0 0 1 1 1 size=1.2,0.8,0.4 radius=0 height=0 "
    "contactMaterial=default material=engine_default",
    "compound_child /World/Forklift cylinder 0.3 0 -0.2 1 0 0 0 1 1 1 size=0,0,0 radius=0.15 height=0.1",
    "deformable /World/Flag cloth - 2 0 1.8 1 0 0 0 1 1 1 id=deformable_flag pinnedVertices=0,1,2,3,999 "
    "particleSpacing=0.1 material=engine_default",
    "granular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 id=granular_sand positions= radii= "
    "boxMin=-0.1,-0.1,0.0 boxMax=0.1,0.1,0.05 radius=0.01 spacing=0.05 maxParticles=20000",
    "granular /World/Pebbles particles 0 0 1 1 0 0 0 1 1 1 positions=0,0,0;0.1,0,0 radii=0.02,0.03",
    "articulated /World/Robot robot_resource 0 0 1 1 0 0 0 true true",
    "sensor /World/Cam rgb object_a 0.1 0 0.2 0.9238795 0 0.3826834 0 width=64 height=48 verticalFov=45 "
    "nearPlane=0.05 farPlane=80",
    "sensor /World/Lidar lidar /World/BodyA 0 0 0.3 1 0 0 0 lidarChannels=16",
    "sensor /World/Imu imu - 0.5 0.5 0.5 1 0 0 0 updateRate=200",
    "wire /World/Hoist stiff object_a compound_forklift 2.5 localPositionA=0.1,0,0.225 "
    "localPositionB=0.3,0,0.4 visualizationWidth=0.02",
    "reflection_probe /World/Probe 0.0 0.0 1.6 6.0 boxProjection=true boxMin=-3,-3,0 boxMax=3,3,3",
    "local_fog /World/Fog 2 -1 0.5 3.0 color=0.45,0.55,0.65 density=0.6 edgeFade=0.3",
    "projected_decal /World/Poster 2 0 1.6 0.707 0 0 0.707 1 1 1 halfExtents=0.6,0.05,0.3 "
    "albedoTexture=textures/poster.png",
    "irradiance_volume /World/Lobby 0 0 1.5 1 0 0 0 1 1 1 halfExtents=4,4,1.7 strength=0.85",
    "point_cloud /World/Cloud points=1.0,0.0,0.0;1.1,0.0,0.0;1.2,0.0,0.0 colors=1,0,0,1;1,0.5,0,1;1,1,0,1 "
    "pointSize=2.5",
]


@pytest.fixture
def scene_file(tmp_path):
    path = tmp_path / "support.rscene"
    path.write_text("\n".join(LINES) + "\n")
    return path


@pytest.fixture
def imported(blank, scene_file, monkeypatch):
    """The file imported with support records dispatched to ``build_support_record``."""
    _dispatch_support_records(monkeypatch)
    warnings = []
    scene_import.import_scene_file(str(scene_file), bpy.context.scene, report=lambda lvl, msg: warnings.append(msg))
    bpy.context.view_layer.update()
    return {ob.rscene.path: ob for ob in bpy.data.objects if ob.rscene.kind}, warnings


def _dispatch_support_records(monkeypatch):
    """What scene_import.py will do: support kinds to build_support_record, the rest to the original empty."""
    original = scene_import.SceneBuilder.build_support

    def dispatch(self, record):
        return build_support_record(self, record, fallback=lambda rec: original(self, rec))

    monkeypatch.setattr(scene_import.SceneBuilder, "build_support", dispatch)


def _pose(position, wxyz):
    return Matrix.Translation(position) @ Quaternion(wxyz).normalized().to_matrix().to_4x4()


def test_wire_ends_at_attachment_points(imported):
    obs, _ = imported
    ob = obs["/World/Hoist"]
    assert ob.type == "CURVE" and ob.data.splines[0].type == "POLY"
    assert ob.data.bevel_depth == pytest.approx(0.01)
    pts = [ob.matrix_world @ p.co.xyz for p in ob.data.splines[0].points]
    # body A: at (1,2,0.5) turned 90 degrees about z, so its local x is world y
    assert tuple(pts[0]) == pytest.approx((1.0, 2.1, 0.725), abs=1e-6)
    assert tuple(pts[1]) == pytest.approx((1.3, -2.0, 0.9), abs=1e-6)


def test_camera_sensor_looks_along_record_x(imported):
    obs, _ = imported
    ob = obs["/World/Cam"]
    assert ob.type == "CAMERA" and ob["rscene_parent"] == "/World/BodyA"
    assert ob.data.clip_start == pytest.approx(0.05) and ob.data.clip_end == pytest.approx(80)
    assert ob.data.sensor_fit == "VERTICAL"
    assert 2 * math.degrees(math.atan(ob.data.sensor_height / (2 * ob.data.lens))) == pytest.approx(45)
    world = _pose((1, 2, 0.5), (S, 0, 0, S)) @ _pose((0.1, 0, 0.2), (0.9238795, 0, 0.3826834, 0))
    assert tuple(ob.matrix_world.translation) == pytest.approx(tuple(world.translation), abs=1e-6)
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = ob["rscene_resolution"]
    ahead = world @ Vector((5.0, 0.0, 0.0))
    view = world_to_camera_view(scene, ob, ahead)
    assert tuple(view) == pytest.approx((0.5, 0.5, 5.0), abs=1e-5)
    above = world_to_camera_view(scene, ob, world @ Vector((5.0, 0.0, 0.5)))
    left = world_to_camera_view(scene, ob, world @ Vector((5.0, 0.5, 0.0)))
    assert above.y > 0.5 and abs(above.x - 0.5) < 1e-5  # record +z is image up
    assert left.x < 0.5 and abs(left.y - 0.5) < 1e-5  # record +y is image left


def test_lidar_and_imu_are_placed_empties(imported):
    obs, _ = imported
    lidar, imu = obs["/World/Lidar"], obs["/World/Imu"]
    assert lidar.type == "EMPTY" and lidar.empty_display_type == "SINGLE_ARROW"
    assert tuple(lidar.matrix_world.translation) == pytest.approx((1, 2, 0.8), abs=1e-6)
    assert lidar["rscene_parent"] == "/World/BodyA"
    assert imu.type == "EMPTY" and imu.empty_display_type == "PLAIN_AXES"
    assert tuple(imu.matrix_world.translation) == pytest.approx((0.5, 0.5, 0.5))
    assert imu["rscene_parent"] == ""


def test_fog_sphere_and_volume_material(imported):
    obs, _ = imported
    ob = obs["/World/Fog"]
    co = np.array([v.co for v in ob.data.vertices])
    assert np.linalg.norm(co, axis=1).max() == pytest.approx(3.0, rel=1e-5)
    assert tuple(ob.location) == pytest.approx((2, -1, 0.5))
    nodes = ob.data.materials[0].node_tree.nodes
    volume = next(n for n in nodes if n.bl_idname == "ShaderNodeVolumePrincipled")
    assert volume.inputs["Density"].default_value == pytest.approx(0.6)
    assert tuple(volume.inputs["Color"].default_value)[:3] == pytest.approx((0.45, 0.55, 0.65))
    assert volume.outputs[0].links[0].to_socket.name == "Volume"


def test_light_probes(imported):
    obs, _ = imported
    probe, lobby = obs["/World/Probe"], obs["/World/Lobby"]
    assert probe.type == "LIGHT_PROBE" and probe.data.type == probe_type("sphere")
    assert probe.data.type in ("SPHERE", "CUBEMAP")
    assert probe.data.influence_distance == pytest.approx(6.0)
    assert tuple(probe.location) == pytest.approx((0, 0, 1.6))
    assert lobby.data.type == probe_type("volume") and lobby.data.type in ("VOLUME", "GRID")
    assert tuple(lobby.scale) == pytest.approx((4, 4, 1.7))
    assert tuple(lobby.location) == pytest.approx((0, 0, 1.5))


def _attribute(mesh, name, field, width):
    data = mesh.attributes[name].data
    out = np.zeros(len(data) * width, dtype=np.float32)
    data.foreach_get(field, out)
    return out.reshape(len(data), width) if width > 1 else out


def test_point_cloud_points_and_colors(imported):
    obs, _ = imported
    ob = obs["/World/Cloud"]
    mesh = ob.data
    assert len(mesh.vertices) == 3 and len(mesh.polygons) == 0
    co = np.array([v.co for v in mesh.vertices])
    assert co == pytest.approx(np.array([[1, 0, 0], [1.1, 0, 0], [1.2, 0, 0]]), abs=1e-6)
    colors = _attribute(mesh, "point_color", "color", 4)
    assert colors == pytest.approx(np.array([[1, 0, 0, 1], [1, 0.5, 0, 1], [1, 1, 0, 1]]), abs=1e-6)
    assert ob.modifiers[0].type == "NODES"
    assert any(n.bl_idname == "GeometryNodeMeshToPoints" for n in ob.modifiers[0].node_group.nodes)
    # the evaluated geometry is a point cloud of the same size
    depsgraph = bpy.context.evaluated_depsgraph_get()
    clouds = [inst.object for inst in depsgraph.object_instances
              if inst.object.type == "POINTCLOUD" and inst.object.original == ob]
    assert clouds and len(clouds[0].data.points) == 3


def test_granular_box_fill_and_explicit(imported):
    obs, _ = imported
    sand, pebbles = obs["/World/Sand"], obs["/World/Pebbles"]
    # centres inset by the radius, 0.05 apart: x, y from -0.09 to 0.06 (4 each), one layer at z = 0.01
    assert len(sand.data.vertices) == 4 * 4 * 1
    co = np.array([v.co for v in sand.data.vertices])
    jitter = 0.05 * (0.05 - 0.02 + 0.002)
    assert co.min(axis=0) == pytest.approx((-0.09, -0.09, 0.01), abs=jitter)
    assert co.max(axis=0) == pytest.approx((0.06, 0.06, 0.01), abs=jitter)
    assert _attribute(sand.data, "radius", "value", 1) == pytest.approx(np.full(16, 0.01))
    assert len(pebbles.data.vertices) == 2
    assert _attribute(pebbles.data, "radius", "value", 1) == pytest.approx([0.02, 0.03])
    assert tuple(pebbles.location) == pytest.approx((0, 0, 1))


def test_deformable_pinned_group(imported):
    obs, warnings = imported
    ob = obs["/World/Flag"]
    assert len(ob.data.vertices) == 11 * 11
    group = ob.vertex_groups["pinned"]
    members = [v.index for v in ob.data.vertices if any(g.group == group.index for g in v.groups)]
    assert members == [0, 1, 2, 3]
    assert any("pinned" in w for w in warnings)  # index 999 is out of range


def test_decal_and_compound(imported):
    obs, _ = imported
    decal = obs["/World/Poster"]
    assert decal.type == "EMPTY" and decal.empty_display_type == "CUBE"
    assert tuple(decal.scale) == pytest.approx((0.6, 0.05, 0.3))
    assert decal["rscene_texture"] == "textures/poster.png"
    compound = obs["/World/Forklift"]
    assert compound.type == "EMPTY" and tuple(compound.location) == pytest.approx((1, -2, 0.5))
    children = sorted(compound.children, key=lambda c: c["rscene_compound_child"])
    assert [c.type for c in children] == ["MESH", "MESH"]
    assert all(c.users_collection for c in children)  # linked by the builder
    assert tuple(children[0].scale) == pytest.approx((1.2, 0.8, 0.4))
    assert tuple(children[1].matrix_world.translation) == pytest.approx((1.3, -2, 0.3))
    co = np.array([v.co for v in children[1].data.vertices])
    assert np.hypot(co[:, 0], co[:, 1]).max() == pytest.approx(0.15, rel=1e-5)


def test_other_kinds_fall_back_to_empty(imported):
    obs, _ = imported
    robot = obs["/World/Robot"]
    assert robot.type == "EMPTY" and tuple(robot.location) == pytest.approx((0, 0, 1))


def test_export_is_byte_identical(imported, scene_file, tmp_path):
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == scene_file.read_bytes()


def test_failed_import_leaves_no_datablocks(blank, scene_file, monkeypatch):
    _dispatch_support_records(monkeypatch)

    def fail(self):
        raise RuntimeError("boom")

    monkeypatch.setattr(scene_import.SceneBuilder, "_apply_scene_settings", fail)
    names = ("objects", "meshes", "curves", "cameras", "lightprobes", "materials", "node_groups",
             "collections")
    before = {n: len(getattr(bpy.data, n)) for n in names}
    with pytest.raises(RuntimeError):
        scene_import.import_scene_file(str(scene_file), bpy.context.scene)
    assert {n: len(getattr(bpy.data, n)) for n in names} == before


def test_point_colors_render_in_cycles(blank, tmp_path, monkeypatch):
    """Points render as spheres in their record colours (Cycles ignores a point attribute named 'color')."""
    _dispatch_support_records(monkeypatch)
    path = tmp_path / "cloud.rscene"
    path.write_text("\n".join([
        "raisim_engine_scene 2",
        "camera /World/Cam -2 0 0 1 0 0 0 30 0.05 100 32 32 rgb true",
        "light /World/Sun 0 0 -1 3 type=directional",
        "point_cloud /World/Cloud points=0,-0.2,0;0,0.2,0 colors=1,0,0,1;0,1,0,1 pointSize=60",
    ]) + "\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.cycles.device = "CPU"
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = str(tmp_path / "cloud.png")
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(scene.render.filepath)
    px = np.array(image.pixels[:]).reshape(32, 32, 4)
    green, red = px[16, 10, :3], px[16, 22, :3]  # record +y is image left
    assert green[1] > 2 * green[0] and red[0] > 2 * red[1]


def test_deleting_a_compound_removes_its_children_records(blank, tmp_path):
    from rscene_addon.formats import rscene as codec
    path = tmp_path / "compound.rscene"
    path.write_text("\n".join(LINES[:2] + [line for line in LINES if line.startswith("compound")]) + "\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    compound = next(ob for ob in bpy.data.objects if ob.rscene.kind == "compound")
    for child in list(compound.children):
        bpy.data.objects.remove(child)
    bpy.data.objects.remove(compound)
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    written = codec.read(str(out))
    assert not written.of("compound") and not written.of("compound_child")
