"""Scene model -> Blender data (import). Transactional: on any error, everything made is removed.

Passes, as in glTF-Blender-IO: keep the source text, materials, the collection tree, one Blender object
per node record, then the scene-wide settings (world, gravity, camera, resolution) last, so a failure
before them leaves the Blender file exactly as it was.

Groups become nested collections, and records outside any group go in collections named by their path's
folders. A sensor is parented to the body it is mounted on (its local pose is the record's mount pose);
a node whose ``parentGroupId`` names another node is parented to it keeping its world pose.

Each node object carries ``ob.rscene`` (source text and record index, from which its kind, path and id
are read, and the editable physics fields); export (``extract.py``) compares Blender with the records
and rewrites only what changed.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from itertools import chain, count, repeat
from typing import Callable

import bpy
import numpy as np

from ..formats import rscene
from ..model import ALL_GROUPS, Record, Scene
from ..model.record import paused_gc
from ..scene_geometry.primitives import ROUND_PRIMITIVES, primitive_size
from . import conventions as cv
from . import assets, meshes, sources, world
from .materials import (ENGINE_DEFAULT_COLOR, ENGINE_DEFAULT_ROUGHNESS, material_from_record, new_material,
                        paint_terrain)
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
    ground: bool = False  # a robot file read alone (URDF, MJCF) gets a static ground plane at z = 0


_UNIT = (1.0, 1.0, 1.0)
_MOVING_KINDS = ("articulated", "deformable", "granular")  # always moved by the simulator (or its bake)
_QUATERNION_MODE = bpy.types.Object.bl_rna.properties["rotation_mode"].enum_items["QUATERNION"].value


def _set_node_props(props, record, mode: str) -> None:
    """Copy the editable physics fields; values equal to the property defaults are not written
    (each PropertyGroup write costs microseconds, and scenes have tens of thousands of objects)."""
    get = record.get
    if mode != "dynamic":
        props.body_mode = mode
    mass = max(get("mass"), 0.0)
    if mass != 1.0:
        props.mass = mass
    if not get("collidable"):
        props.collidable = False
    group, mask = get("collisionGroup"), get("collisionMask")
    if group != 1:
        props.collision_group = str(group)
    if mask != ALL_GROUPS:
        props.collision_mask = str(mask)
    if record.raw_keys:  # the segmentation labels are keys; most records have none
        if record.has("semanticClass"):
            props.semantic_class = get("semanticClass")
        if record.has("instanceId"):
            props.instance_id = max(int(get("instanceId")), -1)


def _floats(vectors, width: int) -> np.ndarray:
    """(N, width) float64 from N tuples (twice as fast as ``np.array`` on tuples)."""
    return np.fromiter(chain.from_iterable(vectors), np.float64, len(vectors) * width).reshape(-1, width)


def _set_pose(ob, location, quaternion, scale) -> None:
    ob.location = location
    ob.rotation_mode = "QUATERNION"
    ob.rotation_quaternion = cv.normalized_quat(quaternion)
    ob.scale = scale


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
        self.first_sensor_camera = None  # the active camera of a scene with camera sensors only (AirSim)
        self.source = None
        self._source_name: str | None = None  # the source text's name, read once (an RNA string read each time)
        self._uids: dict[int, int] | None = None
        self._poses: list | None = None  # while _build_nodes runs: object poses to set in bulk
        self._objects_new = None  # while build runs: bpy.data.objects.new, looked up once (1 us a call)

    def warn(self, message: str) -> None:
        self.report("WARNING", message)

    # -- entry point ------------------------------------------------------------------------------------

    def build(self) -> bpy.types.Collection:
        with paused_gc(), Transaction():
            self._objects_new = bpy.data.objects.new
            self._uid_index()
            self.source = self._store_source()
            self._source_name = self.source.name
            self.root = bpy.data.collections.new(self.name)
            self._build_materials()
            self._build_groups()
            self._build_nodes()
            self._link_root()
            self._apply_scene_settings()
            self._objects_new = None
        sources.remember(self.source, self.scene)  # the text's document, parsed already
        return self.root

    def _store_source(self):
        text = bpy.data.texts.new(f"{self.name}.rscene")
        text.from_string(rscene.dumps(self.scene))
        text["rscene_path"] = self.scene.path or ""
        sources.new_revision(text)
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
        mat = self.materials.get(ref or "engine_default")
        return mat if mat is not None else self._missing_material(ref or "engine_default")

    def _missing_material(self, ref: str):
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
        self._parent_collection = {}  # the records in a group; every other one goes in a path folder or the root
        for parent, children in tree.items():
            if parent is not None and parent.tag == "group":
                target = self.collections.get(id(parent), self.root)
                self._parent_collection.update(dict.fromkeys(map(id, children), target))
        self._build_path_folders(tree.get(None, ()))

    def _build_path_folders(self, top) -> None:
        """Records outside any group go in collections named by their path's folders
        (``/World/Physics/Rack_0/Shelf`` -> Physics > Rack_0), so the outliner shows the scene tree even
        for files that write no group records. A folder that is itself a record (a sensor under its
        vehicle) or a group is not made twice; the first path part (``/World``) is the import's own."""
        folders = {group.path: self.collections[id(group)] for group in self.scene.of("group")
                   if id(group) in self.collections}
        taken = {r.path for r in self.scene.records if r.schema is not None and r.path}
        for record in top:
            path = record.path or ""
            parts = path.strip("/").split("/")[1:-1]
            if not parts or record.tag == "group":
                continue
            collection, folder = self.root, "/" + path.strip("/").split("/")[0]
            for part in parts:
                folder = f"{folder}/{part}"
                if folder in taken and folder not in folders:
                    break  # under a node record: it stays in the folder above
                sub = folders.get(folder)
                if sub is None:
                    sub = folders[folder] = bpy.data.collections.new(part)
                    sub["rscene_path"] = folder
                    collection.children.link(sub)
                collection = sub
            if collection is not self.root:
                self._parent_collection[id(record)] = collection

    def collection_for(self, record: Record):
        return self._parent_collection.get(id(record), self.root)

    # -- nodes --------------------------------------------------------------------------------------------

    def uid(self, record) -> int:
        return self._uid_index()[id(record)]

    def _uid_index(self) -> dict[int, int]:
        if self._uids is None:
            self._uids = {id(item): i for i, item in enumerate(self.scene.items)}
        return self._uids

    def _build_nodes(self) -> None:
        builders = {
            "object": self.build_object, "light": self.build_light, "camera": self.build_camera,
            "terrain_region": self.build_terrain, "instanced_visual": self.build_instanced_visual,
            "articulated": self.build_articulated,
        }
        support = lambda r: build_support_record(self, r)  # noqa: E731
        records = [r for r in self.scene.records if r.tag in builders or r.tag in SUPPORT_KINDS]
        total = max(len(records), 1)
        node_uids = []
        parent_collection, root, uids = self._parent_collection, self.root, self._uid_index()
        assets = self.assets
        built: dict = {}  # id(record) -> its object, for the node parents (_parent_nodes)
        members: dict = {}  # collection -> the objects linked to it here, in order (its own order: it is new)
        links: dict = {}  # collection -> its objects.link, looked up once
        self._poses = poses = []
        for i, record in enumerate(records):
            ob = builders.get(record.tag, support)(record)
            if ob is not None:
                built[id(record)] = ob
                node_uids.append(uids[id(record)])  # every builder makes its object with new_object(record)
                collection = parent_collection.get(id(record), root)
                link = links.get(collection)
                if link is None:
                    link = links[collection] = collection.objects.link
                    members[collection] = []
                link(ob)
                linked = members[collection]
                linked.append(ob)
                if assets.pending_children:
                    for child in assets.take_children():
                        link(child)
                        linked.append(child)
            if i % 256 == 0:
                self.progress(i / total)
        self._poses = None
        self._apply_poses(poses, members)
        self._parent_nodes(records, built)
        self._mount_sensors(built)
        from .extract import WRITTEN_KINDS, mark_built
        for record in records:
            ob = built.get(id(record))
            if ob is not None and record.tag not in WRITTEN_KINDS:
                mark_built(ob)  # export names this record if it is edited: its kind cannot be written
        # export removes the records of node objects the user deleted
        self.source["rscene_node_uids"] = node_uids
        self.progress(1.0)

    def _parent_nodes(self, records: list, built: dict) -> None:
        """A node whose ``parentGroupId`` names another node (CoppeliaSim's nesting: a camera under a dummy)
        hangs under that node's object, so moving the parent in Blender carries it along. Such records hold
        world poses (their scenes set ``inheritedTransforms=false``), so the parent inverse is the parent's
        pose at import: every object stays where its record puts it, and its location still reads the
        record's position. Folders stay collections; an object parented by its builder keeps that parent.
        A body the simulator moves stays unparented: it moves on its own (bake keys its world pose), as the
        bodies under a CoppeliaSim joint do; what it carries (a camera, a marker) follows it."""
        scene = self.scene
        for record in records:
            if record.raw_keys.get("parentGroupId", "-") in ("", "-"):
                continue  # the common case, decided on the raw text
            if record.tag in _MOVING_KINDS or (record.tag in ("object", "compound")
                                               and record.get("bodyMode") in ("dynamic", "kinematic")):
                continue
            parent = scene.parent_of(record)
            ob, parent_ob = built.get(id(record)), built.get(id(parent))
            if parent is None or parent.tag == "group" or ob is None or parent_ob is None or ob.parent is not None:
                continue
            if scene.parent_cycle(record):
                continue  # reported by the check pass; Blender refuses a loop of parents
            ob.parent = parent_ob
            ob.matrix_parent_inverse = parent_ob.matrix_basis.inverted()

    def _apply_poses(self, poses: list, members: dict) -> None:
        """Location, quaternion and scale of every ``object`` record: one ``foreach_set`` per collection and
        property instead of four RNA writes per object. Other objects in the collection keep their values
        (read first); a collection holding objects not linked here gets the per-object writes."""
        where = {}  # id of each wrapper linked here (those in poses) -> (its collection, its index there)
        for collection, linked in members.items():
            where.update(zip(map(id, linked), zip(repeat(collection), count())))
        by_collection: dict = {}
        for pose in poses:
            found = where.get(id(pose[0]))
            if found is None:  # an object some builder made and did not return: not linked here
                _set_pose(*pose)
                continue
            collection, index = found
            indices, rows = by_collection.setdefault(collection, ([], []))
            indices.append(index)
            rows.append(pose)
        for collection, (indices, rows) in by_collection.items():
            objects = collection.objects
            size = len(objects)
            linked = members[collection]
            if size != len(linked):
                for index, (_, location, quaternion, scale) in zip(indices, rows):
                    _set_pose(linked[index], location, quaternion, scale)
                continue
            keep = len(indices) < size  # else every value is replaced: nothing to read first
            index = np.asarray(indices)
            _, locations, quaternions, scales = zip(*rows)
            columns = (("location", 3, np.float32, _floats(locations, 3)),
                       ("scale", 3, np.float32, _floats(scales, 3)),
                       ("rotation_mode", 1, np.int32, _QUATERNION_MODE),
                       ("rotation_quaternion", 4, np.float32, cv.normalized_quats(_floats(quaternions, 4))))
            for name, width, dtype, values in columns:
                array = np.empty(size * width, dtype=dtype)
                if keep:
                    objects.foreach_get(name, array)
                array.reshape(size, width)[index] = values
                objects.foreach_set(name, array)

    def _mount_sensors(self, made: dict) -> None:
        """Sensors ride on the body they are mounted on: parented to its object, the parent's scale
        undone (the format ignores it), so the sensor's own location and rotation are its mount pose
        relative to the body, as the record holds it. Moving the vehicle moves its cameras."""
        from mathutils import Matrix
        for record in self.scene.of("sensor"):
            ob = made.get(id(record))
            parent = self.scene.find(record.get("parent")) if ob is not None else None
            body = made.get(id(parent)) if parent is not None else None
            if body is None or body is ob:
                continue
            sx, sy, sz = (s if abs(s) > 1e-12 else 1.0 for s in body.scale)
            ob.parent = body
            ob.matrix_parent_inverse = Matrix.Diagonal((1.0 / sx, 1.0 / sy, 1.0 / sz, 1.0))
            q = cv.normalized_quat(record.get("quaternion"))
            ob.location = tuple(record.get("position"))
            ob.rotation_quaternion = cv.camera_rotation_to_blender(tuple(q)) if ob.type == "CAMERA" else q
            if ob.type == "CAMERA" and record.get("enabled") and self.first_sensor_camera is None:
                self.first_sensor_camera = (ob, record)
        if self.first_sensor_camera is None:
            self.first_sensor_camera = next(
                ((made[id(r)], r) for r in self.scene.of("sensor")
                 if id(r) in made and made[id(r)].type == "CAMERA" and r.get("enabled")), None)

    def new_object(self, record: Record, data, name: str | None = None):
        return self._new_object(record, data, name)[0]

    def _new_object(self, record: Record, data, name: str | None = None):
        """The object and its ``rscene`` properties (each ``ob.rscene`` access makes a new wrapper).
        Only the source and record index are written: kind, path and id are read from the record."""
        usual = sources.node_name(record.path or record.tag)
        ob = self._objects_new(name or usual, data)
        props = ob.rscene
        props.source = self._source_name
        props.uid = self._uids[id(record)]
        if ob.name != usual:  # a name taken already ("Crate.001"), or too long: export must know it
            props.name_at_import = ob.name
        return ob, props

    def build_object(self, record: Record):
        get = record.get
        primitive = get("primitive")
        mode = get("bodyMode")
        visible = get("visible")
        collision_only = not visible and mode != "visual_only"
        if collision_only and not self.options.physics_helpers:
            return None
        scale = get("scale")
        if primitive == "box" or primitive == "ground":
            dims = ()
        elif primitive in ROUND_PRIMITIVES:  # the size is in the shared mesh, as the simulator's geom
            dims, scale = primitive_size(primitive, scale, get("radius"), get("height")), _UNIT
        else:
            dims = None
        data = None
        if dims is not None:  # the shared mesh carries the material: no material slot per object
            data = self.meshes.get(primitive, *dims, material=self.material(get("material")))
        elif primitive == "mesh":  # triangles in the record itself (else None: a file, attached below)
            data = self.assets.inline_data(record, self.material(get("material")))
        ob, props = self._new_object(record, data)
        if self._poses is not None:  # set in bulk once the objects are linked (_build_nodes)
            self._poses.append((ob, get("position"), get("quaternion"), scale))
        else:
            _set_pose(ob, get("position"), get("quaternion"), scale)
        if primitive == "mesh" and data is None:
            self.assets.attach(ob, record, self.options.placeholders, self.meshes)
        _set_node_props(props, record, mode)
        # new objects are shown and rendered: only hiding is written
        if collision_only:
            ob.display_type = "WIRE"
            ob.hide_render = True
        elif not visible:
            ob.hide_render = ob.hide_viewport = True
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
            # orthoScale: the view's size in metres across the larger image side, which is Blender's
            # ortho_scale with the sensor fit on AUTO (the FOV's VERTICAL fit would scale the height)
            cam.type, cam.sensor_fit = "ORTHO", "AUTO"
            cam.ortho_scale = record.get("orthoScale")
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
        mesh.materials.append(paint_terrain(mesh, self.scene, record) or self.material(record.get("material")))
        ob = self.new_object(record, mesh)
        ob.location = record.get("center")
        return ob

    def build_instanced_visual(self, record: Record):
        from .instancing import build_instances
        return build_instances(self, record)

    def build_articulated(self, record: Record):
        from .robot_sensors import add_robot_sensors
        from .robots import build_robot
        root = build_robot(self, record)
        add_robot_sensors(self, root)  # the robot's own sensors (URDF sensor sets), on their links
        return root

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
        settings = scene.settings("gravity", "time_step", "solver", "environment", "weather")
        bl.gravity = settings["gravity"].get("gravity")  # scene.gravity, scene.time_step: a pass each
        props = bl.rscene
        props.source = self.source.name
        props.time_step = settings["time_step"].get("dt")
        solver = settings["solver"]
        props.solver_iterations = solver.get("iterations")
        props.erp = solver.get("erp")
        props.default_friction = solver.get("defaultFriction")
        props.default_restitution = solver.get("defaultRestitution")
        if self.options.import_world:
            environment, weather = settings["environment"], settings["weather"]
            bl.world = world.build_world(f"{self.name} world", environment, weather, scene.resolve, self.warn)
            world.apply_color_management(bl, environment)
        first = self.first_camera or self.first_sensor_camera
        if first and self.options.set_active_camera:
            ob, record = first
            bl.camera = ob
            bl.render.resolution_x, bl.render.resolution_y = int(record.get("width")), int(record.get("height"))
            bl.render.resolution_percentage = 100


