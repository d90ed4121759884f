"""Geometry products from one ray cast through every pixel centre (bpy): depth, ids, normals,
optical flow, object coordinates / NOCS and amodal masks.

Cycles takes depth, object index and normal from the first sample of a pixel, jittered inside the
pixel filter, so exact ids used to cost a 0.01 px filter and aliased RGB. Here the evaluated scene's
triangles (what :mod:`.caster` casts lidar rays against) are cast once per camera and frame through
the pixel centres with the camera's exact rays (``sensors.pixel_truth.pixel_rays``, starting at the
near plane like Cycles' camera rays); the hit distance is then recomputed in float64 on the triangle
hit, so a face-on plane's depth is exact. Cycles only renders RGB, with the scene's pixel filter.

Each evaluated instance is a *part* with its world matrix, known at any frame without reading its
mesh again (``part_matrices``). The 3D point behind a pixel and its part's matrices give:

* flow: ``M(t') M(t)^-1`` moves the point, the camera at t' projects it (``pixel_truth.rigid_flow``);
  exact for rigid parts (baked bodies, robot links); deforming meshes are treated as rigid;
* object coordinates: the point in its entity's own frame (the node object's world frame without
  scale, metres), and NOCS from the entity's tight box in that frame at that frame;
* amodal masks: the rays inside an instance's projected box cast against that instance alone.

The camera rays are cast with the lidar's machinery (``caster.PartedTriangles`` + ``CasterCache``):
on Embree, parts that moved are moved in place instead of building the scene again every frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..products.table import products_needing
from ..sensors import pixel_truth
from .caster import CasterCache, PartedTriangles, SceneTriangles, make_caster
from .caster import _static_mesh_key as _static_key
from .ids import GEOMETRY_TYPES
from .poses import blender_matrix

__all__ = ["CameraHits", "FrameGeometry", "GeometryPass", "camera_products", "needs_geometry"]


def _part_key(inst) -> tuple:
    """A name for an evaluated instance that stays the same from frame to frame."""
    parent = inst.parent.original.name if inst.is_instance and inst.parent is not None else ""
    pid = tuple(inst.persistent_id) if inst.is_instance else ()
    return inst.object.original.name, parent, pid


def _owner(inst):
    return inst.parent.original if inst.is_instance and inst.parent is not None else inst.object.original


def _visible_instances(depsgraph):
    for inst in depsgraph.object_instances:
        ob = inst.object
        if ob.type not in GEOMETRY_TYPES:
            continue
        owner = _owner(inst)
        if owner.hide_render or (not inst.is_instance and ob.original.hide_render):
            continue
        yield inst, owner


def mesh_arrays(ob) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(vertices (V, 3) float64, triangles (T, 3) int64, corner normals (T, 3, 3) float32, material
    slot (T,) int32)``, local."""
    mesh = ob.data if ob.type == "MESH" else ob.to_mesh()
    try:
        if mesh is None:
            return (np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros((0, 3, 3), np.float32),
                    np.zeros(0, np.int32))
        verts = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", verts)
        tris = mesh.loop_triangles
        faces = np.empty(len(tris) * 3, dtype=np.int32)
        tris.foreach_get("vertices", faces)
        loops = np.empty(len(tris) * 3, dtype=np.int32)
        tris.foreach_get("loops", loops)
        corner = np.empty(len(mesh.corner_normals) * 3, dtype=np.float32)
        mesh.corner_normals.foreach_get("vector", corner)
        normals = corner.reshape(-1, 3)[loops].reshape(-1, 3, 3) if len(loops) else np.zeros((0, 3, 3))
        slots = np.empty(len(tris), dtype=np.int32)
        tris.foreach_get("material_index", slots)
        return (verts.reshape(-1, 3).astype(np.float64), faces.reshape(-1, 3).astype(np.int64),
                normals.astype(np.float32), slots)
    finally:
        if ob.type != "MESH":
            ob.to_mesh_clear()


@dataclass
class _Part:
    key: tuple
    arrays: tuple  # local (vertices, triangles, corner normals, material slots)
    matrix: np.ndarray  # world, with scale
    entity: str | None  # entity key (None: not an entity)
    pass_index: int
    static: bool = False  # its mesh cannot change over the run (read once)
    materials: tuple = ()  # run-wide material id per material slot (-1 empty slot)


