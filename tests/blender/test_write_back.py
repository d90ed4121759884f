"""Every record kind the importers make survives a Blender edit: move or edit it, export, and exactly the
edited records' lines change (checked with difflib over the lines, and by reading the file again). Sensors
ride on their vehicle, path folders become collections, and a bake never changes the file."""
from __future__ import annotations

import difflib
import math
import shutil

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Quaternion, Vector

from rscene_addon.blender import bake, extract, scene_import
from rscene_addon.formats import airsim, rscene
from tests.corpus import EXAMPLE, require_corpus

DRONE = ("airsim/iamaisim-ProjectAirSim/client/python/example_user_scripts/sim_config/"
         "scene_drone_sensors.jsonc")


def _changed(before: str, after: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) of a line diff: an independent view of what export rewrote."""
    a, b = before.splitlines(), after.splitlines()
    removed, added = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return removed, added


def _heads(lines) -> list[tuple[str, str]]:
    return sorted(tuple(line.split()[:2]) for line in lines)


def _nodes():
    return {ob.rscene.path: ob for ob in bpy.data.objects if ob.rscene.kind}


def _export(tmp_path, name="out.rscene", **kwargs) -> str:
    out = tmp_path / name
    warnings = []
    extract.export_scene(bpy.context.scene, str(out), warn=warnings.append, **kwargs)
    _export.warnings = warnings
    return out.read_text()


# -- AirSim: actors, their parts and sensors ------------------------------------------------------------


@pytest.fixture
def drone(blank):
    corpus = require_corpus(DRONE)
    path = corpus / DRONE
    scene_import.import_scene_file(str(path), bpy.context.scene)
    bpy.context.view_layer.update()
    return rscene.dumps(airsim.read(str(path)))  # the document as the reader makes it, without Blender


def test_airsim_untouched_export_is_the_read_document(drone, tmp_path):
    assert _export(tmp_path) == drone


def test_airsim_sensors_ride_on_their_vehicle_and_a_camera_is_active(drone):
    nodes = _nodes()
    body, chase = nodes["/World/Drone1"], nodes["/World/Drone1/Chase"]
    assert chase.parent is body and nodes["/World/Drone1/lidar1"].parent is body
    # the active camera is the first enabled camera sensor, at its resolution (1280x720 in the file)
    scene = bpy.context.scene
    assert scene.camera is chase
    assert (scene.render.resolution_x, scene.render.resolution_y) == (1280, 720)
    record = rscene.loads(drone).by_path("/World/Drone1/Chase")
    mount = Matrix.Translation(record.get("position")) @ Quaternion(record.get("quaternion")).to_matrix().to_4x4()
    expected = body.matrix_world @ mount  # the body's pose (scale 1) then the mount pose, as the format says
    assert np.allclose(np.array(chase.matrix_world.to_translation()), np.array(expected.to_translation()), atol=1e-5)
    before = chase.matrix_world.to_translation()
    body.location.x += 3.0
    bpy.context.view_layer.update()
    assert tuple(chase.matrix_world.to_translation() - before) == pytest.approx((3.0, 0.0, 0.0), abs=1e-5)


def test_airsim_each_edit_reaches_exactly_its_record(drone, tmp_path):
    nodes = _nodes()
    body = nodes["/World/Drone1"]
    body.location = (1.0, 2.0, 5.0)  # the vehicle; its sensors follow, their records (relative) do not change
    down = nodes["/World/Drone1/DownCamera"]
    down.location = (1.5, -2.2, 3.3)  # the sensor, in its vehicle's frame
    prop = next(ob for ob in body.children if ob.get("rscene_compound_child") == 1)
    prop.rotation_quaternion = Quaternion((0, 0, 1), math.radians(30))
    imu = nodes["/World/Drone1/IMU1"]
    imu.hide_render = True
    bpy.context.scene.render.resolution_x = 1280  # the active camera (Chase) at its own resolution: no change
    text = _export(tmp_path)
    removed, added = _changed(drone, text)
    edited = [("compound", "/World/Drone1"), ("compound_child", "/World/Drone1"),
              ("sensor", "/World/Drone1/DownCamera"), ("sensor", "/World/Drone1/IMU1")]
    assert _heads(removed) == _heads(added) == sorted(edited)
    assert [line for line in removed if line.startswith("compound_child")] == [drone.splitlines()[5]]  # child 1: Prop_FL
    out = rscene.loads(text)
    assert out.by_path("/World/Drone1").get("position") == pytest.approx((1.0, 2.0, 5.0))
    cam = out.by_path("/World/Drone1/DownCamera")
    original = rscene.loads(drone).by_path("/World/Drone1/DownCamera")
    assert cam.get("position") == pytest.approx((1.5, -2.2, 3.3), abs=1e-6)
    assert abs(abs(Quaternion(cam.get("quaternion")).dot(Quaternion(original.get("quaternion")))) - 1) < 1e-6
    child = out.of("compound_child")[1]
    assert Quaternion(child.get("quaternion")).angle == pytest.approx(math.radians(30), abs=1e-6)
    assert out.by_path("/World/Drone1/IMU1").get("enabled") is False


def test_a_sensor_taken_off_its_vehicle_is_written_relative_to_it(drone, tmp_path):
    nodes = _nodes()
    body, cam = nodes["/World/Drone1"], nodes["/World/Drone1/Chase"]
    world = cam.matrix_world.copy()
    cam.parent = None
    cam.matrix_world = world @ Matrix.Translation((0.0, 0.0, -1.0))  # 1 m along the camera's view (-z)
    bpy.context.view_layer.update()
    record = rscene.loads(_export(tmp_path)).by_path("/World/Drone1/Chase")
    original = rscene.loads(drone).by_path("/World/Drone1/Chase")
    forward = Quaternion(original.get("quaternion")) @ Vector((1.0, 0.0, 0.0))  # a camera looks along +x
    expected = Vector(original.get("position")) + forward
    assert record.get("position") == pytest.approx(tuple(expected), abs=1e-5)
    assert body.parent is None


# -- the other kinds ---------------------------------------------------------------------------------------

S = math.sqrt(0.5)
SUPPORT = [
    "raisim_engine_scene 2",
    f"object /World/BodyA box 1 2 0.5 {S} 0 0 {S} 2 1 1 0.5 1 1 default - false true false - static true "
    "1 18446744073709551615 id=object_a",
    "deformable /World/Flag cloth - 2 0 1.8 1 0 0 0 1 1 1 particleSpacing=0.1",
    "granular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 boxMin=-0.1,-0.1,0.0 boxMax=0.1,0.1,0.05 spacing=0.05",
    "sensor /World/Lidar lidar object_a 0.3 0 0 1 0 0 0 lidarChannels=16",
    "sensor /World/Imu imu - 0.5 0.5 0.5 1 0 0 0 updateRate=200",
    "wire /World/Hoist stiff object_a /World/BodyA 2.5 localPositionA=0.1,0,0.2",
    "reflection_probe /World/Probe 0.0 0.0 1.6 6.0",
    "local_fog /World/Fog 2 -1 0.5 3.0 density=0.6",
    "projected_decal /World/Poster 2 0 1.6 1 0 0 0 1 1 1 halfExtents=0.6,0.05,0.3",
    "irradiance_volume /World/Lobby 0 0 1.5 1 0 0 0 1 1 1 halfExtents=4,4,1.7",
    "point_cloud /World/Cloud points=1.0,0.0,0.0;1.1,0.0,0.0 colors=1,0,0,1;1,0.5,0,1 pointSize=2.5",
]


@pytest.fixture
def support(blank, tmp_path):
    path = tmp_path / "support.rscene"
    path.write_text("\n".join(SUPPORT) + "\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    bpy.context.view_layer.update()
    return path.read_text()


def test_untouched_support_kinds_export_byte_identical(support, tmp_path):
    assert _export(tmp_path) == support
    assert _export.warnings == []


@pytest.mark.parametrize("path, edit, check", [
    ("/World/Flag", lambda ob: setattr(ob, "location", (2.0, 1.0, 1.8)), lambda r: r.get("position") == pytest.approx((2, 1, 1.8))),
    ("/World/Sand", lambda ob: setattr(ob, "scale", (2.0, 2.0, 2.0)), lambda r: r.get("scale") == pytest.approx((2, 2, 2))),
    ("/World/Lidar", lambda ob: setattr(ob, "location", (0.0, 0.0, 0.5)), lambda r: r.get("position") == pytest.approx((0, 0, 0.5))),
    ("/World/Imu", lambda ob: setattr(ob, "location", (1.0, 0.5, 0.5)), lambda r: r.get("position") == pytest.approx((1, 0.5, 0.5))),
    ("/World/Probe", lambda ob: setattr(ob.data, "influence_distance", 4.0), lambda r: r.get("radius") == pytest.approx(4.0)),
    ("/World/Fog", lambda ob: setattr(ob, "location", (0.0, 0.0, 1.0)), lambda r: r.get("center") == pytest.approx((0, 0, 1))),
    ("/World/Poster", lambda ob: setattr(ob, "scale", (1.2, 0.05, 0.3)), lambda r: r.get("scale") == pytest.approx((2, 1, 1))),
    ("/World/Lobby", lambda ob: setattr(ob, "rotation_quaternion", (S, 0, 0, S)), lambda r: r.get("quaternion") == pytest.approx((S, 0, 0, S), abs=1e-6)),
    ("/World/Cloud", lambda ob: setattr(ob, "location", (0.0, 1.0, 0.0)),
     lambda r: np.allclose(np.asarray(r.get("points"), dtype=float).reshape(-1, 3), [[1, 1, 0], [1.1, 1, 0]])),
])
def test_each_support_kind_edit_changes_exactly_its_record(support, tmp_path, path, edit, check):
    ob = _nodes()[path]
    edit(ob)
    bpy.context.view_layer.update()
    text = _export(tmp_path)
    removed, added = _changed(support, text)
    kind = next(line.split()[0] for line in support.splitlines() if line.split()[1:2] == [path])
    assert _heads(removed) == _heads(added) == [(kind, path)]
    assert check(rscene.loads(text).by_path(path))
    assert _export.warnings == []


def test_a_lidar_follows_its_body_and_keeps_its_mount(support, tmp_path):
    nodes = _nodes()
    nodes["/World/BodyA"].location = (5.0, 5.0, 0.5)
    bpy.context.view_layer.update()
    lidar = nodes["/World/Lidar"]
    # the body's rotation (90 degrees about z) turns the mount's 0.3 m along its x to world +y; the body's
    # scale (2 along x: its box size) does not stretch the mount, as the format ignores it
    assert tuple(lidar.matrix_world.to_translation()) == pytest.approx((5.0, 5.3, 0.5), abs=1e-6)
    removed, _ = _changed(support, _export(tmp_path))
    assert _heads(removed) == [("object", "/World/BodyA")]


def test_an_edit_that_cannot_be_written_is_named(support, tmp_path):
    _nodes()["/World/Hoist"].location = (0.0, 0.0, 1.0)
    text = _export(tmp_path)
    assert text == support  # the wire's ends come from its bodies: nothing to write
    assert len(_export.warnings) == 1 and "wire /World/Hoist" in _export.warnings[0]


def test_terrain_moved_and_sculpted(blank, tmp_path):
    source = tmp_path / "example.rscene"
    shutil.copy(EXAMPLE, source)
    scene_import.import_scene_file(str(source), bpy.context.scene)
    terrain = _nodes()["/World/Terrain"]
    terrain.location = (1.0, 0.0, 0.0)
    terrain.data.vertices[4].co.z = 0.75  # the middle sample of the 3 x 3 grid
    text = _export(tmp_path)
    removed, added = _changed(source.read_text(), text)
    assert _heads(removed) == _heads(added) == [("terrain_region", "/World/Terrain")]
    record = rscene.loads(text).by_path("/World/Terrain")
    old = rscene.read(str(source)).by_path("/World/Terrain")
    expected = np.zeros(9) if len(old.get("heights")) == 0 else np.asarray(old.get("heights"), dtype=float)
    expected[4] = 0.75
    assert record.get("center") == pytest.approx((1.0, 0.0, 0.0))
    assert np.asarray(record.get("heights"), dtype=float) == pytest.approx(expected, abs=1e-6)


# -- the scene tree ---------------------------------------------------------------------------------------


def test_path_folders_become_nested_collections_and_export_keeps_the_file(blank, tmp_path):
    path = tmp_path / "rack.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "object /World/Physics/Rack_0/Shelf box 0 0 1 1 0 0 0 1 1 0.1 0.5 1 1 default - false true false - static true 1 18446744073709551615\n"
        "object /World/Physics/Rack_0/Crate box 0 0 1.5 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615\n"
        "object /World/Physics/Ground ground 0 0 0 1 0 0 0 10 10 1 0.5 1 1 default - false true false - static true 1 18446744073709551615\n"
        "sensor /World/Physics/Rack_0/Crate/Cam rgb /World/Physics/Rack_0/Crate 0 0 1 1 0 0 0\n"
        "object /World/Top box 0 0 3 1 0 0 0 1 1 1 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615\n")
    root = scene_import.import_scene_file(str(path), bpy.context.scene)
    physics = next(c for c in root.children if c.name.startswith("Physics"))
    rack = next(c for c in physics.children if c.name.startswith("Rack_0"))
    assert sorted(o.rscene.path for o in rack.objects) == [
        "/World/Physics/Rack_0/Crate", "/World/Physics/Rack_0/Crate/Cam", "/World/Physics/Rack_0/Shelf"]
    assert [o.rscene.path for o in physics.objects] == ["/World/Physics/Ground"]
    assert [o.rscene.path for o in root.objects] == ["/World/Top"]
    assert _export(tmp_path) == path.read_text()


def test_moving_an_object_to_another_group_collection_changes_its_group(blank, tmp_path):
    path = tmp_path / "groups.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "group /World/Props id=folder_props\n"
        "group /World/Props/Small id=folder_small parentId=folder_props\n"
        "object /World/Props/Small/Box box 0 0 1 1 0 0 0 1 2 3 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615 parentGroupId=folder_small\n"
        "object /World/Loose box 0 0 3 1 0 0 0 1 1 1 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615\n")
    root = scene_import.import_scene_file(str(path), bpy.context.scene)
    assert _export(tmp_path) == path.read_text()
    props = next(c for c in root.children if c.get("rscene_path") == "/World/Props")
    small = next(c for c in props.children if c.get("rscene_path") == "/World/Props/Small")
    box, loose = _nodes()["/World/Props/Small/Box"], _nodes()["/World/Loose"]
    small.objects.unlink(box)
    props.objects.link(box)
    root.objects.unlink(loose)
    small.objects.link(loose)
    text = _export(tmp_path)
    removed, added = _changed(path.read_text(), text)
    assert _heads(removed) == _heads(added) == [("object", "/World/Loose"), ("object", "/World/Props/Small/Box")]
    out = rscene.loads(text)
    assert out.by_path("/World/Props/Small/Box").get("parentGroupId") == "folder_props"
    assert out.by_path("/World/Loose").get("parentGroupId") == "folder_small"


def test_children_of_a_node_follow_it_and_are_written_in_world_coordinates(blank, tmp_path):
    """The CoppeliaSim reader's model: a child names its parent node in parentGroupId and holds its world pose."""
    path = tmp_path / "dummy.rscene"
    path.write_text(
        "raisim_engine_scene 2\n"
        "object /World/Dummy box 1 0 1 1 0 0 0 0.1 0.1 0.1 0.5 1 1 default - true false false - visual_only false 1 18446744073709551615 id=dummy\n"
        "object /World/Dummy/Box box 1 0 2 1 0 0 0 2 1 1 0.5 1 1 default - false true false - static true 1 18446744073709551615 parentGroupId=dummy\n"
        "camera /World/Dummy/Cam 1 0 3 1 0 0 0 60 0.05 100 640 480 rgb true parentGroupId=dummy\n"
        "object /World/Other box 5 5 0.5 1 0 0 0 1 1 1 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    bpy.context.view_layer.update()
    nodes = _nodes()
    dummy, box, cam = nodes["/World/Dummy"], nodes["/World/Dummy/Box"], nodes["/World/Dummy/Cam"]
    assert box.parent is dummy and cam.parent is dummy
    assert tuple(box.matrix_world.to_translation()) == pytest.approx((1, 0, 2), abs=1e-6)
    assert tuple(box.matrix_world.to_scale()) == pytest.approx((2, 1, 1), abs=1e-6)  # not shrunk by the dummy's size
    assert _export(tmp_path) == path.read_text()
    dummy.location.x += 1.0
    bpy.context.view_layer.update()
    text = _export(tmp_path)
    removed, added = _changed(path.read_text(), text)
    edited = [("camera", "/World/Dummy/Cam"), ("object", "/World/Dummy"), ("object", "/World/Dummy/Box")]
    assert _heads(removed) == _heads(added) == edited
    out = rscene.loads(text)
    assert out.by_path("/World/Dummy/Box").get("position") == pytest.approx((2, 0, 2), abs=1e-6)
    assert out.by_path("/World/Dummy/Box").get("scale") == pytest.approx((2, 1, 1), abs=1e-6)
    assert out.by_path("/World/Dummy/Cam").get("position") == pytest.approx((2, 0, 3), abs=1e-6)


def test_corpus_city_is_shown_in_its_folders(blank, tmp_path):
    corpus = require_corpus("rscene/raisimTech-raisim2Lib/rayrai_city.EXCERPT-head.rscene")
    path = corpus / "rscene/raisimTech-raisim2Lib/rayrai_city.EXCERPT-head.rscene"
    root = scene_import.import_scene_file(str(path), bpy.context.scene)
    physics = next(c for c in root.children if c.get("rscene_path") == "/World/Physics")
    expected = {r.path for r in rscene.read(str(path)).records if r.schema and (r.path or "").startswith("/World/Physics/")
                and r.path.count("/") == 3 and r.tag in ("object", "light", "camera")}
    assert {o.rscene.path for o in physics.objects} == expected


# -- bake keeps the start pose --------------------------------------------------------------------------


@pytest.fixture
def example(blank, tmp_path):
    source = tmp_path / "example.rscene"
    shutil.copy(EXAMPLE, source)
    scene_import.import_scene_file(str(source), bpy.context.scene)
    bpy.context.scene.render.fps = 24
    bpy.context.scene.rscene.sim_backend = "numpy"
    return source


def test_bake_export_and_clear_give_the_file_back(example, tmp_path):
    original = example.read_text()
    crate = _nodes()["/World/Crate"]
    z0 = crate.location.z
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13) == {"FINISHED"}
    scene = bpy.context.scene
    scene.frame_set(13)
    assert crate.location.z < z0 - 1e-3  # the bake plays: the crate fell
    assert _export(tmp_path, "baked.rscene") == original
    assert crate.location.z < z0 - 1e-3  # export left the bake playing
    current = rscene.loads(_export(tmp_path, "frame.rscene", current_frame=True)).by_path("/World/Crate")
    assert current.get("position")[2] == pytest.approx(crate.location.z, abs=1e-6)
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}
    record = rscene.read(str(example)).by_path("/World/Crate")
    assert tuple(crate.location) == pytest.approx(tuple(record.get("position")), abs=1e-6)
    assert _export(tmp_path, "cleared.rscene") == original


