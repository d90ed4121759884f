"""JSON with comments (JSONC): ``//`` and ``/* */`` comments outside strings and trailing commas.

``loads`` keeps the position of every object: objects come back as ``JsonObject`` (a ``dict``) whose
``line`` is the 1-based line of its ``{``, so that errors about a value can name ``file:line``. Comments are
replaced by spaces (newlines kept), so JSON syntax errors also report the right line.
"""
from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import re

from ..model import Diagnostic, FormatError
from .atomic import read_source

__all__ = ["JsonObject", "dumps", "load", "loads", "strip_comments"]


class JsonObject(dict):
    """A JSON object that remembers the line it starts on (0 if unknown)."""

    line = 0


# One pass of the regex engine (a character loop in Python cost ~25 ms per 100 kB): strings are kept as
# they are, comments blanked (newlines kept, so lines stay right), and a comma is dropped when only white
# space and comments stand between it and a closing bracket.
# Atomic groups and a block-comment body that cannot run past its ``*/`` keep the engine from backtracking.
_COMMENT = r"//[^\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)"
_LEXEME = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)|' + _COMMENT
                     + r"|,(?=(?>\s+|" + _COMMENT + r")*+[}\]])", re.DOTALL)
_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(match: re.Match) -> str:
    lexeme = match.group(0)
    if lexeme[0] == '"':
        return lexeme
    if lexeme == ",":
        return " "
    return _NOT_NEWLINE.sub(" ", lexeme)


def strip_comments(text: str) -> str:
    """Blank out comments and trailing commas, keeping every newline and every string intact."""
    if "/" not in text and "," not in text:
        return text
    return _LEXEME.sub(_blank, text)


def _decoder(text: str) -> json.JSONDecoder:
    line_of = _LineIndex(text)

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        start = s_and_end[1] - 1
        value, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, JsonObject, memo)
        value.line = line_of(start)
        return value, end

    decoder = json.JSONDecoder(parse_int=_parse_int)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder


class _IntTooLong(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text) > 40:  # far beyond 64 bits; Python's int() refuses 4300+ digits with an internal message
        raise _IntTooLong(text)
    return int(text)


MAX_DEPTH = 64  # nesting of objects and arrays; real scene configs nest less than 10 deep


def _too_deep_line(text: str) -> int:
    """The line where nesting first passes MAX_DEPTH (strings skipped), for the error message."""
    depth, line, in_string, escaped = 0, 1, False, False
    for c in text:
        if c == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif c in "]}":
            depth -= 1
    return 0


class _LineIndex:
    def __init__(self, text: str):
        import bisect
        self._bisect = bisect.bisect_right
        self.newlines = [m.start() for m in re.finditer("\n", text)]  # per line, not per character

    def __call__(self, pos: int) -> int:
        return self._bisect(self.newlines, pos - 1) + 1 if pos > 0 else 1


def loads(text: str, path: str = "<string>"):
    """Parse JSONC text. Raises ``FormatError`` naming the line of a syntax error."""
    text = text.removeprefix("\ufeff")
    suspects: list[str] | None = []
    try:  # plain JSON (most files, and every big one): no comment or trailing comma to strip
        value = _parse_fast(text, suspects)
    except (ValueError, RecursionError):  # comments, trailing commas or an error: the exact path names it
        value = _parse_exact(text, path)
        suspects = None
    # ASCII text without a surrogate escape (most files, and every big one) cannot hold a lone surrogate:
    # the walk then looks at no string
    strings = not text.isascii() or _SURROGATE_ESCAPE.search(text) is not None
    if suspects is None or suspects or strings or not _all_finite(value):
        _check_values(value, path, strings=strings)
    return value


def _all_finite(value) -> bool:
    """Whether no float of ``value`` is a NaN or an infinity (an overflowing literal such as ``1e999`` is
    one): the C encoder refuses them, and looks at every value faster than the walk of ``_check_values``."""
    try:
        json.dumps(value, allow_nan=False, check_circular=False, ensure_ascii=False)
    except (ValueError, RecursionError):
        return False
    return True


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _parse_exact(text: str, path: str):
    clean = strip_comments(text)
    try:
        return _decoder(clean).decode(clean)
    except json.JSONDecodeError as exc:
        raise FormatError(Diagnostic(path, exc.lineno, "", f"JSON syntax error: {exc.msg} (column {exc.colno})")) from None
    except _IntTooLong as exc:
        line = _LineIndex(clean)(clean.find(str(exc)))
        raise FormatError(Diagnostic(path, line, "", f"integer of {len(str(exc))} digits is out of range")) from None
    except RecursionError:
        line = _too_deep_line(clean)
        raise FormatError(Diagnostic(path, line, "", f"objects and arrays nested deeper than {MAX_DEPTH} levels")) from None


