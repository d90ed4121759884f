"""Cycles camera sensors: exact depth, exact ids matching the JSON map, K reproduced by Blender,
normals in the camera frame, seeded noise, and the scene left as it was."""
from __future__ import annotations

import json
import math

import bpy
import numpy as np
import pytest
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

from rscene_addon.render import render_scene
from rscene_addon.render.cameras import CameraRig
from rscene_addon.products.plan import RenderOptions, spec_from_sensor_record
from rscene_addon.render.poses import rigid
from rscene_addon.render.scene_state import SceneState
from rscene_addon.formats import rscene
from rscene_addon.sensors.noise import gaussian_noise
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    BALL, BOX, CAMERA, _session_registration, import_scene, render_env, scene_text)

CALIBRATED = ("sensor /World/Calib depth - -4 0 0.5 1 0 0 0 width=40 height=30 calibrationFx=50 "
              "calibrationFy=35 calibrationCx=17.3 calibrationCy=13.1 nearPlane=0.05 farPlane=100")


def _load(out, rel):
    return np.load(out / rel)


def test_depth_of_a_plane_is_exact_and_background_is_inf(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, CAMERA)
    out = tmp_path / "out"
    result = render_scene(scene, out, [1], samples=1, options=RenderOptions(range_image=True))
    depth = _load(out, "World.Cam/depth_00001.npy")
    assert depth.dtype == np.float32 and depth.shape == (48, 64)
    finite = np.isfinite(depth)
    # the box's front face is the plane x = -0.5, 3.5 m in front of the camera at x = -4
    assert finite.sum() > 100
    assert np.all(depth[finite] == np.float32(3.5))
    assert np.all(depth[~finite] == np.inf)
    # Euclidean range: depth / cos(angle to the optical axis), from the manifest's K
    manifest = json.loads((out / "manifest.json").read_text())
    k = np.array(manifest["sensors"]["/World/Cam"]["intrinsics"]["K"])
    v, u = np.nonzero(finite)
    rays = np.stack([(u + 0.5 - k[0, 2]) / k[0, 0], (v + 0.5 - k[1, 2]) / k[1, 1], np.ones(len(u))], axis=1)
    expected = 3.5 * np.linalg.norm(rays, axis=1)
    assert _load(out, "World.Cam/range_00001.npy")[finite] == pytest.approx(expected, rel=1e-6)
    # the EXR holds the same depth
    from rscene_addon.render import exr
    stored = exr.read_image(str(out / "World.Cam/depth_00001.exr"))[..., 0]
    assert np.array_equal(stored, depth)
    assert result["cancelled"] is False and result["timings"]["camera_render_s"]


def test_ids_are_exact_integers_matching_the_json_map(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, BALL, CAMERA)
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=2)
    instance = _load(out, "World.Cam/instance_00001.npy")
    semantic = _load(out, "World.Cam/semantic_00001.npy")
    assert instance.dtype == np.int32 and semantic.dtype == np.int32
    # explicit instanceId 7 for the box; the ball has none: max explicit id + 1 = 8
    assert set(np.unique(instance)) == {-1, 7, 8}
    manifest = json.loads((out / "manifest.json").read_text())
    seg = manifest["metadata"]["segmentation"]
    assert seg["instances"]["7"][0]["path"] == "/World/Box"
    assert seg["instances"]["8"][0]["path"] == "/World/Ball"
    classes = {name: int(i) for i, name in seg["classes"].items()}
    assert classes == {"": 0, "ball": 1, "crate": 2}
    # every pixel's class is its instance's class
    assert np.array_equal(semantic == classes["crate"], instance == 7)
    assert np.array_equal(semantic == classes["ball"], instance == 8)
    assert np.array_equal(semantic == 0, instance == -1)
    # ids agree with depth: background exactly where nothing was hit
    depth = _load(out, "World.Cam/depth_00001.npy")
    assert np.array_equal(instance == -1, np.isinf(depth))
    # the box's pixels: its front face, where depth is 3.5
    assert np.all(depth[instance == 7] == np.float32(3.5))
    listing = json.loads((out / "World.Cam/instances_00001.json").read_text())["instances"]
    by_id = {entry["id"]: entry for entry in listing}
    assert set(by_id) == {7, 8}
    rows, cols = np.nonzero(instance == 7)
    assert by_id[7]["bbox2d"] == [cols.min(), rows.min(), cols.max() + 1, rows.max() + 1]
    assert by_id[7]["pixels"] == len(rows) and by_id[7]["class"] == "crate"
    assert by_id[7]["bbox3d"]["min"] == pytest.approx([-0.5, -0.5, 0.0])
    assert by_id[7]["bbox3d"]["max"] == pytest.approx([0.5, 0.5, 1.0])


