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
(Blender's ``bound_box`` order). Silhouettes are limited to the image: ``px_count_all`` does not count
the part of an object outside the frame (the toolkit renders a larger canvas for that).
"""
from __future__ import annotations

import numpy as np

__all__ = ["DEPTH_SCALES", "bop_bbox", "camera_entry", "choose_depth_scale", "depth_png", "gt_entry",
           "gt_info_entry", "mask_png_values", "pose_from_box_corners"]

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


def gt_info_entry(visible_mask, full_mask, depth_values) -> dict:
    """A ``scene_gt_info.json`` entry. ``full_mask`` None (no amodal silhouette rendered) leaves out
    what needs it (``bbox_obj``, ``px_count_all``, ``px_count_valid``, ``visib_fract``)."""
    visible = np.asarray(visible_mask, dtype=bool)
    entry = {"bbox_visib": bop_bbox(visible), "px_count_visib": int(visible.sum())}
    if full_mask is None:
        return entry
    full = np.asarray(full_mask, dtype=bool)
    count_all = int(full.sum())
    entry.update({
        "bbox_obj": bop_bbox(full) if entry["px_count_visib"] > 0 else [-1, -1, -1, -1],
        "px_count_all": count_all,
        "px_count_valid": int(np.count_nonzero(np.asarray(depth_values)[full] > 0)),
        "visib_fract": entry["px_count_visib"] / count_all if count_all > 0 else 0.0,
    })
    return entry
