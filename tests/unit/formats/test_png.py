"""Pure-Python PNG decoding of height maps."""
from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from rscene_addon.formats import png


def _reference_unfilter(raw: bytes, height: int, row_bytes: int, bpp: int) -> list[bytearray]:
    """The PNG specification's per-byte reconstruction, written plainly."""
    rows, prev, pos = [], bytearray(row_bytes), 0
    for _ in range(height):
        ftype = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + row_bytes])
        pos += 1 + row_bytes
        for i in range(row_bytes):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        prev = line
    return rows


@pytest.mark.parametrize("depth", [8, 16])
@pytest.mark.parametrize("filter_type", [0, 1, 2, 3, 4])
def test_round_trip_every_filter(depth, filter_type):
    values = np.random.default_rng(depth * 10 + filter_type).integers(0, 2**depth, size=(9, 13))
    assert np.array_equal(png.decode_grey(png.encode_grey(values, depth, filter_type)), values)


def test_mixed_filters_match_the_reference():
    rng = np.random.default_rng(7)
    width, height = 11, 8
    data = rng.integers(0, 256, size=(height, width * 2), dtype=np.uint8)
    raw = b"".join(bytes([int(rng.integers(0, 5))]) + row.tobytes() for row in data)
    expected = _reference_unfilter(raw, height, width * 2, 2)
    header = struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    decoded = png.decode_grey(blob)
    ref = np.array([[r[2 * i] << 8 | r[2 * i + 1] for i in range(width)] for r in expected], dtype=float)
    assert np.array_equal(decoded, ref)


def test_low_bit_depths_and_alpha():
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    # 2x2 grey, 4-bit: rows 0x1F 0x80 -> pixels (1, 15), (8, 0)
    header = struct.pack(">IIBBBBB", 2, 2, 4, 0, 0, 0, 0)
    raw = b"\x00\x1f\x00\x80"
    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    assert png.decode_grey(blob).tolist() == [[1, 15], [8, 0]]
    # grey + alpha, 8-bit: alpha is dropped
    header = struct.pack(">IIBBBBB", 2, 1, 8, 4, 0, 0, 0)
    raw = b"\x00" + bytes([10, 255, 20, 0])
    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    assert png.decode_grey(blob).tolist() == [[10, 20]]


def test_bad_data():
    with pytest.raises(png.PngError):
        png.decode_grey(b"not a png")
    blob = bytearray(png.encode_grey(np.zeros((2, 2)), 8))
    blob[20] ^= 0xFF  # corrupt the IHDR body: CRC mismatch
    with pytest.raises(png.PngError):
        png.decode_grey(bytes(blob))


def test_real_height_map_rows_match_the_reference(corpus):
    path = corpus / "raisim_xml/raisimTech-raisim2Lib/rsc/xmlScripts/heightMaps/zurichHeightMap.png"
    data = path.read_bytes()
    image = png.decode_grey(data)
    assert image.shape == (1081, 1081)
    # Check the first rows against the plain per-byte decoder (Paeth-filtered 16-bit grey).
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    rows = 24
    raw = zlib.decompress(idat)[: rows * (1081 * 2 + 1)]
    ref = _reference_unfilter(raw, rows, 1081 * 2, 2)
    expected = np.array([[r[2 * i] << 8 | r[2 * i + 1] for i in range(1081)] for r in ref], dtype=float)
    assert np.array_equal(image[:rows], expected)