def test_point_on_the_optical_axis_projects_to_the_principal_point(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, CAMERA, CALIBRATED)
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1)
    manifest = json.loads((out / "manifest.json").read_text())
    for name in ("/World/Cam", "/World/Calib"):
        sensor = manifest["sensors"][name]
        k = np.array(sensor["intrinsics"]["K"])
        c2w = np.array(sensor["frames"][0]["camera_to_world_opencv"])
        on_axis = c2w @ np.array([0.0, 0.0, 2.7, 1.0])  # 2.7 m along the OpenCV +z axis, in the world
        p_cam = np.linalg.inv(c2w) @ on_axis
        uv = (k @ p_cam[:3])[:2] / p_cam[2]
        assert uv == pytest.approx([k[0, 2], k[1, 2]], abs=1e-9)
    calib = manifest["sensors"]["/World/Calib"]["intrinsics"]
    assert (calib["fx"], calib["fy"], calib["cx"], calib["cy"]) == (50.0, 35.0, 17.3, 13.1)


def test_calibrated_fx_ne_fy_is_reproduced_by_blender(render_env, tmp_path):
    """Blender's own projection (world_to_camera_view) of the camera the renderer sets up equals K,
    and the rendered silhouette of the box's front face is exactly the pixels whose centres K puts
    inside the face."""
    scene = import_scene(tmp_path, BOX, CALIBRATED)
    doc = rscene.loads(scene_text(BOX, CALIBRATED))
    record = doc.of("sensor")[0]
    spec = spec_from_sensor_record(record, 0)
    k = spec.intrinsics
    state = SceneState()
    try:
        rig = CameraRig(spec, scene, state)
        for attr in ("resolution_x", "resolution_y", "resolution_percentage", "pixel_aspect_x",
                     "pixel_aspect_y"):
            state.set(scene.render, attr, getattr(scene.render, attr))
        state.set(scene, "camera", scene.camera)
        rig.apply(scene)
        pose = rigid(record.get("position"), record.get("quaternion"))
        rig.place(pose)
        bpy.context.view_layer.update()
        rng = np.random.default_rng(1)
        c2w_cv = pose @ np.array([[0, 0, 1, 0], [-1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 0, 1]], dtype=float)
        for _ in range(20):
            p_cv = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(1, 5)])
            world = (c2w_cv @ np.append(p_cv, 1.0))[:3]
            x, y, _ = world_to_camera_view(scene, rig.object, Vector(world))
            blender_uv = (x * k.width, (1.0 - y) * k.height)
            assert blender_uv == pytest.approx(tuple(k.project(p_cv)), abs=1e-4)
    finally:
        state.restore()
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1)
    depth = _load(out, "World.Calib/depth_00001.npy")
    assert depth.shape == (30, 40)
    # face x = -0.5 (3.5 m ahead): y in [-0.5, 0.5] -> u = fx * y / 3.5 + cx,
    # z in [0, 1] -> v = fy (0.5 - z) / 3.5 + cy
    u0, u1 = k.cx - 50 * 0.5 / 3.5, k.cx + 50 * 0.5 / 3.5
    v0, v1 = k.cy - 35 * 0.5 / 3.5, k.cy + 35 * 0.5 / 3.5
    jj, ii = np.meshgrid(np.arange(40) + 0.5, np.arange(30) + 0.5)
    expected = (jj > u0) & (jj < u1) & (ii > v0) & (ii < v1)
    assert np.array_equal(np.isfinite(depth), expected)
    assert np.all(depth[expected] == np.float32(3.5))


