"""RaiSim world configuration XML: the real files, templates, values, errors with lines, round trips."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats import png, raisim_xml, rscene, terrain_gen
from rscene_addon.formats.raisim_xml import ALL_GROUPS, parse_group
from rscene_addon.model import FormatError, new_record

RSC = "raisim_xml/raisimTech-raisim2Lib/rsc"
OLD = "raisim_xml/raisimTech-raisimLib/rsc"
CORPUS_FILES = [
    f"{RSC}/laikago.xml", f"{RSC}/laikagoOnHeightMap.xml", f"{RSC}/testMaterials.xml",
    f"{RSC}/raisimUnrealMaps/office1.xml", f"{RSC}/xmlScripts/objects/SingleBodies.xml",
    f"{RSC}/xmlScripts/material/material.xml", f"{RSC}/xmlScripts/wire/newtonsCradle.xml",
    f"{RSC}/xmlScripts/heightMaps/heightMapUsingTxt.xml", f"{RSC}/xmlScripts/heightMaps/heightMapUsingRawValues.xml",
    f"{RSC}/xmlScripts/heightMaps/heightMapUsingTerrainGenerator.xml",
    f"{RSC}/xmlScripts/heightMaps/heightMapUsingPng.xml",
    f"{RSC}/xmlScripts/templatedWorld/templatedWorld.xml", f"{RSC}/xmlScripts/templatedWorld/spheres.xml",
    f"{RSC}/xmlScripts/templatedWorld/terrain.xml",
    f"{OLD}/xmlScripts/heightMaps/heightMapUsingPng.xml", f"{OLD}/xmlScripts/heightMaps/heightMapUsingTerrainGenerator.xml",
]


def objects(scene, primitive=None):
    return [r for r in scene.of("object") if primitive is None or r.get("primitive") == primitive]


@pytest.mark.parametrize("name", CORPUS_FILES, ids=lambda n: n.split("rsc/")[-1])
def test_every_corpus_file_loads_and_checks(corpus, name):
    scene = raisim_xml.read(str(corpus / name))
    assert scene.of("time_step") and scene.of("solver")
    errors, _ = rscene.check(rscene.loads(rscene.dumps(scene), lazy=True))
    assert errors == []


@pytest.mark.parametrize("name", [n for n in CORPUS_FILES if "Png" not in n], ids=lambda n: n.split("rsc/")[-1])
def test_write_read_round_trip(corpus, name):
    path = str(corpus / name)
    scene = raisim_xml.read(path)
    text, warnings = raisim_xml.dumps(scene, path)
    again = raisim_xml.loads(text, path)
    assert rscene.dumps(again) == rscene.dumps(scene)
    assert not [w for w in warnings if "camera" not in w]


def test_single_bodies_by_hand(corpus):
    scene = raisim_xml.read(str(corpus / RSC / "xmlScripts/objects/SingleBodies.xml"))
    assert scene.time_step == 0.001
    # <array start=0 end=80>: 80 spheres and 80 boxes; then ground, sphere, capsule, box, cylinder, mesh.
    assert len(objects(scene)) == 80 + 80 + 6
    spheres = [r for r in objects(scene, "sphere") if r.path.startswith("/World/sphere_array_")]
    assert len(spheres) == 80
    five = scene.by_path("/World/sphere_array_5")
    assert five.get("radius") == pytest.approx(0.505)
    x, y, z = five.get("position")
    assert (x, y, z) == pytest.approx((math.cos(0.5) * 1.1, math.sin(0.5) * 1.1, 0.1 + 5.0))
    assert len(objects(scene, "box")) == 81
    last_box = scene.by_path("/World/box_80")  # the standalone box after the 80 array boxes
    assert last_box.get("scale") == (0.5, 1.0, 2.0) and last_box.get("position") == (1.0, 1.0, 5.0)
    assert last_box.get("raisimName") == "box"
    assert last_box.get("inertiaDiagonal") == (0.1, 0.1, 0.1) and last_box.get("customInertia")
    capsule = scene.by_path("/World/capsule")
    assert (capsule.get("radius"), capsule.get("height"), capsule.get("mass")) == (0.5, 1.0, 1.0)
    mesh = scene.by_path("/World/mesh")
    assert mesh.get("mesh") == "../../monkey/monkey.obj"
    assert any("mesh file not found" in d.message for d in scene.warnings)
    compound = scene.by_path("/World/compound")
    assert compound.get("mass") == 10 and compound.get("position") == (0.0, 0.0, 10.0)
    children = scene.of("compound_child")
    assert [c.get("primitive") for c in children] == ["sphere", "capsule", "box", "cylinder"]
    assert children[2].get("size") == (0.2, 0.5, 0.7) and children[2].get("position") == (0.0, 0.0, 0.5)
    assert scene.of("camera")[0].get("follow") == "ground"


def test_materials_by_hand(corpus):
    scene = raisim_xml.read(str(corpus / RSC / "xmlScripts/material/material.xml"))
    pairs = {(r.get("materialA"), r.get("materialB")): r for r in scene.of("contact_material")}
    assert set(pairs) == {("steel", "steel"), ("steel", "rubber"), ("steel", "copper")}
    assert pairs["steel", "rubber"].get("restitution") == 0.15
    assert pairs["steel", "copper"].get("restitutionThreshold") == 0.001
    solver = scene.setting("solver")
    assert (solver.get("defaultFriction"), solver.get("defaultRestitution"),
            solver.get("defaultRestitutionThreshold")) == (0.8, 0.0, 0.0)
    assert scene.by_path("/World/ground").get("contactMaterial") == "steel"
    assert scene.by_path("/World/sphere_rubber").get("contactMaterial") == "rubber"
    test = raisim_xml.read(str(corpus / RSC / "testMaterials.xml"))
    pair = test.of("contact_material")[0]
    assert (pair.get("staticFriction"), pair.get("staticFrictionVelocityThreshold")) == (0.95, 0.01)


def test_newtons_cradle_by_hand(corpus):
    scene = raisim_xml.read(str(corpus / RSC / "xmlScripts/wire/newtonsCradle.xml"))
    wires = {w.path: w for w in scene.of("wire")}
    assert len(wires) == 7
    assert wires["/World/wire1"].get("kind") == "stiff" and wires["/World/wire1"].get("length") == 2
    assert (wires["/World/wire1"].get("bodyA"), wires["/World/wire1"].get("bodyB")) == ("/World/pin1", "/World/ball1")
    assert wires["/World/wire5"].get("stiffness") == 200 and wires["/World/wire5"].get("kind") == "compliant"
    assert wires["/World/wire6"].get("bodyB") == "/World/anymalC"
    assert wires["/World/wire7"].get("kind") == "custom" and wires["/World/wire7"].get("frameB") == "base_to_base_inertia"
    pin = scene.by_path("/World/pin2")
    assert pin.get("bodyMode") == "static" and pin.get("appearance") == "0 1 0 0.3"
    material = [m for m in scene.of("material") if m.get("name") == pin.get("material")][0]
    assert material.get("color") == (0.0, 1.0, 0.0, 0.3)
    assert scene.by_path("/World/ball1").get("radius") == 0.1498
    anymal = scene.by_path("/World/anymalB")
    gc = anymal.get("generalizedCoordinate")
    assert len(gc) == 19 and tuple(gc[:3]) == (-4.0, 0.0, 4.54)
    assert anymal.get("position") == (-4.0, 0.0, 4.54)
    resource = [r for r in scene.of("articulated_resource") if r.get("id") == anymal.get("resourceId")][0]
    assert resource.get("sourcePath") == "../../anymal/urdf/anymal.urdf"


def test_laikago_camel_case_and_groups(corpus):
    scene = raisim_xml.read(str(corpus / RSC / "laikago.xml"))
    assert scene.time_step == 0.002 and scene.gravity == (0.0, 0.0, -9.81)
    treadmill = scene.by_path("/World/treadmill")
    assert treadmill.get("bodyMode") == "kinematic"
    assert treadmill.get("initialLinearVelocity") == "2,0,0"
    assert treadmill.get("scale") == (10.0, 2.0, 0.05)
    floor = scene.by_path("/World/floor")
    assert floor.get("collisionGroup") == 2**64 - 2**31 and floor.get("collisionMask") == ALL_GROUPS
    robot = scene.by_path("/World/laikago0")
    assert robot.get("sourcePath") == "laikago/laikago.urdf"
    assert len(robot.get("generalizedVelocity")) == 18


def test_office_map(corpus):
    scene = raisim_xml.read(str(corpus / RSC / "raisimUnrealMaps/office1.xml"))
    assert len(objects(scene, "box")) == 118 and len(objects(scene, "cylinder")) == 32
    assert len({r.path for r in objects(scene)}) == 150
    assert all(r.get("bodyMode") == "static" and not r.get("visible") for r in objects(scene))
    first = scene.by_path("/World/box_0")
    assert first.get("scale") == (68.75, 2.0, 15.25) and first.get("position") == (10.4, -14.7, 0.5)


def test_height_maps_by_hand(corpus):
    base = corpus / RSC / "xmlScripts/heightMaps"
    expected = [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0.5, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    for name in ("heightMapUsingRawValues.xml", "heightMapUsingTxt.xml"):
        terrain = raisim_xml.read(str(base / name)).of("terrain_region")[0]
        assert (terrain.get("xSamples"), terrain.get("ySamples"), terrain.get("xSize"), terrain.get("ySize")) == (5, 5, 10, 10)
        assert terrain.get("heights").tolist() == expected
    generated = raisim_xml.read(str(base / "heightMapUsingTerrainGenerator.xml")).of("terrain_region")[0]
    props = terrain_gen.TerrainProperties(frequency=0.2, x_size=20, y_size=20, z_scale=3.0, x_samples=50,
                                          y_samples=50, fractal_octaves=3, fractal_lacunarity=2.0,
                                          fractal_gain=0.25, step_size=0.0, seed=0)
    assert np.array_equal(generated.get("heights"), terrain_gen.generate(props))
    camel = raisim_xml.read(str(corpus / OLD / "xmlScripts/heightMaps/heightMapUsingTerrainGenerator.xml"))
    assert np.array_equal(camel.of("terrain_region")[0].get("heights"), generated.get("heights"))
    assert camel.by_path("/World/sphere").get("position") == (0.0, 0.0, 5.0)


def test_png_height_map(corpus):
    base = corpus / RSC / "xmlScripts/heightMaps"
    scene = raisim_xml.read(str(base / "heightMapUsingPng.xml"))
    terrain = scene.of("terrain_region")[0]
    pixels = png.read_grey(str(base / "zurichHeightMap.png"))
    assert (terrain.get("xSamples"), terrain.get("ySamples")) == (1081, 1081)
    assert (terrain.get("xSize"), terrain.get("ySize")) == (500, 500)
    heights = terrain.get("heights")
    assert heights[0] == pixels[0, 0] * 0.005 - 10 and heights[1081 * 7 + 3] == pixels[7, 3] * 0.005 - 10
    assert terrain.get("pngHeightScale") == 0.005 and terrain.get("sourcePath") == "zurichHeightMap.png"
    # the older copy of the file names a PNG that is not in its folder: a warning, not a crash
    old = raisim_xml.read(str(corpus / OLD / "xmlScripts/heightMaps/heightMapUsingPng.xml"))
    assert not old.of("terrain_region")
    assert any("not found" in d.message for d in old.warnings)


@pytest.mark.slow
def test_png_height_map_round_trip(corpus, tmp_path):
    path = str(corpus / RSC / "xmlScripts/heightMaps/heightMapUsingPng.xml")
    scene = raisim_xml.read(path)
    text, _ = raisim_xml.dumps(scene, path)
    assert 'png="[THIS_DIR]/zurichHeightMap.png"' in text
    again = raisim_xml.loads(text, path)
    assert np.array_equal(again.of("terrain_region")[0].get("heights"), scene.of("terrain_region")[0].get("heights"))


def test_templated_world_without_and_with_parameters(corpus):
    path = str(corpus / RSC / "xmlScripts/templatedWorld/templatedWorld.xml")
    scene = raisim_xml.read(path)
    # parameters come from C++: undefined ones read as 0 (sphere_count 0: no array iterations, exist 0)
    assert [r.path for r in objects(scene)] == ["/World/floor"]
    assert scene.by_path("/World/floor").get("position") == (0.0, 0.0, 0.0)
    assert scene.by_path("/World/laikago0").get("position") == (0.0, 0.0, 0.48)
    undefined = {d.message.split()[1] for d in scene.warnings if "not defined" in d.message}
    assert undefined == {"@@sphere_count", "@@floor_height", "@@laikago_start_x", "@@laikago_start_y"}
    params = {"sphere_count": "3", "spawn_sphere": "true", "spawn_box": "0", "sphere_height_offset": "2",
              "floor_height": "-0.5", "laikago_start_x": "1.5", "laikago_start_y": "-2"}
    scene = raisim_xml.read(path, params)
    assert [r.path for r in objects(scene, "sphere")] == [f"/World/sphere_array_{i}" for i in range(3)]
    assert objects(scene, "box") == []
    assert scene.by_path("/World/sphere_array_2").get("position")[2] == pytest.approx(2 + 2.0)
    assert scene.by_path("/World/floor").get("position") == (0.0, 0.0, -0.5)
    assert scene.by_path("/World/laikago0").get("position") == (1.5, -2.0, 0.48)
    assert not [d for d in scene.warnings if "not defined" in d.message]


def _read(tmp_path, text, name="world.xml", params=None):
    path = tmp_path / name
    path.write_text(text)
    return raisim_xml.read(str(path), params)


def test_templates(tmp_path):
    (tmp_path / "part.xml").write_text('<raisim><objects><box name="inc" mass="1"><dim x="1" y="1" z="1"/>'
                                       '<state pos="0 0 @@h"/></box></objects></raisim>')
    scene = _read(tmp_path, """<?xml version="1.0"?>
