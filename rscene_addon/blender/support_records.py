"""Blender counterparts for the "support" records (wires, sensors, fog, probes, point sets, soft bodies,
decals, compounds), made with ``bpy.data`` only.

``build_support_record(builder, record)`` returns one new, unlinked object made with
``builder.new_object`` (so it carries ``ob.rscene``); the builder links it. Extra objects (compound
shapes) go to ``builder.assets.pending_children``, which the builder links beside it. Every datablock
made here is new, so the import transaction can roll it back. Kinds without a counterpart here fall back
to ``builder.build_support`` (a plain empty), or to the ``fallback`` given.

Choices where the format is silent:

* wire: the attachment point is ``body.position + R(body.quaternion) @ localPositionA/B`` (world space);
  a body that cannot be found leaves its local position as a world point (with a warning).
* sensor: world pose = parent pose (position, quaternion; scale ignored) @ mount pose; no parent found:
  the mount pose is the world pose. Cameras use ``conventions.camera_rotation_to_blender``; lidar, imu
  and other non-camera sensors are empties with the RaiSim frame itself (arrow = local +z).
* point_cloud: ``pointSize`` is in screen pixels in rayrai; here a point is a sphere of radius
  ``pointSize * POINT_SIZE_TO_RADIUS`` metres. All points are kept (stride/max only bound rayrai's view).
* granular: explicit ``positions`` (or the box fill: a grid from ``boxMin`` to ``boxMax`` by ``spacing``,
  at most ``maxParticles``) in the record's frame; radii from ``radii`` when it matches, else ``radius``.
* deformable: an ``.obj`` ``meshPath`` is read directly (vertex order kept, so ``pinnedVertices`` stay
  valid); otherwise a 1 m x 1 m grid in the local xy plane with ``particleSpacing`` between vertices.
"""
from __future__ import annotations

import os

import bpy
import numpy as np
from mathutils import Matrix, Vector

from ..scene_geometry.cloth_mesh import cloth_mesh
from ..scene_geometry.particles import granular_particles
from . import compat
from . import conventions as cv
from . import meshes
from .materials import assign_object_material

__all__ = ["SUPPORTED", "build_support_record", "probe_type", "POINT_COLOR", "POINT_SIZE_TO_RADIUS"]

POINT_SIZE_TO_RADIUS = 0.002  # metres of sphere radius per rayrai point-size pixel (2.5 px -> 5 mm)
CAMERA_KINDS = {"rgb", "depth", "rgb_depth", "segmentation", "rgbd", "normal", "normals", "camera",
                "instance", "semantic", "stereo", "thermal", "event"}
# Cycles does not find a point attribute named "color" (measured, 4.5 and 5.0): use another name
POINT_COLOR = "point_color"


def _name(record) -> str:
    path = record.path or record.tag
    return os.path.basename(path.rstrip("/")) or path


def _field(record, name, default=None):
    return record.get(name) if record.schema is not None and record.schema.field(name) else default


def _pose_matrix(record, with_scale: bool = False) -> Matrix:
    """4x4 world pose of a node record (position or center, quaternion, optionally scale)."""
    position = _field(record, "position")
    if position is None:
        position = _field(record, "center", (0.0, 0.0, 0.0))
    try:
        location = Vector(tuple(float(v) for v in position))
    except (TypeError, ValueError):
        location = Vector()
    q = _field(record, "quaternion")
    rotation = cv.normalized_quat(q) if q is not None else cv.quat((1, 0, 0, 0))
    matrix = Matrix.Translation(location) @ rotation.to_matrix().to_4x4()
    if with_scale and _field(record, "scale") is not None:
        sx, sy, sz = _field(record, "scale")
        matrix = matrix @ Matrix.Diagonal((sx, sy, sz, 1.0))
    return matrix


def _place(ob, record) -> None:
    ob.location = _pose_matrix(record).translation
    ob.rotation_mode = "QUATERNION"
    q = _field(record, "quaternion")
    ob.rotation_quaternion = cv.normalized_quat(q) if q is not None else cv.quat((1, 0, 0, 0))


