"""Atomic file writing: a temporary file in the target's folder, then a rename.

A crash or an error half way never leaves a half-written file where the user's file was.
"""
from __future__ import annotations

import os
import tempfile


def write_bytes_atomic(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str, text: str) -> None:
    """Text is written as UTF-8; bytes that were not UTF-8 in the source come back unchanged."""
    write_bytes_atomic(path, text.encode("utf-8", "surrogateescape"))


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
