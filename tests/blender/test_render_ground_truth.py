"""Training ground truth checked against analytic geometry: optical flow, amodal masks and visibility,
object coordinates / NOCS, anti-aliased RGB with exact ids, annotation-only runs.

Independent truths: ray/box slab intersections and pinhole projections written here from the
manifest's K and extrinsics (not the renderer's code), Blender's own BVHTree ray casts through pixel
centres, and area fractions worked out on paper for a box half hidden behind a wall.
"""
from __future__ import annotations

import json
import math

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

from rscene_addon.render import render_scene
from rscene_addon.products.plan import RenderOptions
from tests.blender.test_render_support import _session_registration, render_env  # noqa: F401 - fixtures
from tests.blender.test_render_truths import _pixel_rays

pytestmark = pytest.mark.usefixtures("render_env")

CUBE_VERTS = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
CUBE_FACES = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def _mesh_object(name, verts, faces, location=(0, 0, 0), rotation=(0, 0, 0)):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    ob = bpy.data.objects.new(name, mesh)
    ob.location, ob.rotation_euler = location, rotation
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _camera(name, location, rotation, width, height, lens=50.0):
    cam = bpy.data.objects.new(name, bpy.data.cameras.new(name))
    bpy.context.scene.collection.objects.link(cam)
    cam.location, cam.rotation_euler = location, rotation
    cam.data.lens = lens
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = width, height
    scene.render.resolution_percentage = 100
    return cam


def _key(ob, frame, location, rotation):
    ob.location, ob.rotation_euler = location, rotation
    ob.keyframe_insert("location", frame=frame)
    ob.keyframe_insert("rotation_euler", frame=frame)


def _manifest(out):
    return json.loads((out / "manifest.json").read_text())


def _frame_camera(manifest, name, frame):
    sensor = manifest["sensors"][name]
    entry = next(f for f in sensor["frames"] if f["frame"] == frame)
    return np.array(sensor["intrinsics"]["K"]), np.array(entry["camera_to_world_opencv"])



def _ray_box(origin, dirs, matrix, half=0.5):
    """Slab intersection of world rays with the box ``[-half, half]^3`` posed by ``matrix`` (4x4, rigid):
    world hit points (NaN on a miss)."""
    inv = np.linalg.inv(matrix)
    o = inv[:3, :3] @ origin + inv[:3, 3]
    d = dirs @ inv[:3, :3].T
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-half - o) / d, (half - o) / d
    near = np.nanmax(np.minimum(t1, t2), axis=1)
    far = np.nanmin(np.maximum(t1, t2), axis=1)
    hit = (near <= far) & (far > 0)
    points = origin + dirs * near[:, None]
    points[~hit] = np.nan
    return points


def _project(k, c2w, points):
    p = (points - c2w[:3, 3]) @ c2w[:3, :3]
    h = p @ k.T
    return h[:, :2] / h[:, 2:]


def _interior(mask):
    """Pixels whose 3x3 neighbourhood is all in ``mask``."""
    inner = mask.copy()
    inner[0, :] = inner[-1, :] = inner[:, 0] = inner[:, -1] = False
    for dv in (-1, 0, 1):
        for du in (-1, 0, 1):
            inner[1:-1, 1:-1] &= mask[1 + dv:mask.shape[0] - 1 + dv, 1 + du:mask.shape[1] - 1 + du]
    return inner


def _moving_box_scene():
    """A unit box turning and sliding over frames 1..3 in front of a static back wall, seen by a camera
    that moves and turns; the sky shows above the wall."""
    box = _mesh_object("Box", CUBE_VERTS, CUBE_FACES)
    _key(box, 1, (0.0, 0.0, 0.0), (0.1, 0.2, 0.3))
    _key(box, 2, (0.15, -0.1, 0.05), (0.1, 0.2, 0.3 + math.radians(6)))
    _key(box, 3, (0.3, -0.15, 0.1), (0.12, 0.2, 0.3 + math.radians(11)))
    _mesh_object("Wall", [(3, -6, -4), (3, 6, -4), (3, 6, 0.8), (3, -6, 0.8)], [(0, 1, 2, 3)])
    cam = _camera("Eye", (-4, 0, 0.3), (0, 0, 0), 96, 72, lens=40)
    for frame, (loc, yaw) in {1: ((-4.0, 0.0, 0.3), -90.0), 2: ((-3.9, 0.08, 0.32), -88.5),
                              3: ((-3.8, 0.15, 0.33), -87.0)}.items():
        _key(cam, frame, loc, (math.radians(88), 0.0, math.radians(yaw)))
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 3
    return scene, box


