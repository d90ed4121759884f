"""Robots of a scene for the simulator: one ``ArticulatedSystem`` per ``articulated`` record."""
from __future__ import annotations

import numpy as np

from .articulated import ArticulatedSystem
from .physics_model import ALL_GROUPS

__all__ = ["ground_height", "systems_for_scene"]


def systems_for_scene(scene, *, dt: float, gravity=(0.0, 0.0, -9.81), ground: float | None = None,
                      warnings: list | None = None, world=None) -> list[ArticulatedSystem]:
    """One ArticulatedSystem per ``articulated`` record of ``scene`` (named by the record's path); a record
    whose robot cannot be read is skipped with a message appended to ``warnings``. The record's
    collisionGroup/collisionMask/collidable apply to every link (world, self and robot-robot contacts);
    doNotCollideWithParent=false lets a link touch its parent. The systems step on the world's backend.
    With a sim ``World`` the links touch its geoms (two-way) with the world's materials and ERP, and
    ``ground`` is not used; without one they touch only a plane at height ``ground`` (None: nothing)."""
    out = []
    try:
        records = scene.of("articulated")
    except Exception:
        return out
    for rec in records:
        try:
            options = dict(collision_group=_record_int(rec, "collisionGroup", 1),
                           collision_mask=_record_int(rec, "collisionMask", ALL_GROUPS),
                           collidable=bool(rec.get("collidable", True)),
                           collide_with_parent=not _record_flag(rec, "doNotCollideWithParent", True))
            if world is not None:
                options["backend"] = world.backend
            if world is not None:
                from .link_contacts import WorldContacts, world_erp
                options.update(environment=WorldContacts(world), erp=world_erp(world))
            out.append(ArticulatedSystem.from_record(scene, rec, dt=dt, gravity=gravity,
                                                     ground_height=None if world is not None else ground,
                                                     **options))
        except Exception as exc:  # FormatError, OSError, ValueError: report and carry on
            if warnings is not None:
                warnings.append(f"{getattr(rec, 'path', '') or rec.get('path', '')}: articulated system "
                                f"not simulated: {exc}")
    return out


def _record_flag(rec, name: str, default: bool) -> bool:
    value = rec.get(name, default)
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on") if value.strip() not in ("", "-") else default
    return default if value is None else bool(value)


def _record_int(rec, name: str, default: int) -> int:
    value = rec.get(name, default)
    try:
        return int(value) if value not in (None, "", "-") else int(default)
    except (TypeError, ValueError):
        return int(default)


def ground_height(model, state=None) -> float | None:
    """Height of the highest ground plane of a sim ``Model`` (None when it has none)."""
    from .geometry import PLANE
    idx = np.nonzero(np.asarray(model.geom_type) == PLANE)[0]
    if not len(idx):
        return None
    heights = np.asarray(model.geom_pos)[idx, 2]
    if state is not None:
        heights = heights + np.asarray(state.position)[np.asarray(model.geom_body)[idx], 2]
    return float(np.max(heights))
