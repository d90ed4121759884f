"""A single-part scanline OpenEXR writer for float32 channels (pure: numpy + zlib).

The depth image is the one EXR every frame writes; writing it here keeps the writers free of Blender
(OpenImageIO comes with Blender only). ZIP compression (16 scanlines a block, OpenEXR's byte split
and delta predictor before zlib), as OpenImageIO writes it by default.

Channel names matter to readers: OpenCV (``cv2.imread(path, cv2.IMREAD_ANYDEPTH)``) reads a
one-channel file only when the channel is ``Y`` (grey) or ``R``/``G``/``B``; a channel named ``Z``
comes back as zeros, silently (OpenCV 4.11). The depth product therefore names its channel ``Y``.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

from ..base.atomic import atomic_open

__all__ = ["encode_exr", "write_exr"]

_MAGIC = struct.pack("<iI", 20000630, 2)  # magic number, version 2 (single-part scanline)
_FLOAT = 2  # pixel type of a 32-bit float channel
_ZIP, _LINES = 3, 16  # ZIP_COMPRESSION: zlib over blocks of 16 scanlines


def _attribute(name: str, kind: str, value: bytes) -> bytes:
    return name.encode() + b"\0" + kind.encode() + b"\0" + struct.pack("<i", len(value)) + value


def _zip_block(raw: bytes) -> bytes:
    """OpenEXR's ZIP block: bytes split into even and odd halves, delta-coded, then zlib; the raw
    block when that is not smaller (readers take a block of the raw size as uncompressed)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    split = np.concatenate([data[0::2], data[1::2]]).astype(np.int16)
    coded = split.copy()
    coded[1:] = (split[1:] - split[:-1] + 384) & 0xFF
    packed = zlib.compress(coded.astype(np.uint8).tobytes(), 6)
    return packed if len(packed) < len(raw) else raw


def encode_exr(channels: dict) -> bytes:
    """``{name: (H, W) array}`` (stored as float32, names sorted as the format requires) -> EXR bytes."""
    if not channels:
        raise ValueError("an EXR needs at least one channel")
    names = sorted(channels)
    planes = [np.ascontiguousarray(channels[n], dtype="<f4") for n in names]
    shape = planes[0].shape
    if len(shape) != 2 or any(p.shape != shape for p in planes) or 0 in shape:
        raise ValueError(f"EXR channels must be non-empty (H, W) arrays of one shape, got "
                         f"{[p.shape for p in planes]}")
    height, width = shape
    chlist = b"".join(n.encode() + b"\0" + struct.pack("<iB3xii", _FLOAT, 0, 1, 1) for n in names) + b"\0"
    window = struct.pack("<iiii", 0, 0, width - 1, height - 1)
    header = b"".join((
        _attribute("channels", "chlist", chlist),
        _attribute("compression", "compression", bytes([_ZIP])),
        _attribute("dataWindow", "box2i", window),
        _attribute("displayWindow", "box2i", window),
        _attribute("lineOrder", "lineOrder", b"\0"),
        _attribute("pixelAspectRatio", "float", struct.pack("<f", 1.0)),
        _attribute("screenWindowCenter", "v2f", struct.pack("<ff", 0.0, 0.0)),
        _attribute("screenWindowWidth", "float", struct.pack("<f", 1.0)),
    )) + b"\0"
    # a scanline holds each channel's row in turn: (H, C, W) in memory order
    interleaved = np.stack(planes, axis=1)
    blocks = []
    for y in range(0, height, _LINES):
        body = _zip_block(interleaved[y:y + _LINES].tobytes())
        blocks.append(struct.pack("<ii", y, len(body)) + body)
    start = len(_MAGIC) + len(header) + 8 * len(blocks)
    offsets, position = [], start
    for block in blocks:
        offsets.append(position)
        position += len(block)
    return _MAGIC + header + struct.pack(f"<{len(offsets)}Q", *offsets) + b"".join(blocks)


def write_exr(path, channels: dict) -> None:
    """:func:`encode_exr` written atomically (no fsync: a per-frame output)."""
    with atomic_open(path, "wb", durable=False) as f:
        f.write(encode_exr(channels))
