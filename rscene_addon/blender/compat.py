"""Differences between Blender 4.5 LTS and 5.0, hidden behind small functions."""
from __future__ import annotations

import bpy

IS_5 = bpy.app.version >= (5, 0, 0)


def enable_world_nodes(world) -> None:
    # 5.0 deprecates World.use_nodes (worlds always have a node tree there).
    if world.node_tree is None or not IS_5:
        world.use_nodes = True


def enable_material_nodes(material) -> None:
    # 5.0 deprecates Material.use_nodes: new materials get a node tree anyway.
    if material.node_tree is None or not IS_5:
        material.use_nodes = True


def set_physical_sky(sky_node) -> None:
    """Blender's physically based sky: 'NISHITA' in 4.x, 'MULTIPLE_SCATTERING' in 5.0."""
    items = {i.identifier for i in sky_node.bl_rna.properties["sky_type"].enum_items}
    for name in ("MULTIPLE_SCATTERING", "NISHITA", "HOSEK_WILKIE"):
        if name in items:
            sky_node.sky_type = name
            return
