"""The reader decodes many records of one layout column by column; it must find exactly what decoding record
by record finds: the same values, and the same errors on the same lines in the same order."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rscene_addon.formats import rscene
from rscene_addon.model import record as record_module
from rscene_addon.model.values import NUMBER, decode_number_column

H = "raisim_engine_scene 2\n"
# one token per positional field of the current object layout, each a valid value
OBJECT_FIELDS = ["/World/C", "box", "1", "2", "3", "1", "0", "0", "0", "0.5", "0.5", "0.5", "0.5", "1", "2",
                 "default", "crate", "false", "true", "false", "-", "dynamic", "true", "1", "18446744073709551615"]
BAD_TOKENS = ["1e999", "nan", "-inf", "1_0", "x", "0x10", "\uff11", "maybe", "-1", "blob", "%zz", "1.5",
              "18446744073709551616", "TRUE", "Fixed", "%41", "+.5", "1e-400", "--1"]


def per_record(text: str, path: str = "s.rscene"):
    """check() with the column path switched off: every record through structure_errors/decode_all."""
    original = rscene.decode_batch
    rscene.decode_batch = lambda records: [False] * len(records)
    try:
        return outcome(text, path)
    finally:
        rscene.decode_batch = original


def outcome(text: str, path: str = "s.rscene"):
    scene = rscene.parse(text, path)
    errors, warnings = rscene.check(scene, path)
    values = [[(name, _plain(value)) for name, value in record.fields()] if not errors else None
              for record in scene.records if record.schema is not None]
    return ([(d.line, d.tag, d.message) for d in errors], [(d.line, d.tag, d.message) for d in warnings], values)


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else value


def scene_text(rows: list[list[str]], extra: str = "") -> str:
    lines = [H, "material crate 0.8 0.5 0.2 1 0 0.6\n", "group /World\n"]
    for i, row in enumerate(rows):
        lines.append("object " + " ".join(row).replace("/World/C", f"/World/C{i}", 1) + extra + "\n")
    return "".join(lines)


def test_a_clean_scene_decodes_to_the_same_values():
    rng = random.Random(3)
    rows = []
    for i in range(300):
        row = list(OBJECT_FIELDS)
        row[2:5] = [f"{rng.uniform(-50, 50):.6g}" for _ in range(3)]
        row[21] = rng.choice(["dynamic", "static", "Kinematic", "fixed", "visual_only"])
        row[17] = rng.choice(["false", "0", "no", "Off"])
        rows.append(row[: rng.choice([25, 25, 25, 17])] if i % 7 else row[:15] + ["default", "-", "true", "false"])
    text = scene_text(rows) + "".join(f"light /World/L{i} 0 0 -1 {i}.5 type=spot\n" for i in range(5))
    fast = outcome(text)
    assert fast == per_record(text)
    objects = [values for values in fast[2] if values[0][0] == "path" and values[1][0] == "primitive"]
    assert not fast[0] and len(objects) == 300
    assert [dict(values)["position"] for values in objects] == [tuple(map(float, row[2:5])) for row in rows]
    assert dict(fast[2][-1])["intensity"] == 4.5 and dict(fast[2][-1])["type"] == "spot"


@pytest.mark.parametrize("bad", BAD_TOKENS)
@pytest.mark.parametrize("field", range(len(OBJECT_FIELDS)))
def test_one_bad_token_anywhere_is_reported_as_record_by_record(field, bad):
    rows = [list(OBJECT_FIELDS) for _ in range(40)]
    rows[17][field] = bad
    rows[33][field] = bad
    text = scene_text(rows)
    assert outcome(text) == per_record(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(OBJECT_FIELDS) - 1), st.integers(0, 29),
                          st.sampled_from(BAD_TOKENS + ["0", "-0", "true", "static", "mesh", "a%3Db"])),
                max_size=6),
       st.sampled_from(["", " id=x", " semanticClass=crate instanceId=3", " instanceId=bad", " id=a id=b",
                        " parentGroupId=/World", " parentGroupId=/Nowhere"]))
def test_random_damage_is_reported_as_record_by_record(damage, extra):
    rows = [list(OBJECT_FIELDS) for _ in range(30)]
    for field, row, token in damage:
        rows[row][field] = token
    text = scene_text(rows, extra)
    assert outcome(text) == per_record(text)


def test_structure_problems_and_short_layouts_mix_with_good_records():
    rows = [list(OBJECT_FIELDS) for _ in range(20)]
    rows[4] = rows[4][:10]  # too few fields
    rows[9] = rows[9][:19]  # the older 19-field layout
    rows[12] = rows[12] + ["extra", "tokens"]  # kept, not decoded, reported as surplus
    text = scene_text(rows) + "object /World/K box 0 0 0 id=k 1 0 0 0\n"
    fast = outcome(text)
    assert fast == per_record(text)
    assert sorted({line for line, _, _ in fast[0]}) == [8, 16, 24]


def test_decoded_values_are_not_shared_between_records_when_mutable():
    text = H + "".join(f"instanced_visual /World/I{i} box instances=0,0,0,1,0,0,0,1,1,1\n" for i in range(3))
    scene = rscene.loads(text)
    a, b = scene.of("instanced_visual")[:2]
    assert a.get("instances") is not b.get("instances")


def test_number_column_matches_decode_number():
    tokens = ["1", "-0", "+.5", "5.", "1e5", "1E-05", "0.1", "123456789012345678901234567890"]
    assert decode_number_column(tokens) == [NUMBER.decode(t) for t in tokens]
    for bad in ("1e999", "nan", "1_0", "\uff11", "inf"):
        with pytest.raises(record_module.ValueFormatError) as column:
            decode_number_column(tokens + [bad])
        with pytest.raises(record_module.ValueFormatError) as single:
            NUMBER.decode(bad)
        assert str(column.value) == str(single.value)


def test_the_collector_is_back_on_after_a_read_that_fails():
    import gc
    assert gc.isenabled()
    with pytest.raises(rscene.FormatError):
        rscene.loads(scene_text([OBJECT_FIELDS[:3]]))
    assert gc.isenabled()
    gc.disable()
    try:
        rscene.loads(scene_text([OBJECT_FIELDS]))
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()
