"""BOP ground truth from arrays (pure): camera and object poses, masks, depth and the gt_info numbers.

Follows the BOP toolkit's ``docs/bop_datasets_format.md`` (thodan/bop_toolkit): per image

* ``scene_camera.json``: ``cam_K`` (3x3 row-wise), ``depth_scale`` (depth PNG x scale = mm),
  ``cam_R_w2c`` (3x3 row-wise), ``cam_t_w2c`` (mm);
* ``scene_gt.json``: per annotated instance ``obj_id``, ``cam_R_m2c`` (row-wise), ``cam_t_m2c`` (mm),
  so that ``s [u, v, 1] = K (R_m2c p_m + t_m2c)`` for a model point ``p_m`` in mm;
* ``scene_gt_info.json``: ``bbox_obj``, ``bbox_visib`` ``[x, y, w, h]`` as the toolkit's
  ``calc_2d_bbox`` gives them (``w`` = last column - first column; ``[-1, -1, -1, -1]`` when nothing
  is visible), ``px_count_all`` (full silhouette), ``px_count_valid`` (silhouette pixels with a
  non-zero depth PNG value), ``px_count_visib`` and ``visib_fract`` = visib / all (0 when all is 0);
* ``mask/`` (full silhouette) and ``mask_visib/`` PNGs ``{im_id:06d}_{gt_id:06d}.png``, 0 / 255;
* ``depth/{im_id:06d}.png``: planar depth (uint16) in units of ``depth_scale`` mm, 0 = no value.

The model frame (BOP: origin at the centre of the model's 3D bounding box) is the object's own axes
with the origin at the centre of its bounding box, in mm, the object's scale applied:
:func:`pose_from_box_corners` recovers it from the 8 world-space corners of the object's oriented box
(Blender's ``bound_box`` order). ``px_count_all`` and ``bbox_obj`` count the silhouette on a canvas 3x
the image, as the toolkit does, when the render gives them (perspective cameras with ``amodal``);
otherwise inside the image only, as the notes then say.
"""
from __future__ import annotations

import numpy as np

from .coco import rle_counts

__all__ = ["DEPTH_SCALES", "bop_bbox", "camera_entry", "coco_annotation", "choose_depth_scale", "depth_png", "diameter", "gt_entry",
           "gt_info_entry", "mask_png_values", "model_info", "model_ply", "pose_from_box_corners", "symmetries"]

DEPTH_SCALES = (0.1, 1.0, 10.0)  # mm per depth PNG unit, finest first (BOP's PBR images use 0.1)
_MAX_DEPTH_VALUE = 65535

# Blender's bound_box corner order: signs of (x, y, z) per corner
_BOX_SIGNS = np.array([(-1, -1, -1), (-1, -1, 1), (-1, 1, 1), (-1, 1, -1),
                       (1, -1, -1), (1, -1, 1), (1, 1, 1), (1, 1, -1)], dtype=np.float64)


def pose_from_box_corners(corners, tolerance: float = 1e-6):
    """``(R (3, 3), t (3,), size (3,))`` of an oriented box from its 8 corners in Blender's
    ``bound_box`` order (``-x-y-z, -x-y+z, -x+y+z, -x+y-z, +x-y-z, +x-y+z, +x+y+z, +x+y-z`` in the
    box's own axes): ``R`` maps box axes to world, ``t`` is the box centre, ``size`` the edge lengths.

    Returns None when the corners are no such box (e.g. an axis-aligned box around several parts
    listed in another order, a sheared or mirrored transform). A flat box (an edge of length 0) gets
    its missing axis from the other two."""
    c = np.asarray(corners, dtype=np.float64)
    if c.shape != (8, 3) or not np.all(np.isfinite(c)):
        return None
    centre = c.mean(axis=0)
    half = np.stack([(c[4] - c[0]), (c[3] - c[0]), (c[1] - c[0])]) / 2.0  # rows: half edges along x, y, z
    rebuilt = centre + _BOX_SIGNS @ half
    scale = max(float(np.abs(c - centre).max()), 1e-12)
    if np.abs(rebuilt - c).max() > tolerance * max(scale, 1.0):
        return None
    size = 2.0 * np.linalg.norm(half, axis=1)
    tiny = size <= tolerance * scale
    if tiny.sum() > 1:
        return None
    axes = np.zeros((3, 3))
    axes[~tiny] = half[~tiny] / (size[~tiny, None] / 2.0)
    if tiny.any():
        k = int(np.flatnonzero(tiny)[0])
        axes[k] = np.cross(axes[(k + 1) % 3], axes[(k + 2) % 3])
    rotation = axes.T  # columns: box axes in world
    if np.abs(rotation.T @ rotation - np.eye(3)).max() > 1e-5 or np.linalg.det(rotation) < 0:
        return None
    # re-orthonormalise (float noise from the corner rounding) with the nearest rotation
    u, _, vt = np.linalg.svd(rotation)
    return u @ vt, centre, size


