"""Atomic file writing for every layer: readers see the old file or the complete new one, never a part.

Data goes to a hidden temporary file in the destination folder (same file system, so the final
``os.replace`` is an atomic rename), is flushed and (``durable=True``, the default) fsynced, then replaces
the destination. On any error the temporary file is removed and the destination is left untouched.
``durable=False`` skips the fsync: still never a half file for a reader or after a crash of the
process, but not guaranteed through a power cut; the per-frame sensor outputs use it (an fsync per
file was ~45 ms a frame, and a dataset unit is only complete once its folder is renamed into place).

One set of rules (the scene writers and the sensor writers used to differ):

* missing parent folders are created;
* a replaced file keeps its permission bits; a new file gets ``0o666 & ~umask``, like ``open()``;
* text is UTF-8 and written exactly as given: no line-ending translation on any platform (a scene's
  ``\\r\\n`` stays, ``\\n`` is never widened), and bytes that were not UTF-8 in a source read with
  ``surrogateescape`` come back unchanged.
"""
from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import IO

__all__ = ["atomic_open", "write_bytes_atomic", "write_text_atomic"]


@contextlib.contextmanager
def atomic_open(path, mode: str = "wb", encoding: str | None = None, durable: bool = True) -> Iterator[IO]:
    """Open a temporary file that replaces ``path`` when the ``with`` block ends without error.

    ``mode`` is ``"wb"`` or ``"w"`` (text: ``encoding`` defaults to UTF-8 with ``surrogateescape``, no
    newline translation).
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    text = {"encoding": encoding or "utf-8", "errors": "surrogateescape", "newline": ""} if mode == "w" else {}
    try:
        f = os.fdopen(fd, mode, **text)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    try:
        with f:
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # a replaced file keeps its permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path, data: bytes, durable: bool = True) -> None:
    with atomic_open(path, "wb", durable=durable) as f:
        f.write(data)


def write_text_atomic(path, text: str, durable: bool = True) -> None:
    """Write ``text`` as UTF-8, exactly as given (see the module note)."""
    write_bytes_atomic(path, text.encode("utf-8", "surrogateescape"), durable)
