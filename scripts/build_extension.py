#!/usr/bin/env python3
"""Build the rscene_addon Blender extension zip with Blender's own packaging tool.

Plain Python (3.11, standard library only): it does not import bpy. It uses ``blender_ext.py``, the
script behind ``blender --command extension validate|build``, which ships inside every bpy wheel at
``<site-packages>/bpy/<major.minor>/scripts/addons_core/bl_pkg/cli/blender_ext.py``.

Steps:
  1. locate the bpy package directory (``--bpy-dir``, else ``importlib.util.find_spec("bpy")`` in this
     interpreter, else the repository's ``.venv/bpy52`` / ``.venv/bpy45``);
  2. stage ``blender_manifest.toml`` + the contents of ``rscene_addon/`` in a temporary directory (the
     extension's ``__init__.py`` ends up at the zip root; ``__pycache__``, ``*.pyc`` and dot-files are
     left out), plus the manifest's ``wheels`` from ``wheels/`` (``scripts/fetch_wheels.py`` puts
     them there); with ``--platform`` the staged manifest keeps only those platforms and their wheels;
  3. ``blender_ext.py validate`` the staged directory (with Blender's list of valid tags);
  4. ``blender_ext.py build --source-dir STAGE --output-dir OUTPUT_DIR``, with ``--split-platforms``
     when the manifest names platforms: one zip per platform and Python line,
     ``<id>-<version>-<platform>-<cp311|cp313>.zip``, each with only that platform's wheels for that
     Python and ``blender_version_min/max`` set to the Blender releases that bundle it (cp311: 4.5 up
     to 5.1, cp313: 5.1 on); ``--platform any`` adds ``<id>-<version>.zip`` without platforms and
     platform wheels, for every other platform and Blender;
  5. with ``--prebuilt DIR`` (folders made by ``scripts/build_kernels.py``), one build per platform, each zip
     shipping the simulation kernels compiled ahead of time for its platform and Python (stale ones, made
     from other kernel sources, are an error);
  6. print the path of each zip (one per line, the last lines of stdout) and exit 0; exit non-zero on
     any failure.

Usage:
  python scripts/build_extension.py [--output-dir dist] [--bpy-dir PATH] [--source-dir rscene_addon]
                                    [--manifest blender_manifest.toml] [--platform linux-x64|host|any ...]
                                    [--python cp311|cp313|host ...] [--keep-stage] [--prebuilt DIR]
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import platform as _platform
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BLENDER_EXT_REL = Path("scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py")
VALID_TAGS_REL = Path("scripts", "modules", "_bpy_internal", "extensions", "tags.py")
_VERSION_DIR_RE = re.compile(r"^\d+\.\d+$")


# Python line -> the Blender releases that bundle it: blender_version_min, blender_version_max (exclusive,
# None: open). Blender 4.2 .. 5.0 bundle CPython 3.11, 5.1 and later 3.13. The minimum is the oldest
# release tested (4.5 LTS; the bake needs slotted actions, 4.4+).
PYTHON_LINES = {"cp311": ("4.5.0", "5.1.0"), "cp313": ("5.1.0", None)}


class BuildError(RuntimeError):
    pass


def _log(msg: str) -> None:
    print(f"build_extension: {msg}", file=sys.stderr, flush=True)


def find_bpy_dir(explicit: str | None = None) -> Path:
    """Return the ``bpy`` package directory of an installed bpy wheel (without importing bpy)."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    else:
        env = os.environ.get("RSCENE_BPY_DIR")
        if env:
            candidates.append(Path(env))
        spec = importlib.util.find_spec("bpy")
        if spec is not None:
            if spec.submodule_search_locations:
                candidates.extend(Path(p) for p in spec.submodule_search_locations)
            elif spec.origin:
                candidates.append(Path(spec.origin).parent)
        for venv in ("bpy52", "bpy45"):
            pattern = str(REPO_ROOT / ".venv" / venv / "lib" / "python3*" / "site-packages" / "bpy")
            candidates.extend(Path(p) for p in sorted(glob.glob(pattern)))
    for cand in candidates:
        if cand.is_dir() and _version_dirs(cand):
            return cand.resolve()
    if explicit:
        raise BuildError(f"--bpy-dir {explicit!r} is not a bpy package directory (no <major.minor>/ inside)")
    raise BuildError(
        "no installed bpy found (looked at find_spec('bpy') and .venv/bpy52, .venv/bpy45); "
        "run scripts/setup.sh or pass --bpy-dir <site-packages>/bpy"
    )


