"""The render contract: ``render.run`` returns a result or raises a typed error; a product added as one
table row (``material``); files readable by tools nobody here wrote (OpenImageIO, OpenCV).

Independent truths: the materials assigned here by hand and Blender's own BVHTree ray casts through
pixel centres (which object a pixel sees); OpenImageIO (bundled with Blender) and OpenCV (a test-only
reference: ``opencv-python-headless``) decoding our EXR and PNG files.
"""
from __future__ import annotations

import json
import math
import os

import bpy
import numpy as np
import pytest

from rscene_addon.formats.png import encode_image
from rscene_addon.products.exr_file import write_exr
from rscene_addon.products.plan import RenderOptions
from rscene_addon.products.request import RenderError, RenderRequest
from rscene_addon.render import exr, render_scene, run
from tests.blender.test_render_ground_truth import CUBE_FACES, CUBE_VERTS, _camera, _mesh_object
from tests.blender.test_render_support import _session_registration, render_env  # noqa: F401 - fixtures

pytestmark = pytest.mark.usefixtures("render_env")


def _cv2():
    """OpenCV, a test-only reference: required in CI, skipped with the reason elsewhere. Its EXR codec
    is off unless OPENCV_IO_ENABLE_OPENEXR is set before the import."""
    os.environ.setdefault("OPENCV_IO_ENABLE_OPENEXR", "1")
    try:
        import cv2
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("opencv-python-headless is not installed in this environment (scripts/setup.sh installs "
                    "it into the bpy environments as a test-only reference)")
    return cv2


def _material(name):
    mat = bpy.data.materials.new(name)
    return mat


def test_material_product_gives_each_pixel_its_surface_material(tmp_path):
    """Two boxes side by side, the left one with two materials (top face 'Lid', the rest 'Body'), the
    right one with 'Other', the wall with none: each pixel's material is the hit face's."""
    left = _mesh_object("Left", CUBE_VERTS, CUBE_FACES, location=(0, 0.7, 0))
    right = _mesh_object("Right", CUBE_VERTS, CUBE_FACES, location=(0, -0.7, 0))
    _mesh_object("Wall", [(3, -6, -4), (3, 6, -4), (3, 6, 3), (3, -6, 3)], [(0, 1, 2, 3)])
    for name in ("Body", "Lid"):
        left.data.materials.append(_material(name))
    right.data.materials.append(_material("Other"))
    top = next(p for p in left.data.polygons if p.normal.z > 0.5)
    top.material_index = 1
    _camera("Eye", (-4, 0, 2.0), (math.radians(65), 0.0, math.radians(-90)), 80, 60, lens=35)
    scene = bpy.context.scene
    out = tmp_path / "out"
    render_scene(scene, out, [1], sensors="Eye", options=RenderOptions(products={"segmentation", "material"}))
    manifest = json.loads((out / "manifest.json").read_text())
    names = manifest["metadata"]["materials"]
    material = np.load(out / "Eye/material_00001.npy")
    instance = np.load(out / "Eye/instance_00001.npy")
    assert material.dtype == np.int32 and material.shape == (60, 80)
    by_name = {name: int(i) for i, name in names.items()}
    assert sorted(by_name) == sorted(m.name for m in bpy.data.materials)
    seen = {names[str(v)] if v >= 0 else None for v in np.unique(material)}
    assert {"Body", "Lid", "Other", None} <= seen  # the wall has no material: -1

    # truth: cast Blender's own rays through the pixel centres at the objects, read the face's material
    from mathutils import Vector
    from mathutils.bvhtree import BVHTree
    k = np.array(manifest["sensors"]["Eye"]["intrinsics"]["K"])
    c2w = np.array(manifest["sensors"]["Eye"]["frames"][0]["camera_to_world_opencv"])
    depsgraph = bpy.context.evaluated_depsgraph_get()
    trees = {ob.name: (BVHTree.FromObject(ob, depsgraph), ob) for ob in (left, right)}
    checked = 0
    for v in range(0, 60, 3):
        for u in range(0, 80, 3):
            d = c2w[:3, :3] @ np.array([(u + 0.5 - k[0, 2]) / k[0, 0], (v + 0.5 - k[1, 2]) / k[1, 1], 1.0])
            best = None
            for tree, ob in trees.values():
                inv = np.array(ob.matrix_world.inverted())
                o = inv[:3, :3] @ c2w[:3, 3] + inv[:3, 3]
                hit = tree.ray_cast(Vector(o), Vector(inv[:3, :3] @ d))
                if hit[0] is not None and (best is None or hit[3] < best[0]):
                    best = (hit[3], ob, hit[2])
            if best is None:
                continue
            _, ob, face = best
            # a pixel seeing an edge may round to the neighbouring face: compare where the ids agree
            if instance[v, u] < 0:
                continue
            expected = ob.material_slots[ob.data.polygons[face].material_index].material.name
            if names.get(str(material[v, u])) == expected:
                checked += 1
            else:
                near_edge = any(names.get(str(material[vv, uu])) == expected
                                for vv in range(max(v - 1, 0), min(v + 2, 60))
                                for uu in range(max(u - 1, 0), min(u + 2, 80)))
                assert near_edge, (u, v, expected, material[v, u])
    assert checked > 50


