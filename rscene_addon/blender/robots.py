"""``articulated`` records as Blender objects: one empty per link, posed by forward kinematics.

``build_robot(builder, record)`` loads the robot the record names (``formats.robot_files``), makes a root empty
at the record's position/quaternion (it carries ``ob.rscene``) and, under it, one empty per link parented
in the link hierarchy. A link's visual geometry hangs under its empty (primitives from the builder's
PrimitiveCache, mesh files as collection instances through ``builder.assets.load``, colors as materials);
collision geometry is added as hidden wireframe children. Every object but the root goes to
``builder.assets.pending_children``, which the builder links beside the root.

The root stands where ``robots.scene_io.record_configuration`` puts the robot (the one rule the simulator
and the renderer use too): a floating base's root object *is* the base link's world pose (the generalized
coordinate's first seven values), a fixed base's root is the record's pose. Each link empty's local matrix is
``joint.origin @ motion(q) @ child_offset`` (the root link's: identity), so its world matrix is exactly
``robots.kinematics.forward_kinematics`` placed at the root.
The root keeps the generalized coordinate in ``root["rscene_joint_values"]``; the empty of a link below a
movable joint keeps ``rscene_joint``, ``rscene_joint_type`` and ``rscene_joint_value``.
``apply_joint_values`` re-poses, ``joint_values`` reads back, ``update_articulated`` writes the record.

A robot whose joints are revolute, continuous, prismatic or spherical also gets an armature
(``robot_rig``): one bone per movable joint, the link empties below movable joints parented to their bones.
Then the bones are the joints: ``apply_joint_values`` poses the bones and ``joint_values`` reads them (a
pose made in Pose Mode is what export writes).
"""
from __future__ import annotations

import os

import bpy
import numpy as np
from mathutils import Matrix

from ..model import FormatError
from ..formats.robot_files import read_robot_file
from ..scene_geometry.robot_files import robot_source
from ..robots.kinematics import joint_motion
from ..robots.robot import Robot
from ..robots.scene_io import record_configuration
from ..base.spatial import homogeneous, matrix_to_quat, quat_to_matrix
from . import conventions as cv
from . import robot_rig
from .materials import assign_object_material, new_material

__all__ = ["apply_joint_values", "build_robot", "configuration", "is_robot_root", "joint_values", "link_objects",
           "rig_of", "robot_of", "robot_root_of", "stored_values", "update_articulated"]

VALUES_KEY = "rscene_joint_values"
LINK_KEY = "rscene_link"
BASE_KEY = "rscene_base_at_import"   # the root's pose (x y z w x y z) as imported: export sees a move by it
_ROBOTS: dict[tuple, tuple[float, Robot]] = {}


# -- the robot behind a root --------------------------------------------------------------------------


def _load(path: str, res_dir: str, order, modules=()) -> Robot:
    key = (path, res_dir, tuple(order or ()), tuple(modules or ()))
    try:
        stamp = os.path.getmtime(path)
    except OSError:
        stamp = -1.0
    hit = _ROBOTS.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    robot = read_robot_file(path, res_dir, list(order) if order else None, tuple(modules or ()))
    _ROBOTS[key] = (stamp, robot)
    return robot


def _record_robot(scene, record) -> tuple[Robot, str, str, list]:
    """The Robot of a record, with the file, resource directory and joint order it was read with."""
    source = robot_source(scene, record)
    path, res_dir, order = source.path, source.resource_directory, list(source.joint_order)
    return _load(path, res_dir, order, source.modules), path, res_dir, order


def is_robot_root(ob) -> bool:
    return ob is not None and VALUES_KEY in ob.keys() and "rscene_robot_file" in ob.keys()


def robot_root_of(ob):
    """The robot root of ``ob`` (itself, or the root above a link / geometry object), else None."""
    while ob is not None:
        if is_robot_root(ob):
            return ob
        ob = ob.parent
    return None


def robot_of(root) -> Robot:
    order = [str(n) for n in root.get("rscene_joint_order", ())]
    return _load(root["rscene_robot_file"], root.get("rscene_robot_resource_dir", ""), order,
                 [str(m) for m in root.get("rscene_robot_modules", ())])