def test_normals_are_in_the_opencv_camera_frame_for_a_picked_blender_camera(render_env, tmp_path):
    """A plain Blender scene (no .rscene): a flat plane turned 30 degrees, seen by a camera picked by
    its object name, whose K comes from its lens and the scene resolution."""
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("plane")
    mesh.from_pydata([(0, -2, -2), (0, 2, -2), (0, 2, 2), (0, -2, 2)], [], [(0, 3, 2, 1)])  # normal -x
    mesh.polygons.foreach_set("use_smooth", [False])
    plane = bpy.data.objects.new("Plane", mesh)
    plane.rotation_euler = (0.0, 0.0, math.radians(30))
    scene.collection.objects.link(plane)
    cam = bpy.data.objects.new("Eye", bpy.data.cameras.new("Eye"))
    scene.collection.objects.link(cam)
    cam.location = (-5, 0, 0)
    cam.rotation_euler = (math.radians(90), 0.0, math.radians(-90))  # looks along +x, up +z
    scene.render.resolution_x, scene.render.resolution_y = 32, 24
    out = tmp_path / "out"
    result = render_scene(scene, out, [1], samples=1, sensors="Eye")
    assert "Eye" in result["sensors"]
    normal = _load(out, "Eye/normal_00001.npy")
    instance = _load(out, "Eye/instance_00001.npy")
    hit = instance >= 0
    assert hit.sum() > 50
    # the plane's normal, +x turned by 30 degrees about z; facing the camera it is -(cos30, sin30, 0)
    n_world = -np.array([math.cos(math.radians(30)), math.sin(math.radians(30)), 0.0])
    c2w = np.array(json.loads((out / "manifest.json").read_text())["sensors"]["Eye"]["frames"][0]
                   ["camera_to_world_opencv"])
    expected = c2w[:3, :3].T @ n_world
    assert expected[2] < 0  # faces the camera
    assert normal[hit] == pytest.approx(np.broadcast_to(expected, normal[hit].shape), abs=1e-5)
    assert np.all(normal[~hit] == 0.0)
    k = json.loads((out / "manifest.json").read_text())["sensors"]["Eye"]["intrinsics"]
    assert k["fx"] == pytest.approx(50.0 / 36.0 * 32)  # default 50 mm lens on a 36 mm sensor


def test_depth_and_rgb_noise_are_seeded(render_env, tmp_path):
    clean = "sensor /World/Clean rgb_depth - -4 0 0.5 1 0 0 0 width=32 height=24"
    noisy = ("sensor /World/Noisy rgb_depth - -4 0 0.5 1 0 0 0 width=32 height=24 noiseMean=0.001 "
             "noiseStddev=0.01 noiseSeed=5")
    scene = import_scene(tmp_path, BOX, clean, noisy)
    out = tmp_path / "out"
    render_scene(scene, out, [2], samples=1)
    d0 = _load(out, "World.Clean/depth_00002.npy")
    d1 = _load(out, "World.Noisy/depth_00002.npy")
    finite = np.isfinite(d0)
    assert np.array_equal(finite, np.isfinite(d1))
    expected = np.maximum(d0.astype(np.float64) + gaussian_noise(d0.shape, 0.001, 0.01, 5, 2, "depth"), 0)
    assert d1[finite] == pytest.approx(expected[finite].astype(np.float32), abs=1e-6)
    from rscene_addon.render import exr
    rgb0 = exr.read_image(str(out / "World.Clean/rgb_00002.png"), "uint8").astype(int)
    rgb1 = exr.read_image(str(out / "World.Noisy/rgb_00002.png"), "uint8").astype(int)
    assert rgb0.shape == (24, 32, 3)
    diff = rgb1 - rgb0
    assert 1.0 < diff.std() < 5.0  # stddev 0.01 of full scale is 2.55 counts


def test_render_leaves_the_scene_as_it_was(render_env, tmp_path):
    scene = import_scene(tmp_path, BOX, BALL, CAMERA)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = 100, 80
    scene.render.filepath = "//keep/"
    scene.frame_set(3)
    box = bpy.data.objects["Box"]
    box.pass_index = 11
    before_objects = set(bpy.data.objects.keys())
    before_cameras = set(bpy.data.cameras.keys())
    camera = scene.camera
    render_scene(scene, tmp_path / "out", [1, 2], samples=1)
    assert scene.render.engine == "BLENDER_WORKBENCH"
    assert (scene.render.resolution_x, scene.render.resolution_y) == (100, 80)
    assert scene.render.filepath == "//keep/"
    assert scene.frame_current == 3
    assert box.pass_index == 11
    assert scene.camera == camera
    assert set(bpy.data.objects.keys()) == before_objects
    assert set(bpy.data.cameras.keys()) == before_cameras


