"""`dataset --ray HOST:PORT` and Ray's token auth: a cluster that demands a token is joined with the
token at hand (~/.ray/auth_token, as `ray start` itself finds it), and refused at once, saying what to
set, when this process has none or a wrong one (Ray alone fails after ~45 s naming neither)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.blender.dataset_helpers import dataset_command, env_with, tiny_scene, write_job
from tests.corpus import REPO

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
pytest.importorskip("ray", reason="ray is not installed in this environment (optional: pip install ray)")

TOKEN = "5f" * 32


class _TokenMode:
    """RAY_AUTH_MODE=token with TOKEN in this process while the block runs (Ray caches its config:
    re-read it on the way in and out, as Ray itself does when it turns auth on)."""

    def __enter__(self):
        from ray._raylet import Config
        self.saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
        Config.initialize("")

    def __exit__(self, *exc_info):
        from ray._raylet import Config
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        Config.initialize("")


@pytest.fixture(scope="module")
def auth_cluster():
    """A one-node cluster whose GCS demands TOKEN (its processes inherit the mode and the token)."""
    from ray.cluster_utils import Cluster
    with _TokenMode():
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1",
                                                                "include_dashboard": False})
    yield cluster
    with _TokenMode():  # shutting down talks to the GCS too
        cluster.shutdown()


def _env(home, **values):
    env = env_with(HOME=home, **values)
    for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        if key not in values:
            env.pop(key, None)
    return env


PROBE = ("import os, sys; from rscene_addon.dataset.ray_runner import check_auth; check_auth(sys.argv[1]); "
         "print('mode', os.environ.get('RAY_AUTH_MODE'))")


def test_the_token_in_the_home_folder_is_used(tmp_path, auth_cluster):
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text(TOKEN)
    result = subprocess.run([sys.executable, "-c", PROBE, auth_cluster.address], cwd=REPO, capture_output=True,
                            text=True, timeout=120, env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "mode token" in result.stdout


@pytest.mark.parametrize("token", [None, "0" * 64])
def test_no_token_or_a_wrong_one_fails_at_once_saying_what_to_set(tmp_path, auth_cluster, token):
    tiny_scene(tmp_path)
    job = write_job(tmp_path, 'frames = "1"\n')
    extra = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token} if token else {}
    started = time.monotonic()
    result = dataset_command(job, "--out", tmp_path / "out", "--ray", auth_cluster.address, env=_env(tmp_path, **extra))
    assert time.monotonic() - started < 30  # Ray alone: ~45 s, then a message about another address
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"error: the Ray cluster at {auth_cluster.address} requires token authentication" in result.stdout
    assert "RAY_AUTH_TOKEN" in result.stdout and "ray get-auth-token" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (tmp_path / "out").exists()  # refused before any work