def link_objects(root) -> dict[str, bpy.types.Object]:
    return {ob[LINK_KEY]: ob for ob in root.children_recursive if LINK_KEY in ob.keys()}


rig_of = robot_rig.rig_of


# -- posing -------------------------------------------------------------------------------------------


def _local_transforms(robot: Robot, q: np.ndarray) -> dict[str, np.ndarray]:
    """Each link's transform in its parent link's frame (the root link: in the robot's base frame)."""
    slices = robot.gc_slices()
    out = {robot.root: np.eye(4)}   # a floating base's pose is the root object's own
    for link in robot.link_order()[1:]:
        joint = robot.parent_joint(link)
        local = joint.origin
        if joint.type != "fixed":
            local = local @ joint_motion(joint, q[None, slices[joint.name]])[0]
        out[link] = local @ joint.child_offset
    return out


def _check(robot: Robot, values) -> np.ndarray:
    q = np.asarray(values if values is not None else (), dtype=float).ravel()
    if q.size == 0:
        return robot.default_configuration()
    if q.size != robot.gc_dim:
        raise ValueError(f"{robot.name or 'the robot'} needs {robot.gc_dim} generalized coordinates, got {q.size}")
    return q


def _pose_links(robot: Robot, links: dict, q: np.ndarray) -> None:
    slices = robot.gc_slices()
    for name, local in _local_transforms(robot, q).items():
        ob = links.get(name)
        if ob is None:
            continue
        if ob.parent_type != "BONE":   # a bone-parented link follows its bone
            ob.matrix_basis = Matrix(local.tolist())
        joint = robot.parent_joint(name)
        if joint is not None and joint.type != "fixed":
            value = q[slices[joint.name]]
            ob["rscene_joint_value"] = float(value[0]) if value.size == 1 else [float(v) for v in value]


def apply_joint_values(root, values) -> None:
    """Re-pose the link objects of ``root`` at the generalized coordinate ``values`` (RaiSim order)."""
    robot = robot_of(root)
    q = _check(robot, values)
    if robot.floating_base:
        root.matrix_world = Matrix(homogeneous(quat_to_matrix(q[3:7]), q[0:3]).tolist())
    _pose_links(robot, link_objects(root), q)
    arm = robot_rig.rig_of(root)
    if arm is not None:
        robot_rig.pose_rig(arm, robot, q)
    root[VALUES_KEY] = [float(v) for v in q]


def stored_values(root) -> list[float]:
    """The generalized coordinate last applied (``root["rscene_joint_values"]``), whatever the rig shows."""
    return [float(v) for v in root.get(VALUES_KEY, ())]


def joint_values(root) -> list[float]:
    """The generalized coordinate shown by ``root`` (floating base first: the root object's world pose, then
    joints in jointOrder: the rig's bones where the robot has a rig)."""
    values = stored_values(root)
    arm = robot_rig.rig_of(root)
    if arm is not None and values:
        try:
            values = [float(v) for v in robot_rig.rig_values(arm, robot_of(root), np.asarray(values))]
        except (FormatError, OSError, ValueError):
            pass   # the robot file is gone: the stored values
    if root.get("rscene_floating_base") and len(values) >= 7:
        values[0:7] = _world_pose(root)
    return values


def configuration(root) -> tuple[np.ndarray, np.ndarray]:
    """``(base (4, 4), q)`` of what ``root`` shows, for kinematics: a floating base's pose is in ``q`` (the
    root's own world pose), a fixed base hangs in the root's world matrix."""
    q = np.asarray(joint_values(root), dtype=float)
    if root.get("rscene_floating_base"):
        return np.eye(4), q
    return np.array(root.matrix_world), q


def _world_pose(ob) -> list[float]:
    loc, rot, _scale = ob.matrix_world.decompose()
    return [*map(float, loc), *map(float, rot)]


# -- import -------------------------------------------------------------------------------------------


