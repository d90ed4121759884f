"""Seeded Gaussian noise: reproducibility, independence and statistics."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rscene_addon.sensors.noise import (
    add_depth_noise,
    add_gaussian_noise,
    add_image_noise,
    gaussian_noise,
    noise_rng,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_same_seed_frame_stream_gives_same_noise():
    a = gaussian_noise((64, 48), 0.0, 1.0, seed=42, frame=7, stream="rgb")
    b = gaussian_noise((64, 48), 0.0, 1.0, seed=42, frame=7, stream="rgb")
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "other",
    [dict(seed=43, frame=7, stream="rgb"), dict(seed=42, frame=8, stream="rgb"),
     dict(seed=42, frame=-7, stream="rgb"), dict(seed=42, frame=7, stream="depth")],
)
def test_any_key_change_gives_different_noise(other):
    a = gaussian_noise(1000, 0.0, 1.0, seed=42, frame=7, stream="rgb")
    b = gaussian_noise(1000, 0.0, 1.0, **other)
    assert not np.array_equal(a, b)
    # Independent streams: sample correlation near 0 (|r| < 5 / sqrt(n)).
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / np.sqrt(1000)


def test_reproducible_across_processes():
    # Another interpreter with a different hash seed must draw the same numbers.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from rscene_addon.sensors.noise import gaussian_noise;"
        "print(repr(gaussian_noise(5, 0.5, 2.0, seed=9, frame=3, stream='imu').tolist()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT)], capture_output=True, text=True, env=env, check=True
    ).stdout
    here = gaussian_noise(5, 0.5, 2.0, seed=9, frame=3, stream="imu").tolist()
    assert ast.literal_eval(out) == here


def test_statistics_over_a_million_samples():
    n, mean, std = 1_000_000, 0.3, 2.0
    x = gaussian_noise(n, mean, std, seed=1, frame=0)
    # Standard errors: std / sqrt(n) for the mean, std / sqrt(2n) for the standard deviation.
    assert abs(x.mean() - mean) < 5 * std / np.sqrt(n)
    assert abs(x.std() - std) < 5 * std / np.sqrt(2 * n)
    # Gaussian shape: ~68.27 % within one sigma.
    inside = np.mean(np.abs(x - mean) < std)
    assert abs(inside - 0.682689) < 0.003


def test_generator_is_pcg64():
    assert isinstance(noise_rng(1, 2, "x").bit_generator, np.random.PCG64)


def test_zero_noise_is_identity_copy():
    v = np.arange(6.0).reshape(2, 3)
    out = add_gaussian_noise(v, 0.0, 0.0, seed=1)
    np.testing.assert_array_equal(out, v)
    assert out is not v
    with pytest.raises(ValueError):
        gaussian_noise(3, 0.0, -1.0, seed=1)


def test_depth_noise_keeps_background_and_stays_positive():
    rng = np.random.default_rng(0)
    depth = rng.uniform(0.5, 20.0, (300, 400)).astype(np.float32)
    depth[:50] = np.inf
    depth[60, 60] = np.nan
    noisy = add_depth_noise(depth, 0.0, 0.01, seed=3, frame=1)
    assert noisy.dtype == np.float32
    assert np.all(np.isposinf(noisy[:50]))
    assert np.isnan(noisy[60, 60])
    finite = np.isfinite(depth)
    diff = noisy[finite].astype(np.float64) - depth[finite]
    assert np.mean(diff != 0) > 0.99
    assert abs(diff.std() - 0.01) < 5e-4 and abs(diff.mean()) < 5e-4
    # Huge noise cannot make depth negative.
    assert np.all(add_depth_noise(depth, 0.0, 100.0, seed=3, frame=1)[finite] >= 0)
    # A pixel's noise does not depend on which other pixels are background.
    all_finite = np.where(finite, depth, 1.0).astype(np.float32)
    noisy_all = add_depth_noise(all_finite, 0.0, 0.01, seed=3, frame=1)
    np.testing.assert_array_equal(noisy_all[finite], noisy[finite])


def test_image_noise_dtypes_and_clipping():
    img8 = np.full((100, 100, 3), 250, dtype=np.uint8)
    out8 = add_image_noise(img8, 0.0, 20.0, seed=5, frame=2)
    assert out8.dtype == np.uint8 and out8.max() == 255 and out8.min() < 250
    imgf = np.full((100, 100, 3), 0.5, dtype=np.float32)
    outf = add_image_noise(imgf, 0.0, 1.0, seed=5, frame=2)
    assert outf.dtype == np.float32 and outf.min() == 0.0 and outf.max() == 1.0
    hdr = add_image_noise(imgf, 0.0, 1.0, seed=5, frame=2, clip=None)
    assert hdr.min() < 0.0 and hdr.max() > 1.0
    np.testing.assert_array_equal(add_image_noise(imgf, 0.0, 0.1, seed=5, frame=2),
                                  add_image_noise(imgf, 0.0, 0.1, seed=5, frame=2))


def test_variation_seed_is_deterministic_distinct_and_in_range():
    from rscene_addon.sensors.noise import variation_seed
    seeds = {variation_seed(7, v) for v in range(200)}
    assert len(seeds) == 200 and all(0 <= s < 2 ** 63 for s in seeds)
    assert variation_seed(7, 3) == variation_seed(7, 3) != variation_seed(8, 3)
    a = gaussian_noise(1000, 0.0, 1.0, variation_seed(7, 1), 5, "imu")
    b = gaussian_noise(1000, 0.0, 1.0, variation_seed(7, 2), 5, "imu")
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.1
