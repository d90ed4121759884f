"""xmltree.parse_elements (ElementTree, lines found on demand) against xmltree.parse (the Node tree with a line
per element, built by expat handlers): the same elements, text, attributes, lines and errors."""
from __future__ import annotations

import pytest

from rscene_addon.formats import xmltree
from rscene_addon.model import FormatError
from tests.corpus import CORPUS

from .conftest import DATA


def _real_files() -> list:
    files = sorted(DATA.glob("*.xml"))
    for folder in ("raisim_xml", "mjcf", "urdf"):
        files += sorted((CORPUS / folder).rglob("*.xml"))[:15] + sorted((CORPUS / folder).rglob("*.urdf"))[:5]
    return [f for f in files if f.stat().st_size < 2_000_000]


HAND = {
    "mixed text": "<r>\n<a>x<b>1</b>y<!--c-->z<c/>w</a>\n</r>",
    "cdata and entities": "<r><a><![CDATA[a<b]]> &amp; &#65;&#x42;</a>\n\n<b/></r>",
    "before the root": "\ufeff\n\njunk text\n<?xml version='1.0'?>\n<r>\n<a>1</a></r>\n",
    "crlf": "<r>\r\n<a>1\r\n2</a>\r\n<b>\r</b></r>",
    "processing instruction": "<r><?pi data?><a>1</a></r>",
}

BAD = {
    "syntax": "<r>\n<a>\n</r>",
    "no root": "   \n",
    "junk after": "<r/>\n<s/>",
    "undefined entity": "<r>\n<a>&nope;</a></r>",
    "duplicate attribute": '<r>\n<a x="1" x="2"/></r>',
    "too deep": "<r>\n" + "<a>\n" * 130 + "</a>" * 130 + "</r>",
}

READ_AS_WRITTEN = {  # what ElementTree's parser would read otherwise: these go through parse() itself
    "namespace": '<r xmlns:q="urn:q">\n<q:a q:x="1">t</q:a></r>',
    "unbound prefix": "<r>\n<q:a/></r>",
    "xml prefix": '<r>\n<a xml:lang="en">t</a></r>',
    "doctype": '<!DOCTYPE r [<!ENTITY e "ent">]>\n<r>\n<a>&e;</a></r>',
    "deepest allowed": "<r>\n" + "<a>\n" * 127 + "</a>" * 127 + "</r>",
}


def _same(text: str, path: str = "doc.xml") -> None:
    try:
        nodes = list(xmltree.parse(text, path).iter())
    except FormatError as error:  # (some real files are not well formed)
        with pytest.raises(FormatError) as got:
            xmltree.parse_elements(text, path)
        assert str(got.value) == str(error)
        return
    root, lines = xmltree.parse_elements(text, path)
    elements = list(root.iter())
    assert [n.tag for n in nodes] == [e.tag for e in elements]
    assert [n.text for n in nodes] == [xmltree.element_text(e) for e in elements]
    assert [n.attrib for n in nodes] == [e.attrib for e in elements]
    assert [n.line for n in nodes] == [lines.line(e) for e in elements]
    assert [len(n.children) for n in nodes] == [len(e) for e in elements]


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name)
def test_real_files_read_alike(path):
    _same(path.read_text(encoding="utf-8", errors="replace"), str(path))


@pytest.mark.parametrize("text", list(HAND.values()) + list(READ_AS_WRITTEN.values()),
                         ids=list(HAND) + list(READ_AS_WRITTEN))
def test_awkward_texts_read_alike(text):
    _same(text)


@pytest.mark.parametrize("text", list(BAD.values()), ids=list(BAD))
def test_errors_alike(text):
    with pytest.raises(FormatError) as expected:
        xmltree.parse(text, "bad.xml")
    with pytest.raises(FormatError) as got:
        xmltree.parse_elements(text, "bad.xml")
    assert str(got.value) == str(expected.value)


def test_root_line_alone_does_not_count_every_line():
    """A message about the root (the commonest: a missing <filetype>) costs a parse up to the root only."""
    root, lines = xmltree.parse_elements("\n\n<r>\n<a/>\n<b/>\n</r>")
    assert lines.line(root) == 3 and lines._table is None
    assert lines.line(root[1]) == 5 and lines._table is not None
