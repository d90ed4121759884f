"""Every hostile case of issue #29 through the real CLI, each in a fresh process under 4 GiB of address
space and a 60 s wall limit: what it answered, its exit status, CPU and wall seconds, peak RSS.

    python scripts/check_hostile.py                 # all cases
    python scripts/check_hostile.py --only airsim_100k adam7

A case passes when the process ends within the limits with the expected exit status (0 for files that
must be accepted, 1 for a clear error, either where both are right) and prints no traceback; the expected text (the file name, a
message) must appear in its output. Exits 1 when any case fails.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY = 4 << 30
WALL = 60.0


def _png_interlaced(width: int, height: int) -> bytes:
    figure = ("16462646", "77777777", "56565656", "77777777", "36463646", "77777777", "56565656", "77777777")
    raw = bytearray()
    for p in "1234567":
        for y in range(height):
            row = [(x * 7 + y * 3) % 256 for x in range(width) if figure[y % 8][x % 8] == p]
            if row:
                raw += bytes([0]) + bytes(row)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 1))
            + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


def _heightmap(png: str) -> str:
    return (f'<raisim version="1.0"><objects><heightmap name="t" png="{png}" x_size="5" y_size="5" center_x="0" '
            'center_y="0" z_offset="0" z_scale="1"/></objects></raisim>\n')


def _ball(extra: str = "", head: str = "") -> str:
    return f"raisim_engine_scene 2\n{head}object /World/ball sphere position=0,0,1 radius=0.1 {extra}\n"


def cases(d: str) -> dict[str, tuple]:
    """name -> (command after ``python -m rscene_addon``, expected exit status, text the output must hold)."""
    def put(name, text, mode="w"):
        path = os.path.join(d, name)
        with open(path, mode) as handle:
            handle.write(text)
        return path

    out = {}
    out["xml_runs_<?x"] = (["validate", put("runs.urdf", "<?x" * 349_000 + "<robot name='r'/>")], 1, "runs.urdf")
    out["xml_runs_<!--"] = (["validate", put("comments.urdf", "<!--" * 262_000 + "<robot name='r'/>")], 1,
                            "comments.urdf")
    robot = put("robot_bad.jsonc", json.dumps({"physics-type": "non-physics", "links": 1, "joints": True}))
    out["airsim_links_1"] = (["validate", put("scene_types.jsonc", json.dumps(
        {"id": "s", "actors": [{"type": "robot", "name": "r", "robot-config": os.path.basename(robot)}]}))], 1,
        "robot_bad.jsonc")
    out["rscene_version_zeros"] = (["validate", put("zeros.rscene", "raisim_engine_scene " + "0" * 400 + "2\n")], 0,
                                   "zeros.rscene")
    out["coppelia_resolution"] = (["validate", put("res.simscene.xml", "<CoppeliaSim><filetype>simpleScene</filetype>"
                                   "<camera><name>c</name><resolution>-2147483649 480</resolution></camera>"
                                   "</CoppeliaSim>\n")], 1, "res.simscene.xml")
    out["raisim_urdf_dev_zero"] = (["validate", put("devzero.xml", '<raisim version="1.0"><objects><articulatedSystem '
                                    'name="r" urdfPath="/dev/zero"/></objects></raisim>\n')], 1, "devzero.xml")
    fifo = os.path.join(d, "fifo.png")
    os.mkfifo(fifo)
    out["heightmap_fifo"] = (["validate", put("fifo.xml", _heightmap(fifo))], 1, "not a regular file")
    out["heightmap_dev_zero"] = (["validate", put("zero.xml", _heightmap("/dev/zero"))], 1, "not a regular file")
    with open(os.path.join(d, "adam7.png"), "wb") as handle:
        handle.write(_png_interlaced(13, 17))
    out["adam7_heightmap"] = (["validate", put("adam7.xml", _heightmap("adam7.png"))], 0, "adam7.xml")
    actors = [{"type": "robot", "name": f"a{i}", "origin": {"xyz": f"{i} 0 0", "rpy-deg": "0 0 0"},
               "robot-config": "robot_bad.jsonc"} for i in range(100_000)]
    out["airsim_100k_actors"] = (["validate", put("actors.jsonc", json.dumps({"id": "big", "actors": actors}))], 1,
                                 "robot_bad.jsonc")  # every actor names the bad config: the scene reads, the config fails
    # one name for every actor: each needs the next free ``_n`` suffix (a walk from _1 each was quadratic)
    put("robot_ok.jsonc", json.dumps({"physics-type": "non-physics", "links": []}))
    same = [{"type": "robot", "name": "a", "robot-config": "robot_ok.jsonc"}] * 100_000
    out["airsim_100k_one_name"] = (["validate", put("names.jsonc", json.dumps({"id": "n", "actors": same}))], 0,
                                   "names.jsonc")
    out["raisim_100k_array"] = (["validate", put("array.xml", '<raisim version="1.0"><objects><array idx="@@i" '
                                 'start="0" end="100000" increment="1"><sphere name="s@@i" mass="1"><dim radius="0.1"/>'
                                 '<state pos="@@i 0 1" quat="1 0 0 0"/></sphere></array></objects></raisim>\n')], 0,
                                "array.xml")
    out["raisim_100k_one_name"] = (["validate", put("names.xml", '<raisim version="1.0"><objects><array idx="@@i" '
                                    'start="0" end="100000" increment="1"><sphere name="s" mass="1"><dim radius="0.1"/>'
                                    '<state pos="@@i 0 1" quat="1 0 0 0"/></sphere></array></objects></raisim>\n')], 0,
                                   "names.xml")
    put("leaf.xml", '<raisim><objects><sphere name="s" mass="1"><dim radius="0.1"/></sphere></objects></raisim>\n')
    below = "leaf.xml"
    for level in range(4):
        put(f"level{level}.xml", "<raisim>" + f'<include file="{below}"/>' * 10 + "</raisim>\n")
        below = f"level{level}.xml"
    out["include_bomb"] = (["validate", put("bomb.xml", '<raisim version="1.0">' + f'<include file="{below}"/>' * 10
                                            + "</raisim>\n")], 1, "more than 1000 includes")
    out["mjcf_include_self"] = (["validate", put("self.xml", '<mujoco><worldbody>\n<include file="self.xml"/>'
                                                 '</worldbody></mujoco>\n')], 1, "included twice")
    npz = os.path.join(d, "out.npz")
    sand = put("sand.rscene", "raisim_engine_scene 2\ngranular /World/Sand particles 0 0 0 1 0 0 0 1 1 1 "
               "boxMin=-1000,-1000,0 boxMax=1000,1000,1000 radius=0.0001 spacing=0.0002\n")
    # Engine 2's default cap (20,000) of a 0.1 mm fill: either simulated or a clean error, never a traceback
    out["granular_default_cap"] = (["simulate", sand, "--duration", "0.05", "--backend", "numpy", "--out", npz],
                                   None, "sand.rscene")
    sys.path.insert(0, REPO)
    from rscene_addon.formats import rscene
    from rscene_addon.model import Scene, new_record
    ball = dict(path="/World/ball", primitive="sphere", position=(0, 0, 1), radius=0.1)
    for name, extra, changes in (("gravity", [new_record("gravity", gravity=(0, 0, -1e308))], {}),
                                 ("radius", [], {"radius": 1e308}), ("mass", [], {"mass": 1e-320}),
                                 ("quaternion", [], {"primitive": "box", "quaternion": (1e300, 1e300, 0, 0)})):
        scene = Scene()
        for record in extra + [new_record("object", **{**ball, **changes})]:
            scene.add(record)
        expect = 0 if name == "quaternion" else 1  # a huge quaternion is a rotation like any other
        out[f"overflow_{name}"] = (["simulate", put(f"ov_{name}.rscene", rscene.dumps(scene)), "--duration", "0.2",
                                    "--backend", "numpy", "--out", npz], expect, "wrote" if expect == 0 else "error")
    points = ";".join(f"{i % 1000},{i // 1000},0" for i in range(200_000))
    line = "raisim_engine_scene 2\npoint_cloud /World/cloud points=" + ";".join([points] * 17) + "\n"
    out["point_cloud_3.4M"] = (["validate", put("cloud.rscene", line)], 0, "cloud.rscene")  # ~31 MB, under the cap
    with open(os.path.join(d, "cloud200.rscene"), "w") as handle:
        handle.write("raisim_engine_scene 2\npoint_cloud /World/cloud points=")
        for _ in range(58):
            handle.write(points + ";")
        handle.write("0,0,0\n")
    out["point_cloud_over_cap"] = (["validate", os.path.join(d, "cloud200.rscene")], 1, "64 MiB")
    return out


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(name: str, argv: list[str], expect: int, text: str) -> bool:
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "rscene_addon", *argv], cwd=REPO, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=_limits)
        while True:  # wait4: this child's own CPU time and peak RSS
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > WALL:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                status = None
                break
            time.sleep(0.05)
        proc.returncode = 0  # reaped here; keeps Popen from waiting again
        wall = time.perf_counter() - start
        log.seek(0)
        output = log.read()
    rc = "timeout" if status is None else os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    good = (rc in (0, 1) if expect is None else rc == expect) and "Traceback" not in output and text in output
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    shown = next((ln for ln in lines if "error" in ln.lower()), lines[-1] if lines else "")
    print(f"| {name} | {'ok' if good else 'FAIL'} | {rc} | {cpu:.2f} s | {wall:.1f} s | {usage.ru_maxrss / 1024:.0f} MiB | "
          f"{shown[:110].replace('|', '/')} |", flush=True)
    return good


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", help="run only these cases")
    args = parser.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        table = cases(d)
        print("| case | result | exit | CPU | wall | peak RSS | first error line |")
        print("|---|---|---|---|---|---|---|")
        for name, (command, expect, text) in table.items():
            if args.only and name not in args.only:
                continue
            failed += not run(name, command, expect, text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
