"""COCO and BOP writers over a render folder made here by an independent ray caster.

The folder mimics what the renderer writes (manifest, instance/depth .npy, instances JSON with the
oriented 3D box corners in Blender's bound_box order, amodal .npz). Truths: pycocotools (a reference
implementation, test-only) decodes the COCO masks; the BOP poses are checked by projecting the model's
box corners with K and scene_gt's pose against projecting the world corners through the camera;
visib_fract is recounted from the PNG masks; field names and types follow the toolkit's documented
format.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rscene_addon.formats.png import read_grey
from rscene_addon.products.outputs import RenderManifest
from rscene_addon.products import annotations, bop, coco
from rscene_addon.sensors.intrinsics import CameraIntrinsics
from rscene_addon.sensors.writers import write_npy

pycocotools = pytest.importorskip("pycocotools")
from pycocotools import mask as mask_util  # noqa: E402
from pycocotools.coco import COCO  # noqa: E402

W, H = 96, 72
K = CameraIntrinsics(W, H, 80.0, 82.0, 47.3, 35.9)
SIGNS = [(-1, -1, -1), (-1, -1, 1), (-1, 1, 1), (-1, 1, -1), (1, -1, -1), (1, -1, 1), (1, 1, 1), (1, 1, -1)]


def rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    x = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * x + (1 - np.cos(angle)) * x @ x


# boxes: instance id, class id, rotation, centre (world), size (m)
BOXES = [
    (3, 1, rot((0.3, 1.0, 0.2), 0.7), np.array([0.05, 0.02, 0.0]), np.array([0.30, 0.20, 0.25])),
    (7, 2, rot((1.0, 0.0, 0.0), 0.1), np.array([-0.02, 0.0, -0.45]), np.array([0.12, 0.50, 0.05])),
    (9, 0, rot((0.0, 0.0, 1.0), 1.2), np.array([0.25, -0.15, 0.1]), np.array([0.08, 0.08, 0.08])),
]


def camera_pose(frame):
    """OpenCV camera-to-world: 1.55 m from the origin looking at it from above, tilted, turning."""
    c2w = np.eye(4)
    c2w[:3, :3] = rot((0, 0, 1), 0.2 + 0.05 * frame) @ rot((1, 0, 0), np.pi - 0.25)
    c2w[:3, 3] = (0.01 * frame, 0.0, 0.0) - 1.55 * c2w[:3, 2]
    return c2w


def cast(c2w):
    """Per pixel centre: nearest box hit (id image, depth) and each box's own silhouette."""
    j, i = np.meshgrid(np.arange(W) + 0.5, np.arange(H) + 0.5)
    d_cam = np.stack([(j - K.cx) / K.fx, (i - K.cy) / K.fy, np.ones_like(j)], axis=-1).reshape(-1, 3)
    d_world = d_cam @ c2w[:3, :3].T
    origin = c2w[:3, 3]
    best = np.full(len(d_cam), np.inf)
    ids = np.full(len(d_cam), -1, dtype=np.int32)
    alone = {}
    for iid, _, r, c, size in BOXES:
        o, d = r.T @ (origin - c), d_world @ r  # ray in the box frame; d's z in camera = 1 per unit
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (-size / 2 - o) / d, (size / 2 - o) / d
        near = np.nanmax(np.minimum(t1, t2), axis=1)
        far = np.nanmin(np.maximum(t1, t2), axis=1)
        hit = (near <= far) & (far > 0)
        alone[iid] = hit.reshape(H, W)
        closer = hit & (near < best)
        best[closer], ids[closer] = near[closer], iid
    return ids.reshape(H, W), best.reshape(H, W).astype(np.float32), alone  # t along d_cam = planar depth


def corners(r, c, size):
    return [list(c + r @ (np.array(s) * size / 2)) for s in SIGNS]


@pytest.fixture
def render_dir(tmp_path):
    return make_render(tmp_path, amodal=True)


