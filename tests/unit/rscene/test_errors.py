"""Malformed files: a FormatError whose diagnostics name the file, the 1-based line and the record tag, for
every problem of the file at once; content Engine 2 reads but RaiSim refuses gives warnings."""
from __future__ import annotations

import pytest

from rscene_addon.formats import rscene
from rscene_addon.model import Diagnostic, FormatError

H = "raisim_engine_scene 2\n"
BOX = "object /World/Box box 0 0 1 1 0 0 0 1 1 1 0.5 1 {mass} default - false true false - {mode} true 1 1"


def errors(text: str, path: str = "scene.rscene") -> list[Diagnostic]:
    with pytest.raises(FormatError) as info:
        rscene.loads(text, path)
    for d in info.value.diagnostics:
        assert d.severity == "error" and d.file == path
    return info.value.diagnostics


def warnings(text: str) -> list[Diagnostic]:
    scene = rscene.loads(text)
    for d in scene.warnings:
        assert d.severity == "warning"
    return scene.warnings


def where(diagnostics) -> list[tuple[int, str]]:
    return [(d.line, d.tag) for d in diagnostics]


# ---------------------------------------------------------------------------------------------------------
# Header


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "   \n\t\n"])
def test_empty_file(text):
    (d,) = errors(text)
    assert d.line == 0 and "missing 'raisim_engine_scene' header" in d.message


def test_missing_header():
    (d,) = errors("# a scene\n\ntime_step 0.001\ngravity 0 0 -9.81\n")
    assert (d.line, d.tag) == (3, "time_step")
    assert "expected the 'raisim_engine_scene N' header" in d.message


def test_missing_header_of_an_rscene_named_file(tmp_path):
    """Content that says nothing else: the .rscene name decides, and the error names the first record."""
    from rscene_addon.formats import registry
    path = tmp_path / "scene.rscene"
    path.write_text("# a scene\n\ngroup /A\n")
    with pytest.raises(FormatError) as info:
        registry.read_scene(str(path))
    d = info.value.first
    assert (d.file, d.line, d.tag) == (str(path), 3, "group")
    assert "expected the 'raisim_engine_scene N' header" in d.message


@pytest.mark.parametrize("header, message", [
    ("raisim_engine_scene", "exactly one field"),
    ("raisim_engine_scene 2 extra", "exactly one field"),
    ("raisim_engine_scene two", "bad version"),
    ("raisim_engine_scene 1.5", "bad version"),
    ("raisim_engine_scene 3", "unsupported rscene version 3"),
    ("raisim_engine_scene 0", "unsupported rscene version 0"),
])
def test_wrong_header(header, message):
    (d,) = errors(f"# comment\n{header}\ntime_step 0.001\n")
    assert (d.line, d.tag) == (2, "raisim_engine_scene")
    assert message in d.message


def test_both_versions_read():
    assert rscene.loads("raisim_engine_scene 1\n").version == 1
    assert rscene.loads("raisim_engine_scene 2\n").version == 2


# ---------------------------------------------------------------------------------------------------------
# Structure and values


