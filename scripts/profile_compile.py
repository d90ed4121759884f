#!/usr/bin/env python3
"""Where the robot kernels' first compile goes: CPU seconds per compiled function, inclusive of its callees.

    .venv/pure/bin/python scripts/profile_compile.py [--top 60] [--prebuilt DIR]

Loads the rigid-world kernels (``kernels.load``), then times ``kernels.load_robots`` into an empty cache
(a temporary NUMBA_CACHE_DIR unless one is set), listening to numba's ``numba:compile`` events: each
function's seconds include the compiles of the callees it triggered, and the count says how many type
signatures it compiled for (more than one: a second specialization, a whole extra compile).

``--prebuilt DIR`` (folders made by ``scripts/build_kernels.py``) times what a user of a shipped extension
waits instead: the first load of the rigid world's kernels and of the robots' into an empty cache, with
the kernels compiled ahead of time in DIR (none of them should compile).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=60, help="functions listed, slowest first")
    ap.add_argument("--prebuilt", default=None, help="time a first use with these shipped kernels instead")
    args = ap.parse_args()
    os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="rscene-compile-profile-"))
    if args.prebuilt:
        os.environ["RSCENE_PREBUILT_DIR"] = os.path.abspath(args.prebuilt)
    from numba.core import event
    from rscene_addon.sim import kernels

    start = time.process_time()
    kernels.load()
    rigid = time.process_time() - start

    class Listener(event.Listener):
        def __init__(self):
            self.seconds = collections.defaultdict(float)
            self.count = collections.Counter()
            self.started = {}

        @staticmethod
        def _name(ev):
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__qualname__}" if fn else "?"

        def on_start(self, ev):
            self.started[id(ev.data.get("dispatcher"))] = time.process_time()

        def on_end(self, ev):
            name = self._name(ev)
            self.seconds[name] += time.process_time() - self.started.pop(id(ev.data.get("dispatcher")))
            self.count[name] += 1

    listener = Listener()
    event.register("numba:compile", listener)
    start = time.process_time()
    kernels.load_robots()
    total = time.process_time() - start
    if args.prebuilt:
        if not kernels.shipped():
            sys.exit(f"no shipped kernels for these sources, this Python and platform in {args.prebuilt}")
        print(f"with the shipped kernels ({kernels.shipped()['folder']}): rigid world's first load "
              f"{rigid:.2f} s CPU, then the robots' {total:.2f} s CPU, {len(listener.seconds)} functions compiled "
              f"(cache {os.environ['NUMBA_CACHE_DIR']})")
    else:
        print(f"robot kernels, first compile: {total:.1f} s CPU, {len(listener.seconds)} functions compiled "
              f"(cache {os.environ['NUMBA_CACHE_DIR']})")
    print("inclusive s  signatures  function")
    for name, s in sorted(listener.seconds.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{s:11.2f}  {listener.count[name]:10d}  {name}")


if __name__ == "__main__":
    main()
