"""Shared fixtures of the format tests: the test corpus beside the checkout and scene comparison."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.corpus import CORPUS, require_corpus  # noqa: F401 - CORPUS for the modules that import it here

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def corpus() -> Path:
    return require_corpus()


@pytest.fixture
def data_dir() -> Path:
    return DATA


def _close(a, b, tol: float) -> bool:
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        return False
    return bool(np.allclose(a_arr, b_arr, rtol=tol, atol=tol))


def _same_rotation(a, b, tol: float) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.array_equal(a, b) or np.array_equal(a, -b):  # exact: a unit quaternion's a.a may round off 1
        return True
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    return abs(abs(float(a @ b)) - 1.0) <= tol


def assert_scenes_match(first, second, tol: float = 1e-9, tags=None, ignore_keys=()) -> None:
    """Every record of ``first`` (of ``tags``) has a counterpart in ``second`` with the same values.

    Records pair up by tag and path (compound children in order). Documented fields compare typed, with a
    tolerance for numbers; quaternions compare as rotations; extra keys compare as text or numbers.
    """
    def key(record, index):
        if record.schema is not None and record.schema.field("path") is not None:
            return record.tag, record.path
        return record.tag, index

    def index(scene):
        out = {}
        counts = {}
        for record in scene.records:
            if tags and record.tag not in tags:
                continue
            n = counts.get(record.tag, 0)
            counts[record.tag] = n + 1
            out[key(record, n)] = record
        return out

    a, b = index(first), index(second)
    assert set(a) <= set(b), f"missing in the second scene: {sorted(set(a) - set(b))[:5]}"
    for k, ra in a.items():
        rb = b[k]
        for name, value in ra.fields():
            if name in ignore_keys:
                continue
            other = rb.get(name)
            if name in ("quaternion", "quat") and value is not None and other is not None:
                assert _same_rotation(value, other, tol), (k, name, value, other)
            else:
                assert _close(value, other, tol), (k, name, value, other)
        known = set(ra.schema.key_names) if ra.schema else set()
        for name in ra.raw_keys:
            if name in known or name in ignore_keys:
                continue
            va, vb = ra.get(name), rb.get(name)
            try:
                fa = [float(x) for x in str(va).replace(";", ",").split(",")]
                fb = [float(x) for x in str(vb).replace(";", ",").split(",")]
                assert len(fa) == len(fb) and all(math.isclose(x, y, rel_tol=tol, abs_tol=tol) for x, y in zip(fa, fb)), \
                    (k, name, va, vb)
            except ValueError:
                assert va == vb, (k, name, va, vb)


@pytest.fixture
def scenes_match():
    return assert_scenes_match