def _box_matrix(box, frame):
    bpy.context.scene.frame_set(frame)
    return np.array(box.matrix_world)


def test_flow_of_a_moving_box_and_camera_equals_the_analytic_reprojection(tmp_path):
    scene, box = _moving_box_scene()
    out = tmp_path / "out"
    result = render_scene(scene, out, [1, 2, 3], sensors="Eye",
                          options=RenderOptions(products={"ids", "depth", "flow"}))
    manifest = _manifest(out)
    assert manifest["metadata"]["pixel_truth"]["flow"]["axes"] == "u right, v down (image columns, rows)"
    assert not any(name.endswith(".png") for name in result["files"])  # annotation only: no RGB
    meta = json.loads((out / "manifest.json").read_text())["sensors"]["Eye"]
    ids = meta["properties"]["products"]
    assert "flow" in ids and "rgb" not in ids
    box_id = next(int(i) for i, e in manifest["metadata"]["segmentation"]["instances"].items()
                  if e[0]["name"] == "Box")
    instance = np.load(out / "Eye/instance_00002.npy")
    h, w = instance.shape
    k, c2w = _frame_camera(manifest, "Eye", 2)
    matrices = {f: _box_matrix(box, f) for f in (1, 2, 3)}
    origin, dirs = _pixel_rays(k, c2w, w, h)
    on_box = _ray_box(origin, dirs, matrices[2])
    assert np.array_equal(np.isfinite(on_box[:, 0]).reshape(h, w), instance == box_id) or \
        np.mean(np.isfinite(on_box[:, 0]).reshape(h, w) == (instance == box_id)) > 0.999
    centres = np.stack(np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5), axis=-1).reshape(-1, 2)
    inner = _interior(instance == box_id).ravel()
    assert inner.sum() > 300
    for layer, other in (("flow_forward", 3), ("flow_backward", 1)):
        flow = np.load(out / f"Eye/{layer}_00002.npy").reshape(-1, 2)
        motion = matrices[other] @ np.linalg.inv(matrices[2])
        moved = on_box[inner] @ motion[:3, :3].T + motion[:3, 3]
        expected = _project(k, _frame_camera(manifest, "Eye", other)[1], moved) - centres[inner]
        assert np.abs(expected).max() > 3.0  # the box really moves in the image
        assert np.abs(flow[inner] - expected).max() < 0.05, layer
    # the wall does not move: its flow is the camera's motion alone
    wall = _interior(instance == next(int(i) for i, e in manifest["metadata"]["segmentation"]["instances"].items()
                                      if e[0]["name"] == "Wall")).ravel()
    t_wall = (3.0 - origin[0]) / dirs[wall, 0]
    on_wall = origin + dirs[wall] * t_wall[:, None]
    expected = _project(k, _frame_camera(manifest, "Eye", 3)[1], on_wall) - centres[wall]
    assert np.abs(np.load(out / "Eye/flow_forward_00002.npy").reshape(-1, 2)[wall] - expected).max() < 0.05


def _bilinear(image, uv):
    """``image (H, W, C)`` sampled at pixel coordinates ``uv (N, 2)`` (centres at +0.5)."""
    x, y = uv[:, 0] - 0.5, uv[:, 1] - 0.5
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    return ((1 - fx) * (1 - fy) * image[y0, x0] + fx * (1 - fy) * image[y0, x0 + 1]
            + (1 - fx) * fy * image[y0 + 1, x0] + fx * fy * image[y0 + 1, x0 + 1])