@pytest.mark.parametrize("line, tag, message", [
    ("light /World/L 0 0 -1 1 type=spot 5", "light", "positional field '5' after a key=value field"),
    ("light /World/L 0 0 -1 1 type=spot type=point", "light", "repeated key 'type'"),
    ("camera /World/C 0 0 0 1 0 0 0 55", "camera", "missing positional field(s) near, far, width"),
    ("gravity 0 -9.81", "gravity", "missing positional field(s) gravity"),
    ("asset Crate mesh crate.glb mass=abc", "asset", "field 'mass': expected a finite number, got 'abc'"),
    (BOX.format(mass="abc", mode="dynamic"), "object", "field 'mass': expected a finite number, got 'abc'"),
    ("gravity 0 0 nan", "gravity", "expected a finite number, got 'nan'"),
    ("time_step inf", "time_step", "expected a finite number, got 'inf'"),
    ("environment 0 0 0 0 0 0 0 true true 10 exposure=-inf", "environment", "field 'exposure'"),
    ("terrain_region /World/T 2 2 1 1 0 0 0 heights=0,nan,0,0", "terrain_region", "field 'heights'"),
    ("terrain_region /World/T 2 2 1 1 0 0 0 heights=0,1,2", "terrain_region",
     "heights has 3 values, expected xSamples*ySamples = 2*2 = 4"),
    ("terrain_region /World/T 2 2 1 1 0 0 0 holes=0,1", "terrain_region",
     "holes has 2 values, expected 0 or 4"),
    ("terrain_region /World/T 1 2 1 1 0 0 0", "terrain_region", "at least 2 samples per axis"),
    ("terrain_region /World/T 2 2 0 1 0 0 0", "terrain_region", "positive size"),
    ("terrain_region /World/T 2 2 1.5 1 0 0 0 baseTexture=1.5", "terrain_region", "field 'baseTexture'"),
    ("terrain_splat_layer /World/T slot=1", "terrain_splat_layer", "is not defined before this layer"),
    ("terrain_foliage_layer /World/T", "terrain_foliage_layer", "a terrain_region must come first"),
    ("light /World/L 0 0 -1 1 type=laser", "light", "field 'type': unknown name 'laser'"),
    ("object /World/A box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - floating true 1 1",
     "object", "field 'bodyMode': unknown name 'floating'"),
    ("object /World/A box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 -1",
     "object", "field 'collisionMask'"),
    ("light /World/L 0 0 -1 1 visible=maybe", "light", "field 'visible': expected a flag"),
    ("light /World/L 0 0 -1 1 color=1,1", "light", "field 'color'"),
    ("material m 1 1 1 1 0 0.5 id=m%zz", "material", "field 'id': bad percent escape"),
    ("instanced_visual /World/I box instances=0,0,0,1,0,0,0,1,1", "instanced_visual", "multiple of 10"),
    (BOX.format(mass="0", mode="dynamic"), "object", "mass must be positive for a dynamic body"),
    (BOX.format(mass="-1", mode="dynamic"), "object", "mass must be positive for a dynamic body"),
    ("wire /World/W stiff a b -1", "wire", "length must not be negative"),
    ("wire /World/W stiff a b 1 localIndexB=-2", "wire", "localIndexB must not be negative"),
    # surplus positional tokens on a known kind (the garbage lines), found by the fast and slow paths
    ("rayrai_render foo bar baz", "rayrai_render", "3 positional field(s) too many: 'foo bar baz'"),
    ("rayrai_render foo preset=balanced", "rayrai_render", "1 positional field(s) too many: 'foo'"),
    (BOX.format(mass="1", mode="dynamic") + " extra1 extra2", "object",
     "2 positional field(s) too many: 'extra1 extra2' (object takes 25, 19 or 17"),
    ("gravity 0 0 -9.81 1", "gravity", "1 positional field(s) too many: '1'"),
    ("time_step 0.001 x y=1", "time_step", "1 positional field(s) too many: 'x'"),
])
def test_bad_line(line, tag, message):
    (d,) = errors(f"{H}time_step 0.001\n{line}\ngravity 0 0 -9.81\n")
    assert (d.line, d.tag) == (3, tag)
    assert message in d.message


def test_every_error_of_a_file_is_reported():
    text = (H
            + "time_step 0.001\n"
            + "gravity 0 0 x\n"                                     # 3
            + "# a comment\n"
            + BOX.format(mass="abc", mode="dynamic") + "\n"         # 5
            + "\n"
            + "light /World/L 0 0 -1 1 type=spot type=spot\n")     # 7
    diagnostics = errors(text, "/tmp/bad.rscene")
    assert where(diagnostics) == [(3, "gravity"), (5, "object"), (7, "light")]
    assert str(diagnostics[0]).startswith("/tmp/bad.rscene:3 (gravity): error: ")
    with pytest.raises(FormatError) as info:
        rscene.loads(text, "/tmp/bad.rscene")
    assert str(info.value).count("\n") == 2 and info.value.first is info.value.diagnostics[0]


