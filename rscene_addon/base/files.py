"""Reading input files for every reader: regular files only, never more than a size cap.

A scene can name any path (a height map ``png=``, a ``urdfPath``, a mesh): a FIFO blocks ``open()``
forever, ``/dev/zero`` or ``/dev/urandom`` never end, and a huge file exhausts memory. ``read_bytes``
refuses anything ``stat`` does not call a regular file before opening it (and opens without blocking,
checking again on the open handle, in case the file was swapped in between), and reads at most ``limit``
bytes, refusing a longer file rather than cutting it. The refusal is an ``OSError`` (``FileRefused``) with
a readable ``strerror``, so callers that already turn ``OSError`` into their own error keep doing so.
"""
from __future__ import annotations

import errno
import os
import stat

__all__ = ["DEFAULT_LIMIT", "FileRefused", "read_bytes", "read_text"]

# 16x the largest real scene, robot, mesh or height map we know (a 4 MB COLLADA mesh; a 100,000-record
# scene is ~20 MB), small enough that parsing one into Python objects stays within about 1 GiB (a 200 MB
# one-line point cloud took 3 GB).
DEFAULT_LIMIT = 64 * 2**20


class FileRefused(OSError):
    """Not a regular file, or larger than the cap."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _check(st: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(errno.EINVAL, f"not a regular file: {_kind(st.st_mode)}")
    if limit >= 0 and st.st_size > limit:
        raise FileRefused(errno.EFBIG, f"file of {st.st_size} bytes is larger than the {_mib(limit)} limit")


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} byte"


def read_bytes(path: str, limit: int = DEFAULT_LIMIT, *, prefix: int = -1) -> bytes:
    """The bytes of the regular file ``path`` (``limit``: the largest size accepted, -1 for none;
    ``prefix``: read only that many bytes from the start, whatever the file's size, e.g. to sniff).

    Raises ``FileRefused`` (an ``OSError``) for a FIFO, device, socket or folder, or a file over ``limit``;
    other ``OSError``s as ``open`` raises them.
    """
    _check(os.stat(path), -1 if prefix >= 0 else limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        _check(os.fstat(fd), -1 if prefix >= 0 else limit)
        if prefix >= 0:
            return handle.read(prefix)
        data = handle.read(limit + 1 if limit >= 0 else -1)
    if limit >= 0 and len(data) > limit:  # grew after the stat
        raise FileRefused(errno.EFBIG, f"file larger than the {_mib(limit)} limit")
    return data


def read_text(path: str, limit: int = DEFAULT_LIMIT, errors: str = "replace") -> str:
    """``read_bytes`` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_bytes(path, limit).decode("utf-8", errors)
