"""``render --products coco,bop`` end to end: a Cycles render, then the COCO and BOP files.

Truths: pycocotools (test-only reference) decodes every COCO mask to exactly the rendered instance
image; the box's pose in BOP's scene_gt.json projects its model corners (box of the record's size,
origin at its centre) to where the corner is rendered, measured from the depth image alone
(``test_render_truths._face_fits``: plane fits intersected, no use of K), within 0.1 px.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from rscene_addon.commands.render_job import run_render_cli
from rscene_addon.products.plan import RenderOptions
from rscene_addon.products.annotations import with_needed_products
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    _session_registration, render_env, write_scene)
from tests.blender.test_render_truths import (
    _assert_corner_and_edges, _edge_neighbours, _face_fits, _look_quat, _object, _turned_box_corners)

mask_util = pytest.importorskip("pycocotools.mask")
from pycocotools.coco import COCO  # noqa: E402


def _dynamic(record: str) -> str:
    return record.replace(" static ", " dynamic ", 1)


def test_render_products_coco_and_bop_end_to_end(render_env, tmp_path):
    eye = np.array([-1.3, -2.4, 1.9])
    half = np.array([0.7, 0.5, 0.4])
    centre = np.array([0.1, 0.05, 0.4])
    yaw = np.radians(20.0)
    quat = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
    # dynamic bodies: static ones are background for COCO/BOP (test_render_contract checks that)
    box = _dynamic(_object("/World/Box", "box", centre, quat, 2 * half, extra="semanticClass=crate"))
    ball = _dynamic(_object("/World/Ball", "sphere", (0.9, -0.9, 0.3), radius=0.3, extra="semanticClass=ball"))
    q = _look_quat(eye, centre)
    camera = (f"camera /World/Cam {' '.join(f'{c:g}' for c in eye)} {' '.join(f'{c:.12f}' for c in q)} "
              "50 0.05 100 160 120 rgb true")
    path = write_scene(tmp_path, box, ball, camera)
    out = tmp_path / "out"
    lines = []
    options = RenderOptions(products=with_needed_products({"coco", "bop"}))
    status = run_render_cli(path, "1-1", str(out), samples=1, options=options, print_fn=lines.append,
                            unregister_after=False)
    assert status == 0, lines
    manifest = json.loads((out / "manifest.json").read_text())
    sensor = manifest["sensors"]["/World/Cam"]
    k = np.array(sensor["intrinsics"]["K"])
    instance = np.load(out / "World.Cam" / "instance_00001.npy")
    listing = json.loads((out / "World.Cam" / "instances_00001.json").read_text())["instances"]
    ids = {e["paths"][0]: e["id"] for e in listing}

    # COCO: the file loads and its masks are the instance image
    api = COCO(str(out / "World.Cam" / "coco_instances.json"))
    assert api.loadImgs(1)[0]["file_name"] == "rgb_00001.png"
    names = {c["name"] for c in api.loadCats(api.getCatIds())}
    assert names == {"crate", "ball"}
    anns = api.loadAnns(api.getAnnIds(imgIds=1))
    assert sorted(a["instance_id"] for a in anns) == sorted(int(v) for v in np.unique(instance) if v >= 0)
    for ann in anns:
        assert np.array_equal(api.annToMask(ann).astype(bool), instance == ann["instance_id"])

    # BOP: the box's pose puts its model's corners where the depth image shows them
    scene = out / "bop" / "train_pbr" / "000000"
    gt = [g for g in json.loads((scene / "scene_gt.json").read_text())["1"] if g["obj_id"] == ids["/World/Box"]]
    assert len(gt) == 1
    r, t = np.reshape(gt[0]["cam_R_m2c"], (3, 3)), np.asarray(gt[0]["cam_t_m2c"])
    cam = json.loads((scene / "scene_camera.json").read_text())["1"]
    assert np.allclose(np.reshape(cam["cam_K"], (3, 3)), k)
    signs, corners = _turned_box_corners(centre, half, yaw)
    model = signs * half * 1000.0  # mm, origin at the box centre, the box's own axes

    def project(p):
        c = r @ p + t
        return (k @ c)[:2] / c[2]
    near = int(np.argmin(np.linalg.norm(corners - eye, axis=1)))
    depth = np.load(out / "World.Cam" / "depth_00001.npy")
    fits = _face_fits(depth)
    assert len(fits) == 3, fits
    _assert_corner_and_edges(fits, project(model[near]), [project(model[o]) for o in _edge_neighbours(signs, near)])
    masks = sorted(p.name for p in (scene / "mask_visib").iterdir())
    assert masks == ["000001_000000.png", "000001_000001.png"]
    assert (scene / "rgb" / "000001.jpg").exists() and (scene / "depth" / "000001.png").exists()
    info = json.loads((out / "bop" / "rscene_bop.json").read_text())
    assert info["objects"][str(ids["/World/Box"])]["size_mm"] == pytest.approx(list(2000 * half), abs=1e-3)
    if not (out / "World.Cam" / "amodal_00001.npz").exists():  # amodal masks are another product's
        assert not (scene / "mask").exists()
        assert any("amodal masks were not rendered" in line for line in lines)


def test_panel_switches_write_coco_and_bop_after_the_operator_run(render_env, tmp_path):
    import bpy

    from tests.blender.test_render_support import import_scene
    box = _dynamic(_object("/World/Box", "box", (0.0, 0.0, 0.4), scale=(0.8, 0.6, 0.8), extra="semanticClass=crate"))
    camera = f"camera /World/Cam -3 0 1 {' '.join(f'{c:.12f}' for c in _look_quat((-3, 0, 1), (0, 0, 0.4)))} " \
             "50 0.05 100 64 48 rgb true"
    scene = import_scene(tmp_path, box, camera)
    settings = scene.rscene_render
    settings.output_dir = str(tmp_path / "op")
    settings.use_scene_range = False
    settings.frame_start, settings.frame_end = 2, 2
    settings.samples = 1
    settings.coco = settings.bop = True
    assert bpy.ops.rscene.render_sensors() == {"FINISHED"}
    coco = json.loads((tmp_path / "op" / "World.Cam" / "coco_instances.json").read_text())
    assert [a["image_id"] for a in coco["annotations"]] == [2]
    gts = json.loads((tmp_path / "op" / "bop" / "train_pbr" / "000000" / "scene_gt.json").read_text())
    assert len(gts["2"]) == 1
