"""The colour of every sample of a ``terrain_region``, from its ``terrain_texture`` layers, as RaiSim colours it.

The newer format document (``terrain_region record``): with splatting enabled, the tints of the terrain's
splat layers weighted by their weights and strengths; where the weights add up to zero, or without
splatting, the primary layer's tint blended toward the secondary layer's by ``textureBlend``; then
multiplied by the vertex colour, up to 18 % darker where wet, and holes almost black. A terrain without
splat layers has one base layer (``baseTexture``) of weight 1; a slot without a ``terrain_texture`` layer
has the tint ``0.28,0.43,0.20``; a scene without any gets Engine 2's two default layers.
"""
from __future__ import annotations

import numpy as np

MISSING_TINT = (0.28, 0.43, 0.20, 1.0)
DEFAULT_LAYERS = {0: MISSING_TINT, 1: (0.42, 0.40, 0.36, 1.0)}  # terrain_grass, terrain_rock
DEFAULT_ROUGHNESS = {0: 0.82, 1: 0.92}
WET_DARKENING = 0.18
HOLE_RGB = 0.02  # "almost black": the document gives no number; this is ours
MAX_SLOT = 31


def _layers(scene) -> dict[int, object]:
    """slot -> its ``terrain_texture`` record (the first one of a slot)."""
    layers: dict[int, object] = {}
    for record in scene.of("terrain_texture"):
        layers.setdefault(int(record.get("slot")), record)
    return layers


def base_slot(region) -> int:
    return int(np.clip(region.get("baseTexture"), 0, MAX_SLOT))


def layer_roughness(scene, slot: int) -> float:
    """The roughness of a slot's layer, clamped to [0.04, 1] as rayrai does."""
    layers = _layers(scene)
    if layers:
        value = layers[slot].get("roughness") if slot in layers else DEFAULT_ROUGHNESS[0]
    else:
        value = DEFAULT_ROUGHNESS.get(slot, DEFAULT_ROUGHNESS[0])
    return float(np.clip(value, 0.04, 1.0))


def _tint_table(scene) -> np.ndarray:
    """(256, 4) tints by slot (paint lists hold slots 0 to 255)."""
    table = np.tile(np.asarray(MISSING_TINT, dtype=np.float64), (256, 1))
    layers = _layers(scene)
    for slot, rgba in (DEFAULT_LAYERS.items() if not layers else
                       ((s, r.get("color")) for s, r in layers.items())):
        if 0 <= slot < 256:
            rgba = tuple(rgba)
            table[slot] = rgba + (1.0,) * (4 - len(rgba))
    return table


def _per_sample(values, count: int, default, dtype=np.float64) -> np.ndarray:
    values = np.asarray(values, dtype=dtype)
    return values if len(values) == count else np.full(count, default, dtype=dtype)


def _splat_layers(scene, region) -> list:
    ref = (region.path, region.id)
    return [layer for layer in scene.of("terrain_splat_layer") if layer.get("terrain") in ref and layer.get("enabled")]


def terrain_colors(scene, region) -> np.ndarray:
    """(xSamples * ySamples, 4) linear RGBA, sample ``(x, y)`` at row ``y * xSamples + x`` (the heights'
    order). Paint lists of the wrong length are ignored here (the check pass reports them)."""
    count = int(region.get("xSamples")) * int(region.get("ySamples"))
    tints = _tint_table(scene)
    base = base_slot(region)
    primary = _per_sample(region.get("texturePrimary"), count, base, np.int64)
    secondary = _per_sample(region.get("textureSecondary"), count, base, np.int64)
    blend = np.clip(_per_sample(region.get("textureBlend"), count, 0.0), 0.0, 1.0)[:, None]
    first, second = tints[np.clip(primary, 0, 255)], tints[np.clip(secondary, 0, 255)]
    colors = first + (second - first) * blend
    if region.get("textureSplattingEnabled"):
        layers = _splat_layers(scene, region)
        if not layers:
            splats = [(base, np.ones(count))]
        else:
            splats = []
            for layer in layers:
                slot = int(layer.get("slot"))
                weights = _per_sample(layer.get("weights"), count, 1.0 if slot == base else 0.0)
                if len(layers) == 1 and np.all(weights == 1.0):
                    slot = base  # Engine 2 gives a terrain's only layer the base slot when its weights are all 1
                splats.append((slot, weights * float(layer.get("strength"))))
        total = np.zeros(count)
        mixed = np.zeros((count, 4))
        for slot, weights in splats:
            total += weights
            mixed += weights[:, None] * tints[int(np.clip(slot, 0, 255))]
        painted = total > 0
        colors[painted] = mixed[painted] / total[painted, None]
    vertex = np.asarray(region.get("vertexColors"), dtype=np.float64)
    if len(vertex) == count:
        vertex = vertex.reshape(count, -1)
        colors[:, :vertex.shape[1]] *= vertex
    wet = np.clip(_per_sample(region.get("wetness"), count, 0.0), 0.0, 1.0)
    colors[:, :3] *= (1.0 - WET_DARKENING * wet)[:, None]
    holes = _per_sample(region.get("holes"), count, 0, np.int64) != 0
    colors[holes, :3] = HOLE_RGB
    return colors


__all__ = ["base_slot", "layer_roughness", "terrain_colors"]
