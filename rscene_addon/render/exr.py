"""Image files read through the OpenImageIO bundled with Blender: Cycles' multilayer EXR, the PNG
Blender saves through the view transform (the writers, ``products.write``, need no Blender). Arrays are top row first (OpenImageIO returns the file's rows top-down; Blender
writes its bottom-up buffers into EXR/PNG the right way up)."""
from __future__ import annotations

import numpy as np

from . import compat

__all__ = ["read_attributes", "read_image", "read_passes"]


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
