"""Ray casting backends (render.caster): Embree and the BVHTree fallback against a brute-force numpy
ray/triangle intersection and analytic geometry, and the lidar sweep split into threads against one
thread and against the pattern's own ray bookkeeping."""
from __future__ import annotations

import itertools
import math
import threading

# isort: off
import bpy  # before bmesh, which bpy provides
import bmesh
# isort: on
import numpy as np
import pytest

from rscene_addon.render.caster import (
    BACKENDS,
    CasterCache,
    EmbreeCaster,
    SceneTriangles,
    TriangleGatherer,
    embree_available,
    make_caster,
    run_in_slices,
    scene_triangles,
)
from rscene_addon.render.ids import EntityIndex
from rscene_addon.render.raycast import sweep
from rscene_addon.sensors.lidar import LidarPattern


def _mesh_object(name, build, location=(0, 0, 0), rotation=(0, 0, 0), scale=(1, 1, 1), collection=None):
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    build(bm)
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new(name, mesh)
    ob.location, ob.rotation_euler, ob.scale = location, rotation, scale
    (collection or bpy.context.scene.collection).objects.link(ob)
    return ob


def _sphere(radius, segments=32, rings=16):
    return lambda bm: bmesh.ops.create_uvsphere(bm, u_segments=segments, v_segments=rings, radius=radius)


def _cube(bm):
    bmesh.ops.create_cube(bm, size=1.0)


