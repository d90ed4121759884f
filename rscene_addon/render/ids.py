"""Entities and pass indices: which Blender objects form one segmentation/lidar id.

A node object (``ob.rscene.kind`` set) owns every child object under it and everything it instances
(a mesh asset is an empty instancing a collection; an ``instanced_visual`` is a Geometry Nodes
instancer). Other renderable objects are their own entity (key ``blender:<name>``).

Cycles writes ``pass_index`` of the *instanced* object for collection instances, and of the
instancer for Geometry Nodes geometry. So every object of an instanced collection gets its owner's
pass index, and a collection instanced by several entities is given to each extra user as a
temporary shallow copy (object copies share their mesh data), undone after the render.
"""
from __future__ import annotations

import bpy

from .scene_state import SceneState
from ..products.segmentation import MAX_PASS_INDEX, Entity, IdTable

__all__ = ["EntityIndex", "build_entities"]

GEOMETRY_TYPES = {"MESH", "CURVE", "SURFACE", "META", "FONT", "CURVES", "POINTCLOUD", "VOLUME"}
NODE_KINDS_WITH_GEOMETRY = {"object", "terrain_region", "instanced_visual", "point_cloud", "granular",
                            "deformable", "compound", "articulated"}


def _node_owner(ob):
    """The nearest node object at or above ``ob`` (by Blender parenting), or None."""
    walk = ob
    while walk is not None:
        props = getattr(walk, "rscene", None)  # absent when the add-on's classes are not registered
        if props is not None and props.kind:
            return walk
        walk = walk.parent
    return None


def _renders(ob) -> bool:
    if ob.hide_render:
        return False
    if ob.type in GEOMETRY_TYPES:
        return True
    return ob.type == "EMPTY" and ob.instance_type == "COLLECTION" and ob.instance_collection is not None


def _geometry_node_collections(ob) -> list:
    found = []
    for mod in ob.modifiers:
        if mod.type != "NODES" or mod.node_group is None:
            continue
        for node in mod.node_group.nodes:
            if node.bl_idname == "GeometryNodeCollectionInfo":
                coll = node.inputs["Collection"].default_value if "Collection" in node.inputs else None
                if coll is not None:
                    found.append(coll)
    return found