<raisim version="1.0">
  <include value="[THIS_DIR]/part.xml"/>
  <params><h value="{2*@@k}"/><k value="1.5"/><n value="2"/></params>
  <objects>
    <array idx="@@i" start="0" end="@@n" increment="1">
      <array idx="@@j" start="{@@i}" end="3" increment="2">
        <sphere name="s_@@i_@@j" mass="1"><dim radius="{0.1*(@@i+1)}"/><state pos="@@i @@j {sin(0)}"/></sphere>
      </array>
    </array>
    <sphere name="gone" mass="1" exist="{1-1}"><dim radius="1"/></sphere>
    <sphere name="kept" mass="1" exist="true"><dim radius="1"/></sphere>
    <array idx="@@d" start="3" end="0" increment="-1"><box name="down_@@d" mass="1"><dim x="1" y="1" z="1"/></box></array>
  </objects>
</raisim>""")
    names = [leaf for leaf in (r.path.rsplit("/", 1)[1] for r in objects(scene))]
    assert names == ["inc", "s_0_0", "s_0_2", "s_1_1", "kept", "down_3", "down_2", "down_1"]
    assert scene.by_path("/World/inc").get("position") == (0.0, 0.0, 3.0)
    assert scene.by_path("/World/s_1_1").get("radius") == pytest.approx(0.2)


def test_collision_syntax():
    assert parse_group("collision[1|4|6]") == 2 + 16 + 64
    assert parse_group("collision[0]") == 1
    assert parse_group("collision[-1]") == ALL_GROUPS
    assert parse_group("-1") == ALL_GROUPS
    assert parse_group("5") == 5
    assert parse_group("collision[64]") is None and parse_group("x") is None


@pytest.mark.parametrize(("text", "line", "words"), [
    ("<raisim>\n<objects>\n<sphere name='a' mass='1'>\n<dim radius='x'/>\n</sphere>\n</objects>\n</raisim>", 4, "not a finite number"),
    ("<raisim>\n<objects>\n<box name='a' mass='1'>\n<state pos='0 0 1'/>\n</box>\n</objects>\n</raisim>", 3, "needs a <dim>"),
    ("<raisim>\n<objects>\n<sphere name='a' mass='1'>\n<dim radius='1'>\n</sphere>\n</objects>\n</raisim>", 5, "XML syntax error"),
    ("<raisim>\n<objects>\n<array idx='@@i' start='0' end='3' increment='0'>\n</array>\n</objects>\n</raisim>", 3, "never reaches"),
    ("<raisim>\n<objects>\n\n<sphere name='a' mass='1' exist='maybe'><dim radius='1'/></sphere>\n</objects>\n</raisim>", 4, "exist"),
    ("<raisim>\n<objects>\n<sphere name='a' mass='{1+}'><dim radius='1'/></sphere>\n</objects>\n</raisim>", 3, "mass"),
    ("<raisim>\n<objects/>\n<wire name='w' type='stiff' length='1'>\n<object1 name='nope' local_index='0' pos='0 0 0'/>\n"
     "<object2 name='nope' local_index='0' pos='0 0 0'/>\n</wire>\n</raisim>", 4, "not an object"),
    ("<raisim>\n<include value='[THIS_DIR]/missing.xml'/>\n</raisim>", 2, "not found"),
    ("<raisim>\n<objects>\n<heightmap name='t' x_sample='2' y_sample='2' x_size='1' y_size='1' height='1 2 3'/>\n</objects>\n</raisim>", 3, "expected x_sample"),
    ("<raisim>\n<objects>\n<box name='a' mass='-1' body_type='dynamic'><dim x='1' y='1' z='1'/></box>\n</objects>\n</raisim>", 3, "positive"),
    ("<world/>", 1, "expected <raisim>"),
])
def test_errors_name_the_line(tmp_path, text, line, words):
    with pytest.raises(FormatError) as info:
        _read(tmp_path, text, "bad.xml")
    first = info.value.first
    assert first.file.endswith("bad.xml") and first.line == line, str(info.value)
    assert words in first.message, str(info.value)


def test_errors_in_included_files_name_that_file(tmp_path):
    (tmp_path / "inc.xml").write_text("<raisim>\n<objects>\n<sphere name='a' mass='1'><dim radius='nan?'/></sphere>\n"
                                      "</objects>\n</raisim>")
    with pytest.raises(FormatError) as info:
        _read(tmp_path, "<raisim>\n<include value='inc.xml'/>\n</raisim>")
    assert info.value.first.file.endswith("inc.xml") and info.value.first.line == 3


def test_include_cycle(tmp_path):
    (tmp_path / "a.xml").write_text("<raisim><include value='b.xml'/></raisim>")
    (tmp_path / "b.xml").write_text("<raisim>\n<include value='a.xml'/></raisim>")
    with pytest.raises(FormatError) as info:
        raisim_xml.read(str(tmp_path / "a.xml"))
    assert "cycle" in info.value.first.message and info.value.first.line == 2


def test_writer_from_an_rscene_scene(corpus, tmp_path):
    scene = rscene.read(str(corpus / "rscene/docs-examples/RsceneFile_example.rscene"))
    out = tmp_path / "example.xml"
    warnings = raisim_xml.write(scene, str(out))
    assert any("light" in w for w in warnings) and any("camera" in w for w in warnings)
    again = raisim_xml.read(str(out))
    crate, ball = again.by_path("/World/Crate"), again.by_path("/World/Ball")
    assert crate.get("scale") == (0.5, 0.5, 0.5) and crate.get("mass") == 2
    assert ball.get("radius") == 0.15 and ball.get("position") == (1.2, 1.2, 1.0)
    terrain = again.of("terrain_region")[0]
    assert terrain.get("heights").tolist() == [0.3, 0.15, 0.3, 0.15, 0, 0.15, 0.3, 0.15, 0.3]
    solver = again.setting("solver")
    assert (solver.get("iterations"), solver.get("erp"), solver.get("erp2")) == (150, 1.5, 0.002)
    assert again.time_step == 0.001
    # the crate's material color reaches the XML as its appearance
    assert crate.get("appearance") == "0.8 0.5 0.2 1"


def test_mutated_files_never_crash(corpus, data_dir):
    """Damaged inputs give FormatError (with a line) or a scene, never another exception."""
    import random

    from rscene_addon.formats import airsim, coppelia_xml

    rng = random.Random(11)
    sources = [(raisim_xml.loads, corpus / name) for name in CORPUS_FILES if "Png" not in name and "office" not in name]
    sources += [(coppelia_xml.loads, data_dir / "bubblerob.simscene.xml")] * 4
    sources += [(airsim.loads, p) for p in sorted((corpus / "airsim").rglob("scene_*.jsonc"))[:8]]
    pieces = ["<", ">", '"', "0", "-1", "nan", "1e999", "-Infinity", "{", "}", "@@x", "/", "</objects>", "[", "]",
              ",", ":", "null", "", "collision[99]", '<array idx="@@i" start="0" end="5" increment="0">',
              '<heightmap x_sample="100000" y_sample="100000" x_size="1" y_size="1"><terrain_properties/></heightmap>']
    for _ in range(400):
        reader, path = rng.choice(sources)
        text = path.read_text()
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice(pieces) + text[i + rng.randint(0, 8):]
        try:
            reader(text, str(path))
        except FormatError as exc:
            assert exc.diagnostics and exc.first.file


def test_array_bodies_are_the_records_made_one_by_one(tmp_path):
    """An array's shapes (made from shared record makers, past 256 orientations too) are the records that
    ``new_record`` makes from each shape's values; -0.0 (a text of its own) is not read as 0.0."""
    shapes = {"s": ("2", "0.1", "1 0 0 {@@i/1000}"), "z": ("1", "1", "-0 1 0 0"), "w": ("1", "1", "0 1 0 0"),
              "v": ("-0.0", "-0", "0 1 0 0"), "u": ("0", "0", "0 1 0 0")}
    body = "".join(f'<sphere name="{k}@@i" mass="{m}" body_type="static"><dim radius="{r}"/>'
                   f'<state pos="@@i 0 -0" quat="{q}"/></sphere>' for k, (m, r, q) in shapes.items())
    scene = _read(tmp_path, '<raisim><objects><array idx="@@i" start="0" end="300" increment="1">'
                  f'{body}</array></objects></raisim>')
    made = {r.get("path"): r for r in objects(scene)}
    assert len(made) == 1500
    common = dict(primitive="sphere", contactMaterial="default", material="engine_default", visible=True,
                  bodyMode="static", collisionGroup=1, collisionMask=ALL_GROUPS)
    for i in range(300):
        for k, (m, r, q) in shapes.items():
            quat = (1.0, 0.0, 0.0, i / 1000) if k == "s" else tuple(float(v) for v in q.split())
            expected = new_record("object", path=f"/World/{k}{i}", position=(float(i), 0.0, -0.0),
                                  quaternion=quat, mass=float(m), radius=float(r), **common)
            assert made[expected.get("path")].to_line() == expected.to_line()
    assert made["/World/z0"].to_line() != made["/World/w0"].to_line().replace("/w0", "/z0")
    assert made["/World/v0"].to_line() != made["/World/u0"].to_line().replace("/u0", "/v0")


def test_nested_arrays_replace_the_longest_variable_first(tmp_path):
    """``@@ii`` in the inner array's copies is the inner index, not ``@@i`` followed by "i"."""
    scene = _read(tmp_path, '<raisim><objects><array idx="@@i" start="0" end="2" increment="1">'
                  '<array idx="@@ii" start="5" end="1" increment="-2"><box name="b@@i_@@ii" mass="1">'
                  '<dim x="1" y="1" z="1"/><state pos="@@i @@ii {@@i+@@ii}"/></box></array></array>'
                  '</objects></raisim>')
    got = [(r.get("path"), tuple(r.get("position"))) for r in objects(scene)]
    assert got == [("/World/b0_5", (0.0, 5.0, 5.0)), ("/World/b0_3", (0.0, 3.0, 3.0)),
                   ("/World/b1_5", (1.0, 5.0, 6.0)), ("/World/b1_3", (1.0, 3.0, 4.0))]
