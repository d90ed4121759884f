"""Per-pixel ground truth from the 3D point behind each pixel (pure: numpy only).

Everything here works on flat arrays of pixels (row-major, rows top-down, ``N = H * W``) and on
*parts*: rigid pieces of geometry, each with a 4x4 world matrix per frame. A pixel knows the part it
hit (``part`` ``(N,)`` int, -1 for background) and the world point it hit. From that:

* :func:`pixel_rays` the rays through pixel centres of a camera (OpenCV frame, ``camera_to_world``);
* :func:`rigid_flow` optical flow in pixels (u right, v down) from frame t to frame t': the point is
  moved by its part's motion ``M(t') M(t)^-1`` and projected with the camera at t'. Background follows
  the camera: a perspective camera sees it at infinity (its direction turned by the camera's
  rotation); an orthographic camera has no background flow (NaN). Points that land behind a
  perspective camera get NaN;
* :func:`transform_rows` per-pixel rigid transforms (object coordinates: world -> object frame);
* :func:`nocs` Normalised Object Coordinate Space (Wang et al. 2019): the object's tight box centred
  at 0.5 and scaled so its diagonal is 1, so coordinates lie in ``[0, 1]^3`` and keep the shape;
* :func:`visibility` BOP's ``visib_fract = px_count_visib / px_count_all``;
* :func:`barycentric` weights of points on triangles (shading normals).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["barycentric", "nocs", "pixel_rays", "project", "rigid_flow", "rows_times", "transform_rows",
           "visibility"]


def _rigid(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"expected a 4x4 matrix, got {m.shape}")
    return m


def pixel_rays(intrinsics, camera_to_world) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rays through every pixel centre: ``origins (N, 3)``, unit ``directions (N, 3)`` (world) and
    ``depth_per_distance (N,)``, the planar depth (along the optical axis) per metre along the ray.

    ``camera_to_world`` maps OpenCV camera points (+x right, +y down, +z forward) to the world; an
    :class:`~.intrinsics.OrthographicIntrinsics` gives parallel rays from the camera's plane."""
    c2w = _rigid(camera_to_world)
    rotation, centre = c2w[:3, :3], c2w[:3, 3]
    local, per_distance = _camera_rays(intrinsics)
    n = len(per_distance)
    if intrinsics.projection == "orthographic":
        return rows_times(local, rotation.T) + centre, np.repeat(rotation[:, 2][None, :], n, axis=0), per_distance
    return np.broadcast_to(centre, (n, 3)), rows_times(local, rotation.T), per_distance


