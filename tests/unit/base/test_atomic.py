"""The one atomic writer: permissions, umask, folders, line endings and failure, as its module note promises."""
from __future__ import annotations

import os
import stat
import sys

import numpy as np
import pytest

from rscene_addon.base.atomic import atomic_open, write_bytes_atomic, write_text_atomic
from rscene_addon.formats import rscene
from rscene_addon.formats.atomic import read_text
from rscene_addon.sensors.writers import write_npy

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


@posix_only
def test_new_file_gets_umask_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        write_text_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == 0o640


@posix_only
def test_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "scene.rscene"
    path.write_text("old")
    os.chmod(path, 0o600)
    write_text_atomic(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_missing_folders_are_created_for_scene_and_sensor_writers(tmp_path):
    write_text_atomic(tmp_path / "a" / "b" / "scene.txt", "x")
    write_npy(tmp_path / "c" / "d" / "depth.npy", np.zeros((2, 2), np.float32))
    assert (tmp_path / "a" / "b" / "scene.txt").read_text() == "x"
    assert np.load(tmp_path / "c" / "d" / "depth.npy").shape == (2, 2)


def test_text_is_written_exactly_as_given(tmp_path):
    text = "line one\r\nline two\nthree\r\n"
    write_text_atomic(tmp_path / "t.txt", text)
    assert (tmp_path / "t.txt").read_bytes() == text.encode()
    with atomic_open(tmp_path / "u.txt", "w") as f:
        f.write(text)
    assert (tmp_path / "u.txt").read_bytes() == text.encode()


def test_bytes_that_were_not_utf8_come_back_unchanged(tmp_path):
    raw = b"raisim_engine_scene 2\n# caf\xe9 latin-1 comment\r\ngravity 0 0 -9.81\n"
    src, out = tmp_path / "in.rscene", tmp_path / "out.rscene"
    src.write_bytes(raw)
    write_text_atomic(out, read_text(str(src)))
    assert out.read_bytes() == raw
    rscene.write(rscene.read(str(src)), str(out))
    assert out.read_bytes() == raw


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "keep.bin"
    write_bytes_atomic(path, b"old")
    with pytest.raises(RuntimeError):
        with atomic_open(path, "wb") as f:
            f.write(b"half")
            raise RuntimeError("boom")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["keep.bin"]


def test_durable_writes_fsync_and_per_frame_writes_do_not(tmp_path, monkeypatch):
    """Scene files are fsynced before the rename; per-frame sensor outputs (durable=False) are not, and
    are still complete files under their final name."""
    import numpy as np

    from rscene_addon.sensors.writers import write_npy
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    write_text_atomic(tmp_path / "scene.rscene", "raisim_engine_scene 2\n")
    assert len(synced) == 1
    write_npy(tmp_path / "depth_00001.npy", np.arange(6.0).reshape(2, 3))
    assert len(synced) == 1
    np.testing.assert_array_equal(np.load(tmp_path / "depth_00001.npy"), np.arange(6.0).reshape(2, 3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["depth_00001.npy", "scene.rscene"]
