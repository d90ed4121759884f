#!/usr/bin/env python3
"""Benchmark of the sensor renderer (rscene_addon.render), run with Blender as a Python module:

    .venv/bpy50/bin/python scripts/bench_render.py [--quick]

(a) Camera overhead: seconds per frame of ``render_scene`` making RGB + depth + ids + normals, against
    an RGB-only baseline of the same scene, camera, resolution and samples. The baseline is a plain
    ``bpy.ops.render.render(write_still=True)`` to PNG with only the Combined pass enabled, because
    ``render_scene`` has no true RGB-only path: with ``RenderOptions(products={"rgb"})`` it still
    enables the Depth/Normal/Object Index passes and writes and decodes the multilayer EXR (that run
    is timed too, as a third line). Ratio = full / baseline (target <= 1.1x). Frames after the first
    are timed (persistent data on for both); the median is reported.
(b) Lidar rays per second on a ~50k-triangle scene (a large UV sphere around the sensor and two
    smaller ones in front, so every ray hits), for the same rays:
    ours      ``raycast.SceneBVH`` (one world-space BVH) + ``raycast.sweep`` (the render path);
    BVH loop  a plain Python ``BVHTree.ray_cast`` loop over the same origins/directions;
    GN        a Geometry Nodes Raycast setup: the rays are the vertices of a point mesh with a
              ``dir`` attribute, Raycast against a Collection Info of the targets, Hit Distance stored
              in a point attribute and read back with ``foreach_get`` from the evaluated mesh (the
              time includes writing the rays into the mesh, evaluation and read-back).
    Ratios ours/GN (target >= 5x) and ours/BVH loop; the hit distances of the three are compared.
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="bench-render-user-"))

import bpy  # noqa: E402  (before bmesh/mathutils, which bpy provides)
import bmesh  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

from rscene_addon.render import render_scene  # noqa: E402
from rscene_addon.render.ids import EntityIndex  # noqa: E402
from rscene_addon.render.plan import RenderOptions  # noqa: E402
from rscene_addon.render.raycast import SceneBVH, sweep  # noqa: E402
from rscene_addon.sensors.lidar import LidarPattern  # noqa: E402


def _reset():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not hasattr(bpy.types.Object, "rscene"):  # render_scene reads the add-on's object properties
        import rscene_addon
        rscene_addon.register()
    return bpy.context.scene


def _uv_sphere(name, radius, location, segments=128, rings=64, collection=None):
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=segments, v_segments=rings, radius=radius)
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new(name, mesh)
    ob.location = location
    (collection or bpy.context.scene.collection).objects.link(ob)
    return ob


def _box(name, size, location, scene):
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(mesh)
    bm.free()
    ob = bpy.data.objects.new(name, mesh)
    ob.location, ob.scale = location, size
    scene.collection.objects.link(ob)
    return ob


# -- (a) camera overhead ---------------------------------------------------------------------------

def camera_scene(width, height, samples):
    sc = _reset()
    _box("Floor", (8, 8, 0.1), (0, 0, -0.05), sc)
    _box("Crate", (1, 1, 1), (0, 0, 0.5), sc)
    _uv_sphere("Ball", 0.5, (-0.5, 1.2, 0.6), 32, 16)
    _box("Tall", (0.4, 0.4, 2.0), (0.8, -1.3, 1.0), sc)
    light = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    light.rotation_euler = (0.6, 0.2, 0.4)
    sc.collection.objects.link(light)
    cam = bpy.data.objects.new("Eye", bpy.data.cameras.new("Eye"))
    cam.location = (-5.0, -2.0, 2.5)
    cam.rotation_euler = (math.radians(70), 0.0, math.radians(-70))
    sc.collection.objects.link(cam)
    sc.camera = cam
    sc.render.engine = "CYCLES"
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = width, height, 100
    sc.cycles.samples = samples
    sc.cycles.use_denoising = False
    sc.cycles.device = "CPU"
    sc.frame_start, sc.frame_end = 1, 100
    return sc


def bench_camera(width, height, samples, frames):
    out = tempfile.mkdtemp(prefix="bench-render-")
    try:
        sc = camera_scene(width, height, samples)
        frame_list = list(range(1, frames + 1))
        full = render_scene(sc, os.path.join(out, "full"), frame_list, samples=samples, sensors="Eye")
        t_full = statistics.median(full["timings"]["frame_s"][1:])
        rgb_opts = RenderOptions(products=frozenset({"rgb"}))
        only = render_scene(sc, os.path.join(out, "rgb"), frame_list, samples=samples, sensors="Eye",
                            options=rgb_opts)
        t_rgb_products = statistics.median(only["timings"]["frame_s"][1:])

        # plain RGB-only baseline: Combined pass only, PNG, same samples/camera/resolution
        vl = bpy.context.view_layer
        vl.use_pass_combined, vl.use_pass_z, vl.use_pass_normal, vl.use_pass_object_index = True, False, False, False
        r = sc.render
        r.use_persistent_data = True
        r.use_compositing = r.use_sequencer = False
        r.image_settings.file_format = "PNG"
        r.image_settings.color_mode = "RGB"
        base = []
        for f in frame_list:
            sc.frame_set(f)
            r.filepath = os.path.join(out, "plain", f"rgb_{f:05d}.png")
            t0 = time.perf_counter()
            bpy.ops.render.render(write_still=True)
            base.append(time.perf_counter() - t0)
        t_base = statistics.median(base[1:])
        print(f"(a) camera {width}x{height}, {samples} samples, CPU, median of frames 2..{frames}")
        print(f"    render_scene rgb+depth+ids+normals : {t_full:.3f} s/frame")
        print(f"    render_scene products={{'rgb'}}     : {t_rgb_products:.3f} s/frame")
        print(f"    plain render.render PNG (baseline) : {t_base:.3f} s/frame")
        print(f"    ratio full / baseline              : {t_full / t_base:.2f}x (target <= 1.1x)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


# -- (b) lidar rays per second ---------------------------------------------------------------------

def lidar_scene():
    sc = _reset()
    targets = bpy.data.collections.new("targets")
    sc.collection.children.link(targets)
    _uv_sphere("Room", 20.0, (0, 0, 0), 128, 64, targets)
    _uv_sphere("A", 1.5, (5.0, 1.0, 0.0), 128, 64, targets)
    _uv_sphere("B", 1.0, (-3.0, -4.0, 0.5), 128, 64, targets)
    bpy.context.view_layer.update()
    return sc, targets


def gn_raycaster(sc, targets, origins, directions, max_distance):
    mesh = bpy.data.meshes.new("rays")
    ob = bpy.data.objects.new("rays", mesh)
    sc.collection.objects.link(ob)
    group = bpy.data.node_groups.new("raycast", "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    n, links = group.nodes, group.links
    gin, gout = n.new("NodeGroupInput"), n.new("NodeGroupOutput")
    info = n.new("GeometryNodeCollectionInfo")
    info.transform_space = "RELATIVE"
    info.inputs["Collection"].default_value = targets
    realize = n.new("GeometryNodeRealizeInstances")
    direction = n.new("GeometryNodeInputNamedAttribute")
    direction.data_type = "FLOAT_VECTOR"
    direction.inputs["Name"].default_value = "dir"
    cast = n.new("GeometryNodeRaycast")
    cast.inputs["Ray Length"].default_value = max_distance
    store = n.new("GeometryNodeStoreNamedAttribute")
    store.data_type, store.domain = "FLOAT", "POINT"
    store.inputs["Name"].default_value = "hit_distance"
    links.new(info.outputs[0], realize.inputs[0])
    links.new(realize.outputs[0], cast.inputs["Target Geometry"])
    links.new(direction.outputs["Attribute"], cast.inputs["Ray Direction"])
    links.new(gin.outputs[0], store.inputs["Geometry"])
    links.new(cast.outputs["Hit Distance"], store.inputs["Value"])
    links.new(store.outputs[0], gout.inputs[0])
    ob.modifiers.new("raycast", "NODES").node_group = group

    def run():
        m = len(origins)
        if len(mesh.vertices) != m:
            mesh.clear_geometry()
            mesh.vertices.add(m)
            mesh.attributes.new("dir", "FLOAT_VECTOR", "POINT")
        mesh.vertices.foreach_set("co", origins.astype(np.float32).ravel())
        mesh.attributes["dir"].data.foreach_set("vector", directions.astype(np.float32).ravel())
        mesh.update()
        depsgraph = bpy.context.evaluated_depsgraph_get()
        depsgraph.update()
        evaluated = ob.evaluated_get(depsgraph).data
        out = np.empty(m, dtype=np.float32)
        evaluated.attributes["hit_distance"].data.foreach_get("value", out)
        return out

    return run


def bench_lidar(channels, samples, repeats):
    sc, targets = lidar_scene()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    tris = sum(len(ob.data.loop_triangles) for ob in targets.objects
               if ob.data.calc_loop_triangles() is None)
    pattern = LidarPattern.symmetric(channels, samples, 60.0, 360.0, 10.0)
    n_rays = pattern.num_rays
    pose = np.eye(4)
    pose[:3, 3] = (0.3, -0.2, 0.1)
    max_distance = 100.0

    t0 = time.perf_counter()
    bvh = SceneBVH(depsgraph, EntityIndex(sc))
    t_build = time.perf_counter() - t0
    ours = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        points = sweep(bvh, pattern, 0.0, pattern.period_s, pose, pose, 0.0, max_distance)
        ours.append(time.perf_counter() - t0)
    t_ours = min(ours)

    # the same rays, world space
    origins = np.tile(pose[:3, 3], (n_rays, 1))
    directions = pattern.ray_directions() @ pose[:3, :3].T
    tree = bvh.tree
    loop = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        dist_loop = np.full(n_rays, np.inf)
        ray_cast = tree.ray_cast
        for i, (o, d) in enumerate(zip(origins.tolist(), directions.tolist())):
            hit = ray_cast(Vector(o), Vector(d), max_distance)
            if hit[2] is not None:
                dist_loop[i] = hit[3]
        loop.append(time.perf_counter() - t0)
    t_loop = min(loop)

    run_gn = gn_raycaster(sc, targets, origins, directions, max_distance)
    run_gn()  # first evaluation builds the node tree's caches
    gn = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        dist_gn = run_gn()
        gn.append(time.perf_counter() - t0)
    t_gn = min(gn)

    ranges = np.sort(points["range"].astype(np.float64))
    agree_loop = np.allclose(ranges, np.sort(dist_loop), atol=1e-4)
    agree_gn = np.allclose(ranges, np.sort(dist_gn.astype(np.float64)), atol=1e-3)
    print(f"(b) lidar {channels} x {samples} = {n_rays} rays, {tris} triangles, every ray hits "
          f"({len(points)} returns), best of {repeats}")
    print(f"    ours (SceneBVH build)          : {t_build:.3f} s once per frame")
    print(f"    ours (sweep)                   : {n_rays / t_ours / 1e6:.3f} M rays/s ({t_ours:.3f} s)")
    print(f"    ours incl. BVH build           : {n_rays / (t_ours + t_build) / 1e6:.3f} M rays/s")
    print(f"    Python BVHTree.ray_cast loop   : {n_rays / t_loop / 1e6:.3f} M rays/s ({t_loop:.3f} s)")
    print(f"    Geometry Nodes Raycast         : {n_rays / t_gn / 1e6:.3f} M rays/s ({t_gn:.3f} s)")
    print(f"    ratio ours/GN                  : {t_gn / t_ours:.2f}x (target >= 5x); incl. build "
          f"{t_gn / (t_ours + t_build):.2f}x")
    print(f"    ratio ours/BVH loop            : {t_loop / t_ours:.2f}x")
    print(f"    hit distances agree: BVH loop {agree_loop}, GN {agree_gn}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller images and fewer rays")
    args = parser.parse_args()
    print(f"Blender {bpy.app.version_string}, {os.cpu_count()} CPUs")
    try:
        if args.quick:
            bench_camera(160, 120, 4, 3)
            bench_lidar(32, 1024, 2)
        else:
            bench_camera(320, 240, 16, 4)
            bench_lidar(64, 2048, 3)
    finally:
        if hasattr(bpy.types.Object, "rscene"):  # bpy 4.5 hangs at exit while add-on classes stay registered
            import rscene_addon
            rscene_addon.unregister()


if __name__ == "__main__":
    main()
