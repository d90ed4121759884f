"""Temporary changes to Blender data, undone in reverse order (render settings, pass indices, the
active camera, helper objects), so a render leaves the user's file as it found it."""
from __future__ import annotations

import bpy

__all__ = ["SceneState"]

_MISSING = object()


class SceneState:
    def __init__(self) -> None:
        self._changes: list[tuple] = []
        self._datablocks: list = []

    def set(self, owner, attr: str, value) -> None:
        """``setattr(owner, attr, value)``, remembering the old value the first time."""
        old = getattr(owner, attr, _MISSING)
        self._changes.append((owner, attr, old))
        setattr(owner, attr, value)

    def set_many(self, owner, values: dict) -> None:
        for attr, value in values.items():
            self.set(owner, attr, value)

    def keep(self, datablock):
        """Remove ``datablock`` (an object, camera, collection...) when restoring; returns it."""
        self._datablocks.append(datablock)
        return datablock

    def restore(self) -> None:
        for owner, attr, old in reversed(self._changes):
            try:
                if old is _MISSING:
                    continue
                setattr(owner, attr, old)
            except (ReferenceError, AttributeError, TypeError, ValueError):
                pass  # the owner was removed meanwhile, or the value no longer applies
        self._changes.clear()
        for block in reversed(self._datablocks):
            try:
                collection = _collection_for(block)
                if collection is not None:
                    collection.remove(block)
            except (ReferenceError, RuntimeError):
                pass
        self._datablocks.clear()


def _collection_for(block):
    kinds = ((bpy.types.Object, "objects"), (bpy.types.Camera, "cameras"),
             (bpy.types.Collection, "collections"), (bpy.types.Mesh, "meshes"))
    for kind, name in kinds:
        if isinstance(block, kind):
            return getattr(bpy.data, name)
    return None
