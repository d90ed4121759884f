"""Lidar geometry that moves: the Embree caster follows a baked moving pile frame after frame in place
(one geometry per instance, only what moved rewritten and refitted) and returns what a fresh BVHTree
over the same frame returns, and the brute-force intersection of the test next door."""
from __future__ import annotations

import math

# isort: off
import bpy  # before bmesh, which bpy provides
# isort: on
import numpy as np
import pytest

from rscene_addon.render.caster import (
    BVHCaster, CasterCache, PartedTriangles, PartsCaster, TriangleGatherer, embree_available, scene_triangles)
from rscene_addon.products.embree_parts import api
from rscene_addon.render.ids import EntityIndex
from rscene_addon.render.raycast import sweep
from rscene_addon.sensors.lidar import LidarPattern
from tests.blender.test_render_caster import _cube, _mesh_object, _sphere, brute_force

pytestmark = pytest.mark.skipif(not embree_available(), reason="the embreex wheel is not installed")


def _pile(frames: int, bodies: int = 12):
    """A floor, a still wall and ``bodies`` keyframed cubes and spheres tumbling over ``frames`` frames."""
    sc = bpy.context.scene
    _mesh_object("Floor", _cube, location=(0, 0, -0.6), scale=(12, 12, 0.2))
    _mesh_object("Wall", _sphere(1.0, 16, 8), location=(0.0, -4.0, 0.5))
    rng = np.random.default_rng(3)
    movers = []
    for i in range(bodies):
        build = _cube if i % 2 else _sphere(0.35, 12, 6)
        ob = _mesh_object(f"Body{i}", build, scale=(0.5, 0.5, 0.5) if i % 2 else (1, 1, 1))
        start, velocity = rng.uniform(-3, 3, 3) * [1, 1, 0.3] + [0, 0, 1.5], rng.uniform(-0.4, 0.4, 3)
        spin = rng.uniform(-0.5, 0.5, 3)
        ob.rotation_mode = "XYZ"
        for f in range(1, frames + 1):
            ob.location = start + velocity * f
            ob.rotation_euler = spin * f
            ob.keyframe_insert("location", frame=f)
            ob.keyframe_insert("rotation_euler", frame=f)
        movers.append(ob)
    if bodies > 1:
        movers[1].animation_data_clear()  # one body lies still the whole time
    sc.frame_start, sc.frame_end = 1, frames
    return sc


def _rays(n=3000):
    rng = np.random.default_rng(8)
    origins = np.tile([0.2, 0.3, 4.0], (n, 1)) + rng.uniform(-0.5, 0.5, (n, 3))
    directions = rng.normal(size=(n, 3)) * [1, 1, 0.5] + [0, 0, -0.9]
    return origins, directions / np.linalg.norm(directions, axis=1, keepdims=True)


def test_parts_caster_follows_a_moving_pile_and_matches_a_fresh_bvh(empty_blend):
    assert api() is not None, "the Embree library and the embreex scene handle must be found here"
    sc = _pile(4)
    gather, cache = TriangleGatherer(), CasterCache("embree")
    origins, directions = _rays()
    first = None
    for frame in (1, 2, 3, 4, 4):
        sc.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        triangles = gather(depsgraph, EntityIndex(sc))
        assert isinstance(triangles, PartedTriangles)
        caster = cache.caster_for(triangles)
        assert isinstance(caster, PartsCaster)
        first = first or caster
        assert caster is first  # one scene for the whole run, moved in place
        fresh = scene_triangles(depsgraph, EntityIndex(sc))
        np.testing.assert_array_equal(triangles.vertices, fresh.vertices)
        hits = caster.cast(origins, directions, 30.0)
        reference = BVHCaster(fresh).cast(origins, directions, 30.0)
        hit = np.isfinite(reference.distance)
        assert 0.3 < hit.mean() < 1.0
        assert np.array_equal(np.isfinite(hits.distance), hit)
        assert hits.distance[hit] == pytest.approx(reference.distance[hit], abs=1e-5)
        assert (hits.object_id == reference.object_id).mean() > 0.999
        same = hit & (hits.triangle == reference.triangle)
        assert same.sum() > 0.995 * hit.sum()
        assert hits.normal[same] == pytest.approx(reference.normal[same], abs=1e-6)
        truth, truth_tri = brute_force(fresh, origins[:300], directions[:300], 30.0)
        assert hits.distance[:300] == pytest.approx(truth, abs=1e-5)
    assert cache.builds == 1 and cache.updates == 3  # frames 2-4 moved it; the repeated frame 4 changed nothing


