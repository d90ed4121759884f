"""The ``sim_backend`` fixture: a test module that uses it runs once per physics backend.

The backend reaches the worlds the tests build through RSCENE_SIM_BACKEND (``World`` reads it when no
``backend`` is passed). The numba run fails (it does not skip) where numba should import: it is pinned in
every environment of this project; only a platform without a numba wheel (macOS x64) runs numpy alone.
"""
from __future__ import annotations

import os
import platform
import sys

import pytest

from rscene_addon.sim import kernels


def _numba_expected() -> bool:
    return not (sys.platform == "darwin" and platform.machine() == "x86_64")


@pytest.fixture(params=["numpy", "numba"])
def sim_backend(request, monkeypatch):
    if request.param == "numba" and not kernels.numba_available():
        if _numba_expected() or os.environ.get("CI") == "true":
            pytest.fail("numba does not import here, but the project ships it for this platform")
        pytest.skip("no numba wheel for this platform")
    monkeypatch.setenv(kernels.ENV_BACKEND, request.param)
    return request.param
