"""Mesh files and ``.rasset`` descriptors referenced by ``object`` records.

Each file is imported once with Blender's own importer into a collection that is not linked to the
scene; every object using it shows that collection as an instance (shared data, fast, editable in one
place). A ``.rasset`` adds its collision shapes as hidden wireframe children. A mesh inlined in its record
(:mod:`rscene_addon.scene_geometry.inline_mesh`) becomes the object's own mesh data. A missing file gives a
clearly named placeholder and a warning.
"""
from __future__ import annotations

import os

import bpy

from ..scene_geometry.collada import read_collada
from ..scene_geometry.inline_mesh import has_inline_mesh, inline_mesh
from ..scene_geometry.mesh_files import MeshFormatError, Rasset, read_rasset
from . import conventions as cv
from .materials import link_texture, new_material
from .meshes import mesh_from_arrays, mesh_from_triangles

IMPORTERS = {
    ".gltf": lambda p: bpy.ops.import_scene.gltf(filepath=p),
    ".glb": lambda p: bpy.ops.import_scene.gltf(filepath=p),
    ".obj": lambda p: bpy.ops.wm.obj_import(filepath=p, forward_axis="Y", up_axis="Z"),
    ".stl": lambda p: bpy.ops.wm.stl_import(filepath=p),
    ".ply": lambda p: bpy.ops.wm.ply_import(filepath=p),
    ".fbx": lambda p: bpy.ops.import_scene.fbx(filepath=p),
    ".usd": lambda p: bpy.ops.wm.usd_import(filepath=p),
    ".usda": lambda p: bpy.ops.wm.usd_import(filepath=p),
    ".usdc": lambda p: bpy.ops.wm.usd_import(filepath=p),
    ".usdz": lambda p: bpy.ops.wm.usd_import(filepath=p),
}


def _collada_object(path: str, warn):
    """One mesh object for a ``.dae`` file (Blender 5.x has no COLLADA importer; 4.5's is not used either,
    so both lines read the same triangles): the pure reader's arrays through ``foreach_set``."""
    mesh = read_collada(path)
    name = os.path.basename(path)
    data = mesh_from_triangles(name, mesh.vertices, mesh.triangles, mesh.normals, mesh.uvs, mesh.material_index)
    for mat in mesh.materials:
        material = new_material(f"{os.path.splitext(name)[0]} {mat.name}", mat.rgba)
        if mat.texture:
            if os.path.isfile(mat.texture):
                link_texture(material, mat.texture)
            else:
                warn(f"{name}: texture {os.path.basename(mat.texture)!r} not found")
        data.materials.append(material)
    return bpy.data.objects.new(name, data)


class AssetLibrary:
    def __init__(self, scene, warn):
        self.scene = scene
        self.warn = warn
        self.collections: dict[str, bpy.types.Collection | None] = {}
        self.pending_children: list = []

    def mesh_reference(self, record) -> str:
        for key in ("renderMeshPath", "mesh"):
            if record.schema.field(key):
                value = record.get(key)
                if value:
                    return value
        return ""

    def inline_data(self, record, material):
        """Mesh data for a record that carries its own triangles (CoppeliaSim's inline ``<vertices>``/
        ``<indices>``), with the record's material; None when it has none or they are malformed (warned:
        the object then takes the placeholder path of a missing file)."""
        if not has_inline_mesh(record):
            return None
        try:
            vertices, triangles = inline_mesh(record)
        except MeshFormatError as exc:
            self.warn(str(exc))
            return None
        data = mesh_from_arrays(os.path.basename(record.path or "") or "mesh", vertices, triangles)
        data.materials.append(material)
        return data

    def attach(self, ob, record, placeholders: bool, primitives) -> None:
        ref = self.mesh_reference(record)
        path = self.scene.resolve(ref) if ref else ""
        if path.lower().endswith(".rasset") and os.path.exists(path):
            try:
                descriptor = read_rasset(path)
            except (OSError, ValueError) as exc:
                self.warn(f"{record.path}: cannot read {ref}: {exc}")
                descriptor = Rasset("", [])
            self._instance(ob, descriptor.visual, record, placeholders)
            for i, shape in enumerate(descriptor.shapes):
                self._collision_child(ob, record, i, shape, primitives)
            return
        self._instance(ob, path, record, placeholders, ref)

    def _instance(self, ob, path: str, record, placeholders: bool, ref: str | None = None) -> None:
        collection = self.load(path) if path else None
        if collection is not None:
            ob.instance_type = "COLLECTION"
            ob.instance_collection = collection
            return
        shown = ref if ref is not None else path
        ob.rscene.missing_file = shown or "(none)"
        self.warn(f"{record.path}: mesh file {shown!r} not found" if shown else f"{record.path}: no mesh file given")
        if placeholders:
            ob.empty_display_type = "CUBE"
            ob.empty_display_size = 0.5
            ob.show_name = True
            ob.name = f"MISSING {os.path.basename(shown) or 'mesh'} ({os.path.basename(record.path)})"
            ob.rscene.name_at_import = ob.name  # not the path's last part: export must not see a rename

    def load(self, path: str):
        if path in self.collections:
            return self.collections[path]
        collection = None
        ext = os.path.splitext(path)[1].lower()
        importer = IMPORTERS.get(ext)
        if ext == ".dae" and os.path.exists(path):
            try:
                ob = _collada_object(path, self.warn)
            except MeshFormatError as exc:
                self.warn(f"cannot import {path}: {exc}")
            else:
                collection = bpy.data.collections.new(f"asset {os.path.basename(path)}")
                collection.objects.link(ob)
        elif importer is not None and os.path.exists(path):
            before = set(bpy.data.objects)
            try:
                result = importer(path)
            except RuntimeError as exc:
                self.warn(f"cannot import {path}: {exc}")
                result = {"CANCELLED"}
            new = [o for o in bpy.data.objects if o not in before]
            if new and "FINISHED" in result:
                collection = bpy.data.collections.new(f"asset {os.path.basename(path)}")
                for o in new:
                    for users in list(o.users_collection):
                        users.objects.unlink(o)
                    collection.objects.link(o)
        elif importer is None and os.path.exists(path):
            self.warn(f"no importer for {os.path.basename(path)}")
        self.collections[path] = collection
        return collection

    def _collision_child(self, ob, record, index, shape, primitives) -> None:
        kind = shape.type
        scale = (1.0, 1.0, 1.0)
        if kind == "box":
            data, scale = primitives.get("box"), shape.size
        elif kind == "sphere":
            data = primitives.get("sphere", shape.radius)
        elif kind in ("cylinder", "capsule"):
            data = primitives.get(kind, shape.radius, shape.height)
        else:
            data = None  # convex_mesh: shown as its bounds via an empty
        child = bpy.data.objects.new(f"{os.path.basename(record.path)} collision {index}", data)
        child.parent = ob
        child.location = shape.position
        child.rotation_mode = "QUATERNION"
        child.rotation_quaternion = cv.normalized_quat(shape.quaternion)
        child.scale = scale
        child.display_type = "WIRE"
        child.hide_render = True
        child.hide_select = True
        child["rscene_collision"] = kind
        self.pending_children.append(child)

    def take_children(self) -> list:
        """Collision children made since the last call; the builder links them beside their parent."""
        children, self.pending_children = self.pending_children, []
        return children
