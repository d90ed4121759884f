"""Cryptomatte soft masks (the opt-in ``cryptomatte`` product) against independent geometry: two flat
quads sharing a slanted straight edge, seen by an orthographic camera looking straight down, so each
pixel's covered area is a polygon clipped by two lines, computed here in closed form. Also: the hash
(MurmurHash3) against Blender's own Cryptomatte manifest and the decoding on hand-made layers."""
from __future__ import annotations

import json

import bpy
import numpy as np
import pytest

from rscene_addon.products import cryptomatte
from rscene_addon.render import exr, render_scene
from rscene_addon.products.plan import RenderOptions
from tests.blender.test_render_support import _session_registration, render_env  # noqa: F401 - fixtures

W, H, SCALE = 48, 32, 2.0  # orthographic: SCALE m across the larger (horizontal) side
PIXEL = SCALE / W
X0, SLOPE, Y_TOP = 0.0137, 0.37, 0.4321  # shared edge x = X0 + SLOPE * y; both quads end at y = Y_TOP
SAMPLES = 256


def _quad(name, corners):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(x, y, 0.0) for x, y in corners], [], [[0, 1, 2, 3]])
    ob = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def _clip(polygon, a, b, c):
    """Sutherland-Hodgman: the part of ``polygon`` where ``a x + b y <= c``."""
    out = []
    for i, p in enumerate(polygon):
        q = polygon[(i + 1) % len(polygon)]
        fp, fq = a * p[0] + b * p[1] - c, a * q[0] + b * q[1] - c
        if fp <= 0:
            out.append(p)
        if fp * fq < 0:
            s = fp / (fp - fq)
            out.append((p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])))
    return out


def _area(polygon):
    if len(polygon) < 3:
        return 0.0
    x, y = np.array(polygon).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _analytic_fractions():
    """Area fractions ``(H, W)`` of each pixel covered by the left quad and by the right one."""
    left, right = np.zeros((H, W)), np.zeros((H, W))
    top = 0.5 * H * PIXEL
    for row in range(H):
        for col in range(W):
            x0, y1 = -0.5 * SCALE + col * PIXEL, top - row * PIXEL
            square = [(x0, y1 - PIXEL), (x0 + PIXEL, y1 - PIXEL), (x0 + PIXEL, y1), (x0, y1)]
            below = _clip(square, 0.0, 1.0, Y_TOP)
            left[row, col] = _area(_clip(below, 1.0, -SLOPE, X0)) / PIXEL ** 2  # x - SLOPE y <= X0
            right[row, col] = _area(_clip(below, -1.0, SLOPE, -X0)) / PIXEL ** 2
    return left, right


@pytest.fixture
def two_quads(render_env):
    sc = bpy.context.scene
    far = -3.0
    _quad("Left", [(-3.0, far), (X0 + SLOPE * far, far), (X0 + SLOPE * Y_TOP, Y_TOP), (-3.0, Y_TOP)])
    _quad("Right", [(X0 + SLOPE * far, far), (3.0, far), (3.0, Y_TOP), (X0 + SLOPE * Y_TOP, Y_TOP)])
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    cam.data.type, cam.data.ortho_scale = "ORTHO", SCALE
    cam.location = (0.0, 0.0, 5.0)  # looking down -z: image right = +x, image up = +y
    sc.collection.objects.link(cam)
    sc.camera = cam
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = W, H, 100
    return sc


def test_coverage_matches_the_area_of_each_pixel_on_either_side_of_a_straight_edge(two_quads, tmp_path):
    out = tmp_path / "out"
    levels = 4
    render_scene(two_quads, out, [1], samples=SAMPLES, sensors="Cam",
                 options=RenderOptions(cryptomatte=levels, keep_exr=True))
    ids = np.load(out / "Cam/cryptomatte_id_00001.npy")
    coverage = np.load(out / "Cam/cryptomatte_coverage_00001.npy")
    instance = np.load(out / "Cam/instance_00001.npy")
    assert ids.shape == coverage.shape == (H, W, levels) and ids.dtype == np.int32
    manifest = json.loads((out / "manifest.json").read_text())
    meta = manifest["metadata"]["cryptomatte"]
    assert meta["levels"] == levels and meta["pixel_filter"] == "BOX" and meta["filter_width_px"] == 1.0
    assert manifest["metadata"]["filter_width_px"] == 1.0  # the run's filter: not exact_ids' 0.01 px
    assert bpy.context.scene.cycles.pixel_filter_type == "BLACKMAN_HARRIS"  # restored after the run
    by_name = {entry["name"]: entry["instance_id"] for entry in meta["objects"].values()}
    left_id, right_id = by_name["Left"], by_name["Right"]
    assert left_id != right_id and min(left_id, right_id) >= 0
    # our hashes are Blender's: its own Cryptomatte manifest in the kept EXR
    header = exr.read_attributes(str(out / "Cam/passes_00001.exr"), "cryptomatte/")
    blender_manifest = json.loads(next(v for k, v in header.items() if k.endswith("/manifest")))
    assert {name: f"{int(h, 16):08x}" for name, h in blender_manifest.items()} == \
        {entry["name"]: h for h, entry in meta["objects"].items()}

    left, right = _analytic_fractions()
    measured_left = np.where(ids == left_id, coverage, 0.0).sum(axis=-1)
    measured_right = np.where(ids == right_id, coverage, 0.0).sum(axis=-1)
    assert ((ids >= 0) | (coverage == 0)).all()  # every rank with coverage is one of the two quads
    total = coverage.sum(axis=-1)
    full = left + right > 1 - 1e-9
    assert full.sum() > 0.7 * H * W and (~full).sum() >= W  # the strip above Y_TOP is background
    assert total[full] == pytest.approx(np.ones(full.sum()), abs=1e-3)
    assert total[left + right < 1e-9] == pytest.approx(0.0, abs=1e-6)  # nothing but background

    # partly covered pixels: along the slanted edge (left/right) and along the top edge (quad/background).
    # With a box filter one pixel wide a sample is uniform in the pixel, so the coverage estimates the
    # area fraction a from SAMPLES samples: even independent samples would stay within 4 standard
    # deviations, 4 sqrt(a (1 - a) / N) <= 0.125 at N = 256, of it; Cycles' stratified (Sobol) samples
    # do far better on average, which the mean error bound (a tenth of that) checks.
    edge = (left > 1e-9) & (left < 1 - 1e-9) | (right > 1e-9) & (right < 1 - 1e-9)
    assert edge.sum() > H  # the slanted edge crosses every row below Y_TOP, the top edge every column
    for measured, exact in ((measured_left, left), (measured_right, right)):
        bound = 4.0 * np.sqrt(np.maximum(exact * (1 - exact), 1.0 / SAMPLES) / SAMPLES)
        error = np.abs(measured - exact)[edge]
        assert (error <= bound[edge]).all()
        assert error.mean() < 0.0125

    # interior pixels (one quad only): the hard id image and the largest coverage agree; on edge pixels
    # the hard id (one sample) is one of the quads that cover part of the pixel
    inside = (left == 1.0) | (right == 1.0)
    assert np.array_equal(instance[inside], ids[..., 0][inside])
    assert np.array_equal(ids[..., 0][left == 1.0], np.full((left == 1.0).sum(), left_id))
    hard_edge = instance[edge & full]
    assert (((hard_edge == left_id) & (left[edge & full] > 0)) | ((hard_edge == right_id)
            & (right[edge & full] > 0))).all()


