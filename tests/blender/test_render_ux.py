"""What a user of ``render`` meets: a dynamic scene is simulated before it is rendered (``--static`` keeps
it frozen), sensors render at ``--resolution`` / ``--scale`` / Blender's resolution % with K on the
pixel grid, preview PNGs, and products a sensor cannot make refused with exit status 1.

Independent truths: free fall ``z(t) = z0 - g t^2 / 2`` projected by a pinhole written here (``f =
(H/2) / tan(vfov/2)`` of the record's field of view), OpenCV's ``cartToPolar`` + ``cvtColor`` HSV -> RGB
for the flow preview, and the instance mask of a small box around its centre's projection.
"""
from __future__ import annotations

import json
import math

import bpy
import numpy as np
import pytest

from rscene_addon.commands.render_job import run_render_cli
from rscene_addon.products.plan import RenderOptions
from tests.blender.test_render_contract import _cv2
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    _session_registration, import_scene, render_env, write_scene)
from tests.blender.test_render_truths import _object

pytestmark = pytest.mark.usefixtures("render_env")

G = 9.81  # the scene's gravity (the simulator's default, as the .rscene sets none)
FPS = 24.0  # Blender's default frame rate: an imported .rscene keeps it
GROUND = _object("/World/Ground", "ground", (0.0, 0.0, 0.0), scale=(20, 20, 1))
# a 0.5 m box 3 m up, dynamic; a camera 4 m away looking along +x, level with it
BOX = _object("/World/Box", "box", (0.0, 0.0, 3.0), scale=(0.5, 0.5, 0.5),
              extra="semanticClass=crate").replace(" static ", " dynamic ", 1)
CAM = "camera /World/Cam -4 0 2.8 1 0 0 0 60 0.05 100 160 120 rgb true"


def _manifest(out):
    return json.loads((out / "manifest.json").read_text())


def _instance_id(manifest, path):
    return next(int(i) for i, e in manifest["metadata"]["segmentation"]["instances"].items()
                if e[0].get("path") == path)


def _render(tmp_path, name, *lines, frames="6-8", simulate=True, **options):
    out = tmp_path / name
    log = []
    status = run_render_cli(write_scene(tmp_path, *lines, name=f"{name}.rscene"), frames, str(out), samples=1,
                            options=RenderOptions(**options), print_fn=log.append, unregister_after=False,
                            simulate=simulate, backend="numpy")
    return status, out, log


