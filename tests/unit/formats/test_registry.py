"""Format detection by content, read/write dispatch, conversion with loss warnings, file references."""
from __future__ import annotations

import shutil

import pytest

from rscene_addon.formats import registry, rscene
from rscene_addon.model import FormatError

SIM_CONFIG = "airsim/iamaisim-ProjectAirSim/client/python/example_user_scripts/sim_config"
RSC = "raisim_xml/raisimTech-raisim2Lib/rsc"


def test_detect_by_content_not_name(tmp_path):
    cases = {
        "a.txt": ("raisim_engine_scene 2\n", "rscene"),
        "b.dat": ("\n\n  junk before\n<?xml version='1.0'?>\n<!-- c -->\n<raisim version='1'/>\n", "raisim_xml"),
        "c.xml": ("<?xml version='1.0'?>\n<CoppeliaSim><filetype>simpleScene</filetype></CoppeliaSim>", "coppelia_xml"),
        "d.xml": ("<mujoco model='m'/>", "mjcf"),
        "e.xml": ("<!DOCTYPE robot>\n<robot name='r'/>", "urdf"),
        "f.json": ('// scene\n{"actors": [],}', "airsim"),
        "g.rscene": ("# comment first\n\nraisim_engine_scene 1\n", "rscene"),
        "h.jsonc": ('{"actors": [ oops ]}', "airsim"),
    }
    for name, (text, fmt) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        assert registry.detect(str(path)) == fmt, name
    for name, text in {"x.jsonc": '{"links": []}', "y.xml": "<sdf/>", "z.bin": "\x00\x01"}.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(FormatError):
            registry.detect(str(path))
    empty = tmp_path / "empty.rscene"
    empty.write_text("")
    assert registry.detect(str(empty)) == "rscene"


def test_detect_the_corpus(corpus):
    assert registry.detect(str(corpus / RSC / "xmlScripts/heightMaps/heightMapUsingRawValues.xml")) == "raisim_xml"
    assert registry.detect(str(corpus / RSC / "laikago/laikago.urdf")) == "urdf"
    assert registry.detect(str(corpus / SIM_CONFIG / "scene_basic_drone.jsonc")) == "airsim"
    with pytest.raises(FormatError):
        registry.detect(str(corpus / SIM_CONFIG / "robot_quadrotor_fastphysics.jsonc"))
    mjcf = sorted((corpus / "mjcf").rglob("*.xml"))
    assert mjcf, corpus / "mjcf"
    if mjcf:
        assert registry.detect(str(mjcf[0])) == "mjcf"
        scene = registry.read_scene(str(mjcf[0]))  # a robot: one resource and one articulated system
        assert len(scene.of("articulated_resource")) == 1 and len(scene.of("articulated")) == 1


def test_format_for_path(tmp_path):
    assert registry.format_for_path("a.rscene") == "rscene"
    assert registry.format_for_path("a.simscene.xml") == "coppelia_xml"
    assert registry.format_for_path("a.jsonc") == "airsim"
    assert registry.format_for_path("a.xml") == "raisim_xml"
    existing = tmp_path / "world.xml"
    existing.write_text("<CoppeliaSim><filetype>simpleScene</filetype></CoppeliaSim>")
    assert registry.format_for_path(str(existing)) == "coppelia_xml"
    with pytest.raises(FormatError):
        registry.format_for_path("a.blend")


def test_rscene_to_rscene_is_byte_identical(corpus, tmp_path):
    for src in sorted((corpus / "rscene").rglob("*.rscene")):
        for target in (tmp_path / src.name, tmp_path / "sub" / src.name):
            target.parent.mkdir(exist_ok=True)
            warnings = registry.convert(str(src), str(target))
            assert target.read_bytes() == src.read_bytes(), (src.name, target)
            assert not [w for w in warnings if "cannot hold" in w]


def test_rscene_references_are_rebased_when_they_would_break(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "m.obj").write_text("")
    src = tmp_path / "scene.rscene"
    src.write_text("raisim_engine_scene 2\nobject /World/M mesh 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default engine_default "
                   "false true false meshes/m.obj static true 1 18446744073709551615\n")
    out = tmp_path / "out" / "scene.rscene"
    out.parent.mkdir()
    registry.convert(str(src), str(out))
    scene = rscene.read(str(out))
    assert scene.of("object")[0].get("mesh") == "../meshes/m.obj"
    assert rscene.read(str(src)).of("object")[0].get("mesh") == "meshes/m.obj"  # the source is untouched


def test_convert_xml_to_every_format_and_back(corpus, tmp_path):
    src = tmp_path / "rsc" / "xmlScripts" / "objects"
    src.mkdir(parents=True)
    shutil.copy(corpus / RSC / "xmlScripts/objects/SingleBodies.xml", src / "SingleBodies.xml")
    (tmp_path / "rsc" / "monkey").mkdir()
    (tmp_path / "rsc" / "monkey" / "monkey.obj").write_text("v 0 0 0\n")
    original = registry.read_scene(str(src / "SingleBodies.xml"))
    for name, fmt in (("out.rscene", "rscene"), ("out.simscene.xml", "coppelia_xml"), ("out.jsonc", "airsim"),
                      ("out2.xml", "raisim_xml")):
        target = tmp_path / "out" / name
        target.parent.mkdir(exist_ok=True)
        warnings = registry.convert(str(src / "SingleBodies.xml"), str(target))
        assert registry.detect(str(target)) == fmt
        if fmt == "airsim":
            assert any("airsim cannot hold" in w and "object" in w for w in warnings)
    back = registry.read_scene(str(tmp_path / "out" / "out.rscene"))
    assert back.by_path("/World/mesh").get("mesh") == "../rsc/monkey/monkey.obj"
    assert rscene.dumps(back).count("\nobject ") == rscene.dumps(original).count("\nobject ")
    xml_back = registry.read_scene(str(tmp_path / "out" / "out2.xml"))
    assert xml_back.by_path("/World/mesh").get("mesh") == "../rsc/monkey/monkey.obj"