def test_murmur3_and_the_float_encoding_of_known_names():
    # reference values: MurmurHash3_x86_32 test vectors and the hashes Blender's manifest gives "A", "B"
    assert cryptomatte.murmur3_32(b"") == 0
    assert cryptomatte.murmur3_32(b"", seed=1) == 0x514E28B7
    assert cryptomatte.murmur3_32("hello") == 0x248BFA47
    assert cryptomatte.murmur3_32("Hello, world!", seed=1234) == 0xFAF6CDB3
    assert cryptomatte.murmur3_32("A") == 0x54DCF7CE and cryptomatte.murmur3_32("B") == 0xCCA66A8A
    # exponent bits 0 and 255 would be a denormal and inf/NaN: clamped into 1..254, sign and mantissa kept
    assert cryptomatte.float_bits(0x807FFFFF) == 0x80FFFFFF
    assert cryptomatte.float_bits(0x7F812345) == 0x7F012345
    assert cryptomatte.float_bits(0x54DCF7CE) == 0x54DCF7CE
    assert cryptomatte.layer_names(5) == ["CryptoObject00", "CryptoObject01", "CryptoObject02"]


def test_decode_maps_hashes_merges_an_instance_and_sorts_by_coverage():
    names = {"Body": 7, "Wheel": 7, "Other": 3}
    table = cryptomatte.object_table(names)

    def as_float(name):
        return np.array([cryptomatte.float_bits(cryptomatte.murmur3_32(name))], np.uint32).view(np.float32)[0]
    stray = np.array([0x3F00FF00], np.uint32).view(np.float32)[0]  # a hash of no object we know
    # one pixel, four ranks: Other 0.4, Body 0.3, Wheel 0.2 (same instance as Body), stray 0.1
    layers = [np.array([[[as_float("Other"), 0.4, as_float("Body"), 0.3]]], np.float32),
              np.array([[[as_float("Wheel"), 0.2, stray, 0.1]]], np.float32)]
    ids, coverage = cryptomatte.decode(layers, 4, table)
    assert ids.tolist() == [[[7, 3, -1, -1]]]
    assert coverage[0, 0] == pytest.approx([0.5, 0.4, 0.1, 0.0])
    ids, coverage = cryptomatte.decode(layers, 2, table)  # two levels: the first layer only
    assert ids.tolist() == [[[3, 7]]] and coverage[0, 0] == pytest.approx([0.4, 0.3])


def test_cryptomatte_is_opt_in_for_image_sensors_only():
    import argparse

    from rscene_addon.commands.render_job import add_arguments, options_from_args
    from rscene_addon.products.plan import CAMERA_PRODUCTS, SensorSpec

    def parse(*extra):
        parser = add_arguments(argparse.ArgumentParser())
        return options_from_args(parser.parse_args(["s.rscene", "--out", "o", *extra]))
    assert parse().cryptomatte == 0 and parse("--cryptomatte").cryptomatte == 6
    assert parse("--cryptomatte", "4").cryptomatte == 4
    with pytest.raises(ValueError, match="cryptomatte levels"):
        RenderOptions(cryptomatte=17)
    camera = SensorSpec("cam", "camera", "blender", CAMERA_PRODUCTS)
    lidar = SensorSpec("lidar", "lidar", "sensor", ("lidar",))
    off, on = RenderOptions(), RenderOptions(cryptomatte=6)
    assert camera.with_products(off.products, off.opt_in_products()).products == CAMERA_PRODUCTS
    with_matte = camera.with_products(on.products, on.opt_in_products())
    assert with_matte.products == (*CAMERA_PRODUCTS, "cryptomatte")
    assert camera.with_products({"cryptomatte"}, on.opt_in_products()).products == ("cryptomatte",)
    assert camera.with_products({"rgb"}, on.opt_in_products()).products == ("rgb",)
    assert lidar.with_products(None, on.opt_in_products()).products == ("lidar",)
    assert camera.with_products({"cryptomatte"}, on.opt_in_products()).is_camera