def _version_dirs(bpy_dir: Path) -> list[Path]:
    dirs = [p for p in bpy_dir.iterdir() if p.is_dir() and _VERSION_DIR_RE.match(p.name)]
    dirs = [p for p in dirs if (p / BLENDER_EXT_REL).is_file()]
    return sorted(dirs, key=lambda p: tuple(int(x) for x in p.name.split(".")))


def blender_ext_paths(bpy_dir: Path) -> tuple[Path, Path]:
    """Return (blender_ext.py, tags.py) inside ``bpy_dir``."""
    vdirs = _version_dirs(bpy_dir)
    if not vdirs:
        raise BuildError(f"{bpy_dir} has no <major.minor>/{BLENDER_EXT_REL.as_posix()}")
    vdir = vdirs[-1]
    tags = vdir / VALID_TAGS_REL
    if not tags.is_file():
        raise BuildError(f"valid-tags file missing: {tags}")
    return vdir / BLENDER_EXT_REL, tags


def host_platform() -> str:
    """This machine's Blender platform name (``linux-x64``, ``windows-x64``, ``macos-arm64``, ...)."""
    system = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    machine = _platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(machine, machine)
    return f"{system}-{arch}"


def wheel_platform(name: str) -> str | None:
    """The Blender platform a wheel file is for, from its platform tag (None: any platform)."""
    tag = name[:-len(".whl")].split("-")[-1]
    if tag == "any":
        return None
    arch = "arm64" if ("arm64" in tag or "aarch64" in tag) else "x64"
    if tag.startswith(("manylinux", "musllinux", "linux")):
        return f"linux-{arch}"
    if tag.startswith("win"):
        return f"windows-{arch}"
    if tag.startswith("macosx"):
        return f"macos-{arch}"
    raise BuildError(f"wheel {name}: unknown platform tag {tag!r}")


def wheel_python(name: str) -> str | None:
    """The Python line (``cp311``/``cp313``) a wheel is built for, None for pure/stable-ABI wheels."""
    abi = name[:-len(".whl")].split("-")[-2]
    return abi if abi in PYTHON_LINES else None


def host_python() -> str:
    return f"cp{sys.version_info[0]}{sys.version_info[1]}"


def restrict_python(manifest_text: str, meta: dict, python: str) -> str:
    """Manifest text with ``wheels`` cut down to one Python line and the Blender range that bundles it."""
    low, high = PYTHON_LINES[python]
    wheels = [w for w in meta.get("wheels", []) if wheel_python(Path(w).name) in (None, python)]
    manifest_text, count = re.subn(r"(?ms)^wheels\s*=\s*\[.*?\]\n?",
                                   _toml_list("wheels", wheels) + "\n" if wheels else "", manifest_text)
    if count != 1 and "wheels" in meta:
        raise BuildError("cannot rewrite the manifest's wheels list")
    manifest_text = re.sub(r'(?m)^blender_version_(min|max)\s*=.*\n', "", manifest_text)
    versions = f'blender_version_min = "{low}"\n' + (f'blender_version_max = "{high}"\n' if high else "")
    manifest_text, count = re.subn(r'(?m)^(type\s*=.*\n)', lambda m: m[1] + versions, manifest_text, count=1)
    if count != 1:
        raise BuildError("the manifest has no type = line to put the Blender version range after")
    return manifest_text


def _toml_list(key: str, values: list[str]) -> str:
    return f"{key} = [\n" + "".join(f'  "{v}",\n' for v in values) + "]"


def restrict_platforms(manifest_text: str, meta: dict, platforms: list[str]) -> str:
    """Manifest text with ``platforms`` and ``wheels`` cut down to ``platforms`` (a list of names);
    ``["any"]`` drops both lists: a zip for every platform, without platform-specific wheels."""
    if platforms == ["any"]:
        wheels = [w for w in meta.get("wheels", []) if wheel_platform(Path(w).name) is None]
        platforms = []
    else:
        unknown = sorted(set(platforms) - set(meta.get("platforms", [])))
        if unknown:
            raise BuildError(f"platforms {unknown} are not in the manifest's {meta.get('platforms', [])}")
        wheels = [w for w in meta.get("wheels", []) if wheel_platform(Path(w).name) in (None, *platforms)]
    for key, values in (("platforms", platforms), ("wheels", wheels)):
        manifest_text, count = re.subn(rf"(?ms)^{key}\s*=\s*\[.*?\]\n?",
                                       _toml_list(key, values) + "\n" if values else "", manifest_text)
        if count != 1 and key in meta:
            raise BuildError(f"cannot rewrite the manifest's {key} list")
    return manifest_text


