"""Shared setup of the dataset command's end-to-end tests: a tiny copy of the demo scene and its job."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

from tests.corpus import REPO

DEMO = REPO / "rscene_addon" / "demo.rscene"


def tiny_scene(folder: Path, name: str = "tiny.rscene") -> Path:
    """The demo scene with a 32x24 camera and a 36-column lidar (same bodies, IMU noise seed 7)."""
    text = DEMO.read_text().replace("320 240 rgb", "32 24 rgb").replace("lidarSamples=360", "lidarSamples=36")
    assert "32 24 rgb" in text and "lidarSamples=36 " in text
    path = folder / name
    path.write_text(text)
    return path


def write_job(folder: Path, body: str, scenes=("tiny.rscene",)) -> Path:
    path = folder / "job.toml"
    path.write_text(f"scenes = {json.dumps(list(scenes))}\nsamples = 1\n" + body)
    return path


def dataset_command(*args, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "rscene_addon", "dataset", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=900, env=env, **kwargs)


def dataset_popen(*args, env=None):
    """The command in its own process group (the test may kill it with everything it started)."""
    return subprocess.Popen([sys.executable, "-m", "rscene_addon", "dataset", *map(str, args)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)


def png_pixels(path: Path) -> bytes:
    """A PNG's decompressed image data (Blender also writes the date and file path as text chunks)."""
    data, pos, idat = path.read_bytes(), 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


def dataset_arrays(out: Path) -> dict:
    """Every data file of a dataset's units: .npy/.csv/.json/.ply/.pcd bytes, PNG pixels (relative path ->
    bytes). EXR files are left out: Blender writes the render date into their header."""
    files = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if not path.is_file() or rel.startswith(("bakes/", "logs/")) or path.name in (
                "unit.json", "log.txt", "job.json", "dataset.json", "units.jsonl") or path.name.startswith("manifest_") \
                or path.suffix == ".exr":
            continue
        files[rel] = png_pixels(path) if path.suffix == ".png" else path.read_bytes()
    return files


def unit_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.glob("*/*/chunk*") if p.is_dir())


def env_with(**values) -> dict:
    env = dict(os.environ)
    env.update({k: str(v) for k, v in values.items()})
    return env