def test_shared_collection_instances_and_geometry_nodes_get_their_own_ids(render_env, tmp_path):
    """Two empties instancing one collection (as two records using the same mesh file do) and a
    Geometry Nodes instancer: three entities, three ids, in the image and in lidar returns."""
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("quad")
    mesh.from_pydata([(0, -0.4, -0.4), (0, 0.4, -0.4), (0, 0.4, 0.4), (0, -0.4, 0.4)], [], [(0, 3, 2, 1)])
    part = bpy.data.objects.new("Part", mesh)
    asset = bpy.data.collections.new("asset")
    asset.objects.link(part)
    for name, y in (("Left", 1.0), ("Right", -1.0)):
        empty = bpy.data.objects.new(name, None)
        empty.instance_type, empty.instance_collection = "COLLECTION", asset
        empty.location = (0, y, 0)
        scene.collection.objects.link(empty)
    points = bpy.data.meshes.new("points")
    points.from_pydata([(0, 0, 1.2)], [], [])
    spawner = bpy.data.objects.new("Spawner", points)
    scene.collection.objects.link(spawner)
    group = bpy.data.node_groups.new("spawn", "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes = group.nodes
    gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    on_points, info = nodes.new("GeometryNodeInstanceOnPoints"), nodes.new("GeometryNodeObjectInfo")
    info.inputs["Object"].default_value = part
    group.links.new(gin.outputs[0], on_points.inputs["Points"])
    group.links.new(info.outputs["Geometry"], on_points.inputs["Instance"])
    group.links.new(on_points.outputs["Instances"], gout.inputs[0])
    spawner.modifiers.new("spawn", "NODES").node_group = group
    cam = bpy.data.objects.new("Eye", bpy.data.cameras.new("Eye"))
    scene.collection.objects.link(cam)
    cam.location = (-6, 0, 0.4)
    cam.rotation_euler = (math.radians(90), 0.0, math.radians(-90))
    scene.render.resolution_x, scene.render.resolution_y = 48, 32
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1, sensors=["Eye"])
    instance = _load(out, "Eye/instance_00001.npy")
    seg = json.loads((out / "manifest.json").read_text())["metadata"]["segmentation"]["instances"]
    ids = {entry[0]["name"]: int(i) for i, entry in seg.items()}
    assert set(ids) == {"Left", "Right", "Spawner"}
    assert set(np.unique(instance)) == {-1, *ids.values()}
    cols = {name: np.nonzero(instance == i)[1].mean() for name, i in ids.items()}
    assert cols["Left"] < cols["Spawner"] < cols["Right"]  # +y is the image's left for this camera
    rows = {name: np.nonzero(instance == i)[0].mean() for name, i in ids.items()}
    assert rows["Spawner"] < rows["Left"]  # higher up
    assert bpy.data.objects["Right"].instance_collection == asset  # the temporary copy is gone
    assert not any("render copy" in c.name for c in bpy.data.collections)
    # lidar returns carry the same ids: one world-space caster over the evaluated instances
    from rscene_addon.render.caster import available_backends, make_caster, scene_triangles
    from rscene_addon.render.ids import EntityIndex
    triangles = scene_triangles(bpy.context.evaluated_depsgraph_get(), EntityIndex(scene))
    origins = np.array([[-6.0, 1.0, 0.0], [-6.0, -1.0, 0.0], [-6.0, 0.0, 1.2], [-6.0, 0.0, -3.0]])
    for backend in available_backends():
        hits = make_caster(triangles, backend).cast(origins, np.tile([1.0, 0.0, 0.0], (4, 1)), 100.0)
        assert hits.object_id.tolist() == [ids["Left"], ids["Right"], ids["Spawner"], -1], backend
        assert hits.distance[:3] == pytest.approx([6.0, 6.0, 6.0], abs=1e-5) and np.isinf(hits.distance[3])
        assert hits.normal[:3] == pytest.approx(np.tile([-1.0, 0.0, 0.0], (3, 1)), abs=1e-6)
