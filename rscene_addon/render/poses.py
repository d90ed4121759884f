"""Where each sensor is at each frame: a 4x4 world pose of its RaiSim sensor frame (+x forward, +z up).

* ``camera`` record: the imported Blender camera object (animated or moved by the user), converted
  from Blender's camera axes; the record's pose when the object is gone.
* ``sensor`` record: the parent body's world matrix without scale (RaiSim bodies are unscaled; a box
  object's scale is its size) times the record's mount pose. ``parent`` names the body by id or path
  (a Blender object name also works). Without a parent the sensor's own empty (placed at the
  record's pose by the importer, and parented by the user if they like) is used, else the record pose.
* a Blender camera: its world matrix without scale.

Poses are read after ``scene.frame_set(frame)``, i.e. from the baked (keyframed) animation.
"""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..base.spatial import R_RAISIM_FROM_OPENGL, quat_to_matrix

__all__ = ["PoseSource", "PoseTable", "blender_matrix", "rigid", "source_for"]

GL_TO_RAISIM = np.eye(4)
GL_TO_RAISIM[:3, :3] = R_RAISIM_FROM_OPENGL.T  # T_world_raisim = T_world_blendercam @ GL_TO_RAISIM
RAISIM_TO_GL = np.eye(4)
RAISIM_TO_GL[:3, :3] = R_RAISIM_FROM_OPENGL


def rigid(position, quaternion_wxyz) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = quat_to_matrix(quaternion_wxyz)
    t[:3, 3] = position
    return t


def blender_matrix(matrix_world) -> np.ndarray:
    """4x4 numpy of a Blender world matrix with its scale removed (rotation and translation only)."""
    loc, rot, _ = matrix_world.decompose()
    t = np.eye(4)
    t[:3, :3] = np.array(rot.to_matrix())
    t[:3, 3] = tuple(loc)
    return t


@dataclass
class PoseSource:
    """``world = unscaled(obj.matrix_world) @ right`` for an object, else ``fixed``."""

    obj: object = None
    right: np.ndarray | None = None
    fixed: np.ndarray | None = None
    description: str = ""

    def world(self) -> np.ndarray:
        if self.obj is None:
            return self.fixed.copy()
        t = blender_matrix(self.obj.matrix_world)
        return t if self.right is None else t @ self.right


def source_for(spec, doc, objects_by_uid: dict, warn=None) -> PoseSource:
    """The :class:`PoseSource` of a :class:`~.plan.SensorSpec`."""
    warn = warn or (lambda message: None)
    mount = rigid(spec.mount_position, spec.mount_quaternion)
    if spec.source == "blender":
        ob = bpy.data.objects.get(spec.object_name)
        return PoseSource(ob, GL_TO_RAISIM, description=f"Blender camera {spec.object_name!r}")
    own = objects_by_uid.get(spec.uid)
    if spec.source == "camera":
        if own is not None and own.type == "CAMERA":
            return PoseSource(own, GL_TO_RAISIM, description=f"camera object {own.name!r}")
        return PoseSource(fixed=mount, description="record pose")
    # a camera-like sensor is a Blender camera (looking along -Z): turn its frame back into RaiSim's
    own_right = GL_TO_RAISIM if own is not None and own.type == "CAMERA" else None
    if own is not None and own.parent is not None:
        return PoseSource(own, own_right, description=f"sensor object {own.name!r} (parented in Blender)")
    parent_ob = None
    if spec.parent:
        record = doc.find(spec.parent) if doc is not None else None
        if record is not None:
            uid = next((i for i, item in enumerate(doc.items) if item is record), -1)
            parent_ob = objects_by_uid.get(uid)
        if parent_ob is None:
            parent_ob = bpy.data.objects.get(spec.parent)
        if parent_ob is None:
            warn(f"{spec.name}: parent {spec.parent!r} not found; using the sensor's own pose")
    if parent_ob is not None:
        return PoseSource(parent_ob, mount, description=f"parent {parent_ob.name!r} x mount pose")
    if own is not None:
        return PoseSource(own, own_right, description=f"sensor object {own.name!r}")
    return PoseSource(fixed=mount, description="record pose")


class PoseTable:
    """World poses ``(4, 4)`` of every source at every needed frame, read in one pass over frames."""

    def __init__(self, sources: dict) -> None:
        self.sources = sources
        self.poses: dict[int, dict[str, np.ndarray]] = {}

    def sample(self, bl_scene, frames) -> None:
        wanted = sorted({int(f) for f in frames} - set(self.poses))
        for frame in wanted:
            bl_scene.frame_set(frame)
            self.poses[frame] = {name: src.world() for name, src in self.sources.items()}

    def get(self, name: str, frame: int) -> np.ndarray:
        return self.poses[int(frame)][name]