def stage(source_dir: Path, manifest: Path, stage_dir: Path, platforms: list[str] | None = None,
          wheels_dir: Path = REPO_ROOT / "wheels", python: str | None = None) -> None:
    """Copy the manifest and the contents of ``source_dir`` into ``stage_dir`` (which must not exist),
    and the manifest's wheels (taken by file name from ``wheels_dir``) to where the manifest says."""
    if not (source_dir / "__init__.py").is_file():
        raise BuildError(f"{source_dir}/__init__.py is missing: the extension needs it at the zip root")
    if not manifest.is_file():
        raise BuildError(f"manifest not found: {manifest}")
    if (source_dir / "blender_manifest.toml").exists():
        raise BuildError(f"{source_dir}/blender_manifest.toml would shadow {manifest}")
    shutil.copytree(
        source_dir,
        stage_dir,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*", "prebuilt"),  # kernels: --prebuilt
    )
    text = manifest.read_text(encoding="utf-8")
    meta = tomllib.loads(text)
    if platforms:
        text = restrict_platforms(text, meta, platforms)
        meta = tomllib.loads(text)
    if python:
        text = restrict_python(text, meta, python)
        meta = tomllib.loads(text)
    (stage_dir / "blender_manifest.toml").write_text(text, encoding="utf-8")
    missing = []
    for wheel in meta.get("wheels", []):
        src, dst = wheels_dir / Path(wheel).name, stage_dir / wheel
        if not src.is_file():
            missing.append(src.name)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    if missing:
        raise BuildError(f"wheels missing from {wheels_dir}: {missing}; run scripts/fetch_wheels.py")


KERNELS_REL = Path("sim", "kernels")