def test_forward_then_backward_flow_returns_to_the_start(tmp_path):
    """Where a point is visible in both frames (the 3D point, moved analytically, has the depth rendered
    at its new place), following forward flow then the next frame's backward flow (bilinear between
    pixel centres) lands back on the pixel centre."""
    scene, box = _moving_box_scene()
    out = tmp_path / "out"
    render_scene(scene, out, [1, 2], sensors="Eye", options=RenderOptions(products={"ids", "depth", "flow"}))
    manifest = _manifest(out)
    forward = np.load(out / "Eye/flow_forward_00001.npy")
    backward = np.load(out / "Eye/flow_backward_00002.npy")
    ids1, ids2 = np.load(out / "Eye/instance_00001.npy"), np.load(out / "Eye/instance_00002.npy")
    depth2 = np.load(out / "Eye/depth_00002.npy")[..., None].astype(np.float64)
    box_id = next(int(i) for i, e in manifest["metadata"]["segmentation"]["instances"].items()
                  if e[0]["name"] == "Box")
    h, w = ids1.shape
    k, c2w1 = _frame_camera(manifest, "Eye", 1)
    _, c2w2 = _frame_camera(manifest, "Eye", 2)
    m1, m2 = _box_matrix(box, 1), _box_matrix(box, 2)
    origin, dirs = _pixel_rays(k, c2w1, w, h)
    on_box = _ray_box(origin, dirs, m1)
    on_wall = origin + dirs * ((3.0 - origin[0]) / dirs[:, 0])[:, None]
    motion = m2 @ np.linalg.inv(m1)
    moved = np.where((ids1 == box_id).ravel()[:, None], on_box @ motion[:3, :3].T + motion[:3, 3], on_wall)
    z2 = ((moved - c2w2[:3, 3]) @ c2w2[:3, :3])[:, 2].reshape(h, w)
    v, u = np.nonzero(_interior(ids1 >= 0))
    start = np.stack([u + 0.5, v + 0.5], axis=1)
    target = start + forward[v, u]
    x0, y0 = np.floor(target[:, 0] - 0.5).astype(int), np.floor(target[:, 1] - 0.5).astype(int)
    ok = (x0 >= 0) & (y0 >= 0) & (x0 < w - 1) & (y0 < h - 1)
    for dy in (0, 1):  # four pixel centres around the target show the same object
        for dx in (0, 1):
            ok[ok] &= ids2[y0[ok] + dy, x0[ok] + dx] == ids1[v[ok], u[ok]]
    ok[ok] &= np.abs(_bilinear(depth2, target[ok])[:, 0] - z2[v[ok], u[ok]]) < 0.01  # not hidden at frame 2
    assert ok.sum() > 1000 and (ids1[v[ok], u[ok]] == box_id).sum() > 300
    back = target[ok] + _bilinear(backward, target[ok])
    assert np.abs(back - start[ok]).max() < 0.1


