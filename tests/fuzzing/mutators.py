"""Mutations of scene files, as an attacker or a careless tool would make them.

Every mutation takes the text and a ``Chooser`` (where its random decisions come from) and returns new
text. The same mutations serve the bounded pytest run (hypothesis draws the decisions, so failures shrink
and replay) and the long run of ``scripts/fuzz_readers.py`` (a seeded ``random.Random`` draws them, which
is much faster per input).
"""
from __future__ import annotations

import json
import random
import re

# Numbers a careless or hostile writer puts where a sane one was.
HOSTILE_NUMBERS = (
    "nan", "NaN", "-nan", "inf", "-inf", "1e309", "-1e309", "1e308", "1e-400", "0", "-0", "-1", "-1e9",
    "2147483647", "2147483648", "-2147483649", "4294967296", "9223372036854775808", "18446744073709551616",
    "1" * 5000, "-" + "9" * 5000, "0." + "1" * 5000, "1e99999", "0x10", "1_000", "١٢", "1e", ".", "+",
    "1000000000", "100000", "65536", "3.5", "1e6",
)
JUNK = ("\x00", "\ufffd", "\u202e", "\U0001f600", "\ud800", "\udfff", "\x7f", "\x1b[2J", "é", "\u2028",
        "\ufeff", "%", "%ZZ", "=", ";", "\t", "\\", '"', "'", "<", ">", "&", "&amp;", "]]>", "{", "}", "@@x",
        "{1/0}", "{sqrt(-1)}", "{exp(1000)}", "{min()}", "{__import__('os')}", "\\ud800")
JSON_VALUES = (True, False, None, 0, -1, 1.5, 1e308, "", "x", [], {}, [1, 2], {"a": 1}, [[[]]], [[1], [1, 2]], "nan",
               10 ** 40, -(10 ** 40))
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# starts only at a name's first character and never backtracks into it: linear on 5000-digit runs
_ATTR = re.compile(r"""(?<![\w:.-])([\w:.-]++)\s*+=\s*+("[^"]*"|'[^']*')""")
_TAG = re.compile(r"<([A-Za-z_][\w.:-]*)")


class Chooser:
    """Where a mutation's decisions come from."""

    def int(self, lo: int, hi: int) -> int:  # inclusive
        raise NotImplementedError

    def choice(self, items):
        return items[self.int(0, len(items) - 1)]


class RandomChooser(Chooser):
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)


class DataChooser(Chooser):
    """Decisions drawn from hypothesis' ``st.data()``, so failing inputs shrink and replay."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self.data = data
        self.st = st

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_lines(text, ch, ctx):
    lines = _lines(text)
    i = ch.int(0, len(lines) - 1)
    n = ch.int(1, 3)
    return "\n".join(lines[:i] + lines[i + n:])


def duplicate_line(text, ch, ctx):
    lines = _lines(text)
    i = ch.int(0, len(lines) - 1)
    times = ch.choice((1, 1, 2, 50))
    return "\n".join(lines[:i] + [lines[i]] * (times + 1) + lines[i + 1:])


def swap_lines(text, ch, ctx):
    lines = _lines(text)
    i, j = ch.int(0, len(lines) - 1), ch.int(0, len(lines) - 1)
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def splice_line(text, ch, ctx):
    """A line of another corpus file (any format) in a random place."""
    lines = _lines(text)
    other = ctx["foreign_lines"]
    if not other:
        return text
    lines.insert(ch.int(0, len(lines)), ch.choice(other))
    return "\n".join(lines)


def replace_number(text, ch, ctx):
    spans = [m.span() for m in _NUMBER.finditer(text)]
    if not spans:
        return text
    a, b = ch.choice(spans)
    return text[:a] + ch.choice(HOSTILE_NUMBERS) + text[b:]


def replace_all_numbers_on_line(text, ch, ctx):
    lines = _lines(text)
    i = ch.int(0, len(lines) - 1)
    value = ch.choice(HOSTILE_NUMBERS)
    lines[i] = _NUMBER.sub(value, lines[i])
    return "\n".join(lines)


def replace_attribute(text, ch, ctx):
    """An XML attribute's value replaced (numbers, junk, expressions, deep expressions, empty)."""
    spans = [m.span(2) for m in _ATTR.finditer(text)]
    if not spans:
        return replace_number(text, ch, ctx)
    a, b = ch.choice(spans)
    kind = ch.int(0, 4)
    if kind == 0:
        value = ch.choice(HOSTILE_NUMBERS)
    elif kind == 1:
        value = ch.choice(JUNK)
    elif kind == 2:
        depth = ch.choice((10, 200, 5000))
        value = "{" + "(" * depth + "1" + ")" * depth + "}"
    elif kind == 3:
        value = "{" + ch.choice(("-", "+", "!", "1+")) * ch.choice((10, 3000)) + "1}"
    else:
        value = ""
    return text[:a] + '"' + value.replace('"', "&quot;") + '"' + text[b:]


