"""RaiSim's Perlin terrain generator (``raisim::TerrainGenerator``), reimplemented deterministically.

The algorithm follows RaiSim's public header ``raisim/Terrain.hpp``: an improved-Perlin noise whose
permutation table is ``0..255`` shuffled by ``std::shuffle`` with ``std::mt19937(seed)``, summed over
``fractalOctaves`` octaves (frequency times ``fractalLacunarity``, amplitude times ``fractalGain``), scaled
to [0, 1], times ``zScale``, optionally floored to multiples of ``stepSize``, plus ``heightOffset``.
Sample ``(x, y)`` is at noise coordinates ``(frequency * xSize / xSamples * x,
frequency * ySize / ySamples * y, 0)`` and stored at ``heights[y * xSamples + x]``.

``std::shuffle`` is implementation-defined. This module reproduces libstdc++'s (GCC 11 and later: two
swap positions per draw, ``uniform_int_distribution`` by Lemire's method on 32-bit draws) and a
bit-exact MT19937; the tests compare the permutation with a program built against the local libstdc++
when ``g++`` is available. The heights have not been compared with a RaiSim binary, so a map may differ
from RaiSim's (for example if RaiSim was built with another C++ library); it is always the same for the
same parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MT19937", "TerrainProperties", "generate", "perlin", "permutation"]

MT_DEFAULT_SEED = 5489


class MT19937:
    """The 32-bit Mersenne Twister, seeded like ``std::mt19937(seed)``."""

    def __init__(self, seed: int = MT_DEFAULT_SEED):
        mt = [0] * 624
        mt[0] = seed & 0xFFFFFFFF
        for i in range(1, 624):
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
        self.mt = mt
        self.index = 624

    def _twist(self) -> None:
        mt = self.mt
        for i in range(624):
            y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
            mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        self.index = 0

    def __call__(self) -> int:
        if self.index >= 624:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y & 0xFFFFFFFF


def _uniform(gen: MT19937, bound: int) -> int:
    """libstdc++ ``uniform_int_distribution<>(0, bound - 1)`` on a 32-bit engine (Lemire's method)."""
    product = gen() * bound
    low = product & 0xFFFFFFFF
    if low < bound:
        threshold = (-bound % 2**32) % bound
        while low < threshold:
            product = gen() * bound
            low = product & 0xFFFFFFFF
    return product >> 32


def _shuffle(values: list, gen: MT19937) -> None:
    """libstdc++ ``std::shuffle`` for a range whose size squared fits the engine's range."""
    n = len(values)
    i = 1
    if n % 2 == 0:
        j = _uniform(gen, 2)
        values[i], values[j] = values[j], values[i]
        i += 1
    while i < n:
        swap_range = i + 1
        x = _uniform(gen, swap_range * (swap_range + 1))
        first, second = x // (swap_range + 1), x % (swap_range + 1)
        values[i], values[first] = values[first], values[i]
        i += 1
        values[i], values[second] = values[second], values[i]
        i += 1


def permutation(seed: int) -> np.ndarray:
    """The 512-entry permutation table of ``PerlinNoise(seed)``."""
    p = list(range(256))
    _shuffle(p, MT19937(seed))
    return np.array(p + p, dtype=np.int64)


def _fade(t):
    return t * t * t * (t * (t * 6 - 15) + 10)


def _grad(h, x, y, z):
    h = h & 15
    u = np.where(h < 8, x, y)
    v = np.where(h < 4, y, np.where((h == 12) | (h == 14), x, z))
    return np.where(h & 1, -u, u) + np.where(h & 2, -v, v)


def perlin(p: np.ndarray, x, y, z):
    """Improved Perlin noise at arrays of points (values in about [-1, 1])."""
    x, y, z = (np.asarray(v, dtype=np.float64) for v in (x, y, z))
    fx, fy, fz = np.floor(x), np.floor(y), np.floor(z)
    X, Y, Z = (fx.astype(np.int64) & 255), (fy.astype(np.int64) & 255), (fz.astype(np.int64) & 255)
    x, y, z = x - fx, y - fy, z - fz
    u, v, w = _fade(x), _fade(y), _fade(z)
    A = p[X] + Y
    AA, AB = p[A] + Z, p[A + 1] + Z
    B = p[X + 1] + Y
    BA, BB = p[B] + Z, p[B + 1] + Z

    def lerp(t, a, b):
        return a + t * (b - a)

    return lerp(w, lerp(v, lerp(u, _grad(p[AA], x, y, z), _grad(p[BA], x - 1, y, z)),
                        lerp(u, _grad(p[AB], x, y - 1, z), _grad(p[BB], x - 1, y - 1, z))),
                lerp(v, lerp(u, _grad(p[AA + 1], x, y, z - 1), _grad(p[BA + 1], x - 1, y, z - 1)),
                     lerp(u, _grad(p[AB + 1], x, y - 1, z - 1), _grad(p[BB + 1], x - 1, y - 1, z - 1))))


# What a few attributes may ask of the generator (checked by the reader before generating): real worlds
# use tens to hundreds of samples per axis and 3-5 octaves; past ~30 octaves the noise is below a double's
# precision anyway.
MAX_GENERATED_SAMPLES = 4 * 2**20
MAX_OCTAVES = 32
MAX_GENERATED_WORK = 2**20  # samples x octaves: under a second of noise (2.2 s for 1000 x 1000 x 3)


@dataclass
class TerrainProperties:
    """``raisim::TerrainProperties``, with RaiSim's defaults."""

    frequency: float = 0.1
    x_size: float = 10.0
    y_size: float = 10.0
    z_scale: float = 2.0
    x_samples: int = 100
    y_samples: int = 100
    fractal_octaves: int = 5
    fractal_lacunarity: float = 2.0
    fractal_gain: float = 0.5
    step_size: float = 0.0
    height_offset: float = 0.0
    seed: int = MT_DEFAULT_SEED


def generate(props: TerrainProperties) -> np.ndarray:
    """Heights, ``x_samples * y_samples`` values in RaiSim's order (``heights[y * x_samples + x]``)."""
    xs, ys = int(props.x_samples), int(props.y_samples)
    p = permutation(int(props.seed) & 0xFFFFFFFF)
    octaves = int(props.fractal_octaves)
    amp, amp_fractal = props.fractal_gain, 1.0
    for _ in range(1, octaves):
        amp_fractal += amp
        amp *= props.fractal_gain
    bound = 1.0 / amp_fractal
    y_idx, x_idx = np.mgrid[0:ys, 0:xs]
    x = props.frequency * props.x_size / xs * x_idx.astype(np.float64)
    y = props.frequency * props.y_size / ys * y_idx.astype(np.float64)
    z = np.zeros_like(x)
    total = perlin(p, x, y, z)
    amp = 1.0
    for _ in range(1, octaves):
        x, y, z = x * props.fractal_lacunarity, y * props.fractal_lacunarity, z * props.fractal_lacunarity
        amp *= props.fractal_gain
        total = total + perlin(p, x, y, z) * amp
    heights = (total * bound * 0.5 + 0.5) * props.z_scale
    if props.step_size > 0:
        heights = np.floor(heights / props.step_size) * props.step_size
    return (heights + props.height_offset).ravel()


def matches(props: TerrainProperties, heights) -> bool:
    """Whether ``heights`` is exactly what ``generate(props)`` gives (so the parameters can be written)."""
    heights = np.asarray(heights, dtype=np.float64)
    if heights.size != int(props.x_samples) * int(props.y_samples):
        return False
    if not 1 <= int(props.fractal_octaves) <= MAX_OCTAVES or heights.size > MAX_GENERATED_SAMPLES \
            or heights.size * int(props.fractal_octaves) > MAX_GENERATED_WORK:
        return False  # not something the generator makes (and too costly to try)
    return bool(np.array_equal(generate(props), heights))

