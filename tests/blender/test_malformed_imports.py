"""Malformed and hostile files through the import operators: the error is reported naming the file and
``bpy.data`` is left exactly as it was (every collection of ``bpy.data`` counted before and after).

The inputs are the fuzz regressions (files that once crashed a reader) and hand-made hostile files, for
every format that has an import operator.
"""
from __future__ import annotations

import bpy
import pytest

from rscene_addon.formats import registry
from rscene_addon.model import FormatError
from tests.fuzzing import harness

OPERATORS = {"rscene": "rscene", "raisim_xml": "raisim_xml", "coppelia_xml": "coppelia_xml",
             "airsim": "airsim_scene"}
TABLE = harness.readers()
CASES = [case for case in harness.regression_cases(TABLE) if case[0].name in OPERATORS]
HOSTILE = {
    "rscene": ("no_header.rscene", "# a scene\ngroup /A\n"),
    "raisim_xml": ("array.xml", '<?xml version="1.0"?>\n<raisim version="1.0"><objects>\n'
                   '<array idx="@@i" start="0" end="1000000000" increment="1">'
                   '<sphere name="s@@i" mass="1"><dim radius="1"/></sphere></array>\n</objects></raisim>\n'),
    "coppelia_xml": ("deep.simscene.xml", "<CoppeliaSim>\n" + "<a>" * 3000 + "</a>" * 3000 + "\n</CoppeliaSim>\n"),
    "airsim": ("deep.jsonc", '{\n"actors": ' + "[" * 3000 + "]" * 3000 + "\n}\n"),
}


def counts() -> dict[str, int]:
    """The length of every collection of bpy.data."""
    out = {}
    for name in dir(bpy.data):
        value = getattr(bpy.data, name, None)
        if isinstance(value, bpy.types.bpy_prop_collection):
            out[name] = len(value)
    return out


@pytest.fixture(scope="module")
def workspace():
    space = harness.Workspace()
    yield space
    space.close()


def import_refused(fmt: str, path: str) -> None:
    """The operator reports the reader's error (bpy.ops raises it in background mode); nothing is made."""
    before = counts()
    operator = getattr(bpy.ops.import_scene, OPERATORS[fmt])
    with pytest.raises(RuntimeError) as info:
        operator(filepath=path)
    assert path.rsplit("/", 1)[-1] in str(info.value)
    assert counts() == before


@pytest.mark.parametrize("fmt", sorted(HOSTILE))
def test_hostile_file_leaves_bpy_data_untouched(blank, tmp_path, fmt):
    name, text = HOSTILE[fmt]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FormatError):
        registry.read_scene(str(path))
    import_refused(fmt, str(path))


@pytest.mark.parametrize("reader, seed, source", CASES, ids=[f"{r.name}/{p.name}" for r, _, p in CASES])
def test_fuzz_regression_through_the_operator(blank, workspace, reader, seed, source):
    """A regression input the reader refuses is refused by the operator with bpy.data unchanged; one the
    reader accepts imports, or fails reported with bpy.data unchanged (never a half-built scene)."""
    path = workspace.target(seed, reader)
    with open(path, "wb") as handle:
        handle.write(source.read_bytes())
    try:
        registry.read_scene(path)
    except FormatError:
        import_refused(reader.name, path)
        return
    before = counts()
    operator = getattr(bpy.ops.import_scene, OPERATORS[reader.name])
    try:
        assert operator(filepath=path) == {"FINISHED"}
    except RuntimeError:
        assert counts() == before