def test_amodal_mask_of_a_box_half_behind_a_wall(tmp_path):
    """Camera 2 m in front of a box's 1 m face, a wall 1 m in front of the camera whose edge at
    y = 0.05 hides the face where y > 0.1 (similar triangles: 0.05 * 2 / 1): 60 % stays visible."""
    _mesh_object("Box", CUBE_VERTS, CUBE_FACES, location=(0.5, 0.0, 0.0))
    wall = _mesh_object("Wall", [(-1, 0.05, -3), (-1, 3, -3), (-1, 3, 3), (-1, 0.05, 3)], [(0, 1, 2, 3)])
    _camera("Eye", (-2, 0, 0), (math.radians(90), 0.0, math.radians(-90)), 160, 120)
    scene = bpy.context.scene
    out = tmp_path / "out"
    render_scene(scene, out, [1], sensors="Eye", options=RenderOptions(products={"ids", "amodal"}))
    manifest = _manifest(out)
    seg = manifest["metadata"]["segmentation"]["instances"]
    box_id = next(int(i) for i, e in seg.items() if e[0]["name"] == "Box")
    with np.load(out / "Eye/amodal_00001.npz") as data:
        ids, masks = data["ids"], data["masks"]
    assert ids.dtype == np.int32 and masks.dtype == bool and masks.shape[1:] == (120, 160)
    amodal = masks[list(ids).index(box_id)]
    instance = np.load(out / "Eye/instance_00001.npy")
    visible = instance == box_id
    assert np.all(amodal[visible]) and visible.sum() < amodal.sum()
    listing = {e["id"]: e for e in json.loads((out / "Eye/instances_00001.json").read_text())["instances"]}
    entry = listing[box_id]
    assert entry["px_count_all"] == amodal.sum() and entry["px_count_visib"] == visible.sum()
    assert entry["visib_fract"] == pytest.approx(0.6, abs=0.01)
    # the whole face: a square half the focal length on a side
    k, _ = _frame_camera(manifest, "Eye", 1)
    assert amodal.sum() == pytest.approx((k[0, 0] / 2) ** 2, rel=0.03)
    # the same box rendered alone: its silhouette is the amodal mask, pixel for pixel
    wall.hide_render = True
    alone = tmp_path / "alone"
    render_scene(scene, alone, [1], sensors="Eye", options=RenderOptions(products={"ids"}))
    assert np.array_equal(np.load(alone / "Eye/instance_00001.npy") == box_id, amodal)
    assert manifest["sensors"]["Eye"]["frames"][0]["outputs"][0]["path"] == "Eye/amodal_00001.npz" or any(
        o["path"] == "Eye/amodal_00001.npz" for o in manifest["sensors"]["Eye"]["frames"][0]["outputs"])


def test_object_coordinates_of_a_unit_cube_lie_on_its_faces(tmp_path):
    box = _mesh_object("Cube", CUBE_VERTS, CUBE_FACES, location=(0.3, -0.2, 0.4), rotation=(0.4, -0.3, 0.9))
    _camera("Eye", (-3.0, -1.2, 1.6), (math.radians(65), 0.0, math.radians(-70)), 80, 60)
    out = tmp_path / "out"
    render_scene(bpy.context.scene, out, [1], sensors="Eye",
                 options=RenderOptions(products={"ids", "object_coords"}))
    manifest = _manifest(out)
    coords = np.load(out / "Eye/object_coords_00001.npy")
    nocs = np.load(out / "Eye/nocs_00001.npy")
    instance = np.load(out / "Eye/instance_00001.npy")
    hit = instance >= 0
    assert hit.sum() > 400 and np.isnan(coords[~hit]).all()
    k, c2w = _frame_camera(manifest, "Eye", 1)
    origin, dirs = _pixel_rays(k, c2w, 80, 60)
    world = _ray_box(origin, dirs, np.array(box.matrix_world))
    inv = np.linalg.inv(np.array(box.matrix_world))
    expected = (world @ inv[:3, :3].T + inv[:3, 3]).reshape(60, 80, 3)
    inner = _interior(hit)
    assert np.abs(coords[inner] - expected[inner]).max() < 1e-4
    # every face pixel sits on a face: one coordinate at +-0.5; three faces are seen
    on_face = np.abs(np.abs(coords[inner]) - 0.5) < 1e-4
    assert np.all(on_face.any(axis=1))
    faces = {(axis, sign) for axis, sign in zip(np.argmax(np.abs(coords[inner]), axis=1),
                                                 np.sign(coords[inner][np.arange(inner.sum()),
                                                                       np.argmax(np.abs(coords[inner]), axis=1)]))}
    assert len(faces) == 3
    assert np.nanmin(nocs) >= 0.0 and np.nanmax(nocs) <= 1.0
    assert np.abs(nocs[hit] - (coords[hit] / math.sqrt(3.0) + 0.5)).max() < 1e-6


