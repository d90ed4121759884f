"""Blender data -> scene model (export): the imported document with the user's edits applied.

The source text stored at import is parsed again; each Blender object that came from a record is
compared with it and only fields that really changed are set (a changed record is written canonically,
every other line stays byte-identical). Records whose objects were deleted are removed, new Blender
objects become new records, and everything Blender does not show is kept as it was.
"""
from __future__ import annotations

import math
import os

import bpy
from mathutils import Vector

from ..formats import rscene
from ..model import Scene, new_record
from . import conventions as cv
from .materials import material_values
from .props import imported_name


def _set(record, name: str, value, tol: float = 1e-6) -> bool:
    """Set a field when the Blender value differs from the record's (beyond float32 noise)."""
    current = record.get(name)
    if isinstance(current, bool) or isinstance(value, bool) or isinstance(current, str):
        changed = current != value
    elif isinstance(current, (int, float)):
        changed = not cv.close(current, value, tol)
    else:
        changed = not cv.close(tuple(current), tuple(value), tol)
    if changed:
        record.set(name, value)
    return changed


def _rotation(ob):
    if ob.rotation_mode == "QUATERNION":
        return ob.rotation_quaternion.normalized()
    return ob.matrix_basis.to_quaternion()


def _rename(record, ob) -> None:
    if not record.schema.field("path"):
        return
    path = record.path or record.tag  # as imported: export never rewrites the source text
    if ob.name == imported_name(ob.rscene, path):
        return
    if record.schema.field("id") and not record.has("id"):
        record.set("id", record.id)  # the id stays when the path changes
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    record.set("path", f"{parent}/{ob.name}")


def update_object(record, ob) -> None:
    props = ob.rscene
    _set(record, "position", tuple(ob.location))
    q = _rotation(ob)
    if not cv.same_rotation(record.get("quaternion"), q):
        record.set("quaternion", tuple(q))
    primitive = record.get("primitive")
    scale = tuple(ob.scale)
    if primitive in ("box", "ground", "mesh"):
        _set(record, "scale", scale)
    elif any(abs(s - 1.0) > 1e-6 for s in scale):  # primitives are built at size; a Blender scale grows them
        sx, sy, sz = record.get("scale")
        record.set("scale", (sx * scale[0], sy, sz * (scale[2] if primitive != "sphere" else 1.0)))
    _set(record, "visible", not ob.hide_render)
    if primitive != "mesh" and ob.material_slots and ob.material_slots[0].material is not None:
        mat = ob.material_slots[0].material
        mat_id = mat.get("rscene_id", mat.name)
        if mat_id != (record.get("material") or "engine_default"):
            record.set("material", mat_id)
    _set(record, "bodyMode", props.body_mode)
    if not cv.close(max(record.get("mass"), 0.0), props.mass):
        record.set("mass", props.mass)
    _set(record, "collidable", props.collidable)
    _set(record, "collisionGroup", int(props.collision_group))
    _set(record, "collisionMask", int(props.collision_mask))
    if record.schema.field("semanticClass"):
        _set(record, "semanticClass", props.semantic_class)
        if props.instance_id != max(int(record.get("instanceId") or -1), -1):
            record.set("instanceId", props.instance_id)
    _rename(record, ob)


def update_light(record, ob) -> None:
    light = ob.data
    kind = cv.RECORD_LIGHT_TYPE.get(light.type, "point")
    _set(record, "type", kind)
    _set(record, "position", tuple(ob.location))
    _set(record, "color", tuple(light.color) + (tuple(record.get("color"))[3:] or (1.0,)), 1e-6)
    intensity = cv.light_power_from_blender(kind, light.energy)
    _set(record, "intensity", intensity, 1e-5)
    direction = cv.light_direction_from_blender(_rotation(ob))
    old = Vector(record.get("direction"))
    if old.length < 1e-12 or (old.normalized() - direction).length > 1e-5:
        record.set("direction", tuple(direction * (old.length or 1.0)))
    if kind == "spot":
        cone, inner = cv.spot_from_blender(light.spot_size, light.spot_blend)
        _set(record, "coneAngle", cone, 1e-5)
        _set(record, "innerConeAngle", inner, 1e-5)
    elif kind == "area":
        size = record.get("areaSize")
        _set(record, "areaSize", (light.size, light.size_y, size[2]), 1e-6)
    _set(record, "visible", not ob.hide_render)
    _rename(record, ob)


