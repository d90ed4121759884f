"""The product table and the writers that consume ``{layer: value}`` (no Blender).

Independent truths: numpy's own ``.npy`` reader, the PNG decoder the height-map reader uses
(``formats.png``, written for RaiSim terrains before this writer existed), the noise functions called
directly, and the table's own promises (every alias resolves, every layer has a writer).
"""
from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from rscene_addon.formats import png
from rscene_addon.formats.png import encode_image
from rscene_addon.products import plan, table
from rscene_addon.products.outputs import RenderManifest
from rscene_addon.products.write import WRITERS, write_frame
from rscene_addon.sensors.intrinsics import CameraIntrinsics
from rscene_addon.sensors.noise import add_depth_noise


def test_every_layer_has_a_writer_and_every_alias_resolves():
    for product in table.PRODUCTS.values():
        keys = [(layer.name, WRITERS[layer.writer].ext) for layer in product.layers]
        assert len(keys) == len(set(keys)), product.name  # one manifest entry per layer.ext
        for alias in product.aliases:
            assert table.canonical(alias.upper()) == product.name
    with pytest.raises(ValueError, match="unknown product 'sparkle'.*material"):
        plan.parse_products("rgb,sparkle")
    assert plan.parse_products("ids, normals, material_id") == {"segmentation", "normal", "material"}
    assert plan.CAMERA_PRODUCTS == ("rgb", "depth", "segmentation", "normal")


def test_opt_in_products_come_from_the_options():
    options = plan.RenderOptions(products={"depth", "material"}, keep_exr=True, cryptomatte=4)
    spec = plan.SensorSpec("cam", "camera", "camera", plan.CAMERA_PRODUCTS)
    products = spec.with_products(options.products, options.opt_in_products()).products
    # named opt-ins stay, cryptomatte is dropped (not named), passes kept whatever was named
    assert set(products) == {"depth", "material", "passes"}


def _manifest(spec):
    manifest = RenderManifest()
    manifest.add_sensor(spec.name, spec.kind, spec.intrinsics)
    return manifest


def _spec(products, noise=0.0):
    k = CameraIntrinsics.from_fov(6, 4, 60.0)
    return plan.SensorSpec("/World/Cam", "rgb_depth", "sensor", tuple(products), intrinsics=k,
                           noise_stddev=noise, noise_seed=7)


def test_write_frame_writes_each_layer_with_noise_units_and_options(tmp_path):
    depth = np.linspace(1.0, 5.0, 24, dtype=np.float32).reshape(4, 6)
    depth[0, 0] = np.inf
    instance = np.array([[-1, 3, 3, 3, -1, -1]] * 4, np.int32)
    arrays = {"depth": depth, "instance": instance, "semantic": np.maximum(instance, 0),
              "instances": {"frame": 2, "instances": [{"id": 3}]},
              "material": np.zeros((4, 6), np.int32)}  # not asked for: not written
    spec = _spec(("depth", "segmentation"), noise=0.01)
    manifest = _manifest(spec)
    written = write_frame(str(tmp_path), manifest, spec, 2, arrays, plan.RenderOptions(), {"amodal_note": "!"})
    folder = tmp_path / "World.Cam"
    assert sorted(written) == sorted(f"World.Cam/{n}" for n in (
        "depth_00002.npy", "depth_00002.exr", "instance_00002.npy", "semantic_00002.npy",
        "instances_00002.json"))
    noisy = np.load(folder / "depth_00002.npy")
    assert np.array_equal(noisy, add_depth_noise(depth, 0.0, 0.01, 7, 2, "depth"))
    assert not np.array_equal(noisy, depth) and noisy[0, 0] == np.inf
    assert np.array_equal(np.load(folder / "instance_00002.npy"), instance)
    assert json.loads((folder / "instances_00002.json").read_text()) == arrays["instances"]
    outputs = manifest.to_dict()["sensors"]["/World/Cam"]["frames"][0]["outputs"]
    by_key = {f"{o['layer']}.{o['ext']}": o for o in outputs}
    assert by_key["instances.json"]["units"].endswith("world!") and by_key["instances.json"]["shape"] == [1]
    assert "channel Y" in by_key["depth.exr"]["units"]
    # the range layer is an option: derived from the depth given, noise added like depth's
    written = write_frame(str(tmp_path / "r"), _manifest(spec), _spec(("depth",)), 1, {"depth": depth},
                          plan.RenderOptions(range_image=True))
    assert "World.Cam/range_00001.npy" in written
    expected = _spec(("depth",)).intrinsics.depth_to_range(depth)
    assert np.allclose(np.load(tmp_path / "r/World.Cam/range_00001.npy"), expected, rtol=1e-6)


