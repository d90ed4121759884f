"""Real scene files (shared corpus) read and are written back byte for byte; typed values match the docs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.model import new_record
from tests.corpus import in_ci, missing_message

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "rscene"  # beside the checkout
FILES = sorted(CORPUS.rglob("*.rscene")) if CORPUS.exists() else []
FRAGMENTS = sorted(CORPUS.rglob("*.rscene-fragment")) if CORPUS.exists() else []
EXAMPLE = CORPUS / "docs-examples/RsceneFile_example.rscene"
FOREST_TAIL = CORPUS / "jhwangbo-raisim2Lib/rayrai_forest.EXCERPT-tail.rscene-fragment"
BLUE_WALL = CORPUS / "jhwangbo-raisim2Lib/blue_wall.rscene"

pytestmark = pytest.mark.skipif(not FILES and not in_ci(), reason=missing_message("rscene"))  # CI: fails


def _id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def corpus_text(path: Path) -> str:
    """A file's text; a tail fragment gets a header line (it is the end of a longer file)."""
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    return text if path.suffix == ".rscene" else "raisim_engine_scene 2\n" + text


ALL = FILES + FRAGMENTS


def test_corpus_found():
    assert len(FILES) >= 5 and len(FRAGMENTS) >= 3


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_round_trip(path):
    text = corpus_text(path)
    scene = rscene.loads(text, str(path))
    assert not scene.warnings
    assert rscene.dumps(scene) == text
    lazy = rscene.loads(text, str(path), lazy=True)
    assert rscene.dumps(lazy) == text


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_read_and_write_files(path, tmp_path):
    scene = rscene.read(str(path))
    out = tmp_path / path.name
    rscene.write(scene, str(out))
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_round_trip_crlf(path):
    text = corpus_text(path).replace("\n", "\r\n")
    scene = rscene.loads(text)
    assert scene.crlf
    assert rscene.dumps(scene) == text


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_round_trip_with_comment_and_blank_lines_before_the_header(path):
    original = rscene.loads(corpus_text(path))
    text = "# written by hand\n\n   \n\t\n" + corpus_text(path)
    scene = rscene.loads(text)
    assert rscene.dumps(scene) == text
    assert scene.records[0].tag == "raisim_engine_scene"
    assert [r.line for r in scene.records] == [r.line + 4 for r in original.records]


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_no_final_newline(path):
    text = corpus_text(path).rstrip("\n")
    assert rscene.dumps(rscene.loads(text)) == text


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_every_key_but_ignored_material_settings_is_declared(path):
    """Apart from the hundred-odd PBR material settings both readers ignore, the corpus uses only
    declared keys and positional fields (so every value it holds is typed)."""
    scene = rscene.loads(corpus_text(path))
    for record in scene.records:
        assert record.schema is not None
        assert not record.extra_positional, record
        if record.tag != "material":
            assert not record.unknown_keys, (record, record.unknown_keys)


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_canonical_line_reads_back_the_same_values(path):
    """Writing every record canonically (as if edited) keeps every typed value."""
    scene = rscene.loads(corpus_text(path))
    for record in scene.records:
        again = rscene.loads("raisim_engine_scene 2\n" + record.canonical() + "\n", lazy=True).records[-1] \
            if record.tag != "raisim_engine_scene" else None
        if again is None:
            continue
        assert again.raw_keys.keys() >= record.raw_keys.keys()
        for name in [f.name for f in record.layout] + list(record.raw_keys):
            a, b = record.get(name), again.get(name)
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b), (record, name)
            else:
                assert a == b, (record, name)


# ---------------------------------------------------------------------------------------------------------
# Typed access, against what the newer document says about its example file


@pytest.fixture(scope="module")
def example():
    return rscene.read(str(EXAMPLE))


def test_example_header_and_settings(example):
    assert example.version == 2
    assert example.time_step == 0.001
    assert example.gravity == (0.0, 0.0, -9.81)
    solver = example.setting("solver")
    # the raisim::World values, stored explicitly
    assert (solver.get("iterations"), solver.get("tolerance"), solver.get("erp"), solver.get("mode")) == \
        (150, 1e-8, 1.5, "accurate")
    assert solver.get("erp2") == 0.002
    assert solver.get("defaultRestitutionThreshold") == 0.01
    assert solver.get("defaultStaticFrictionVelocityThreshold") == 1.0
    assert solver.get("fixedContactSolverIterationOrder") is True
    # Engine 2 defaults, so #0 and #1 apply
    assert solver.get("contactMaxIterations") == 80 and solver.get("contactThreshold") == 1e-7
    assert solver.get("contactEpaTolerance") == 1e-4
    assert solver.get("broadphaseCellSize") == (1.0, 1.0, 1.0)
    assert example.setting("asset_root").get("root") == "."
    render = example.setting("rayrai_render")
    assert render.get("preset") == "balanced" and render.get("custom") is False
    env = example.setting("environment")
    assert env.get("background") == (0.6, 0.7, 0.85) and env.get("ambient") == (0.3, 0.3, 0.3)
    assert env.get("shadows") is True and env.get("environmentMap") == ""
    assert env.get("colorMode") == "aces_approx" and env.get("shadowedLightBudget") == 2
    assert env.get("fogColor") == (0.6, 0.7, 0.85, 1.0)
    # absent records take Engine 2's defaults
    assert example.setting("weather").get("timeOfDay") == 13.0
    assert example.setting("scene_graph").get("inheritedTransforms") is True


