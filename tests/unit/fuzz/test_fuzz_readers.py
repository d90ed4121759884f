"""Bounded mutation fuzzing of every reader (the long run is ``scripts/fuzz_readers.py --inputs N``).

Each reader gets a fixed, derandomized budget of mutated corpus files (``RSCENE_FUZZ_EXAMPLES``, default
100 per reader, so the whole step stays within a few minutes on a busy machine). Every outcome must be a
read or the reader's clean error naming the file; every input that ever failed is replayed from
``regressions/``.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import corpus
from tests.fuzzing import harness, mutators

TABLE = harness.readers()
FOREIGN = harness.foreign_lines(TABLE)
EXAMPLES = int(os.environ.get("RSCENE_FUZZ_EXAMPLES", "100"))
TIME_LIMIT = 20.0  # seconds per input: far above any clean refusal, well below a hang


@pytest.fixture(scope="module")
def workspace():
    space = harness.Workspace()
    yield space
    space.close()


def test_every_reader_has_seeds():
    """The corpus is there (fails, not skips, in CI) and every reader has files to mutate."""
    corpus.require_corpus("SOURCES.md")
    empty = [name for name, reader in TABLE.items() if not reader.seeds]
    assert not empty, f"readers without seed files: {empty}"


@pytest.mark.parametrize("name", sorted(TABLE))
def test_fuzz_reader(name, workspace):
    reader = TABLE[name]
    if not reader.seeds:
        pytest.skip("no seed files (corpus missing)")

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data):
        seed, payload = harness.make_input(reader, mutators.DataChooser(data), FOREIGN)
        outcome = harness.run_one(reader, payload, workspace.target(seed, reader), TIME_LIMIT)
        assert outcome.kind != "bad", f"{name} from {harness.seed_name(seed)}: {outcome.detail}"

    run()


REGRESSIONS = harness.regression_cases(TABLE)


@pytest.mark.parametrize("reader, seed, path", REGRESSIONS,
                         ids=[f"{r.name}/{p.name}" for r, _, p in REGRESSIONS])
def test_regression_inputs(reader, seed, path, workspace):
    """Inputs that once crashed, hung or blew up a reader now read or fail cleanly."""
    outcome = harness.run_one(reader, path.read_bytes(), workspace.target(seed, reader), TIME_LIMIT)
    assert outcome.kind != "bad", outcome.detail


def test_regressions_are_kept():
    """The harness keeps what it found: the regression folder holds inputs of several readers."""
    assert len({reader.name for reader, _, _ in REGRESSIONS}) >= 3