def test_render_simulates_a_falling_box_and_its_flow_is_the_analytic_fall(tmp_path):
    status, out, log = _render(tmp_path, "fall", GROUND, BOX, CAM, products={"depth", "ids", "flow"},
                               previews=True)
    assert status == 0, log
    assert any(line.startswith("simulating frames 1-") for line in log), log
    manifest = _manifest(out)
    k = np.array(manifest["sensors"]["/World/Cam"]["intrinsics"]["K"])
    f = 60.0 / math.tan(math.radians(30.0))  # (H/2) / tan(vfov/2), H = 120
    assert k[1, 1] == pytest.approx(f, rel=1e-12) and k[0, 0] == pytest.approx(f, rel=1e-12)
    instance = {fr: np.load(out / f"World.Cam/instance_{fr:05d}.npy") for fr in (6, 7, 8)}
    depth = {fr: np.load(out / f"World.Cam/depth_{fr:05d}.npy") for fr in (6, 7, 8)}
    box = _instance_id(manifest, "/World/Box")
    for fr in (6, 7):
        t0, t1 = (fr - 1) / FPS, fr / FPS
        drop = 0.5 * G * (t1 ** 2 - t0 ** 2)  # metres fallen from frame fr to fr + 1
        # the box's front face (x = -0.25, 3.75 m in front of the camera) moves straight down the image
        face = (instance[fr] == box) & (np.abs(depth[fr] - 3.75) < 1e-4)
        assert face.sum() > 150
        flow = np.load(out / f"World.Cam/flow_forward_{fr:05d}.npy")[face]
        expected = f * drop / 3.75  # px, v grows downwards
        assert expected > 2.0
        # the integrator (semi-implicit Euler, 1/408 s steps) lags the parabola by g dt / 2 per second:
        # 0.5 % of this drop; 2 % allowed
        assert np.abs(flow[:, 1] - expected).max() < 0.02 * expected, (flow[:, 1].min(), flow[:, 1].max(), expected)
        assert np.abs(flow[:, 0]).max() < 1e-3
        backward = np.load(out / f"World.Cam/flow_backward_{fr + 1:05d}.npy")
        on_face = (instance[fr + 1] == box) & (np.abs(depth[fr + 1] - 3.75) < 1e-4)
        assert np.abs(backward[on_face][:, 1] + expected).max() < 0.02 * expected
    # where the box is at frame 6: its centre projects to v = cy + f (2.8 - z) / 4, z from the fall
    rows = np.nonzero((instance[6] == box).any(axis=1))[0]
    z6 = 3.0 - 0.5 * G * (5 / FPS) ** 2
    top = k[1, 2] + f * (2.8 - (z6 + 0.25)) / 3.75  # the front face's top edge
    assert abs(rows.min() - top) < 1.0

    # previews beside the arrays, different where the box moved
    previews = {layer: [out / f"World.Cam/{layer}_preview_{fr:05d}.png" for fr in (6, 7, 8)]
                for layer in ("depth", "instance", "semantic", "flow_forward", "flow_backward")}
    assert all(p.exists() for paths in previews.values() for p in paths)
    cv2 = _cv2()
    for paths in previews.values():
        first, last = (cv2.imread(str(p), cv2.IMREAD_UNCHANGED) for p in (paths[0], paths[-1]))
        assert first.shape == (120, 160, 3) and not np.array_equal(first, last)
    # the flow preview is the flow wheel OpenCV draws: hue = direction, value = |flow| / max
    flow = np.load(out / "World.Cam/flow_forward_00007.npy")
    ok = np.isfinite(flow).all(axis=-1)
    u, v = (np.where(ok, flow[..., i], 0.0).astype(np.float32) for i in (0, 1))
    magnitude, angle = cv2.cartToPolar(u, v, angleInDegrees=True)
    hsv = np.dstack([angle % 360.0, np.ones_like(angle), magnitude / magnitude.max()]).astype(np.float32)
    expected = np.rint(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB) * 255.0)
    expected[~ok] = 0
    got = cv2.imread(str(previews["flow_forward"][1]), cv2.IMREAD_UNCHANGED)[..., ::-1].astype(float)
    assert np.abs(got - expected).max() <= 2.0  # float32 angles and OpenCV's rounding
    assert (got[instance[7] == box].max(axis=-1) > 100).all()  # the falling box is bright, the rest dark
    entry = next(f for f in manifest["sensors"]["/World/Cam"]["frames"] if f["frame"] == 7)
    output = next(o for o in entry["outputs"] if o["layer"] == "flow_forward_preview")
    assert output["path"] == "World.Cam/flow_forward_preview_00007.png" and output["units"].startswith("preview")


def test_static_switch_renders_the_scene_frozen(tmp_path):
    status, out, log = _render(tmp_path, "frozen", GROUND, BOX, CAM, frames="6-7", simulate=False,
                               products={"ids", "flow"})
    assert status == 0, log
    assert not any("simulating" in line for line in log)
    flow = np.load(out / "World.Cam/flow_forward_00006.npy")
    assert np.nanmax(np.abs(flow)) < 1e-9  # a reprojection through the same pose: rounding only
    assert np.array_equal(np.load(out / "World.Cam/instance_00006.npy"), np.load(out / "World.Cam/instance_00007.npy"))


BIG = "camera /World/Big -4 0 0.5 1 0 0 0 60 0.05 100 1280 960 rgb true"
DOT = _object("/World/Dot", "box", (0.0, 0.5, 0.8), scale=(0.1, 0.1, 0.1))  # static: nothing to simulate


def _projection(k):
    """Pixel (u, v) of the dot's centre: camera at (-4, 0, 0.5) looking along +x (OpenCV x = -world y,
    y = -world z, z = world x)."""
    x, y, z = -0.5, -(0.8 - 0.5), 4.0
    return np.array([k[0, 0] * x / z + k[0, 2], k[1, 1] * y / z + k[1, 2]])


def _centroid(mask):
    v, u = np.nonzero(mask)
    return np.array([u.mean() + 0.5, v.mean() + 0.5])