def brute_force(triangles: SceneTriangles, origins, directions, max_distance):
    """Nearest hit per ray over every triangle (Moller-Trumbore, float64): ``(distance, triangle)``."""
    v = triangles.vertices[triangles.triangles]  # (T, 3, 3)
    e1, e2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
    p = np.cross(directions[:, None, :], e2[None])  # (R, T, 3)
    det = np.einsum("rtk,tk->rt", p, e1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        s = origins[:, None, :] - v[None, :, 0]
        u = np.einsum("rtk,rtk->rt", s, p) * inv
        q = np.cross(s, e1[None])
        w = np.einsum("rk,rtk->rt", directions, q) * inv
        t = np.einsum("rtk,tk->rt", q, e2) * inv
        ok = (np.abs(det) > 1e-12) & (u >= 0) & (w >= 0) & (u + w <= 1) & (t >= 0) & (t <= max_distance)
    t = np.where(ok, t, np.inf)
    best = np.argmin(t, axis=1)
    distance = t[np.arange(len(t)), best]
    return distance, np.where(np.isfinite(distance), best, -1)


@pytest.fixture
def scene_with_instances(empty_blend):
    """A sphere, a scaled and rotated cube, and a collection instanced twice (a cube in it)."""
    sc = bpy.context.scene
    _mesh_object("Ball", _sphere(1.0), location=(3.0, 0.5, 0.0))
    _mesh_object("Slab", _cube, location=(-2.0, 1.0, 0.5), rotation=(0, 0, math.radians(30)), scale=(2, 1, 1))
    asset = bpy.data.collections.new("asset")
    _mesh_object("Crate", _cube, location=(0, 0, 0), collection=asset)
    for name, where in (("CrateA", (0.0, -3.0, 0.0)), ("CrateB", (0.0, 3.5, 1.0))):
        empty = bpy.data.objects.new(name, None)
        empty.instance_type, empty.instance_collection = "COLLECTION", asset
        empty.location = where
        sc.collection.objects.link(empty)
    bpy.context.view_layer.update()
    return sc


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_backends_match_brute_force_intersection(scene_with_instances, backend):
    sc = scene_with_instances
    triangles = scene_triangles(bpy.context.evaluated_depsgraph_get(), EntityIndex(sc))
    per_object = {ob.name: len(ob.data.loop_triangles) for ob in bpy.data.objects if ob.type == "MESH"}
    assert len(triangles) == per_object["Ball"] + per_object["Slab"] + 2 * per_object["Crate"]
    rng = np.random.default_rng(5)
    origins = rng.uniform(-1.0, 1.0, (400, 3)) * [0.5, 0.5, 0.3]
    # aimed near the objects' centres, so most rays hit, some graze and some miss
    centres = np.array([[3.0, 0.5, 0.0], [-2.0, 1.0, 0.5], [0.0, -3.0, 0.0], [0.0, 3.5, 1.0]])
    directions = centres[rng.integers(0, 4, 400)] + rng.uniform(-0.8, 0.8, (400, 3)) - origins
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    expected, expected_tri = brute_force(triangles, origins, directions, 50.0)
    assert 150 < np.isfinite(expected).sum() < 390  # both hits and misses are exercised
    hits = make_caster(triangles, backend).cast(origins, directions, 50.0)
    assert hits.distance == pytest.approx(expected, abs=1e-5)
    assert (hits.triangle == expected_tri).mean() > 0.995  # ties at shared edges may pick either side
    expected_ids = np.where(expected_tri >= 0, triangles.object_ids[expected_tri], -1)
    assert hits.object_id.tolist() == expected_ids.tolist()
    hit = np.isfinite(expected)
    v = triangles.vertices[triangles.triangles[hits.triangle[hit]]]
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    assert hits.normal[hit] == pytest.approx(n / np.linalg.norm(n, axis=1, keepdims=True), abs=1e-6)
    assert np.isnan(hits.normal[~hit]).all() and (hits.triangle[~hit] == -1).all()


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_world_transform_and_instances_against_analytic_faces(scene_with_instances, backend):
    sc = scene_with_instances
    caster = make_caster(scene_triangles(bpy.context.evaluated_depsgraph_get(), EntityIndex(sc)), backend)
    # the slab (scaled 2 x 1 x 1, turned 30 deg about z): along its long axis its face is 1 m from the centre
    axis = np.array([math.cos(math.radians(30)), math.sin(math.radians(30)), 0.0])
    centre = np.array([-2.0, 1.0, 0.5])
    # the instanced crates: unit cubes at (0, -3, 0) and (0, 3.5, 1), seen from below and from +y
    origins = np.array([centre + 10 * axis, [0.0, -3.0, -5.0], [0.0, 9.0, 1.0], [0.0, 0.0, 10.0]])
    directions = np.array([-axis, [0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]])
    hits = caster.cast(origins, directions, 100.0)
    assert hits.distance[:3] == pytest.approx([9.0, 4.5, 5.0], abs=1e-5)
    assert np.isinf(hits.distance[3])
    assert hits.normal[:3] == pytest.approx(np.array([axis, [0, 0, -1], [0, 1, 0]]), abs=1e-6)
    # ids: the two instances of one collection are two entities; max_distance cuts the far hit
    assert hits.object_id[1] != hits.object_id[2] and min(hits.object_id[:3]) >= 0
    assert caster.cast(origins[:1], directions[:1], 8.9).distance[0] == np.inf


def test_rays_through_shared_edges_and_vertices_do_not_slip_through(empty_blend):
    """From inside a closed sphere every ray must hit it; aimed exactly at its vertices and edge midpoints,
    a non-watertight test lets some slip between triangles (Embree's default mode: about 10 %; its robust
    mode, used here: none or almost none; the BVHTree: well under 0.5 %)."""
    _mesh_object("Shell", _sphere(5.0, 48, 24))
    triangles = scene_triangles(bpy.context.evaluated_depsgraph_get(), EntityIndex(bpy.context.scene))
    v = triangles.vertices[triangles.triangles]
    aims = np.concatenate([v[:, 0], 0.5 * (v[:, 0] + v[:, 1]), 0.5 * (v[:, 1] + v[:, 2]),
                           0.5 * (v[:, 2] + v[:, 0])])
    origins = np.random.default_rng(2).uniform(-1.0, 1.0, aims.shape)
    directions = aims - origins
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    for backend in BACKENDS:
        hits = make_caster(triangles, backend).cast(origins, directions, 20.0)
        assert np.isinf(hits.distance).mean() < 0.005, backend
        hit = np.isfinite(hits.distance)
        assert np.linalg.norm(origins[hit] + hits.distance[hit, None] * directions[hit], axis=1) == \
            pytest.approx(np.full(hit.sum(), 5.0), abs=0.06)  # on the faceted shell (sagitta < 0.06)


def test_run_in_slices_covers_the_range_on_aligned_bounds_and_reraises():
    seen = run_in_slices(lambda a, b: (a, b), 60, 4, align=6)
    assert seen[0][0] == 0 and seen[-1][1] == 60
    assert all(x[1] == y[0] for x, y in itertools.pairwise(seen)) and all(a % 6 == 0 for a, _ in seen)
    assert len(seen) == 4
    assert run_in_slices(lambda a, b: (a, b), 5, 8) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    # fewer workers than slices: every slice once, results in slice order, at most `workers` threads
    names = set()

    def record(a, b):
        names.add(threading.current_thread().name)
        return a
    assert run_in_slices(record, 80, 8, align=10, workers=3) == list(range(0, 80, 10))
    assert 1 <= len(names) <= 3

    def fail(a, b):
        if a > 0:
            raise ValueError(f"slice {a}")
        return a
    with pytest.raises(ValueError, match="slice"):
        run_in_slices(fail, 40, 4)


def _pose(x, yaw_deg):
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    m = np.eye(4)
    m[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    m[:3, 3] = (x, 0.2, 0.1)
    return m


@pytest.mark.parametrize("moving", [True, False], ids=["moving", "static"])
def test_sweep_in_threads_matches_one_thread_the_bvh_backend_and_the_pattern(empty_blend, moving):
    _mesh_object("Room", _sphere(12.0, 64, 32))
    _mesh_object("Post", _cube, location=(3.0, 1.0, 0.0), scale=(0.5, 0.5, 4.0))
    triangles = scene_triangles(bpy.context.evaluated_depsgraph_get(), EntityIndex(bpy.context.scene))
    pattern = LidarPattern.symmetric(32, 2048, 40.0, 360.0, 10.0)
    # a window from mid-revolution past the revolution's end (wraps), while the sensor moves and turns;
    # a still sensor takes the one-rotation path
    t0, t1 = 0.6 * pattern.period_s, 1.65 * pattern.period_s
    start = _pose(0.0, 0.0) if moving else _pose(0.3, 25.0)
    end = _pose(0.4, 20.0) if moving else start
    args = (pattern, t0, t1, start, end, 0.0, 30.0)
    runs = {"embree x4": sweep(EmbreeCaster(triangles, threads=4), *args),
            "embree x1": sweep(EmbreeCaster(triangles, threads=1), *args),
            "bvh": sweep(make_caster(triangles, "bvh"), *args)}
    fired = pattern.rays_in_window(t0, t1)
    assert len(fired.ray_index) > 4 * 16384  # enough rays for many chunks and four threads
    for name, points in runs.items():
        assert len(points) == len(fired.ray_index), name  # inside the room every ray returns
        assert points["ring"].tolist() == pattern.ray_rings()[fired.ray_index].tolist(), name
        assert points["t"].tolist() == fired.time.tolist(), name
        # sensor-frame points lie along the pattern's ray directions at the measured range
        xyz = np.stack([points["x"], points["y"], points["z"]], axis=1).astype(np.float64)
        local = pattern.ray_directions()[fired.ray_index]
        assert xyz == pytest.approx(local * points["range"][:, None].astype(np.float64), abs=1e-5)
    one, four = runs["embree x1"], runs["embree x4"]
    assert all(np.array_equal(one[n], four[n]) for n in one.dtype.names)
    bvh = runs["bvh"]
    assert bvh["range"] == pytest.approx(one["range"], abs=1e-4)
    assert bvh["intensity"] == pytest.approx(one["intensity"], abs=1e-4)
    assert (bvh["object_id"] == one["object_id"]).mean() > 0.999
    assert len(set(one["object_id"].tolist())) == 2  # room and post both seen
    if not moving:  # the room's wall from a still sensor: the sphere's radius, to its facets' sagitta
        xyz = np.stack([one["x"], one["y"], one["z"]], axis=1).astype(np.float64)
        world = xyz @ start[:3, :3].T + start[:3, 3]
        wall = one["object_id"] == one["object_id"][np.argmax(one["range"])]
        assert np.linalg.norm(world[wall], axis=1) == pytest.approx(np.full(wall.sum(), 12.0), abs=0.08)


def test_make_caster_names_and_checks_backends():
    tri = SceneTriangles(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]), np.array([[0, 1, 2]]),
                         np.array([3], np.int32))
    assert make_caster(tri, "bvh").name == "bvh"
    assert make_caster(tri, "auto").name == ("embree" if embree_available() else "bvh")
    with pytest.raises(ValueError, match="unknown ray casting backend"):
        make_caster(tri, "optix")
    empty = SceneTriangles(np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros(0, np.int32))
    for backend in BACKENDS:
        hits = make_caster(empty, backend).cast(np.zeros((2, 3)), np.tile([1.0, 0, 0], (2, 1)), 5.0)
        assert np.isinf(hits.distance).all() and hits.object_id.tolist() == [-1, -1]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_caster_cache_reuses_only_unchanged_geometry(empty_blend, backend):
    post = _mesh_object("Post", _cube, location=(3.0, 0.0, 0.0))
    cache = CasterCache(backend)
    ray = (np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 50.0)

    def frame():
        bpy.context.view_layer.update()
        caster = cache.caster_for(scene_triangles(bpy.context.evaluated_depsgraph_get(),
                                                  EntityIndex(bpy.context.scene)))
        return caster, caster.cast(*ray).distance[0]

    first, d1 = frame()
    again, d2 = frame()
    assert again is first and cache.builds == 1 and d1 == d2 == pytest.approx(2.5, abs=1e-6)
    post.location.x = 5.0
    moved, d3 = frame()
    assert moved is not first and cache.builds == 2 and d3 == pytest.approx(4.5, abs=1e-6)