class EntityIndex:
    """Entities of a scene, their :class:`IdTable`, and the owner of any (original) object."""

    def __init__(self, bl_scene, doc=None) -> None:
        self.bl_scene = bl_scene
        self.key_of_object: dict[str, str] = {}  # object name -> entity key
        entities: dict[str, Entity] = {}
        used_paths: dict[str, int] = {}
        for ob in bl_scene.objects:
            if not _renders(ob):
                continue
            owner = _node_owner(ob)
            if owner is not None and owner.rscene.kind not in NODE_KINDS_WITH_GEOMETRY:
                continue  # e.g. geometry parented to a camera or sensor node: not an entity of its own
            if owner is None:
                owner = ob
                key = f"blender:{ob.name}"
                entity = Entity(key=key, path="", name=ob.name, kind=ob.type.lower())
            else:
                key = owner.rscene.path or f"blender:{owner.name}"
                if key in used_paths and used_paths[key] != owner.rscene.uid:
                    key = f"{key}#{owner.rscene.uid}"
                used_paths.setdefault(owner.rscene.path, owner.rscene.uid)
                primitive = _record_field(doc, owner.rscene.uid, "primitive") or ""
                entity = Entity(key=key, path=owner.rscene.path, name=owner.name, kind=owner.rscene.kind,
                                explicit_id=int(owner.rscene.instance_id),
                                semantic_class=owner.rscene.semantic_class,
                                color=_record_color(doc, owner.rscene.uid),
                                static=(owner.rscene.body_mode == "static" or primitive == "ground"
                                        or owner.rscene.kind == "terrain_region"),
                                primitive=str(primitive))
            entities.setdefault(key, entity)
            self.key_of_object[ob.name] = key
            self.key_of_object.setdefault(owner.name, key)
        self.table = IdTable(list(entities.values()))

    def key_for(self, ob) -> str | None:
        """Entity key of an original object (walking up its parents), or None."""
        walk = ob
        while walk is not None:
            key = self.key_of_object.get(walk.name)
            if key is not None:
                return key
            walk = walk.parent
        return None

    def instance_id_for(self, ob) -> int:
        key = self.key_for(ob)
        return self.table.instance_id[key] if key is not None else -1

    # -- pass indices ------------------------------------------------------------------------------

    def assign_pass_indices(self, state: SceneState, warn=None) -> None:
        """Set ``pass_index`` on every object that renders (temporarily, through ``state``)."""
        warn = warn or (lambda message: None)
        table = self.table
        if len(table) > MAX_PASS_INDEX:
            raise ValueError(f"{len(table)} objects exceed Blender's {MAX_PASS_INDEX} pass indices: "
                             "segmentation cannot tell them apart")
        claimed: dict[str, int] = {}  # collection name -> pass index it carries
        for ob in self.bl_scene.objects:
            key = self.key_of_object.get(ob.name)
            if key is None:
                if ob.pass_index and _renders(ob):
                    state.set(ob, "pass_index", 0)  # never mistaken for an entity's index
                continue
            index = table.pass_index[key]
            state.set(ob, "pass_index", index)
            if ob.type == "EMPTY" and ob.instance_type == "COLLECTION" and ob.instance_collection is not None:
                coll = ob.instance_collection
                if coll.name in claimed and claimed[coll.name] != index:
                    coll = _shallow_copy(coll, state)
                    state.set(ob, "instance_collection", coll)
                self._claim(coll, index, claimed, state, warn)
            for coll in _geometry_node_collections(ob):
                self._claim(coll, index, claimed, state, warn)

    def _claim(self, coll, index: int, claimed: dict, state: SceneState, warn) -> None:
        previous = claimed.get(coll.name)
        if previous is not None and previous != index:
            warn(f"collection {coll.name!r} is instanced by several objects through Geometry Nodes: "
                 "they share one segmentation id")
            return
        claimed[coll.name] = index
        for member in coll.all_objects:
            state.set(member, "pass_index", index)
            if member.instance_type == "COLLECTION" and member.instance_collection is not None:
                self._claim(member.instance_collection, index, claimed, state, warn)


def _shallow_copy(coll, state: SceneState):
    """A copy of ``coll`` holding copies of its objects (sharing their data), parents remapped."""
    copy = state.keep(bpy.data.collections.new(f"{coll.name} (rscene render copy)"))
    copy.instance_offset = coll.instance_offset
    mapping = {}
    for ob in coll.all_objects:
        dup = state.keep(ob.copy())
        mapping[ob.name] = dup
        copy.objects.link(dup)
    for dup in mapping.values():
        if dup.parent is not None and dup.parent.name in mapping:
            matrix = dup.matrix_parent_inverse.copy()
            dup.parent = mapping[dup.parent.name]
            dup.matrix_parent_inverse = matrix
    return copy


def _record_color(doc, uid: int):
    if doc is None or not 0 <= uid < len(doc.items):
        return None
    record = doc.items[uid]
    schema = getattr(record, "schema", None)
    if schema is None or not schema.field("segmentationColor"):
        return None
    try:
        return record.get("segmentationColor")
    except ValueError:
        return None


def _record_field(doc, uid: int, name: str):
    if doc is None or not 0 <= uid < len(doc.items):
        return None
    record = doc.items[uid]
    schema = getattr(record, "schema", None)
    if schema is None or not schema.field(name):
        return None
    try:
        return record.get(name)
    except ValueError:
        return None


def build_entities(bl_scene, doc=None) -> EntityIndex:
    return EntityIndex(bl_scene, doc)
