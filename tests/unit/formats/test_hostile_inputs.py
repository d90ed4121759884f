"""Hand-made hostile files: each is refused with a FormatError naming the file, the line and the element
or record, before the work it asks for starts (array unrolling, parameter expansion, a box fill, entity
expansion, deep nesting), through the entry ``python -m rscene_addon validate`` uses.

No timings are asserted; an alarm fails a test that runs past 30 s (a refusal takes well under a second).
"""
from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from rscene_addon.formats import jsonc, raisim_template, registry, xml_expr, xmltree
from rscene_addon.model import FormatError
from rscene_addon.model.checks import MAX_BOX_FILL
from tests.corpus import REPO


@pytest.fixture(autouse=True)
def alarm():
    def on_alarm(signum, frame):
        raise TimeoutError("a hostile file was not refused within 30 s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def refused(path) -> list:
    with pytest.raises(FormatError) as info:
        registry.read_scene(str(path))
    diagnostics = info.value.diagnostics
    assert all(d.file for d in diagnostics)
    return diagnostics


def world(body: str, head: str = "") -> str:
    return f'<?xml version="1.0"?>\n{head}<raisim version="1.0">\n<objects>\n{body}\n</objects>\n</raisim>\n'


SPHERE = '<sphere name="s@@i" mass="1"><dim radius="0.1"/><state pos="0 0 @@i"/></sphere>'


def test_array_of_a_billion_iterations(tmp_path):
    path = tmp_path / "array.xml"
    path.write_text(world(f'<array idx="@@i" start="0" end="1000000000" increment="1">\n{SPHERE}\n</array>'))
    (d,) = refused(path)
    assert (d.file, d.line, d.tag) == (str(path), 4, "array")
    assert "1000000000 times" in d.message and str(raisim_template.MAX_ITERATIONS) in d.message


def test_nested_arrays_stop_at_the_limit(tmp_path):
    """1000 x 1000: the inner arrays add up past the limit; the file is refused, not half read."""
    inner = f'<array idx="@@j" start="0" end="1000" increment="1">{SPHERE}</array>'
    path = tmp_path / "nested.xml"
    path.write_text(world(f'<array idx="@@i" start="0" end="1000" increment="1">\n{inner}\n</array>'))
    diagnostics = refused(path)
    assert len(diagnostics) == 1 and diagnostics[0].tag == "array" and diagnostics[0].line == 5


def test_array_element_limit(tmp_path):
    """Few iterations of a big body: the element count is the limit."""
    body = "".join(f'<sphere name="s@@i_{k}" mass="1"><dim radius="0.1"/></sphere>' for k in range(20))
    count = raisim_template.MAX_ELEMENTS // 40 + 10  # 40 elements per iteration
    path = tmp_path / "elements.xml"
    path.write_text(world(f'<array idx="@@i" start="0" end="{count}" increment="1">{body}</array>'))
    (d,) = refused(path)
    assert d.line == 4 and "elements made by arrays" in d.message


def test_parameter_expansion_bomb(tmp_path):
    names = "abcdefghij"
    params = "".join(f'<{a} value="{("@@" + b) * 4}"/>' for a, b in zip(names, names[1:]))
    path = tmp_path / "params.xml"
    text = world('<sphere name="@@a" mass="1"><dim radius="1"/></sphere>')
    path.write_text(text.replace("<objects>", f'<params>{params}<j value="x"/></params>\n<objects>'))
    diagnostics = refused(path)
    assert any("parameters expand to more than" in d.message and d.tag == "sphere" for d in diagnostics)


def test_billion_laughs(tmp_path):
    entities = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">'
                                               for i in range(1, 10))
    path = tmp_path / "laughs.xml"
    path.write_text(world('<sphere name="&l9;" mass="1"><dim radius="1"/></sphere>',
                          f"<!DOCTYPE r [{entities}]>\n"))
    (d,) = refused(path)
    assert d.line >= 3 and "XML syntax error" in d.message


def test_external_entity(tmp_path):
    path = tmp_path / "xxe.xml"
    path.write_text(world('<sphere name="&x;" mass="1"><dim radius="1"/></sphere>',
                          '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'))
    (d,) = refused(path)
    assert "external entity" in d.message


def test_expression_never_runs_code(tmp_path):
    path = tmp_path / "expr.xml"
    marker = tmp_path / "pwned"
    path.write_text(world(f'<sphere name="a" mass="{{__import__(\'os\').system(\'touch {marker}\')}}">'
                          '<dim radius="1"/></sphere>'))
    diagnostics = refused(path)
    assert diagnostics[0].line == 4 and diagnostics[0].tag == "sphere"
    assert not marker.exists()


