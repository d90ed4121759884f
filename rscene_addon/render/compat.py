"""Blender 4.5 LTS / 5.0 differences that rendering meets, in one place.

* Pass names in the multilayer EXR: 4.5 ``IndexOB`` / ``IndexMA``, 5.0 ``Object Index`` /
  ``Material Index``; ``Combined``, ``Depth`` and ``Normal`` are the same.
* EXR layout: 4.5 writes one part with every channel, 5.0 one part per pass unless
  ``image_settings.use_exr_interleave`` is set. 5.0's multipart writer fails on non-square pixels
  ("Conflicting attributes found for header :: ViewLayer.Depth 'pixelAspectRatio'"), which
  ``fx != fy`` needs, so one interleaved part is written in both versions.
* Output format: 5.0 has ``image_settings.media_type`` (``'IMAGE'`` / ``'MULTI_LAYER_IMAGE'``), which
  must be set before ``file_format``; 4.5 has no such property.
* OpenImageIO ships inside Blender but is not on ``sys.path`` (both versions).
"""
from __future__ import annotations

import os
import sys

import bpy

IS_5 = bpy.app.version >= (5, 0, 0)

PASS_COMBINED = "Combined"
PASS_DEPTH = "Depth"
PASS_NORMAL = "Normal"
PASS_OBJECT_INDEX = "Object Index" if IS_5 else "IndexOB"
# names a pass may have in either version (a file written by the other version reads too)
PASS_ALIASES = {"IndexOB": "Object Index", "IndexMA": "Material Index"}


def canonical_pass(name: str) -> str:
    """The name this Blender uses for a pass name from either version."""
    if IS_5:
        return PASS_ALIASES.get(name, name)
    reverse = {v: k for k, v in PASS_ALIASES.items()}
    return reverse.get(name, name)


def _set_media_type(image_settings, media_type: str) -> None:
    if hasattr(image_settings, "media_type"):
        image_settings.media_type = media_type


def set_multilayer_exr(image_settings, codec: str = "ZIP") -> None:
    """32-bit float multilayer OpenEXR (lossless ``codec``)."""
    _set_media_type(image_settings, "MULTI_LAYER_IMAGE")
    image_settings.file_format = "OPEN_EXR_MULTILAYER"
    image_settings.color_depth = "32"
    image_settings.exr_codec = codec
    if hasattr(image_settings, "use_exr_interleave"):
        image_settings.use_exr_interleave = True


def set_png(image_settings, bit_depth: int = 8, compression: int = 15) -> None:
    """RGB PNG, 8 or 16 bits per channel (display-referred: the scene's view transform applies)."""
    _set_media_type(image_settings, "IMAGE")
    image_settings.file_format = "PNG"
    image_settings.color_mode = "RGB"
    image_settings.color_depth = str(int(bit_depth))
    image_settings.compression = compression


def enable_passes(view_layer) -> None:
    """Combined, Z (planar depth), Normal (world space) and Object Index passes."""
    view_layer.use_pass_combined = True
    view_layer.use_pass_z = True
    view_layer.use_pass_normal = True
    view_layer.use_pass_object_index = True


def bundled_site_packages() -> str:
    """Blender's own ``site-packages`` (OpenImageIO, PyOpenColorIO, ...)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return os.path.join(bpy.utils.resource_path("LOCAL"), "python", "lib", version, "site-packages")


def import_oiio():
    """The OpenImageIO module shipped inside Blender (imported from its bundled site-packages)."""
    try:
        import OpenImageIO  # noqa: N813
        return OpenImageIO
    except ImportError:
        pass
    path = bundled_site_packages()
    if path not in sys.path:
        sys.path.append(path)
    try:
        import OpenImageIO
    except ImportError as exc:  # pragma: no cover - every supported Blender ships it
        raise RuntimeError(f"OpenImageIO not found in Blender's bundled Python ({path})") from exc
    return OpenImageIO


def configure_device(bl_scene, device: str, report=None) -> tuple[str, str]:
    """``("CPU", "CPU")`` or ``("GPU", backend)``: best effort, the first of OptiX, CUDA, HIP, oneAPI,
    Metal with a device; CPU otherwise."""
    cycles = bl_scene.cycles
    if str(device).upper() != "GPU":
        cycles.device = "CPU"
        return "CPU", "CPU"
    try:
        prefs = bpy.context.preferences.addons["cycles"].preferences
        for backend in ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL"):
            try:
                prefs.compute_device_type = backend
            except TypeError:
                continue
            prefs.get_devices()
            devices = [d for d in prefs.devices if d.type == backend]
            if devices:
                for d in devices:
                    d.use = True
                cycles.device = "GPU"
                return "GPU", backend
    except (KeyError, AttributeError):
        pass
    if report:
        report("WARNING", "no GPU compute device found: rendering on the CPU")
    cycles.device = "CPU"
    return "CPU", "CPU"
