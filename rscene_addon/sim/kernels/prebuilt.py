"""Kernels compiled ahead of time and shipped in the extension, so that a user's first step loads machine
code instead of compiling it (on a 2-core box ~50 s CPU for the rigid world's kernels, ~55 s more for the
robots').

``scripts/build_kernels.py`` compiles every kernel module with one interpreter for numba's portable CPU
target (``NUMBA_CPU_NAME=generic``: the architecture's baseline instruction set, so the code runs on any
machine of that architecture) and writes ``prebuilt/<sources>-<python>-<platform>/``: numba's cache files
for this package and ``manifest.json`` (numba's codegen key, the package's module name at build time, each
kernel source's sha256). ``scripts/build_extension.py --prebuilt DIR`` puts the folders made for a zip's
platform and Python into it.

A process's first kernel load asks :func:`activate` for the folder made for these sources, this Python and
this platform. Finding one, it switches numba to the same generic target before anything compiles (numba
keys its cache by target, so native code could not use the files); :func:`install` copies the files into
the user's kernel folder, where numba finds them as its own cache, and :func:`alias_modules` lets numba
import the kernel modules by the name they had at build time (Blender imports the extension as
``bl_ext.<repository>.rscene_addon``). Anything else (a development checkout, another platform, numba
already compiling natively in this process, ``RSCENE_PREBUILT=0``) changes nothing: the kernels compile
natively on first use, as without it. This package never imports bpy.
"""
from __future__ import annotations

import json
import os
import platform
import sys

from ...base.atomic import write_bytes_atomic

ENV_DIR = "RSCENE_PREBUILT_DIR"  # where the folders are (default: ``prebuilt`` beside this file)
ENV_SWITCH = "RSCENE_PREBUILT"  # "0": never use them
MANIFEST = "manifest.json"
FILES = "numba"  # the folder's subfolder of numba cache files
INSTALLED = "prebuilt-installed"  # marker in the user's kernel folder
_CPU_ENV = ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")
_KEYS = {"platform", "codegen", "cpu_name", "cpu_features", "package", "markers"}  # what the loader reads


def root() -> str:
    return os.environ.get(ENV_DIR) or os.path.join(os.path.dirname(os.path.abspath(__file__)), "prebuilt")


def platform_tag() -> str:
    """This interpreter and machine, e.g. ``cpython-311-linux-x86_64``: numba's cache files are only good
    for the Python line (bytecode hashes, file names) and architecture they were made with."""
    return f"{sys.implementation.cache_tag}-{sys.platform}-{platform.machine().lower()}"


def folder_name(token: str) -> str:
    return f"{token}-{platform_tag()}"


def codegen_key() -> list:
    """numba's key for the code it generates here (target triple, CPU name, CPU features), as stored in
    every cache index entry."""
    from numba.core.registry import cpu_target
    return list(cpu_target.target_context.codegen().magic_tuple())


def _read_manifest(folder: str) -> dict | None:
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or not _KEYS <= manifest.keys() or manifest["platform"] != platform_tag():
        return None  # not ours, or for another interpreter or machine
    return manifest


def _set_cpu_env(values: dict) -> None:
    import numba
    for name in _CPU_ENV:
        if values.get(name) is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = values[name]
    numba.config.reload_config()


def activate(token: str) -> dict | None:
    """The manifest of the shipped kernels for source version ``token`` with numba switched to their CPU
    target, or None (numba untouched) when there are none for this Python and platform, they are switched
    off, or numba's codegen in this process cannot match them (it already compiled for the host, or the user
    chose another CPU)."""
    if os.environ.get(ENV_SWITCH, "1").strip() == "0":
        return None
    folder = os.path.join(root(), folder_name(token))
    manifest = _read_manifest(folder)
    if manifest is None:
        return None
    wanted = {"NUMBA_CPU_NAME": manifest["cpu_name"], "NUMBA_CPU_FEATURES": manifest["cpu_features"]}
    if os.environ.get("NUMBA_CPU_NAME") not in (None, wanted["NUMBA_CPU_NAME"]):
        return None  # the user asked numba for another CPU
    before = {name: os.environ.get(name) for name in _CPU_ENV}
    _set_cpu_env(wanted)
    if codegen_key() != manifest["codegen"]:
        _set_cpu_env(before)  # numba's codegen was made earlier, for this host: compile natively
        return None
    manifest["folder"] = folder
    return manifest


def install(manifest: dict, kernel_dir: str, package_dir: str) -> None:
    """Copy the shipped cache files into ``kernel_dir`` (the user's folder for these sources and target)
    where numba's cache locator for ``package_dir`` (the kernels package) looks, and mark every part the
    build compiled as ready. Each file lands whole (written aside, then renamed), so two processes starting
    at once, or one killed halfway, never leave numba a torn file; a second call does nothing."""
    marker = os.path.join(kernel_dir, INSTALLED)
    if os.path.exists(marker):
        return
    from numba.core.caching import UserProvidedCacheLocator
    target = os.path.join(kernel_dir, UserProvidedCacheLocator.get_suitable_cache_subpath(
        os.path.join(package_dir, "__init__.py")))
    source = os.path.join(manifest["folder"], FILES)
    for name in sorted(os.listdir(source)):
        with open(os.path.join(source, name), "rb") as fh:
            write_bytes_atomic(os.path.join(target, name), fh.read(), durable=False)
    for ready in manifest["markers"]:
        write_bytes_atomic(os.path.join(kernel_dir, ready), b"", durable=False)
    write_bytes_atomic(marker, b"", durable=False)


def alias_modules(manifest: dict, package: str) -> None:
    """Make every loaded module of the kernels package ``package`` importable under the name it had when the
    shipped files were compiled: numba rebuilds each cached function's environment by importing its
    module by that name."""
    built = manifest["package"]
    if built == package:
        return
    for name, module in list(sys.modules.items()):
        if name.startswith(package + "."):
            sys.modules.setdefault(built + name[len(package):], module)
