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
