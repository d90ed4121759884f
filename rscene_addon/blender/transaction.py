"""All-or-nothing changes to ``bpy.data``: on an exception, every datablock created inside is removed.

Importers (ours and Blender's glTF/OBJ/... operators) create objects, meshes, materials, images,
collections and more; a snapshot of every ID collection taken before lets us remove exactly what is new.
"""
from __future__ import annotations

import bpy

# Order matters on removal: users before what they use.
ID_COLLECTIONS = ("objects", "collections", "meshes", "curves", "lights", "cameras", "lightprobes",
                  "materials", "node_groups", "images", "textures", "worlds", "actions", "texts",
                  "pointclouds", "armatures", "volumes")


def _pointers() -> dict[str, set[int]]:
    return {name: {id_.as_pointer() for id_ in getattr(bpy.data, name)}
            for name in ID_COLLECTIONS if hasattr(bpy.data, name)}


class Transaction:
    """``with Transaction(): ...`` removes the datablocks made inside when the block raises."""

    def __enter__(self):
        self.before = _pointers()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.rollback()
        return False

    def rollback(self) -> None:
        for name, before in self.before.items():
            data = getattr(bpy.data, name)
            for id_ in [i for i in data if i.as_pointer() not in before]:
                data.remove(id_)
