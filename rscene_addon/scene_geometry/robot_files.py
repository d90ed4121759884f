"""Which file an ``articulated`` record's robot comes from: one lookup for Blender and the simulator.

The record's own ``sourcePath`` wins, else its ``articulated_resource``'s (found by ``resourceId``, matching
the resource's id or name); ``resourceDirectory`` and ``jointOrder`` likewise. Paths go through
``scene.resolve``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Diagnostic, FormatError


@dataclass(frozen=True)
class RobotSource:
    path: str
    resource_directory: str
    joint_order: tuple[str, ...]
    modules: tuple[str, ...] = ()  # URDF modules (formats.urdf_modules), the record's else its resource's


def _text(record, name: str) -> str:
    value = record.get(name, "") if record is not None else ""
    return str(value or "")


def robot_source(scene, record) -> RobotSource:
    """The robot file of an ``articulated`` record (FormatError naming the record when there is none)."""
    rid = _text(record, "resourceId")
    resource = next((r for r in scene.of("articulated_resource") if rid and (r.id == rid or r.get("name") == rid)),
                    None)
    source = _text(record, "sourcePath") or _text(resource, "sourcePath")
    if not source:
        raise FormatError(Diagnostic(scene.path or "<scene>", 0, "articulated",
                                     f"{record.path or record.id}: no sourcePath on the record and no "
                                     f"articulated_resource {rid!r} naming one"))
    res_dir = _text(record, "resourceDirectory") or _text(resource, "resourceDirectory")
    order = [str(n) for n in (record.get("jointOrder", None) or ())]
    if not order and resource is not None:
        order = [str(n) for n in (resource.get("jointOrder", None) or ())]
    modules = tuple(str(m) for m in (record.get("modules", None) or ()))
    if not modules and resource is not None:
        modules = tuple(str(m) for m in (resource.get("modules", None) or ()))
    return RobotSource(scene.resolve(source), scene.resolve(res_dir) if res_dir else "", tuple(order), modules)