@dataclass
class CameraHits:
    """One camera's pixel-centre rays and what they hit (flat arrays, rows top-down)."""

    origins: np.ndarray  # (N, 3) camera centre (perspective) or points on the camera plane
    directions: np.ndarray  # (N, 3) unit, world
    depth_per_distance: np.ndarray  # (N,)
    triangle: np.ndarray  # (N,) -1 background
    part: np.ndarray  # (N,) -1 background
    distance: np.ndarray  # (N,) float64 from the origin, inf background
    near: float
    far: float
    points: np.ndarray  # (N, 3) world hit points, NaN background

    def depth(self, shape) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return (self.distance * self.depth_per_distance).astype(np.float32).reshape(shape)


class FrameGeometry:
    """The evaluated scene at one frame: its parts and one world-space triangle soup over them."""

    def __init__(self, parts: list, table, casters: CasterCache) -> None:
        self.parts = parts
        self.table = table
        self.casters = casters
        self.backend = casters.backend
        self.pass_index = np.array([p.pass_index for p in parts] + [0], dtype=np.int64)
        instance_ids = table.instance_lut[self.pass_index[:-1]] if parts else np.zeros(0, np.int32)
        # the lidar's parted soup (caster.PartedTriangles): parts with faces, in order; on Embree a
        # PartsCaster then moves the parts that moved instead of building the scene again
        self.triangles = PartedTriangles([((p.arrays[0], p.arrays[1]), p.matrix, int(iid), p.static)
                                          for p, iid in zip(parts, instance_ids)])
        tri_part = [np.full(len(p.arrays[1]), i, dtype=np.int32) for i, p in enumerate(parts) if len(p.arrays[1])]
        self.tri_part = np.concatenate(tri_part) if tri_part else np.zeros(0, np.int32)
        self._boxes = None
        self._tri_material = None
        self._planes = None
        self._corners = None

    def _triangle_planes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per triangle: normal (unnormalised, winding order) and its offset ``n . v0``, float64."""
        if self._planes is None:
            v = self.triangles.vertices[self.triangles.triangles]
            normal = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
            self._planes = normal, np.einsum("ij,ij->i", normal, v[:, 0])
        return self._planes

    def _corner_normals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per triangle: its three local corner normals ``(T, 3, 3)`` and whether they are all the same
        (flat shading: no interpolation needed)."""
        if self._corners is None:
            corner = np.concatenate([p.arrays[2] for p in self.parts if len(p.arrays[1])] or
                                    [np.zeros((0, 3, 3), np.float32)]).astype(np.float64)
            flat = np.all(corner == corner[:, :1], axis=(1, 2))
            self._corners = corner, flat
        return self._corners

    @property
    def caster(self):
        return self.casters.caster_for(self.triangles)

    # -- the camera's rays -------------------------------------------------------------------------

    def cast_camera(self, intrinsics, camera_to_world, near: float, far: float) -> CameraHits:
        origins, directions, per_distance = pixel_truth.pixel_rays(intrinsics, camera_to_world)
        start = near / per_distance  # camera rays start on the near plane (planar distance near)
        hits = self.caster.cast(origins + directions * start[:, None], directions,
                                float(far / per_distance.min()) if np.isfinite(far) else np.inf)
        triangle = np.asarray(hits.triangle, np.int64).copy()
        distance = np.full(len(triangle), np.inf)
        hit = np.flatnonzero(triangle >= 0)
        if hit.size:
            # the distance again in float64 on the plane of the triangle hit (Embree's is float32)
            normal, offset = self._triangle_planes()
            n = normal[triangle[hit]]
            denominator = np.einsum("ij,ij->i", n, directions[hit])
            if intrinsics.projection == "orthographic":
                along = np.einsum("ij,ij->i", n, origins[hit])
            else:
                along = np.einsum("ij,j->i", n, origins[0])
            with np.errstate(invalid="ignore", divide="ignore"):
                exact = (offset[triangle[hit]] - along) / denominator
            rough = start[hit] + hits.distance[hit]
            distance[hit] = np.where((denominator != 0) & np.isfinite(exact), exact, rough)
            beyond = distance[hit] * per_distance[hit] > far
            distance[hit[beyond]] = np.inf
            triangle[hit[beyond]] = -1
        part = np.where(triangle >= 0, self.tri_part[np.maximum(triangle, 0)] if len(self.tri_part) else -1, -1)
        points = np.full((len(triangle), 3), np.nan)
        seen = triangle >= 0
        points[seen] = origins[seen] + directions[seen] * distance[seen, None]
        return CameraHits(origins, directions, per_distance, triangle.astype(np.int32), part.astype(np.int32),
                          distance, float(near), float(far), points)

    # -- products ----------------------------------------------------------------------------------

    def material_image(self, hits: CameraHits, shape) -> np.ndarray:
        """Run-wide material id per pixel (``GeometryPass.materials``), -1 background or no material."""
        if self._tri_material is None:
            per_part = []
            for p in self.parts:
                if len(p.arrays[1]):
                    lut = np.array(p.materials + (-1,), dtype=np.int32)  # slot past the end: none
                    per_part.append(lut[np.clip(p.arrays[3], 0, len(lut) - 1)])
            self._tri_material = np.concatenate(per_part + [np.full(1, -1, np.int32)])
        return self._tri_material[hits.triangle].reshape(shape)  # triangle -1: the trailing -1

    def index_image(self, hits: CameraHits, shape) -> np.ndarray:
        """Pass indices per pixel (0 background), what Cycles' object index pass holds."""
        return self.pass_index[hits.part].reshape(shape).astype(np.float32)  # part -1: the trailing 0

    def normals_cv(self, hits: CameraHits, camera_to_world, shape) -> np.ndarray:
        """Unit shading normals (corner normals interpolated at the hit, as Cycles shades) facing the
        camera, in the OpenCV camera frame; background 0."""
        n = len(hits.part)
        out = np.zeros((n, 3))
        rows = np.flatnonzero(hits.part >= 0)
        if rows.size:
            tri = hits.triangle[rows]
            corner, flat = self._corner_normals()
            # flat-shaded triangles: the corner normals are the face's, i.e. the world plane's normal
            world = self._triangle_planes()[0][tri]
            smooth = np.flatnonzero(~flat[tri])
            if smooth.size:
                v = self.triangles.vertices[self.triangles.triangles[tri[smooth]]]
                weights = pixel_truth.barycentric(hits.points[rows[smooth]], v[:, 0], v[:, 1], v[:, 2])
                local = np.einsum("ij,ijk->ik", weights, corner[tri[smooth]])
                to_world = np.zeros((len(self.parts), 4, 4))
                for i, p in enumerate(self.parts):
                    linear = p.matrix[:3, :3]
                    if abs(np.linalg.det(linear)) > 1e-300:
                        to_world[i, :3, :3] = np.linalg.inv(linear).T
                world[smooth] = pixel_truth.transform_rows(to_world, hits.part[rows[smooth]], local)
            facing = np.einsum("ij,ij->i", world, hits.directions[rows]) > 0
            world[facing] *= -1.0
            norm = np.linalg.norm(world, axis=1, keepdims=True)
            world = np.where(norm > 1e-12, world / np.where(norm > 1e-12, norm, 1.0), 0.0)
            out[rows] = pixel_truth.rows_times(world, np.asarray(camera_to_world, np.float64)[:3, :3])  # R^T n
        return out.reshape(shape + (3,)).astype(np.float32)

    def object_frames(self, bl_objects) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per part: world -> entity frame ``(P, 4, 4)`` (unscaled node object), and the entity's tight
        box in that frame ``(P, 3)`` min and max (over all its parts at this frame)."""
        if self._boxes is not None:
            return self._boxes
        count = len(self.parts)
        to_object = np.full((count, 4, 4), np.nan)
        lo, hi = np.full((count, 3), np.nan), np.full((count, 3), np.nan)
        by_entity: dict[str, list[int]] = {}
        for i, p in enumerate(self.parts):
            if p.entity is not None:
                by_entity.setdefault(p.entity, []).append(i)
        for key, members in by_entity.items():
            owner = bl_objects.get(self.table.entity(key).name)
            frame = blender_matrix(owner.matrix_world) if owner is not None else self.parts[members[0]].matrix
            inverse = np.linalg.inv(frame)
            pts = [p.arrays[0] @ (inverse @ p.matrix)[:3, :3].T + (inverse @ p.matrix)[:3, 3]
                   for p in (self.parts[i] for i in members) if len(p.arrays[0])]
            if pts:
                allpts = np.concatenate(pts)
                lo[members], hi[members] = allpts.min(axis=0), allpts.max(axis=0)
            to_object[members] = inverse
        self._boxes = (to_object, lo, hi)
        return self._boxes

    def object_coordinates(self, hits: CameraHits, bl_objects, shape) -> tuple[np.ndarray, np.ndarray]:
        """``(coordinates (H, W, 3) m in the entity's frame, NOCS (H, W, 3) in [0, 1])``; NaN background."""
        to_object, lo, hi = self.object_frames(bl_objects)
        coords = pixel_truth.transform_rows(to_object, hits.part, hits.points)
        normalised = pixel_truth.nocs(coords, hits.part, lo, hi)
        return (coords.reshape(shape + (3,)).astype(np.float32),
                normalised.reshape(shape + (3,)).astype(np.float32))

    def flow(self, hits: CameraHits, intrinsics, camera_t, camera_u, matrices_u: dict, shape) -> np.ndarray:
        """Flow ``(H, W, 2)`` px to the frame whose part matrices are ``matrices_u`` and whose camera
        is ``camera_u`` (OpenCV camera to world); NaN where the point is gone or behind the camera."""
        motions = np.full((len(self.parts), 4, 4), np.nan)
        for i, p in enumerate(self.parts):
            later = matrices_u.get(p.key)
            if later is not None and abs(np.linalg.det(p.matrix[:3, :3])) > 1e-300:
                motions[i] = later @ np.linalg.inv(p.matrix)
        flow = pixel_truth.rigid_flow(intrinsics, camera_t, camera_u, hits.points, hits.part, motions,
                                      hits.directions)
        return flow.reshape(shape + (2,)).astype(np.float32)

    def amodal(self, hits: CameraHits, intrinsics, camera_to_world, instance_image) -> tuple:
        """``(ids (K,) int32, masks (K, H, W) bool, extended)``: every instance whose unoccluded
        silhouette covers a pixel centre, cast against that instance alone inside its projected box;
        ``extended`` ``{id: (px_count_all, bbox_obj)}`` counts that silhouette on a canvas 3x the image
        with the image in its middle, as BOP's ``calc_gt_info.py`` does (``bbox_obj`` ``[x, y, w, h]``,
        w = last - first column, may reach outside the image); perspective cameras only."""
        h, w = intrinsics.height, intrinsics.width
        tris, ids = self.triangles.triangles, self.triangles.object_ids
        visible = np.asarray(instance_image).ravel()
        out_ids, out_masks, extended = [], [], {}
        for iid in np.unique(ids[ids >= 0]) if len(ids) else ():
            own = tris[ids == iid]
            used, remapped = np.unique(own, return_inverse=True)
            verts = self.triangles.vertices[used]
            rows = self._pixels_in_view(intrinsics, camera_to_world, verts, hits.near)
            mask = visible == iid
            alone = None
            if rows.size:
                alone = make_caster(SceneTriangles(verts, remapped.reshape(-1, 3),
                                                   np.full(len(own), iid, np.int32)), self.backend)
                start = hits.near / hits.depth_per_distance[rows]
                got = alone.cast(hits.origins[rows] + hits.directions[rows] * start[:, None],
                                 hits.directions[rows], np.inf)
                with np.errstate(invalid="ignore"):
                    inside = (start + got.distance) * hits.depth_per_distance[rows] <= hits.far
                mask[rows[inside & (got.triangle >= 0)]] = True
            if mask.any():
                out_ids.append(int(iid))
                out_masks.append(mask.reshape(h, w))
                if intrinsics.projection != "orthographic" and alone is not None:
                    extended[int(iid)] = self._beyond_the_image(intrinsics, camera_to_world, verts, alone,
                                                                hits, out_masks[-1])
        masks = np.stack(out_masks) if out_masks else np.zeros((0, h, w), bool)
        return np.asarray(out_ids, np.int32), masks, extended

    @staticmethod
    def _beyond_the_image(intrinsics, camera_to_world, verts, alone, hits, mask) -> tuple[int, list]:
        """``(px_count_all, bbox_obj)`` of a silhouette on BOP's canvas: the image's own pixels
        (``mask``) plus the hits of rays through the canvas pixels outside the image."""
        h, w = intrinsics.height, intrinsics.width
        uv, z = pixel_truth.project(intrinsics, camera_to_world, verts)
        if np.all(z > hits.near):
            j0, j1 = max(int(np.ceil(uv[:, 0].min() - 0.5)), -w), min(int(np.floor(uv[:, 0].max() - 0.5)), 2 * w - 1)
            i0, i1 = max(int(np.ceil(uv[:, 1].min() - 0.5)), -h), min(int(np.floor(uv[:, 1].max() - 0.5)), 2 * h - 1)
        else:  # a vertex behind the camera: the projected box is unbounded
            j0, j1, i0, i1 = -w, 2 * w - 1, -h, 2 * h - 1
        ii, jj = np.mgrid[i0:i1 + 1, j0:j1 + 1] if i0 <= i1 and j0 <= j1 else (np.zeros(0, int),) * 2
        outside = ~((ii >= 0) & (ii < h) & (jj >= 0) & (jj < w))
        ii, jj = ii[outside].ravel(), jj[outside].ravel()
        rows_in, cols_in = np.nonzero(mask)
        if ii.size:
            origins, directions, per_distance = pixel_truth.rays_through(intrinsics, camera_to_world, jj, ii)
            start = hits.near / per_distance
            got = alone.cast(origins + directions * start[:, None], directions, np.inf)
            with np.errstate(invalid="ignore"):
                hit = (got.triangle >= 0) & ((start + got.distance) * per_distance <= hits.far)
            ii, jj = ii[hit], jj[hit]
        xs, ys = np.concatenate([cols_in, jj]), np.concatenate([rows_in, ii])
        bbox = [int(xs.min()), int(ys.min()), int(xs.max() - xs.min()), int(ys.max() - ys.min())]
        return int(len(xs)), bbox

    @staticmethod
    def _pixels_in_view(intrinsics, camera_to_world, verts, near: float) -> np.ndarray:
        """Pixel rows (flat) whose centres lie in the projected box of ``verts``; every pixel when a
        vertex is behind a perspective camera's near plane."""
        h, w = intrinsics.height, intrinsics.width
        uv, z = pixel_truth.project(intrinsics, camera_to_world, verts)
        if intrinsics.projection != "orthographic" and not np.all(z > near):
            if not np.any(z > near):
                return np.zeros(0, np.int64)
            return np.arange(h * w)
        j0, j1 = int(np.ceil(uv[:, 0].min() - 0.5)), int(np.floor(uv[:, 0].max() - 0.5))
        i0, i1 = int(np.ceil(uv[:, 1].min() - 0.5)), int(np.floor(uv[:, 1].max() - 0.5))
        j0, j1, i0, i1 = max(j0, 0), min(j1, w - 1), max(i0, 0), min(i1, h - 1)
        if j0 > j1 or i0 > i1:
            return np.zeros(0, np.int64)
        ii, jj = np.mgrid[i0:i1 + 1, j0:j1 + 1]
        return (ii * w + jj).ravel()


def _same_parts(last: list, parts: list) -> bool:
    """Same instances with the same matrices and the very same (meshes read once) or equal geometry."""
    if len(last) != len(parts):
        return False
    for a, b in zip(last, parts):
        if (a.key != b.key or a.pass_index != b.pass_index or a.materials != b.materials
                or not np.array_equal(a.matrix, b.matrix)):
            return False
        if a.arrays is not b.arrays and not all(np.array_equal(x, y) for x, y in zip(a.arrays, b.arrays)):
            return False
    return True


class GeometryPass:
    """Reads the evaluated scene's parts frame after frame (meshes that cannot change read once)."""

    def __init__(self, entities, backend: str = "auto") -> None:
        self.entities = entities
        self.backend = backend
        self._static: dict[int, tuple] = {}
        self._matrices: dict[int, dict] = {}
        self._last: FrameGeometry | None = None
        self.casters = CasterCache(backend)
        self._excluding: dict = {}  # (id(frame geometry), names) -> (frame geometry, it without them)
        self._excluding_casters: dict = {}  # names -> CasterCache
        # material ids: the file's materials in name order, so every chunk of a run numbers them alike
        self.materials = sorted(m.name for m in bpy.data.materials)
        self._material_id = {name: i for i, name in enumerate(self.materials)}

    def _slot_ids(self, ob) -> tuple:
        return tuple(self._material_id.get(slot.material.name, -1) if slot.material is not None else -1
                     for slot in ob.material_slots)

    def _pass_index(self, owner) -> tuple[str | None, int]:
        key = self.entities.key_for(owner)
        return key, (self.entities.table.pass_index[key] if key is not None else 0)

    def gather(self, depsgraph) -> FrameGeometry:
        parts = []
        frame_meshes: dict[int, tuple] = {}
        for inst, owner in _visible_instances(depsgraph):
            ob = inst.object
            static = _static_key(ob)
            if static is not None:
                arrays, cache, key = self._static.get(static), self._static, static
            else:
                key = ob.data.as_pointer() if ob.type == "MESH" and ob.data is not None else None
                arrays, cache = (frame_meshes.get(key) if key is not None else None), frame_meshes
            if arrays is None:
                arrays = mesh_arrays(ob)
                if key is not None:
                    cache[key] = arrays
            entity, index = self._pass_index(owner)
            parts.append(_Part(_part_key(inst), arrays, np.array(inst.matrix_world, dtype=np.float64), entity,
                               index, static is not None, self._slot_ids(ob)))
        last = self._last
        if last is not None and _same_parts(last.parts, parts):
            return last  # nothing moved: keep its triangles, caster and boxes
        self._last = FrameGeometry(parts, self.entities.table, self.casters)
        return self._last

    def excluding(self, frame_geometry: FrameGeometry, names: frozenset) -> FrameGeometry:
        """``frame_geometry`` without the parts of the objects ``names`` (a sensor's own mount: its depth
        rays pass through it); the same object when ``names`` is empty. Kept per frame and set of names."""
        if not names:
            return frame_geometry
        key = (id(frame_geometry), frozenset(names))
        cached = self._excluding.get(key)
        if cached is not None and cached[0] is frame_geometry:
            return cached[1]
        parts = [p for p in frame_geometry.parts if p.key[0] not in names and p.key[1] not in names]
        if len(self._excluding) > 8:
            self._excluding.clear()
        casters = self._excluding_casters.setdefault(key[1], CasterCache(self.backend))
        reduced = FrameGeometry(parts, frame_geometry.table, casters)
        self._excluding[key] = (frame_geometry, reduced)
        return reduced

    def part_matrices(self, frame: int, read) -> dict:
        """``{part key: world matrix}`` at ``frame``; ``read()`` gives the depsgraph with the scene set
        to that frame (called only when the frame is not cached). Keeps the last few frames."""
        if frame not in self._matrices:
            depsgraph = read()
            self._matrices[frame] = {_part_key(inst): np.array(inst.matrix_world, dtype=np.float64)
                                     for inst, _ in _visible_instances(depsgraph)}
            for old in sorted(self._matrices)[:-4]:
                del self._matrices[old]
        return self._matrices[frame]


def needs_geometry(spec, exact_ids: bool) -> bool:
    """Whether a camera spec takes anything from the pixel-centre ray casts (``products.table``)."""
    return bool(products_needing("rays", spec.products)
                or (exact_ids and products_needing("pixel_truth", spec.products)))


def camera_products(frame_geometry: FrameGeometry, spec, camera_to_world, exact_ids: bool, bl_objects,
                    flow=None) -> dict:
    """The arrays :meth:`.cameras.CameraRenderer.layers` takes from the ray casts for one camera:
    ``depth``/``index``/``normal`` (when ``exact_ids``), ``flow_forward``/``flow_backward`` (``flow``:
    ``(step, (camera_to_world, part matrices) at frame + step, the same at frame - step)``),
    ``object_coords``/``nocs``, ``amodal`` and ``material``, as its products ask."""
    k = spec.intrinsics
    shape = (k.height, k.width)
    products = set(spec.products)
    hits = frame_geometry.cast_camera(k, camera_to_world, spec.near, spec.far)
    index = frame_geometry.index_image(hits, shape)
    out = {}
    if exact_ids:
        out["depth"] = hits.depth(shape)
        out["index"] = index
        if "normal" in products:
            out["normal"] = frame_geometry.normals_cv(hits, camera_to_world, shape)
    if "flow" in products and flow is not None:
        step, (next_camera, next_parts), (prev_camera, prev_parts) = flow
        out["flow_step"] = step
        out["flow_forward"] = frame_geometry.flow(hits, k, camera_to_world, next_camera, next_parts, shape)
        out["flow_backward"] = frame_geometry.flow(hits, k, camera_to_world, prev_camera, prev_parts, shape)
    if "object_coords" in products:
        out["object_coords"], out["nocs"] = frame_geometry.object_coordinates(hits, bl_objects, shape)
    if "amodal" in products:
        instance = frame_geometry.table.decode(index)[0]
        out["amodal"] = frame_geometry.amodal(hits, k, camera_to_world, instance)
    if "material" in products:
        out["material"] = frame_geometry.material_image(hits, shape)
    return out
