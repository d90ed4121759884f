"""Preview colour maps, sizes on the pixel grid and products a sensor cannot make (no Blender).

Independent truths: Python's own ``colorsys.hsv_to_rgb`` for every HSV mapping, the field-of-view rule
written out here (``f = (size/2) / tan(fov/2)``) for resized intrinsics, and what each sensor kind
makes as the product table's docs state it.
"""
from __future__ import annotations

import colorsys
import math

import numpy as np
import pytest

from rscene_addon.products import plan, preview
from rscene_addon.products.annotations import with_needed_products
from rscene_addon.products.outputs import RenderManifest
from rscene_addon.products.write import write_frame
from rscene_addon.sensors.intrinsics import CameraIntrinsics, OrthographicIntrinsics


def _u8(rgb):
    return np.rint(np.asarray(rgb) * 255.0).astype(np.uint8)


def test_flow_preview_is_the_hsv_wheel():
    flow = np.array([[[2.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -0.5]],
                     [[1.0, 1.0], [np.nan, 0.0], [0.0, 0.0], [-1.0, -1.0]]], np.float32)
    image = preview.preview("flow", flow)
    assert image.shape == (2, 4, 3) and image.dtype == np.uint8
    top = 2.0
    for i in range(2):
        for j in range(4):
            u, v = (float(c) for c in flow[i, j])
            if not (math.isfinite(u) and math.isfinite(v)):
                assert not image[i, j].any()
                continue
            hue = (math.atan2(v, u) / (2 * math.pi)) % 1.0
            expected = _u8(colorsys.hsv_to_rgb(hue, 1.0, math.hypot(u, v) / top))
            assert np.array_equal(image[i, j], expected), (i, j, image[i, j], expected)
    assert np.array_equal(image[0, 0], [255, 0, 0])  # right: red, full value (the largest)
    assert np.array_equal(image[0, 1], [64, 128, 0])  # down (hue 90 deg) at half the largest


