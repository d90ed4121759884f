"""Line-aware XML and JSONC parsing, shared by the readers."""
from __future__ import annotations

import pytest

from rscene_addon.formats import jsonc, xmltree
from rscene_addon.model import FormatError


def test_xml_lines_and_text_before_the_declaration():
    text = "\n\nstray text\n<?xml version='1.0'?>\n<a x='1'>\n  <b/>\n  <c>hi</c>\n</a>\n"
    root = xmltree.parse(text, "t.xml")
    assert (root.tag, root.line, root.attrib) == ("a", 5, {"x": "1"})
    assert [(c.tag, c.line) for c in root.children] == [("b", 6), ("c", 7)]
    assert root.child_text("c") == "hi"


def test_xml_syntax_error_names_the_line():
    with pytest.raises(FormatError) as info:
        xmltree.parse("<a>\n<b>\n</a>\n", "bad.xml")
    assert info.value.first.file == "bad.xml" and info.value.first.line == 3


def test_jsonc_comments_commas_and_lines():
    text = '{\n  // note: "quoted" /* not */\n  "a": "x//y", /* block\n comment */ "b": [1, 2,],\n  "c": {"d": 1,},\n}\n'
    data = jsonc.loads(text)
    assert data == {"a": "x//y", "b": [1, 2], "c": {"d": 1}}
    assert data.line == 1 and data["c"].line == 5


def test_jsonc_error_line():
    with pytest.raises(FormatError) as info:
        jsonc.loads('{\n "a": 1\n "b": 2\n}', "s.jsonc")
    assert info.value.first.line == 3 and info.value.first.file == "s.jsonc"


def test_xml_writer_escapes():
    out = xmltree.XmlWriter()
    out.open("a", {"q": 'x"<y>&'})
    out.leaf("b", "1 < 2 & 3")
    out.cdata("c", "end ]]> here")
    out.close("a")
    root = xmltree.parse(out.text())
    assert root.get("q") == 'x"<y>&'
    assert root.child_text("b") == "1 < 2 & 3"
    assert root.find("c").text == "end ]]> here"


def test_path_allocator_matches_a_walk_of_every_suffix():
    """Repeated names get the first free ``_n``, also when a name such as ``a_1`` was taken directly;
    the remembered suffix per base gives what a walk from ``_1`` gives (reference: that walk)."""
    import random

    from rscene_addon.formats.sceneutil import PathAllocator

    def walk(used, name, parent):
        base = f"{(parent or '/World').rstrip('/')}/{name}"
        path, n = base, 0
        while path in used:
            n += 1
            path = f"{base}_{n}"
        used.add(path)
        return path

    rng = random.Random(3)
    for _ in range(100):
        allocator, used = PathAllocator(), set()
        for _ in range(80):
            name, parent = rng.choice(["a", "a_1", "a_2", "b", "a_1_1", "b_3"]), rng.choice([None, "/World/x"])
            assert allocator.take(name, parent) == walk(used, name, parent)
    allocator = PathAllocator()
    assert [allocator.take("a") for _ in range(3)] + [allocator.take("a_3"), allocator.take("a")] == \
        ["/World/a", "/World/a_1", "/World/a_2", "/World/a_3", "/World/a_4"]
