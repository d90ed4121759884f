"""Where the shared corpus of real scene files lives (``../shared/corpus`` beside the checkout).

The corpus is files written by other people (RaiSim, CoppeliaSim, Project AirSim, MJCF, URDF), gathered from
public repositories; ``../shared/corpus/SOURCES.md`` names each file's repository, path and commit. A test
that needs it calls :func:`require_corpus`: without the corpus it is skipped on a developer's machine, and it
fails under ``CI=true`` (tests/conftest.py also stops a CI session at its start when the corpus is missing).
"""
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RSCENE_FILES = sorted((CORPUS / "rscene").rglob("*.rscene"))
EXAMPLE = CORPUS / "rscene" / "docs-examples" / "RsceneFile_example.rscene"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing_message(what: str = "") -> str:
    return (f"the test corpus {CORPUS}{' (' + what + ')' if what else ''} is missing: it is ../shared/corpus beside "
            f"the checkout (files listed with their sources in SOURCES.md)")


def require_corpus(*paths) -> Path:
    """The corpus folder; skips (fails under CI=true) when it, or any of ``paths`` in it, is missing."""
    missing = [p for p in (CORPUS, *(CORPUS / p for p in paths)) if not Path(p).exists()]
    if missing:
        message = missing_message(", ".join(str(p) for p in missing[1:]))
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return CORPUS
