"""The Ray driver's loop against a stand-in for ray (tasks run when waited for): a bounded window of
units in flight, each bake submitted with its first unit and retired after its last, a failed bake
reported once. The real cluster runs are tests/blender/test_dataset_ray.py and the bookkeeping
benchmark (scripts/bench_dataset_bookkeeping.py)."""
from __future__ import annotations

import os

from rscene_addon.dataset.ray_runner import RETIRED_SENT, _drive, clean_node


class Ref:
    pass


class FakeRay:
    class exceptions:
        class RayError(Exception):
            pass

    def __init__(self, fail_bakes=()):
        self.results, self.waits, self.order = {}, [], []
        self.fail_bakes = set(fail_bakes)

    def remote(self, fn):
        ray = self

        class Remote:
            def remote(self, *args):
                ref = Ref()
                ray.results[ref] = (fn, args)
                ray.order.append((fn.__name__, args[0] if fn.__name__ == "bake" else args[0]["unit"]))
                return ref
        return Remote()

    def _value(self, ref):
        fn, args = self.results[ref]
        return fn(*[self._value(a) if isinstance(a, Ref) else a for a in args])

    def wait(self, refs, num_returns=1):
        self.waits.append(len(refs))
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return self._value(ref)


def _job(bakes=3, units=5):
    bake_tasks = {f"s{b}/base": {"fingerprint": f"fp{b}"} for b in range(bakes)}
    tasks = [(f"s{b}/base/c{u}", {"unit": f"s{b}/base/c{u}", "bake_key": f"s{b}/base"})
             for b in range(bakes) for u in range(units)]
    return bake_tasks, tasks


def test_a_window_of_units_bakes_submitted_when_needed_and_retired_after_their_last_unit():
    seen_retired = []

    def bake(task):
        return {"ok": True, "fingerprint": task["fingerprint"]}

    def unit(task, bake_reply, retired):
        seen_retired.append((task["unit"], list(retired)))
        return {"ok": True, "unit": task["unit"], "bake": bake_reply["fingerprint"]}

    ray = FakeRay()
    bakes, tasks = _job()
    pulled = []

    def units():
        for item in tasks:
            pulled.append(item[0])
            yield item
    done, in_flight = [], {}
    _drive(ray, bakes, units(), lambda key, reply: done.append((key, reply["bake"])), None,
           ray.remote(bake), ray.remote(unit), 4, in_flight)
    assert [key for key, _ in done] == [key for key, _ in tasks]  # this stand-in finishes in order
    assert all(fp == "fp" + key[1] for key, fp in done)
    assert max(ray.waits) == 4 and in_flight == {}
    # bakes enter with their first unit: s1's bake is submitted after s0's units, not up front
    assert [name for name, _ in ray.order].count("bake") == 3
    first_s1 = [i for i, (name, arg) in enumerate(ray.order) if name == "unit" and arg.startswith("s1")][0]
    assert ray.order[first_s1 - 1] == ("bake", {"fingerprint": "fp1"})
    # a bake is retired once its last unit is done and the window moved past it; later units carry it
    retired_at = {u: r for u, r in seen_retired}
    assert retired_at["s0/base/c0"] == [] and "fp0" in retired_at["s2/base/c4"]
    assert "fp2" not in retired_at["s2/base/c4"]


def test_a_failed_bake_is_reported_once_and_fails_its_units():
    reported = []

    def bake(task):
        return {"ok": task["fingerprint"] != "fp1", "error": "error: 1 problem(s) in s1.rscene"}

    def unit(task, bake_reply, retired):
        if not bake_reply["ok"]:
            return {"ok": False, "error": f"bake failed: {bake_reply['error']}", "bake_failed": True}
        return {"ok": True}

    ray = FakeRay()
    bakes, tasks = _job()
    done = []
    _drive(ray, bakes, iter(tasks), lambda key, reply: done.append(reply["ok"]),
           lambda key, error: reported.append((key, error)), ray.remote(bake), ray.remote(unit), 2, {})
    assert reported == [("s1/base", "error: 1 problem(s) in s1.rscene")]
    assert done == [True] * 5 + [False] * 5 + [True] * 5


