"""Conversions between formats keep what both formats hold (and say what they drop)."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import airsim, coppelia_xml, raisim_xml, registry, rscene
from rscene_addon.base import spatial as tf

RSC = "raisim_xml/raisimTech-raisim2Lib/rsc"
SIM_CONFIG = "airsim/iamaisim-ProjectAirSim/client/python/example_user_scripts/sim_config"


def body_summary(record):
    """What every physics format holds of a primitive body: shape in metres, pose, mass, mode."""
    primitive = record.get("primitive")
    sx, sy, sz = record.get("scale")
    if primitive == "box":
        size = (sx, sy, sz)
    elif primitive == "sphere":
        size = (record.get("radius") * sx,)
    else:
        size = (record.get("radius") * sx, record.get("height") * sz)
    return primitive, size, record.get("position"), record.get("quaternion"), record.get("mass"), record.get("bodyMode")


def assert_bodies_match(a, b, paths):
    for path in paths:
        pa, pb = body_summary(a.by_path(path)), body_summary(b.by_path(path))
        assert pa[0] == pb[0] and np.allclose(pa[1], pb[1]) and np.allclose(pa[2], pb[2]), (path, pa, pb)
        assert tf.same_rotation(pa[3], pb[3], 1e-9), path
        assert pa[4] == pytest.approx(pb[4]) and pa[5] == pb[5], (path, pa, pb)


def test_raisim_xml_to_coppelia_and_back(corpus, tmp_path):
    src = str(corpus / RSC / "xmlScripts/wire/newtonsCradle.xml")
    scene = raisim_xml.read(src)
    out = tmp_path / "cradle.simscene.xml"
    warnings = registry.convert(src, str(out))
    joined = "\n".join(warnings)
    for tag in ("wire", "articulated", "contact_material", "solver"):
        assert tag in joined, tag
    back = coppelia_xml.read(str(out))
    spheres = [r.path for r in scene.of("object") if r.get("primitive") == "sphere"]
    assert len(spheres) == 11
    assert_bodies_match(scene, back, spheres + ["/World/box"])
    # colors survive as materials (appearance "1 0 0 0.3" -> ambientDiffuse 255 0 0; alpha is lost)
    pin = back.by_path("/World/pin1")
    color = [m for m in back.of("material") if m.get("name") == pin.get("material")][0].get("color")
    assert color[:3] == pytest.approx((1.0, 0.0, 0.0))
    # and back to RaiSim XML: the bodies are still the same
    again = tmp_path / "cradle.xml"
    registry.convert(str(out), str(again), to="raisim_xml")
    assert_bodies_match(scene, raisim_xml.read(str(again)), spheres + ["/World/box"])


def test_coppelia_to_raisim_xml(data_dir, tmp_path):
    src = str(data_dir / "bubblerob.simscene.xml")
    scene = coppelia_xml.read(src)
    out = tmp_path / "bubblerob.xml"
    warnings = registry.convert(src, str(out), to="raisim_xml")
    joined = "\n".join(warnings)
    assert "visual-only" in joined and "light" in joined and "sensor" in joined
    back = raisim_xml.read(str(out))
    bodies = ["/World/bubbleRob", "/World/obstacle", "/World/floor"]
    renamed = {"/World/bubbleRobLeftWheel": "/World/bubbleRob/bubbleRobLeftMotor/bubbleRobLeftWheel",
               "/World/bubbleRobCaster": "/World/bubbleRob/bubbleRobLink/bubbleRobCaster"}
    assert_bodies_match(scene, back, bodies)
    for flat, nested in renamed.items():  # RaiSim XML has no hierarchy: nested names become flat paths
        a, b = body_summary(scene.by_path(nested)), body_summary(back.by_path(flat))
        assert np.allclose(a[2], b[2]) and a[4] == pytest.approx(b[4])
    assert back.by_path("/World/bubbleRob").get("inertiaDiagonal") == scene.by_path("/World/bubbleRob").get("inertiaDiagonal")
    walls = back.by_path("/World/walls")
    assert walls.tag == "compound" and len(back.of("compound_child")) == 4
    for a, b in zip(scene.of("compound_child"), back.of("compound_child")):
        assert a.get("size") == b.get("size") and np.allclose(a.get("position"), b.get("position"))


def test_airsim_through_rscene_keeps_everything(corpus, tmp_path, scenes_match):
    src = corpus / SIM_CONFIG / "scene_two_drones_sensors.jsonc"
    mid = tmp_path / "scene.rscene"
    registry.convert(str(src), str(mid))
    out = tmp_path / "scene.jsonc"
    warnings = registry.convert(str(mid), str(out))
    assert warnings == []
    original, again = airsim.read(str(src)), airsim.read(str(out))
    scenes_match(original, again, 0.0, ignore_keys=("airsimConfig",))
    scenes_match(again, original, 0.0, ignore_keys=("airsimConfig",))
    for a, b in zip(original.of("compound"), again.of("compound")):  # the configs are the same files
        assert (src.parent / a.get("airsimConfig")).resolve() == (out.parent / b.get("airsimConfig")).resolve()


def test_airsim_robot_to_raisim_xml(corpus, tmp_path):
    src = corpus / SIM_CONFIG / "scene_basic_drone.jsonc"
    out = tmp_path / "drone.xml"
    warnings = registry.convert(str(src), str(out), to="raisim_xml")
    assert any("sensor" in w for w in warnings)
    scene, back = airsim.read(str(src)), raisim_xml.read(str(out))
    drone, copy = scene.by_path("/World/Drone1"), back.by_path("/World/Drone1")
    assert copy.tag == "compound" and copy.get("bodyMode") == "kinematic"
    assert np.allclose(copy.get("position"), drone.get("position"))
    assert tf.same_rotation(copy.get("quaternion"), drone.get("quaternion"), 1e-12)
    assert copy.get("mass") == pytest.approx(drone.get("mass"))
    sizes = [c.get("size") for c in back.of("compound_child") if c.get("primitive") == "box"]
    assert sizes == [pytest.approx((0.18, 0.11, 0.04))]
    assert back.time_step == pytest.approx(0.003)


def test_rscene_example_through_every_format(corpus, tmp_path):
    src = corpus / "rscene/docs-examples/RsceneFile_example.rscene"
    scene = rscene.read(str(src))
    for name in ("x.xml", "x.simscene.xml"):
        out = tmp_path / name
        registry.convert(str(src), str(out))
        back = registry.read_scene(str(out))
        assert_bodies_match(scene, back, ["/World/Crate", "/World/Ball"])
        assert np.array_equal(back.of("terrain_region")[0].get("heights"), scene.of("terrain_region")[0].get("heights"))