@pytest.mark.parametrize("expression, message", [
    ("(" * 200 + "1" + ")" * 200, "nested deeper than"),
    ("-" * 500 + "1", "nested deeper than"),
    ("2^" * 300 + "2", "nested deeper than"),
    ("1+" * 1500 + "1", "longer than"),
    ("min()", "at least 1 argument"),
    ("(1e308*10)%2", "infinite"),
    ("sqrt(-1)", "math domain error"),
])
def test_expressions(tmp_path, expression, message):
    path = tmp_path / "expr.xml"
    path.write_text(world(f'<sphere name="a" mass="{{{expression}}}"><dim radius="1"/></sphere>'))
    diagnostics = refused(path)
    assert (diagnostics[0].line, diagnostics[0].tag) == (4, "sphere")
    assert message in diagnostics[0].message
    assert xml_expr.MAX_LENGTH >= 1000 and xml_expr.MAX_NESTING >= 32


def test_include_cycle_and_depth(tmp_path):
    (tmp_path / "self.xml").write_text('<?xml version="1.0"?>\n<raisim version="1.0">\n'
                                       '<include value="self.xml"/>\n</raisim>\n')
    (d,) = refused(tmp_path / "self.xml")
    assert (d.line, d.tag) == (3, "include") and "include cycle" in d.message
    # a chain of distinct files, each including the next
    depth = raisim_template.MAX_INCLUDE_DEPTH + 5
    for i in range(depth):
        (tmp_path / f"chain{i}.xml").write_text(f'<?xml version="1.0"?>\n<raisim version="1.0">\n'
                                                f'<include value="chain{i + 1}.xml"/>\n</raisim>\n')
    diagnostics = refused(tmp_path / "chain0.xml")
    assert any("includes nested deeper than" in d.message and d.line == 3 for d in diagnostics)


@pytest.mark.parametrize("suffix, root", [(".xml", "raisim"), (".urdf", "robot"), (".xml", "mujoco"),
                                          (".simscene.xml", "CoppeliaSim")])
def test_deep_xml_nesting(tmp_path, suffix, root):
    depth = 100_000
    path = tmp_path / ("deep" + suffix)
    path.write_text(f'<{root}>\n' + "<a>" * depth + "</a>" * depth + f"\n</{root}>\n")
    (d,) = refused(path)
    assert d.line == 2 and d.tag == "a" and f"deeper than {xmltree.MAX_DEPTH}" in d.message


def test_deep_json_nesting(tmp_path):
    path = tmp_path / "deep.jsonc"
    path.write_text('{\n"actors": [],\n"x": ' + "[" * 100_000 + "]" * 100_000 + "\n}\n")
    (d,) = refused(path)
    assert d.line == 3 and f"deeper than {jsonc.MAX_DEPTH}" in d.message


def test_json_hostile_values(tmp_path):
    path = tmp_path / "values.jsonc"
    path.write_text('{\n"actors": [],\n"id": ' + "7" * 5000 + "\n}\n")
    (d,) = refused(path)
    assert d.line == 3 and "5000 digits" in d.message
    path.write_text('{\n"actors": [],\n"id": "a\\ud800b"\n}\n')
    (d,) = refused(path)
    assert d.line == 1 and "lone surrogate" in d.message


def test_airsim_wrong_types(tmp_path):
    """A wrong JSON type where the spec expects a list or an object: a FormatError, not a TypeError."""
    path = tmp_path / "types.jsonc"
    for actors in ("true", "1.5", '"x"', "[true]", '[{"type": "robot", "name": "d", "origin": 5}]',
                   '[{"type": "robot", "name": "d", "origin": {"xyz": true}}]'):
        path.write_text('{\n"id": "s",\n"actors": ' + actors + "\n}\n")
        try:
            registry.read_scene(str(path))
        except FormatError as exc:
            assert exc.first.file == str(path)


def test_rscene_5000_digit_integer(tmp_path):
    path = tmp_path / "big.rscene"
    path.write_text("raisim_engine_scene 2\nterrain_region /T " + "9" * 5000 + " 2 1 1 0 0 0 1 0 0 0 0 0 -\n")
    diagnostics = refused(path)
    assert diagnostics[0].line == 2 and "5000 digits" in diagnostics[0].message


def test_group_parent_cycle_and_missing_parent(tmp_path):
    path = tmp_path / "cycle.rscene"
    path.write_text("raisim_engine_scene 2\ngroup /A id=a parentId=b\ngroup /B id=b parentId=a\n"
                    "group /C id=c parentId=a\ngroup /D id=d parentId=d\n")
    diagnostics = refused(path)
    assert [(d.line, d.tag) for d in diagnostics] == [(2, "group"), (3, "group"), (5, "group")]
    assert "cycle: /A (line 2) -> /B (line 3) -> /A (line 2)" in diagnostics[0].message
    assert "names the group itself" in diagnostics[2].message
    path.write_text("raisim_engine_scene 2\ngroup /A id=a parentId=nowhere\n")
    scene = registry.read_scene(str(path))
    (w,) = scene.warnings
    assert (w.line, w.tag) == (2, "group") and "'nowhere' names no group" in w.message