def test_gatherer_reads_fixed_meshes_once_and_follows_what_moves_or_deforms(empty_blend):
    """Over frames, the run's gatherer gives exactly what a fresh full read gives, while reading from
    Blender only the meshes that can change: a still cube and a keyframed (moving) cube once, a mesh with
    an animated shape key every frame, and a modifier's result every frame."""
    sc = bpy.context.scene
    _mesh_object("Still", _cube, location=(3.0, 0.0, 0.0))
    mover = _mesh_object("Mover", _cube, location=(0.0, 3.0, 0.0))
    mover.keyframe_insert("location", frame=1)
    mover.location.y = 5.0
    mover.keyframe_insert("location", frame=3)
    blob = _mesh_object("Blob", _sphere(0.5, 8, 4), location=(0.0, -3.0, 0.0))
    blob.shape_key_add(name="Basis")
    grown = blob.shape_key_add(name="Grown")
    grown.data.foreach_set("co", [2.0 * c for v in blob.data.vertices for c in v.co])
    grown.value = 0.0
    grown.keyframe_insert("value", frame=1)
    grown.value = 1.0
    grown.keyframe_insert("value", frame=3)
    bent = _mesh_object("Bent", _cube, location=(0.0, 0.0, 3.0))
    bent.modifiers.new("Bevel", "BEVEL")
    gather = TriangleGatherer()
    seen = []
    for frame in (1, 2, 3):
        sc.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        got = gather(depsgraph, EntityIndex(sc))
        fresh = scene_triangles(depsgraph, EntityIndex(sc))
        np.testing.assert_array_equal(got.vertices, fresh.vertices)
        np.testing.assert_array_equal(got.triangles, fresh.triangles)
        np.testing.assert_array_equal(got.object_ids, fresh.object_ids)
        seen.append(got.vertices.copy())
    assert gather.mesh_reads == 2 + 3 * 2  # still + mover once; blob and bent each frame
    assert not np.array_equal(seen[0], seen[2])  # the mover moved and the blob grew


def test_gatherer_gives_back_the_same_triangles_while_nothing_changes(empty_blend):
    sc = bpy.context.scene
    post = _mesh_object("Post", _cube, location=(3.0, 0.0, 0.0))
    gather, cache = TriangleGatherer(), CasterCache("bvh")

    def frame():
        bpy.context.view_layer.update()
        return gather(bpy.context.evaluated_depsgraph_get(), EntityIndex(sc))

    first = frame()
    assert frame() is first and cache.caster_for(first) is cache.caster_for(frame()) and cache.builds == 1
    post.location.x = 5.0
    moved = frame()
    assert moved is not first and gather.mesh_reads == 1
    assert moved.vertices[:, 0].min() == pytest.approx(4.5) and first.vertices[:, 0].min() == pytest.approx(2.5)
