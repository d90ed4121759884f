"""Long mutation-fuzz run of every reader: corpus files mutated as an attacker or a careless tool would.

    python scripts/fuzz_readers.py --inputs 20000                 # every reader
    python scripts/fuzz_readers.py --inputs 2000 --reader urdf --seed 7

Each input goes through the reader's real entry (``registry.read_scene`` for scene files, what
``python -m rscene_addon validate`` calls) under a per-input CPU-time limit and an address-space limit
(default 4 GiB). An outcome that is neither a read nor the reader's clean error (FormatError naming the
file) is bad: it is printed and kept under tests/unit/fuzz/regressions/ (``--no-save`` to keep nothing),
where a test replays it. Prints per reader: inputs, read, clean errors, bad, slowest input and peak RSS.
Exits 1 when any input was bad. Ctrl-C (or SIGTERM) stops after the current input and prints the counts
so far.
"""
from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.fuzzing import harness, mutators  # noqa: E402


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fuzz_reader(reader, n, seed, workspace, foreign, time_limit, save, progress_every=1000):
    counts = {"ok": 0, "clean": 0, "bad": 0}
    slowest = (0.0, "")
    start = time.perf_counter()
    stopped = False
    for i in range(n):
        if stop_requested():
            stopped = True
            break
        ch = mutators.RandomChooser(zlib.crc32(f"{seed}:{reader.name}:{i}".encode()))  # reproducible
        seed_file, data = harness.make_input(reader, ch, foreign)
        outcome = harness.run_one(reader, data, workspace.target(seed_file, reader), time_limit)
        counts[outcome.kind] += 1
        if outcome.seconds > slowest[0]:
            slowest = (outcome.seconds, harness.seed_name(seed_file))
        if outcome.kind == "bad":
            kept = harness.save_regression(reader, seed_file, data, outcome.detail) if save else "not kept"
            print(f"  BAD {reader.name} #{i}: {outcome.detail} -> {kept}", flush=True)
        done = i + 1
        if done % progress_every == 0 and done < n:
            rate = done / (time.perf_counter() - start)
            print(f"  {reader.name}: {done}/{n} ({rate:.0f}/s, {(n - done) / rate:.0f} s left)", flush=True)
    return counts, slowest, time.perf_counter() - start, stopped


_STOP = []


def stop_requested() -> bool:
    return bool(_STOP)


def _request_stop(signum, frame):
    _STOP.append(signum)  # finish the current input, then print what was done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=2000, help="inputs per reader (default 2000)")
    parser.add_argument("--reader", action="append", help="only this reader (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=10.0, help="CPU seconds per input before it counts as a hang (wall: 6x)")
    parser.add_argument("--memory-gib", type=float, default=4.0, help="address-space limit (0: none)")
    parser.add_argument("--no-save", action="store_true", help="do not keep bad inputs as regression files")
    args = parser.parse_args(argv)
    if args.memory_gib:
        limit = int(args.memory_gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    table = harness.readers()
    names = args.reader or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        parser.error(f"unknown reader(s) {unknown}; known: {', '.join(table)}")
    foreign = harness.foreign_lines(table)
    signal.signal(signal.SIGINT, _request_stop)
    signal.signal(signal.SIGTERM, _request_stop)
    workspace = harness.Workspace()
    total_bad = 0
    rows = []
    try:
        for name in names:
            reader = table[name]
            if not reader.seeds:
                print(f"{name}: no seed files (is ../shared/corpus there?)")
                total_bad += 1
                continue
            print(f"{name}: {args.inputs} inputs from {len(reader.seeds)} seed files", flush=True)
            counts, slowest, seconds, stopped = fuzz_reader(reader, args.inputs, args.seed, workspace, foreign,
                                                            args.time_limit, not args.no_save)
            total_bad += counts["bad"]
            rows.append((name, sum(counts.values()), counts, slowest, seconds, _rss_mib()))
            if stopped:
                print("cancelled: counts so far", file=sys.stderr)
                break
    finally:
        workspace.close()
    print("\n| reader | inputs | read | clean error | bad | slowest input (CPU) | run (wall) | peak RSS (process) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, counts, slowest, seconds, rss in rows:
        print(f"| {name} | {n} | {counts['ok']} | {counts['clean']} | {counts['bad']} | {slowest[0]:.2f} s "
              f"({slowest[1]}) | {seconds:.0f} s | {rss:.0f} MiB |")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
