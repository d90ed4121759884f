"""Output naming and the JSON manifest."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote_to_bytes

import numpy as np
import pytest

from rscene_addon.base.spatial import camera_to_world
from rscene_addon.sensors.intrinsics import CameraIntrinsics
from rscene_addon.sensors.manifest import Manifest, output_path, safe_sensor_name


def decode(folder: str) -> str:
    """Independent inverse of the documented encoding: '.' -> '/', '%XX' -> byte, rooted."""
    return "/" + unquote_to_bytes(folder.replace(".", "/")).decode("utf-8")


TRICKY = [
    "/World/Cam",
    "/World.Cam",
    "/World_Cam",
    "/World/Cam.",
    "/World%2ECam",
    "/World%2FCam",
    "/World/Cam%",
    "/Wörld/Cäm 1",
    "/World/Robots/Cassie/Head/RgbCam",
    "/..",
    "/.hidden",
    "/a/b/c",
    "/a.b/c",
    "/a/b.c",
    "sensor_head_rgb",
    "/World/Cam:left",
    "/World/Cam\\x",
]


def test_examples():
    assert safe_sensor_name("/World/Cam") == "World.Cam"
    assert safe_sensor_name("/World/Robots/Cassie/Head/RgbCam") == "World.Robots.Cassie.Head.RgbCam"
    assert safe_sensor_name("sensor_head_rgb") == "sensor_head_rgb"
    assert safe_sensor_name("/World/Cam.") == "World.Cam%2E"
    assert safe_sensor_name("World/Cam") == safe_sensor_name("/World/Cam")  # documented: rooted


def test_safe_names_are_safe_and_collision_free():
    folders = [safe_sensor_name(n) for n in TRICKY]
    assert len(set(folders)) == len(TRICKY)
    for name, folder in zip(TRICKY, folders):
        assert re.fullmatch(r"[A-Za-z0-9_.%-]+", folder), folder
        assert not folder.startswith(".") and folder not in (".", "..")
        assert decode(folder) == (name if name.startswith("/") else "/" + name)


@pytest.mark.parametrize("bad", ["", "/", "//x", "/a//b", "/a/", "a/"])
def test_bad_names_rejected(bad):
    with pytest.raises(ValueError):
        safe_sensor_name(bad)


def test_output_path():
    assert output_path("/World/Cam", "rgb", 7, "png") == "World.Cam/rgb_00007.png"
    assert output_path("/World/Cam", "depth", 123456, "npy") == "World.Cam/depth_123456.npy"
    for layer, ext in [("rg/b", "png"), ("", "png"), ("rgb", ".png"), ("rgb", "p/ng"), ("a.b", "png")]:
        with pytest.raises(ValueError):
            output_path("/World/Cam", layer, 1, ext)
    with pytest.raises(ValueError):
        output_path("/World/Cam", "rgb", 1.5, "png")


def build(order):
    cam = CameraIntrinsics(640, 480, 500, 510, 320.5, 240.25)
    m = Manifest(metadata={"scene": "warehouse.rscene", "frames": "1-2"})
    steps = {
        "cam": lambda: m.add_sensor("/World/Cam", "rgb", cam, 0.05, 80, properties={"updateRate": 30}),
        "imu": lambda: m.add_sensor("/World/Imu", "imu", properties={"updateRate": 200}),
        "f2": lambda: m.add_frame("/World/Cam", 2, camera_to_world([1, 2, 3], [1, 0, 0, 0]), time=1 / 30),
        "f1": lambda: m.add_frame("/World/Cam", 1, camera_to_world([0, 0, 1], [1, 0, 0, 0]), time=0.0),
        "o1": lambda: m.add_output("/World/Cam", 1, "rgb", "png", (480, 640, 3), np.uint8, "1"),
        "o2": lambda: m.add_output("/World/Cam", 1, "depth", "npy", (480, 640), np.float32, "m"),
        "o3": lambda: m.add_output("/World/Cam", 2, "rgb", "png", (480, 640, 3), "uint8", "1"),
        "o4": lambda: m.add_output("/World/Imu", 1, "imu", "csv", (200, 7), np.float64, "s, m/s^2, rad/s"),
    }
    for key in order:
        steps[key]()
    return m


ORDER = ["cam", "imu", "f1", "f2", "o1", "o2", "o3", "o4"]
SHUFFLED = ["imu", "cam", "o3", "f2", "o2", "o4", "o1", "f1"]


def test_json_is_deterministic_and_sorted():
    a, b = build(ORDER).to_json(), build(SHUFFLED).to_json()
    assert a == b
    parsed = json.loads(a)
    assert json.dumps(parsed, sort_keys=True, indent=2) + "\n" == a


def test_manifest_content():
    doc = json.loads(build(ORDER).to_json())
    cam = doc["sensors"]["/World/Cam"]
    assert cam["folder"] == "World.Cam" and cam["kind"] == "rgb" and cam["resolution"] == [640, 480]
    assert cam["intrinsics"]["K"] == [[500, 0, 320.5], [0, 510, 240.25], [0, 0, 1]]
    assert cam["near"] == 0.05 and cam["far"] == 80
    proj = np.array(cam["opengl_projection"])
    assert proj.shape == (4, 4) and proj[0, 0] == pytest.approx(2 * 500 / 640) and proj[3, 2] == -1
    assert [f["frame"] for f in cam["frames"]] == [1, 2]
    f1 = cam["frames"][0]
    assert [o["layer"] for o in f1["outputs"]] == ["depth", "rgb"]
    depth = f1["outputs"][0]
    assert depth == {"layer": "depth", "path": "World.Cam/depth_00001.npy", "shape": [480, 640],
                     "dtype": "float32", "units": "m"}
    # Identity RaiSim pose: optical axis (OpenCV +z) is world +x; OpenGL looks down its -z.
    cv, gl = np.array(f1["camera_to_world_opencv"]), np.array(f1["camera_to_world_opengl"])
    np.testing.assert_allclose(cv[:3, 2], [1, 0, 0])
    np.testing.assert_allclose(-gl[:3, 2], [1, 0, 0])
    np.testing.assert_allclose(gl[:3, 1], [0, 0, 1])  # OpenGL up is world up
    np.testing.assert_allclose(cv[:3, 3], [0, 0, 1])
    assert cam["frames"][1]["time"] == pytest.approx(1 / 30)
    imu = doc["sensors"]["/World/Imu"]
    assert "intrinsics" not in imu and imu["frames"][0]["outputs"][0]["path"] == "World.Imu/imu_00001.csv"
    assert doc["format"] == "rscene_addon.sensor_manifest" and doc["version"] == 1
    assert doc["metadata"]["scene"] == "warehouse.rscene"


def test_structured_dtype_and_infinite_far():
    m = Manifest()
    m.add_sensor("/L", "depth", CameraIntrinsics(4, 3, 2, 2, 2, 1.5), near=0.1, far=float("inf"))
    m.add_output("/L", 0, "points", "ply", (10,), np.dtype([("x", "<f4"), ("ring", "<u2")]), "m")
    doc = json.loads(m.to_json())
    assert doc["sensors"]["/L"]["far"] is None
    assert doc["sensors"]["/L"]["frames"][0]["outputs"][0]["dtype"] == [["x", "float32"], ["ring", "uint16"]]


def test_errors():
    m = build(ORDER)
    with pytest.raises(ValueError):
        m.add_sensor("/World/Cam", "rgb")
    with pytest.raises(ValueError, match="case"):
        m.add_sensor("/world/cam", "rgb")
    with pytest.raises(ValueError):
        m.add_output("/World/Cam", 1, "rgb", "png", (1,), np.uint8, "1")
    with pytest.raises(KeyError):
        m.add_frame("/World/Nope", 1)
    with pytest.raises(ValueError):
        m.add_frame("/World/Cam", 3, np.eye(3))
    m.metadata["bad"] = float("nan")
    with pytest.raises(ValueError, match="metadata.bad"):
        m.to_json()


def test_write_is_atomic_file(tmp_path):
    m = build(ORDER)
    m.write(tmp_path / "out" / "manifest.json")
    assert (tmp_path / "out" / "manifest.json").read_text() == m.to_json()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["manifest.json"]


def test_orthographic_sensor_has_p_and_no_k():
    from rscene_addon.sensors.intrinsics import OrthographicIntrinsics
    m = Manifest()
    m.add_sensor("/World/Top", "camera", OrthographicIntrinsics(64, 48, 4.0), 0.05, 100.0)
    m.add_sensor("/World/TopInf", "camera", OrthographicIntrinsics(64, 48, 4.0), 0.05, None)
    doc = json.loads(m.to_json())
    cam = doc["sensors"]["/World/Top"]
    assert cam["projection"] == "orthographic" and cam["intrinsics"] is None and cam["resolution"] == [64, 48]
    ortho = cam["orthographic"]
    assert ortho["P"] == [[16.0, 0, 0, 32.0], [0, 16.0, 0, 24.0], [0, 0, 0, 1]]
    assert (ortho["scale"], ortho["pixel_size"], ortho["view_size"]) == (4.0, 0.0625, [4.0, 3.0])
    assert np.array(cam["opengl_projection"])[3].tolist() == [0, 0, 0, 1]  # affine: no perspective divide
    assert "opengl_projection" not in doc["sensors"]["/World/TopInf"]  # glOrtho needs a finite far plane
    assert "orthographic" in doc["conventions"]