def test_granular_box_fill_of_two_billion(tmp_path):
    path = tmp_path / "sand.rscene"
    path.write_text("raisim_engine_scene 2\ngranular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 "
                    "boxMin=-1000,-1000,0 boxMax=1000,1000,1000 radius=0.0001 spacing=0.0002 "
                    "maxParticles=2147483647\n")
    (d,) = refused(path)
    assert (d.line, d.tag) == (2, "granular") and str(MAX_BOX_FILL) in d.message


def test_granular_box_fill_within_the_cap_is_read(tmp_path):
    """The same huge box with Engine 2's default cap is fine: only maxParticles particles are made."""
    from rscene_addon.sim.model_builder import build
    path = tmp_path / "sand.rscene"
    path.write_text("raisim_engine_scene 2\ngranular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 "
                    "boxMin=-1000,-1000,0 boxMax=1000,1000,1000 radius=0.0001 spacing=0.0002\n")
    model, _ = build(registry.read_scene(str(path)))
    assert len(model.granular[0].positions) == 20000


def test_cli_prints_file_line_and_exits_nonzero(tmp_path):
    path = tmp_path / "deep.urdf"
    path.write_text("<robot>\n" + "<a>" * 5000 + "</a>" * 5000 + "\n</robot>\n")
    result = subprocess.run([sys.executable, "-m", "rscene_addon", "validate", str(path)], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"{path}:2 (a): error: elements nested deeper than" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_validate_names_the_file_even_when_a_reader_fails(tmp_path, monkeypatch, capsys):
    """The last line of defence: a reader bug is reported against its file, exit 1, the next file is read."""
    from rscene_addon import cli
    good = tmp_path / "good.rscene"
    good.write_text("raisim_engine_scene 2\n")
    original = registry.read_scene

    def flaky(path):
        if path.endswith("bad.rscene"):
            raise TypeError("'bool' object is not iterable")
        return original(path)

    monkeypatch.setattr(registry, "read_scene", flaky)
    assert cli.main(["validate", str(tmp_path / "bad.rscene"), str(good)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'bad.rscene'}: INVALID (the reader failed: TypeError" in out
    assert f"{good}: OK" in out


def _terrain_world(samples: int, octaves: int) -> str:
    return world(f'<heightmap name="t" x_sample="{samples}" y_sample="{samples}" x_size="20" y_size="20" '
                 'center_x="0" center_y="0">\n<terrainProperties frequency="0.2" z_scale="3.0" '
                 f'fractal_octaves="{octaves}" fractal_lacunarity="2.0" fractal_gain="0.25" step_size="0" '
                 'seed="0"/>\n</heightmap>')


def test_generated_terrain_limits(tmp_path):
    """A generated height map's samples and octaves are bounded before generating."""
    from rscene_addon.formats import terrain_gen
    path = tmp_path / "terrain.xml"
    path.write_text(_terrain_world(8192, 3))
    (d,) = refused(path)
    assert (d.line, d.tag) == (4, "heightmap") and "8192 x 8192" in d.message
    path.write_text(_terrain_world(50, 10**9))
    (d,) = refused(path)
    assert (d.line, d.tag) == (5, "terrainProperties") and f"1 to {terrain_gen.MAX_OCTAVES}" in d.message
    path.write_text(_terrain_world(1000, 3))
    (d,) = refused(path)
    assert (d.line, d.tag) == (4, "heightmap") and "sample-octaves" in d.message
    path.write_text(_terrain_world(50, 3))
    assert registry.read_scene(str(path)).of("terrain_region")


def test_png_claiming_too_many_pixels(tmp_path):
    """A few kilobytes of PNG claiming 8192 x 8192 pixels: refused from the header."""
    import struct
    import zlib

    from rscene_addon.formats import png

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8192, 8192, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(8193 * 64))) + chunk(b"IEND", b""))
    with pytest.raises(png.PngError, match="larger than"):
        png.decode_grey(data)


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1,}', '{"a": 1 }'),
    ('[1, /* c */ ]', '[1' + ' ' * 10 + ']'),
    ('{"a": "x,}//"} // c\n', '{"a": "x,}//"}     \n'),
    (', // c\n ]', ' ' * 6 + '\n ]'),
    ('/* a\nb */,]', '    \n' + ' ' * 5 + ']'),
    ('"b\\"c", }', '"b\\"c"  }'),
    ('"open, }', '"open, }'),
    (',/* ** */]', '         ]'),
    ('/* never closed ,]', '                  '),
])
def test_jsonc_comments_and_trailing_commas(text, expected):
    assert jsonc.strip_comments(text) == expected


def test_jsonc_comment_runs_do_not_backtrack():
    """Thousands of comments after a comma that is not trailing: one linear pass (the alarm guards it)."""
    text = "[1," + "/* c */ // d\n" * 20000 + "2]"
    assert jsonc.strip_comments(text).count("\n") == 20000
    assert jsonc.loads(text) == [1, 2]