def test_a_node_removes_dead_workers_scratch_and_retired_bakes_only(tmp_path):
    units, bakes = tmp_path / "units", tmp_path / "bakes"
    dead = 2 ** 22 + 12345  # above Linux's default pid_max: no such process
    alive = os.getpid()
    for name in (f".tmp-s_base_c1.{dead}-{dead}-0123abcd", f"s_base_c2.{dead}", f".tmp-s_base_c3.{alive}-{alive}-0123abcd"):
        (units / name).mkdir(parents=True)
    for name in ("fp0", "fp1", f".tmp-fp2-{dead}-0123abcd"):
        (bakes / name).mkdir(parents=True)
    removed = clean_node(str(tmp_path), retired={"fp0"})
    assert sorted(removed) == sorted([f"units/.tmp-s_base_c1.{dead}-{dead}-0123abcd", f"units/s_base_c2.{dead}",
                                      "bakes/fp0", f"bakes/.tmp-fp2-{dead}-0123abcd"])
    assert sorted(os.listdir(units)) == [f".tmp-s_base_c3.{alive}-{alive}-0123abcd"]
    assert sorted(os.listdir(bakes)) == ["fp1"]
    assert RETIRED_SENT >= 8


def test_the_writer_pool_holds_the_loop_while_its_writes_are_behind():
    import threading

    from rscene_addon.dataset.ray_runner import WriterPool
    gate, written = threading.Event(), []
    with WriterPool(threads=1, limit=2) as writers:
        writers.submit(lambda: gate.wait(10) and written.append(1))
        writers.submit(lambda: written.append(2))
        third = threading.Thread(target=writers.submit, args=(written.append, 3))
        third.start()
        third.join(0.3)
        assert third.is_alive() and written == []  # two results held: the third waits for room
        gate.set()
        third.join(10)
    assert written == [1, 2, 3]


def test_a_failing_write_is_raised_after_the_others_finished():
    import pytest

    from rscene_addon.dataset.ray_runner import WriterPool
    written = []
    with pytest.raises(OSError, match="disk full"):
        with WriterPool(threads=2) as writers:
            writers.submit(lambda: (_ for _ in ()).throw(OSError("disk full")))
            writers.submit(written.append, "ok")
    assert written == ["ok"]


def test_two_scene_files_with_the_same_bake_share_it_and_it_is_not_retired_while_in_use():
    seen = []

    def bake(task):
        return {"ok": True, "fingerprint": task["fingerprint"]}

    def unit(task, bake_reply, retired):
        seen.append((task["unit"], list(retired)))
        return {"ok": True}

    ray = FakeRay()
    bakes = {"a/base": {"fingerprint": "same"}, "b/base": {"fingerprint": "other"}, "c/base": {"fingerprint": "same"}}
    tasks = [(f"{k}/c{u}", {"unit": f"{k}/c{u}", "bake_key": k}) for k in bakes for u in range(3)]
    _drive(ray, bakes, iter(tasks), lambda key, reply: None, None, ray.remote(bake), ray.remote(unit), 2, {})
    # a's bake is retired after its units; c needs the same bytes again: submitted again, un-retired
    assert [arg for name, arg in ray.order if name == "bake"] == [{"fingerprint": "same"}, {"fingerprint": "other"},
                                                                  {"fingerprint": "same"}]
    assert all("same" not in retired for unit_id, retired in seen if unit_id.startswith("c/"))


def test_a_unit_task_keeps_its_own_bake_copy_and_deletes_retired_ones(tmp_path, monkeypatch):
    import json

    from rscene_addon.dataset.ray_runner import unit_task
    monkeypatch.setenv("RSCENE_DATASET_SCRATCH", str(tmp_path))
    (tmp_path / "bakes" / "fpOld").mkdir(parents=True)
    bake = {"ok": True, "fingerprint": "fpX",
            "files": {"scene.blend": b"BLEND", "bake.json": json.dumps({"fingerprint": "fpX"}).encode()}}

    def render(task, blend, folder):
        os.makedirs(os.path.join(folder, "cam"))
        with open(blend, "rb") as source, open(os.path.join(folder, "cam", "x.bin"), "wb") as out:
            out.write(source.read())
        return {"unit": task["unit"]}

    for _ in range(2):  # the second unit finds the copy in place
        reply = unit_task({"unit": "s/base/c1"}, bake, retired=["fpX", "fpOld"], render=render)
        assert reply["ok"] and reply["files"] == {"cam/x.bin": b"BLEND"}
    assert sorted(os.listdir(tmp_path / "bakes")) == ["fpX"]
    assert os.listdir(tmp_path / "units") == []  # the unit's node scratch is gone once its files are sent
