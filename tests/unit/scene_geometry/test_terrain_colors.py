"""Terrain sample colours from ``terrain_texture`` layers, against the newer format document's rules and its
example file (grass ``0.3,0.45,0.2``), with the numbers worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.scene_geometry.terrain_colors import layer_roughness, terrain_colors
from tests.corpus import EXAMPLE

H = "raisim_engine_scene 2\n"
GRASS = "terrain_texture 0 grass Grass color=0.3,0.45,0.2,1 roughness=0.9\n"
ROCK = "terrain_texture 1 rock Rock color=0.5,0.5,0.5,1 roughness=2\n"
REGION = "terrain_region /World/T 2 2 1 1 0 0 0 {keys}\n"


def _colors(text):
    scene = rscene.loads(H + text)
    return terrain_colors(scene, scene.of("terrain_region")[0])


def test_the_spec_example_terrain_is_its_grass_colour():
    scene = rscene.read(str(EXAMPLE))
    region = scene.of("terrain_region")[0]
    colors = terrain_colors(scene, region)
    assert colors.shape == (9, 4)
    np.testing.assert_allclose(colors, np.tile((0.3, 0.45, 0.2, 1.0), (9, 1)))
    assert layer_roughness(scene, 0) == 0.9


def test_without_layers_the_engine_defaults_apply():
    colors = _colors(REGION.format(keys="baseTexture=1"))
    np.testing.assert_allclose(colors, np.tile((0.42, 0.40, 0.36, 1.0), (4, 1)))  # Engine 2's terrain_rock
    colors = _colors(GRASS + REGION.format(keys="baseTexture=5"))  # a slot without a layer
    np.testing.assert_allclose(colors[:, :3], np.tile((0.28, 0.43, 0.20), (4, 1)))


def test_primary_blended_toward_secondary_without_splatting():
    colors = _colors(GRASS + ROCK + REGION.format(
        keys="textureSplattingEnabled=false texturePrimary=0,0,1,1 textureSecondary=1,1,1,0 textureBlend=0,0.5,0,1"))
    np.testing.assert_allclose(colors[:, :3], [(0.3, 0.45, 0.2), (0.4, 0.475, 0.35), (0.5, 0.5, 0.5),
                                               (0.3, 0.45, 0.2)])


def test_splat_layers_are_a_weighted_mean_and_zero_weight_falls_back_to_the_paint():
    colors = _colors(GRASS + ROCK + REGION.format(keys="texturePrimary=1,1,1,1")
                     + "terrain_splat_layer /World/T slot=0 weights=1,1,0,0\n"
                     + "terrain_splat_layer /World/T slot=1 strength=3 weights=0,1,0,0\n")
    # sample 1: (1 * grass + 3 * rock) / 4; samples 2, 3: no weight, the primary slot (rock)
    np.testing.assert_allclose(colors[:, :3], [(0.3, 0.45, 0.2), (0.45, 0.4875, 0.425), (0.5, 0.5, 0.5),
                                               (0.5, 0.5, 0.5)])


def test_an_only_layer_of_all_ones_is_the_base_slot():
    colors = _colors(GRASS + ROCK + REGION.format(keys="") + "terrain_splat_layer /World/T slot=1 weights=1,1,1,1\n")
    np.testing.assert_allclose(colors[:, :3], np.tile((0.3, 0.45, 0.2), (4, 1)))


def test_vertex_colours_wetness_and_holes():
    colors = _colors(GRASS + REGION.format(keys="vertexColors=1,0,1;1,1,1;1,1,1;0.5,0.5,0.5,0.5 "
                                                "wetness=0,1,0,0 holes=0,0,1,0"))
    np.testing.assert_allclose(colors, [(0.3, 0.0, 0.2, 1.0), (0.3 * 0.82, 0.45 * 0.82, 0.2 * 0.82, 1.0),
                                        (0.02, 0.02, 0.02, 1.0), (0.15, 0.225, 0.1, 0.5)])


def test_roughness_is_clamped_as_rayrai_does():
    scene = rscene.loads(H + GRASS + ROCK)
    assert layer_roughness(scene, 1) == 1.0
    assert layer_roughness(rscene.loads(H), 1) == pytest.approx(0.92)
