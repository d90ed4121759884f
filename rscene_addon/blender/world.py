"""``environment`` and ``weather`` records -> a Blender World and the scene's colour management.

Background: a plain colour, an HDR environment texture (when the file exists), or Blender's physical
Sky Texture whose sun follows ``sunAzimuthDegrees``/``sunElevationDegrees`` (or the solar position
from date, time and place when explicit angles are off). Fog density becomes a world volume.
"""
from __future__ import annotations

import math
import os

import bpy

from ..model.solar import solar_position
from . import compat

# rayrai colour modes -> Blender view transforms (first one available wins)
VIEW_TRANSFORMS = {
    "fast_linear": ("Standard",),
    "aces_approx": ("ACES 2.0", "ACES 1.3", "Filmic"),
    "filmic_approx": ("Filmic",),
    "agx_approx": ("AgX",),
    "unreal_preview_approx": ("AgX", "Filmic"),
}
_COLOR_MODE_ALIASES = {"linear": "fast_linear", "aces": "aces_approx", "filmic": "filmic_approx",
                       "agx": "agx_approx", "unreal": "unreal_preview_approx",
                       "unreal_preview": "unreal_preview_approx"}


def _background_mode(environment) -> str:
    mode = (environment.get("backgroundMode") or "plain_color").lower()
    if mode in ("hdr", "environment", "environment_map", "cubemap"):
        return "hdr"
    if mode in ("rayrai_sky", "rayraisky", "rayrai", "sky", "procedural_sky"):
        return "sky"
    return "plain"


def sun_angles(weather) -> tuple[float, float]:
    """(azimuth, elevation) in degrees: explicit angles, or the solar position at the record's date."""
    if weather.get("useExplicitSunAngles"):
        return weather.get("sunAzimuthDegrees"), weather.get("sunElevationDegrees")
    hours = weather.get("timeOfDay")
    return solar_position(int(weather.get("year")), int(weather.get("month")), int(weather.get("day")),
                          hours, weather.get("latitude"), weather.get("longitude"), utc_offset_hours=9.0)


def build_world(name: str, environment, weather, resolve, warn):
    """A new World for the records (defaults apply for absent records or keys)."""
    world = bpy.data.worlds.new(name)
    compat.enable_world_nodes(world)
    tree = world.node_tree
    nodes, links = tree.nodes, tree.links
    background = next(n for n in nodes if n.type == "BACKGROUND")
    output = next(n for n in nodes if n.type == "OUTPUT_WORLD")
    color = tuple(environment.get("background"))
    background.inputs["Color"].default_value = color + (1.0,)
    world.color = color
    intensity = environment.get("pbrEnvironmentIntensity")
    mode = _background_mode(environment)
    if mode == "hdr":
        ref = environment.get("environmentMap")
        path = resolve(ref) if ref else ""
        if path and os.path.exists(path):
            tex = nodes.new("ShaderNodeTexEnvironment")
            tex.image = bpy.data.images.load(path, check_existing=True)
            links.new(tex.outputs["Color"], background.inputs["Color"])
            background.inputs["Strength"].default_value = intensity
        else:
            warn(f"environment map {ref!r} not found: using the background colour")
    elif mode == "sky":
        sky = nodes.new("ShaderNodeTexSky")
        compat.set_physical_sky(sky)
        azimuth, elevation = sun_angles(weather)
        sky.sun_elevation = math.radians(max(elevation, -10.0))
        sky.sun_rotation = math.radians(azimuth % 360.0)
        links.new(sky.outputs["Color"], background.inputs["Color"])
        background.inputs["Strength"].default_value = max(intensity, 0.05)
    fog = environment.get("fogDensity")
    if fog > 0:
        volume = nodes.new("ShaderNodeVolumeScatter")
        volume.inputs["Density"].default_value = fog
        volume.inputs["Color"].default_value = tuple(environment.get("fogColor"))[:3] + (1.0,)
        links.new(volume.outputs["Volume"], output.inputs["Volume"])
    return world


def apply_color_management(bl_scene, environment) -> None:
    view = bl_scene.view_settings
    exposure = environment.get("exposure")
    view.exposure = math.log2(exposure) if exposure > 0 else 0.0
    view.gamma = environment.get("gamma") / 2.2  # the display transform already applies sRGB (~2.2)
    mode = str(environment.get("colorMode") or "").lower()
    for name in VIEW_TRANSFORMS.get(_COLOR_MODE_ALIASES.get(mode, mode), ()):
        try:
            view.view_transform = name
            break
        except TypeError:
            continue
