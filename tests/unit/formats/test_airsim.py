"""Project AirSim scene configs: the 61 real scenes, NED and geodesy, segmentation ids, errors, round trips."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rscene_addon.formats import airsim, jsonc, rscene
from rscene_addon.base import spatial as tf
from rscene_addon.model import FormatError

SIM_CONFIG = "airsim/iamaisim-ProjectAirSim/client/python/example_user_scripts/sim_config"


def scene_files(corpus):
    files = sorted((corpus / SIM_CONFIG).glob("scene_*.jsonc"))
    assert len(files) == 61
    return files


def test_segmentation_ids_of_the_documented_log():
    # config_scene.md: "[InitSegmentationID] seg_id: 95, seg_name: 'cylinder8'" and the others
    for name, expected in [("cylinder8", 95), ("cylinder_2", 95), ("ground", 148), ("templatecube_48", 0),
                           ("templatecube_rounded_1", 241)]:
        assert airsim.segmentation_id(name) == expected


def test_all_scenes_load_check_and_round_trip(corpus):
    for path in scene_files(corpus):
        scene = airsim.read(str(path))
        data = jsonc.load(str(path))
        actors = len(data.get("actors", [])) + len(data.get("environment-actors", []))
        env_objects = len(data.get("environment-objects", []))
        assert len(scene.of("compound", "object")) == actors + env_objects, path.name
        errors, _ = rscene.check(rscene.loads(rscene.dumps(scene), lazy=True))
        assert errors == [], path.name
        text, warnings = airsim.dumps(scene, str(path))
        again = airsim.loads(text, str(path))
        assert rscene.dumps(again) == rscene.dumps(scene), path.name
        written = json.loads(text)
        for key in ("id", "scene-type", "tiles-dir", "home-geo-point", "segmentation"):
            assert written.get(key) == data.get(key), (path.name, key)
        assert [a["name"] for a in written["actors"]] == [a["name"] for a in data["actors"]]


def test_missing_robot_config_is_a_warning(corpus):
    scene = airsim.read(str(corpus / SIM_CONFIG / "scene_quadrotor_ardupilot.jsonc"))
    assert any("config file not found" in d.message for d in scene.warnings)
    actor = scene.of("object")[0]
    assert actor.get("airsimPlaceholder") == "true"


def test_basic_drone_by_hand(corpus):
    scene = airsim.read(str(corpus / SIM_CONFIG / "scene_basic_drone.jsonc"))
    assert scene.time_step == pytest.approx(0.003)  # step-ns 3000000
    drone = scene.by_path("/World/Drone1")
    assert drone.tag == "compound" and drone.get("bodyMode") == "kinematic"
    assert drone.get("position") == (0.0, 0.0, 4.0)  # xyz "0.0 0.0 -4.0" NED: 4 m up
    # rpy-deg "0 0 -45": yaw -45 deg in NED (towards north-west); the scene's +y is west
    forward = tf.record_rotate(drone.get("quaternion"), (1, 0, 0))
    assert np.allclose(forward, (math.sqrt(0.5), math.sqrt(0.5), 0))
    assert drone.get("mass") == pytest.approx(1.0 + 4 * 0.055)
    assert drone.get("instanceId") == (5 + sum(map(ord, "drone"))) % 256 == 29
    parts = {c.get("airsimLink"): c for c in scene.of("compound_child")}
    assert parts["Frame"].get("size") == pytest.approx((0.18, 0.11, 0.04))
    assert parts["Prop_FL"].get("position") == pytest.approx((0.253, 0.253, 0.01))  # NED 0.253 -0.253 -0.01
    assert (parts["Prop_FL"].get("radius"), parts["Prop_FL"].get("height")) == (0.1143, 0.01)
    sensors = {s.path.rsplit("/", 1)[1]: s for s in scene.of("sensor")}
    chase = sensors["Chase"]
    assert chase.get("parent") == drone.id and chase.get("position") == pytest.approx((-10.0, 0.0, 1.0))
    assert (chase.get("kind"), chase.get("width"), chase.get("height"), chase.get("horizontalFov")) == ("rgb", 1280, 720, 90.0)
    # pitch -11.46 deg in NED tips the camera's nose down
    assert tf.record_rotate(chase.get("quaternion"), (1, 0, 0))[2] == pytest.approx(-math.sin(math.radians(11.46)))
    down = sensors["DownCamera"]
    assert np.allclose(tf.record_rotate(down.get("quaternion"), (1, 0, 0)), (0, 0, -1), atol=1e-12)
    assert down.get("airsimImageTypes") == "0,2"
    assert sensors["GPS"].get("enabled") is False
    world = scene.by_path("/World")
    assert world.get("airsimHomeGeoPoint") == "47.641468,-122.140165,122"
    assert world.get("airsim.scene-type") == "UnrealNative"


def test_geo_point_origin(corpus):
    scene = airsim.read(str(corpus / SIM_CONFIG / "scene_hello_gis.jsonc"))
    drone = scene.by_path("/World/Drone1")
    lat0, lat, dlon = 47.641468, 47.641586, -122.14108 + 122.140165
    north = math.radians(lat - lat0) * 6367000.0  # rough meridian radius at 47.6 deg
    west = -math.radians(dlon) * 6389000.0 * math.cos(math.radians(lat0))
    x, y, z = drone.get("position")
    assert x == pytest.approx(north, abs=0.2) and y == pytest.approx(west, abs=0.2)
    assert z == pytest.approx(106.0 - 122.0, abs=0.01)
    assert drone.get("airsimGeoPoint") == "47.641586,-122.14108,106"
    text, _ = airsim.dumps(scene)
    assert json.loads(text)["actors"][0]["origin"]["geo-point"] == "47.641586 -122.14108 106"
    drone.set("position", (1.0, 2.0, 3.0))  # moved: written as xyz in NED
    origin = json.loads(airsim.dumps(scene)[0])["actors"][0]["origin"]
    assert origin["xyz"] == "1 -2 -3" and "geo-point" not in origin


def test_env_actors_and_objects(corpus):
    scene = airsim.read(str(corpus / SIM_CONFIG / "scene_env_actor_car_new_example.jsonc"))
    car = scene.by_path("/World/car2")
    assert car.get("airsimType") == "env_car"
    assert car.get("airsimConfig") == "env_actor_car_vehicle03_car.jsonc;env_actor_car_color_dark_black.jsonc"
    assert car.get("bodyMode") == "visual_only"
    fire = airsim.read(str(corpus / SIM_CONFIG / "scene_env_objects_fire_and_smoke.jsonc"))
    effects = [r for r in fire.of("object") if r.get("airsimSection") == "environment-objects"]
    assert effects and all(r.get("airsimVisualMesh") for r in effects)


@pytest.mark.parametrize(("text", "line", "words"), [
    ('{\n  "actors": [\n    {"type": "robot", "name": "a",\n     "origin": {"xyz": "1 2"}}\n  ]\n}', 4, "3 numbers"),
    ('{\n  "actors": [\n    {"type": "robot", "name": "a",,}\n  ]\n}', 3, "JSON syntax"),
    ('{\n  "id": "x",\n  "clock": {\n "step-ns": -5}, "actors": []\n}', 3, "step-ns"),
    ('{\n  "robots": []\n}', 1, "no 'actors'"),
    ('{\n "actors": [\n  {"name": "a", "robot-config": 5}\n ]\n}', 3, "robot-config"),
])
def test_errors_name_the_line(tmp_path, text, line, words):
    path = tmp_path / "bad.jsonc"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        airsim.read(str(path))
    assert info.value.first.line == line and words in info.value.first.message, str(info.value)


def test_writer_reports_what_it_cannot_hold(corpus, tmp_path):
    scene = rscene.read(str(corpus / "rscene/docs-examples/RsceneFile_example.rscene"))
    text, warnings = airsim.dumps(scene, str(tmp_path / "x.jsonc"))
    data = json.loads(text)
    assert data["actors"] == []
    assert data["clock"]["step-ns"] == 1000000
    joined = "\n".join(warnings)
    for tag in ("object", "light", "camera", "terrain_region"):
        assert tag in joined


def test_config_references_follow_the_file(corpus, tmp_path):
    scene = airsim.read(str(corpus / SIM_CONFIG / "scene_basic_drone.jsonc"))
    out = tmp_path / "elsewhere" / "scene.jsonc"
    out.parent.mkdir()
    airsim.write(scene, str(out))
    ref = json.loads(out.read_text())["actors"][0]["robot-config"]
    assert (out.parent / ref).resolve() == (corpus / SIM_CONFIG / "robot_quadrotor_fastphysics.jsonc").resolve()
    again = airsim.read(str(out))
    assert len(again.of("sensor")) == len(scene.of("sensor"))


def test_inline_scene_rpy_radians_and_merged_configs(tmp_path):
    (tmp_path / "body.jsonc").write_text("""{
      "links": [
        {"name": "Base", "inertial": {"mass": 2.0, "inertia": {"type": "geometry", "geometry": {"box": {"size": "1 2 3"}}}}},
        {"name": "Arm", "visual": {"geometry": {"type": "unreal_mesh", "name": "/Engine/BasicShapes/Cube", "scale": "0.5 0.5 0.5"}}}
      ],
      "joints": [{"id": "j", "type": "fixed", "parent-link": "Base", "child-link": "Arm",
                  "origin": {"xyz": "1 0 -2", "rpy-deg": "0 0 0"}}],
    }""")
    (tmp_path / "paint.jsonc").write_text('{"links": [{"name": "Arm", "visual": {"material": {"colored-texture": "red"}}}]}')
    (tmp_path / "scene.jsonc").write_text("""{
      "id": "Inline",
      "actors": [],
      "environment-actors": [
        {"type": "env_actor", "name": "thing", "origin": {"xyz": "1 2 -3", "rpy": "0 0 1.5707963267948966"},
         "env-actor-config": ["body.jsonc", "paint.jsonc"]}
      ],
      "clock": {"step-ns": 10000000},
      "segmentation": {"initialize-ids": false}
    }""")
    scene = airsim.read(str(tmp_path / "scene.jsonc"))
    assert scene.time_step == pytest.approx(0.01)
    thing = scene.by_path("/World/thing")
    assert thing.get("position") == (1.0, -2.0, 3.0)
    assert np.allclose(tf.record_rotate(thing.get("quaternion"), (1, 0, 0)), (0, -1, 0))  # yaw +90 deg in NED
    assert thing.get("mass") == 2.0 and not thing.has("instanceId")
    parts = {p.get("airsimLink"): p for p in scene.of("compound_child")}
    assert parts["Base"].get("size") == (1.0, 2.0, 3.0)
    assert parts["Arm"].get("size") == (0.5, 0.5, 0.5) and parts["Arm"].get("position") == (1.0, 0.0, 2.0)
