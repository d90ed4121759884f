"""Blender data -> scene model (export): the imported document with the user's edits applied.

The source text stored at import is parsed again; each Blender object that came from a record is
compared with it and only fields that really changed are set (a changed record is written canonically,
every other line stays byte-identical). Records whose objects were deleted are removed, new Blender
objects become new records, and everything Blender does not show is kept as it was.

Every kind import makes has an updater (``_updaters``); an edited object of a kind that has none (a
wire, an instanced visual, a robot's own sensor) is named in one warning instead of being dropped
silently (import stores its local matrix, ``BUILT_KEY``). Sensors are written relative to their parent
body, other parented nodes at their world pose (``WorldPose``). Baked bodies are written at their pose
before the bake unless ``current_frame`` asks for the playhead's (``bake.rest_pose_shown``).
"""
from __future__ import annotations

import math
import os

import bpy
import numpy as np
from mathutils import Matrix, Vector

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
    _physical(record, props)
    _rename(record, ob)


def _physical(record, props) -> None:
    """The fields of an ``object`` record its RaiSim Record panel edits (body mode, mass, collision, labels)."""
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


def _lens_fields(record, ob, bl_scene, near: str, far: str) -> None:
    """Field of view (the one the record states), clip distances and size of a camera or camera sensor;
    the active camera's size is the render's."""
    cam = ob.data
    hfov = record.get("horizontalFov")
    if hfov and hfov > 0:
        _set(record, "horizontalFov", cv.fov_from_lens(cam.lens, cam.sensor_width), 1e-5)
    else:
        _set(record, "verticalFov", cv.fov_from_lens(cam.lens, cam.sensor_height), 1e-5)
    _set(record, near, cam.clip_start)
    _set(record, far, cam.clip_end)
    if bl_scene is not None and bl_scene.camera is getattr(ob, "_ob", ob):  # ob may be a WorldPose view
        width, height = bl_scene.render.resolution_x, bl_scene.render.resolution_y
    else:
        width, height = ob.get("rscene_resolution", (record.get("width"), record.get("height")))
    _set(record, "width", int(width))
    _set(record, "height", int(height))


def update_camera(record, ob, bl_scene) -> None:
    cam = ob.data
    _set(record, "position", tuple(ob.location))
    q = cv.camera_rotation_from_blender(_rotation(ob))
    if not cv.same_rotation(record.get("quaternion"), q):
        record.set("quaternion", tuple(q))
    _lens_fields(record, ob, bl_scene, "near", "far")
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


def _pose_fields(record, location, q) -> None:
    _set(record, "position", tuple(location))
    if not cv.same_rotation(record.get("quaternion"), q):
        record.set("quaternion", tuple(q))


def _scale_field(record, blender_scale, built_scale) -> None:
    """``scale`` from a Blender scale built as ``built_scale`` (record scale x a size): only a Blender
    change is written, as a factor on the record's scale."""
    if cv.close(tuple(blender_scale), tuple(built_scale), 1e-6):
        return
    old = record.get("scale")
    record.set("scale", tuple(o * (b / k if abs(k) > 1e-12 else b)
                              for o, b, k in zip(old, blender_scale, built_scale)))


def _shown(record, ob, field: str) -> None:
    if record.schema.field(field):
        _set(record, field, not ob.hide_render)


def update_compound(record, ob) -> None:
    props = ob.rscene
    _pose_fields(record, ob.location, _rotation(ob))
    _set(record, "scale", tuple(ob.scale))
    _set(record, "bodyMode", props.body_mode)
    if not cv.close(max(record.get("mass"), 0.0), props.mass):
        record.set("mass", props.mass)
    _set(record, "collidable", props.collidable)
    _set(record, "visible", not ob.hide_render)
    _rename(record, ob)


def compound_children(scene: Scene, record) -> list:
    """The compound_child records of ``record`` in file order (the order import numbers them)."""
    return [r for r in scene.of("compound_child") if scene.find(r.get("compound")) is record]


def child_built_scale(child) -> tuple:
    """The Blender scale import gives a compound child's object (its size is in a shared mesh otherwise)."""
    sx, sy, sz = child.get("scale")
    primitive = child.get("primitive")
    if primitive == "box":
        size = child.get("size")
        return (size[0] * sx, size[1] * sy, size[2] * sz)
    if primitive in ("sphere", "cylinder", "capsule"):
        return (1.0, 1.0, 1.0)
    return (sx, sy, sz)