def update_camera(record, ob, bl_scene) -> None:
    cam = ob.data
    _set(record, "position", tuple(ob.location))
    q = cv.camera_rotation_from_blender(_rotation(ob))
    if not cv.same_rotation(record.get("quaternion"), q):
        record.set("quaternion", tuple(q))
    hfov = record.get("horizontalFov")
    if hfov and hfov > 0:
        _set(record, "horizontalFov", cv.fov_from_lens(cam.lens, cam.sensor_width), 1e-5)
    else:
        _set(record, "verticalFov", cv.fov_from_lens(cam.lens, cam.sensor_height), 1e-5)
    _set(record, "near", cam.clip_start)
    _set(record, "far", cam.clip_end)
    if bl_scene.camera is ob:
        width, height = bl_scene.render.resolution_x, bl_scene.render.resolution_y
    else:
        width, height = ob.get("rscene_resolution", (record.get("width"), record.get("height")))
    _set(record, "width", int(width))
    _set(record, "height", int(height))
    projection = "orthographic" if cam.type == "ORTHO" else "perspective"
    if str(record.get("projection")).lower()[:5] != projection[:5]:
        record.set("projection", projection)
    if cam.type == "ORTHO":
        _set(record, "orthoScale", cam.ortho_scale, 1e-6)
    _rename(record, ob)


def update_material(record, mat) -> None:
    for name, value in material_values(mat).items():
        if record.schema.field(name):
            _set(record, name, value, 1e-6)


def update_group(record, collection) -> None:
    if record.schema.field("visible"):
        _set(record, "visible", not collection.hide_viewport)
    if record.schema.field("locked"):
        _set(record, "locked", collection.hide_select)


# -- new Blender objects -> new records -----------------------------------------------------------------


def _unique_path(scene: Scene, name: str) -> str:
    path, i = f"/World/{name}", 1
    while scene.find(path) is not None:
        i += 1
        path = f"/World/{name}_{i}"
    return path


def new_record_for(ob, scene: Scene, out_dir: str, warn):
    if ob.type == "CAMERA":
        cam = ob.data
        q = cv.camera_rotation_from_blender(_rotation(ob))
        return new_record("camera", path=_unique_path(scene, ob.name), position=tuple(ob.location),
                          quaternion=tuple(q), verticalFov=cv.fov_from_lens(cam.lens, cam.sensor_height),
                          near=cam.clip_start, far=cam.clip_end)
    if ob.type == "LIGHT":
        light = ob.data
        kind = cv.RECORD_LIGHT_TYPE.get(light.type, "point")
        direction = cv.light_direction_from_blender(_rotation(ob))
        return new_record("light", path=_unique_path(scene, ob.name), direction=tuple(direction),
                          intensity=cv.light_power_from_blender(kind, light.energy), type=kind,
                          position=tuple(ob.location), color=tuple(light.color))
    if ob.type == "MESH":
        path = _unique_path(scene, ob.name)
        common = dict(path=path, position=tuple(ob.location), quaternion=tuple(_rotation(ob)))
        if _is_unit_box(ob.data):
            return new_record("object", primitive="box", scale=tuple(ob.scale), **common)
        file_name = f"{bpy.path.clean_name(ob.name)}.glb"
        _export_glb(ob, os.path.join(out_dir, file_name))
        record = new_record("object", primitive="mesh", scale=tuple(ob.scale), mesh=file_name, **common)
        return record
    return None


def _is_unit_box(mesh) -> bool:
    if len(mesh.vertices) != 8 or len(mesh.polygons) != 6:
        return False
    coords = [tuple(round(abs(c), 5) for c in v.co) for v in mesh.vertices]
    return all(c == coords[0] for c in coords) and all(abs(c - 0.5) < 1e-5 or abs(c - 1.0) < 1e-5 for c in coords[0])


