"""The schema table: every record kind of both format documents, typed, with Engine 2's defaults."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.model import SCHEMA_BY_TAG, Scene, new_record
from rscene_addon.model.schema import REQUIRED, SECTION_ORDER, layout_size
from rscene_addon.model.schema_table import SCHEMAS

ALL_TAGS = (
    "raisim_engine_scene", "time_step", "gravity", "solver", "snapping", "asset_root", "scene_graph",
    "prefab_override", "editor_ux", "render_bake", "environment", "weather", "rayrai_render", "material",
    "contact_material", "terrain_texture", "asset", "articulated_resource", "group", "terrain_region",
    "terrain_splat_layer", "terrain_foliage_layer", "light", "camera", "object", "compound", "compound_child",
    "deformable", "granular", "articulated", "articulated_ik", "sensor", "wire", "reflection_probe",
    "local_fog", "projected_decal", "irradiance_volume", "point_cloud", "instanced_visual",
)
SINGLETONS = {"time_step", "gravity", "solver", "asset_root", "scene_graph", "environment", "weather",
              "rayrai_render"}


def test_every_tag_of_both_documents_has_a_schema():
    assert len(ALL_TAGS) == 39
    assert {s.tag for s in SCHEMAS} == set(ALL_TAGS)
    assert len(SCHEMAS) == 39  # one schema per tag
    assert [s.tag for s in SCHEMAS] == list(SECTION_ORDER)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.tag)
def test_schema_shape(schema):
    assert schema.doc and "\n" not in schema.doc
    sizes = [layout_size(layout) for layout in schema.layouts]
    assert sizes == sorted(sizes, reverse=True)
    assert schema.singleton == (schema.tag in SINGLETONS)
    names = schema.key_names
    assert len(set(names)) == len(names), "a key is declared twice"
    if schema.field("path") is not None:
        # nodes: id defaults to a prefix and the path (the foliage layer's foliage_<n> needs the scene)
        assert schema.id_prefix and schema.field("id") is not None
        record = new_record(schema.tag, **_required_values(schema))
        assert record.id == schema.id_prefix + record.path
        parent_key = "parentId" if schema.tag == "group" else "parentGroupId"
        assert schema.field(parent_key) is not None


def test_child_kinds_name_their_parent():
    assert SCHEMA_BY_TAG["terrain_splat_layer"].parent == ("terrain_region", "terrain")
    assert SCHEMA_BY_TAG["terrain_foliage_layer"].parent == ("terrain_region", "terrain")
    assert SCHEMA_BY_TAG["compound_child"].parent == ("compound", "compound")
    assert SCHEMA_BY_TAG["articulated_ik"].parent == ("articulated", "articulated")
    assert [s.tag for s in SCHEMAS if s.parent] == ["terrain_splat_layer", "terrain_foliage_layer",
                                                     "compound_child", "articulated_ik"]


def test_documented_default_ids():
    assert new_record("object", path="/World/Props/Crate", primitive="box").id == "object_/World/Props/Crate"
    assert new_record("light", path="/World/Sun").id == "light_/World/Sun"
    assert new_record("group", path="/World/Props").id == "folder_/World/Props"
    assert new_record("terrain_region", path="/World/T", xSamples=2, ySamples=2, xSize=1, ySize=1).id == \
        "terrain_/World/T"
    assert new_record("material", name="crate").id == "crate"  # a material's id defaults to #0
    assert new_record("asset", name="Crate").id == "Crate"
    explicit = new_record("object", path="/World/A", primitive="box", id="crate_a")
    assert explicit.id == "crate_a"


def _required_values(schema) -> dict:
    """Values for the required fields of a new record."""
    samples = {"text": "x", "integer": 2, "number": 1.0, "flag": True, "group": 1}
    values = {}
    for f in schema.full_layout:
        if f.default is REQUIRED:
            if f.name == "path":
                values[f.name] = "/World/X"
            elif f.name == "primitive":
                values[f.name] = "box"
            else:
                values[f.name] = samples[f.type.name]
    return values


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.tag)
def test_new_record_writes_a_line_that_reads_back(schema):
    """A new record with default fields is written in the full layout and reads back to the same values."""
    record = new_record(schema.tag, **_required_values(schema))
    line = record.to_line()
    text = ("" if schema.tag == "raisim_engine_scene" else "raisim_engine_scene 2\n") + line + "\n"
    if schema.parent:  # a child needs its parent before it
        parent = new_record(schema.parent[0], **_required_values(SCHEMA_BY_TAG[schema.parent[0]]))
        text = text.replace("\n", "\n" + parent.to_line() + "\n", 1)
        record.set(schema.parent[1], parent.path)
        text = text.replace(line, record.to_line())
    scene = rscene.loads(text)
    again = scene.records[-1]
    assert again.tag == schema.tag
    assert again.layout == schema.full_layout
    for name, value in record.fields():
        assert _same(again.get(name), value), name


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return a == b


def test_engine2_defaults_of_absent_records():
    scene = Scene()
    assert scene.time_step == 0.0025
    assert scene.gravity == (0.0, 0.0, -9.81)
    solver = scene.setting("solver")
    assert (solver.get("iterations"), solver.get("tolerance"), solver.get("erp"), solver.get("mode")) == \
        (80, 1e-7, 0.2, "accurate")
    assert solver.get("contactMaxIterations") == 80
    assert solver.get("contactThreshold") == 1e-7
    assert solver.get("erp2") == 0.0
    assert solver.get("defaultRestitutionThreshold") == 0.001
    assert solver.get("defaultStaticFrictionVelocityThreshold") == 0.001
    assert solver.get("fixedContactSolverIterationOrder") is False
    assert solver.get("broadphaseType") == "sap3_axis"
    assert solver.get("broadphaseWorldMin") == (-100.0, -100.0, -100.0)
    assert solver.get("sleepingQuietSteps") == 5
    assert scene.setting("asset_root").get("root") == "."
    assert scene.setting("scene_graph").get("inheritedTransforms") is True
    env = scene.setting("environment")
    assert env.get("background") == (0.38, 0.38, 0.38)
    assert env.get("ambient") == (0.15, 0.16, 0.20)
    assert env.get("backgroundMode") == "plain_color"
    assert env.get("colorMode") == "unreal_preview"
    assert env.get("fogColor") == (0.55, 0.60, 0.68, 1.0)
    assert env.get("environmentMap") == ""
    weather = scene.setting("weather")
    assert weather.get("enabled") is True
    assert (weather.get("preset"), weather.get("quality")) == ("clear", "high")
    assert weather.get("timeOfDay") == 13.0
    assert weather.get("windDirection") == (1.0, 0.25, 0.0)
    render = scene.setting("rayrai_render")
    assert render.get("preset") == "ultra" and render.get("custom") is False
    assert render.get("pbrEnvironmentIntensity") is None  # applied only when present


def test_engine_default_material():
    material = new_record("material", name="engine_default")
    assert material.get("color") == (0.55, 0.62, 0.72, 1.0)
    assert material.get("roughness") == 0.55
    assert material.get("metallic") == 0.0
    assert material.to_line() == "material engine_default 0.55 0.62 0.72 1 0 0.55 0 0 0 0 false - - - - - -"


def test_key_defaults_of_absent_keys():
    scene = rscene.loads("raisim_engine_scene 2\n"
                         "light /World/L 0 0 -1 2\n"
                         "terrain_region /World/T 2 2 1 1 0 0 0\n"
                         "instanced_visual /World/I box\n"
                         "wire /World/W stiff a b 1\n"
                         "local_fog /World/F 0 0 0 1\n")
    light, terrain, batch, wire, fog = scene.records[1:]
    assert light.get("type") == "directional" and light.get("position") == (0.0, 0.0, 3.0)
    assert light.get("coneAngle") == 30.0 and light.get("shadowResolution") == 2048
    assert terrain.get("material") == "engine_default" and terrain.get("contactMaterial") == "default"
    assert terrain.get("heights").shape == (0,)
    assert terrain.get("vertexColors").shape == (0, 4)
    assert batch.get("instances").shape == (0, 10)
    assert batch.get("colorA") == (0.55, 0.62, 0.72, 1.0) and batch.get("projectedLodMinRadiusPixels") == 2.0
    assert wire.get("stiffness") == 1000.0 and wire.get("visualizationWidth") == 0.01
    assert fog.get("density") == 0.12 and fog.get("color") == (0.72, 0.80, 0.90, 1.0)


def test_names_accept_aliases_in_any_case():
    scene = rscene.loads("raisim_engine_scene 2\n"
                         "object /W/A PLANE 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - Fixed "
                         "true 1 1\n"
                         "light /W/L 0 0 -1 1 type=SUN\n"
                         "environment 0 0 0 0 0 0 0 true true 10 backgroundMode=sky colorMode=aces\n"
                         "wire /W/X soft a b 1\n")
    obj, light, env, wire = scene.records[1:]
    assert (obj.get("primitive"), obj.get("bodyMode")) == ("ground", "static")
    assert light.get("type") == "directional"
    assert (env.get("backgroundMode"), env.get("colorMode")) == ("rayrai_sky", "aces_approx")
    assert wire.get("kind") == "compliant"


def test_lenient_names_keep_what_engine2_wrote():
    """Names the newer document does not close (sensor kinds, foliage primitives) are kept as written."""
    scene = rscene.loads("raisim_engine_scene 1\n"
                         "weather true quality=balanced\n"
                         "sensor /W/S thermal_camera a 0 0 0 1 0 0 0\n")
    assert scene.records[1].get("quality") == "balanced"
    assert scene.records[2].get("kind") == "thermal_camera"


def test_empty_keys_take_the_default():
    """'-' and nothing after '=' are the empty value; an empty key takes Engine 2's default. A positional
    '-' is the empty string (an object's empty material means its mesh's own materials)."""
    scene = rscene.loads("raisim_engine_scene 2\n"
                         "object /W/A box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 1 "
                         "id=- collisionMode=- materialRemaps= instanceId=-\n"
                         "environment 0 0 0 0 0 0 0 true true 10 colorMode=- fogColor=\n")
    obj, env = scene.records[1:]
    assert obj.get("material") == "" and obj.get("mesh") == ""
    assert obj.id == "object_/W/A" and obj.get("collisionMode") == "convex_hull"
    assert obj.get("materialRemaps") == () and obj.get("instanceId") == -1
    assert env.get("colorMode") == "unreal_preview" and env.get("fogColor") == (0.55, 0.60, 0.68, 1.0)
    obj.set("semanticClass", "")
    assert obj.to_line().endswith(" 1 1 id=- semanticClass=- instanceId=- materialRemaps= collisionMode=-")