def make_render(tmp_path, amodal: bool, frames=(0, 1)):
    m = RenderManifest({"segmentation": {"classes": {"0": "", "1": "crate", "2": "board"}}})
    name = "/World/cam"
    folder = m.add_sensor(name, "camera", K, 0.05, 100.0)
    for frame in frames:
        c2w = camera_pose(frame)
        m.add_frame(name, frame, camera_to_world=c2w, time=frame / 30)
        ids, depth, alone = cast(c2w)
        write_npy(tmp_path / m.add_output(name, frame, "instance", "npy", ids.shape, np.int32, "id"), ids)
        write_npy(tmp_path / m.add_output(name, frame, "depth", "npy", depth.shape, np.float32, "m"), depth)
        listing = []
        for iid, cls, r, c, size in BOXES:
            if (ids == iid).any():
                listing.append({"id": iid, "class_id": cls, "paths": [f"/World/box{iid}"],
                                "bbox3d": {"corners": np.round(corners(r, c, size), 9).tolist()}})
        rel = m.add_output(name, frame, "instances", "json", (len(listing),), np.dtype(object), "")
        (tmp_path / rel).write_text(json.dumps({"frame": frame, "instances": listing}))
        if amodal:
            keep = [iid for iid in alone if alone[iid].any()]
            rel = m.add_output(name, frame, "amodal", "npz", (len(keep), H, W), np.bool_, "mask")
            np.savez_compressed(tmp_path / rel, ids=np.array(keep, np.int32),
                                masks=np.stack([alone[i] for i in keep]))
    m.metadata["complete"] = True
    m.write(tmp_path / "manifest.json")
    return tmp_path, folder


# -- COCO ------------------------------------------------------------------------------------------

def test_rle_matches_pycocotools_on_random_masks():
    rng = np.random.default_rng(4)
    for trial in range(200):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        mask = rng.random((h, w)) < rng.random()
        ref = mask_util.encode(np.asfortranarray(mask.astype(np.uint8)))
        mine = coco.rle_encode(mask)
        assert mine["counts"] == ref["counts"].decode("ascii"), trial
        assert mine["size"] == [h, w]
        if mask.any():
            assert coco.mask_bbox(mask) == [int(v) for v in mask_util.toBbox(ref)]


def test_coco_file_loads_and_masks_decode_to_the_instance_image(render_dir):
    out, folder = render_dir
    result = annotations.export_annotations(out, coco_files=True, bop_files=False, report=lambda line: None)
    path = out / folder / "coco_instances.json"
    assert result["coco"] == [str(path)]
    api = COCO(str(path))
    assert sorted(api.getImgIds()) == [0, 1]
    names = {c["id"]: c["name"] for c in api.loadCats(api.getCatIds())}
    assert names == {1: "crate", 2: "board", 3: "unlabelled"}  # box 9 has no class
    for image_id in (0, 1):
        ids = np.load(out / folder / f"instance_{image_id:05d}.npy")
        image = api.loadImgs(image_id)[0]
        # no RGB was rendered here: the image entry names the instance image instead
        assert (image["width"], image["height"], image["file_name"]) == (W, H, f"instance_{image_id:05d}.npy")
        anns = api.loadAnns(api.getAnnIds(imgIds=image_id))
        assert sorted(a["instance_id"] for a in anns) == sorted(int(v) for v in np.unique(ids) if v >= 0)
        for ann in anns:
            mask = api.annToMask(ann).astype(bool)
            truth = ids == ann["instance_id"]
            assert np.array_equal(mask, truth)
            assert ann["iscrowd"] == 0 and ann["area"] == int(truth.sum())
            assert ann["bbox"] == [int(v) for v in mask_util.toBbox(ann["segmentation"])]
            expected_class = {3: 1, 7: 2, 9: 3}[ann["instance_id"]]
            assert ann["category_id"] == expected_class


# -- BOP -------------------------------------------------------------------------------------------

