"""Record.maker: records made with some fields encoded once are the records the constructor makes."""
from __future__ import annotations

import math

import pytest

from rscene_addon.model import RECORD_CLASSES, new_record
from rscene_addon.model.errors import ValueFormatError

OBJECT = RECORD_CLASSES["object"]
FIXED = {"material": "steel", "mass": -0.0, "bodyMode": "dynamic", "collisionMask": 0, "primitive": "box"}
VARYING = ("path", "position", "quaternion", "scale")


def _state(record):
    return (record.line, record.source, record._pos, record._keys, record._layout, record.changed, record.to_line())


@pytest.mark.parametrize("values", [
    ("/World/a", (1.0, 2.0, 3.0), (1.0, 0.0, 0.0, 0.0), (0.1, 0.2, 0.3)),
    ("/World/b c", (-0.0, 1e-300, 1e300), (0.5, -0.5, 0.5, -0.5), (1, 2, 3)),
    ("/World/ü", (0.1, 0.2, 0.30000000000000004), (math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0), (0.0, -0.0, 5e-324)),
])
def test_made_records_are_constructed_records(values):
    make = OBJECT.maker(FIXED, VARYING)
    made = make(*values)
    built = new_record("object", **FIXED, **dict(zip(VARYING, values)))
    assert type(made) is type(built) and _state(made) == _state(built)
    assert made.get("mass") == 0.0 and math.copysign(1.0, made.get("mass")) == -1.0
    made.set("mass", 2.0)  # an edit after making works as on any record
    assert made.get("mass") == 2.0 and built.get("mass") == -0.0


def test_a_value_that_does_not_encode_fails_as_in_the_constructor():
    make = OBJECT.maker(FIXED, VARYING)
    bad = ("/World/a", (1.0, 2.0), (1.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    with pytest.raises(ValueFormatError) as expected:
        new_record("object", **FIXED, **dict(zip(VARYING, bad)))
    with pytest.raises(ValueFormatError) as got:
        make(*bad)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fixed, varying", [
    ({"material": "m", "primitive": "box"}, ("path", "position")),  # bodyMode's default derives from the record
    ({"bodyMode": "static", "primitive": "box"}, ("position",)),  # path is required
    ({"bodyMode": "static", "primitive": "box", "friction": 0.5}, ("path",)),  # a key, not a positional field
    ({"bodyMode": "static", "primitive": "box", "path": "/a"}, ("path",)),  # a field twice
    ({"bodyMode": "static", "primitive": "box", "mass": "heavy"}, ("path",)),  # does not encode
])
def test_no_maker_where_the_constructor_must_decide(fixed, varying):
    assert OBJECT.maker(fixed, varying) is None