def test_sweep_on_a_moving_pile_equals_the_bvh_backend(empty_blend):
    sc = _pile(3, bodies=8)
    pattern = LidarPattern.symmetric(16, 360, 40.0, 360.0, 10.0)
    pose = np.eye(4)
    pose[:3, 3] = (0.1, 0.2, 1.0)
    caches = {b: (CasterCache(b), TriangleGatherer()) for b in ("embree", "bvh")}
    for frame in (1, 2, 3):
        sc.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        points = {}
        for backend, (cache, gather) in caches.items():
            caster = cache.caster_for(gather(depsgraph, EntityIndex(sc)))
            points[backend] = sweep(caster, pattern, 0.0, pattern.period_s, pose, pose, 0.0, 50.0)
        assert len(points["embree"]) == len(points["bvh"]) > 0.2 * pattern.num_rays
        assert points["embree"]["range"] == pytest.approx(points["bvh"]["range"], abs=1e-4)
        assert (points["embree"]["object_id"] == points["bvh"]["object_id"]).mean() > 0.999
    assert caches["embree"][0].updates == 2 and caches["embree"][0].builds == 1


def test_parts_caster_builds_again_when_the_parts_change(empty_blend):
    sc = bpy.context.scene
    post = _mesh_object("Post", _cube, location=(3.0, 0.0, 0.0))
    gather, cache = TriangleGatherer(), CasterCache("embree")
    ray = (np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 50.0)

    def frame():
        bpy.context.view_layer.update()
        caster = cache.caster_for(gather(bpy.context.evaluated_depsgraph_get(), EntityIndex(sc)))
        return caster, caster.cast(*ray).distance[0]

    first, d1 = frame()
    post.location.x = 5.0
    moved, d2 = frame()
    assert moved is first and (cache.builds, cache.updates) == (1, 1)
    assert (d1, d2) == pytest.approx((2.5, 4.5), abs=1e-6)
    _mesh_object("Nearer", _cube, location=(2.0, 0.0, 0.0), rotation=(0, 0, math.radians(45)))
    grown, d3 = frame()
    assert grown is not first and cache.builds == 2
    assert d3 == pytest.approx(2.0 - math.sqrt(0.5), abs=1e-6)


def test_without_the_embree_library_each_change_builds_a_soup_scene(empty_blend, monkeypatch):
    """Where the library or the scene handle cannot be had, Embree falls back to one soup per change."""
    from rscene_addon.products import embree_parts
    from rscene_addon.render.caster import EmbreeCaster
    monkeypatch.setattr(embree_parts, "_API", [None])
    sc = _pile(2, bodies=4)
    gather, cache = TriangleGatherer(), CasterCache("embree")
    origins, directions = _rays(500)
    for frame in (1, 2):
        sc.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        caster = cache.caster_for(gather(depsgraph, EntityIndex(sc)))
        assert isinstance(caster, EmbreeCaster)
        reference = BVHCaster(scene_triangles(depsgraph, EntityIndex(sc))).cast(origins, directions, 30.0)
        assert caster.cast(origins, directions, 30.0).distance == pytest.approx(reference.distance, abs=1e-5)
    assert cache.builds == 2 and cache.updates == 0
