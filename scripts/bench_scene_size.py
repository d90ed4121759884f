"""How reading (what ``validate`` does) grows with the number of records, per format.

    python scripts/bench_scene_size.py                  # 10k and 100k records, every format
    python scripts/bench_scene_size.py --sizes 1000 3000 10000 --formats airsim

Generates a world of N records per format (an .rscene file of spheres, a RaiSim XML ``<array>`` of N spheres,
an AirSim scene of N actors, a CoppeliaSim scene of N rotated boxes) and reads it with
``registry.read_scene`` in a fresh process. Prints CPU and wall
seconds, records and peak RSS; the per-record CPU time should stay flat as N grows (``Scene.add`` was a
scan of the whole scene per record: quadratic). Then the CPU of a whole ``python -m rscene_addon validate``
process on the same file (start-up, imports, the read, the report, and the exit that frees the scene).
``--repeat N`` runs each N times and prints the medians (a shared machine's timings vary); the load
average is printed with each row.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_READ = """
import sys, time
sys.path.insert(0, {repo!r})
from rscene_addon.formats import registry
cpu, wall = time.process_time(), time.perf_counter()
scene = registry.read_scene({path!r})
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
# VmHWM, not ru_maxrss: Linux keeps a parent's ru_maxrss across exec (the .rscene writer's scene)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(len(scene.records), cpu, wall, hwm / 1024)
"""


def _write(fmt: str, n: int, folder: str) -> str:
    if fmt == "rscene":
        sys.path.insert(0, REPO)
        from rscene_addon.formats import rscene
        from rscene_addon.model import Scene, new_record
        scene = Scene()
        for i in range(n):
            scene.add(new_record("object", path=f"/World/s{i}", primitive="sphere", position=(i % 1000, i // 1000, 1),
                                 radius=0.1))
        path = os.path.join(folder, "big.rscene")
        with open(path, "w") as handle:
            handle.write(rscene.dumps(scene))
        return path
    if fmt == "raisim_xml":
        path = os.path.join(folder, "big.xml")
        with open(path, "w") as handle:
            handle.write(f'<raisim version="1.0"><objects><array idx="@@i" start="0" end="{n}" increment="1">'
                         '<sphere name="s@@i" mass="1"><dim radius="0.1"/><state pos="@@i 0 1" quat="1 0 0 0"/>'
                         '</sphere></array></objects></raisim>\n')
        return path
    if fmt == "coppelia_xml":  # rotated shapes: each pose goes through the record-tuple rotation helpers
        path = os.path.join(folder, "big.simscene.xml")
        with open(path, "w") as handle:
            handle.write("<CoppeliaSim><filetype>simpleScene</filetype>\n")
            for i in range(n):
                euler = f"{i * 7 % 360 - 180} {i * 3 % 180 - 90} {i * 11 % 360 - 180}"
                handle.write(f"<shape><common><alias>s{i}</alias><localFrame><position>{i % 1000} {i // 1000} 1"
                             f"</position><euler>{euler}</euler></localFrame></common><primitive><type>cuboid"
                             "</type><size>0.1 0.2 0.3</size></primitive><dynamics><mass>1</mass></dynamics>"
                             "</shape>\n")
            handle.write("</CoppeliaSim>\n")
        return path
    path = os.path.join(folder, "big.jsonc")
    actors = [{"type": "robot", "name": f"a{i}", "origin": {"xyz": f"{i} 0 0", "rpy-deg": "0 0 0"},
               "robot-config": "missing.jsonc"} for i in range(n)]
    with open(path, "w") as handle:
        json.dump({"id": "big", "actors": actors}, handle)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--formats", nargs="+", default=["rscene", "raisim_xml", "airsim", "coppelia_xml"],
                        choices=["rscene", "raisim_xml", "airsim", "coppelia_xml"])
    parser.add_argument("--repeat", type=int, default=1, help="runs per world; medians are printed")
    args = parser.parse_args(argv)
    print("| format | records | read CPU | read wall | CPU per 1000 records | peak RSS | validate CLI CPU | load |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for fmt in args.formats:
            for n in args.sizes:
                path = _write(fmt, n, folder)
                runs, validate = [], []
                for _ in range(max(1, args.repeat)):
                    out = subprocess.run([sys.executable, "-c", _READ.format(repo=REPO, path=path)], cwd=REPO,
                                         capture_output=True, text=True, check=False)
                    if out.returncode:
                        break
                    runs.append([float(v) for v in out.stdout.split()])
                    validate.append(_validate_cpu(path))
                if out.returncode:
                    print(f"| {fmt} | {n} | failed: {out.stderr.strip().splitlines()[-1][:120]} | | | | | |")
                    continue
                records, cpu, wall, rss = (statistics.median(column) for column in zip(*runs))
                print(f"| {fmt} | {records:.0f} | {cpu:.2f} s | {wall:.2f} s | {1000 * cpu / records:.3f} s | "
                      f"{rss:.0f} MiB | {statistics.median(validate):.2f} s | {os.getloadavg()[0]:.1f} |",
                      flush=True)
    return 0


def _validate_cpu(path: str) -> float:
    """User + system CPU seconds of a ``python -m rscene_addon validate`` process on ``path``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-m", "rscene_addon", "validate", path], cwd=REPO,
                         capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise SystemExit(f"validate failed on {path}: {out.stdout[-300:]}{out.stderr[-300:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


if __name__ == "__main__":
    sys.exit(main())