def test_resolution_and_scale_put_k_on_the_pixel_grid(tmp_path):
    f = 480.0 / math.tan(math.radians(30.0))
    full = np.array([[f, 0, 640.0], [0, f, 480.0], [0, 0, 1]])  # the record's K at 1280 x 960
    ks, masks = {}, {}
    for name, options in (("quarter", {"resolution": (320, 240)}), ("half", {"scale": 50})):
        status, out, log = _render(tmp_path, name, DOT, BIG, frames="1", products={"ids"}, **options)
        assert status == 0, log
        manifest = _manifest(out)
        sensor = manifest["sensors"]["/World/Big"]
        ks[name] = np.array(sensor["intrinsics"]["K"])
        assert tuple(sensor["resolution"]) == {"quarter": (320, 240), "half": (640, 480)}[name]
        assert sensor["properties"]["native_resolution"] == [1280, 960]
        instance = np.load(out / "World.Big/instance_00001.npy")
        assert instance.shape == {"quarter": (240, 320), "half": (480, 640)}[name]
        masks[name] = instance == _instance_id(manifest, "/World/Dot")
    np.testing.assert_allclose(ks["quarter"], full * [[0.25], [0.25], [1]], rtol=1e-12)
    assert np.array_equal(ks["half"] * [[0.5], [0.5], [1]], ks["quarter"])  # exact: powers of two
    for name, scale in (("quarter", 0.25), ("half", 0.5)):
        uv = _projection(ks[name])
        np.testing.assert_allclose(uv, _projection(full) * scale, rtol=1e-12)
        assert masks[name][int(uv[1]), int(uv[0])]  # the pixel the centre projects into sees the dot
        assert np.abs(_centroid(masks[name]) - uv).max() < 0.5


def test_panel_honours_blenders_resolution_percentage_and_writes_previews(tmp_path):
    scene = import_scene(tmp_path, DOT, "camera /World/Cam -4 0 0.5 1 0 0 0 60 0.05 100 128 96 rgb true")
    scene.render.resolution_percentage = 25
    settings = scene.rscene_render
    settings.output_dir = str(tmp_path / "op")
    settings.use_scene_range = False
    settings.frame_start = settings.frame_end = 1
    settings.products = {"depth", "segmentation"}
    assert bpy.ops.rscene.render_sensors() == {"FINISHED"}
    manifest = _manifest(tmp_path / "op")
    sensor = manifest["sensors"]["/World/Cam"]
    f = 48.0 / math.tan(math.radians(30.0))
    assert tuple(sensor["resolution"]) == (32, 24)
    np.testing.assert_allclose(sensor["intrinsics"]["K"], [[f / 4, 0, 16], [0, f / 4, 12], [0, 0, 1]], rtol=1e-12)
    assert np.load(tmp_path / "op/World.Cam/depth_00001.npy").shape == (24, 32)
    assert (tmp_path / "op/World.Cam/depth_preview_00001.png").exists()  # previews are on in the panel
    assert scene.render.resolution_percentage == 25  # the run restores what it changed


def test_a_product_no_sensor_makes_is_an_error_with_status_1(tmp_path):
    eye = "sensor /World/Eye rgb - -4 0 0.5 1 0 0 0 width=32 height=24"
    from rscene_addon.products.annotations import with_needed_products
    from rscene_addon.products.plan import parse_products
    wanted = with_needed_products(parse_products("rgb,depth,ids,coco,bop"))
    status, out, log = _render(tmp_path, "dropped", DOT, eye, frames="1", products=wanted)
    assert status == 1
    text = "\n".join(log)
    for name in ("depth", "segmentation", "coco", "bop"):
        assert name + " (" in text, text
    assert "rgb (" not in text and "/World/Eye (rgb): rgb" in text
    assert not (out / "manifest.json").exists()  # refused before anything was rendered
    # what it can make still renders
    status, out, log = _render(tmp_path, "kept", DOT, eye, frames="1", products={"rgb"})
    assert status == 0 and (out / "World.Eye/rgb_00001.png").exists(), log


def test_cancel_during_the_simulation_stops_before_any_frame(tmp_path):
    from rscene_addon.products.request import RenderRequest
    from rscene_addon.render import run
    request = RenderRequest(write_scene(tmp_path, GROUND, BOX, CAM, name="c.rscene"), str(tmp_path / "out"), "6-7",
                            options=RenderOptions(products={"ids"}), backend="numpy")
    result = run(request, cancel=lambda: True)
    assert result.cancelled and result.manifest is None and not result.files