def _material(builder, robot: Robot, shape):
    mat = shape.material
    if mat is None or mat.rgba is None:
        return builder.material("engine_default")
    cache = builder.__dict__.setdefault("_robot_materials", {})
    key = (robot.name, mat.name, tuple(round(float(c), 6) for c in mat.rgba))
    found = cache.get(key)
    if found is None:
        name = f"{robot.name} {mat.name}".strip() or "robot material"
        found = cache[key] = new_material(name, tuple(float(c) for c in mat.rgba))
    return found


def _shape_object(builder, robot: Robot, shape, name: str, parent, collision: bool):
    geo = shape.geometry
    scale = (1.0, 1.0, 1.0)
    data = None
    collection = None
    kind = geo.kind
    if kind == "box":
        data, scale = builder.meshes.get("box"), tuple(float(s) for s in geo.size)
    elif kind == "sphere":
        data = builder.meshes.get("sphere", geo.radius)
    elif kind in ("cylinder", "capsule"):
        data = builder.meshes.get(kind, geo.radius, geo.length)
    elif kind == "ellipsoid":
        data, scale = builder.meshes.get("sphere", 1.0), tuple(float(s) for s in geo.size)
    elif kind == "plane":
        sx, sy = (float(s) * 2.0 for s in geo.size[:2])
        data, scale = builder.meshes.get("ground"), (sx or 1.0, sy or 1.0, 1.0)
    elif kind == "mesh":
        scale = tuple(float(s) for s in geo.scale)
        if geo.path and os.path.exists(geo.path):
            collection = builder.assets.load(geo.path)
        if collection is None:
            builder.warn(f"{robot.name}: mesh {geo.filename or geo.path!r} of {name!r} could not be loaded")
    ob = bpy.data.objects.new(name, data)
    ob.parent = parent
    ob.matrix_basis = Matrix(shape.origin.tolist())
    ob.scale = scale
    if collection is not None:
        ob.instance_type = "COLLECTION"
        ob.instance_collection = collection
    elif data is None:
        ob.empty_display_type = "CUBE"
        ob.empty_display_size = 0.05
        ob["rscene_missing_file"] = geo.filename or geo.path or kind
    if collision:
        ob.display_type = "WIRE"
        ob.hide_render = True
        ob.hide_viewport = True
        ob.hide_select = True
        ob["rscene_collision"] = kind
    elif data is not None:
        assign_object_material(ob, _material(builder, robot, shape))
    builder.assets.pending_children.append(ob)
    return ob


