"""Tests that need the shared corpus skip on a developer's machine without it, and fail under CI=true."""
from __future__ import annotations

import pytest

from tests import corpus


def test_missing_corpus_file_fails_under_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="SOURCES.md"):
        corpus.require_corpus("no/such/file.rscene")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        corpus.require_corpus("no/such/file.rscene")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        corpus.require_corpus(corpus.CORPUS / "no" / "such")


def test_present_corpus_is_returned():
    assert corpus.require_corpus("SOURCES.md") == corpus.CORPUS


def test_a_ci_session_without_the_corpus_stops_at_its_start(tmp_path, monkeypatch):
    import tests.conftest as conftest

    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(corpus, "CORPUS", tmp_path / "nothing")
    with pytest.raises(pytest.UsageError, match="corpus"):
        conftest.pytest_sessionstart(None)
    monkeypatch.setenv("CI", "")
    conftest.pytest_sessionstart(None)