def update_compound_children(scene: Scene, record, ob) -> None:
    children = compound_children(scene, record)
    for child_ob in ob.children:
        index = child_ob.get("rscene_compound_child", -1)
        if 0 <= index < len(children):
            child = children[index]
            _pose_fields(child, child_ob.location, _rotation(child_ob))
            _scale_field(child, tuple(child_ob.scale), child_built_scale(child))


def _rigid(matrix):
    """A world matrix without its scale: the frame a child's pose is measured in."""
    location, rotation, _ = matrix.decompose()
    return Matrix.Translation(location) @ rotation.to_matrix().to_4x4()


def update_sensor(scene: Scene, record, ob, objects_by_record, bl_scene=None) -> None:
    """The mount pose relative to the parent body (the format's frame: parent position and rotation,
    scale ignored). Parented as import parents it, the object's own location and rotation are that pose;
    otherwise (unparented by hand) it is measured from the world matrices."""
    camera = ob.type == "CAMERA"
    parent = scene.find(record.get("parent"))
    parent_ob = objects_by_record.get(id(parent)) if parent is not None else None
    if ob.parent is not None and ob.parent is parent_ob and ob.parent_type == "OBJECT":
        location, q = ob.location, _rotation(ob)
    else:
        world = ob.matrix_world
        if parent_ob is not None:
            world = _rigid(parent_ob.matrix_world).inverted() @ world
        location, q, _ = world.decompose()
    if camera:
        q = cv.camera_rotation_from_blender(q)
        _lens_fields(record, ob, bl_scene, "nearPlane", "farPlane")
    _pose_fields(record, location, q)
    _set(record, "enabled", not ob.hide_render)
    _rename(record, ob)