def test_several_errors_in_one_record_are_all_reported():
    diagnostics = errors(H + "light /World/L 0 0 -1 1 type=laser visible=maybe shadowResolution=1.5\n")
    assert where(diagnostics) == [(2, "light")] * 3
    assert [d.message.split(":")[0] for d in diagnostics] == \
        ["field 'type'", "field 'visible'", "field 'shadowResolution'"]


def test_crlf_errors_are_on_the_right_line():
    text = (H + "time_step 0.001\n\n# comment\n" + "gravity 0 0 nan\n"
            + "terrain_region /World/T 3 3 4 4 0 0 0 heights=1,2\n").replace("\n", "\r\n")
    diagnostics = errors(text)
    assert where(diagnostics) == [(5, "gravity"), (6, "terrain_region")]
    assert "\r" not in diagnostics[0].message and "'nan'" in diagnostics[0].message


def test_errors_are_checked_in_order_with_the_terrain_before_its_layers():
    text = (H + "terrain_splat_layer /World/T slot=1\n"
            + "terrain_region /World/T 2 2 1 1 0 0 0\n"
            + "terrain_splat_layer /World/T slot=1 weights=1,1,1\n"
            + "terrain_foliage_layer terrain_/World/T density=1,1,1,1\n")  # by id: fine
    diagnostics = errors(text)
    assert where(diagnostics) == [(2, "terrain_splat_layer"), (4, "terrain_splat_layer")]
    assert "weights has 3 values, expected 0 or 4" in diagnostics[1].message


def test_surplus_positional_tokens_are_kept_when_parsed_lazily():
    """The error is the check pass's: a lazy parse keeps the tokens and writes the line back as it was."""
    text = H + "gravity 0 0 -9.81 extra1 extra2\n"
    scene = rscene.loads(text, lazy=True)
    assert scene.records[1].extra_positional == ["extra1", "extra2"]
    assert rscene.dumps(scene) == text
    errs, _ = rscene.check(scene, "s.rscene")
    assert [str(d) for d in errs] == ["s.rscene:2 (gravity): error: 2 positional field(s) too many: "
                                      "'extra1 extra2' (gravity takes 3 positional field(s), then key=value fields)"]


def test_an_object_in_an_older_layout_has_no_surplus():
    """19 positional fields is the older object layout (not 19 of 25 plus nothing): no error."""
    old = "object /World/A box 0 0 1 1 0 0 0 1 1 1 0.5 1 1 default - true false"
    assert rscene.loads(H + old + "\n").records[1].get("mass") == 1
    (d,) = errors(H + old + " x\n")
    assert "1 positional field(s) too many: 'x'" in d.message


def test_lazy_parse_defers_value_errors():
    scene = rscene.loads(H + "gravity 0 0 nan\n", lazy=True)
    errs, _ = rscene.check(scene)
    assert where(errs) == [(2, "gravity")]


# ---------------------------------------------------------------------------------------------------------
# Content Engine 2 reads: warnings, not errors


def test_unknown_record_kind_is_a_warning_and_kept():
    text = H + "future_record a b key=1\n"
    (w,) = warnings(text)
    assert (w.line, w.tag) == (2, "future_record") and "unknown record kind" in w.message
    assert rscene.dumps(rscene.loads(text)) == text


@pytest.mark.parametrize("root, warned", [(".", False), ("-", False), ("/abs/assets", False),
                                          ("C:/assets", False), ("../assets", True), ("assets", True)])
def test_version_1_asset_root(root, warned):
    found = warnings(f"raisim_engine_scene 1\nasset_root {root}\n")
    assert [(w.line, w.tag) for w in found] == ([(2, "asset_root")] if warned else [])
    assert not warnings(f"raisim_engine_scene 2\nasset_root {root}\n")