def _white_box_on_black():
    box = _mesh_object("Box", CUBE_VERTS, CUBE_FACES, location=(0.0, 0.0, 0.0), rotation=(0.3, 0.2, 0.5))
    material = bpy.data.materials.new("white")
    if material.node_tree is None:  # 4.5; 5.x materials always have nodes (use_nodes is deprecated)
        material.use_nodes = True
    nodes = material.node_tree.nodes
    nodes.clear()
    emit = nodes.new("ShaderNodeEmission")
    emit.inputs["Strength"].default_value = 1.0
    output = nodes.new("ShaderNodeOutputMaterial")
    material.node_tree.links.new(emit.outputs[0], output.inputs[0])
    box.data.materials.append(material)
    scene = bpy.context.scene
    scene.world = None
    scene.view_settings.view_transform = "Standard"
    _camera("Eye", (-3.5, 0, 0), (math.radians(90), 0.0, math.radians(-90)), 64, 48)
    return scene


def test_rgb_is_anti_aliased_while_ids_match_pixel_centre_ray_casts(tmp_path):
    scene = _white_box_on_black()
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=16, sensors="Eye")
    from rscene_addon.render import exr
    rgb = exr.read_image(str(out / "Eye/rgb_00001.png"), "uint8")[..., 0].astype(int)
    instance = np.load(out / "Eye/instance_00001.npy")
    manifest = _manifest(out)
    assert manifest["metadata"]["filter_width_px"] == pytest.approx(1.5)
    # edges blend: many pixels between black and white (a 0.01 px filter would give almost none)
    edge = (rgb > 20) & (rgb < 235)
    assert edge.sum() > 40
    # ids: Blender's own BVHTree cast through every pixel centre
    k, c2w = _frame_camera(manifest, "Eye", 1)
    origin, dirs = _pixel_rays(k, c2w, 64, 48)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob = bpy.data.objects["Box"].evaluated_get(depsgraph)
    m = ob.matrix_world
    tree = BVHTree.FromPolygons([tuple(m @ v.co) for v in ob.data.vertices],
                                [tuple(p.vertices) for p in ob.data.polygons])
    box_id = instance[24, 32]
    expected = np.array([box_id if tree.ray_cast(Vector(origin), Vector(d), 100.0)[0] is not None else -1
                         for d in dirs.tolist()]).reshape(48, 64)
    assert np.mean(instance == expected) >= 0.999
    assert set(np.unique(instance)) == {-1, box_id}


def test_annotation_only_run_renders_nothing_in_cycles_and_records_the_device(tmp_path):
    scene = _white_box_on_black()
    out = tmp_path / "out"
    result = render_scene(scene, out, [1], sensors="Eye", options=RenderOptions(products="depth,ids,normals"))
    names = sorted(p.rsplit("/", 1)[1] for p in result["files"])
    assert names == ["depth_00001.exr", "depth_00001.npy", "instance_00001.npy", "instances_00001.json",
                     "normal_00001.npy", "semantic_00001.npy"]
    meta = _manifest(out)["metadata"]
    assert meta["engine"] is None and meta["device"] is None
    assert sorted(meta["pixel_truth"]["from_ray_casts"]) == ["depth", "normal", "segmentation"]
    with_rgb = tmp_path / "rgb"
    render_scene(scene, with_rgb, [1], samples=1, sensors="Eye", options=RenderOptions(products="rgb"))
    meta = _manifest(with_rgb)["metadata"]
    assert (meta["engine"], meta["device"], meta["device_backend"]) == ("CYCLES", "CPU", "CPU")
    # the flat-shaded box's normals are its face normals, turned into the camera frame
    normal = np.load(out / "Eye/normal_00001.npy")
    instance = np.load(out / "Eye/instance_00001.npy")
    rotation = np.array(Matrix(bpy.data.objects["Box"].matrix_world.to_3x3()))
    faces = rotation @ np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]).T
    _, c2w = _frame_camera(_manifest(out), "Eye", 1)
    in_camera = (c2w[:3, :3].T @ faces).T
    seen = normal[_interior(instance >= 0)]
    assert np.min(np.linalg.norm(seen[:, None, :] - in_camera[None], axis=2), axis=1).max() < 1e-5