# Text up to the next bracket outside a string, then the bracket: one match per bracket, strings skipped
# whole. (A string's plain characters as possessive runs, not one alternation per character: a third of the
# scan.)
_NEXT_BRACKET = re.compile(r'(?:"(?:[^"\\]++|\\.)*+"|[^"{}\[\]]++)*+([{}\[\]])', re.DOTALL)


def _parse_fast(text: str, suspects: list[str] | None = None):
    """``json``'s C scanner (the Python one that ``_decoder`` needs to see where an object starts was
    ~30x slower: seconds for a 100k-actor scene), then each object's line from one scan of the brackets.
    The scanner makes objects as their ``}`` closes, so they pair with the ``{`` positions in the order
    a stack pops them.

    ``suspects`` collects what ``_check_values`` must look at (the constants NaN and Infinity, integers
    too long to be sure of, nesting deeper than MAX_DEPTH): when it stays empty, and no float overflowed,
    the walk is not needed (a tenth of reading a 10^5-actor scene)."""
    made = []
    if suspects is None:
        suspects = []

    def hook(pairs):
        obj = JsonObject(pairs)
        made.append(obj)
        return obj

    def parse_int(digits: str) -> int:
        if len(digits) > 18:  # maybe beyond the 64-bit range: the walk decides
            suspects.append(digits)
        return _parse_int(digits)

    def parse_constant(name: str) -> float:
        suspects.append(name)
        return float(name.replace("Infinity", "inf"))

    value = json.JSONDecoder(object_pairs_hook=hook, parse_int=parse_int,
                             parse_constant=parse_constant).decode(text)
    stack, starts = [], []
    for match in _NEXT_BRACKET.finditer(text):
        bracket = match.group(1)
        if bracket == "{" or bracket == "[":
            stack.append(match.end() - 1)
            if len(stack) > MAX_DEPTH:
                suspects.append("depth")
        elif stack:
            start = stack.pop()
            if bracket == "}":
                starts.append(start)
    if not made:
        return value
    if len(starts) != len(made):  # cannot happen for text the scanner accepted; the exact path is right
        raise ValueError("brace count")
    # _LineIndex's rule (the lines before ``start - 1``, plus one) for every object in one numpy call
    import numpy as np
    newlines = np.asarray(_LineIndex(text).newlines, dtype=np.int64)
    lines = np.searchsorted(newlines, np.asarray(starts, dtype=np.int64) - 1, side="right") + 1
    for obj, line in zip(made, lines.tolist()):
        obj.line = line
    return value


def _check_values(value, path: str, strings: bool = True) -> None:
    """Reject NaN, infinities, integers beyond 64 bits (Python's json accepts them), strings holding lone
    surrogates (``"\\ud800"``: not text) and nesting deeper than MAX_DEPTH. No recursion. ``strings=False``:
    the text is known to hold none, so no string is visited (half the walk of a 10^5-actor scene)."""
    stack = [(value, 1, 1)]
    while stack:
        value, line, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise FormatError(Diagnostic(path, line, "", f"objects and arrays nested deeper than {MAX_DEPTH} levels"))
            if isinstance(value, dict):
                line = getattr(value, "line", line) or line
                if strings:
                    for key in value:
                        if not key.isascii():
                            _check_text(key, path, line)
                items = value.values()
            else:
                items = value
            # an ASCII string or None cannot fail: not visited
            stack.extend([(item, line, depth + 1) for item in items if isinstance(item, (dict, list, int, float))
                          or (strings and isinstance(item, str) and not item.isascii())])
        elif isinstance(value, str):
            _check_text(value, path, line)
        elif isinstance(value, float) and not math.isfinite(value):
            raise FormatError(Diagnostic(path, line, "", f"number {value!r} is not finite"))
        elif isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
            raise FormatError(Diagnostic(path, line, "", f"integer {value} is out of range"))


def _check_text(text: str, path: str, line: int) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FormatError(Diagnostic(path, line, "", f"string {text[:40]!r} holds a lone surrogate "
                                     f"(\\u{ord(text[exc.start]):04x}), which is not text")) from None


def load(path: str):
    return loads(read_source(path), path)


def dumps(value, indent: int = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False) + "\n"
