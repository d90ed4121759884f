"""``instanced_visual`` records -> one object whose points carry the instances (Geometry Nodes).

The record's ``instances`` (10 numbers each: position, w,x,y,z, scale) become mesh points with
``rotation`` (Euler XYZ) and ``scale`` attributes; a node group puts the batch's primitive or mesh on
every point. Thousands of instances cost one object, not thousands.
"""
from __future__ import annotations

import os

import bpy
import numpy as np

from ..scene_geometry.mesh_files import read_rasset
from .materials import assign_object_material
from .meshes import mesh_from_arrays


def quaternions_to_euler_xyz(q: np.ndarray) -> np.ndarray:
    """(N,4) w,x,y,z -> (N,3) Euler XYZ angles (Blender's default order), vectorised."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    rx = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    ry = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    rz = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([rx, ry, rz], axis=1)


def _instance_node_group(name: str, source_object=None, source_collection=None):
    group = bpy.data.node_groups.new(name, "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes, links = group.nodes, group.links
    group_in = nodes.new("NodeGroupInput")
    group_out = nodes.new("NodeGroupOutput")
    on_points = nodes.new("GeometryNodeInstanceOnPoints")
    rotation = nodes.new("GeometryNodeInputNamedAttribute")
    rotation.data_type = "FLOAT_VECTOR"
    rotation.inputs["Name"].default_value = "rotation"
    scale = nodes.new("GeometryNodeInputNamedAttribute")
    scale.data_type = "FLOAT_VECTOR"
    scale.inputs["Name"].default_value = "scale"
    if source_collection is not None:
        info = nodes.new("GeometryNodeCollectionInfo")
        info.inputs["Collection"].default_value = source_collection
        instance = info.outputs["Instances"] if "Instances" in info.outputs else info.outputs[0]
    else:
        info = nodes.new("GeometryNodeObjectInfo")
        info.inputs["Object"].default_value = source_object
        instance = info.outputs["Geometry"]
    links.new(group_in.outputs[0], on_points.inputs["Points"])
    links.new(instance, on_points.inputs["Instance"])
    links.new(rotation.outputs["Attribute"], on_points.inputs["Rotation"])
    links.new(scale.outputs["Attribute"], on_points.inputs["Scale"])
    links.new(on_points.outputs["Instances"], group_out.inputs[0])
    return group


def build_instances(builder, record):
    transforms = np.asarray(record.get("instances"), dtype=np.float64).reshape(-1, 10)
    size = np.asarray(record.get("size"), dtype=np.float64)
    points = mesh_from_arrays(f"{record.path} points", transforms[:, :3], [])
    if len(transforms):
        rot = points.attributes.new("rotation", "FLOAT_VECTOR", "POINT")
        rot.data.foreach_set("vector", quaternions_to_euler_xyz(transforms[:, 3:7]).astype(np.float32).ravel())
        scl = points.attributes.new("scale", "FLOAT_VECTOR", "POINT")
        scl.data.foreach_set("vector", (transforms[:, 7:10] * size).astype(np.float32).ravel())
        weights = np.zeros(len(transforms), dtype=np.float32)
        given = np.asarray(record.get("colorWeights"), dtype=np.float32).ravel()[:len(transforms)]
        weights[:len(given)] = given
        points.attributes.new("color_weight", "FLOAT", "POINT").data.foreach_set("value", weights)
    ob = builder.new_object(record, points)
    primitive = record.get("primitive")
    collection = None
    source = None
    if primitive == "mesh":
        ref = record.get("meshPath")
        path = builder.scene.resolve(ref) if ref else ""
        if path.lower().endswith(".rasset"):
            try:
                path = read_rasset(path).visual if os.path.exists(path) else path
            except (OSError, ValueError) as exc:
                builder.warn(f"{record.path}: cannot read {ref}: {exc}")
                path = ""
        collection = builder.assets.load(path) if path else None
        if collection is None:
            builder.warn(f"{record.path}: instanced mesh {ref!r} not found: drawing boxes")
    if collection is None:
        kind = primitive if primitive in ("box", "sphere", "cylinder", "capsule") else "box"
        dims = {"box": (), "sphere": (0.5,), "cylinder": (0.5, 1.0), "capsule": (0.5, 1.0)}[kind]
        data = builder.meshes.get(kind, *dims)
        source = bpy.data.objects.new(f"{record.path} instance", data)
        color = tuple(record.get("colorA"))
        mat = bpy.data.materials.new(f"{record.path} color")
        mat.diffuse_color = color[:3] + (1.0,)
        assign_object_material(source, mat)
    group = _instance_node_group(f"{record.path} instances", source, collection)
    modifier = ob.modifiers.new("Instances", "NODES")
    modifier.node_group = group
    return ob
