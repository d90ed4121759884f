"""Format detection, reading and writing by format name, and conversion between formats.

Formats are recognised by content first: a ``raisim_engine_scene`` header (``rscene``), a JSON object with
``actors`` (``airsim``), or the root element of an XML file: ``<raisim>`` (``raisim_xml``),
``<CoppeliaSim>`` (``coppelia_xml``), ``<mujoco>`` (``mjcf``), ``<robot>`` (``urdf``). The file name only
decides when the content says nothing (an empty file, for example) and, for writing, which format a new
file gets (``.rscene``, ``.simscene.xml``/``.simmodel.xml``, ``.xml``, ``.jsonc``/``.json``).

``write_scene`` and ``convert`` return warnings naming what the target format cannot hold. Relative file
references are rewritten when a scene is written into another folder, so they keep pointing at the same
files; an ``.rscene`` whose references need no change is written byte for byte as it was read.
"""
from __future__ import annotations

import importlib
import json
import os
import re

from ..model import Diagnostic, FormatError, Scene
from ..model.errors import ValueFormatError
from ..model.record import decode_batch, paused_gc
from . import airsim, coppelia_xml, jsonc, raisim_xml, rscene
from .atomic import read_source
from .sceneutil import rebase_references

__all__ = [
    "FORMATS",
    "WRITABLE",
    "convert",
    "detect",
    "detect_text",
    "format_for_path",
    "read_scene",
    "write_scene",
]

FORMATS = ("rscene", "raisim_xml", "coppelia_xml", "airsim", "mjcf", "urdf")
WRITABLE = ("rscene", "raisim_xml", "coppelia_xml", "airsim")
# File name endings per format, for file dialogs (content decides when reading).
FILE_EXTENSIONS = {"rscene": (".rscene",), "raisim_xml": (".xml",),
                   "coppelia_xml": (".simscene.xml", ".simmodel.xml", ".xml"), "airsim": (".jsonc", ".json")}
_READERS = {"rscene": rscene.read, "raisim_xml": raisim_xml.read, "coppelia_xml": coppelia_xml.read,
            "airsim": airsim.read}
_WRITERS = {"raisim_xml": raisim_xml.write, "coppelia_xml": coppelia_xml.write, "airsim": airsim.write}
_XML_ROOTS = {"raisim": "raisim_xml", "coppeliasim": "coppelia_xml", "mujoco": "mjcf", "robot": "urdf"}
_EXTENSIONS = ((".rscene", "rscene"), (".simscene.xml", "coppelia_xml"), (".simmodel.xml", "coppelia_xml"),
               (".jsonc", "airsim"), (".json", "airsim"), (".urdf", "urdf"), (".mjcf", "mjcf"),
               (".xml", "raisim_xml"))
_SNIFF_BYTES = 1 << 20
# What may stand before an XML root element, and what ends it.
_XML_PROLOG = (("<?", "?>"), ("<!--", "-->"), ("<!DOCTYPE", ">"))
_XML_NAME = re.compile(r"[A-Za-z_][\w.:-]*")


def _by_extension(path: str) -> str | None:
    low = path.lower()
    for ext, fmt in _EXTENSIONS:
        if low.endswith(ext):
            return fmt
    return None


def detect_text(text: str, path: str = "<string>") -> str | None:
    """The format of ``text`` judged by its content alone, or None when the content does not say."""
    text = text.lstrip("\ufeff")
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.split()[0] == rscene.HEADER_TAG:
            return "rscene"
        break
    head = text.lstrip()[:1]
    if head not in ("{", "[", "/"):
        body = ""
    elif "//" in text or "/*" in text:  # comments to blank first (a regex callback per string: ~0.3 s/MiB)
        body = jsonc.strip_comments(text).lstrip()
    else:
        body = text.lstrip()
    if body[:1] in ("{", "["):
        says_actors = re.search(r'"actors"\s*:', body) is not None
        if not says_actors:  # no parse needed to know it is no AirSim scene
            return None
        try:  # the C parser on the stripped text: the reader parses again, naming lines
            data = json.loads(body)
        except (ValueError, RecursionError):
            # malformed (or a head cut at _SNIFF_BYTES): still an AirSim scene if it says so, so that the
            # reader reports the line
            return "airsim"
        return "airsim" if isinstance(data, dict) and "actors" in data else None
    root = xml_root_name(text)
    return _XML_ROOTS.get(root.split(":")[-1].lower()) if root else None


def xml_root_name(text: str) -> str | None:
    """The name of the first element of ``text`` after processing instructions, comments and a DOCTYPE.

    One left-to-right pass with ``str.find``: linear in the text whatever it holds. (A regex that skipped
    ``<?...?>`` lazily rescanned to the end of the text from every unclosed ``<?``, which made 120 kB of
    ``<?x`` cost 18 CPU-s.) An unclosed instruction or comment is skipped over like the regex did, and once
    a terminator was not found it is never searched for again.
    """
    missing: set[str] = set()  # terminators known to be absent from the rest of the text
    i = text.find("<")
    while i >= 0:
        for opener, closer in _XML_PROLOG:
            if text.startswith(opener, i):
                end = -1 if closer in missing else text.find(closer, i + len(opener))
                if end < 0:
                    missing.add(closer)
                    i += 1
                else:
                    i = end + len(closer)
                break
        else:
            match = _XML_NAME.match(text, i + 1)
            if match:
                return match.group(0)
            i += 1
        i = text.find("<", i)
    return None


