#!/usr/bin/env python3
"""Compile the simulation kernels ahead of time, for shipping in the extension (``sim/kernels/prebuilt.py``).

    .venv/bpy45/bin/python scripts/build_kernels.py --out dist/prebuilt     # cp311 (Blender 4.5 .. 5.0)
    .venv/bpy52/bin/python scripts/build_kernels.py --out dist/prebuilt     # cp313 (Blender 5.1 on)
    .venv/bpy52/bin/python scripts/build_extension.py --prebuilt dist/prebuilt

Run it with the Python line the zip is for: numba's cache files hold that Python's bytecode hashes. It
compiles every kernel module (or ``--parts``) for numba's portable CPU target (``generic``) into an empty
cache and writes ``OUT/<sources>-<python>-<platform>/``: the cache files and ``manifest.json``. The folder
appears whole (built aside, then renamed) or not at all. Progress: one line per part, with CPU seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from build_extension import host_platform, host_python, kernel_sources  # (this script's folder is on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("shapes", "robots", "robot_group", "cloth")  # beside the rigid world's kernels, always built


def build(out: str, parts=PARTS, report=print) -> str:
    """Compile into a fresh cache and write the shipped folder under ``out``; returns its path. Must run in
    a process where numba has compiled nothing yet (the CPU target is chosen here, before the first)."""
    os.environ["NUMBA_CPU_NAME"] = "generic"
    os.environ["NUMBA_CPU_FEATURES"] = ""
    os.environ["NUMBA_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="rscene-prebuilt-")
    os.environ["RSCENE_PREBUILT"] = "0"  # never load an earlier build
    try:
        import numba
        from numba.core.caching import UserProvidedCacheLocator

        from rscene_addon.sim import kernels
        from rscene_addon.sim.kernels import prebuilt
        package_dir = os.path.dirname(os.path.abspath(kernels.__file__))
        token, sources, kdir = kernels.source_token(), kernel_sources(package_dir), kernels.kernel_dir()
        loaders = [("rigid", kernels.load)] + [(p, getattr(kernels, f"load_{p}")) for p in parts]
        for name, load in loaders:
            start = time.process_time()
            load()
            report(f"build_kernels: {name} compiled in {time.process_time() - start:.1f} s CPU")
        key = prebuilt.codegen_key()
        if key[1:] != ["generic", ""]:
            raise RuntimeError(f"numba compiled for {key}, not the generic target (it was used before this)")
        if kernel_sources(package_dir) != sources:
            raise RuntimeError(f"the kernel sources in {package_dir} changed during the build")
        files = os.path.join(kdir, UserProvidedCacheLocator.get_suitable_cache_subpath(
            os.path.join(package_dir, "__init__.py")))
        manifest = {
            "platform": prebuilt.platform_tag(),
            "zip": {"platform": host_platform(), "python": host_python()},  # the zip build_extension.py puts it in
            "numba": numba.__version__,
            "codegen": key,
            "cpu_name": "generic",
            "cpu_features": "",
            "package": kernels.__name__,
            "markers": sorted(n for n in os.listdir(kdir) if n.startswith("ready")),
            "sources": sources,
        }
        final = os.path.join(out, prebuilt.folder_name(token))
        os.makedirs(out, exist_ok=True)
        stage = tempfile.mkdtemp(prefix=".building-", dir=out)
        shutil.copytree(files, os.path.join(stage, prebuilt.FILES))
        with open(os.path.join(stage, prebuilt.MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(stage, final)
        return final
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder to put the built folder in")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help=f"kernel parts beside the rigid world's (default: {','.join(PARTS)})")
    ap.add_argument("--source", default=ROOT, help="the folder holding the rscene_addon package")
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        print(f"build_kernels: unknown parts {unknown}; known: {', '.join(PARTS)}", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.abspath(args.source))
    try:
        final = build(args.out, parts)
    except Exception as exc:  # a failed compile or write: say what, exit non-zero
        print(f"build_kernels: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(final)
    return 0


if __name__ == "__main__":
    sys.exit(main())