def _stand_on_ground(scene) -> None:
    """A robot read alone, on a ground: a static plane at z = 0 and a floating base lifted so that its lowest
    collision shape rests on it (a fixed base stays where its file fixes it)."""
    from ..formats.robot_files import posed_links_for_record, robot_for_record
    from ..formats.urdf import add_ground
    from ..sim.link_points import lowest_point
    for record in scene.of("articulated"):
        robot = robot_for_record(scene, record)
        lowest = lowest_point(robot, posed_links_for_record(scene, record, robot)) if robot.floating_base else None
        if lowest is not None:
            gc = [float(v) for v in record.get("generalizedCoordinate")]
            gc[2] -= lowest
            record.set("generalizedCoordinate", gc)
            record.set("position", tuple(gc[0:3]))
    add_ground(scene)


def import_scene_file(path: str, bl_scene=None, options: ImportOptions | None = None, report=None,
                      progress=None) -> bpy.types.Collection:
    """Read a scene file (any supported format) and build it into ``bl_scene``."""
    if path.lower().endswith(".rscene"):
        scene = rscene.read(path)
    else:
        from ..formats import registry
        scene = registry.read_scene(path)
        if options is not None and options.ground and scene.source_format in ("urdf", "mjcf"):
            _stand_on_ground(scene)
    if report:
        for warning in scene.warnings:
            report("WARNING", str(warning))
    builder = SceneBuilder(scene, bl_scene or bpy.context.scene, options, report, progress)
    return builder.build()


__all__ = ["ImportOptions", "SceneBuilder", "import_scene_file", "math"]
