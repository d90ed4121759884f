"""Preview images: depth, ids, normals and flow as 8-bit RGB a person can glance at (pure).

A layer with ``preview`` in the product table (:mod:`.table`) also writes
``{sensor}/{layer}_preview_{frame:05d}.png`` when ``RenderOptions.previews`` is on. They are pictures
of the arrays beside them, not data: each maps its layer's value to ``(H, W, 3) uint8``, pixels
without a value (background, NaN) black.

* ``depth``: a rainbow from the frame's nearest (red) to farthest (blue) finite depth: HSV
  ``(2/3 * (d - near) / (far - near), 1, 1)``;
* ``instance`` / ``class``: one colour per id, the hue stepped by the golden ratio (HSV
  ``(frac(id * 0.618034), 0.75, 0.95)``); background ``-1`` / ``0`` black;
* ``normal``: ``(n + 1) / 2`` per channel (x red, y green, z blue, OpenCV camera frame);
* ``flow``: the usual flow wheel: HSV hue = direction ``atan2(v, u)`` (0 deg = right, 90 deg = down),
  saturation 1, value = ``|flow| / max |flow|`` of the frame.
"""
from __future__ import annotations

import numpy as np

__all__ = ["PREVIEWS", "UNITS", "hsv_to_rgb", "preview"]

GOLDEN = 0.6180339887498949
DEPTH_HUES = 2.0 / 3.0  # red (near) .. blue (far)

def _to_u8(rgb) -> np.ndarray:
    return np.clip(np.rint(np.asarray(rgb, np.float64) * 255.0), 0, 255).astype(np.uint8)


def hsv_to_rgb(h, s, v) -> np.ndarray:
    """HSV (``h`` in turns [0, 1), ``s``, ``v`` in [0, 1]) -> RGB ``(..., 3)`` floats (the hexcone model)."""
    h, s, v = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in (h, s, v)))
    h6 = (h % 1.0) * 6.0
    sector = np.floor(h6).astype(int) % 6
    f = h6 - np.floor(h6)
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    choices = [np.stack(c, axis=-1) for c in ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))]
    return np.choose(sector[..., None], choices)


def _depth(depth) -> np.ndarray:
    d = np.asarray(depth, np.float64)
    ok = np.isfinite(d)
    out = np.zeros((*d.shape, 3), np.uint8)
    if ok.any():
        near, far = d[ok].min(), d[ok].max()
        x = (d[ok] - near) / (far - near) if far > near else np.zeros(int(ok.sum()))
        out[ok] = _to_u8(hsv_to_rgb(x * DEPTH_HUES, 1.0, 1.0))
    return out


def _ids(background):
    def colour(ids) -> np.ndarray:
        ids = np.asarray(ids, np.int64)
        rgb = _to_u8(hsv_to_rgb((ids * GOLDEN) % 1.0, 0.75, 0.95))
        rgb[background(ids)] = 0
        return rgb
    return colour


def _normal(normal) -> np.ndarray:
    n = np.asarray(normal, np.float64)
    rgb = _to_u8((np.nan_to_num(n) + 1.0) / 2.0)
    rgb[~np.isfinite(n).all(axis=-1) | ~np.any(n != 0.0, axis=-1)] = 0
    return rgb


def _flow(flow) -> np.ndarray:
    f = np.asarray(flow, np.float64)
    ok = np.isfinite(f).all(axis=-1)
    magnitude = np.where(ok, np.hypot(f[..., 0], f[..., 1]), 0.0)
    top = magnitude.max() if magnitude.size else 0.0
    hue = np.where(ok, np.arctan2(np.nan_to_num(f[..., 1]), np.nan_to_num(f[..., 0])) / (2 * np.pi), 0.0) % 1.0
    rgb = _to_u8(hsv_to_rgb(hue, 1.0, magnitude / top if top > 0 else 0.0))
    rgb[~ok] = 0
    return rgb


PREVIEWS = {
    "depth": _depth,
    "instance": _ids(lambda ids: ids < 0),
    "class": _ids(lambda ids: ids <= 0),
    "normal": _normal,
    "flow": _flow,
}

UNITS = {
    "depth": "preview (not data): HSV (2/3 (d - near) / (far - near), 1, 1), the frame's nearest red, "
             "farthest blue; background black",
    "instance": "preview (not data): HSV (frac(id * 0.618034), 0.75, 0.95) per instance id; background black",
    "class": "preview (not data): HSV (frac(id * 0.618034), 0.75, 0.95) per class id; unlabelled black",
    "normal": "preview (not data): (n + 1) / 2 per channel, OpenCV camera frame; background black",
    "flow": "preview (not data): HSV hue = direction atan2(v, u) (0 right, 90 deg down), value = |flow| / "
            "the frame's largest; NaN black",
}


def preview(kind: str, value) -> np.ndarray:
    """The ``(H, W, 3) uint8`` preview of a layer's ``value`` with the colour mapping ``kind``."""
    return PREVIEWS[kind](value)
