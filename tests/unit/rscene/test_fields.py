"""The simulator's lenient field reader finds every positional field where the schema table puts it."""
from __future__ import annotations

import numpy as np

from rscene_addon.formats import rscene
from rscene_addon.model.fields import POSITIONAL, Fields

LINES = [
    "raisim_engine_scene 2",
    "solver 30 1e-7 0.2 pgs",
    "contact_material steel rubber 0.8 0.1 0.01 0.9 0.01 0.02 0.03",
    "terrain_region /World/T 5 6 10 12 1 2 3",
    "wire /World/W stiff a b 2.5",
    "compound /World/C 1 2 3 0 1 0 0 2 2 2 12.0 dynamic true false",
    "compound_child /World/C box 0.5 0.6 0.7 0 0 1 0 1 2 3",
    "deformable /World/D cloth m.obj 1 2 3 0 0 0 1 4 5 6",
    "granular /World/G particles 1 2 3 0 0 1 0 7 8 9",
]


def test_every_positional_field_reads_as_the_schema_decodes_it():
    scene = rscene.loads("\n".join(LINES) + "\n")
    seen = set()
    for record in scene.records:
        if record.tag not in POSITIONAL:
            continue
        seen.add(record.tag)
        f = Fields(record)
        for name, (_, span) in POSITIONAL[record.tag].items():
            expected = record.get(name)
            if span > 1:
                np.testing.assert_array_equal(f.vec(name, np.zeros(span), span), expected, err_msg=f"{record.tag}.{name}")
            elif isinstance(expected, str):
                assert f.text(name) == expected, (record.tag, name)
            elif isinstance(expected, bool):
                assert f.flag(name, not expected) == expected, (record.tag, name)
            else:
                assert f.num(name, -1.0) == expected, (record.tag, name)
    assert seen == set(POSITIONAL)
