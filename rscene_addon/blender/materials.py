"""``material`` records <-> Principled BSDF materials.

The record's colors are linear RGB(A), as Blender's socket values are. Textures are linked when their
files exist (resolved by the scene's asset rules); a missing texture is reported, not fatal.
"""
from __future__ import annotations

import os

import bpy

from ..scene_geometry.terrain_colors import base_slot, layer_roughness, terrain_colors
from . import compat

ENGINE_DEFAULT_COLOR = (0.55, 0.62, 0.72, 1.0)
ENGINE_DEFAULT_ROUGHNESS = 0.55
TEXTURE_SLOTS = (("albedoTexture", "Base Color", "sRGB"), ("roughnessTexture", "Roughness", "Non-Color"),
                 ("metallicTexture", "Metallic", "Non-Color"), ("emissiveTexture", "Emission Color", "sRGB"))


def _bsdf(material):
    return next(n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED")


def _emission_socket(bsdf):
    return bsdf.inputs["Emission Color"] if "Emission Color" in bsdf.inputs else bsdf.inputs["Emission"]


def new_material(name: str, color=ENGINE_DEFAULT_COLOR, metallic=0.0, roughness=ENGINE_DEFAULT_ROUGHNESS,
                 emissive=(0.0, 0.0, 0.0), emissive_strength=0.0, double_sided=False):
    material = bpy.data.materials.new(name)
    compat.enable_material_nodes(material)
    bsdf = _bsdf(material)
    bsdf.inputs["Base Color"].default_value = tuple(color[:3]) + (1.0,)
    bsdf.inputs["Alpha"].default_value = color[3] if len(color) > 3 else 1.0
    bsdf.inputs["Metallic"].default_value = metallic
    bsdf.inputs["Roughness"].default_value = roughness
    _emission_socket(bsdf).default_value = tuple(emissive[:3]) + (1.0,)
    bsdf.inputs["Emission Strength"].default_value = emissive_strength
    material.diffuse_color = tuple(color[:3]) + (color[3] if len(color) > 3 else 1.0,)
    material.use_backface_culling = not double_sided
    if len(color) > 3 and color[3] < 1.0:
        _set_blend(material)
    return material


def _set_blend(material):
    if hasattr(material, "surface_render_method"):
        material.surface_render_method = "BLENDED"
    elif hasattr(material, "blend_method"):
        material.blend_method = "BLEND"


def material_from_record(record, resolve, warn):
    """A Blender material for a ``material`` record. ``resolve`` maps a file reference to a path."""
    material = new_material(
        record.get("name") or record.id,
        color=record.get("color"), metallic=record.get("metallic"), roughness=record.get("roughness"),
        emissive=record.get("emissive"), emissive_strength=record.get("emissiveStrength"),
        double_sided=record.get("doubleSided"))
    for field, socket, colorspace in TEXTURE_SLOTS:
        ref = record.get(field) if record.schema.field(field) else ""
        if not ref:
            continue
        path = resolve(ref)
        if not os.path.exists(path):
            warn(f"material {record.id!r}: texture {ref!r} not found")
            continue
        link_texture(material, path, socket, colorspace)
    return material


def link_texture(material, path: str, socket: str = "Base Color", colorspace: str = "sRGB") -> None:
    """Feed the image file at ``path`` (loaded once per file) into the BSDF input ``socket``."""
    tree = material.node_tree
    bsdf = _bsdf(material)
    node = tree.nodes.new("ShaderNodeTexImage")
    node.image = bpy.data.images.load(path, check_existing=True)
    node.image.colorspace_settings.name = colorspace
    if socket in bsdf.inputs:
        tree.links.new(node.outputs["Color"], bsdf.inputs[socket])


TERRAIN_COLOR_ATTRIBUTE = "rscene_terrain_color"


def paint_terrain(mesh, scene, record):
    """The material of a terrain that names no material of its own: its samples' colours from the
    ``terrain_texture`` layers (:mod:`rscene_addon.scene_geometry.terrain_colors`) as a point colour
    attribute feeding Base Color, and the base layer's roughness. None when the terrain names a material."""
    if record.get("material") not in ("", "engine_default"):
        return None
    colors = terrain_colors(scene, record)
    attribute = mesh.color_attributes.new(TERRAIN_COLOR_ATTRIBUTE, "FLOAT_COLOR", "POINT")
    attribute.data.foreach_set("color", colors.astype("float32").ravel())
    mean = tuple(float(v) for v in colors.mean(axis=0)[:3]) + (1.0,)  # the viewport's solid colour
    material = new_material(f"{mesh.name} terrain", mean, roughness=layer_roughness(scene, base_slot(record)))
    tree = material.node_tree
    node = tree.nodes.new("ShaderNodeAttribute")
    node.attribute_type = "GEOMETRY"
    node.attribute_name = TERRAIN_COLOR_ATTRIBUTE
    tree.links.new(node.outputs["Color"], _bsdf(material).inputs["Base Color"])
    return material


def material_values(material) -> dict:
    """What the Blender material says now, in record terms (for export)."""
    if material.node_tree is None:
        return {}
    try:
        bsdf = _bsdf(material)
    except StopIteration:
        return {}
    base = tuple(bsdf.inputs["Base Color"].default_value)[:3]
    return {
        "color": base + (bsdf.inputs["Alpha"].default_value,),
        "metallic": bsdf.inputs["Metallic"].default_value,
        "roughness": bsdf.inputs["Roughness"].default_value,
        "emissive": tuple(_emission_socket(bsdf).default_value)[:3],
        "emissiveStrength": bsdf.inputs["Emission Strength"].default_value,
        "doubleSided": not material.use_backface_culling,
    }


def assign_object_material(ob, material) -> None:
    """Give ``ob`` its own material slot (linked to the object), so shared meshes stay shared."""
    if not ob.data.materials:
        ob.data.materials.append(None)
    slot = ob.material_slots[0]
    slot.link = "OBJECT"
    slot.material = material
