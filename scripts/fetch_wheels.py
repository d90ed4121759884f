#!/usr/bin/env python3
"""Fetch the third-party wheels the extension ships into ./wheels/ (gitignored), pinned and checked.

Blender installs an extension's wheels itself (``wheels = [...]`` in ``blender_manifest.toml``); the
add-on never pip-installs anything at run time. This script is how those files get here: each wheel
of the manifest must be listed in :data:`PINNED` with its SHA-256, is downloaded with pip (``pip
download --no-deps --only-binary=:all:`` for the wheel's own platform tag, so pip's index settings
and ``PIP_*`` variables apply) and is kept only if its hash matches. A wheel already present with the
right hash is not fetched again.

Usage:
  python scripts/fetch_wheels.py [--dest wheels] [--platform linux-x64 ...] [--check]

``--platform`` limits the fetch to Blender platform names (default: every wheel of the manifest);
``--check`` only verifies what is present (exit 1 if anything is missing or wrong). The last lines of
stdout are the paths of the wheels, one per line.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = REPO_ROOT / "blender_manifest.toml"

# file name -> (Blender platform, sha256). Blender 4.2 .. 5.0 bundle CPython 3.11 (cp311 wheels), 5.1 and
# later CPython 3.13 (cp313): scripts/build_extension.py makes one zip per platform and Python.
# embreex 4.4.0.post1 (Intel Embree 4.4, BSD-2 binding, Apache-2.0 Embree): ray casting for the lidar.
# numba 0.68.1 + llvmlite 0.50.0 (BSD-2): the simulation's compiled kernels (no macos-x64 wheels: the
# numpy backend runs there).
# pycollada 0.9.3 (BSD-3) + python-dateutil 2.9.0.post0 (Apache-2.0/BSD) + six 1.17.0 (MIT): pure-Python
# wheels for every platform; COLLADA robot meshes (scene_geometry/collada.py).
PINNED = {
    "pycollada-0.9.3-py3-none-any.whl":
        ("any", "636e6496f60987586db82455ea7bbd9ade775e8181c6590c83b698b6cd53a9f5"),
    "python_dateutil-2.9.0.post0-py2.py3-none-any.whl":
        ("any", "a8b2bc7bffae282281c8140a97d3aa9c14da0b136dfe83f850eea9a5f7470427"),
    "six-1.17.0-py2.py3-none-any.whl":
        ("any", "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"),
    "embreex-4.4.0.post1-cp311-cp311-macosx_13_0_arm64.whl":
        ("macos-arm64", "3ed370224566681071f245bbc5104feebee1354097679ab69cb3a70c94633cb3"),
    "embreex-4.4.0.post1-cp311-cp311-macosx_13_0_x86_64.whl":
        ("macos-x64", "85d9b232805e95be845ee5d77ddea4e6b21c992b7e60fa7bdf4f578b84797a15"),
    "embreex-4.4.0.post1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "2cd0f7d5c6342e6247e31f700761689cae7829454d8c6de0c41e62124a023e1f"),
    "embreex-4.4.0.post1-cp311-cp311-win_amd64.whl":
        ("windows-x64", "3df27becf6a12b59f5a469bc5271622e26387d52a15880edd29aa564246e7176"),
    "embreex-4.4.0.post1-cp313-cp313-macosx_13_0_arm64.whl":
        ("macos-arm64", "8e0ec6325caab812cb428da4cecb8905b40c6d5bda386ffb73d44bbf2aa7af56"),
    "embreex-4.4.0.post1-cp313-cp313-macosx_13_0_x86_64.whl":
        ("macos-x64", "b8bd326b36151373adaad23268b60b39d20ec8a371eb1bae309a31e4ab78ac71"),
    "embreex-4.4.0.post1-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "83165d2bb0436ab9b07d8e7236a0f2509c7868b3a85f2fbd8c41b4d023e88e38"),
    "embreex-4.4.0.post1-cp313-cp313-win_amd64.whl":
        ("windows-x64", "506009885b72923661f2b5cd3decd593b9340e3ef06ddb70763303fc5982253e"),
    "llvmlite-0.50.0-cp311-cp311-macosx_12_0_arm64.whl":
        ("macos-arm64", "818b3d4845ac8e126e23cb500867570d0602a42a43e67b14acec31f046e03130"),
    "llvmlite-0.50.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "a6ffde00d4be8772a24e3e8b3af6bf86a79e7cf066d944ef56136b3957d707dc"),
    "llvmlite-0.50.0-cp311-cp311-win_amd64.whl":
        ("windows-x64", "ffe46ef508df226e54b5fe1f7bf11122e5297bcdbb3902cc5b670a429d56ff47"),
    "llvmlite-0.50.0-cp313-cp313-macosx_12_0_arm64.whl":
        ("macos-arm64", "a32980e3d727b0e56974ad89d0764920048602a75805b8917cc0298e798b0ced"),
    "llvmlite-0.50.0-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "425845f415a06dc50db08db033c6b568e0d85c4937e932c605a4d49e1514b2da"),
    "llvmlite-0.50.0-cp313-cp313-win_amd64.whl":
        ("windows-x64", "266a6a29be71c3e3a22960ddcedf66b4e0388e5abb6cc4991cc093d6df402ad7"),
    "numba-0.68.1-cp311-cp311-macosx_12_0_arm64.whl":
        ("macos-arm64", "fb83f1043e53753503d303036065990ff48fe0ef901e897153f57b2aec12c38d"),
    "numba-0.68.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "58fe7a3810261cf13797d8aa94c018cfe91e1e8adf634df60eb60ef834f9367b"),
    "numba-0.68.1-cp311-cp311-win_amd64.whl":
        ("windows-x64", "e5a2d544d8a2da45f9cc5856ed794c31f133ada51ef7a734a9b7cd4596e1887f"),
    "numba-0.68.1-cp313-cp313-macosx_12_0_arm64.whl":
        ("macos-arm64", "c9cc5e30f0ec71d1d6e706cd3f9f98218a0221ee8cf25bb2079bdc1a9c4ae65a"),
    "numba-0.68.1-cp313-cp313-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl":
        ("linux-x64", "4d1b544f37fc237d16698a4266bb3d5b3c40ec8aa4c925a191ff09ec6d115310"),
    "numba-0.68.1-cp313-cp313-win_amd64.whl":
        ("windows-x64", "dc3f29d540be5fc60699dbac53fc04f246cbf503a4e2e8315f04b70fcd9f1ec7"),
}


class FetchError(RuntimeError):
    pass


def _log(msg: str) -> None:
    print(f"fetch_wheels: {msg}", file=sys.stderr, flush=True)


def manifest_wheels(manifest: Path = MANIFEST) -> list[str]:
    """The wheel file names the manifest lists (``./wheels/<name>``); each must be pinned here."""
    with open(manifest, "rb") as fh:
        wheels = tomllib.load(fh).get("wheels", [])
    names = [Path(w).name for w in wheels]
    unpinned = [n for n in names if n not in PINNED]
    if unpinned:
        raise FetchError(f"{manifest.name} lists wheels without a pinned hash here: {unpinned}")
    return names


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _parse(name: str) -> tuple[str, str, str]:
    """``(project, version, platform tag)`` of a wheel file name (the first of a compressed tag set)."""
    parts = name[:-len(".whl")].split("-")
    return parts[0], parts[1], parts[-1].split(".")[0]


def _download(name: str, into: Path) -> Path:
    project, version, platform_tag = _parse(name)
    abi = name[:-len(".whl")].split("-")[-2]           # cp311 / cp313, or none for a pure wheel
    cmd = [sys.executable, "-m", "pip", "download", f"{project}=={version}", "--no-deps",
           "--only-binary=:all:", "--dest", str(into), "--quiet"]
    if abi != "none":
        cmd += ["--platform", platform_tag, "--python-version", f"{abi[2]}.{abi[3:]}", "--implementation", "cp",
                "--abi", abi]
    _log("$ " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FetchError(f"pip download of {name} failed:\n{proc.stdout}{proc.stderr}")
    got = into / name
    if not got.is_file():
        found = sorted(p.name for p in into.glob("*.whl"))
        raise FetchError(f"pip download gave {found}, not {name}")
    return got


def fetch(dest: Path, platforms: set[str] | None = None, check_only: bool = False) -> list[Path]:
    """Make ``dest`` hold every wanted pinned wheel with its hash; returns their paths."""
    wanted = [n for n in manifest_wheels() if platforms is None or PINNED[n][0] in (*platforms, "any")]
    if platforms is not None and not wanted:
        raise FetchError(f"no wheel of the manifest is for {sorted(platforms)}")
    dest.mkdir(parents=True, exist_ok=True)
    paths, problems = [], []
    for name in wanted:
        path, expected = dest / name, PINNED[name][1]
        if path.is_file() and sha256(path) == expected:
            paths.append(path)
            continue
        if check_only:
            problems.append(f"{name}: {'wrong hash' if path.exists() else 'missing'}")
            continue
        with tempfile.TemporaryDirectory(prefix="fetch-wheels-") as tmp:
            got = _download(name, Path(tmp))
            actual = sha256(got)
            if actual != expected:
                raise FetchError(f"{name}: sha256 {actual}, pinned {expected}; not kept")
            shutil.move(str(got), path)
        _log(f"fetched {name} ({path.stat().st_size / 1e6:.1f} MB, sha256 ok)")
        paths.append(path)
    if problems:
        raise FetchError("; ".join(problems) + " (run scripts/fetch_wheels.py)")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", default=str(REPO_ROOT / "wheels"), help="target folder (default: wheels/)")
    ap.add_argument("--platform", action="append", dest="platforms",
                    help="Blender platform to fetch for (linux-x64, windows-x64, macos-arm64, macos-x64); "
                         "repeatable; default: all the manifest lists")
    ap.add_argument("--check", action="store_true", help="verify only, download nothing")
    args = ap.parse_args(argv)
    try:
        paths = fetch(Path(args.dest), set(args.platforms) if args.platforms else None, args.check)
    except (FetchError, OSError, tomllib.TOMLDecodeError) as ex:
        _log(f"error: {ex}")
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
