"""Cryptomatte object coverage decoded into our instance ids (pure: numpy only).

Cycles' Cryptomatte object pass stores, per pixel and rank, an object's id and the fraction of the
pixel's samples (weighted by the pixel filter) that hit it, ranks sorted by coverage. Layers
``CryptoObject00``, ``01``, ... hold two ranks each as channels ``r, g, b, a`` = ``id, coverage, id,
coverage``. An id is the MurmurHash3 (x86, 32 bit, seed 0) of the object's name, its float32 bit
pattern with the exponent kept off 0 and 255 (no denormals, inf or NaN); the EXR header's manifest
maps names to the unclamped hash in hex. With a 1-pixel box filter a sample is uniform in the
pixel, so a coverage estimates the area fraction of the pixel the object covers.
"""
from __future__ import annotations

import numpy as np

__all__ = ["decode", "float_bits", "layer_names", "murmur3_32", "object_table"]

_MASK = 0xFFFFFFFF


def murmur3_32(data: bytes | str, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of ``data`` (a str is hashed as UTF-8), what Cryptomatte names hash to."""
    if isinstance(data, str):
        data = data.encode("utf-8")

    def mix(k: int) -> int:
        k = (k * 0xCC9E2D51) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        return (k * 0x1B873593) & _MASK

    h = seed & _MASK
    whole = len(data) - len(data) % 4
    for i in range(0, whole, 4):
        h ^= mix(int.from_bytes(data[i:i + 4], "little"))
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = data[whole:]
    if tail:
        h ^= mix(int.from_bytes(tail, "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def float_bits(hash_value: int) -> int:
    """The bits of the float32 a hash is stored as: its exponent clamped to 1..254 (Blender's
    ``CryptomatteHash::float_encoded``)."""
    exponent = min(max((hash_value >> 23) & 0xFF, 1), 254)
    return (hash_value & 0x807FFFFF) | (exponent << 23)


def layer_names(levels: int, prefix: str = "CryptoObject") -> list[str]:
    """EXR passes holding ``levels`` ranks: two ranks a layer."""
    return [f"{prefix}{i:02d}" for i in range((levels + 1) // 2)]


def object_table(names_to_ids: dict[str, int]) -> dict[int, int]:
    """``{float bits: instance id}`` for objects named in ``names_to_ids`` (name -> our instance id)."""
    return {float_bits(murmur3_32(name)): int(iid) for name, iid in names_to_ids.items()}


def decode(layers, levels: int, table: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel ranks in our instance ids from the ``CryptoObject`` layers ``(H, W, 4)`` float32.

    Returns ``(ids (H, W, K) int32, coverage (H, W, K) float32)`` with ``K = levels``, ranks by
    coverage, largest first. Objects of one instance (several Blender objects of one entity) are
    merged into one rank; an object not in ``table`` keeps its coverage under id -1, and an empty rank
    is id -1 with coverage 0. Where geometry covers a pixel fully and at most ``K`` instances meet in
    it, coverages sum to 1.
    """
    ranks = np.concatenate([np.asarray(a, np.float32)[..., :4] for a in layers], axis=-1)
    ranks = ranks[..., :2 * levels]
    bits = np.ascontiguousarray(ranks[..., 0::2]).view(np.uint32)
    coverage = np.array(ranks[..., 1::2], dtype=np.float32)
    keys = np.array(sorted(table), dtype=np.uint32)
    values = np.array([table[k] for k in sorted(table)], dtype=np.int32)
    at = np.clip(np.searchsorted(keys, bits), 0, max(len(keys) - 1, 0))
    known = (keys[at] == bits) if len(keys) else np.zeros(bits.shape, bool)
    ids = np.where(known & (coverage > 0), values[at] if len(keys) else -1, -1).astype(np.int32)
    # one instance made of several objects: its ranks' coverages add up in the first of them
    for i in range(ids.shape[-1]):
        for j in range(i + 1, ids.shape[-1]):
            same = (ids[..., j] == ids[..., i]) & (ids[..., i] >= 0)
            coverage[..., i] += np.where(same, coverage[..., j], 0.0)
            coverage[..., j][same] = 0.0
            ids[..., j][same] = -1
    order = np.argsort(-coverage, axis=-1, kind="stable")
    coverage = np.take_along_axis(coverage, order, axis=-1)
    ids = np.take_along_axis(ids, order, axis=-1)
    ids[coverage <= 0] = -1
    return ids, coverage