def test_bop_export_reads_the_amodal_masks_and_agrees_on_visibility(tmp_path):
    """The file contract with the BOP writer: ``amodal_{frame}.npz`` becomes BOP's ``mask/`` and its
    ``visib_fract`` is the instances JSON's (the wall-hidden box: 60 %)."""
    from rscene_addon.formats.png import read_grey
    from rscene_addon.products.annotations import export_annotations
    _mesh_object("Box", CUBE_VERTS, CUBE_FACES, location=(0.5, 0.0, 0.0))
    _mesh_object("Wall", [(-1, 0.05, -3), (-1, 3, -3), (-1, 3, 3), (-1, 0.05, 3)], [(0, 1, 2, 3)])
    _camera("Eye", (-2, 0, 0), (math.radians(90), 0.0, math.radians(-90)), 80, 60)
    out = tmp_path / "out"
    render_scene(bpy.context.scene, out, [1], samples=1, sensors="Eye",
                 options=RenderOptions(products={"rgb", "depth", "ids", "amodal"}))
    export_annotations(str(out), False, True, report=lambda line: None)
    listing = {e["id"]: e for e in json.loads((out / "Eye/instances_00001.json").read_text())["instances"]}
    with np.load(out / "Eye/amodal_00001.npz") as data:
        amodal = dict(zip(data["ids"].tolist(), data["masks"]))
    scene = out / "bop" / "train_pbr" / "000000"
    gt = json.loads((scene / "scene_gt.json").read_text())["1"]
    info = json.loads((scene / "scene_gt_info.json").read_text())["1"]
    assert len(gt) == len(info) == 2
    for index, (g, i) in enumerate(zip(gt, info)):
        entry = listing[g["obj_id"]]
        assert i["px_count_all"] == entry["px_count_all"] and i["visib_fract"] == pytest.approx(entry["visib_fract"])
        mask = read_grey(str(scene / "mask" / f"000001_{index:06d}.png"))
        assert np.array_equal(mask > 0, amodal[g["obj_id"]])
    box = next(e for e in listing.values() if e["paths"] == ["Box"])
    assert box["visib_fract"] == pytest.approx(0.6, abs=0.02)


def test_cli_and_panel_switch_the_products_on(tmp_path, capsys):
    import argparse

    from rscene_addon.commands.render_job import add_arguments, options_from_args, run_render_cli
    from tests.blender.test_render_support import BOX, CAMERA, import_scene, write_scene
    parser = add_arguments(argparse.ArgumentParser())
    with pytest.raises(SystemExit):
        parser.parse_args(["x.rscene", "--out", "o", "--products", "depth,sparkles"])
    assert "unknown product 'sparkles'" in capsys.readouterr().err
    path = write_scene(tmp_path, BOX, CAMERA)
    args = parser.parse_args([path, "--out", str(tmp_path / "cli"), "--frames", "1-2",
                              "--products", "depth,ids,flow,nocs,amodal"])
    lines = []
    assert run_render_cli(args.scene, args.frames, args.out, options=options_from_args(args),
                          print_fn=lines.append, unregister_after=False) == 0, lines
    written = {p.name for p in (tmp_path / "cli" / "World.Cam").iterdir()}
    assert {"flow_forward_00002.npy", "flow_backward_00001.npy", "nocs_00001.npy", "object_coords_00002.npy",
            "amodal_00001.npz", "depth_00001.npy", "instance_00002.npy"} <= written
    assert not any(name.startswith(("rgb", "normal")) for name in written)
    # the panel: products and GPU switch from the scene's settings
    scene = import_scene(tmp_path, BOX, CAMERA)
    settings = scene.rscene_render
    settings.output_dir = str(tmp_path / "op")
    settings.use_scene_range = False
    settings.frame_start = settings.frame_end = 1
    settings.products = {"segmentation", "flow", "object_coords"}
    assert bpy.ops.rscene.render_sensors() == {"FINISHED"}
    written = {p.name for p in (tmp_path / "op" / "World.Cam").iterdir()}
    assert {"flow_forward_00001.npy", "nocs_00001.npy", "instance_00001.npy"} <= written
    assert not any(name.startswith(("rgb", "depth")) for name in written)
    manifest = json.loads((tmp_path / "op" / "manifest.json").read_text())
    assert manifest["metadata"]["pixel_truth"]["flow"]["forward"] == "frame t -> t + 1"


