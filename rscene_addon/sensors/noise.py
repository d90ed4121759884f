"""Seeded, reproducible Gaussian sensor noise.

Every draw comes from ``numpy.random.Generator(PCG64(SeedSequence([seed, frame, stream])))``:
the same ``(seed, frame, stream)`` gives the same noise on any machine and in any render order
(frames can be rendered in chunks by different processes), different frames or streams give
independent noise. ``stream`` names the layer (``"rgb"``, ``"depth"``, ``"imu"``...), so two
layers of one sensor sharing ``noiseSeed`` do not get correlated noise. Negative integers are
mapped to distinct non-negative keys (zigzag), since ``SeedSequence`` takes non-negative entropy.

Noise is drawn for the whole array, one value per element in C order, so an element's noise does
not depend on which other elements are valid.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["add_depth_noise", "add_gaussian_noise", "add_image_noise", "gaussian_noise", "noise_rng",
           "variation_seed"]


def _zigzag(n: int) -> int:
    n = int(n)
    return 2 * n if n >= 0 else -2 * n - 1


def noise_rng(seed: int, frame: int = 0, stream: str = "") -> np.random.Generator:
    """PCG64 generator for ``(seed, frame, stream)``; ``stream`` is hashed with CRC-32 (stable
    across runs, unlike Python's salted ``hash``)."""
    key = [_zigzag(seed), _zigzag(frame), zlib.crc32(stream.encode("utf-8"))]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(key)))


def variation_seed(seed: int, variation: int) -> int:
    """A sensor's noise seed for one variation of its scene (a dataset's per-variation seed): a
    deterministic mix of both, a non-negative int below 2**63; different variations give independent
    noise streams for the same record seed."""
    key = [_zigzag(seed), _zigzag(variation), zlib.crc32(b"variation")]
    return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _check_stddev(stddev: float) -> None:
    if not stddev >= 0.0:
        raise ValueError(f"noise stddev must be >= 0, got {stddev}")


def gaussian_noise(
    shape, mean: float, stddev: float, seed: int, frame: int = 0, stream: str = ""
) -> np.ndarray:
    """``N(mean, stddev^2)`` samples of ``shape`` (float64)."""
    _check_stddev(stddev)
    return noise_rng(seed, frame, stream).normal(mean, stddev, size=shape)


def add_gaussian_noise(
    values, mean: float, stddev: float, seed: int, frame: int = 0, stream: str = ""
) -> np.ndarray:
    """``values + N(mean, stddev^2)`` as float64 (e.g. IMU readings ``(M, 3)``); a copy when both
    ``mean`` and ``stddev`` are 0."""
    values = np.asarray(values, dtype=np.float64)
    if mean == 0.0 and stddev == 0.0:
        return values.copy()
    return values + gaussian_noise(values.shape, mean, stddev, seed, frame, stream)


def add_image_noise(
    image,
    mean: float,
    stddev: float,
    seed: int,
    frame: int,
    stream: str = "rgb",
    clip: tuple[float, float] | None = (0.0, 1.0),
) -> np.ndarray:
    """Noisy copy of an image ``(H, W)`` or ``(H, W, C)``, noise in the image's own value units.

    Float images keep their dtype and are clipped to ``clip`` (``None``: no clipping, e.g. for
    linear HDR). Integer images (e.g. uint8, where ``stddev`` is in counts) are rounded and clipped
    to the dtype's range.
    """
    image = np.asarray(image)
    noisy = add_gaussian_noise(image, mean, stddev, seed, frame, stream)
    if np.issubdtype(image.dtype, np.integer):
        info = np.iinfo(image.dtype)
        return np.clip(np.rint(noisy), info.min, info.max).astype(image.dtype)
    if clip is not None:
        noisy = np.clip(noisy, clip[0], clip[1])
    return noisy.astype(image.dtype if np.issubdtype(image.dtype, np.floating) else np.float64)


def add_depth_noise(
    depth, mean: float, stddev: float, seed: int, frame: int, stream: str = "depth"
) -> np.ndarray:
    """Noisy copy of a depth or range image ``(H, W)`` (m).

    Only finite values change, so ``+inf`` background (and NaN) stays as it is; noisy values are
    clamped at 0 since a depth cannot be negative. Keeps a float dtype (float64 otherwise).
    """
    depth = np.asarray(depth)
    dtype = depth.dtype if np.issubdtype(depth.dtype, np.floating) else np.float64
    noisy = add_gaussian_noise(depth, mean, stddev, seed, frame, stream)
    finite = np.isfinite(depth)
    out = np.where(finite, np.maximum(noisy, 0.0), depth)
    return out.astype(dtype)
