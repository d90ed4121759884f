"""Value types of the ``.rscene`` format: decoding file text to Python values and encoding back.

Each type decodes the raw token text (already split at ``=`` for keys) and encodes a Python value to the
canonical text Engine 2 writes: shortest round-tripping numbers, ``true``/``false``, ``%HH`` escapes,
``-`` for the empty string. Positional vectors span several tokens; as key values they are packed with
commas. Decoding raises ``ValueFormatError``; the reader adds file, line and tag.
"""
from __future__ import annotations

import functools
import math
import re
import struct

import numpy as np

from .errors import ValueFormatError

# ---------------------------------------------------------------------------------------------------------
# Strings: %HH escaping

_HEX = "0123456789ABCDEF"
# Engine 2 escapes every byte up to 0x20 and '%', '=' and ';' (and DEL, which is a control byte too).
_ESCAPED = frozenset(range(0x21)) | {ord("%"), ord("="), ord(";"), 0x7F}
_PLAIN_TEXT = re.compile(r"[!-$&-:<>-~]+")  # printable ASCII but space, % ; and =: text that needs no escape
_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")


# encode_text's table of plain texts seen lately -> their tokens (bounded: cleared when full)
_TEXT_TOKENS: dict[str, str] = {}


def remember(table: dict, key, value, limit: int = 4096):
    """``table[key] = value``, the table emptied first when it holds ``limit`` entries (the readers' tables
    of repeating texts and rotations stay bounded whatever a file holds, and a scene of all-different values
    only restarts them). Returns ``value``."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


def decode_text(raw: str) -> str:
    """``-`` and the empty token are the empty string; ``%HH`` is one byte (either case)."""
    if raw == "-" or raw == "":
        return ""
    if "%" not in raw:
        return raw
    data = raw.encode("utf-8", "surrogateescape")
    if re.search(rb"%(?![0-9A-Fa-f]{2})", data):
        raise ValueFormatError(f"bad percent escape in {raw!r}")
    data = _PERCENT.sub(lambda m: bytes([int(m.group(1), 16)]), data)
    return data.decode("utf-8", "surrogateescape")


def encode_text(value: str) -> str:
    done = _TEXT_TOKENS.get(value)  # names, types and references repeat from record to record
    if done is not None:
        return done
    if _PLAIN_TEXT.fullmatch(value):  # the common case, without a per-byte walk
        done = value if value != "-" else "%2D"
        if len(value) <= 64:  # short texts only: what a record holds once each (paths) fills the table
            remember(_TEXT_TOKENS, value, done)
        return done
    if value == "":
        return "-"
    if value == "-":
        return "%2D"
    try:  # surrogateescape: bytes that were not UTF-8 in a file go back as they were
        data = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ValueFormatError(f"text {value!r} holds a lone surrogate: not storable in UTF-8") from None
    if not any(b in _ESCAPED for b in data):
        return value
    out = bytearray()
    for b in data:
        if b in _ESCAPED:
            out += b"%" + _HEX[b >> 4].encode() + _HEX[b & 15].encode()
        else:
            out.append(b)
    return out.decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------------------
# Numbers

# A finite decimal number in the C locale (what std::from_chars accepts): no underscores, no spaces,
# no hex, no nan/inf.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER_LIST = re.compile(r"[0-9eE+\-.,;]*")


def decode_number(raw: str) -> float:
    # float() is the fast path; what it accepts beyond the C locale's syntax (underscores, non-ASCII
    # digits, nan/inf spellings) is caught by the checks after it.
    try:
        value = float(raw)
    except ValueError:
        raise ValueFormatError(f"expected a finite number, got {raw!r}") from None
    if not math.isfinite(value) or "_" in raw or not raw.isascii() or raw.strip() != raw:
        if math.isfinite(value) or raw.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueFormatError(f"expected a finite number, got {raw!r}")
        raise ValueFormatError(f"number out of range: {raw!r}")
    return value


def encode_number(value: float) -> str:
    """The shortest text that reads back to the same double, as ``std::to_chars`` writes it.

    The digits are the shortest round-tripping ones (Python's ``repr``); the notation is fixed (``%f``
    style) or scientific (``%e`` style, at least two exponent digits), whichever is shorter, fixed on a tie:
    ``2``, ``-0``, ``0.001``, ``1e-04``, ``1e+06``, ``10000``, ``1e+05``.
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueFormatError(f"cannot write non-finite number {value!r}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    return _encode_nonzero(value)


# Text of the non-zero doubles encoded so far: sizes, masses, unit-quaternion parts and grid coordinates
# repeat across the records of a world (a dict look-up instead of repr and string tests: a tenth of building
# a 100k-record world). Non-zero finite doubles that compare equal are the same double, so the float is
# the key (0.0 == -0.0 is why zeros never enter). Bounded: past the limit, values are encoded uncached.
_NUMBER_TEXT: dict[float, str] = {}
_NUMBER_TEXT_LIMIT = 1 << 15


def _encode_nonzero(value: float) -> str:
    """``encode_number`` of a finite non-zero double."""
    text = _NUMBER_TEXT.get(value)
    if text is None:
        text = _encode_nonzero_uncached(value)
        if len(_NUMBER_TEXT) < _NUMBER_TEXT_LIMIT:
            _NUMBER_TEXT[value] = text
    return text


def _encode_nonzero_uncached(value: float) -> str:
    text = repr(value)
    # |value| >= 1 without an exponent: fixed notation is repr's digits, shorter than any scientific form
    # (which adds a point and 4 characters) unless an integer ends in zeros (100000 is 1e+05)
    if "e" not in text and text[-2:] != ".0" and text.lstrip("-")[0] != "0":
        return text
    if text[-2:] == ".0" and text[-3] != "0" and "e" not in text:
        return text[:-2]
    return _encode_exact(value)


@functools.lru_cache(maxsize=1 << 14)  # defaults and round numbers repeat in every record written
def _encode_exact(value: float) -> str:
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # value = 0.<digits> * 10**point, i.e. ``point`` digits before the decimal point
    point = int(exp or 0) + len(whole) - (len(whole + frac) - len(digits))
    digits = digits.rstrip("0")
    if point >= len(digits):
        fixed = digits + "0" * (point - len(digits))
    elif point > 0:
        fixed = digits[:point] + "." + digits[point:]
    else:
        fixed = "0." + "0" * -point + digits
    power = point - 1
    head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sci = f"{head}e{'-' if power < 0 else '+'}{abs(power):02d}"
    return sign + (fixed if len(fixed) <= len(sci) else sci)


def encode_numbers(values: tuple[float, ...]) -> list[str]:
    """``encode_number`` of each float of ``values``; one finiteness test for all (a vector per record)."""
    if math.isfinite(sum(values)):  # an overflowing sum takes the exact path
        get = _NUMBER_TEXT.get
        return [(get(v) or _encode_nonzero(v)) if v else ("-0" if math.copysign(1.0, v) < 0 else "0")
                for v in values]
    return list(map(encode_number, values))


def decode_int(raw: str, lo: int = -(2**31), hi: int = 2**31 - 1) -> int:
    if not _INTEGER.fullmatch(raw):
        raise ValueFormatError(f"expected an integer, got {raw!r}")
    sign = raw[0] if raw[0] in "+-" else ""
    digits = raw[len(sign):].lstrip("0") or "0"  # leading zeros are allowed: from_chars reads 0002 as 2
    shown = raw if len(raw) <= 40 else f"{raw[:20]}... ({len(digits)} digits)"
    if len(digits) > 40:  # beyond any 64-bit value (and Python's int() refuses 4300+ digits)
        raise ValueFormatError(f"integer {shown} out of range [{lo}, {hi}]")
    value = int(sign + digits)
    if not lo <= value <= hi:
        raise ValueFormatError(f"integer {shown} out of range [{lo}, {hi}]")
    return value


# Every collision group bit set: the default collisionMask (collides with everything). One definition for the
# model, the readers, the simulator and Blender.
ALL_GROUPS = 2**64 - 1

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def decode_flag(raw: str) -> bool:
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueFormatError(f"expected a flag (true/false/1/0/yes/no/on/off), got {raw!r}")


def _split_numbers(raw: str, sep: str) -> list[float]:
    return [decode_number(part) for part in raw.split(sep)]


# ---------------------------------------------------------------------------------------------------------
# Types


class ValueType:
    """How one field's text maps to a Python value. ``span`` is the number of positional tokens."""

    name = "value"
    span = 1
    # Whether every text ``encode`` makes decodes (a finite number, a flag, escaped text, a listed name, a
    # uint64): a record built from values then needs no decode of such a field to know it is valid. Not so
    # for an integer (int32 range), lists (bounds, widths) and the rest.
    built_decodes = False

    def decode(self, raw: str):
        raise NotImplementedError

    def encode(self, value) -> str:
        raise NotImplementedError

    def decode_column(self, tokens: list[str]) -> list:
        """``decode`` of one positional token of many records (the reader's batch path).

        Values of the single-token types are immutable, so each distinct token is decoded once: flags,
        names, groups and materials repeat across thousands of records. Raises ``ValueFormatError`` like
        ``decode``; the caller then decodes record by record to name the line.
        """
        table = {token: self.decode(token) for token in set(tokens)}
        return list(map(table.__getitem__, tokens))

    def decode_tokens(self, tokens: list[str]):
        """Positional form: ``span`` tokens."""
        if self.span == 1:
            return self.decode(tokens[0])
        return tuple(decode_number(t) for t in tokens)

    def encode_tokens(self, value) -> list[str]:
        if self.span == 1:
            return [self.encode(value)]
        return encode_numbers(self._check_len(value))

    def _check_len(self, value):
        value = tuple(map(float, value))
        if len(value) != self.span:
            raise ValueFormatError(f"expected {self.span} values, got {len(value)}")
        return value

    def __repr__(self) -> str:
        return self.name


class Text(ValueType):
    name = "text"
    built_decodes = True

    def decode(self, raw):
        return decode_text(raw)

    def decode_column(self, tokens):
        if "%" in "".join(tokens):  # escapes: decode each one
            return super().decode_column(tokens)
        return ["" if token == "-" else token for token in tokens]

    def encode(self, value):
        return encode_text(str(value))


def decode_number_column(tokens: list[str]) -> list[float]:
    """``decode_number`` of many tokens; positions and sizes rarely repeat, so no table."""
    try:
        values = list(map(float, tokens))
    except ValueError:
        values = None
    joined = "".join(tokens)
    # the same rules as decode_number, over the whole column: a non-finite value (or finite values whose
    # sum overflows, which is harmless) sends the column through decode_number to find the culprit
    if values is None or "_" in joined or not joined.isascii() or not math.isfinite(sum(values)):
        return [decode_number(token) for token in tokens]
    return values


class Number(ValueType):
    name = "number"
    built_decodes = True

    def decode(self, raw):
        return decode_number(raw)

    def decode_column(self, tokens):
        return decode_number_column(tokens)

    def encode(self, value):
        # a non-zero finite number encoded before (masses, radii: most of a record's numbers) by its text
        # table first; an equal int or numpy float has the same hash and text
        return _NUMBER_TEXT.get(value) or encode_number(value)


class Integer(ValueType):
    name = "integer"

    def decode(self, raw):
        return decode_int(raw)

    def encode(self, value):
        if isinstance(value, float) and not value.is_integer():
            raise ValueFormatError(f"expected an integer, got {value!r}")
        return str(int(value))


class Group(ValueType):
    """Unsigned 64-bit collision group or mask."""

    name = "group"
    built_decodes = True

    def decode(self, raw):
        return decode_int(raw, 0, ALL_GROUPS)

    def encode(self, value):
        value = int(value)
        if not 0 <= value < 2**64:
            raise ValueFormatError(f"collision group {value} out of the uint64 range")
        return str(value)


class Flag(ValueType):
    name = "flag"
    built_decodes = True

    def decode(self, raw):
        return decode_flag(raw)

    def encode(self, value):
        return "true" if value else "false"


class Vec(ValueType):
    """n numbers: n positional tokens, or one comma-packed key value."""

    built_decodes = True

    def __init__(self, n: int):
        self.span = n
        self.name = f"vec{n}" if n != 4 else "quat"
        self._bits = struct.Struct(f"<{n}d").pack  # the table's key: n doubles, bit for bit

    def decode(self, raw):
        values = _split_numbers(raw, ",")
        if len(values) != self.span:
            raise ValueFormatError(f"expected {self.span} comma-separated numbers, got {raw!r}")
        return tuple(values)

    def encode(self, value):
        return ",".join(encode_numbers(self._check_len(value)))

    def encode_tokens(self, value):
        # ``_check_len`` and ``encode_numbers`` in one frame: every record made encodes two or three vectors,
        # and most of them (rotations, sizes) repeat: their text is remembered per vector, keyed by the
        # exact bits of its doubles (so 0.0 and -0.0, whose texts differ, are two keys, and a vector with a
        # zero, such as the identity rotation, is remembered too)
        key = None
        if type(value) is tuple and len(value) == self.span:
            try:
                key = self._bits(*value)
            except (TypeError, ValueError, OverflowError, struct.error):  # float() names the culprit below
                pass
            else:
                tokens = _VEC_TEXT.get(key)
                if tokens is not None:
                    return list(tokens)
        value = tuple(map(float, value))
        if len(value) != self.span:
            raise ValueFormatError(f"expected {self.span} values, got {len(value)}")
        if math.isfinite(sum(value)):
            get = _NUMBER_TEXT.get
            tokens = [(get(v) or _encode_nonzero(v)) if v else ("-0" if math.copysign(1.0, v) < 0 else "0")
                      for v in value]
        else:
            tokens = list(map(encode_number, value))
        if key is not None:  # (unique positions fill the table: it starts again)
            remember(_VEC_TEXT, key, tuple(tokens), _VEC_TEXT_LIMIT)
        return tokens


# Vec.encode_tokens' table: the bits of a vector's doubles -> its tokens
_VEC_TEXT: dict[tuple, tuple] = {}
_VEC_TEXT_LIMIT = 1 << 12


class PackedVec(ValueType):
    """n comma-separated numbers in one token, also as a positional field (``articulated_ik`` target)."""

    span = 1

    def __init__(self, n: int):
        self.n = n
        self.name = f"packed_vec{n}"

    def decode(self, raw):
        values = _split_numbers(raw, ",")
        if len(values) != self.n:
            raise ValueFormatError(f"expected {self.n} comma-separated numbers, got {raw!r}")
        return tuple(values)

    def encode(self, value):
        value = tuple(float(v) for v in value)
        if len(value) != self.n:
            raise ValueFormatError(f"expected {self.n} values, got {len(value)}")
        return ",".join(encode_number(v) for v in value)


class Color(ValueType):
    """``r,g,b`` or ``r,g,b,a`` (alpha defaults to 1); decoded to an RGBA tuple.

    Written as ``r,g,b`` when alpha is 1, unless ``write_alpha`` (the colors Engine 2 stores as RGBA, such as
    ``colorA=1,1,1,1``).
    """

    name = "color"

    def __init__(self, write_alpha: bool = False):
        self.write_alpha = write_alpha

    def decode(self, raw):
        values = _split_numbers(raw, ",")
        if len(values) == 3:
            values.append(1.0)
        if len(values) != 4:
            raise ValueFormatError(f"expected r,g,b or r,g,b,a, got {raw!r}")
        return tuple(values)

    def encode(self, value):
        value = tuple(float(v) for v in value)
        if self.write_alpha and len(value) == 3:
            value = value + (1.0,)
        elif len(value) == 4 and value[3] == 1.0 and not self.write_alpha:
            value = value[:3]
        if len(value) not in (3, 4):
            raise ValueFormatError(f"a color has 3 or 4 components, got {len(value)}")
        return ",".join(encode_number(v) for v in value)


class NumberList(ValueType):
    """Numbers separated by ``,`` or ``;`` (interchangeable). Decoded to a float64 array.

    Big lists (height maps) go through numpy; the regex check keeps nan/inf and stray text out.
    """

    name = "list"

    def __init__(self, dtype=np.float64, lo=None, hi=None):
        self.dtype = np.dtype(dtype)
        self.lo, self.hi = lo, hi

    def decode(self, raw):
        if raw == "" or raw == "-":
            return np.zeros(0, dtype=self.dtype)
        if not _NUMBER_LIST.fullmatch(raw):
            raise ValueFormatError(f"expected a list of finite numbers, got {raw[:40]!r}")
        parts = raw.replace(";", ",").split(",")
        if "" in parts:
            raise ValueFormatError("empty entry or trailing separator in a list")
        try:
            values = np.array(parts, dtype=np.float64)
        except ValueError as exc:
            raise ValueFormatError(f"bad number in list: {exc}") from None
        if not np.isfinite(values).all():
            raise ValueFormatError("list contains a non-finite number")
        if self.dtype.kind in "iu":
            if (values != np.round(values)).any():
                raise ValueFormatError("integer list contains a fraction")
        if self.lo is not None and (values < self.lo).any() or self.hi is not None and (values > self.hi).any():
            raise ValueFormatError(f"list value outside [{self.lo}, {self.hi}]")
        return values.astype(self.dtype)

    def decode_column(self, tokens):
        return [self.decode(token) for token in tokens]  # arrays are mutable: one per record

    def encode(self, value):
        values = np.asarray(value, dtype=np.float64).ravel()
        if values.size == 0:
            return "-"
        if self.dtype.kind in "iu":  # slots, holes, vertex indices: integers, never 1e+05
            if not np.isfinite(values).all() or (values != np.round(values)).any():
                raise ValueFormatError("an integer list needs whole numbers")
            return ",".join(str(int(v)) for v in values.tolist())
        return ",".join(encode_number(v) for v in values.tolist())


class StructList(ValueType):
    """``;``-separated entries of ``width`` comma-separated numbers (instances, vertex colors).

    Decoded to an (N, width) float64 array. ``widths`` lists the accepted entry sizes (3 or 4 for colors);
    shorter entries are padded with ``pad``.
    """

    name = "struct_list"

    def __init__(self, widths=(3,), pad=1.0):
        self.widths = tuple(widths)
        self.pad = pad

    def decode(self, raw):
        width = max(self.widths)
        if raw == "" or raw == "-":
            return np.zeros((0, width))
        if len(self.widths) == 1:
            # One entry size: a plain ``list`` whose separators are interchangeable; only the count matters.
            values = _FLAT.decode(raw)
            if values.size % width:
                raise ValueFormatError(f"list has {values.size} numbers, not a multiple of {width}")
            return values.reshape(-1, width)
        rows = []
        for entry in raw.split(";"):
            values = _split_numbers(entry, ",")
            if len(values) not in self.widths:
                raise ValueFormatError(f"list entry has {len(values)} numbers, expected {self.widths}")
            rows.append(values + [self.pad] * (width - len(values)))
        return np.array(rows, dtype=np.float64)

    def decode_column(self, tokens):
        return [self.decode(token) for token in tokens]  # arrays are mutable: one per record

    def encode(self, value):
        rows = np.asarray(value, dtype=np.float64)
        if rows.size == 0:
            return "-"
        return ";".join(",".join(encode_number(v) for v in row) for row in rows.tolist())


class TextList(ValueType):
    """``;``-separated list whose items are percent-encoded strings."""

    name = "text_list"

    def decode(self, raw):
        if raw == "" or raw == "-":
            return ()
        return tuple(decode_text(part) for part in raw.split(";"))

    def encode(self, value):
        items = list(value)
        if not items:
            return "-"
        return ";".join(encode_text(str(v)) for v in items)


class Name(ValueType):
    """One of a fixed set of names, matched in any letter case, with aliases."""

    name = "name"
    built_decodes = True

    def __init__(self, *names: str, aliases: dict[str, str] | None = None, strict: bool = True):
        self.names = tuple(names)
        self.lookup = {n.lower(): n for n in names}
        for alias, target in (aliases or {}).items():
            self.lookup[alias.lower()] = target
        # Engine 2 grows its name lists over time; a lenient field keeps unknown names as they are.
        self.strict = strict
        self._encoded: dict[str, str] = {}  # a listed name -> its token (every record writes a few)

    def decode(self, raw):
        text = decode_text(raw)
        found = self.lookup.get(text.lower())
        if found is None:
            if not self.strict:
                return text
            raise ValueFormatError(f"unknown name {text!r}; expected one of {', '.join(self.names)}")
        return found

    def encode(self, value):
        done = self._encoded.get(value) if isinstance(value, str) else None
        if done is None:
            done = encode_text(self.decode(encode_text(str(value))))
            if isinstance(value, str) and value in self.names:
                self._encoded[value] = done
        return done

    def __repr__(self):
        return f"name({'|'.join(self.names)})"


_FLAT = NumberList()
TEXT = Text()
NUMBER = Number()
INT = Integer()
GROUP = Group()
FLAG = Flag()
VEC2 = Vec(2)
VEC3 = Vec(3)
QUAT = Vec(4)
COLOR = Color()
COLOR4 = Color(write_alpha=True)
LIST = NumberList()
INT_LIST = NumberList(np.int64)
BYTE_LIST = NumberList(np.int64, 0, 255)
TEXT_LIST = TextList()
COLOR_LIST = StructList((3, 4))
TRANSFORM_LIST = StructList((10,))
