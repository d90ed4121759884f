"""A read leaves no reference cycles behind: what it built and dropped goes at once, by reference counting.

The readers run with the cyclic collector paused, so cyclic garbage from a read waited for the next full
collection (often the one at exit: 0.9 CPU-s after 10^5 CoppeliaSim shapes, whose whole element tree the
parser's handlers kept alive). The garbage the collector finds after a read must not grow with the file.
"""
from __future__ import annotations

import gc
import json

import pytest

from rscene_addon.formats import registry


def _coppelia(n: int) -> str:
    shapes = "".join(f"<shape><common><alias>s{i}</alias><localFrame><position>{i} 0 1</position><euler>0 0 {i}"
                     "</euler></localFrame></common><primitive><type>cuboid</type><size>0.1 0.2 0.3</size>"
                     "</primitive><dynamics><mass>1</mass></dynamics></shape>\n" for i in range(n))
    return f"<CoppeliaSim><filetype>simpleScene</filetype>\n{shapes}</CoppeliaSim>\n"


def _raisim(n: int) -> str:
    return (f'<raisim version="1.0"><objects><array idx="@@i" start="0" end="{n}" increment="1">'
            '<sphere name="s@@i" mass="1"><dim radius="0.1"/><state pos="@@i 0 1" quat="1 0 0 0"/></sphere>'
            "</array></objects></raisim>\n")


_CONFIG = {"links": [{"name": "Base", "inertial": {"mass": 2.0, "inertia": {"type": "geometry", "geometry": {
    "box": {"size": "1 2 3"}}}}}, {"name": "Arm", "parent-link": "Base"}],
    "joints": [{"id": "j", "type": "fixed", "parent-link": "Base", "child-link": "Arm",
                "origin": {"xyz": "1 0 -2", "rpy-deg": "0 0 0"}}]}


def _airsim(n: int) -> str:
    actors = [{"type": "robot", "name": f"a{i}", "origin": {"xyz": f"{i} 0 0", "rpy-deg": "0 0 90"},
               "robot-config": "robot.jsonc"} for i in range(n)]
    return json.dumps({"id": "g", "actors": actors})


def _garbage_after_read(path) -> int:
    gc.collect()
    gc.disable()
    try:
        scene = registry.read_scene(str(path))
        assert len(scene.records) > 10
        del scene
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize("name, make", [("w.simscene.xml", _coppelia), ("w.xml", _raisim), ("w.jsonc", _airsim)])
def test_the_garbage_of_a_read_does_not_grow_with_the_file(tmp_path, name, make):
    (tmp_path / "robot.jsonc").write_text(json.dumps(_CONFIG))
    counts = []
    for n in (20, 400):
        path = tmp_path / name
        path.write_text(make(n))
        counts.append(_garbage_after_read(path))
    # (a few objects of the first read of a kind, made once; not one per record or per element)
    assert counts[1] <= counts[0] + 5, counts