def _export_glb(ob, path: str) -> None:
    """Write one object's mesh as glTF binary, in its own local frame."""
    saved = ob.matrix_world.copy()
    view_layer = bpy.context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    for o in selected:
        o.select_set(False)
    ob.select_set(True)
    ob.matrix_world = ob.matrix_world.Identity(4)
    try:
        bpy.ops.export_scene.gltf(filepath=path, use_selection=True, export_format="GLB")
    finally:
        ob.matrix_world = saved
        ob.select_set(False)
        for o in selected:
            o.select_set(True)


# -- the export job -----------------------------------------------------------------------------------


def source_text(bl_scene):
    name = bl_scene.rscene.source if hasattr(bl_scene, "rscene") else ""
    return bpy.data.texts.get(name) if name else None


def scene_from_blender(bl_scene, path: str, warn=lambda message: None) -> Scene:
    """The scene model for ``bl_scene``: the imported document with Blender's edits applied."""
    text = source_text(bl_scene)
    if text is not None:
        scene = rscene.loads(text.as_string(), text.get("rscene_path") or path, lazy=True)
    else:
        scene = Scene(version=2)
    scene.path = path
    items = list(scene.items)
    seen: set[int] = set()
    out_dir = os.path.dirname(os.path.abspath(path))
    source = text.name if text is not None else None
    for ob in bl_scene.objects:
        props = ob.rscene
        if source and props.source == source and 0 <= props.uid < len(items):
            record = items[props.uid]
            seen.add(props.uid)
            kind = getattr(record, "tag", "")  # props.kind, read from this parse of the same text
            if kind == "object":
                update_object(record, ob)
            elif kind == "light":
                update_light(record, ob)
            elif kind == "camera":
                update_camera(record, ob, bl_scene)
            elif kind == "articulated":
                from .robots import update_articulated
                update_articulated(record, ob)
        elif not props.source and not ob.get("rscene_collision") and ob.parent is None:
            record = new_record_for(ob, scene, out_dir, warn)
            if record is not None:
                scene.add(record)
    if text is not None:
        for mat in bpy.data.materials:
            uid = mat.get("rscene_uid", -1)
            if 0 <= uid < len(items) and items[uid].tag == "material":
                update_material(items[uid], mat)
        for collection in bpy.data.collections:
            uid = collection.get("rscene_uid", -1)
            if 0 <= uid < len(items) and items[uid].tag == "group":
                update_group(items[uid], collection)
        for uid in text.get("rscene_node_uids", ()):
            if uid not in seen and 0 <= uid < len(items):
                _remove_with_children(scene, items[uid])
        _update_settings(scene, bl_scene)
    return scene


def _remove_with_children(scene: Scene, record) -> None:
    """Remove a node and the records that belong to it (compound children, IK targets, layers)."""
    owned = [r for r in scene.records
             if r.schema is not None and r.schema.parent and r.schema.parent[0] == record.tag
             and r.get(r.schema.parent[1]) in (record.path, record.id)]
    for child in owned:
        scene.remove(child)
    scene.remove(record)


def _update_settings(scene: Scene, bl_scene) -> None:
    gravity = tuple(bl_scene.gravity)
    if not cv.close(scene.gravity, gravity):
        _setting(scene, "gravity").set("gravity", gravity)
    props = bl_scene.rscene
    if not cv.close(scene.time_step, props.time_step):
        _setting(scene, "time_step").set("dt", props.time_step)
    solver = scene.setting("solver")
    wanted = {"iterations": props.solver_iterations, "erp": props.erp,
              "defaultFriction": props.default_friction, "defaultRestitution": props.default_restitution}
    changed = {k: v for k, v in wanted.items() if not cv.close(solver.get(k), v)}
    if changed:
        solver = _setting(scene, "solver")
        for key, value in changed.items():
            solver.set(key, value)


def _setting(scene: Scene, tag: str):
    found = scene.of(tag)
    return found[-1] if found else scene.add(new_record(tag))


def export_scene(bl_scene, path: str, warn=lambda message: None) -> None:
    """Write ``bl_scene`` as an ``.rscene`` file (atomically)."""
    rscene.write(scene_from_blender(bl_scene, path, warn), path)


__all__ = ["export_scene", "scene_from_blender", "math"]
