"""RaiSim's Perlin terrain generator: MT19937, libstdc++'s shuffle, the noise and the fractal sum."""
from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest

from rscene_addon.formats import terrain_gen as tg


def test_mt19937_reference_values():
    gen = tg.MT19937()  # default seed 5489
    values = [gen() for _ in range(10000)]
    assert values[0] == 3499211612
    assert values[-1] == 4123659995  # required of std::mt19937 by the C++ standard


def test_permutation_is_a_doubled_permutation():
    p = tg.permutation(0)
    assert sorted(p[:256]) == list(range(256))
    assert np.array_equal(p[:256], p[256:])
    assert not np.array_equal(tg.permutation(0), tg.permutation(1))


CPP = r"""
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    unsigned long p[256];
    for (int i = 0; i < 256; ++i) p[i] = i;
    std::shuffle(p, p + 256, std::mt19937((std::uint32_t)std::strtoul(argv[a], nullptr, 10)));
    for (int i = 0; i < 256; ++i) std::printf("%lu%c", p[i], i == 255 ? '\n' : ' ');
  }
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compare with libstdc++'s std::shuffle")
def test_permutation_matches_libstdcxx(tmp_path):
    source = tmp_path / "perm.cpp"
    source.write_text(CPP)
    binary = tmp_path / "perm"
    subprocess.run(["g++", "-O1", "-o", str(binary), str(source)], check=True, capture_output=True)
    seeds = [0, 1, 5489, 12345, 2**32 - 1]
    out = subprocess.run([str(binary)] + [str(s) for s in seeds], check=True, capture_output=True, text=True)
    for seed, line in zip(seeds, out.stdout.splitlines()):
        assert tg.permutation(seed)[:256].tolist() == [int(v) for v in line.split()], seed


def _scalar_noise(p, x, y, z):
    """Improved Perlin noise at one point, written out plainly (Ken Perlin's reference form)."""
    def fade(t):
        return t * t * t * (t * (t * 6 - 15) + 10)

    def lerp(t, a, b):
        return a + t * (b - a)

    def grad(h, x, y, z):
        h &= 15
        u = x if h < 8 else y
        v = y if h < 4 else (x if h in (12, 14) else z)
        return (u if h & 1 == 0 else -u) + (v if h & 2 == 0 else -v)

    X, Y, Z = int(math.floor(x)) & 255, int(math.floor(y)) & 255, int(math.floor(z)) & 255
    x, y, z = x - math.floor(x), y - math.floor(y), z - math.floor(z)
    u, v, w = fade(x), fade(y), fade(z)
    A = p[X] + Y
    AA, AB = p[A] + Z, p[A + 1] + Z
    B = p[X + 1] + Y
    BA, BB = p[B] + Z, p[B + 1] + Z
    return lerp(w, lerp(v, lerp(u, grad(p[AA], x, y, z), grad(p[BA], x - 1, y, z)),
                        lerp(u, grad(p[AB], x, y - 1, z), grad(p[BB], x - 1, y - 1, z))),
                lerp(v, lerp(u, grad(p[AA + 1], x, y, z - 1), grad(p[BA + 1], x - 1, y, z - 1)),
                     lerp(u, grad(p[AB + 1], x, y - 1, z - 1), grad(p[BB + 1], x - 1, y - 1, z - 1))))


def test_vectorised_noise_matches_scalar():
    p = tg.permutation(7)
    pts = np.random.default_rng(3).uniform(0, 40, size=(200, 3))
    got = tg.perlin(p, pts[:, 0], pts[:, 1], pts[:, 2])
    ref = [_scalar_noise(p.tolist(), *pt) for pt in pts]
    assert np.allclose(got, ref, atol=0, rtol=0)


def test_generate_by_hand():
    # The corpus generator: 50 x 50 samples over 20 m, frequency 0.2, zScale 3, 3 octaves, gain 0.25
    props = tg.TerrainProperties(frequency=0.2, x_size=20, y_size=20, z_scale=3.0, x_samples=50, y_samples=50,
                                 fractal_octaves=3, fractal_lacunarity=2.0, fractal_gain=0.25, seed=0)
    heights = tg.generate(props)
    assert heights.shape == (2500,)
    p = tg.permutation(0).tolist()
    bound = 1 / (1 + 0.25 + 0.0625)
    for x, y in [(0, 0), (7, 3), (49, 49), (20, 31)]:
        fx, fy = 0.2 * 20 / 50 * x, 0.2 * 20 / 50 * y
        total = _scalar_noise(p, fx, fy, 0) + 0.25 * _scalar_noise(p, 2 * fx, 2 * fy, 0) \
            + 0.0625 * _scalar_noise(p, 4 * fx, 4 * fy, 0)
        assert heights[y * 50 + x] == pytest.approx((total * bound * 0.5 + 0.5) * 3.0, abs=1e-12)
    assert np.all((heights >= 0) & (heights <= 3.0))
    assert tg.matches(props, heights)
    assert not tg.matches(props, heights + 1e-9)


def test_step_size_and_offset():
    props = tg.TerrainProperties(x_samples=20, y_samples=10, step_size=0.25, height_offset=-1.0, seed=3)
    heights = tg.generate(props)
    assert heights.size == 200
    assert np.allclose(((heights + 1.0) / 0.25) % 1.0, 0.0)
    assert np.array_equal(heights, tg.generate(props))  # deterministic