def truncate(text, ch, ctx):
    return text[:ch.int(0, len(text))]


def insert_junk(text, ch, ctx):
    i = ch.int(0, len(text))
    return text[:i] + ch.choice(JUNK) * ch.choice((1, 1, 3, 100)) + text[i:]


def line_endings(text, ch, ctx):
    """CR/CRLF mixes: some or all newlines replaced."""
    lines = _lines(text)
    style = ch.int(0, 2)
    if style == 0:
        return "\r\n".join(lines)
    if style == 1:
        return "\r".join(lines)
    out = lines[0]
    for line in lines[1:]:
        out += ch.choice(("\n", "\r\n", "\r", "\n\r")) + line
    return out


def deep_nesting(text, ch, ctx):
    """Deeply nested structure of the file's own kind at a line boundary."""
    depth = ch.choice((50, 1000, 3000, 20000))  # all far past every nesting limit
    lines = _lines(text)
    i = ch.int(0, len(lines))
    fmt = ctx["reader"]
    if fmt == "airsim":
        tags = [m.group(0) for m in re.finditer(r'"[A-Za-z_-]+"\s*:', text)] or ['"a":']
        blob = (ch.choice(tags) + " [") * depth + "]" * depth + ","
        blob = blob if ch.int(0, 1) else "[" * depth + "]" * depth
    elif fmt == "rscene":
        blob = "group path=/" + "a/" * depth + " parentId=" + "x" * 10
    else:
        names = [m.group(1) for m in _TAG.finditer(text)] or ["a"]
        name = ch.choice(names)
        blob = f"<{name}>" * depth + f"</{name}>" * depth
    lines.insert(i, blob)
    return "\n".join(lines)


def json_retype(text, ch, ctx):
    """A JSON value replaced by one of another type (what a wrong config tool writes)."""
    from rscene_addon.formats import jsonc
    try:
        data = json.loads(jsonc.strip_comments(text))
    except (ValueError, RecursionError):
        return replace_number(text, ch, ctx)
    slots = []
    stack = [data]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            slots.append((node, key))
            stack.append(value)
    if not slots:
        return text
    for _ in range(ch.int(1, 3)):
        node, key = ch.choice(slots)
        node[key] = ch.choice(JSON_VALUES)
    return json.dumps(data, indent=ch.choice((None, 2)))


def json_retype_key(text, ch, ctx):
    """Every value of one JSON key (``"links"``, ``"capture-settings"``, ...) swapped for a value of
    another JSON type: a number where a list is expected, an object where a string is, and so on."""
    from rscene_addon.formats import jsonc
    try:
        data = json.loads(jsonc.strip_comments(text))
    except (ValueError, RecursionError):
        return leading_zeros(text, ch, ctx)
    holders: dict[str, list] = {}
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                holders.setdefault(key, []).append(node)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    if not holders:
        return text
    key = ch.choice(sorted(holders))
    for node in holders[key] if ch.int(0, 1) else [ch.choice(holders[key])]:
        others = [v for v in JSON_VALUES if _json_type(v) != _json_type(node[key])]
        node[key] = ch.choice(others)
    return json.dumps(data, indent=ch.choice((None, 2)))


def _json_type(value) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    return "number" if isinstance(value, (int, float)) else type(value).__name__


# Openers whose terminator a careless regex searches for from every occurrence (quadratic when absent).
PROLOG_RUNS = ("<?", "<?x", "<?xml", "<!--", "<!DOCTYPE", "<![CDATA[", "<!", "/*", '"', "{")


def prolog_runs(text, ch, ctx):
    """A long run of an unclosed opener (``<?``, ``<!--``, ...) at the start or at a line boundary."""
    run = ch.choice(PROLOG_RUNS) * ch.choice((100, 5000, 40000))
    lines = _lines(text)
    i = ch.choice((0, 0, ch.int(0, len(lines))))
    lines.insert(i, run)
    return "\n".join(lines)


def leading_zeros(text, ch, ctx):
    """A number written with leading zeros (``0002``, or 400 zeros then ``2``): the same value to a
    lenient parser, an overflow or a refusal to a careless one."""
    spans = [m.span() for m in _NUMBER.finditer(text)]
    if not spans:
        return text
    a, b = ch.choice(spans)
    sign = text[a] if text[a] in "+-" else ""
    return text[:a] + sign + "0" * ch.choice((1, 3, 400, 5000)) + text[a + len(sign):b] + text[b:]