def test_example_camera(example):
    camera = example.by_path("/World/Camera")
    assert camera.tag == "camera"
    assert camera.get("verticalFov") == 55
    assert camera.get("position") == (-4.0, 0.0, 1.5)
    assert camera.get("quaternion") == (0.991445, 0.0, 0.130526, 0.0)  # 15 degrees about +y
    assert (camera.get("near"), camera.get("far")) == (0.05, 100.0)
    assert (camera.get("width"), camera.get("height")) == (1280, 800)
    assert camera.get("renderMode") == "rgb" and camera.get("enabled") is True
    assert camera.get("projection") == "perspective" and camera.get("horizontalFov") == 0
    assert camera.get("parentGroupId") == ""
    assert camera.id == "camera_/World/Camera"


def test_example_objects(example):
    crate, ball = example.of("object")
    assert crate.path == "/World/Crate" and crate.id == "object_/World/Crate"
    assert crate.get("primitive") == "box" and crate.get("scale") == (0.5, 0.5, 0.5)
    assert crate.get("mass") == 2.0 and crate.get("bodyMode") == "dynamic"
    assert crate.get("material") == "crate" and crate.get("contactMaterial") == "default"
    assert crate.get("collidable") is True and crate.get("collisionGroup") == 1
    assert crate.get("collisionMask") == 18446744073709551615
    assert crate.get("materialRemaps") == ()
    assert crate.mass == 2.0 and crate.bodyMode == "dynamic"  # typed properties
    assert ball.get("primitive") == "sphere" and ball.get("radius") == 0.15 and ball.get("mass") == 0.5
    assert ball.get("material") == ""  # '-': empty, which means the default material
    assert example.find("object_/World/Ball") is ball and example.find("/World/Ball") is ball


def test_example_material_light_and_terrain(example):
    (crate,) = example.of("material")
    assert crate.get("color") == (0.8, 0.5, 0.2, 1.0) and crate.get("roughness") == 0.6
    assert crate.get("doubleSided") is False and crate.get("emissive") == (0.0, 0.0, 0.0)  # 7-field layout
    (sun,) = example.of("light")
    assert sun.get("direction") == (-0.4, 0.3, -0.85) and sun.get("intensity") == 3.0
    assert sun.get("type") == "directional" and sun.get("color") == (1.0, 0.95, 0.85, 1.0)
    assert sun.get("attenuationLinear") == 0.04  # absent: default
    (texture,) = example.of("terrain_texture")
    assert (texture.get("slot"), texture.id, texture.get("name")) == (0, "grass", "Grass")
    assert texture.get("color") == (0.3, 0.45, 0.2, 1.0)
    (terrain,) = example.of("terrain_region")
    assert terrain.id == "terrain_/World/Terrain"
    xs, ys = terrain.get("xSamples"), terrain.get("ySamples")
    heights = terrain.get("heights")
    assert (xs, ys) == (3, 3) and len(heights) == 9 and heights.dtype == np.float64
    grid = heights.reshape(ys, xs)  # heights[y * xSamples + x] is grid[y, x]
    assert grid[0, 0] == grid[2, 2] == 0.3 and grid[1, 1] == 0.0
    # "The terrain's empty material takes the default id engine_default": an empty key takes the default
    assert terrain.get("material") == "engine_default" and terrain.raw("material") == "-"
    assert terrain.get("texturePrimary").shape == (0,)


def test_height_map_sample_order():
    """heights[y * xSamples + x] is the sample at grid index (x, y): rows of constant y."""
    scene = rscene.loads("raisim_engine_scene 2\n"
                         "terrain_region /World/T 3 2 4 2 0 0 0 heights=0,1,2,10,11,12\n")
    terrain = scene.records[1]
    xs = terrain.get("xSamples")
    heights = terrain.get("heights")
    for y in range(2):
        for x in range(3):
            assert heights[y * xs + x] == 10 * y + x
    assert heights.reshape(terrain.get("ySamples"), xs)[1, 2] == 12


def test_forest_tail_instances():
    scene = rscene.loads(corpus_text(FOREST_TAIL))
    (batch,) = scene.of("instanced_visual")
    assert batch.id == "forest_batch_rock_moss_5" and batch.get("primitive") == "mesh"
    assert batch.get("meshPath") == "rock_moss_5/model.rasset"
    instances = batch.get("instances")
    assert instances.shape == (30, 10) and instances.dtype == np.float64
    quats = instances[:, 3:7]
    assert np.allclose(np.linalg.norm(quats, axis=1), 1.0, atol=1e-3)
    assert batch.get("colorWeights").shape == (0,)
    assert batch.get("shadowFoliageLodMaxStride") == 16 and batch.get("enabled") is True


def test_blue_wall_version_1():
    scene = rscene.read(str(BLUE_WALL))
    assert scene.version == 1 and not scene.warnings
    env = scene.setting("environment")
    assert env.get("environmentMap") == "hamburg_canal_1k.hdr" and env.get("backgroundMode") == "hdr"
    (wall,) = scene.of("object")
    assert wall.get("bodyMode") == "visual_only" and wall.get("collidable") is False
    assert wall.id == "blue_wall" and wall.get("renderMeshPath") == "blue_wall.gltf"
    lights = scene.of("light")
    assert {light.get("type") for light in lights} == {"point", "spot", "area"}
    area = lights[-1]
    assert area.get("areaSize") == (1.3200000524520874, 2.201000213623047, 0.0)


def test_new_records_in_a_corpus_scene_keep_the_rest(example):
    text = EXAMPLE.read_text(encoding="utf-8")
    scene = rscene.loads(text)
    scene.add(new_record("group", path="/World/Props"))
    out = rscene.dumps(scene)
    assert out.count("\n") == text.count("\n") + 1
    assert out.replace("group /World/Props\n", "") == text