def test_run_raises_a_typed_error_with_the_scene_diagnostics(tmp_path):
    bad = tmp_path / "bad.rscene"
    bad.write_text("# a scene\ngroup /A\n", encoding="utf-8")  # no header line
    with pytest.raises(RenderError) as info:
        run(RenderRequest(str(bad), str(tmp_path / "out"), "1"))
    assert str(bad) in info.value.message and info.value.diagnostics
    assert "bad.rscene" in info.value.diagnostics[0]
    with pytest.raises(RenderError, match="no such file"):
        run(RenderRequest(str(tmp_path / "missing.rscene"), str(tmp_path / "out")))
    with pytest.raises(RenderError, match="chunk"):
        RenderRequest(str(bad), str(tmp_path / "out"), chunk="3/2")


def test_depth_exr_reads_back_equal_in_openimageio_and_opencv(tmp_path):
    rng = np.random.default_rng(3)
    depth = rng.uniform(0.05, 80.0, (45, 67)).astype(np.float32)
    depth[5:20, 10:30] = np.inf  # background
    path = str(tmp_path / "depth.exr")
    write_exr(path, {"Y": depth})
    assert np.array_equal(exr.read_image(path)[..., 0], depth)
    cv2 = _cv2()
    read = cv2.imread(path, cv2.IMREAD_ANYDEPTH)
    assert read is not None and read.dtype == np.float32 and np.array_equal(read, depth)


def test_rendered_depth_exr_equals_the_npy_in_opencv(tmp_path):
    _mesh_object("Box", CUBE_VERTS, CUBE_FACES)
    _camera("Eye", (-4, 0, 0.3), (math.radians(88), 0.0, math.radians(-90)), 64, 48, lens=40)
    out = tmp_path / "out"
    render_scene(bpy.context.scene, out, [1], sensors="Eye", options=RenderOptions(products={"depth"}))
    depth = np.load(out / "Eye/depth_00001.npy")
    assert np.isfinite(depth).sum() > 100
    cv2 = _cv2()
    assert np.array_equal(cv2.imread(str(out / "Eye/depth_00001.exr"), cv2.IMREAD_ANYDEPTH), depth)


@pytest.mark.parametrize("bits", [8, 16])
def test_rgb_png_encoder_reads_back_in_openimageio(tmp_path, bits):
    rng = np.random.default_rng(bits)
    dtype = np.uint8 if bits == 8 else np.uint16
    image = rng.integers(0, np.iinfo(dtype).max, (23, 41, 3), endpoint=True).astype(dtype)
    image[:, :5] = image[:, 5:10]  # runs the filters predict
    path = tmp_path / "rgb.png"
    path.write_bytes(encode_image(image, bits))
    assert np.array_equal(exr.read_image(str(path), "uint8" if bits == 8 else "uint16"), image)