# A file a scene may name: these are replaced by special files in ``special_file``. A path-like token, then
# its last file extension inside it: two linear scans (one regex ``[\w./-]+\.(?:png|...)\b`` backtracks
# from every start in a long run of word characters, and the mutations make such runs: 67 CPU-s per 17 inputs)
_TOKEN = re.compile(r"[\w./-]+")
_EXTENSION = re.compile(r"\.(?:png|urdf|txt|xml|obj|stl|ply|dae|rasset|jsonc|json|rscene)(?!\w)")


def _references(text: str) -> list[tuple[int, int]]:
    """Spans of file references in ``text``: each token up to the end of its last extension."""
    spans = []
    for token in _TOKEN.finditer(text):
        last = None
        for last in _EXTENSION.finditer(token.group()):  # noqa: B007 - the last one is kept
            pass
        if last is not None:
            spans.append((token.start(), token.start() + last.end()))
    return spans


def special_files() -> tuple:
    """Paths that are not regular files: a FIFO (made once, blocks ``open()``), endless and empty devices,
    a folder."""
    import os
    import tempfile
    folder = os.path.join(tempfile.gettempdir(), f"rscene-fuzz-special-{os.getuid()}")
    fifo = os.path.join(folder, "fifo.png")
    if not os.path.exists(fifo):
        os.makedirs(folder, exist_ok=True)
        try:
            os.mkfifo(fifo)
        except FileExistsError:
            pass
    return (fifo, "/dev/zero", "/dev/urandom", "/dev/null", folder, "/dev/stdin")


def special_file(text, ch, ctx):
    """A file reference (height map, URDF, mesh, config, include) replaced by a FIFO, a device or a
    folder."""
    spans = _references(text)
    if not spans:
        return insert_junk(text, ch, ctx)
    a, b = ch.choice(spans)
    return text[:a] + ch.choice(special_files()) + text[b:]


MUTATIONS = (delete_lines, duplicate_line, swap_lines, splice_line, replace_number, replace_all_numbers_on_line,
             replace_attribute, truncate, insert_junk, line_endings, deep_nesting, json_retype, json_retype_key,
             prolog_runs, leading_zeros, special_file)


def mutate(text: str, ch: Chooser, ctx: dict) -> str:
    """1 to 4 random mutations of ``text`` (``ctx``: reader name, lines of other files to splice in)."""
    if ctx["reader"].startswith("airsim") and ch.int(0, 1):
        # most text mutations break JSON's syntax, which the first parse refuses; half of the JSON inputs
        # stay valid JSON so that the reader's handling of every key's value gets exercised
        for _ in range(ch.int(1, 3)):
            text = ch.choice((json_retype, json_retype_key, json_retype_key))(text, ch, ctx)
        return text
    for _ in range(ch.int(1, 4)):
        text = ch.choice(MUTATIONS)(text, ch, ctx)
    return text


def to_bytes(text: str, ch: Chooser) -> bytes:
    """Encoded as a careless tool would: lone surrogates as their (invalid) UTF-8, sometimes a BOM or a
    stray invalid byte."""
    data = text.encode("utf-8", "surrogatepass")
    extra = ch.int(0, 9)
    if extra == 0:
        data = b"\xef\xbb\xbf" + data
    elif extra == 1 and data:
        i = ch.int(0, len(data))
        data = data[:i] + ch.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00")) + data[i:]
    return data


def mutate_bytes(data: bytes, ch: Chooser, ctx: dict) -> bytes:
    """Binary files (PNG): flipped bytes, truncation, huge header fields (CRC fixed up half of the time)."""
    import struct
    import zlib
    data = bytearray(data)
    for _ in range(ch.int(1, 3)):
        kind = ch.int(0, 3)
        if kind == 0 and data:
            data[ch.int(0, len(data) - 1)] = ch.int(0, 255)
        elif kind == 1:
            del data[ch.int(0, len(data)):]
        elif kind == 2 and len(data) >= 33:  # IHDR: width, height, depth, colour, ..., interlace
            field = ch.int(0, 6)
            offsets = (16, 20, 24, 25, 26, 27, 28)
            if field < 2:
                struct.pack_into(">I", data, offsets[field], ch.choice((0, 1, 2**31 - 1, 2**32 - 1, 65535)))
            else:
                data[offsets[field]] = ch.int(0, 255)
            if ch.int(0, 1):
                struct.pack_into(">I", data, 29, zlib.crc32(bytes(data[12:29])) & 0xFFFFFFFF)
        elif kind == 3:
            i = ch.int(0, len(data))
            data[i:i] = bytes(ch.int(0, 255) for _ in range(ch.int(1, 16)))
    return bytes(data)