def _hide_if_disabled(ob, record, field: str = "enabled") -> None:
    value = _field(record, field)
    if value is not None and not value:
        ob.hide_render = ob.hide_viewport = True


# -- wire ------------------------------------------------------------------------------------------------


def attachment_point(builder, record, side: str) -> Vector:
    """World position of a wire's end ``side`` ('A' or 'B')."""
    local = Vector(tuple(record.get(f"localPosition{side}")))
    ref = record.get(f"body{side}")
    body = builder.scene.find(ref)
    if body is None:
        builder.warn(f"{record.path}: wire body {ref!r} not found: "
                     f"localPosition{side} taken as a world point")
        return local
    return _pose_matrix(body) @ local


def build_wire(builder, record):
    a, b = attachment_point(builder, record, "A"), attachment_point(builder, record, "B")
    curve = bpy.data.curves.new(_name(record), "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = max(float(record.get("visualizationWidth")), 0.0) / 2.0
    curve.bevel_resolution = 4
    curve.use_fill_caps = True
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points.foreach_set("co", [a.x, a.y, a.z, 1.0, b.x, b.y, b.z, 1.0])
    curve.materials.append(builder.material(""))
    ob = builder.new_object(record, curve)
    ob["rscene_body_a"] = record.get("bodyA") or ""
    ob["rscene_body_b"] = record.get("bodyB") or ""
    return ob


# -- sensor ----------------------------------------------------------------------------------------------


def sensor_world_matrix(builder, record) -> tuple[Matrix, object]:
    """(world pose of the sensor frame, parent record or None)."""
    parent = builder.scene.find(record.get("parent"))
    mount = _pose_matrix(record)
    if parent is None:
        if record.get("parent"):
            builder.warn(f"{record.path}: sensor parent {record.get('parent')!r} not found: "
                         "mount pose taken as world")
        return mount, None
    return _pose_matrix(parent) @ mount, parent


def _is_camera_kind(kind: str) -> bool:
    kind = str(kind or "").lower()
    return kind in CAMERA_KINDS or any(word in kind for word in ("rgb", "depth", "segment", "camera"))


def build_sensor(builder, record):
    kind = str(record.get("kind") or "").lower()
    world, parent = sensor_world_matrix(builder, record)
    location, rotation = world.translation.copy(), world.to_quaternion()
    if _is_camera_kind(kind):
        cam = bpy.data.cameras.new(_name(record))
        cv.set_camera_fov(cam, record.get("verticalFov"), record.get("horizontalFov"))
        near, far = float(record.get("nearPlane")), float(record.get("farPlane"))
        cam.clip_start = max(near, 1e-6)
        cam.clip_end = max(far, cam.clip_start * 1.001)
        ob = builder.new_object(record, cam)
        ob.location = location
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = cv.camera_rotation_to_blender(tuple(rotation))
        ob["rscene_resolution"] = (int(record.get("width")), int(record.get("height")))
    else:
        ob = builder.new_object(record, None)
        ob.empty_display_type = "SINGLE_ARROW" if kind == "lidar" else "PLAIN_AXES"
        ob.empty_display_size = 0.15
        ob.location = location
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = rotation
    ob["rscene_sensor_kind"] = kind
    ob["rscene_parent"] = parent.path if parent is not None and parent.path else (record.get("parent") or "")
    ob["rscene_parent_link"] = record.get("parentLink") or ""
    _hide_if_disabled(ob, record)
    return ob


# -- local fog -------------------------------------------------------------------------------------------


def volume_material(name: str, color, density: float):
    material = bpy.data.materials.new(name)
    compat.enable_material_nodes(material)
    tree = material.node_tree
    tree.nodes.clear()
    output = tree.nodes.new("ShaderNodeOutputMaterial")
    volume = tree.nodes.new("ShaderNodeVolumePrincipled")
    volume.inputs["Color"].default_value = tuple(color[:3]) + (1.0,)
    volume.inputs["Density"].default_value = max(float(density), 0.0)
    tree.links.new(volume.outputs[0], output.inputs["Volume"])
    material.diffuse_color = tuple(color[:3]) + (0.25,)
    return material


def build_local_fog(builder, record):
    radius = max(float(record.get("radius")), 1e-6)
    verts, faces = meshes.sphere_geometry(radius)
    mesh = meshes.mesh_from_arrays(_name(record), verts, faces, smooth=True)
    color = tuple(record.get("color"))
    mesh.materials.append(volume_material(f"{_name(record)} fog", color, record.get("density")))
    ob = builder.new_object(record, mesh)
    ob.location = tuple(record.get("center"))
    ob.display_type = "WIRE"
    ob["rscene_edge_fade"] = float(record.get("edgeFade"))
    _hide_if_disabled(ob, record)
    return ob


# -- light probes ----------------------------------------------------------------------------------------


def probe_type(kind: str) -> str:
    """Blender light-probe type for 'sphere' (reflection) or 'volume' (irradiance), by enum items."""
    items = {i.identifier for i in bpy.types.LightProbe.bl_rna.properties["type"].enum_items}
    names = ("SPHERE", "CUBEMAP") if kind == "sphere" else ("VOLUME", "GRID")
    for name in names:
        if name in items:
            return name
    raise RuntimeError(f"no light probe type for {kind!r} among {sorted(items)}")


def _try_set(datablock, name: str, value) -> None:
    if hasattr(datablock, name):
        try:
            setattr(datablock, name, value)
        except (TypeError, ValueError, AttributeError):
            pass


def build_reflection_probe(builder, record):
    probe = bpy.data.lightprobes.new(_name(record), probe_type("sphere"))
    radius = max(float(record.get("radius")), 1e-4)
    _try_set(probe, "influence_type", "ELIPSOID")
    probe.influence_distance = radius
    _try_set(probe, "intensity", float(record.get("strength")))
    ob = builder.new_object(record, probe)
    position = Vector(tuple(record.get("position")))
    ob.location = position
    if record.get("boxProjection"):
        lo, hi = Vector(tuple(record.get("boxMin"))), Vector(tuple(record.get("boxMax")))
        half = (hi - lo) / 2.0
        _try_set(probe, "use_custom_parallax", True)
        _try_set(probe, "parallax_type", "BOX")
        _try_set(probe, "parallax_distance", max(max(abs(c) for c in half), 1e-4))
        ob["rscene_box_min"], ob["rscene_box_max"] = tuple(lo), tuple(hi)
    _hide_if_disabled(ob, record)
    return ob


def build_irradiance_volume(builder, record):
    probe = bpy.data.lightprobes.new(_name(record), probe_type("volume"))
    _try_set(probe, "intensity", float(record.get("strength")))
    ob = builder.new_object(record, probe)
    _place(ob, record)
    half = np.asarray(record.get("halfExtents"), dtype=float)
    ob.scale = tuple(half * np.asarray(record.get("scale"), dtype=float))  # a volume probe spans -1..1
    ob["rscene_color"] = tuple(record.get("color"))
    _hide_if_disabled(ob, record)
    return ob


# -- point sets (point_cloud, granular) -----------------------------------------------------------------


def _points_material(name: str):
    material = bpy.data.materials.new(name)
    compat.enable_material_nodes(material)
    tree = material.node_tree
    bsdf = next(n for n in tree.nodes if n.type == "BSDF_PRINCIPLED")
    attribute = tree.nodes.new("ShaderNodeAttribute")
    attribute.attribute_type = "GEOMETRY"
    attribute.attribute_name = POINT_COLOR
    tree.links.new(attribute.outputs["Color"], bsdf.inputs["Base Color"])
    return material


def _points_node_group(name: str, material):
    """Mesh vertices -> point cloud (spheres in Cycles/EEVEE) with the ``radius`` attribute."""
    group = bpy.data.node_groups.new(name, "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = group.nodes, group.links
    group_in, group_out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    to_points = nodes.new("GeometryNodeMeshToPoints")
    radius = nodes.new("GeometryNodeInputNamedAttribute")
    radius.data_type = "FLOAT"
    radius.inputs["Name"].default_value = "radius"
    set_material = nodes.new("GeometryNodeSetMaterial")
    set_material.inputs["Material"].default_value = material
    links.new(group_in.outputs[0], to_points.inputs["Mesh"])
    links.new(radius.outputs["Attribute"], to_points.inputs["Radius"])
    links.new(to_points.outputs["Points"], set_material.inputs["Geometry"])
    links.new(set_material.outputs["Geometry"], group_out.inputs[0])
    return group


def _point_object(builder, record, points, radii, colors):
    """A vertex-only mesh with ``radius`` and ``color`` point attributes, shown as spheres."""
    points = np.asarray(points, dtype=np.float32).reshape(-1, 3)
    name = _name(record)
    mesh = meshes.mesh_from_arrays(f"{name} points", points, [])
    n = len(points)
    if n:
        mesh.attributes.new("radius", "FLOAT", "POINT").data.foreach_set(
            "value", np.broadcast_to(np.asarray(radii, dtype=np.float32), (n,)).copy())
        rgba = np.ones((n, 4), dtype=np.float32)
        if colors is not None and len(colors):
            given = np.asarray(colors, dtype=np.float32)
            given = given.reshape(len(given), -1)[:n]
            rgba[:len(given), :min(given.shape[1], 4)] = given[:, :4]
            if len(given) < n:
                rgba[len(given):] = given[-1] if len(given) else 1.0
        color = mesh.color_attributes.new(POINT_COLOR, "FLOAT_COLOR", "POINT")
        color.data.foreach_set("color", rgba.ravel())
    material = _points_material(f"{name} points")
    mesh.materials.append(material)
    ob = builder.new_object(record, mesh)
    modifier = ob.modifiers.new("Points", "NODES")
    modifier.node_group = _points_node_group(f"{name} points", material)
    return ob


def build_point_cloud(builder, record):
    points = np.asarray(record.get("points"), dtype=np.float64).reshape(-1, 3)
    radius = max(float(record.get("pointSize")), 0.0) * POINT_SIZE_TO_RADIUS
    ob = _point_object(builder, record, points, radius, record.get("colors"))
    ob["rscene_point_size"] = float(record.get("pointSize"))
    _hide_if_disabled(ob, record)
    return ob


def build_granular(builder, record):
    """The particles the simulator simulates (:mod:`rscene_addon.scene_geometry.particles`), in the record's frame."""
    layout = granular_particles(record)
    for warning in layout.warnings:
        builder.warn(warning)
    ob = _point_object(builder, record, layout.positions, layout.radii, None)
    _place(ob, record)
    ob.scale = tuple(record.get("scale"))
    _hide_if_disabled(ob, record, "visible")
    return ob


# -- deformable ------------------------------------------------------------------------------------------


def build_deformable(builder, record):
    """The cloth the simulator simulates (:mod:`rscene_addon.scene_geometry.cloth_mesh`): same vertices in the
    same order, so the "pinned" vertex group holds the vertices the simulator pins."""
    cloth = cloth_mesh(record, builder.scene.resolve)
    for warning in cloth.warnings:
        builder.warn(warning)
    mesh = meshes.mesh_from_arrays(_name(record), cloth.vertices, cloth.faces)
    ob = builder.new_object(record, mesh)
    _place(ob, record)
    ob.scale = tuple(record.get("scale"))
    assign_object_material(ob, builder.material(record.get("material")))
    group = ob.vertex_groups.new(name="pinned")
    if len(cloth.pinned):
        group.add(cloth.pinned.tolist(), 1.0, "REPLACE")
    ob["rscene_deformable_kind"] = str(record.get("kind"))
    _hide_if_disabled(ob, record, "visible")
    return ob


# -- projected decal -------------------------------------------------------------------------------------


def build_projected_decal(builder, record):
    ob = builder.new_object(record, None)
    ob.empty_display_type = "CUBE"
    ob.empty_display_size = 1.0  # the cube spans -1..1: the scale is the half extents
    _place(ob, record)
    half = np.asarray(record.get("halfExtents"), dtype=float)
    ob.scale = tuple(half * np.asarray(record.get("scale"), dtype=float))
    for field in ("albedoTexture", "emissionTexture", "normalTexture", "ormTexture"):
        ref = record.get(field) or ""
        ob[f"rscene_{field}"] = ref
        if field == "albedoTexture":
            ob["rscene_texture"] = ref
            ob["rscene_texture_path"] = builder.scene.resolve(ref) if ref else ""
    ob["rscene_color"] = tuple(record.get("color"))
    _hide_if_disabled(ob, record)
    return ob


# -- compound --------------------------------------------------------------------------------------------


def compound_children(builder, record) -> list:
    return [r for r in builder.scene.of("compound_child") if builder.scene.find(r.get("compound")) is record]


def _child_object(builder, compound_ob, child, index: int):
    primitive = child.get("primitive")
    sx, sy, sz = child.get("scale")
    radius, height = float(child.get("radius")), float(child.get("height"))
    scale = (1.0, 1.0, 1.0)
    if primitive == "box":
        size = child.get("size")
        data, scale = builder.meshes.get("box"), (size[0] * sx, size[1] * sy, size[2] * sz)
    elif primitive == "ground":
        data, scale = builder.meshes.get("ground"), (sx, sy, sz)
    elif primitive == "sphere":
        data = builder.meshes.get("sphere", radius * sx)
    elif primitive in ("cylinder", "capsule"):
        data = builder.meshes.get(primitive, radius * sx, height * sz)
    else:  # a mesh part: its own triangles when it carries them (CoppeliaSim inline), else an empty
        data, scale = builder.assets.inline_data(child, builder.material(child.get("material"))), (sx, sy, sz)
    ob = bpy.data.objects.new(f"{compound_ob.name} {primitive} {index}", data)
    ob.parent = compound_ob
    ob.location = tuple(child.get("position"))
    ob.rotation_mode = "QUATERNION"
    ob.rotation_quaternion = cv.normalized_quat(child.get("quaternion"))
    ob.scale = scale
    if data is not None:
        assign_object_material(ob, builder.material(child.get("material")))
    else:
        ob.empty_display_type = "CUBE"
        ob.empty_display_size = 0.5
    ob["rscene_compound_child"] = index
    ob.hide_render = compound_ob.hide_render
    ob.hide_viewport = compound_ob.hide_viewport
    return ob


def build_compound(builder, record):
    ob = builder.new_object(record, None)
    ob.empty_display_type = "PLAIN_AXES"
    ob.empty_display_size = 0.2
    _place(ob, record)
    ob.scale = tuple(record.get("scale"))
    props = ob.rscene
    props.body_mode = record.get("bodyMode")
    props.mass = max(float(record.get("mass")), 0.0)
    props.collidable = bool(record.get("collidable"))
    if not record.get("visible"):
        ob.hide_render = ob.hide_viewport = True
    for i, child in enumerate(compound_children(builder, record)):
        builder.assets.pending_children.append(_child_object(builder, ob, child, i))
    return ob


SUPPORTED = {
    "wire": build_wire, "sensor": build_sensor, "local_fog": build_local_fog,
    "reflection_probe": build_reflection_probe, "irradiance_volume": build_irradiance_volume,
    "point_cloud": build_point_cloud, "granular": build_granular, "deformable": build_deformable,
    "projected_decal": build_projected_decal, "compound": build_compound,
}


def build_support_record(builder, record, fallback=None):
    """A new Blender object for ``record`` (not linked); other kinds go to ``fallback`` (default: the
    builder's plain-empty ``build_support``)."""
    make = SUPPORTED.get(record.tag)
    if make is None:
        return (fallback or builder.build_support)(record)
    return make(builder, record)
