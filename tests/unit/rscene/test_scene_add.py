"""Scene.add places every record exactly where the whole-scene scan placed it, in O(1) per record.

The reference below is the scan ``Scene.add`` used before its index (every item looked at per record):
the same insert positions for random sequences of kinds, owners and renames, on empty scenes and on corpus
files read in their own (sometimes out-of-section) order. The speed is measured by
``scripts/bench_codec.py --scene-add`` (not a timed test).
"""
from __future__ import annotations

import random

import pytest

from rscene_addon.formats import rscene
from rscene_addon.model import Scene, new_record
from rscene_addon.model.record import Record
from rscene_addon.model.schema import SECTION_RANK
from tests import corpus


def _reference_position(scene: Scene, record: Record) -> int:
    """Where the old scan put ``record`` (copied from the code before the index, as the truth)."""
    rank = SECTION_RANK.get(record.tag, len(SECTION_RANK))
    insert_at = len(scene.items)
    last_before = None
    for i, item in enumerate(scene.items):
        if isinstance(item, Record) and SECTION_RANK.get(item.tag, len(SECTION_RANK)) <= rank:
            last_before = i
    if last_before is not None:
        insert_at = last_before + 1
    parent = record.schema.parent if record.schema else None
    if parent:
        ref = record.get(parent[1])
        owner = next((r for r in scene.records if r.schema and r.schema.field("path")
                      and ref and ref in (r.id, r.path)), None)
        if owner is not None:
            i = scene.items.index(owner) + 1
            while i < len(scene.items):
                item = scene.items[i]
                if not (isinstance(item, Record) and item.schema and item.schema.parent
                        and item.schema.parent[0] == owner.tag):
                    break
                i += 1
            insert_at = i
    return insert_at


def _random_record(rng: random.Random, n: int, owners: dict[str, list[str]]) -> Record:
    kind = rng.choice(("object", "sensor", "light", "group", "compound", "compound_child", "compound_child",
                       "terrain_region", "terrain_splat_layer", "terrain_foliage_layer", "articulated",
                       "articulated_ik", "time_step", "material", "camera", "point_cloud"))
    path = f"/World/n{n}"
    if kind == "compound_child":
        return new_record(kind, compound=rng.choice(owners["compound"] or ["/World/none"]), primitive="box")
    if kind in ("terrain_splat_layer", "terrain_foliage_layer"):
        return new_record(kind, terrain=rng.choice(owners["terrain_region"] or ["/World/none"]))
    if kind == "articulated_ik":
        return new_record(kind, articulated=rng.choice(owners["articulated"] or ["/World/none"]), frame="f")
    if kind == "time_step":
        return new_record(kind)
    if kind == "material":
        return new_record(kind, name=f"m{n}")
    if kind == "object":
        return new_record(kind, path=path, primitive="box")
    if kind == "articulated":
        return new_record(kind, path=path, resourceId="r")
    if kind == "terrain_region":
        record = new_record(kind, path=path, xSamples=2, ySamples=2, xSize=1.0, ySize=1.0)
    else:
        record = new_record(kind, path=path)
    if kind in owners:
        owners[kind].append(path)
    return record


@pytest.mark.parametrize("seed", range(12))
def test_add_matches_the_scan(seed):
    rng = random.Random(seed)
    scene = Scene()
    owners: dict[str, list[str]] = {"compound": [], "terrain_region": [], "articulated": []}
    for n in range(300):
        record = _random_record(rng, n, owners)
        if record.tag == "articulated":
            owners["articulated"].append(record.path)
        expected = _reference_position(scene, record)
        scene.add(record)
        assert scene.items[expected] is record, f"step {n}: {record.tag} placed at " \
                                                f"{scene.items.index(record)}, the scan says {expected}"
        if rng.random() < 0.03 and owners["compound"]:  # a rename behind the index's back
            target = scene.find(rng.choice(owners["compound"]))
            new_path = target.path + "_renamed"
            owners["compound"][owners["compound"].index(target.path)] = new_path
            target.set("path", new_path)


def test_add_to_files_read_in_their_own_order():
    """Corpus scenes (comments, sections out of order) take more records where the scan put them."""
    corpus.require_corpus("rscene")
    files = corpus.RSCENE_FILES[:8]
    rng = random.Random(7)
    for path in files:
        scene = rscene.read(str(path))
        owners = {"compound": [r.path for r in scene.of("compound")],
                  "terrain_region": [r.path for r in scene.of("terrain_region")],
                  "articulated": [r.path for r in scene.of("articulated")]}
        for n in range(60):
            record = _random_record(rng, n, owners)
            expected = _reference_position(scene, record)
            scene.add(record)
            assert scene.items[expected] is record, f"{path.name} step {n}: {record.tag}"


def test_find_after_adds_and_renames():
    scene = Scene()
    a = scene.add(new_record("group", path="/World/a"))
    assert scene.find("/World/a") is a
    assert scene.find("/World/missing") is None
    b = scene.add(new_record("group", path="/World/b"))
    assert scene.find("/World/b") is b  # added after the index was built
    b.set("path", "/World/c")
    assert scene.find("/World/c") is b and scene.find("/World/b") is None
