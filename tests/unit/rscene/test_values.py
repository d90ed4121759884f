"""Value types: text escaping and number formatting (property tests), lists, names."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rscene_addon.model import ValueFormatError
from rscene_addon.model.values import (BYTE_LIST, COLOR, COLOR_LIST, FLAG, GROUP, INT, INT_LIST, LIST, QUAT,
                                       TEXT_LIST, TRANSFORM_LIST, VEC3, Name, PackedVec, decode_number,
                                       decode_text, encode_number, encode_text)

SPECIAL = ["-", "", "%", "=", ";", " ", "\t", "\r", "\n", "\x00", "\x7f", "#", "%2D", "%%", "é", "漢", "🙂",
           "\u00a0", "\u2028", "\x85"]
# Arbitrary text, with the characters and pieces that matter to the format mixed in.
# Lone surrogates (category Cs) cannot be stored in a UTF-8 file; see test_lone_surrogates.
texts = st.lists(st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(SPECIAL))).map("".join)
finite = st.floats(allow_nan=False, allow_infinity=False)

# What splits a line into tokens (spaces, tabs, CR, LF, VT, FF) and what a token must not contain.
_FORBIDDEN = re.compile(r"[ \t\r\n\x0b\x0c=;\x00-\x1f\x7f]")


@given(texts)
@example("")
@example("-")
@example("%")
@example("a=b;c d\te")
@example("100%")
@example("%41")
def test_text_round_trip(value):
    token = encode_text(value)
    assert decode_text(token) == value
    assert token and not _FORBIDDEN.search(token)
    assert token != "-" or value == ""


def test_lone_surrogates():
    # bytes that were not UTF-8 in a file (surrogateescape) are written back as they were
    assert decode_text(encode_text("a\udcff")) == "a\udcff" and decode_text("%FF") == "\udcff"
    with pytest.raises(ValueFormatError, match="surrogate"):
        encode_text("\ud800")


def test_text_examples_from_the_documents():
    assert encode_text("A label with spaces") == "A%20label%20with%20spaces"
    assert encode_text("Forest mud") == "Forest%20mud"
    assert decode_text("Forest%20mud") == "Forest mud"
    assert encode_text("") == "-" and decode_text("-") == "" and decode_text("") == ""
    assert encode_text("-") == "%2D" and decode_text("%2D") == "-"
    assert decode_text("%2d%3d") == "-="  # either case
    assert encode_text("a%b=c;d") == "a%25b%3Dc%3Bd"
    assert encode_text("naïve") == "naïve"  # bytes above 0x7f are not escaped
    with pytest.raises(ValueFormatError):
        decode_text("100%")
    with pytest.raises(ValueFormatError):
        decode_text("%G1")


@given(finite)
@example(0.0)
@example(-0.0)
@example(5e-324)
@example(1.7976931348623157e308)
@example(1e-4)
@example(1e5)
def test_number_round_trip(value):
    text = encode_number(value)
    back = decode_number(text)
    assert back == value
    assert math.copysign(1.0, back) == math.copysign(1.0, value)


def _printf_candidates(value: float):
    """Texts in the forms C's printf writes (``%f``-like fixed and ``%e``-like scientific with two or more
    exponent digits, at least one digit before the point), trimmed of trailing zeros."""
    for precision in range(0, 18):
        sci = f"{value:.{precision}e}"
        mantissa, _, exponent = sci.partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        yield f"{mantissa}e{exponent}"
        fixed = f"{value:.{precision}f}"
        if "." in fixed:
            fixed = fixed.rstrip("0").rstrip(".")
        yield fixed
    yield repr(value)


@given(finite)
@example(0.0001)
@example(100000.0)
@example(123456789012345680000.0)
@example(0.0008)
@example(1e16)
def test_number_text_is_the_shortest(value):
    text = encode_number(value)
    for candidate in _printf_candidates(value):
        if float(candidate) == value and math.copysign(1, float(candidate)) == math.copysign(1, value):
            assert len(text) <= len(candidate), (text, candidate)


@pytest.mark.parametrize("value, text", [
    (2.0, "2"), (-0.0, "-0"), (0.0, "0"), (0.5, "0.5"), (-9.81, "-9.81"), (0.0025, "0.0025"),
    (0.001, "0.001"), (1e-7, "1e-07"), (1e-8, "1e-08"), (1e-4, "1e-04"), (1e6, "1e+06"), (10000.0, "10000"),
    (100000.0, "1e+05"), (0.00065, "0.00065"), (18446744073709551615.0, "18446744073709552000"),
])
def test_number_text_as_engine2_writes_it(value, text):
    """std::to_chars: the shorter of fixed and scientific, fixed on a tie (``1e-04``, ``1e+06`` in files)."""
    assert encode_number(value) == text


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN", "1e999", "0x10", "1_000", "1.0f", "", " 1",
                                 "1,5", "--1", "e5", "."])
def test_bad_numbers(raw):
    with pytest.raises(ValueFormatError):
        decode_number(raw)


@pytest.mark.parametrize("raw", ["1", "-1", "+1", "1.", ".5", "1e-08", "1E+6", "-0", "0.000"])
def test_good_numbers(raw):
    assert decode_number(raw) == float(raw)


def test_integers_flags_groups():
    assert INT.decode("-2147483648") == -(2**31)
    for bad in ("2147483648", "1.5", "1e3", "abc"):
        with pytest.raises(ValueFormatError):
            INT.decode(bad)
    assert GROUP.decode("18446744073709551615") == 2**64 - 1
    with pytest.raises(ValueFormatError):
        GROUP.decode("18446744073709551616")
    with pytest.raises(ValueFormatError):
        GROUP.decode("-1")
    for raw in ("true", "1", "yes", "on", "TRUE", "On"):
        assert FLAG.decode(raw) is True
    for raw in ("false", "0", "no", "off", "False"):
        assert FLAG.decode(raw) is False
    with pytest.raises(ValueFormatError):
        FLAG.decode("maybe")
    assert FLAG.encode(True) == "true" and FLAG.encode(0) == "false"


def test_vectors_and_colors():
    assert VEC3.decode("1,0,0") == (1.0, 0.0, 0.0)
    assert VEC3.decode_tokens(["0", "0", "-9.81"]) == (0, 0, -9.81)
    assert VEC3.encode((0.0, 0.0, -9.81)) == "0,0,-9.81"
    assert VEC3.encode_tokens((0.0, 0.0, -9.81)) == ["0", "0", "-9.81"]
    assert QUAT.decode("1,0,0,0") == (1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueFormatError):
        VEC3.decode("1,0")
    assert COLOR.decode("0.66,0.78,0.96") == (0.66, 0.78, 0.96, 1.0)  # alpha defaults to 1
    assert COLOR.decode("0.66,0.78,0.96,0.5") == (0.66, 0.78, 0.96, 0.5)
    assert COLOR.encode((1.0, 0.95, 0.85, 1.0)) == "1,0.95,0.85"
    packed = PackedVec(3)
    assert packed.span == 1 and packed.decode_tokens(["0.0,0.15,0.05"]) == (0.0, 0.15, 0.05)
    assert packed.encode_tokens((0.0, 0.15, 0.05)) == ["0,0.15,0.05"]


def test_vector_text_table_keeps_what_encode_number_writes():
    """Vec.encode_tokens remembers the text of a tuple: a repeat gives encode_number's text again, 0.0 and -0.0
    (equal as keys) keep their own text, and a caller changing the list it got changes nothing remembered."""
    for vector in [(1.5, 0.25, 3.0), (1.5, 0.0, 3.0), (1.5, -0.0, 3.0), (1.5, 0.25, 3.0), (1.5, -0.0, 3.0),
                   (1.5, 0.0, 3.0), (1, 2, 3), (1.0, 2.0, 3.0), (np.float64(1e-05), 2.0, 1e300)]:
        expected = [encode_number(v) for v in vector]
        first = VEC3.encode_tokens(vector)
        assert first == expected
        first[0] = "junk"
        assert VEC3.encode_tokens(vector) == expected
    assert VEC3.encode_tokens((1.5, -0.0, 3.0)) == ["1.5", "-0", "3"]
    with pytest.raises(ValueFormatError):
        VEC3.encode_tokens((1.0, 2.0))
    with pytest.raises(ValueFormatError):
        VEC3.encode_tokens((1.0, math.inf, 2.0))


def test_lists():
    assert LIST.decode("0.3,0.15;0").tolist() == [0.3, 0.15, 0.0]  # ',' and ';' are interchangeable
    assert LIST.decode("").size == 0 and LIST.decode("-").size == 0
    for bad in ("1,,2", "1,2,", "1,nan", "1,inf", "1,x"):
        with pytest.raises(ValueFormatError):
            LIST.decode(bad)
    assert LIST.encode(np.array([0.3, 0.0, 1e-4])) == "0.3,0,1e-04"
    assert LIST.encode([]) == "-"
    assert INT_LIST.decode("0,1,2,3").dtype.kind == "i"
    assert INT_LIST.encode([100000, 2]) == "100000,2"  # integers stay integers
    with pytest.raises(ValueFormatError):
        INT_LIST.decode("0.5")
    with pytest.raises(ValueFormatError):
        BYTE_LIST.decode("256")
    colors = COLOR_LIST.decode("1,1,1,1;0.5,0.5,0.5")
    assert colors.shape == (2, 4) and colors[1].tolist() == [0.5, 0.5, 0.5, 1.0]
    assert COLOR_LIST.encode(colors) == "1,1,1,1;0.5,0.5,0.5,1"
    with pytest.raises(ValueFormatError):
        COLOR_LIST.decode("1,1")
    instances = TRANSFORM_LIST.decode("1.0,0.0,0.0,1,0,0,0,1,1,1;3.0,0.5,0.0,1,0,0,0,1,1,1")
    assert instances.shape == (2, 10) and instances[1, :3].tolist() == [3.0, 0.5, 0.0]
    assert TRANSFORM_LIST.encode(instances) == "1,0,0,1,0,0,0,1,1,1;3,0.5,0,1,0,0,0,1,1,1"
    # a list: separators interchangeable; only a multiple of ten numbers counts
    assert TRANSFORM_LIST.decode("1,0,0,1,0,0,0,1,1,1,3,0.5,0,1,0,0,0,1,1,1").shape == (2, 10)
    with pytest.raises(ValueFormatError, match="multiple of 10"):
        TRANSFORM_LIST.decode("1,0,0,1,0,0,0,1,1")
    assert TEXT_LIST.decode("object;light;camera") == ("object", "light", "camera")
    assert TEXT_LIST.decode("") == () and TEXT_LIST.encode(()) == "-"
    assert TEXT_LIST.encode(["a b", "c;d"]) == "a%20b;c%3Bd"


@given(st.lists(finite, max_size=30))
def test_number_list_round_trip(values):
    array = np.array(values, dtype=np.float64)
    back = LIST.decode(LIST.encode(array))
    assert back.shape == array.shape
    assert np.array_equal(back, array) and np.array_equal(np.signbit(back), np.signbit(array))


@given(st.lists(texts.filter(bool), min_size=1, max_size=5))
def test_text_list_round_trip(items):
    token = TEXT_LIST.encode(items)
    assert not re.search(r"[ \t\r\n=]", token)
    assert TEXT_LIST.decode(token) == tuple(items)


def test_names():
    mode = Name("static", "dynamic", aliases={"fixed": "static"})
    assert mode.decode("FIXED") == "static" and mode.encode("Dynamic") == "dynamic"
    with pytest.raises(ValueFormatError, match="unknown name"):
        mode.decode("floating")
    lenient = Name("rgb", strict=False)
    assert lenient.decode("RGB") == "rgb" and lenient.decode("thermal") == "thermal"


def test_encode_fast_paths_agree_with_the_byte_walk():
    """encode_text's plain-ASCII shortcut and encode_numbers' one finiteness test give what the
    per-byte escape and per-number encoder give (checked against a byte-by-byte rule written here)."""
    from rscene_addon.model.values import encode_number, encode_numbers, encode_text

    def by_bytes(text):
        if text == "":
            return "-"
        if text == "-":
            return "%2D"
        out = bytearray()
        for b in text.encode("utf-8", "surrogateescape"):
            out += f"%{b:02X}".encode() if b <= 0x20 or b in b"%=;\x7f" else bytes([b])
        return out.decode("utf-8", "surrogateescape")

    for text in ["a", "-", "", "--", "a b", "x=1", "50%", "a;b", "tab\there", "\x7f", "/World/Box_1", "~!{}",
                 "é", "-0", "engine_default"]:
        assert encode_text(text) == by_bytes(text), text
    for values in [(1.0, 0.0, -0.0), (1e308, 1e308), (0.1, 1e-5, 123456789.0), (-2.5,)]:
        assert encode_numbers(values) == [encode_number(v) for v in values]
    with pytest.raises(ValueFormatError):
        encode_numbers((1.0, float("nan")))


def test_encode_number_shortcut_agrees_with_the_digit_rule():
    """The repr shortcut of encode_number (|x| >= 1 written as repr's digits) gives the text of the full
    fixed-or-scientific rule for integers, decimals, round numbers and random bit patterns."""
    import random
    import struct

    from rscene_addon.model import values as V
    rng = random.Random(29)
    samples = [1.0, 10.0, 100000.0, 123456.0, 1.5, 0.001, 0.0001, 1e16, 1e15, 2.0 ** 60, 7e22, 120.0, 5e-324]
    samples += [float(rng.randint(-10**6, 10**6)) for _ in range(3000)]
    samples += [round(rng.uniform(-1000, 1000), rng.randint(0, 6)) for _ in range(3000)]
    samples += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    for value in samples:
        if value and math.isfinite(value):
            assert V._encode_nonzero(value) == V._encode_exact(value), value
            assert V._encode_nonzero(-value) == V._encode_exact(-value), value


def test_remembered_number_texts_keep_the_sign_of_zero_and_round_trip():
    """Encoded doubles are remembered by value; 0.0 == -0.0, so zeros must never come from the memory."""
    import random

    from rscene_addon.model.values import encode_number, encode_numbers
    assert encode_numbers((0.0, -0.0, 1.5, -1.5, 1.5)) == ["0", "-0", "1.5", "-1.5", "1.5"]
    assert encode_numbers((-0.0, 0.0)) == ["-0", "0"]
    assert encode_number(-0.0) == "-0" and encode_number(0.0) == "0"
    rng = random.Random(4)
    values = [rng.uniform(-1e3, 1e3) for _ in range(500)] + [rng.choice((1e-7, 2.5e+21, 1e5, 100.0)) for _ in range(50)]
    first = encode_numbers(tuple(values))
    assert encode_numbers(tuple(values)) == first == [encode_number(v) for v in values]
    assert [float(t) for t in first] == values  # round trip: the very double
