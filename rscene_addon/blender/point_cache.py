"""Deforming results (cloth vertices, granular particles) -> a PC2 point cache read by a Mesh Cache
modifier: one file per object, any number of frames, no per-frame Python in Blender's evaluation.

PC2 layout (Blender's ``io_mesh_cache`` format): the 12-byte signature ``POINTCACHE2\\0``, int32 version
(1), int32 point count, float32 start frame, float32 sample rate, int32 sample count, then float32
x, y, z per point per sample.
"""
from __future__ import annotations

import struct

import numpy as np

from ..base.atomic import atomic_open

PC2_SIGNATURE = b"POINTCACHE2\0"


def write_pc2(path: str, frames: np.ndarray, start_frame: float = 1.0) -> None:
    """``frames``: (F, V, 3) positions in the object's local space."""
    frames = np.ascontiguousarray(frames, dtype="<f4")
    count, points = frames.shape[0], frames.shape[1]
    with atomic_open(path, "wb", durable=False) as handle:  # a bake can be redone: no fsync
        handle.write(PC2_SIGNATURE + struct.pack("<iiffi", 1, points, float(start_frame), 1.0, count))
        handle.write(frames.tobytes())


def read_pc2(path: str) -> np.ndarray:
    with open(path, "rb") as handle:
        header = handle.read(32)
        if header[:12] != PC2_SIGNATURE:
            raise ValueError(f"{path}: not a PC2 point cache")
        _, points, _, _, count = struct.unpack("<iiffi", header[12:])
        return np.frombuffer(handle.read(), dtype="<f4").reshape(count, points, 3)
