"""Reading scene files for the format readers, and writing them through the shared atomic writer.

Writing itself is :mod:`rscene_addon.base.atomic` (re-exported here for the format modules).
"""
from __future__ import annotations

from ..base.atomic import write_text_atomic

__all__ = ["read_source", "read_text", "write_scene_text", "write_text_atomic"]


def read_source(path: str, limit: int = -1) -> str:
    """A scene file's text for a reader (UTF-8, undecodable bytes replaced); ``limit`` bytes at most.

    An unreadable file is a FormatError naming it, like any other problem with the input.
    """
    from ..model import Diagnostic, FormatError
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
    except OSError as exc:
        raise FormatError(Diagnostic(path, 0, "", f"cannot read file: {exc.strerror or exc}")) from None
    return data.decode("utf-8", "replace")


def read_text(path: str) -> str:
    """Read a file so that ``write_text_atomic`` reproduces it byte for byte."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")


def write_scene_text(dumps, scene, path: str) -> list[str]:
    """Write ``dumps(scene, path) -> (text, warnings)`` atomically; return the warnings.

    The writers of the non-.rscene formats all have this shape: text plus what the format could not hold.
    """
    text, warnings = dumps(scene, path)
    write_text_atomic(path, text)
    return warnings