def choose_depth_scale(depth_m) -> float:
    """The finest of :data:`DEPTH_SCALES` (mm per unit) that stores the largest finite depth."""
    d = np.asarray(depth_m, dtype=np.float64)
    finite = d[np.isfinite(d) & (d > 0)]
    far_mm = float(finite.max()) * 1000.0 if finite.size else 0.0
    for scale in DEPTH_SCALES:
        if far_mm / scale <= _MAX_DEPTH_VALUE:
            return scale
    return DEPTH_SCALES[-1]


def depth_png(depth_m, depth_scale: float) -> np.ndarray:
    """uint16 depth image: ``round(depth mm / depth_scale)``; 0 where there is no surface (inf/NaN,
    <= 0) or the value does not fit 16 bits."""
    d = np.asarray(depth_m, dtype=np.float64) * (1000.0 / float(depth_scale))
    ok = np.isfinite(d) & (d > 0)
    values = np.zeros(d.shape, dtype=np.uint16)
    rounded = np.rint(np.where(ok, d, 0.0))
    ok &= rounded <= _MAX_DEPTH_VALUE
    values[ok] = rounded[ok].astype(np.uint16)
    return values


def mask_png_values(mask) -> np.ndarray:
    """A BOP mask image: 255 inside, 0 outside (uint8)."""
    return np.where(np.asarray(mask, dtype=bool), 255, 0).astype(np.uint8)


def bop_bbox(mask) -> list[int]:
    """``[x, y, w, h]`` as the BOP toolkit's ``calc_2d_bbox`` (``w = max x - min x``), or
    ``[-1, -1, -1, -1]`` for an empty mask."""
    mask = np.asarray(mask, dtype=bool)
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    if cols.size == 0:
        return [-1, -1, -1, -1]
    return [int(cols[0]), int(rows[0]), int(cols[-1] - cols[0]), int(rows[-1] - rows[0])]


def _rows(m) -> list[float]:
    return [float(v) for v in np.asarray(m, dtype=np.float64).ravel()]


def camera_entry(K, camera_to_world_cv, depth_scale: float) -> dict:
    """A ``scene_camera.json`` entry from K and the OpenCV camera-to-world pose (m)."""
    c2w = np.asarray(camera_to_world_cv, dtype=np.float64)
    r_w2c = c2w[:3, :3].T
    t_w2c = -r_w2c @ c2w[:3, 3]
    return {"cam_K": _rows(K), "depth_scale": float(depth_scale), "cam_R_w2c": _rows(r_w2c),
            "cam_t_w2c": _rows(t_w2c * 1000.0)}


def gt_entry(obj_id: int, model_to_world_r, model_to_world_t, camera_to_world_cv) -> dict:
    """A ``scene_gt.json`` entry: the model pose (rotation, translation in m, world frame) seen from
    the camera (OpenCV camera-to-world, m); translation written in mm."""
    c2w = np.asarray(camera_to_world_cv, dtype=np.float64)
    r_w2c = c2w[:3, :3].T
    r = r_w2c @ np.asarray(model_to_world_r, dtype=np.float64)
    t = r_w2c @ (np.asarray(model_to_world_t, dtype=np.float64) - c2w[:3, 3])
    return {"cam_R_m2c": _rows(r), "cam_t_m2c": _rows(t * 1000.0), "obj_id": int(obj_id)}