def test_bop_models_match_the_poses_and_static_background_is_not_an_object(tmp_path):
    """A turned box (sizes 0.8 x 0.5 x 0.3 m) on a static ground plane beside a static wall. Truths: the
    record's sizes (extents, diameter, the box's three half turns), the rendered depth back-projected
    with the manifest's K onto the box's faces through scene_gt's pose, pycocotools decoding
    scene_gt_coco.json to the mask_visib PNGs (read by the height-map PNG reader)."""
    from pycocotools.coco import COCO

    from rscene_addon.commands.render_job import run_render_cli
    from rscene_addon.formats.png import read_grey
    from rscene_addon.products.annotations import export_annotations, with_needed_products
    from tests.blender.test_render_support import write_scene
    from tests.blender.test_render_truths import _look_quat, _object
    size = np.array([0.8, 0.5, 0.3])
    yaw = np.radians(25.0)
    box = _object("/World/Box", "box", (0.0, 0.0, 0.15), (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)), size,
                  extra="semanticClass=crate").replace(" static ", " dynamic ", 1)
    ground = _object("/World/Ground", "ground", (0.0, 0.0, 0.0), scale=(20, 20, 1))
    wall = _object("/World/Wall", "box", (2.5, 0.0, 0.5), scale=(0.2, 4.0, 1.0))  # static body
    eye = (-1.6, -1.2, 1.3)
    camera = (f"camera /World/Cam {' '.join(f'{c:g}' for c in eye)} "
              f"{' '.join(f'{c:.12f}' for c in _look_quat(eye, (0, 0, 0.15)))} 55 0.05 100 128 96 rgb true")
    out = tmp_path / "out"
    lines = []
    options = RenderOptions(products=with_needed_products({"coco", "bop", "amodal"}))
    assert run_render_cli(write_scene(tmp_path, box, ground, wall, camera), "1", str(out), samples=1,
                          options=options, print_fn=lines.append, unregister_after=False) == 0, lines
    listing = json.loads((out / "World.Cam/instances_00001.json").read_text())["instances"]
    ids = {e["paths"][0]: e["id"] for e in listing}
    assert {e["paths"][0] for e in listing if e.get("static")} == {"/World/Ground", "/World/Wall"}
    bop_root = out / "bop"
    info = json.loads((bop_root / "rscene_bop.json").read_text())
    assert list(info["objects"]) == [str(ids["/World/Box"])]
    assert any("static background" in note for note in info["notes"])
    coco = json.loads((out / "World.Cam/coco_instances.json").read_text())
    assert {a["instance_id"] for a in coco["annotations"]} == {ids["/World/Box"]}

    # models/ and models_info.json against the record's sizes
    obj = ids["/World/Box"]
    assert sorted(p.name for p in (bop_root / "models").iterdir()) == ["models_info.json", f"obj_{obj:06d}.ply"]
    model_info = json.loads((bop_root / "models/models_info.json").read_text())[str(obj)]
    mm = size * 1000.0
    assert [model_info[f"size_{a}"] for a in "xyz"] == pytest.approx(mm, abs=1e-3)
    assert [model_info[f"min_{a}"] for a in "xyz"] == pytest.approx(-mm / 2, abs=1e-3)
    assert model_info["diameter"] == pytest.approx(float(np.linalg.norm(mm)), abs=1e-3)
    turns = sorted(tuple(np.round(np.diag(np.reshape(t, (4, 4)))[:3])) for t in model_info["symmetries_discrete"])
    assert turns == [(-1, -1, 1), (-1, 1, -1), (1, -1, -1)]  # half turns about z, y, x

    # the pose puts the rendered surface on the model's faces
    scene = bop_root / "train_pbr/000000"
    gt = json.loads((scene / "scene_gt.json").read_text())["1"]
    assert [g["obj_id"] for g in gt] == [obj]
    r, t = np.reshape(gt[0]["cam_R_m2c"], (3, 3)), np.asarray(gt[0]["cam_t_m2c"])
    manifest = json.loads((out / "manifest.json").read_text())
    k = np.array(manifest["sensors"]["/World/Cam"]["intrinsics"]["K"])
    depth = np.load(out / "World.Cam/depth_00001.npy")
    instance = np.load(out / "World.Cam/instance_00001.npy")
    v, u = np.nonzero(instance == obj)
    assert len(v) > 200
    rays = np.stack([(u + 0.5 - k[0, 2]) / k[0, 0], (v + 0.5 - k[1, 2]) / k[1, 1], np.ones(len(u))], axis=1)
    in_model = (rays * depth[v, u, None] * 1000.0 - t) @ r  # R^T (p - t) per row
    ratio = np.abs(in_model) / (mm / 2)
    assert ratio.max() < 1 + 1e-4 and np.all(np.abs(ratio.max(axis=1) - 1) < 1e-4)

    # scene_gt_coco.json: pycocotools reads it; masks are mask_visib/, boxes the amodal ones
    api = COCO(str(scene / "scene_gt_coco.json"))
    (ann,) = api.loadAnns(api.getAnnIds(imgIds=1))
    visible = read_grey(str(scene / "mask_visib/000001_000000.png")) > 0
    full = read_grey(str(scene / "mask/000001_000000.png")) > 0
    assert ann["category_id"] == obj and np.array_equal(api.annToMask(ann).astype(bool), visible)
    rows, cols = np.nonzero(full)
    assert ann["bbox"] == [cols.min(), rows.min(), cols.max() - cols.min() + 1, rows.max() - rows.min() + 1]
    assert api.loadImgs(1)[0]["file_name"] == "rgb/000001.jpg"  # the toolkit's PBR template

    # the BOP toolkit's own scripts on such output: tests/blender/test_bop_toolkit.py

    # --annotate-static afterwards: the ground and wall become objects (their models were not written)
    result = export_annotations(str(out), coco_files=False, report=lambda line: None, annotate_static=True)
    info = json.loads((bop_root / "rscene_bop.json").read_text())
    assert set(info["objects"]) == {str(obj), str(ids["/World/Ground"]), str(ids["/World/Wall"])}
    assert any("no model PLY" in note for note in result["notes"])