def test_start_from_current_pose(example, tmp_path):
    crate = _nodes()["/World/Crate"]
    record_z = rscene.read(str(example)).by_path("/World/Crate").get("position")[2]
    crate.location.z = record_z + 2.0
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=3, from_current_pose=False) == {"FINISHED"}
    assert bake.keyed_values(crate, "location", 2)[0, 1] == pytest.approx(record_z, abs=1e-5)
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}
    assert crate.location.z == pytest.approx(record_z + 2.0, abs=1e-6)  # the edit made before the bake
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=3, from_current_pose=True) == {"FINISHED"}
    assert bake.keyed_values(crate, "location", 2)[0, 1] == pytest.approx(record_z + 2.0, abs=1e-5)


def test_a_mesh_made_in_blender_is_named_by_the_bake_and_its_body_mode_is_written(example, tmp_path):
    """The factory startup's Cube left beside an imported file: the bake says it simulates it (a dynamic
    1 kg box falls freely, z = z0 - g t^2 / 2 before it lands); set static in its RaiSim Record panel, it stays
    put, and export adds it to the file as a static box of the Cube's size (read back by the reader)."""
    from rscene_addon.blender import simulation
    from rscene_addon.ui.panels import RSCENE_PT_object
    mesh = bpy.data.meshes.new("Cube")
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [],
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    cube = bpy.data.objects.new("Cube", mesh)
    bpy.context.scene.collection.objects.link(cube)
    cube.location = (6.0, 0.0, 5.0)  # clear of the file's bodies and terrain
    bpy.context.view_layer.objects.active = cube
    assert RSCENE_PT_object.poll(bpy.context)  # its panel shows, to set the body mode

    notes = []
    simulation.prepare(bpy.context.scene, 1, 13, say=notes.append)
    assert any("Cube (dynamic, 1 kg)" in note for note in notes), notes
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13) == {"FINISHED"}
    t = 12 / 24
    assert bake.keyed_values(cube, "location", 2)[-1, 1] == pytest.approx(5.0 - 9.81 * t * t / 2, abs=0.02)
    assert bpy.ops.rscene.clear_bake() == {"FINISHED"}

    cube.rscene.body_mode = "static"
    notes.clear()
    simulation.prepare(bpy.context.scene, 1, 13, say=notes.append)
    assert any("Cube (static" in note for note in notes), notes
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=13) == {"FINISHED"}
    bpy.context.scene.frame_set(13)
    assert cube.location.z == pytest.approx(5.0, abs=1e-6)
    written = rscene.loads(_export(tmp_path)).by_path("/World/Cube")
    assert written.get("primitive") == "box" and written.get("bodyMode") == "static"
    # a box record's scale is its side lengths: the 2 m Cube (corners at +-1) as Blender measures it
    assert tuple(cube.dimensions) == pytest.approx((2.0, 2.0, 2.0))
    assert tuple(written.get("scale")) == pytest.approx(tuple(cube.dimensions))


