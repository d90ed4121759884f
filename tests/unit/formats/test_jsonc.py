"""The JSONC fast path (json's C scanner plus one brace scan for object lines) gives what the exact path
(comments blanked, the Python scanner noting each object's line) gives."""
from __future__ import annotations

import json

import pytest

from rscene_addon.formats import jsonc
from rscene_addon.model import FormatError
from tests import corpus


def _lines(value, out):
    if isinstance(value, dict):
        out.append(value.line)
        for item in value.values():
            _lines(item, out)
    elif isinstance(value, list):
        for item in value:
            _lines(item, out)
    return out


TRICKY = '{\n "a": "{ not an object }",\n "b": [\n  {"c": "quote \\" and { brace"},\n  {}\n ],\n' \
         ' "d": {"e": {"f": [1, 2.5, -3e2]}}, "g": "\\\\"\n}\n'


def test_fast_path_lines_match_the_exact_path_on_braces_inside_strings():
    fast, exact = jsonc._parse_fast(TRICKY), jsonc._parse_exact(TRICKY, "t.json")
    assert fast == exact == json.loads(TRICKY)
    assert _lines(fast, []) == _lines(exact, []) == [1, 4, 5, 7, 7]


def test_fast_path_lines_match_the_exact_path_on_the_corpus():
    files = [p for p in corpus.CORPUS.rglob("*.json*") if p.is_file()] if corpus.CORPUS.exists() else []
    if not files:
        corpus.require_corpus()
    checked = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape").removeprefix("\ufeff")
        try:
            fast = jsonc._parse_fast(text)
        except (ValueError, RecursionError):
            continue  # comments or trailing commas: the exact path's job
        exact = jsonc._parse_exact(text, str(path))
        assert fast == exact and _lines(fast, []) == _lines(exact, []), path
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("text, message", [('{"a": NaN}', "not finite"), ('{"a": 1e999}', "not finite"),
                                           ('{"a": "\\ud800"}', "lone surrogate"), ('{"a": 1,}\n// c\n', None)])
def test_what_the_c_scanner_accepts_is_still_checked(text, message):
    if message is None:
        assert jsonc.loads(text) == {"a": 1}
        return
    with pytest.raises(FormatError, match=message):
        jsonc.loads(text, "x.json")


@pytest.mark.parametrize("text", [
    '{"a": [1, -Infinity]}', '{"a": {"b": [2.5e308]}}', '[' * 70 + ']' * 70, '{"a":' * 65 + '1' + '}' * 65,
    '{"a": [[' + '{"b": ' * 63 + '[]' + '}' * 63 + ']]}', '{"a": 18446744073709551616}', '[-9223372036854775809]',
    '{"a": 18446744073709551615, "b": [-9223372036854775808]}', '{"a": [1.5e300, -1e-400]}', '[' * 64 + ']' * 64])
def test_the_walk_is_skipped_only_where_it_would_find_nothing(text):
    """``loads`` skips ``_check_values`` when the scanner saw nothing suspect; what the walk itself says
    about the parsed value (an error or none) is what ``loads`` says, the text at line 1 or spread over lines."""
    for shown in (text, text.replace(",", ",\n")):
        value = json.loads(shown)  # the C scanner accepts every case (its recursion limit is far deeper)
        try:
            jsonc._check_values(value, "x.json")
            expected = None
        except FormatError as exc:
            expected = str(exc).replace(":1:", ":L:")
        try:
            jsonc.loads(shown, "x.json")
            got = None
        except FormatError as exc:
            got = str(exc).replace(":1:", ":L:")
        if expected is None:
            assert got is None, shown
        else:  # the walk on a value without lines names line 1; loads names the real line
            assert got is not None and got.split(": ", 1)[1] == expected.split(": ", 1)[1], shown
