"""Benchmark: parse + write a generated 16 MB .rscene, as a ratio to bare ``line.split()`` on the file.

    python scripts/bench_codec.py [--mb 16]

Prints the baseline time (split every line, nothing else), the lazy read + write time (what opening
and saving a scene costs: records are split, fields decoded on demand), and the strict read (every
field of every record decoded and checked, what `validate` does). Ratios are measured in the same run,
so they do not depend on the machine. Target: lazy read + write <= 3x the baseline.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rscene_addon.formats import rscene  # noqa: E402


def generate(target_bytes: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    lines = ["raisim_engine_scene 2", "time_step 0.002", "gravity 0 0 -9.81", "asset_root ."]
    lines.append("material crate 0.8 0.5 0.2 1 0 0.6 id=crate")
    n = 512
    heights = ",".join(f"{rng.uniform(-1, 1):.6g}" for _ in range(n * n))
    lines.append(f"terrain_region /World/Terrain {n} {n} 100 100 0 0 0 material=crate heights={heights}")
    size = sum(len(line) + 1 for line in lines)
    i = 0
    while size < target_bytes:
        x, y, z = (rng.uniform(-50, 50) for _ in range(3))
        line = (f"object /World/Props/Crate_{i} box {x:.6g} {y:.6g} {z:.6g} 1 0 0 0 0.5 0.5 0.5 0.5 1 2 "
                f"default crate false true false - dynamic true 1 18446744073709551615 "
                f"id=object_crate_{i} parentGroupId=- renderMeshPath=- collisionMeshPath=-")
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=16.0)
    args = parser.parse_args()
    text = generate(int(args.mb * 1024 * 1024))
    print(f"scene: {len(text) / 1e6:.1f} MB, {text.count(chr(10))} lines")

    def baseline():
        for line in text.split("\n"):
            line.split()

    def lazy_round_trip():
        out = rscene.dumps(rscene.loads(text, "bench.rscene", lazy=True))
        assert len(out) == len(text)

    def strict_round_trip():
        rscene.dumps(rscene.loads(text, "bench.rscene"))

    base = best_of(baseline)
    lazy = best_of(lazy_round_trip)
    strict = best_of(strict_round_trip, 1)
    print(f"baseline line.split():        {base:.3f} s")
    print(f"read (lazy) + write:          {lazy:.3f} s   ratio {lazy / base:.2f}x   (target <= 3x)")
    print(f"read (strict, all decoded) + write: {strict:.3f} s   ratio {strict / base:.2f}x")


if __name__ == "__main__":
    main()
