"""The dataset folder: a unit appears only complete; scratch of a killed run is removed; progress line."""
from __future__ import annotations

import json
import os

from rscene_addon.dataset.job import load_job
from rscene_addon.dataset.progress import Progress, format_duration
from rscene_addon.dataset.store import DatasetStore, publish, scratch_beside, write_json
from rscene_addon.dataset.units import plan_units


def _units(tmp_path):
    (tmp_path / "s.rscene").write_text("raisim_engine_scene 2\n")
    (tmp_path / "job.toml").write_text('scenes = ["s.rscene"]\nframes = "1-4"\nchunk = 2\n')
    return plan_units(load_job(tmp_path / "job.toml"))[1]


def test_a_unit_counts_as_complete_only_after_its_rename_and_with_its_fingerprint(tmp_path):
    units = _units(tmp_path)
    store = DatasetStore(tmp_path / "out")
    unit = units[0]
    final = store.unit_dir(unit)
    scratch = scratch_beside(final)
    assert os.path.basename(scratch).startswith(".tmp-chunk0001-of-0002-")
    write_json(os.path.join(scratch, "unit.json"), {"fingerprint": unit.fingerprint})
    assert store.unit_record(unit) is None  # written but not renamed: not complete
    publish(scratch, final)
    assert store.unit_record(unit) == {"fingerprint": unit.fingerprint}
    assert store.unit_record(units[1]) is None
    write_json(os.path.join(final, "unit.json"), {"fingerprint": "other job"})
    assert store.unit_record(unit) is None


def test_publish_replaces_an_older_unit_and_drops_a_second_copy(tmp_path):
    final = str(tmp_path / "u")
    first = scratch_beside(final)
    (tmp_path / first / "a").write_text("1")
    publish(first, final)
    second = scratch_beside(final)
    (tmp_path / second / "a").write_text("2")
    publish(second, final)
    assert (tmp_path / "u" / "a").read_text() == "2"
    assert sorted(os.listdir(tmp_path)) == ["u"]


def test_scratch_of_a_killed_run_is_removed(tmp_path):
    units = _units(tmp_path)
    store = DatasetStore(tmp_path / "out")
    left = scratch_beside(store.unit_dir(units[1]))
    (tmp_path / left / "rgb_00003.png").write_bytes(b"half")
    moved_aside = os.path.join(os.path.dirname(left), f".tmp-{os.path.basename(store.unit_dir(units[0]))}-12-abcdef01-old")
    os.mkdir(moved_aside)  # an older unit folder publish() renamed away before it was killed
    unrelated = os.path.join(os.path.dirname(left), ".tmp-notes")
    os.mkdir(unrelated)
    removed = store.remove_scratch([store.unit_dir(u) for u in units])
    assert removed == sorted([left, moved_aside]) and not os.path.exists(left)
    assert os.path.isdir(unrelated)  # not a scratch folder of ours


def test_write_json_leaves_no_temporary_file(tmp_path):
    write_json(str(tmp_path / "x.json"), {"b": 1, "a": [1]})
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": [1], "b": 1}
    assert os.listdir(tmp_path) == ["x.json"]


def test_progress_line_counts_rate_and_time_left():
    now = [100.0]
    progress = Progress(total_units=10, total_frames=40, skipped_units=2, skipped_frames=8, clock=lambda: now[0])
    assert progress.line() == "units 2/10 done | frames 8/40 | 0.0 frames/min | ? left"
    now[0] += 30.0
    progress.done(4)
    progress.failed(4)
    # 4 new frames in 30 s = 8 frames/min; 24 frames left -> 3 minutes
    assert progress.line() == "units 3/10 done, 1 failed | frames 12/40 | 8.0 frames/min | 3m00s left"
    assert format_duration(3725) == "1h02m" and format_duration(9.4) == "9s"


def test_a_slice_removes_only_its_own_units_scratch(tmp_path):
    units = _units(tmp_path)
    store = DatasetStore(tmp_path / "out")
    ours, theirs = scratch_beside(store.unit_dir(units[0])), scratch_beside(store.unit_dir(units[1]))
    assert store.remove_scratch([store.unit_dir(units[0])]) == [ours]
    assert os.path.isdir(theirs) and not os.path.exists(ours)


def test_a_bake_made_first_by_another_process_is_kept(tmp_path):
    from rscene_addon.dataset.store import publish_bake
    final = str(tmp_path / "bake")
    first = scratch_beside(final)
    write_json(os.path.join(first, "bake.json"), {"fingerprint": "f1"})
    (tmp_path / first / "scene.blend").write_text("first")
    publish_bake(first, final, "f1")
    second = scratch_beside(final)
    (tmp_path / second / "scene.blend").write_text("second")
    publish_bake(second, final, "f1")  # same bake: the one in place (maybe being read) stays
    assert (tmp_path / "bake" / "scene.blend").read_text() == "first"
    third = scratch_beside(final)
    write_json(os.path.join(third, "bake.json"), {"fingerprint": "f2"})
    publish_bake(third, final, "f2")  # a stale bake of an older job is replaced
    assert json.loads((tmp_path / "bake" / "bake.json").read_text()) == {"fingerprint": "f2"}
    assert sorted(os.listdir(tmp_path)) == ["bake"]


def test_scratch_names_give_their_final_folder_and_process():
    from rscene_addon.dataset.store import scratch_owner
    assert scratch_owner(".tmp-chunk0001-of-0002-4242-0123abcd") == ("chunk0001-of-0002", 4242)
    assert scratch_owner(".tmp-s_seed1_chunk0001-of-0002.77-77-0123abcd-old") == ("s_seed1_chunk0001-of-0002.77", 77)
    assert scratch_owner("chunk0001-of-0002") is None
    assert scratch_owner(".tmp-x") is None and scratch_owner(".tmp-x-12-short") is None


def test_slice_cleanup_work_does_not_grow_with_the_rest_of_the_tree(tmp_path, monkeypatch):
    """The folders a slice lists are its units' parents, however many other scenes the tree holds."""
    units = _units(tmp_path)
    store = DatasetStore(tmp_path / "out")
    for i in range(200):  # other scenes' unit folders, each with files inside
        os.makedirs(os.path.join(store.root, f"other{i}", "base", "chunk0001-of-0002", "cam"))
    os.makedirs(store.unit_dir(units[0]))
    listed = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p: listed.append(p) or real(p))
    monkeypatch.setattr(os, "walk", None)  # no walking at all
    assert store.remove_scratch([store.unit_dir(units[0])]) == []
    assert listed == [os.path.dirname(store.unit_dir(units[0]))]