def test_convert_keeps_missing_references_and_reports_them(corpus, tmp_path):
    warnings = registry.convert(str(corpus / RSC / "xmlScripts/objects/SingleBodies.xml"), str(tmp_path / "a.rscene"))
    assert "mesh file not found" in warnings[0]  # the reader's warnings come first, with file:line
    assert ":40 (mesh)" in warnings[0]
    assert registry.read_scene(str(tmp_path / "a.rscene")).by_path("/World/mesh").get("mesh") == "../../monkey/monkey.obj"


def test_convert_to_option_and_bad_targets(corpus, tmp_path):
    src = corpus / SIM_CONFIG / "scene_basic_drone.jsonc"
    target = tmp_path / "drone.xml"
    warnings = registry.convert(str(src), str(target), to="coppelia_xml")
    assert registry.detect(str(target)) == "coppelia_xml"
    assert any("sensor" in w for w in warnings)
    with pytest.raises(FormatError):
        registry.write_scene(registry.read_scene(str(src)), str(tmp_path / "x.xml"), "mjcf")


SOURCES = [f"{RSC}/xmlScripts/objects/SingleBodies.xml", f"{RSC}/xmlScripts/wire/newtonsCradle.xml",
           f"{RSC}/raisimUnrealMaps/office1.xml", f"{RSC}/xmlScripts/heightMaps/heightMapUsingTerrainGenerator.xml",
           f"{SIM_CONFIG}/scene_two_drones_sensors.jsonc", f"{SIM_CONFIG}/scene_env_objects_fire_and_smoke.jsonc",
           f"{SIM_CONFIG}/scene_hello_gis.jsonc", "rscene/docs-examples/RsceneFile_example.rscene",
           "rscene/jhwangbo-raisim2Lib/blue_wall.rscene",
           "rscene/raisimTech-raisim2Lib/rayrai_warehouse.EXCERPT-head.rscene"]


def _kept_or_reported(original, back, warnings, target):
    """Every placed thing of ``original`` (a node record with a path: object, light, camera, sensor, ...) is in
    ``back`` under its name (formats without groups flatten the path), or a warning names it or its kind:
    nothing is lost silently."""
    kept = {record.path.rstrip("/").rsplit("/", 1)[-1] for record in back.records if getattr(record, "path", None)}
    text = "\n".join(warnings)
    silent = [(record.tag, record.path) for record in original.records
              if record.tag in NODE_KINDS and record.path and record.path.rstrip("/").rsplit("/", 1)[-1] not in kept
              and record.path not in text and f" {record.tag} " not in text]
    assert not silent, (target, silent[:5], warnings[:5])


NODE_KINDS = ("object", "light", "camera", "sensor", "compound", "articulated", "wire", "deformable", "granular",
              "terrain_region", "instanced_visual")


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.rsplit("/", 1)[1])
def test_every_source_converts_to_every_target(corpus, tmp_path, source):
    original = registry.read_scene(str(corpus / source))
    for name, fmt in (("a.rscene", "rscene"), ("a.xml", "raisim_xml"), ("a.simscene.xml", "coppelia_xml"),
                      ("a.jsonc", "airsim")):
        warnings = registry.convert(str(corpus / source), str(tmp_path / name), to=fmt)
        assert all(isinstance(w, str) for w in warnings)
        assert registry.detect(str(tmp_path / name)) == fmt
        back = registry.read_scene(str(tmp_path / name))
        _kept_or_reported(original, back, warnings, name)
        if fmt == "rscene":  # the scene model's own format holds everything
            assert len(back.records) == len(original.records)


def test_bubblerob_converts_to_every_target(data_dir, tmp_path):
    source = data_dir / "bubblerob.simscene.xml"
    original = registry.read_scene(str(source))
    assert original.of("object")  # the file's shapes became objects
    for name in ("a.rscene", "a.xml", "a.jsonc", "b.simscene.xml"):
        warnings = registry.convert(str(source), str(tmp_path / name))
        back = registry.read_scene(str(tmp_path / name))
        _kept_or_reported(original, back, warnings, name)
        for record in original.of("object"):  # what was kept sits where it was
            if back.by_path(record.path) is not None:
                assert back.by_path(record.path).get("position") == pytest.approx(record.get("position"), abs=1e-9)


def test_the_loss_check_catches_a_silent_loss():
    two = ("raisim_engine_scene 2\n"
           "object /World/A box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 1\n"
           "object /World/B box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 1\n")
    original, back = rscene.loads(two), rscene.loads(two.rsplit("object", 1)[0])
    with pytest.raises(AssertionError):
        _kept_or_reported(original, back, [], "probe")
    _kept_or_reported(original, back, ["/World/B: dropped"], "probe")
    _kept_or_reported(original, back, ["x cannot hold 1 object record(s)"], "probe")
