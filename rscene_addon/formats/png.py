"""PNG decoding in pure Python (zlib + numpy), for height maps. No PIL.

``read_grey(path)`` returns the image as a 2-D array of raw sample values (row 0 is the first row in the
file): 8-bit images give 0..255, 16-bit images 0..65535, 1/2/4-bit images 0..2**depth-1. Grey and
grey+alpha images are read as they are; RGB(A) and palette images are converted to grey as the mean of
R, G and B (alpha is dropped). Interlaced (Adam7) images are supported.

Unfiltering is vectorised over anti-diagonals: sample (row, column) depends only on its left, upper and
upper-left neighbours, so every pixel of one anti-diagonal ``row + column = k`` can be reconstructed at
once. A 1081 x 1081 16-bit Paeth-filtered image decodes in well under a second.

``encode_grey`` writes a grey PNG (used by tests and for exporting height maps); ``encode_image`` a grey,
grey+alpha, RGB or RGBA image with every row Paeth-filtered (the render writes its RGB with it).
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

from ..base import files

__all__ = ["PngError", "decode_grey", "encode_grey", "encode_image", "read_grey"]

# RaiSim accepts 64 Mi samples; a few kilobytes of PNG can claim that many (zeros compress well) and
# decoding them here would take minutes and gigabytes. 16 Mi (4096 x 4096) is 14x the largest real one.
MAX_PIXELS = 16 * 2**20
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


class PngError(ValueError):
    """The data is not a PNG this decoder can read."""


def _chunks(data: bytes):
    if not data.startswith(_SIGNATURE):
        raise PngError("not a PNG file (bad signature)")
    pos = len(_SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise PngError(f"truncated {kind.decode('latin-1')} chunk")
        crc_bytes = data[pos + 8 + length:pos + 12 + length]
        if len(crc_bytes) != 4:
            raise PngError(f"truncated {kind.decode('latin-1')} chunk")
        crc, = struct.unpack(">I", crc_bytes)
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise PngError(f"CRC mismatch in {kind.decode('latin-1')} chunk")
        yield kind, body
        pos += 12 + length
        if kind == b"IEND":
            return
    raise PngError("missing IEND chunk")


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _unfilter(raw: bytes, height: int, row_bytes: int, bpp: int) -> np.ndarray:
    """Undo the per-row filters. Returns (height, row_bytes) uint8."""
    stride = row_bytes + 1
    if len(raw) < height * stride:
        raise PngError("image data is shorter than the image")
    rows = np.frombuffer(raw, dtype=np.uint8, count=height * stride).reshape(height, stride)
    filters = rows[:, 0].astype(np.int64)
    if (filters > 4).any():
        raise PngError(f"unknown filter type {int(filters.max())}")
    data = rows[:, 1:].astype(np.int64)
    if (filters == 0).all():
        return data.astype(np.uint8)
    cols = row_bytes // bpp
    # Pixels of bpp bytes; each byte only depends on the same byte of the left/upper/upper-left pixels.
    filt = data.reshape(height, cols, bpp)
    out = np.zeros((height + 1, cols + 1, bpp), dtype=np.int64)  # padded with a zero row and column
    for k in range(height + cols - 1):
        r = np.arange(max(0, k - cols + 1), min(height, k + 1))
        c = k - r
        a = out[r + 1, c]       # left
        b = out[r, c + 1]       # up
        cc = out[r, c]          # upper left
        f = filters[r][:, None]
        x = filt[r, c]
        predicted = np.select([f == 1, f == 2, f == 3, f == 4],
                              [a, b, (a + b) >> 1, _paeth(a, b, cc)], default=0)
        out[r + 1, c + 1] = (x + predicted) & 0xFF
    return out[1:, 1:].reshape(height, row_bytes).astype(np.uint8)


def _samples(rows: np.ndarray, width: int, depth: int, channels: int) -> np.ndarray:
    """(height, row_bytes) bytes -> (height, width, channels) integer samples."""
    height = rows.shape[0]
    if depth == 16:
        values = rows.reshape(height, -1, 2).astype(np.uint32)
        values = (values[..., 0] << 8) | values[..., 1]
    elif depth == 8:
        values = rows.astype(np.uint32)
    else:
        bits = np.unpackbits(rows, axis=1).reshape(height, -1, depth)
        weights = (1 << np.arange(depth - 1, -1, -1)).astype(np.uint32)
        values = (bits.astype(np.uint32) * weights).sum(axis=2)
    return values[:, :width * channels].reshape(height, width, channels)


def decode_grey(data: bytes) -> np.ndarray:
    """PNG bytes -> 2-D float64 array of grey sample values (see module doc)."""
    header = None
    idat = []
    palette = None
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            if len(body) != 13:
                raise PngError(f"IHDR chunk of {len(body)} bytes (13 expected)")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"PLTE":
            if len(body) % 3 or not body:
                raise PngError(f"PLTE chunk of {len(body)} bytes (a multiple of 3 expected)")
            palette = np.frombuffer(body, dtype=np.uint8).reshape(-1, 3)
    if header is None:
        raise PngError("missing IHDR chunk")
    width, height, depth, color, compression, filter_method, interlace = header
    if color not in _CHANNELS or depth not in (1, 2, 4, 8, 16) or compression or filter_method or interlace > 1:
        raise PngError(f"unsupported PNG: color type {color}, bit depth {depth}, interlace {interlace}")
    if width == 0 or height == 0:
        raise PngError("empty image")
    if width * height > MAX_PIXELS:
        raise PngError(f"image of {width} x {height} pixels is larger than {MAX_PIXELS} pixels")
    # at most what the image needs (interlaced passes add a filter byte per row): a few bytes of
    # compressed data cannot make us inflate gigabytes
    needed = 2 * height * ((width * _CHANNELS[color] * depth + 7) // 8 + 1) + 1024
    try:
        raw = zlib.decompressobj().decompress(b"".join(idat), needed)
    except zlib.error as exc:
        raise PngError(f"corrupt image data: {exc}") from None
    channels = _CHANNELS[color]
    bpp = max(1, channels * depth // 8)
    if interlace == 0:
        passes = [((0, 0, 1, 1), width, height)]
    else:
        passes = []
        for x0, y0, dx, dy in _ADAM7:
            w, h = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
            passes.append(((x0, y0, dx, dy), w, h))
    image = np.zeros((height, width, channels), dtype=np.uint32)
    pos = 0
    for (x0, y0, dx, dy), w, h in passes:
        if w == 0 or h == 0:
            continue
        row_bytes = (w * channels * depth + 7) // 8
        size = h * (row_bytes + 1)
        rows = _unfilter(raw[pos:pos + size], h, row_bytes, bpp)
        pos += size
        image[y0::dy, x0::dx] = _samples(rows, w, depth, channels)
    if color == 3:
        if palette is None:
            raise PngError("palette image without a PLTE chunk")
        rgb = palette[np.clip(image[..., 0], 0, len(palette) - 1)].astype(np.float64)
        return rgb.mean(axis=2)
    if color in (0, 4):
        return image[..., 0].astype(np.float64)
    return image[..., :3].astype(np.float64).mean(axis=2)


def read_grey(path: str) -> np.ndarray:
    return decode_grey(files.read_bytes(path))


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def encode_grey(values, bit_depth: int = 16, filter_type: int = 0) -> bytes:
    """A non-interlaced grey PNG of integer ``values`` (2-D), every row with filter ``filter_type``."""
    values = np.asarray(values)
    if values.ndim != 2 or bit_depth not in (8, 16) or filter_type not in range(5):
        raise ValueError("encode_grey takes a 2-D array, bit depth 8 or 16 and filter 0..4")
    height, width = values.shape
    dtype = ">u2" if bit_depth == 16 else "u1"
    rows = np.ascontiguousarray(values.astype(dtype)).view(np.uint8).reshape(height, -1).astype(np.int64)
    bpp = bit_depth // 8
    if filter_type == 0:  # no prediction: every row is its filter byte and its samples as they are
        raw = np.hstack([np.zeros((height, 1), dtype=np.uint8), rows.astype(np.uint8)])
        return _png(width, height, bit_depth, raw.tobytes())
    out = bytearray()
    prev = np.zeros(rows.shape[1], dtype=np.int64)
    for row in rows:
        left = np.concatenate([np.zeros(bpp, dtype=np.int64), row[:-bpp]])
        upleft = np.concatenate([np.zeros(bpp, dtype=np.int64), prev[:-bpp]])
        predicted = [0, left, prev, (left + prev) >> 1, _paeth(left, prev, upleft)][filter_type]
        out.append(filter_type)
        out += ((row - predicted) & 0xFF).astype(np.uint8).tobytes()
        prev = row
    return _png(width, height, bit_depth, bytes(out))


def encode_image(values, bit_depth: int = 8, level: int = 6) -> bytes:
    """A non-interlaced PNG of ``(H, W)`` or ``(H, W, C)`` integer samples (C = 1 grey, 2 grey+alpha,
    3 RGB, 4 RGBA), every row Paeth-filtered: the filter reads only unfiltered samples, so the whole
    image is filtered at once; ``level`` is zlib's."""
    values = np.asarray(values)
    if values.ndim == 2:
        values = values[:, :, None]
    colour = {1: 0, 2: 4, 3: 2, 4: 6}.get(values.shape[-1] if values.ndim == 3 else 0)
    if colour is None or bit_depth not in (8, 16) or 0 in values.shape:
        raise ValueError("encode_image takes a non-empty (H, W) or (H, W, 1..4) array, bit depth 8 or 16")
    height, width, channels = values.shape
    dtype = ">u2" if bit_depth == 16 else "u1"
    rows = np.ascontiguousarray(values.astype(dtype)).view(np.uint8).reshape(height, -1).astype(np.int16)
    bpp = channels * bit_depth // 8
    left = np.pad(rows, ((0, 0), (bpp, 0)))[:, :-bpp]
    up = np.pad(rows, ((1, 0), (0, 0)))[:-1]
    upleft = np.pad(up, ((0, 0), (bpp, 0)))[:, :-bpp]
    filtered = ((rows - _paeth(left, up, upleft)) & 0xFF).astype(np.uint8)
    raw = np.hstack([np.full((height, 1), 4, dtype=np.uint8), filtered])
    return _png(width, height, bit_depth, raw.tobytes(), colour, level)


def _png(width: int, height: int, bit_depth: int, filtered: bytes, colour: int = 0, level: int = -1) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, bit_depth, colour, 0, 0, 0)
    return _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(filtered, level)) + _chunk(b"IEND", b"")