def test_ray_cast_depth_ids_and_smooth_normals_equal_cycles_passes_at_pixel_centres(tmp_path):
    """With the scene's pixel filter at 0.01 px Cycles' own depth, object index and (smooth-shaded)
    normal passes are taken at pixel centres: the ray casts give the same images."""
    from tests.blender.test_render_support import BALL, BOX, CAMERA, import_scene
    scene = import_scene(tmp_path, BOX, BALL.replace("0 2.5 0.5", "0 0.9 0.6"), CAMERA)
    scene.cycles.filter_width = 0.01
    cycles, cast = tmp_path / "cycles", tmp_path / "cast"
    render_scene(scene, cycles, [1], samples=1, options=RenderOptions(exact_ids=False))
    render_scene(scene, cast, [1], samples=1)
    a = {name: np.load(cycles / f"World.Cam/{name}_00001.npy") for name in ("instance", "depth", "normal")}
    b = {name: np.load(cast / f"World.Cam/{name}_00001.npy") for name in ("instance", "depth", "normal")}
    assert np.mean(a["instance"] == b["instance"]) >= 0.999
    same = _interior(a["instance"] >= 0) & (a["instance"] == b["instance"])
    assert same.sum() > 120
    assert np.abs(a["depth"][same] - b["depth"][same]).max() < 1e-5
    # the ball is smooth-shaded: normals vary within a face, and both interpolate the same corner normals
    ball = same & (a["instance"] == 8)
    assert ball.sum() > 30 and np.ptp(b["normal"][ball][:, 0]) > 0.3
    assert np.abs(a["normal"][same] - b["normal"][same]).max() < 5e-4


def test_gpu_runs_say_they_compile_kernels_and_record_the_backend(tmp_path, monkeypatch):
    """The device set-up is stubbed (no GPU here): the first GPU render announces the kernel compile once,
    and the manifest records the device and backend."""
    from rscene_addon.render import compat
    monkeypatch.setattr(compat, "configure_device", lambda scene, device, report=None: ("GPU", "OPTIX"))
    scene = _white_box_on_black()
    messages = []
    render_scene(scene, tmp_path / "out", [1, 2], samples=1, sensors="Eye",
                 options=RenderOptions(device="GPU", products="rgb"),
                 report=lambda level, message: messages.append((level, message)))
    notes = [m for level, m in messages if "compiling GPU kernels" in m]
    assert notes == ["first GPU render (OPTIX): compiling GPU kernels, once per driver: minutes"]
    meta = _manifest(tmp_path / "out")["metadata"]
    assert (meta["device"], meta["device_backend"]) == ("GPU", "OPTIX")


def test_chunks_give_the_full_runs_flow(tmp_path):
    """Flow reads the neighbouring frames from the baked animation, not from the frames rendered: chunks
    of a run write the same flow as the whole run, and their manifests merge."""
    from rscene_addon.products.outputs import merge_manifests
    scene, _ = _moving_box_scene()
    options = RenderOptions(products={"ids", "flow"})
    render_scene(scene, tmp_path / "full", range(1, 4), sensors="Eye", options=options)
    render_scene(scene, tmp_path / "parts", range(1, 3), sensors="Eye", options=options, chunk=(1, 2))
    render_scene(scene, tmp_path / "parts", range(3, 4), sensors="Eye", options=options, chunk=(2, 2))
    for frame in (1, 2, 3):
        for layer in ("flow_forward", "flow_backward"):
            name = f"Eye/{layer}_{frame:05d}.npy"
            assert np.array_equal(np.load(tmp_path / "full" / name), np.load(tmp_path / "parts" / name),
                                  equal_nan=True)
    merged = merge_manifests(sorted((tmp_path / "parts").glob("manifest_chunk*.json")))
    assert merged["metadata"]["pixel_truth"] == _manifest(tmp_path / "full")["metadata"]["pixel_truth"]
