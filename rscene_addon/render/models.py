"""BOP object models from the evaluated scene (bpy): each instance's mesh in its model frame.

The model frame is the one ``products.bop.pose_from_box_corners`` recovers from an instance's oriented
3D box (``cameras.boxes_3d``): the object's own axes, the origin at the centre of its bounding box, its
scale applied. For one object with world matrix ``M = [R S | t]`` and local bounding-box centre ``c``,
a local vertex ``v`` is at ``S (v - c)`` in that frame. Instances made of several objects have no such
pose (left out of BOP, as their ground truth is), nor do static background entities unless asked.
"""
from __future__ import annotations

import numpy as np

from .geometry_pass import mesh_arrays
from .ids import GEOMETRY_TYPES

__all__ = ["instance_models"]


def instance_models(depsgraph, entities, annotate_static: bool = False) -> dict[int, tuple]:
    """``{instance id: (vertices (V, 3) float64 m in the model frame, triangles (T, 3) int64,
    primitive)}`` for every instance made of exactly one object."""
    by_key = {e.key: e for e in entities.table.entities}

    def parts():  # (instance, evaluated object, entity key) of every part of an entity
        for inst in depsgraph.object_instances:
            ob = inst.object
            if ob.type not in GEOMETRY_TYPES:
                continue
            owner = inst.parent.original if inst.is_instance and inst.parent is not None else ob.original
            key = entities.key_for(owner) if not owner.hide_render else None
            if key is not None:
                yield inst, ob, key

    count: dict[str, int] = {}
    for _, _, key in parts():
        count[key] = count.get(key, 0) + 1
    models = {}
    # a second pass: an instance of the depsgraph's iterator is only valid while it is the current one
    for inst, ob, key in parts():
        iid, entity = int(entities.table.instance_id[key]), by_key[key]
        if count[key] != 1 or iid < 1 or (entity.static and not annotate_static):
            continue
        matrix = np.array(inst.matrix_world, dtype=np.float64)
        vertices, triangles = mesh_arrays(ob)[:2]
        scale = np.linalg.norm(matrix[:3, :3], axis=0)
        box = np.array([tuple(c) for c in ob.bound_box], dtype=np.float64)
        centre = (box.min(axis=0) + box.max(axis=0)) / 2.0
        models[iid] = ((vertices - centre) * scale, triangles, entity.primitive)
    return models