def _decode_png(data: bytes) -> tuple[dict, np.ndarray]:
    """Chunks split by hand; rows unfiltered by the height-map reader's ``_unfilter``."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = dict(zip(("width", "height", "depth", "colour"), struct.unpack(">IIBB", body[:10])))
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return header, zlib.decompress(idat)


@pytest.mark.parametrize("bits,channels", [(8, 3), (16, 3), (8, 1), (16, 4)])
def test_png_encoder_round_trips_through_the_existing_unfilter(bits, channels):
    rng = np.random.default_rng(bits + channels)
    dtype = np.uint8 if bits == 8 else np.uint16
    image = rng.integers(0, np.iinfo(dtype).max, (9, 13, channels), endpoint=True).astype(dtype)
    image[3:6] = image[2]  # rows the up/Paeth predictors get exactly
    header, raw = _decode_png(encode_image(image, bits))
    assert header == {"width": 13, "height": 9, "depth": bits, "colour": {1: 0, 3: 2, 4: 6}[channels]}
    bpp = channels * bits // 8
    rows = png._unfilter(raw, 9, 13 * bpp, bpp)
    back = rows.view(">u2" if bits == 16 else np.uint8).reshape(9, 13, channels)
    assert np.array_equal(back, image)
    if channels == 1:
        assert np.array_equal(png.decode_grey(encode_image(image[..., 0], bits)), image[..., 0])


def test_the_manual_lists_every_product_and_the_readme_links_resolve():
    from pathlib import Path
    import re
    root = Path(__file__).resolve().parents[3]
    manual = (root / "docs/ground_truth.md").read_text(encoding="utf-8")
    for product in table.PRODUCTS.values():
        assert f"`{product.name}`" in manual, product.name
        for layer in product.layers:
            assert f"{layer.name}.{WRITERS[layer.writer].ext}" in manual, (product.name, layer.name)
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 120
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links and all((root / link).is_file() for link in links)


def test_jpeg_tables_follow_t81():
    from rscene_addon.products import jpeg
    assert jpeg._ZIGZAG[:10].tolist() == [0, 1, 8, 16, 9, 2, 3, 10, 17, 24]
    assert jpeg._ZIGZAG[-3:].tolist() == [55, 62, 63] and sorted(jpeg._ZIGZAG) == list(range(64))
    for bits, values in (jpeg._DC_LUMA, jpeg._DC_CHROMA, jpeg._AC_LUMA, jpeg._AC_CHROMA):
        assert sum(bits) == len(values) == len(set(values))
    # every (run, size) symbol a block can need is in both AC tables
    needed = {0x00, 0xF0} | {(run << 4) | size for run in range(16) for size in range(1, 11)}
    assert needed <= set(jpeg._AC_LUMA[1]) and needed <= set(jpeg._AC_CHROMA[1])
    assert jpeg._scaled(jpeg._LUMA_Q, 50)[0, 0] == 16 and jpeg._scaled(jpeg._LUMA_Q, 95)[0, 0] == 2


def test_model_info_of_primitives():
    """Analytic truths: a sphere's and a cylinder's extents and diameters, a square box's quarter turns."""
    from rscene_addon.products import bop
    rng = np.random.default_rng(4)
    d = rng.normal(size=(30000, 3))
    sphere = 250.0 * d / np.linalg.norm(d, axis=1, keepdims=True)  # 30,000 points: the sampled path
    sphere[:2] = [[0, 0, 250.0], [0, 0, -250.0]]  # a pair exactly opposite
    info = bop.model_info(sphere, "sphere")
    assert 500.0 * np.cos(0.07) <= info["diameter"] <= 500.0 + 1e-9
    assert [info[f"min_{a}"] for a in "xyz"] == pytest.approx([-250.0] * 3, abs=1.0)
    assert len(info["symmetries_continuous"]) == 2 and "symmetries_discrete" not in info
    angle = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rim = np.stack([100 * np.cos(angle), 100 * np.sin(angle)], axis=1)
    cylinder = np.concatenate([np.column_stack([rim, np.full(64, z)]) for z in (-300.0, 300.0)])
    info = bop.model_info(cylinder, "cylinder")
    assert info["diameter"] == pytest.approx(np.hypot(200.0, 600.0))
    assert info["symmetries_continuous"] == [{"axis": [0, 0, 1], "offset": [0, 0, 0]}]
    square = np.array([[x, y, z] for x in (-50, 50) for y in (-50, 50) for z in (-20, 20)], float)
    turns = bop.symmetries("box", np.ptp(square, axis=0))["symmetries_discrete"]
    assert len(turns) == 7  # the square prism's 8 rotations but the identity
    assert bop.symmetries("box", (1.0, 2.0, 3.0))["symmetries_discrete"].__len__() == 3
    assert bop.symmetries("cylinder", (1.0, 2.0, 3.0)) == {}  # an elliptic cylinder has none of these
