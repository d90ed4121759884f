"""Frame range parsing and chunking."""

from __future__ import annotations

import itertools

import pytest

from rscene_addon.products.chunks import chunk, parse_frame_range


def test_parse_examples():
    assert list(parse_frame_range("1-48")) == list(range(1, 49))
    assert list(parse_frame_range("5")) == [5]
    assert list(parse_frame_range("1-48:2")) == list(range(1, 48, 2))
    assert list(parse_frame_range("1-49:2"))[-1] == 49  # end included when on the step grid
    assert list(parse_frame_range(" 3 - 7 : 2 ")) == [3, 5, 7]
    assert list(parse_frame_range("0-0")) == [0]
    assert list(parse_frame_range("5:3")) == [5]


@pytest.mark.parametrize(
    "bad", ["", " ", "a", "1-", "-3", "5-3", "1-4:0", "1--3", "1.5", "1-4:", "1,2", "\u0663"]
)
def test_parse_errors(bad):
    with pytest.raises(ValueError, match="frame range"):
        parse_frame_range(bad)


def test_parse_type_error():
    with pytest.raises(TypeError):
        parse_frame_range(5)


def test_chunk_examples():
    frames = parse_frame_range("1-10")
    assert [list(chunk(frames, k, 3)) for k in (1, 2, 3)] == [[1, 2, 3, 4], [5, 6, 7], [8, 9, 10]]
    assert list(chunk(frames, 1, 1)) == list(frames)
    assert [list(chunk(range(1, 3), k, 4)) for k in range(1, 5)] == [[1], [2], [], []]
    assert chunk([4, 8, 15, 16, 23, 42], 2, 2) == [16, 23, 42]


def test_chunks_partition_the_range():
    specs = ["1-48", "5", "1-48:2", "0-99:7", "10-10", "3-1000:13", "1-2"]
    for spec, n in itertools.product(specs, [1, 2, 3, 4, 5, 7, 16, 50, 120]):
        frames = parse_frame_range(spec)
        parts = [list(chunk(frames, k, n)) for k in range(1, n + 1)]
        # Union in order is the whole range, so chunks are contiguous and never overlap.
        assert [f for p in parts for f in p] == list(frames), (spec, n)
        sizes = [len(p) for p in parts]
        assert max(sizes) - min(sizes) <= 1, (spec, n)
        assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize(("k", "n"), [(0, 3), (4, 3), (1, 0), (-1, 2)])
def test_chunk_index_errors(k, n):
    with pytest.raises(ValueError):
        chunk(range(10), k, n)


def test_chunk_type_errors():
    with pytest.raises(TypeError):
        chunk(range(10), 1.0, 2)
    with pytest.raises(TypeError):
        chunk(range(10), True, 2)
