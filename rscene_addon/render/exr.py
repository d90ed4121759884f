"""Image files through the OpenImageIO bundled with Blender: Cycles' multilayer EXR in, single-layer
EXR and PNG out. Arrays are top row first (OpenImageIO returns the file's rows top-down; Blender
writes its bottom-up buffers into EXR/PNG the right way up)."""
from __future__ import annotations

import numpy as np

from . import compat

__all__ = ["read_attributes", "read_image", "read_passes", "write_image"]


def read_passes(path: str, view_layer: str | None = None, channel_names: dict | None = None
                ) -> dict[str, np.ndarray]:
    """``{pass name: float32 (H, W, C)}`` from a multilayer EXR, channels in file order.

    Channel names are ``<view layer>.<pass>.<channel>``; ``view_layer`` picks one (default: the
    first seen). Pass names are normalised to this Blender's names (``compat.canonical_pass``).
    ``channel_names``, when given, receives ``{pass name: [channel, ...]}`` in the arrays' order.
    """
    oiio = compat.import_oiio()
    inp = oiio.ImageInput.open(path)
    if inp is None:
        raise RuntimeError(f"cannot open {path}: {oiio.geterror()}")
    channels: dict[str, list] = {}
    try:
        sub = 0
        while inp.seek_subimage(sub, 0):
            spec = inp.spec()
            pixels = inp.read_image(sub, 0, 0, spec.nchannels, "float")
            if pixels is None:
                raise RuntimeError(f"cannot read {path}: {inp.geterror()}")
            pixels = np.asarray(pixels, dtype=np.float32).reshape(spec.height, spec.width, spec.nchannels)
            for c, full in enumerate(spec.channelnames):
                parts = full.split(".")
                if len(parts) < 3:
                    layer, pass_name, chan = "", ".".join(parts[:-1]), parts[-1]
                else:
                    layer, pass_name, chan = parts[0], ".".join(parts[1:-1]), parts[-1]
                if view_layer is None:
                    view_layer = layer
                if layer != view_layer:
                    continue
                channels.setdefault(compat.canonical_pass(pass_name), []).append((chan, pixels[:, :, c]))
            sub += 1
    finally:
        inp.close()
    if channel_names is not None:
        channel_names.update({name: [c for c, _ in chans] for name, chans in channels.items()})
    return {name: np.stack([a for _, a in chans], axis=-1) for name, chans in channels.items()}


def read_attributes(path: str, prefix: str = "") -> dict[str, object]:
    """Header attributes of the first part whose names start with ``prefix`` (e.g. ``"cryptomatte/"``)."""
    oiio = compat.import_oiio()
    inp = oiio.ImageInput.open(path)
    if inp is None:
        raise RuntimeError(f"cannot open {path}: {oiio.geterror()}")
    try:
        return {a.name: a.value for a in inp.spec().extra_attribs if a.name.startswith(prefix)}
    finally:
        inp.close()


def write_image(path: str, array, channel_names=None, dtype: str = "float") -> None:
    """Write ``(H, W)`` or ``(H, W, C)`` to ``path`` (format from the extension); ``dtype`` is the
    stored type (``"float"``, ``"half"``, ``"uint8"``, ``"uint16"``)."""
    oiio = compat.import_oiio()
    a = np.asarray(array)
    if a.ndim == 2:
        a = a[:, :, None]
    h, w, c = a.shape
    spec = oiio.ImageSpec(w, h, c, getattr(oiio, {"float": "FLOAT", "half": "HALF", "uint8": "UINT8",
                                                   "uint16": "UINT16"}[dtype]))
    if channel_names:
        spec.channelnames = tuple(channel_names)
    if path.lower().endswith(".exr"):
        spec.attribute("compression", "zip")
    out = oiio.ImageOutput.create(path)
    if out is None:
        raise RuntimeError(f"cannot write {path}: {oiio.geterror()}")
    try:
        if not out.open(path, spec):
            raise RuntimeError(f"cannot write {path}: {out.geterror()}")
        pixel_type = {"float": np.float32, "half": np.float16, "uint8": np.uint8, "uint16": np.uint16}[dtype]
        if not out.write_image(np.ascontiguousarray(a, dtype=pixel_type)):
            raise RuntimeError(f"cannot write {path}: {out.geterror()}")
    finally:
        out.close()


def read_image(path: str, dtype: str = "float") -> np.ndarray:
    """``(H, W, C)`` of the first subimage, in ``dtype`` (``"float"``, ``"uint8"``, ``"uint16"``)."""
    oiio = compat.import_oiio()
    inp = oiio.ImageInput.open(path)
    if inp is None:
        raise RuntimeError(f"cannot open {path}: {oiio.geterror()}")
    try:
        spec = inp.spec()
        pixels = inp.read_image(0, 0, 0, spec.nchannels, dtype)
        if pixels is None:
            raise RuntimeError(f"cannot read {path}: {inp.geterror()}")
        return np.asarray(pixels).reshape(spec.height, spec.width, spec.nchannels)
    finally:
        inp.close()