# -- robots: their own sensors cannot be written; a baked robot writes its start state -------------------


def test_robot_sensor_edit_is_named_and_a_baked_robot_gives_its_file_back(blank, tmp_path):
    corpus = require_corpus("robots")
    pytest.importorskip("collada", reason="pycollada is installed by scripts/setup.sh from the shipped wheels")
    from rscene_addon.blender import robots as rb
    from rscene_addon.blender.robot_sensors import SENSOR_KEY
    from rscene_addon.sim import simulate
    urdf = corpus / "robots" / "raisimTech-raisim2Lib" / "rsc" / "anymal_c" / "urdf" / "anymal_sensored.urdf"
    path = tmp_path / "in.rscene"
    path.write_text("raisim_engine_scene 2\n"
                    f"articulated_resource anymal_res anymal {urdf}\n"
                    "articulated /World/Anymal anymal_res 0 0 0.7 1 0 0 0 true true\n"
                    "object /World/Ground ground 0 0 0 1 0 0 0 20 20 1 0.5 1 1 default - false true false - static "
                    "true 1 18446744073709551615\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    original = path.read_text()
    assert _export(tmp_path) == original and _export.warnings == []
    sensor = next(ob for ob in bpy.data.objects if SENSOR_KEY in ob.keys())
    sensor.location.z += 0.1
    assert _export(tmp_path) == original
    assert len(_export.warnings) == 1 and f"robot sensor {sensor[SENSOR_KEY]}" in _export.warnings[0]
    sensor.location.z -= 0.1

    bl_scene = bpy.context.scene
    bl_scene.render.fps = 24
    trajectory = simulate(bake.current_scene_model(bl_scene), 6 / 24, 24, backend="numpy")
    assert bake.bake_trajectory(bl_scene, trajectory, 1) >= 1
    root = next(ob for ob in bpy.data.objects if rb.is_robot_root(ob))
    bl_scene.frame_set(7)
    shown = list(rb.joint_values(root))
    assert _export(tmp_path) == original
    assert list(rb.joint_values(root)) == pytest.approx(shown)  # export left the bake playing
    assert shown[2] < 0.7 - 1e-4  # the robot fell: the frame differs from the file
    bake.clear_bake(bl_scene)
    assert _export(tmp_path) == original