def test_jpeg_encoder_decodes_in_openimageio_and_opencv(tmp_path):
    """Our baseline JPEG (BOP's train_pbr images) read by libjpeg through OpenImageIO and OpenCV: close
    to the source (PSNR > 40 dB at quality 95 on a smooth image with a noisy patch and hard edges)."""
    from rscene_addon.products.jpeg import encode_jpeg
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:75, 0:117]  # sizes that are not multiples of 8
    image = np.stack([(xx * 2.1) % 256, (yy * 3.3) % 256, (xx + yy) % 256], axis=-1).astype(np.uint8)
    image[20:40, 30:60] = rng.integers(0, 256, (20, 30, 3))
    image[50:, 80:] = (255, 0, 0)
    path = tmp_path / "image.jpg"
    path.write_bytes(encode_jpeg(image, 95))
    decoded = exr.read_image(str(path), "uint8")
    mse = np.mean((decoded.astype(float) - image) ** 2)
    assert decoded.shape == image.shape and 10 * np.log10(255 ** 2 / mse) > 40
    cv2 = _cv2()
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert np.abs(bgr[..., ::-1].astype(int) - decoded).max() <= 2  # two libjpeg builds' IDCTs


def test_px_count_all_counts_the_silhouette_on_bops_larger_canvas(tmp_path):
    """A unit box cut by the image's left edge. Truth: slab intersections of the rays through every
    pixel centre of a canvas 3x the image (BOP's calc_gt_info.py canvas) with the box, written here."""
    from tests.blender.test_render_ground_truth import _ray_box
    box = _mesh_object("Box", CUBE_VERTS, CUBE_FACES, location=(0.0, 1.1, 0.0), rotation=(0.2, 0.1, 0.5))
    _camera("Eye", (-3.0, 0.0, 0.0), (math.radians(90), 0.0, math.radians(-90)), 64, 48, lens=35)
    out = tmp_path / "out"
    render_scene(bpy.context.scene, out, [1], sensors="Eye",
                 options=RenderOptions(products={"segmentation", "amodal"}))
    manifest = json.loads((out / "manifest.json").read_text())
    k = np.array(manifest["sensors"]["Eye"]["intrinsics"]["K"])
    c2w = np.array(manifest["sensors"]["Eye"]["frames"][0]["camera_to_world_opencv"])
    (entry,) = json.loads((out / "Eye/instances_00001.json").read_text())["instances"]
    v, u = np.mgrid[-48:96, -64:128]
    rays = np.stack([(u.ravel() + 0.5 - k[0, 2]) / k[0, 0], (v.ravel() + 0.5 - k[1, 2]) / k[1, 1],
                     np.ones(u.size)], axis=1) @ c2w[:3, :3].T
    hit = ~np.isnan(_ray_box(c2w[:3, 3], rays, np.array(box.matrix_world))[:, 0])
    inside = (u.ravel() >= 0) & (u.ravel() < 64) & (v.ravel() >= 0) & (v.ravel() < 48)
    assert 0 < (hit & inside).sum() < hit.sum()  # cut by the image's edge
    assert entry["px_count_all"] == hit.sum() and entry["px_count_all_in_image"] == (hit & inside).sum()
    xs, ys = u.ravel()[hit], v.ravel()[hit]
    assert entry["bbox_obj"] == [xs.min(), ys.min(), xs.max() - xs.min(), ys.max() - ys.min()]
    assert entry["bbox_obj"][0] < 0
    assert entry["visib_fract"] == pytest.approx(entry["px_count_visib"] / hit.sum())