def test_depth_ids_and_normal_previews():
    depth = np.array([[1.0, 2.0, 3.0, np.inf]], np.float32)
    image = preview.preview("depth", depth)
    for j, d in enumerate((1.0, 2.0, 3.0)):
        assert np.array_equal(image[0, j], _u8(colorsys.hsv_to_rgb((d - 1.0) / 2.0 * 2 / 3, 1, 1)))
    assert not image[0, 3].any() and np.array_equal(image[0, 0], [255, 0, 0])  # near red, far blue
    assert np.array_equal(image[0, 2], [0, 0, 255])

    ids = np.array([[-1, 0, 7, 7, 12]], np.int32)
    inst, cls = preview.preview("instance", ids), preview.preview("class", ids)
    assert not inst[0, 0].any() and inst[0, 1].any() and not cls[0, 1].any()
    for j, i in ((2, 7), (4, 12)):
        assert np.array_equal(inst[0, j], _u8(colorsys.hsv_to_rgb((i * 0.6180339887498949) % 1.0, 0.75, 0.95)))
    assert np.array_equal(inst[0, 2], inst[0, 3]) and not np.array_equal(inst[0, 2], inst[0, 4])

    normal = np.array([[[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]], np.float32)
    image = preview.preview("normal", normal)
    assert np.array_equal(image[0, 0], [128, 128, 0]) and np.array_equal(image[0, 1], [255, 128, 128])
    assert not image[0, 2].any()


def _spec(products):
    return plan.SensorSpec("/World/Cam", "rgb_depth", "sensor", tuple(products),
                           intrinsics=CameraIntrinsics.from_fov(4, 3, 60.0))


def test_previews_are_written_beside_the_arrays_only_when_asked(tmp_path):
    spec = _spec(("depth", "segmentation"))
    arrays = {"depth": np.full((3, 4), 2.0, np.float32), "instance": np.full((3, 4), 3, np.int32),
              "semantic": np.zeros((3, 4), np.int32)}
    manifest = RenderManifest()
    manifest.add_sensor(spec.name, spec.kind, spec.intrinsics)
    off = write_frame(str(tmp_path / "off"), manifest, spec, 1, arrays, plan.RenderOptions())
    assert not any("preview" in rel for rel in off)
    manifest = RenderManifest()
    manifest.add_sensor(spec.name, spec.kind, spec.intrinsics)
    on = write_frame(str(tmp_path / "on"), manifest, spec, 1, arrays, plan.RenderOptions(previews=True))
    previews = sorted(rel for rel in on if "preview" in rel)
    assert previews == ["World.Cam/depth_preview_00001.png", "World.Cam/instance_preview_00001.png",
                        "World.Cam/semantic_preview_00001.png"]
    for rel in previews:
        assert (tmp_path / "on" / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    frame = manifest.to_dict()["sensors"]["/World/Cam"]["frames"][0]
    entry = next(o for o in frame["outputs"] if o["layer"] == "depth_preview")
    assert entry["shape"] == [3, 4, 3] and entry["units"].startswith("preview (not data)")


def test_resized_intrinsics_follow_the_pixel_grid():
    k = CameraIntrinsics.from_fov(1280, 960, 60.0)
    quarter = k.resized(320, 240)
    assert np.array_equal(quarter.K, np.diag([0.25, 0.25, 1.0]) @ k.K)  # exact: a power of two
    f = 120.0 / math.tan(math.radians(30.0))  # the same field of view on 240 rows
    assert quarter.fy == pytest.approx(f, rel=1e-12) and (quarter.cx, quarter.cy) == (160.0, 120.0)
    # the same ray through a pixel centre, scaled: (j + 0.5) W'/W
    point = np.array([0.3, -0.2, 2.0])
    assert np.allclose(quarter.project(point), k.project(point) * 0.25, rtol=1e-12)
    wide = k.resized(320, 120)  # a new aspect ratio: same view, non-square pixels
    assert wide.fov_x_deg == pytest.approx(k.fov_x_deg) and wide.fov_y_deg == pytest.approx(k.fov_y_deg)
    ortho = OrthographicIntrinsics(1280, 800, 5.0)
    assert ortho.resized(422, 264).pixel_size == pytest.approx(5.0 / 422)  # Blender's 33 %
    with pytest.raises(ValueError, match="keeps its aspect ratio"):
        ortho.resized(320, 240)


def test_resolution_and_scale_options():
    spec = plan.SensorSpec("cam", "camera", "camera", plan.CAMERA_PRODUCTS,
                           intrinsics=CameraIntrinsics.from_fov(1280, 800, 60.0))
    assert plan.resized(spec, plan.RenderOptions(resolution="320x200")).intrinsics.width == 320
    third = plan.resized(spec, plan.RenderOptions(scale=33)).intrinsics
    assert (third.width, third.height) == (422, 264)  # int(1280 * 0.33), int(800 * 0.33) as Blender
    assert plan.resized(spec, plan.RenderOptions(), percent=50).intrinsics.width == 640
    assert plan.resized(spec, plan.RenderOptions()) is spec
    odd = plan.resized(spec, plan.RenderOptions(resolution=(320, 240)))
    assert any("non-square pixels" in note for note in odd.notes)
    for bad in ("320", "0x10", "axb"):
        with pytest.raises(ValueError, match="resolution"):
            plan.RenderOptions(resolution=bad)
    with pytest.raises(ValueError, match="either a resolution or a scale"):
        plan.RenderOptions(resolution=(10, 10), scale=50)


def test_products_no_chosen_sensor_makes_are_named():
    rgb = plan.SensorSpec("/World/Eye", "rgb", "sensor", ("rgb",))
    options = plan.RenderOptions(products=with_needed_products(plan.parse_products("rgb,depth,ids,coco,bop")))
    spec = rgb.with_products(options.products, options.opt_in_products())
    missing = plan.unmade_products(options, [spec])
    assert set(missing) == {"depth", "segmentation", "coco", "bop"}
    assert "rgb and segmentation" in missing["coco"]
    camera = plan.SensorSpec("/World/Cam", "camera", "camera", plan.CAMERA_PRODUCTS)
    assert plan.unmade_products(options, [spec, camera.with_products(options.products)]) == {}
    filtering = plan.RenderOptions(products={"rgb", "lidar", "imu"}, require_products=False)
    assert plan.unmade_products(filtering, [spec]) == {}
    assert "--cryptomatte" in plan.unmade_products(plan.RenderOptions(products={"cryptomatte"}), [camera])["cryptomatte"]
