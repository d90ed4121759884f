"""Typed properties that tie Blender data to scene records.

``Object.rscene`` holds a node's identity and the record fields users edit in the Object panel (body
mode, mass, collision group/mask, semantic labels). Only the source text and the record index are
stored; kind, path and id are read from that record (``sources``), so import writes two identity
properties per object.
``Scene.rscene`` holds the scene-wide settings (time step, solver) and the source document's name.
Collision groups are uint64, beyond IntProperty's range, so they are kept as decimal strings.
"""
import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from . import sources

BODY_MODES = [
    ("static", "Static", "Never moves; collides"),
    ("kinematic", "Kinematic", "Moves along its animation; pushes dynamic bodies"),
    ("dynamic", "Dynamic", "Simulated rigid body"),
    ("visual_only", "Visual only", "Drawn, no physics body"),
]


def _check_uint64(self, context, attr):
    value = getattr(self, attr)
    try:
        ok = 0 <= int(value) < 2**64
    except ValueError:
        ok = False
    if not ok:
        setattr(self, attr, str(2**64 - 1) if attr == "collision_mask" else "1")


def _from_record(read):
    """A getter of ``read(record)`` for the object's record: "" for an object the user made, or one whose
    source text is gone (or was broken by hand)."""
    def get(props) -> str:
        record = sources.record(props.source, props.uid)
        try:
            return read(record) if record is not None else ""
        except ValueError:
            return ""
    return get


_kind = _from_record(lambda record: record.tag)
_path = _from_record(lambda record: record.path or record.tag)
_record_id = _from_record(lambda record: record.id or "")


def imported_name(props, path: str) -> str:
    """The Blender name import gave the object of the record at ``path``. Stored only when it is not the
    name import asked for (taken already, too long); files saved before that stored it always."""
    return props.name_at_import or props.get("imported_name") or sources.node_name(path)


def _imported_name(props) -> str:
    return imported_name(props, _path(props))


class RSCENE_PG_node(bpy.types.PropertyGroup):
    source: StringProperty(name="Source", description="Text datablock holding the scene file it came from")
    uid: IntProperty(name="Record", default=-1, description="Index of the record in its source document")
    kind: StringProperty(name="Kind", description="Record kind (object, light, camera, ...)", get=_kind)
    path: StringProperty(name="Path", description="Scene-tree path, e.g. /World/Props/Crate", get=_path)
    record_id: StringProperty(name="Id", description="Stable id other records refer to", get=_record_id)
    imported_name: StringProperty(description="Blender name at import, to detect renames", get=_imported_name)
    name_at_import: StringProperty(description="Blender name at import when it is not the path's last part")
    body_mode: EnumProperty(name="Body mode", items=BODY_MODES, default="dynamic")
    mass: FloatProperty(name="Mass", min=0.0, default=1.0, unit="MASS")
    collidable: BoolProperty(name="Collidable", default=True)
    collision_group: StringProperty(name="Collision group", default="1",
                                    update=lambda s, c: _check_uint64(s, c, "collision_group"))
    collision_mask: StringProperty(name="Collision mask", default=str(2**64 - 1),
                                   update=lambda s, c: _check_uint64(s, c, "collision_mask"))
    semantic_class: StringProperty(name="Semantic class")
    instance_id: IntProperty(name="Instance id", default=-1, min=-1)
    missing_file: StringProperty(name="Missing file", description="Referenced file that was not found")


class RSCENE_PG_scene(bpy.types.PropertyGroup):
    source: StringProperty(name="Source", description="Text datablock of the last imported scene")
    time_step: FloatProperty(name="Time step", default=0.0025, min=1e-6, precision=5, unit="TIME_ABSOLUTE")
    solver_iterations: IntProperty(name="Solver iterations", default=80, min=1)
    erp: FloatProperty(name="ERP", default=0.2, min=0.0)
    default_friction: FloatProperty(name="Default friction", default=0.8, min=0.0)
    default_restitution: FloatProperty(name="Default restitution", default=0.0, min=0.0)
    sim_backend: EnumProperty(
        name="Physics backend", default="auto",
        items=[("auto", "Auto", "Compiled kernels (numba) where they import, else numpy"),
               ("numba", "Compiled (numba)", "Compiled kernels; compiled once per machine, then cached"),
               ("numpy", "numpy", "The reference core in numpy (slower, no compile)")],
        description="Which implementation of the physics core the bake runs")


CLASSES = (RSCENE_PG_node, RSCENE_PG_scene)


def register_extra():
    sources.register()
    bpy.types.Object.rscene = PointerProperty(type=RSCENE_PG_node)
    bpy.types.Scene.rscene = PointerProperty(type=RSCENE_PG_scene)


def unregister_extra():
    sources.unregister()
    del bpy.types.Object.rscene
    del bpy.types.Scene.rscene
