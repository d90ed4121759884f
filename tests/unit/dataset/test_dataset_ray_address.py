"""A wrong --ray ADDRESS fails at once with a message that says what to do (Ray itself retries for minutes)."""
from __future__ import annotations

import socket
import time

import pytest

from rscene_addon.dataset.ray_runner import RayUnavailable, check_reachable


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_address_nobody_answers_fails_fast_and_clearly(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    port = _closed_port()
    start = time.monotonic()
    with pytest.raises(RayUnavailable) as info:
        check_reachable(f"127.0.0.1:{port}", timeout=5)
    assert time.monotonic() - start < 5
    assert f"127.0.0.1:{port}" in str(info.value) and "ray start --head" in str(info.value)
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")  # the environment's address is checked too
    with pytest.raises(RayUnavailable):
        check_reachable(None, timeout=5)


def test_a_listening_head_and_ray_own_forms_pass(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}")
    for address in (None, "", "auto", "local", "ray://head:10001"):
        check_reachable(address)
    with pytest.raises(RayUnavailable, match="HOST:PORT"):
        check_reachable("head-without-port")