def load(folder, name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return json.load(f)


def bop_scene(out):
    return annotations.export_annotations(out, coco_files=False, bop_files=True, report=lambda line: None)["bop"][0]


def project(points_cam):
    p = np.asarray(points_cam, float)
    return np.stack([K.fx * p[:, 0] / p[:, 2] + K.cx, K.fy * p[:, 1] / p[:, 2] + K.cy], axis=1)


def test_bop_poses_reproject_the_model_corners(render_dir):
    out, _ = render_dir
    result = annotations.export_annotations(out, coco_files=False, bop_files=True, report=lambda line: None)
    scene = result["bop"][0]
    assert scene == str(out / "bop" / "train_pbr" / "000000")
    cams, gts = load(scene, "scene_camera.json"), load(scene, "scene_gt.json")
    boxes = {b[0]: b for b in BOXES}
    for im_id in ("0", "1"):
        c2w = camera_pose(int(im_id))
        w2c = np.linalg.inv(c2w)
        cam = cams[im_id]
        assert np.allclose(np.reshape(cam["cam_K"], (3, 3)), np.array(K.K))
        assert np.allclose(np.reshape(cam["cam_R_w2c"], (3, 3)), w2c[:3, :3])
        assert np.allclose(cam["cam_t_w2c"], w2c[:3, 3] * 1000.0)
        assert gts[im_id], "every frame sees boxes"
        for gt in gts[im_id]:
            _, _, r, c, size = boxes[gt["obj_id"]]
            r_m2c, t_m2c = np.reshape(gt["cam_R_m2c"], (3, 3)), np.asarray(gt["cam_t_m2c"])
            assert np.allclose(r_m2c @ r_m2c.T, np.eye(3), atol=1e-9) and np.linalg.det(r_m2c) > 0
            model = np.array(SIGNS) * size * 1000.0 / 2  # the model's corners, mm, model frame
            via_bop = project(model @ r_m2c.T + t_m2c)
            world = np.array(corners(r, c, size))
            via_world = project(world @ w2c[:3, :3].T + w2c[:3, 3])
            assert np.abs(via_bop - via_world).max() < 0.1


def test_bop_gt_info_and_masks_agree_with_an_independent_count(render_dir):
    out, _ = render_dir
    scene = bop_scene(out)
    gts, infos = load(scene, "scene_gt.json"), load(scene, "scene_gt_info.json")
    cams = load(scene, "scene_camera.json")
    for im_id, entries in infos.items():
        ids, depth, alone = cast(camera_pose(int(im_id)))
        assert len(entries) == len(gts[im_id])
        for gt_id, (gt, info) in enumerate(zip(gts[im_id], entries)):
            visib = read_grey(os.path.join(scene, "mask_visib", f"{int(im_id):06d}_{gt_id:06d}.png"))
            full = read_grey(os.path.join(scene, "mask", f"{int(im_id):06d}_{gt_id:06d}.png"))
            assert set(np.unique(visib)) <= {0, 255} and set(np.unique(full)) <= {0, 255}
            assert np.array_equal(visib == 255, ids == gt["obj_id"])
            assert np.array_equal(full == 255, alone[gt["obj_id"]])
            assert info["px_count_visib"] == int((visib == 255).sum())
            assert info["px_count_all"] == int((full == 255).sum())
            assert info["visib_fract"] == pytest.approx((visib == 255).sum() / (full == 255).sum())
            assert info["px_count_valid"] == info["px_count_all"]  # every silhouette pixel sees a surface
            ys, xs = np.nonzero(visib == 255)
            assert info["bbox_visib"] == [xs.min(), ys.min(), xs.max() - xs.min(), ys.max() - ys.min()]
        occluded = [i for i in infos[im_id] if i["visib_fract"] < 1.0]
        assert occluded, "the scene has an occluded box"
        depth_png = read_grey(os.path.join(scene, "depth", f"{int(im_id):06d}.png")).astype(float)
        scale = cams[im_id]["depth_scale"]
        hit = np.isfinite(depth)
        assert np.abs(depth_png[hit] * scale - depth[hit] * 1000.0).max() <= scale / 2 + 1e-6
        assert (depth_png[~hit] == 0).all()


def test_bop_fields_and_types_follow_the_documented_format(render_dir):
    out, _ = render_dir
    scene = bop_scene(out)
    for im_id, cam in load(scene, "scene_camera.json").items():
        assert int(im_id) >= 0
        assert set(cam) == {"cam_K", "depth_scale", "cam_R_w2c", "cam_t_w2c"}
        assert len(cam["cam_K"]) == 9 and len(cam["cam_R_w2c"]) == 9 and len(cam["cam_t_w2c"]) == 3
        assert all(isinstance(v, float) for v in cam["cam_K"] + cam["cam_R_w2c"] + cam["cam_t_w2c"])
        assert isinstance(cam["depth_scale"], float)
    for gts in load(scene, "scene_gt.json").values():
        for gt in gts:
            assert set(gt) == {"cam_R_m2c", "cam_t_m2c", "obj_id"}
            assert isinstance(gt["obj_id"], int) and len(gt["cam_R_m2c"]) == 9 and len(gt["cam_t_m2c"]) == 3
    for infos in load(scene, "scene_gt_info.json").values():
        for info in infos:
            assert set(info) == {"bbox_obj", "bbox_visib", "px_count_all", "px_count_valid", "px_count_visib",
                                 "visib_fract"}
            assert all(isinstance(info[k], int) for k in ("px_count_all", "px_count_valid", "px_count_visib"))
            assert isinstance(info["visib_fract"], float)
            assert all(isinstance(v, int) for v in info["bbox_obj"] + info["bbox_visib"])
    names = sorted(os.listdir(os.path.join(scene, "mask_visib")))
    assert names and all(len(n) == len("000000_000000.png") for n in names)
    assert sorted(os.listdir(os.path.join(scene, "mask"))) == names
    assert sorted(os.listdir(os.path.join(scene, "depth"))) == ["000000.png", "000001.png"]


def test_without_amodal_masks_only_mask_visib_is_written_and_said(tmp_path):
    out, _ = make_render(tmp_path, amodal=False, frames=(2,))
    lines = []
    result = annotations.export_annotations(out, coco_files=False, bop_files=True, report=lines.append)
    scene = result["bop"][0]
    assert not os.path.exists(os.path.join(scene, "mask"))
    assert os.listdir(os.path.join(scene, "mask_visib"))
    for info in load(scene, "scene_gt_info.json")["2"]:
        assert set(info) == {"bbox_visib", "px_count_visib"}
    assert any("amodal masks were not rendered" in line for line in lines)
    info = load(out / "bop", "rscene_bop.json")
    assert info["scenes"]["000000"]["amodal_masks"] is False
    assert any("amodal masks were not rendered" in n for n in info["notes"])


def test_pose_from_box_corners_refuses_what_is_not_an_oriented_box():
    r, c, size = BOXES[0][2], BOXES[0][3], BOXES[0][4]
    got = bop.pose_from_box_corners(corners(r, c, size))
    assert np.allclose(got[0], r) and np.allclose(got[1], c) and np.allclose(got[2], size)
    flat = bop.pose_from_box_corners(corners(r, c, np.array([0.3, 0.2, 0.0])))
    assert np.allclose(flat[0], r)  # the missing axis completes a right-handed frame
    lo, hi = np.array([0.0, 0.0, 0.0]), np.array([1.0, 2.0, 0.5])  # product order: not bound_box order
    product = [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    assert bop.pose_from_box_corners(product) is None
    mirrored = [list(c + r @ (np.array(s) * size * np.array([-1, 1, 1]) / 2)) for s in SIGNS]
    assert bop.pose_from_box_corners(mirrored) is None


def test_missing_manifest_and_files_name_the_path(tmp_path):
    with pytest.raises(OSError, match="manifest.json"):
        annotations.export_annotations(tmp_path, report=lambda line: None)
    out, folder = make_render(tmp_path, amodal=False, frames=(0,))
    os.unlink(out / folder / "depth_00000.npy")
    with pytest.raises(OSError, match="depth.npy missing"):
        annotations.export_annotations(out, coco_files=False, bop_files=True, report=lambda line: None)


def test_command_line_writes_both_and_fails_cleanly(tmp_path):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    out, folder = make_render(tmp_path / "run", amodal=True, frames=(0,))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "rscene_addon", "export-annotations", *args],
                              capture_output=True, text=True, cwd=root, timeout=120)
    done = run(str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / folder / "coco_instances.json").exists()
    assert (out / "bop" / "train_pbr" / "000000" / "scene_gt.json").exists()
    assert "bpy" not in done.stdout + done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    failed = run(str(empty), "--coco")
    assert failed.returncode == 1 and "manifest.json" in failed.stdout and "Traceback" not in failed.stderr


def test_one_pass_annotations_equal_pycocotools_per_instance_on_random_id_images():
    rng = np.random.default_rng(11)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(1, 25, 2))
        ids = rng.integers(-1, 5, (h, w)).astype(np.int32)
        if trial % 2:  # blocky images: long runs, runs that go on into the next column
            ids = np.repeat(np.repeat(ids[: max(1, h // 3), : max(1, w // 3)], 3, 0), 3, 1)[:h, :w]
            h, w = ids.shape
        anns = coco.instance_annotations(ids, {1: 1, 2: 2}, {"0": "", "1": "a", "2": "b"})
        assert [a["instance_id"] for a in anns] == [int(v) for v in np.unique(ids) if v != -1]
        for ann in anns:
            mask = ids == ann["instance_id"]
            ref = mask_util.encode(np.asfortranarray(mask.astype(np.uint8)))
            assert ann["segmentation"]["counts"] == ref["counts"].decode("ascii"), trial
            assert ann["area"] == int(mask.sum())
            assert ann["bbox"] == [int(v) for v in mask_util.toBbox(ref)]
            assert ann["category_id"] == {1: 1, 2: 2}.get(ann["instance_id"], 3)