def detect(path: str) -> str:
    """'rscene', 'raisim_xml', 'coppelia_xml', 'airsim', 'mjcf' or 'urdf'. Raises FormatError otherwise."""
    head = read_source(path, _SNIFF_BYTES)
    fmt = detect_text(head, path)
    if fmt is None and (not head.strip() or _by_extension(path) == "rscene"):
        # an .rscene-named file that says nothing else: its reader names the line that lacks the header
        fmt = _by_extension(path)
    if fmt is None:
        raise FormatError(Diagnostic(path, 0, "", "unrecognised scene format: expected an .rscene scene, a RaiSim "
                                     "or CoppeliaSim XML world, a Project AirSim scene (JSON with 'actors'), "
                                     "MJCF or URDF"))
    return fmt


def read_scene(path: str) -> Scene:
    """Read any supported file into a Scene (``scene.warnings`` holds the reader's warnings)."""
    fmt = detect(path)
    reader = _READERS.get(fmt)
    if reader is None:
        module = _optional_module(fmt)
        if module is None or not hasattr(module, "read"):
            raise FormatError(Diagnostic(path, 0, "", f"{fmt} files are not supported yet"))
        reader = module.read
    # the collector's full passes find nothing to free while a reader builds (a quarter of a 50k-body
    # world's time, growing with it); the .rscene reader pauses it itself
    with paused_gc():
        scene = reader(path)
        if getattr(scene, "source_format", None) is None:
            scene.source_format = fmt
        if fmt != "rscene":  # the rscene reader decodes every value itself
            _check_values(scene, path)
    return scene


def _check_values(scene: Scene, path: str) -> None:
    """Every value a reader put into the scene decodes under its field's rule (an integer in range, a
    finite number, ...): otherwise the file is invalid here, not at the first write (a CoppeliaSim
    resolution of -2147483649 used to pass ``validate`` and fail ``convert`` without naming the file)."""
    errors = []
    records = scene.records
    # the records a reader built hold only encoded values: what an encoder always gets right is not decoded
    for record, decoded in zip(records, decode_batch(records, built=True)):
        if record.schema is None:
            continue
        problems = record.decode_keys(built=True) if decoded else (record.structure_errors() or record.decode_all())
        if not problems:  # (most records: no path decoded to name them)
            continue
        try:
            name = record.path if record.schema.field("path") else ""
        except ValueFormatError:
            name = ""
        for message in problems:
            if not message.startswith("warning: "):
                errors.append(Diagnostic(path, record.line, record.tag, f"{name}: {message}" if name else message))
    if errors:
        raise FormatError(errors)


def _optional_module(fmt: str):
    try:
        return importlib.import_module(f".{fmt}", __package__)
    except ImportError:
        return None


def format_for_path(path: str, scene: Scene | None = None) -> str:
    """The format a file named ``path`` is written in (``.xml``: the existing file's, else the scene's
    XML format if it was read from one, else RaiSim XML)."""
    fmt = _by_extension(path)
    if fmt == "raisim_xml":
        existing = None
        if os.path.isfile(path):
            try:
                existing = detect(path)
            except FormatError:
                existing = None
        if existing in ("raisim_xml", "coppelia_xml"):
            return existing
        source = getattr(scene, "source_format", None)
        if source in ("raisim_xml", "coppelia_xml"):
            return source
    if fmt is None:
        raise FormatError(Diagnostic(path, 0, "", "cannot tell the format from the file name; name one of "
                                     + ", ".join(WRITABLE)))
    return fmt


def write_scene(scene: Scene, path: str, fmt: str | None = None) -> list[str]:
    """Write ``scene`` to ``path`` as ``fmt`` (default: from the file name). Returns the loss warnings."""
    fmt = fmt or format_for_path(path, scene)
    if fmt not in WRITABLE:
        raise FormatError(Diagnostic(path, 0, "", f"cannot write {fmt!r}: writable formats are "
                                     + ", ".join(WRITABLE)))
    if fmt == "rscene":
        return _write_rscene(scene, path)
    return _WRITERS[fmt](scene, path)


def _write_rscene(scene: Scene, path: str) -> list[str]:
    new_dir = os.path.dirname(os.path.abspath(path))
    old_dir = scene.directory
    if rebase_references(scene, old_dir, new_dir, dry_run=True):
        copy = rscene.loads(rscene.dumps(scene), scene.path or "<string>", lazy=True)
        copy.path = scene.path
        rebase_references(copy, old_dir, new_dir)
        rscene.write(copy, path)
    else:
        rscene.write(scene, path)
    return []


def convert(src: str, dst: str, to: str | None = None) -> list[str]:
    """Read ``src`` (any supported format) and write it to ``dst`` as ``to`` (default: from ``dst``'s name).

    Returns the warnings: the reader's (``file:line (tag): message``) followed by what the target cannot hold.
    """
    scene = read_scene(src)
    warnings = [_located(d) for d in scene.warnings]
    fmt = to or format_for_path(dst, scene)
    warnings.extend(write_scene(scene, dst, fmt))
    return warnings


def _located(diagnostic: Diagnostic) -> str:
    where = f"{diagnostic.file}:{diagnostic.line}" if diagnostic.line else diagnostic.file
    tag = f" ({diagnostic.tag})" if diagnostic.tag else ""
    return f"{where}{tag}: {diagnostic.message}"