def gt_info_entry(visible_mask, full_mask, depth_values, extended=None) -> dict:
    """A ``scene_gt_info.json`` entry. ``full_mask`` None (no amodal silhouette rendered) leaves out
    what needs it (``bbox_obj``, ``px_count_all``, ``px_count_valid``, ``visib_fract``). ``extended``
    ``(px_count_all, bbox_obj)`` of the silhouette on BOP's canvas 3x the image (the renderer's
    ``render.geometry_pass.amodal``) replaces the counts inside the image."""
    visible = np.asarray(visible_mask, dtype=bool)
    entry = {"bbox_visib": bop_bbox(visible), "px_count_visib": int(visible.sum())}
    if full_mask is None:
        return entry
    full = np.asarray(full_mask, dtype=bool)
    count_all, bbox_obj = int(full.sum()), bop_bbox(full)
    if extended is not None:
        count_all, bbox_obj = int(extended[0]), [int(v) for v in extended[1]]
    entry.update({
        "bbox_obj": bbox_obj if entry["px_count_visib"] > 0 else [-1, -1, -1, -1],
        "px_count_all": count_all,
        "px_count_valid": int(np.count_nonzero(np.asarray(depth_values)[full] > 0)),
        "visib_fract": entry["px_count_visib"] / count_all if count_all > 0 else 0.0,
    })
    return entry


# -- models ----------------------------------------------------------------------------------------

_EXACT_DIAMETER_POINTS = 20000


def model_ply(vertices_mm, triangles) -> bytes:
    """A BOP model: binary little-endian PLY, ``vertex`` x y z float32 (mm, model frame) and ``face``
    ``vertex_indices`` (uchar count, int32 indices), what the toolkit's ``inout.load_ply`` reads."""
    v = np.ascontiguousarray(vertices_mm, dtype="<f4").reshape(-1, 3)
    f = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(f) and (f.min() < 0 or f.max() >= len(v)):
        raise ValueError("model triangles index past the vertices")
    header = ("ply\nformat binary_little_endian 1.0\ncomment rscene_addon BOP model, mm, model frame\n"
              f"element vertex {len(v)}\nproperty float x\nproperty float y\nproperty float z\n"
              f"element face {len(f)}\nproperty list uchar int vertex_indices\nend_header\n").encode("ascii")
    faces = np.zeros(len(f), dtype=[("n", "u1"), ("i", "<i4", (3,))])
    faces["n"], faces["i"] = 3, f
    return header + v.tobytes() + faces.tobytes()