def kernel_sources(kernels_dir: Path) -> dict[str, str]:
    """sha256 of every kernel source file (``sim/kernels/*.py``) by name: a folder of kernels compiled ahead of
    time records them (``scripts/build_kernels.py``), and a zip takes it only when they match its own."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(kernels_dir).glob("*.py"))}


def prebuilt_folders(prebuilt_dir: Path, source_dir: Path, platform: str, python: str) -> list[Path]:
    """The folders of kernels compiled ahead of time (``scripts/build_kernels.py``) in ``prebuilt_dir`` made
    for ``platform`` and ``python`` (``cp311``); one made from kernel sources other than ``source_dir``'s
    is an error, so a zip never ships stale machine code."""
    sources = kernel_sources(source_dir / KERNELS_REL)
    found = []
    for manifest_path in sorted(prebuilt_dir.glob("*/manifest.json")):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            made_for = (manifest["zip"]["platform"], manifest["zip"]["python"])
        except (OSError, ValueError, KeyError, TypeError) as ex:
            raise BuildError(f"{manifest_path}: not a build_kernels.py manifest ({ex})") from None
        if made_for != (platform, python):
            continue
        if manifest.get("sources") != sources:
            raise BuildError(f"{manifest_path.parent} was compiled from other kernel sources than "
                             f"{source_dir / KERNELS_REL}; run scripts/build_kernels.py again")
        found.append(manifest_path.parent)
    return found


def _run(cmd: list[str]) -> None:
    _log("$ " + " ".join(cmd))
    # blender_ext.py prints its messages to stdout; send them to stderr so that our stdout is just the path.
    proc = subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout.splitlines():
        _log("  " + line)
    if proc.returncode != 0:
        raise BuildError(f"command failed with exit code {proc.returncode}: {cmd[1]} {cmd[2]}")


def build(
    *,
    output_dir: Path,
    bpy_dir: str | None = None,
    source_dir: Path = REPO_ROOT / "rscene_addon",
    manifest: Path = REPO_ROOT / "blender_manifest.toml",
    platforms: list[str] | None = None,
    pythons: list[str] | None = None,
    keep_stage: bool = False,
    python: str = sys.executable,
    prebuilt_dir: Path | None = None,
) -> list[Path]:
    """Validate and build the extension; return the paths of the zips (one per platform and Python), each
    with the kernels in ``prebuilt_dir`` compiled for its platform and Python."""
    bpy_path = find_bpy_dir(bpy_dir)
    blender_ext, tags = blender_ext_paths(bpy_path)
    _log(f"using {blender_ext}")
    with open(manifest, "rb") as fh:
        meta = tomllib.load(fh)
    try:
        stem = f"{meta['id']}-{meta['version']}"
    except KeyError as ex:
        raise BuildError(f"{manifest} lacks {ex}") from None
    platforms = [host_platform() if p == "host" else p for p in platforms or []]
    any_build = "any" in platforms
    platforms = [p for p in platforms if p != "any"]
    if not platforms and not any_build:
        platforms = list(meta.get("platforms", []))
    pythons = [host_python() if p == "host" else p for p in pythons or PYTHON_LINES]
    unknown = sorted(set(pythons) - set(PYTHON_LINES))
    if unknown:
        raise BuildError(f"unknown Python lines {unknown}; known: {sorted(PYTHON_LINES)}")
    # one blender_ext.py build per staged manifest: (platforms, python, {blender_ext name: final name});
    # --split-platforms names each zip after its platform with "-" as "_" (blender_ext.py's rule), and
    # the Python line is appended here (blender_ext.py knows no split by Python)
    builds = []
    if platforms:
        for py in pythons:
            # shipped kernels are per platform: then one build per platform, not one split build
            for group in ([[p] for p in platforms] if prebuilt_dir else [platforms]):
                builds.append((group, py, {f"{stem}-{p.replace('-', '_')}.zip":
                                           f"{stem}-{p.replace('-', '_')}-{py}.zip" for p in group}))
    if any_build or not builds:
        builds.append((["any"] if any_build else [], None, {f"{stem}.zip": f"{stem}.zip"}))

    output_dir = output_dir.resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    zip_paths = [output_dir / final for _, _, names in builds for final in names.values()]
    for zip_path in zip_paths:
        if zip_path.exists():
            zip_path.unlink()

    base = [python, str(blender_ext)]
    for selected, py, names in builds:
        tmp = Path(tempfile.mkdtemp(prefix="rscene_ext_stage_"))
        stage_dir = tmp / meta["id"]
        built_dir = tmp / "built"
        built_dir.mkdir()
        split = bool(selected) and selected != ["any"]
        try:
            stage(Path(source_dir), Path(manifest), stage_dir, selected or None, python=py)
            if prebuilt_dir and py and split:
                for folder in prebuilt_folders(Path(prebuilt_dir), Path(source_dir), selected[0], py):
                    _log(f"shipping the kernels compiled in {folder.name}")
                    shutil.copytree(folder, stage_dir / KERNELS_REL / "prebuilt" / folder.name)
            _run(base + ["validate", "--valid-tags", str(tags), str(stage_dir)])
            _run(base + ["build", "--valid-tags", str(tags), "--source-dir", str(stage_dir),
                         "--output-dir", str(built_dir)] + (["--split-platforms"] if split else []))
            for built, final in names.items():
                if (built_dir / built).is_file():
                    shutil.move(str(built_dir / built), output_dir / final)
        finally:
            if keep_stage:
                _log(f"staged files kept in {stage_dir}")
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    absent = [p.name for p in zip_paths if not p.is_file()]
    if absent:
        raise BuildError(f"build reported success but {absent} do not exist in {output_dir}")
    return zip_paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--output-dir", default=str(REPO_ROOT / "dist"), help="where the zip goes (default: dist/)"
    )
    ap.add_argument("--bpy-dir", default=None, help="the installed bpy package dir (<site-packages>/bpy)")
    ap.add_argument("--source-dir", default=str(REPO_ROOT / "rscene_addon"), help="the add-on package")
    ap.add_argument("--manifest", default=str(REPO_ROOT / "blender_manifest.toml"))
    ap.add_argument("--platform", action="append", dest="platforms",
                    help="build only for this platform of the manifest (repeatable; 'host' = this machine; "
                         "'any' = one zip without platform-specific wheels, installable everywhere, the "
                         "lidar then using Blender's BVHTree); default: every platform the manifest lists")
    ap.add_argument("--python", action="append", dest="pythons",
                    help="build only for this Python line (cp311: Blender 4.5..5.0, cp313: Blender 5.1+; "
                         "'host' = this interpreter's); repeatable; default: both")
    ap.add_argument("--keep-stage", action="store_true", help="keep the staging directory for inspection")
    ap.add_argument("--prebuilt", default=None,
                    help="folder of kernels compiled ahead of time by scripts/build_kernels.py: each zip "
                         "ships those made for its platform and Python (first robot step without a compile)")
    args = ap.parse_args(argv)
    try:
        zip_paths = build(
            output_dir=Path(args.output_dir),
            bpy_dir=args.bpy_dir,
            source_dir=Path(args.source_dir),
            manifest=Path(args.manifest),
            platforms=args.platforms,
            pythons=args.pythons,
            keep_stage=args.keep_stage,
            prebuilt_dir=Path(args.prebuilt) if args.prebuilt else None,
        )
    except (BuildError, OSError, tomllib.TOMLDecodeError) as ex:
        _log(f"error: {ex}")
        return 1
    for zip_path in zip_paths:
        print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
