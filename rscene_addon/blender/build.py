"""Scene model -> Blender data (import). Transactional: on any error, everything made is removed.

Passes, as in glTF-Blender-IO: keep the source text, materials, the collection tree, one Blender object
per node record, then the scene-wide settings (world, gravity, camera, resolution) last, so a failure
before them leaves the Blender file exactly as it was.

Each node object carries ``ob.rscene`` (source text, record index, path, id, editable physics fields);
export (``extract.py``) compares Blender with the records and rewrites only what changed.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

import bpy
import numpy as np

from ..formats import rscene
from ..model import Record, Scene
from . import conventions as cv
from . import assets, meshes, world
from .materials import (ENGINE_DEFAULT_COLOR, ENGINE_DEFAULT_ROUGHNESS, assign_object_material,
                        material_from_record, new_material)
from .support_records import build_support_record
from .transaction import Transaction

SUPPORT_KINDS = ("wire", "sensor", "local_fog", "reflection_probe", "irradiance_volume", "projected_decal",
                 "point_cloud", "granular", "deformable", "compound", "articulated", "terrain_foliage_layer")


@dataclass
class ImportOptions:
    import_cameras: bool = True
    import_lights: bool = True
    physics_helpers: bool = True  # invisible collision-only objects (shown as wireframe bounds)
    placeholders: bool = True  # a named placeholder for a missing mesh file
    set_active_camera: bool = True
    import_world: bool = True


_ALL_GROUPS = 2**64 - 1


def _set_node_props(props, record, mode: str) -> None:
    """Copy the editable physics fields; values equal to the property defaults are not written
    (each PropertyGroup write costs microseconds, and scenes have tens of thousands of objects)."""
    if mode != "dynamic":
        props.body_mode = mode
    mass = max(record.get("mass"), 0.0)
    if mass != 1.0:
        props.mass = mass
    if not record.get("collidable"):
        props.collidable = False
    group, mask = record.get("collisionGroup"), record.get("collisionMask")
    if group != 1:
        props.collision_group = str(group)
    if mask != _ALL_GROUPS:
        props.collision_mask = str(mask)
    if record.has("semanticClass"):
        props.semantic_class = record.get("semanticClass")
    if record.has("instanceId"):
        props.instance_id = max(int(record.get("instanceId")), -1)


class SceneBuilder:
    """Builds one scene model into ``bl_scene``. ``report(level, message)`` receives warnings."""

    def __init__(self, scene: Scene, bl_scene, options: ImportOptions | None = None,
                 report: Callable[[str, str], None] | None = None,
                 progress: Callable[[float], None] | None = None, name: str | None = None):
        self.scene = scene
        self.bl_scene = bl_scene
        self.options = options or ImportOptions()
        self.report = report or (lambda level, message: None)
        self.progress = progress or (lambda fraction: None)
        self.name = name or (os.path.splitext(os.path.basename(scene.path))[0] if scene.path else "scene")
        self.materials: dict[str, bpy.types.Material] = {}
        self.collections: dict[int, bpy.types.Collection] = {}
        self.created_objects: list = []
        self.meshes = meshes.PrimitiveCache([])
        self.assets = assets.AssetLibrary(scene, self.warn)
        self.first_camera = None
        self.source = None

    def warn(self, message: str) -> None:
        self.report("WARNING", message)

    # -- entry point ------------------------------------------------------------------------------------

    def build(self) -> bpy.types.Collection:
        with Transaction():
            self.source = self._store_source()
            self.root = bpy.data.collections.new(self.name)
            self._build_materials()
            self._build_groups()
            self._build_nodes()
            self._link_root()
            self._apply_scene_settings()
        return self.root

    def _store_source(self):
        text = bpy.data.texts.new(f"{self.name}.rscene")
        text.from_string(rscene.dumps(self.scene))
        text["rscene_path"] = self.scene.path or ""
        text.use_fake_user = True
        return text

    def _link_root(self) -> None:
        self.bl_scene.collection.children.link(self.root)

    # -- materials ------------------------------------------------------------------------------------

    def _build_materials(self) -> None:
        resolve = self.scene.resolve
        for record in self.scene.of("material"):
            mat = material_from_record(record, resolve, self.warn)
            self._tag(mat, record)
            self.materials.setdefault(record.id, mat)

    def material(self, ref: str):
        if not ref:
            ref = "engine_default"
        mat = self.materials.get(ref)
        if mat is None:
            if ref != "engine_default":
                self.warn(f"material {ref!r} is not defined: using engine_default")
                return self.material("engine_default")
            mat = new_material("engine_default", ENGINE_DEFAULT_COLOR, 0.0, ENGINE_DEFAULT_ROUGHNESS)
            mat["rscene_id"] = "engine_default"
            self.materials[ref] = mat
        return mat

    def _tag(self, datablock, record: Record) -> None:
        datablock["rscene_uid"] = self.uid(record)
        datablock["rscene_id"] = record.id or ""

    # -- collections ----------------------------------------------------------------------------------

    def _build_groups(self) -> None:
        tree = self.scene.children()
        pending = [(None, self.root)]
        while pending:
            parent, collection = pending.pop()
            for child in tree.get(parent, ()):
                if child.tag != "group":
                    continue
                sub = bpy.data.collections.new(os.path.basename(child.path.rstrip("/")) or child.path)
                collection.children.link(sub)
                sub["rscene_uid"] = self.uid(child)
                sub["rscene_path"] = child.path
                sub.hide_viewport = not child.get("visible") if child.schema.field("visible") else False
                sub.hide_select = bool(child.get("locked")) if child.schema.field("locked") else False
                self.collections[id(child)] = sub
                pending.append((child, sub))
        self._parent_collection = {}
        for parent, children in tree.items():
            target = self.collections.get(id(parent), self.root) if parent is not None else self.root
            for child in children:
                self._parent_collection[id(child)] = target if parent is None or parent.tag == "group" else self.root

    def collection_for(self, record: Record):
        return self._parent_collection.get(id(record), self.root)

    # -- nodes --------------------------------------------------------------------------------------------

    def uid(self, record) -> int:
        if not hasattr(self, "_uids"):
            self._uids = {id(item): i for i, item in enumerate(self.scene.items)}
        return self._uids[id(record)]

    def _build_nodes(self) -> None:
        builders = {
            "object": self.build_object, "light": self.build_light, "camera": self.build_camera,
            "terrain_region": self.build_terrain, "instanced_visual": self.build_instanced_visual,
            "articulated": self.build_articulated,
        }
        records = [r for r in self.scene.records if r.tag in builders or r.tag in SUPPORT_KINDS]
        total = max(len(records), 1)
        node_uids = []
        for i, record in enumerate(records):
            builder = builders.get(record.tag) or (lambda r: build_support_record(self, r))
            ob = builder(record)
            if ob is not None:
                node_uids.append(ob.rscene.uid)
                collection = self.collection_for(record)
                collection.objects.link(ob)
                for child in self.assets.take_children():
                    collection.objects.link(child)
            if i % 256 == 0:
                self.progress(i / total)
        # export removes the records of node objects the user deleted
        self.source["rscene_node_uids"] = node_uids
        self.progress(1.0)

    def new_object(self, record: Record, data, name: str | None = None):
        path = record.path or record.tag
        ob = bpy.data.objects.new(name or os.path.basename(path.rstrip("/")) or path, data)
        props = ob.rscene
        props.source = self.source.name
        props.uid = self.uid(record)
        props.kind = record.tag
        props.path = path
        props.record_id = record.id or ""
        props.imported_name = ob.name
        return ob

    def build_object(self, record: Record):
        primitive = record.get("primitive")
        mode = record.get("bodyMode")
        visible = record.get("visible")
        collision_only = not visible and mode != "visual_only"
        if collision_only and not self.options.physics_helpers:
            return None
        sx, sy, sz = record.get("scale")
        radius, height = record.get("radius"), record.get("height")
        if primitive == "box":
            data, scale = self.meshes.get("box"), (sx, sy, sz)
        elif primitive == "ground":
            data, scale = self.meshes.get("ground"), (sx, sy, sz)
        elif primitive == "sphere":
            data, scale = self.meshes.get("sphere", radius * sx), (1.0, 1.0, 1.0)
        elif primitive == "cylinder":
            data, scale = self.meshes.get("cylinder", radius * sx, height * sz), (1.0, 1.0, 1.0)
        elif primitive == "capsule":
            data, scale = self.meshes.get("capsule", radius * sx, height * sz), (1.0, 1.0, 1.0)
        else:
            data, scale = None, (sx, sy, sz)
        ob = self.new_object(record, data)
        ob.location = record.get("position")
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = cv.normalized_quat(record.get("quaternion"))
        ob.scale = scale
        if primitive == "mesh":
            self.assets.attach(ob, record, self.options.placeholders, self.meshes)
        elif data is not None:
            assign_object_material(ob, self.material(record.get("material")))
        _set_node_props(ob.rscene, record, mode)
        if collision_only:
            ob.display_type = "WIRE"
            ob.hide_render = True
        else:
            ob.hide_render = not visible
            ob.hide_viewport = not visible
        return ob

    def build_light(self, record: Record):
        if not self.options.import_lights:
            return None
        kind = record.get("type")
        light = bpy.data.lights.new(os.path.basename(record.path), cv.BLENDER_LIGHT_TYPE.get(kind, "POINT"))
        light.color = tuple(record.get("color"))[:3]
        light.energy = cv.light_power_to_blender(kind, record.get("intensity"))
        if hasattr(light, "use_shadow"):
            light.use_shadow = record.get("shadows")
        right = up = None
        if kind == "spot":
            light.spot_size, light.spot_blend = cv.spot_to_blender(record.get("coneAngle"), record.get("innerConeAngle"))
        elif kind == "area":
            size = record.get("areaSize")
            light.shape = "RECTANGLE"
            light.size, light.size_y = max(size[0], 1e-4), max(size[1], 1e-4)
            right, up = record.get("areaRight"), record.get("areaUp")
        radius = record.get("radius")
        if kind in ("point", "spot") and radius > 0:
            light.shadow_soft_size = radius
        ob = self.new_object(record, light)
        ob.location = record.get("position")
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = cv.light_rotation_to_blender(record.get("direction"), right, up)
        visible = record.get("visible")
        ob.hide_render = ob.hide_viewport = not visible
        return ob

    def build_camera(self, record: Record):
        if not self.options.import_cameras:
            return None
        cam = bpy.data.cameras.new(os.path.basename(record.path))
        cv.set_camera_fov(cam, record.get("verticalFov"), record.get("horizontalFov"))
        cam.clip_start, cam.clip_end = record.get("near"), record.get("far")
        if str(record.get("projection")).lower().startswith("ortho"):
            cam.type = "ORTHO"
        ob = self.new_object(record, cam)
        ob.location = record.get("position")
        ob.rotation_mode = "QUATERNION"
        ob.rotation_quaternion = cv.camera_rotation_to_blender(record.get("quaternion"))
        ob["rscene_resolution"] = (int(record.get("width")), int(record.get("height")))
        if record.get("enabled") and self.first_camera is None:
            self.first_camera = (ob, record)
        return ob

    def build_terrain(self, record: Record):
        xs, ys = record.get("xSamples"), record.get("ySamples")
        verts, faces = meshes.grid_geometry(xs, ys, record.get("xSize"), record.get("ySize"), record.get("heights"))
        mesh = meshes.mesh_from_arrays(os.path.basename(record.path), verts, faces, smooth=True)
        for name in ("textureBlend", "wetness"):
            values = record.get(name) if record.schema.field(name) else ()
            if len(values) == xs * ys:
                attribute = mesh.attributes.new(name, "FLOAT", "POINT")
                attribute.data.foreach_set("value", np.asarray(values, dtype=np.float32))
        mesh.materials.append(self.material(record.get("material")))
        ob = self.new_object(record, mesh)
        ob.location = record.get("center")
        return ob

    def build_instanced_visual(self, record: Record):
        from .instancing import build_instances
        return build_instances(self, record)

    def build_articulated(self, record: Record):
        from .robots import build_robot
        return build_robot(self, record)

    def build_support(self, record: Record):
        """Records Blender has no native counterpart for: an empty that carries the record."""
        ob = self.new_object(record, None)
        ob.empty_display_type = "PLAIN_AXES"
        ob.empty_display_size = 0.2
        for field in ("position", "center"):
            if record.schema.field(field):
                try:
                    ob.location = record.get(field)
                except (TypeError, ValueError):
                    pass
                break
        if record.schema.field("quaternion"):
            ob.rotation_mode = "QUATERNION"
            ob.rotation_quaternion = cv.normalized_quat(record.get("quaternion"))
        return ob

    # -- scene-wide settings ------------------------------------------------------------------------

    def _apply_scene_settings(self) -> None:
        scene, bl = self.scene, self.bl_scene
        bl.gravity = scene.gravity
        props = bl.rscene
        props.source = self.source.name
        props.time_step = scene.time_step
        solver = scene.setting("solver")
        props.solver_iterations = solver.get("iterations")
        props.erp = solver.get("erp")
        props.default_friction = solver.get("defaultFriction")
        props.default_restitution = solver.get("defaultRestitution")
        if self.options.import_world:
            environment, weather = scene.setting("environment"), scene.setting("weather")
            bl.world = world.build_world(f"{self.name} world", environment, weather, scene.resolve, self.warn)
            world.apply_color_management(bl, environment)
        if self.first_camera and self.options.set_active_camera:
            ob, record = self.first_camera
            bl.camera = ob
            bl.render.resolution_x, bl.render.resolution_y = int(record.get("width")), int(record.get("height"))
            bl.render.resolution_percentage = 100


def import_scene_file(path: str, bl_scene=None, options: ImportOptions | None = None, report=None,
                      progress=None) -> bpy.types.Collection:
    """Read a scene file (any supported format) and build it into ``bl_scene``."""
    if path.lower().endswith(".rscene"):
        scene = rscene.read(path)
    else:
        from ..formats import registry
        scene = registry.read_scene(path)
    if report:
        for warning in scene.warnings:
            report("WARNING", str(warning))
    builder = SceneBuilder(scene, bl_scene or bpy.context.scene, options, report, progress)
    return builder.build()


__all__ = ["ImportOptions", "SceneBuilder", "import_scene_file", "math"]
