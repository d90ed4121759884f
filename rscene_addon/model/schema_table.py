"""Every ``.rscene`` record kind: positional layouts, keys, types and Engine 2 defaults.

Transcribed from the format documents (seed ``rscene_format_v1.txt`` and the newer ``RsceneFile.rst``).
Where they disagree, the newer document wins. Field names follow the documents' key names; positional
fields get the names the documents use for them.
"""
from __future__ import annotations

from .schema import F, RecordSchema, default_id
from .values import (BYTE_LIST, COLOR, COLOR_LIST, FLAG, GROUP, INT, INT_LIST, LIST, NUMBER, QUAT, TEXT,  # noqa: F401
                     TEXT_LIST, TRANSFORM_LIST, VEC2, VEC3, Name)

ALL_GROUPS = 2**64 - 1

BODY_MODE = Name("static", "kinematic", "dynamic", "visual_only",
                 aliases={"fixed": "static", "movable": "dynamic", "visualonly": "visual_only",
                          "visual": "visual_only"})
PRIMITIVE = Name("ground", "box", "sphere", "cylinder", "capsule", "mesh",
                 aliases={"plane": "ground", "cube": "box", "static_mesh": "mesh"})


def _object_body_mode(record):
    """Older layouts have no body mode: 19 fields say static (fixed) or dynamic; 17 fields are dynamic."""
    if record.schema.field("fixed") and any(f.name == "fixed" for f in record.layout):
        return "static" if record.get("fixed") else "dynamic"
    return "dynamic"


_OBJECT_HEAD = (
    F("path", TEXT), F("primitive", PRIMITIVE),
    F("position", VEC3, (0.0, 0.0, 0.0)), F("quaternion", QUAT, (1.0, 0.0, 0.0, 0.0)),
    F("scale", VEC3, (1.0, 1.0, 1.0)), F("radius", NUMBER, 0.5), F("height", NUMBER, 1.0),
    F("mass", NUMBER, 1.0), F("contactMaterial", TEXT, "default"), F("material", TEXT, "engine_default"),
)

SCHEMAS: list[RecordSchema] = [
    RecordSchema("raisim_engine_scene", ((F("version", INT),),), doc="Header: format version 1 or 2."),
    RecordSchema("time_step", ((F("dt", NUMBER, 0.0025),),), singleton=True,
                 doc="Integration time step in seconds."),
    RecordSchema("gravity", ((F("gravity", VEC3, (0.0, 0.0, -9.81)),),), singleton=True,
                 doc="Gravity in m/s^2."),
    RecordSchema("asset_root", ((F("root", TEXT, "."),),), singleton=True,
                 doc="Directory searched for references not found next to the scene file."),
    RecordSchema(
        "object",
        (
            _OBJECT_HEAD + (
                F("visualOnly", FLAG, False), F("visible", FLAG, True), F("locked", FLAG, False),
                F("mesh", TEXT, ""), F("bodyMode", BODY_MODE, _object_body_mode),
                F("collidable", FLAG, True), F("collisionGroup", GROUP, 1),
                F("collisionMask", GROUP, ALL_GROUPS)),
            _OBJECT_HEAD + (F("visible", FLAG, True), F("fixed", FLAG, False)),
            _OBJECT_HEAD,
        ),
        keys=(
            F("id", TEXT, default_id("object_")), F("parentGroupId", TEXT, ""),
            F("renderMeshPath", TEXT, ""), F("collisionMeshPath", TEXT, ""),
            F("semanticClass", TEXT, ""), F("instanceId", INT, -1), F("segmentationColor", COLOR, None),
        ),
        id_prefix="object_",
        doc="A ground, box, sphere, cylinder, capsule or mesh body (or a visual-only object).",
    ),
]
