"""Frame ranges and chunks: inclusive ranges, splitting them into contiguous chunks (one per render
worker), ``K/N`` chunk names and the manifest each chunk writes.

``"1-48"`` is frames 1 to 48 *inclusive*; ``"5"`` is frame 5; ``"1-48:2"`` takes every second frame
from 1 (``1, 3, ..., 47``: the end is included when the step lands on it). Frames are
non-negative integers, as Blender's output numbering uses them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["chunk", "manifest_filename", "parse_chunk", "parse_frame_range"]

_CHUNK = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")

_RANGE = re.compile(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?(?::\s*([0-9]+)\s*)?")


def parse_frame_range(text: str) -> range:
    """``range`` of the frames in ``"START[-END][:STEP]"`` (END inclusive; STEP >= 1)."""
    if not isinstance(text, str):
        raise TypeError(f"frame range must be a string, got {type(text).__name__}")
    match = _RANGE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"bad frame range {text!r}: expected START, START-END or START-END:STEP, e.g. '1-48:2'"
        )
    start = int(match[1])
    end = int(match[2]) if match[2] is not None else start
    step = int(match[3]) if match[3] is not None else 1
    if end < start:
        raise ValueError(f"bad frame range {text!r}: end {end} is before start {start}")
    if step < 1:
        raise ValueError(f"bad frame range {text!r}: step must be at least 1")
    return range(start, end + 1, step)


def chunk(frames: Sequence[int], k: int, n: int) -> Sequence[int]:
    """The ``k``-th (1-based) of ``n`` contiguous, near-equal chunks of ``frames``.

    Chunk sizes differ by at most one, the larger ones first; together the chunks are exactly
    ``frames`` in order, without overlap. With more chunks than frames the last ones are empty.
    A ``range`` gives a ``range``, a list a list (it is a slice).
    """
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"chunk {name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"number of chunks must be at least 1, got {n}")
    if not 1 <= k <= n:
        raise ValueError(f"chunk index must be in 1..{n}, got {k}")
    size, extra = divmod(len(frames), n)
    begin = (k - 1) * size + min(k - 1, extra)
    end = begin + size + (1 if k <= extra else 0)
    return frames[begin:end]


def parse_chunk(text) -> tuple[int, int] | None:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N``; ``None``/``""`` -> ``None``; tuples pass through."""
    if text is None or text == "":
        return None
    if isinstance(text, tuple):
        k, n = text
    else:
        match = _CHUNK.fullmatch(str(text))
        if match is None:
            raise ValueError(f"bad chunk {text!r}: expected K/N, e.g. 2/4")
        k, n = int(match[1]), int(match[2])
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"bad chunk {text!r}: need 1 <= K <= N")
    return int(k), int(n)


def manifest_filename(chunk: tuple[int, int] | None) -> str:
    if chunk is None:
        return "manifest.json"
    k, n = chunk
    return f"manifest_chunk{k}-of-{n}.json"