def rays_through(intrinsics, camera_to_world, columns, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`pixel_rays` gives, for the centres of pixels ``(columns, rows)`` of a perspective
    camera, which may lie outside the image (BOP counts silhouettes on a canvas 3x the image)."""
    c2w = _rigid(camera_to_world)
    k = intrinsics
    local = np.stack([(np.asarray(columns) + 0.5 - k.cx) / k.fx, (np.asarray(rows) + 0.5 - k.cy) / k.fy,
                      np.ones(len(columns))], axis=1)
    norm = np.linalg.norm(local, axis=1)
    directions = rows_times(local / norm[:, None], c2w[:3, :3].T)
    return np.broadcast_to(c2w[:3, 3], directions.shape), directions, 1.0 / norm


@lru_cache(maxsize=8)
def _pixel_centres(width: int, height: int) -> np.ndarray:
    """``(N, 2)`` pixel-centre coordinates ``(u, v)``, rows top-down (read-only, cached)."""
    v, u = np.divmod(np.arange(width * height), width)
    centres = np.stack([u + 0.5, v + 0.5], axis=1)
    centres.flags.writeable = False
    return centres


@lru_cache(maxsize=8)
def _camera_rays(intrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Per intrinsics (frozen, so cached): perspective unit rays, or orthographic origins on the camera
    plane, in the camera frame ``(N, 3)``, and planar depth per metre ``(N,)``. Read-only arrays."""
    h, w = intrinsics.height, intrinsics.width
    if intrinsics.projection == "orthographic":
        v, u = np.mgrid[0:h, 0:w]
        s = intrinsics.pixel_size
        local = np.stack([(u.ravel() + 0.5 - intrinsics.cx) * s, (v.ravel() + 0.5 - intrinsics.cy) * s,
                          np.zeros(h * w)], axis=1)
        per_distance = np.ones(h * w)
    else:
        local = intrinsics.pixel_rays().reshape(-1, 3)
        per_distance = local[:, 2].copy()
    local.flags.writeable = per_distance.flags.writeable = False
    return local, per_distance


def project(intrinsics, camera_to_world, points) -> tuple[np.ndarray, np.ndarray]:
    """``(uv (N, 2) px, z (N,) m)`` of world points in a camera; a perspective camera gives NaN ``uv``
    for points at or behind its centre plane (``z <= 0``)."""
    c2w = _rigid(camera_to_world)
    p = rows_times(np.asarray(points, dtype=np.float64) - c2w[:3, 3], c2w[:3, :3])  # R^T (p - c) per row
    z = p[:, 2]
    if intrinsics.projection == "orthographic":
        return intrinsics.project(p), z
    with np.errstate(invalid="ignore", divide="ignore"):
        uv = intrinsics.project(p)
    uv[~(z > 0)] = np.nan
    return uv, z


def rows_times(rows, matrix) -> np.ndarray:
    """``rows (N, 3) @ matrix (3, 3)`` without BLAS: a BLAS matmul of a tall, thin array starts its
    threads and, on a loaded machine, took 10x longer than this loop in numpy's own einsum."""
    return np.einsum("ij,jk->ik", rows, np.asarray(matrix, dtype=np.float64))


_GROUPED_PARTS = 64  # up to this many different parts a transform goes part by part (no big gathers)


def transform_rows(matrices, index, points) -> np.ndarray:
    """``matrices[index[i]] @ points[i]`` for every row (4x4 affine, ``(P, 4, 4)``); rows with
    ``index < 0`` give NaN."""
    m = np.asarray(matrices, dtype=np.float64)
    p = np.asarray(points, dtype=np.float64)
    index = np.asarray(index)
    out = np.full(p.shape, np.nan)
    rows = np.flatnonzero(index >= 0)
    if rows.size == 0 or m.size == 0:
        return out
    present = np.flatnonzero(np.bincount(index[rows], minlength=len(m)))
    if len(present) <= _GROUPED_PARTS:
        for k in present:
            own = rows if len(present) == 1 else np.flatnonzero(index == k)
            out[own] = rows_times(p[own], m[k, :3, :3].T) + m[k, :3, 3]
        return out
    affine = np.ascontiguousarray(m[:, :3, :]).reshape(-1, 12)[index[rows]].reshape(-1, 3, 4)
    out[rows] = np.einsum("nij,nj->ni", affine[:, :, :3], p[rows]) + affine[:, :, 3]
    return out


def rigid_flow(intrinsics, camera_t, camera_u, points, part, motions, directions=None) -> np.ndarray:
    """Optical flow ``(N, 2)`` in pixels from frame t to frame u (u right, v down).

    ``points (N, 3)``: world points hit at t (any value where ``part < 0``); ``part (N,)``: the part
    each pixel hit, -1 for background; ``motions (P, 4, 4)``: each part's world motion from t to u,
    ``M_u @ inv(M_t)``. ``directions (N, 3)``: the pixels' world ray directions at t, for the
    background of a perspective camera (points at infinity, moved by the camera's rotation only);
    without them, or for an orthographic camera, background flow is NaN."""
    part = np.asarray(part)
    n = len(part)
    h, w = intrinsics.height, intrinsics.width
    if n != h * w:
        raise ValueError(f"{n} pixels for a {w}x{h} image")
    start = _pixel_centres(w, h)
    # world -> camera u composed with each part's motion: one transform per row
    to_camera = np.linalg.inv(_rigid(camera_u)) @ np.asarray(motions, dtype=np.float64).reshape(-1, 4, 4)
    p = transform_rows(to_camera, part, points)
    z = p[:, 2]
    if intrinsics.projection == "orthographic":
        uv = intrinsics.project(p)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            uv = intrinsics.project(p)
        uv[~(z > 0)] = np.nan
    background = part < 0
    if directions is not None and intrinsics.projection != "orthographic" and background.any():
        c2w = _rigid(camera_u)
        d = rows_times(np.asarray(directions, dtype=np.float64)[background], c2w[:3, :3])  # world -> camera u
        with np.errstate(invalid="ignore", divide="ignore"):
            far = np.stack([intrinsics.fx * d[:, 0] / d[:, 2] + intrinsics.cx,
                            intrinsics.fy * d[:, 1] / d[:, 2] + intrinsics.cy], axis=1)
        far[~(d[:, 2] > 0)] = np.nan
        uv[background] = far
    else:
        uv[background] = np.nan
    return uv - start


def nocs(coords, part, box_min, box_max) -> np.ndarray:
    """NOCS ``(N, 3)`` in ``[0, 1]^3`` of object coordinates ``coords (N, 3)``: each part's tight box
    (``box_min``/``box_max`` ``(P, 3)``, in the same object frame) centred at 0.5 and scaled by the
    inverse of its diagonal. NaN where ``part < 0``."""
    part = np.asarray(part)
    lo, hi = np.asarray(box_min, np.float64), np.asarray(box_max, np.float64)
    out = np.full(np.shape(coords), np.nan)
    rows = np.flatnonzero(part >= 0)
    if rows.size == 0:
        return out
    k = part[rows]
    diagonal = np.linalg.norm(hi - lo, axis=1)
    scale = np.where(diagonal > 0, 1.0 / np.where(diagonal > 0, diagonal, 1.0), 0.0)
    centre = 0.5 * (lo + hi)
    value = (np.asarray(coords, np.float64)[rows] - centre[k]) * scale[k][:, None] + 0.5
    out[rows] = np.clip(value, 0.0, 1.0)  # a hit point lies in its box up to rounding
    return out


def visibility(visible_pixels, all_pixels) -> float:
    """BOP's ``visib_fract``: visible / unoccluded (amodal) pixels; 0 for an object with no pixels."""
    return float(visible_pixels) / float(all_pixels) if all_pixels > 0 else 0.0


def barycentric(points, a, b, c) -> np.ndarray:
    """Barycentric weights ``(N, 3)`` of ``points`` in triangles ``a, b, c`` (each ``(N, 3)``), the
    points projected onto each triangle's plane; degenerate triangles get ``(1/3, 1/3, 1/3)``."""
    p, a, b, c = (np.asarray(x, dtype=np.float64) for x in (points, a, b, c))
    e0, e1, ep = b - a, c - a, p - a
    d00 = np.einsum("ij,ij->i", e0, e0)
    d01 = np.einsum("ij,ij->i", e0, e1)
    d11 = np.einsum("ij,ij->i", e1, e1)
    d20 = np.einsum("ij,ij->i", ep, e0)
    d21 = np.einsum("ij,ij->i", ep, e1)
    det = d00 * d11 - d01 * d01
    ok = np.abs(det) > 1e-30
    safe = np.where(ok, det, 1.0)
    wb = np.where(ok, (d11 * d20 - d01 * d21) / safe, 1.0 / 3.0)
    wc = np.where(ok, (d00 * d21 - d01 * d20) / safe, 1.0 / 3.0)
    return np.stack([1.0 - wb - wc, wb, wc], axis=1)