def update_terrain(record, ob) -> None:
    """Center from the location; heights from the grid's vertex z when sculpted (same vertex order)."""
    _set(record, "center", tuple(ob.location))
    _set(record, "visible", not ob.hide_render)
    mesh = ob.data
    n = int(record.get("xSamples")) * int(record.get("ySamples"))
    if mesh is not None and ob.type == "MESH" and len(mesh.vertices) == n:
        co = np.empty(3 * n, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        z = co[2::3].astype(np.float64)
        old = np.asarray(record.get("heights"), dtype=np.float64).ravel()
        if old.size == 0:
            old = np.zeros(n)
        if old.shape != z.shape or np.any(np.abs(z - old) > 1e-5 * np.maximum(1.0, np.abs(old))):
            record.set("heights", [float(v) for v in z])
    _rename(record, ob)


def update_posed(record, ob) -> None:
    """Particles, cloth and other posed records: pose, scale and whether they are shown."""
    _pose_fields(record, ob.location, _rotation(ob))
    if record.schema.field("scale"):
        _set(record, "scale", tuple(ob.scale))
    _shown(record, ob, "visible")
    _shown(record, ob, "enabled")
    _rename(record, ob)


def update_boxed(record, ob) -> None:
    """Decals and irradiance volumes: the Blender scale is half extents x record scale."""
    _pose_fields(record, ob.location, _rotation(ob))
    half = record.get("halfExtents")
    _scale_field(record, tuple(ob.scale), tuple(h * s for h, s in zip(half, record.get("scale"))))
    _shown(record, ob, "enabled")
    _rename(record, ob)


def update_reflection_probe(record, ob) -> None:
    _set(record, "position", tuple(ob.location))
    if ob.type == "LIGHT_PROBE":
        radius = record.get("radius")
        if not cv.close(max(radius, 1e-4), ob.data.influence_distance, 1e-6):
            record.set("radius", ob.data.influence_distance)
    _shown(record, ob, "enabled")
    _rename(record, ob)


def update_fog(record, ob) -> None:
    _set(record, "center", tuple(ob.location))
    scale = tuple(ob.scale)
    if not cv.close(scale, (1.0, 1.0, 1.0), 1e-6):  # the sphere is built at the radius: a scale grows it
        record.set("radius", record.get("radius") * max(abs(v) for v in scale))
    _shown(record, ob, "enabled")
    _rename(record, ob)


def update_point_cloud(record, ob) -> None:
    """The points are in world space: a moved cloud writes its points moved."""
    matrix = np.array(ob.matrix_basis)
    if not np.allclose(matrix, np.eye(4), atol=1e-7):
        points = np.asarray(record.get("points"), dtype=np.float64).reshape(-1, 3)
        moved = points @ matrix[:3, :3].T + matrix[:3, 3]
        record.set("points", [tuple(map(float, p)) for p in moved])
    _shown(record, ob, "enabled")
    _rename(record, ob)


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
        half = _box_half_extents(ob.data)
        if half is not None:  # a box record's scale is its side lengths: Blender's Cube (+-1) is 2 m wide
            record = new_record("object", primitive="box", scale=tuple(2.0 * h * abs(k) for h, k in zip(half, ob.scale)),
                                **common)
        else:
            file_name = f"{bpy.path.clean_name(ob.name)}.glb"
            _export_glb(ob, os.path.join(out_dir, file_name))
            record = new_record("object", primitive="mesh", scale=tuple(ob.scale), mesh=file_name, **common)
        _physical(record, ob.rscene)  # as its RaiSim Record panel says (dynamic, 1 kg unless changed)
        return record
    return None


def becomes_new_record(ob) -> bool:
    """An object the user made in Blender (no record behind it, not a part of an imported one): export
    writes it as a new record, and a bake simulates it so (a mesh: an ``object``, dynamic by default)."""
    props = ob.rscene
    return not props.source and not ob.get("rscene_collision") and ob.parent is None


def _box_half_extents(mesh) -> tuple[float, float, float] | None:
    """The half side lengths of a box mesh centred on its origin, axis-aligned in its own frame (8 corners at
    +-hx, +-hy, +-hz: a box record's +-0.5, Blender's Cube +-1), else None."""
    if len(mesh.vertices) != 8 or len(mesh.polygons) != 6:
        return None
    coords = [tuple(round(abs(c), 5) for c in v.co) for v in mesh.vertices]
    corners = {tuple(round(c, 5) for c in v.co) for v in mesh.vertices}
    if not all(c == coords[0] for c in coords) or min(coords[0]) <= 0 or len(corners) != 8:
        return None
    return coords[0]


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


class WorldPose:
    """An object seen with its world pose as its own pose: a node parented to another node (the file
    holds world poses; a sensor's relative mount is read by ``update_sensor`` itself)."""

    def __init__(self, ob):
        self._ob = ob
        self.matrix_basis = ob.matrix_world.copy()
        self.location, self.rotation_quaternion, self.scale = self.matrix_basis.decompose()
        self.rotation_mode = "QUATERNION"
        self.parent = None

    def __getattr__(self, name):
        return getattr(self._ob, name)


BUILT_KEY = "rscene_built"  # the local matrix import gave an object whose record kind cannot be written
# kinds whose Blender object cannot be turned back into the record, and why (said at export when edited)
UNWRITABLE = {
    "wire": "its ends follow bodyA and bodyB",
    "instanced_visual": "its instances are kept as imported",
    "robot sensor": "it lives in the robot's sensor files, not in the scene",
}


def _updaters(scene: Scene, bl_scene, by_record: dict) -> dict:
    def articulated(record, ob):
        from .robots import update_articulated
        update_articulated(record, ob)

    def compound(record, ob):
        update_compound(record, ob)
        update_compound_children(scene, record, ob)

    return {
        "object": update_object, "light": update_light,
        "camera": lambda record, ob: update_camera(record, ob, bl_scene),
        "articulated": articulated, "compound": compound,
        "sensor": lambda record, ob: update_sensor(scene, record, ob, by_record, bl_scene),
        "terrain_region": update_terrain, "granular": update_posed, "deformable": update_posed,
        "projected_decal": update_boxed, "irradiance_volume": update_boxed,
        "reflection_probe": update_reflection_probe, "local_fog": update_fog, "point_cloud": update_point_cloud,
    }


WRITTEN_KINDS = frozenset(("object", "light", "camera", "articulated", "compound", "sensor", "terrain_region",
                           "granular", "deformable", "projected_decal", "irradiance_volume", "reflection_probe",
                           "local_fog", "point_cloud"))


def mark_built(ob) -> None:
    """Remember the local matrix import gave ``ob`` (a kind export cannot write): an edit is then seen."""
    ob[BUILT_KEY] = [float(v) for row in ob.matrix_basis for v in row]


def _edited(ob) -> bool:
    built = ob.get(BUILT_KEY)
    if built is None or len(built) != 16:
        return False
    now = [float(v) for row in ob.matrix_basis for v in row]
    return not cv.close(now, list(built), 1e-5)


def scene_from_blender(bl_scene, path: str, warn=lambda message: None, current_frame: bool = False,
                       made: dict | None = None) -> Scene:
    """The scene model for ``bl_scene``: the imported document with Blender's edits applied.

    Baked bodies are written at the pose they had before the bake (the record's, unless edited), or,
    with ``current_frame``, at the pose the playhead shows. ``made`` (a dict) receives the objects made in
    Blender by the path of the new record each became (a bake keys them by it)."""
    from .bake import rest_pose_shown
    if current_frame:
        return _scene_from_blender(bl_scene, path, warn, made)
    with rest_pose_shown(bl_scene):
        return _scene_from_blender(bl_scene, path, warn, made)


def _scene_from_blender(bl_scene, path: str, warn, made=None) -> Scene:
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
    ours = []
    not_written = []
    for ob in bl_scene.objects:
        props = ob.rscene
        if source and props.source == source and 0 <= props.uid < len(items):
            ours.append((items[props.uid], ob))
            seen.add(props.uid)
        elif becomes_new_record(ob):
            record = new_record_for(ob, scene, out_dir, warn)
            if record is not None:
                scene.add(record)
                if made is not None:
                    made[record.path] = ob
        elif not props.source and ob.get("rscene_robot_sensor") and _edited(ob):
            not_written.append(("robot sensor", ob.get("rscene_robot_sensor")))
    by_record = {id(record): ob for record, ob in ours}
    updaters = _updaters(scene, bl_scene, by_record)
    if any(ob.parent is not None for _, ob in ours):
        for layer in bl_scene.view_layers:  # world matrices of children, fresh
            layer.update()
    for record, ob in ours:
        tag = getattr(record, "tag", "")  # props.kind, read from this parse of the same text
        update = updaters.get(tag)
        if update is not None:
            if ob.parent is not None and ob.parent_type == "OBJECT" and tag != "sensor":
                ob = WorldPose(ob)
            update(record, ob)
        elif _edited(ob):
            not_written.append((tag, record.path or tag))
    if text is not None:
        _update_group_membership(scene, items, ours)
    if not_written:
        names = ", ".join(f"{kind} {name}" for kind, name in not_written)
        reasons = "; ".join(f"{kind}: {UNWRITABLE.get(kind, 'it has no pose in the file')}"
                            for kind in dict.fromkeys(k for k, _ in not_written))
        warn(f"edits not written (the file cannot hold them): {names} ({reasons})")
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


def _update_group_membership(scene: Scene, items: list, ours: list) -> None:
    """An object moved to another group's collection gets that group as its ``parentGroupId``; moved out
    of its group's collection into one that is no group (the import's own, a path folder), it gets none.
    Membership is read from the group collections' object lists (``users_collection`` scans every
    collection, per object)."""
    groups = {}
    for collection in bpy.data.collections:
        uid = collection.get("rscene_uid", -1)
        if 0 <= uid < len(items) and getattr(items[uid], "tag", "") == "group":
            groups[collection.as_pointer()] = (collection, items[uid])
    if not groups:
        return
    members: dict[int, list] = {}
    for collection, group in groups.values():
        for ob in collection.objects:
            members.setdefault(ob.as_pointer(), []).append(group)
    for record, ob in ours:
        if record.schema is None or not record.schema.field("parentGroupId"):
            continue
        parent = scene.parent_of(record)
        if parent is not None and parent.tag != "group":
            continue  # under a node, not a folder
        inside = members.get(ob.as_pointer(), [])
        if parent is None:
            if not inside or any(c.as_pointer() not in groups for c in ob.users_collection):
                continue  # still in the collection import put it in (no group's)
        elif any(g is parent for g in inside):
            continue
        record.set("parentGroupId", inside[0].id if inside else "")


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


def export_scene(bl_scene, path: str, warn=lambda message: None, current_frame: bool = False) -> None:
    """Write ``bl_scene`` as an ``.rscene`` file (atomically)."""
    rscene.write(scene_from_blender(bl_scene, path, warn, current_frame), path)


__all__ = ["export_scene", "scene_from_blender", "math"]