def test_parents():
    obj = "object {path} box 0 0 1 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true 1 1"
    text = (H
            + "group /World/Props id=folder_props\n"
            + obj.format(path="/World/Props/A") + " parentGroupId=folder_props\n"          # 3: folder, fine
            + obj.format(path="/World/Props/B") + " parentGroupId=/World/Props\n"          # 4: by path, fine
            + obj.format(path="/World/Props/C") + " parentGroupId=folder_missing\n"        # 5: no such node
            + obj.format(path="/World/Props/D") + " parentGroupId=object_/World/Props/A\n"  # 6: a node
            + "light /World/L 0 0 -1 1 parentGroupId=/World/Props/A\n")                    # 7: a node
    found = warnings(text)
    assert where(found) == [(5, "object"), (6, "object"), (7, "light")]
    assert "names no node" in found[0].message and "inherit" in found[1].message
    # without inherited transforms a node parent is fine
    assert where(warnings(text + "scene_graph inheritedTransforms=false\n")) == [(5, "object")]


def test_terrain_warnings():
    found = warnings(H + "terrain_region /World/T 2 2 1 1 0 0 0 sourceKind=png visible=false\n")
    assert where(found) == [(2, "terrain_region")] * 2
    assert "sourceKind 'png'" in found[0].message and "visible=false" in found[1].message
    assert not warnings(H + "terrain_region /World/T 2 2 1 1 0 0 0 sourceKind=inline\n")


def test_instanced_visual_warnings():
    found = warnings(H + "instanced_visual /World/G box grassPatch=true\n"
                     + "instanced_visual /World/P ground\n"
                     + "instanced_visual /World/Q ground enabled=false\n")
    assert where(found) == [(2, "instanced_visual"), (3, "instanced_visual")]


def test_bodies_without_mass_that_are_not_dynamic_are_fine():
    for mode in ("static", "kinematic", "visual_only"):
        assert not warnings(H + BOX.format(mass="0", mode=mode) + "\n")
    assert not warnings(H + BOX.format(mass="0", mode="dynamic").replace(" true 1 1", " false 1 1") + "\n")
    assert not warnings(H + "wire /World/W stiff a b -1 enabled=false\n")


def test_children_before_their_parent_are_warned():
    found = warnings(H + "compound_child /World/C box 0 0 0 1 0 0 0 1 1 1\n"
                     + "compound /World/C 0 0 0 1 0 0 0 1 1 1 1 dynamic true true\n"
                     + "compound_child compound_/World/C box 0 0 0 1 0 0 0 1 1 1\n"
                     + "articulated_ik /World/R foot 0,0,0\n")
    assert where(found) == [(2, "compound_child"), (5, "articulated_ik")]
    assert "compound '/World/C' is not a compound defined before" in found[0].message


def test_a_record_too_short_for_its_path_is_reported_when_a_later_node_has_a_parent():
    """Looking the parent up indexes every node's id; a record missing its path has none (not a crash)."""
    text = H + "group /W\ncamera\nobject /W/C box 0 0 0 1 0 0 0 1 1 1 0.5 1 1 default crate parentGroupId=/W\n"
    (d,) = errors(text)
    assert (d.line, d.tag) == (3, "camera") and "missing positional field(s) path" in d.message


def test_a_record_with_an_unreadable_path_is_reported_when_a_later_node_has_a_parent():
    """The same lookup meets a path that does not decode: that record is reported, the lookup goes on."""
    box = BOX.format(mass=1, mode="dynamic")
    text = H + "group /W\n" + box.replace("/World/Box", "/W/%zz") + "\n" + box + " parentGroupId=/W\n"
    (d,) = errors(text)
    assert (d.line, d.tag) == (3, "object") and "path" in d.message and "%zz" in d.message
