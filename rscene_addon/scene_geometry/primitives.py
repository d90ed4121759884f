"""The size of an ``object`` record's primitive, RaiSim's rule, for Blender's mesh and the simulator's geom.

A box is its ``scale`` (full side lengths). A sphere is ``(radius * scale.x,)``; a cylinder and a capsule are
``(radius * scale.x, height * scale.z)`` (the capsule's height without its caps).
"""
from __future__ import annotations

__all__ = ["ROUND_PRIMITIVES", "primitive_size"]

ROUND_PRIMITIVES = ("sphere", "cylinder", "capsule")


def primitive_size(primitive: str, scale, radius: float, height: float):
    """``scale`` for a box, ``(r,)`` for a sphere, ``(r, h)`` for a cylinder or capsule."""
    if primitive == "sphere":
        return (radius * scale[0],)
    if primitive in ("cylinder", "capsule"):
        return (radius * scale[0], height * scale[2])
    return scale
