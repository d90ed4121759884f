"""Reading scene files for the format readers, and writing them through the shared atomic writer.

Writing itself is :mod:`rscene_addon.base.atomic` (re-exported here for the format modules).
"""
from __future__ import annotations

from ..base import files
from ..base.atomic import write_text_atomic

__all__ = ["read_source", "read_text", "text_writer", "write_scene_text", "write_text_atomic"]


def read_source(path: str, limit: int = -1) -> str:
    """A scene file's text for a reader (UTF-8, undecodable bytes replaced); the first ``limit`` bytes
    only when ``limit`` >= 0 (to sniff the format).

    Only regular files of at most ``files.DEFAULT_LIMIT`` bytes are read. An unreadable or refused file is
    a FormatError naming it, like any other problem with the input.
    """
    return _read(path, limit).decode("utf-8", "replace")


def read_text(path: str) -> str:
    """Read a file so that ``write_text_atomic`` reproduces it byte for byte (same rules as read_source)."""
    return _read(path, -1).decode("utf-8", "surrogateescape")


def _read(path: str, prefix: int) -> bytes:
    from ..model import Diagnostic, FormatError
    try:
        return files.read_bytes(path, prefix=prefix)
    except OSError as exc:
        raise FormatError(Diagnostic(path, 0, "", f"cannot read file: {exc.strerror or exc}")) from None


def text_writer(writer_class, doc: str):
    """``(dumps, write)`` of a format whose ``writer_class(scene, path)`` has ``write() -> text`` and
    ``warnings``: the one pair the RaiSim XML, CoppeliaSim XML and AirSim modules each had a copy of.

    ``dumps(scene, path=None) -> (text, warnings)``; ``write(scene, path) -> warnings`` writes atomically.
    """
    def dumps(scene, path: str | None = None) -> tuple[str, list[str]]:
        writer = writer_class(scene, path)
        text = writer.write()
        return text, writer.warnings

    def write(scene, path: str) -> list[str]:
        """Write atomically; returns the warnings of ``dumps``."""
        return write_scene_text(dumps, scene, path)

    dumps.__doc__ = doc
    return dumps, write


def write_scene_text(dumps, scene, path: str) -> list[str]:
    """Write ``dumps(scene, path) -> (text, warnings)`` atomically; return the warnings.

    The writers of the non-.rscene formats all have this shape: text plus what the format could not hold.
    """
    text, warnings = dumps(scene, path)
    write_text_atomic(path, text)
    return warnings