def diameter(points) -> tuple[float, bool]:
    """``(largest distance between two points, exact)``: exact up to 20,000 points (in blocks); above,
    the largest distance among the points extreme along 2,000 directions spread over the sphere, at
    least ``cos(0.07)`` = 0.9975 of the diameter (every direction is within 0.06 rad of one of them,
    measured over 200,000 random ones, and the extremes along it are at least the diameter times the
    cosine apart), returned with ``exact`` False."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    exact = len(p) <= _EXACT_DIAMETER_POINTS
    if not exact:
        n = 2000
        k = np.arange(n) + 0.5
        phi, theta = np.arccos(1 - 2 * k / n), np.pi * (1 + 5 ** 0.5) * k
        dirs = np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)
        keep = []
        for i in range(0, n, 100):  # (points x 100) at a time
            proj = p @ dirs[i:i + 100].T
            keep += [proj.argmax(axis=0), proj.argmin(axis=0)]
        p = p[np.unique(np.concatenate(keep))]
    best = 0.0
    for i in range(0, len(p), 1024):
        block = p[i:i + 1024]
        d2 = ((block[:, None, :] - p[None, :, :]) ** 2).sum(axis=-1)
        best = max(best, float(d2.max(initial=0.0)))
    return best ** 0.5, exact


def _proper_signed_permutations() -> list[np.ndarray]:
    out = []
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        for signs in np.ndindex(2, 2, 2):
            m = np.zeros((3, 3))
            m[range(3), perm] = [1 - 2 * s for s in signs]
            if np.linalg.det(m) > 0:
                out.append(m)
    return out


def symmetries(primitive: str, size, tolerance: float = 1e-4) -> dict:
    """BOP ``symmetries_discrete`` (4x4 row-major, mm) / ``symmetries_continuous`` of a primitive of
    box ``size`` centred in its model frame: a box's rotations that map its extents onto themselves, a
    sphere's (two axes, as BOP lists them), a cylinder or capsule about z plus the flip about x, a
    cone about z. Geometric only: a texture that breaks them is not looked at. ``{}`` otherwise."""
    s = np.asarray(size, dtype=np.float64)
    same = lambda a, b: abs(a - b) <= tolerance * max(abs(a), abs(b), 1.0)  # noqa: E731
    z_axis = {"axis": [0, 0, 1], "offset": [0, 0, 0]}
    flip_x = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1]
    if primitive in ("box", "ground"):
        found = []
        for m in _proper_signed_permutations():
            if np.allclose(np.abs(m) @ s, s, rtol=tolerance, atol=tolerance) and not np.allclose(m, np.eye(3)):
                t = np.eye(4)
                t[:3, :3] = m
                found.append([float(v) + 0.0 for v in t.ravel()])
        return {"symmetries_discrete": found} if found else {}
    if primitive == "sphere" and same(s[0], s[1]) and same(s[1], s[2]):
        return {"symmetries_continuous": [z_axis, {"axis": [1, 0, 0], "offset": [0, 0, 0]}]}
    if primitive in ("cylinder", "capsule") and same(s[0], s[1]):
        return {"symmetries_continuous": [z_axis], "symmetries_discrete": [flip_x]}
    if primitive == "cone" and same(s[0], s[1]):
        return {"symmetries_continuous": [z_axis]}
    return {}


def model_info(vertices_mm, primitive: str = "") -> dict:
    """A ``models_info.json`` entry: ``diameter``, ``min_x/y/z``, ``size_x/y/z`` (mm) and the
    primitive's symmetries."""
    v = np.asarray(vertices_mm, dtype=np.float64).reshape(-1, 3)
    lo, hi = v.min(axis=0), v.max(axis=0)
    d, _ = diameter(v)
    info = {"diameter": d, "min_x": lo[0], "min_y": lo[1], "min_z": lo[2],
            "size_x": hi[0] - lo[0], "size_y": hi[1] - lo[1], "size_z": hi[2] - lo[2]}
    info = {k: float(val) for k, val in info.items()}
    info.update(symmetries(primitive, hi - lo))
    return info


def coco_annotation(annotation_id: int, im_id: int, obj_id: int, visible_mask, full_mask, info: dict) -> dict:
    """One ``scene_gt_coco.json`` annotation as the toolkit's ``calc_gt_coco.py`` makes it: uncompressed
    RLE of the visible mask, the amodal box (the visible one without ``full_mask``), ``ignore`` below 10%
    visibility."""
    visible = np.asarray(visible_mask, dtype=bool)
    box_mask = np.asarray(full_mask, dtype=bool) if full_mask is not None else visible
    rows, cols = np.flatnonzero(box_mask.any(axis=1)), np.flatnonzero(box_mask.any(axis=0))
    bbox = [int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1)]
    entry = {"id": annotation_id, "image_id": im_id, "category_id": obj_id, "iscrowd": 0,
             "area": int(visible.sum()), "bbox": bbox, "width": visible.shape[1], "height": visible.shape[0],
             "segmentation": {"counts": [int(c) for c in rle_counts(visible)], "size": list(visible.shape)}}
    if "visib_fract" in info:
        entry["ignore"] = bool(info["visib_fract"] < 0.1)
    return entry