def build_robot(builder, record):
    """The root object of an ``articulated`` record (links and geometry in ``builder.assets.pending_children``);
    a record whose robot file cannot be read becomes ``builder.build_support(record)`` with a warning."""
    label = record.path or record.id or "articulated"
    try:
        robot, path, res_dir, order = _record_robot(builder.scene, record)
    except (FormatError, OSError, ValueError) as exc:
        builder.warn(f"{label}: robot not loaded ({exc}); shown as an empty")
        return builder.build_support(record)
    try:
        base, q = record_configuration(robot, record)
    except ValueError as exc:
        builder.warn(f"{label}: {exc}; using the default configuration")
        base, q = record_configuration(robot, record, strict=False)
    if robot.floating_base:
        base = homogeneous(quat_to_matrix(q[3:7]), q[0:3])

    root = builder.new_object(record, None)
    root.empty_display_type = "ARROWS"
    root.empty_display_size = 0.25
    root.rotation_mode = "QUATERNION"
    root.location = tuple(float(v) for v in base[:3, 3])
    root.rotation_quaternion = cv.normalized_quat(tuple(matrix_to_quat(base[:3, :3])))
    root[BASE_KEY] = [*map(float, base[:3, 3]), *map(float, matrix_to_quat(base[:3, :3]))]
    root["rscene_floating_base"] = bool(robot.floating_base)
    if record.schema.field("visible") and not record.get("visible"):
        root.hide_viewport = True
    root["rscene_robot_file"] = path
    root["rscene_robot_resource_dir"] = res_dir
    root["rscene_robot_modules"] = [str(m) for m in robot_source(builder.scene, record).modules]
    root["rscene_joint_order"] = list(robot.joint_order)
    root["rscene_robot_name"] = robot.name
    root[VALUES_KEY] = [float(v) for v in q]

    visible = bool(record.get("visible")) if record.schema.field("visible") else True
    base = os.path.basename(label.rstrip("/")) or robot.name
    links: dict[str, bpy.types.Object] = {}
    for name in robot.link_order():
        joint = robot.parent_joint(name)
        link_ob = bpy.data.objects.new(f"{base}:{name}", None)
        link_ob.empty_display_type = "PLAIN_AXES"
        link_ob.empty_display_size = 0.05
        link_ob.rotation_mode = "QUATERNION"
        link_ob.parent = root if joint is None else links[joint.parent]
        link_ob[LINK_KEY] = name
        if joint is not None:
            link_ob["rscene_joint"] = joint.name
            link_ob["rscene_joint_type"] = joint.type
        if not visible:
            link_ob.hide_viewport = True
        links[name] = link_ob
        builder.assets.pending_children.append(link_ob)
        link = robot.links[name]
        for i, shape in enumerate(link.visuals):
            ob = _shape_object(builder, robot, shape, f"{base}:{name} visual {i}", link_ob, False)
            if not visible:
                ob.hide_viewport = ob.hide_render = True
        for i, shape in enumerate(link.collisions):
            _shape_object(builder, robot, shape, f"{base}:{name} collision {i}", link_ob, True)
    for i, shape in enumerate(robot.world_shapes):  # MJCF worldbody geoms: fixed in the robot's base frame
        ob = _shape_object(builder, robot, shape, f"{base}:world {i}", root, False)
        if not visible:
            ob.hide_viewport = ob.hide_render = True
    _pose_links(robot, links, q)
    if robot_rig.riggable(robot):
        arm = robot_rig.build_rig(robot, root, base, links, q, visible)
        builder.assets.pending_children.append(arm)
    return root



# -- export -------------------------------------------------------------------------------------------


def _rotation(ob):
    if ob.rotation_mode == "QUATERNION":
        return ob.rotation_quaternion.normalized()
    return ob.matrix_basis.to_quaternion()


def update_articulated(record, root) -> bool:
    """Write ``root``'s pose and joint values into the record, each only when it changed (joint values
    beyond 1e-9, the pose beyond float32 noise, measured from where the import put the root). A moved
    floating base moves both of the record's copies of its pose (position/quaternion and the generalized
    coordinate's first seven values). Returns True when the record changed."""
    changed = False
    position, q = tuple(root.location), _rotation(root)
    imported = [float(v) for v in root.get(BASE_KEY, ())]
    if len(imported) != 7:   # a file made before the key existed: the record's pose is the reference
        imported = [*map(float, record.get("position")), *map(float, record.get("quaternion"))]
    moved = not cv.close(tuple(imported[:3]), position, 1e-6) or not cv.same_rotation(tuple(imported[3:]), q)
    if moved:
        if not cv.close(tuple(record.get("position")), position, 1e-6):
            record.set("position", position)
            changed = True
        if not cv.same_rotation(record.get("quaternion"), q):
            record.set("quaternion", tuple(q))
            changed = True
    if VALUES_KEY not in root.keys():
        return changed
    values = np.asarray(joint_values(root), dtype=float)
    if root.get("rscene_floating_base") and values.size >= 7 and not moved:
        values[0:7] = [float(v) for v in root[VALUES_KEY][0:7]]   # unmoved: the file's own numbers
    old = np.asarray(record.get("generalizedCoordinate", None) if record.has("generalizedCoordinate") else (),
                     dtype=float).ravel()
    if old.size == 0:
        shown = np.asarray([float(v) for v in root[VALUES_KEY]], dtype=float)
        if shown.shape == values.shape and not np.any(np.abs(shown - values) > 1e-9):
            return changed  # a record without a coordinate, not posed since import: it stays without one
        try:
            old = robot_of(root).default_configuration()
        except (FormatError, OSError, ValueError):
            old = np.zeros(0)
    if old.shape != values.shape or np.any(np.abs(old - values) > 1e-9):
        record.set("generalizedCoordinate", [float(v) for v in values])
        changed = True
    return changed
