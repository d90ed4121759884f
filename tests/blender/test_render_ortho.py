"""Orthographic ``camera`` records (``projection=orthographic``, ``orthoScale``) against independent
geometry: a face-on wall reads one constant depth (its distance from the camera's plane), a box of
known size covers the pixel count its size and the scale give, the manifest's projection ``P`` (no K)
and its ``glOrtho`` matrix agree, and known box corners land within 0.1 px of where they are rendered,
measured from the depth image alone (on a planar face an orthographic depth is affine in the pixel
position: fitting it per face and intersecting the fits gives the corner, with no use of ``P``)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rscene_addon.render import render_scene
from rscene_addon.products.plan import RenderOptions
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    _session_registration,
    import_scene,
    render_env,
)
from tests.blender.test_render_truths import (_assert_corner_and_edges, _edge_neighbours, _face_fits,
                                              _look_quat, _object, _turned_box_corners)


def _ortho_camera(eye, quat, scale, width, height, near=0.05, far=100.0):
    pose = " ".join(f"{c:g}" for c in eye) + " " + " ".join(f"{c:.12f}" for c in quat)
    return (f"camera /World/Ortho {pose} 50 {near:g} {far:g} {width} {height} rgb true "
            f"projection=orthographic orthoScale={scale:g}")


def _sensor(out):
    return json.loads((out / "manifest.json").read_text())["sensors"]["/World/Ortho"]


def test_face_on_wall_has_constant_depth_and_a_box_covers_its_size_in_pixels(render_env, tmp_path):
    # camera 6 m in front of a wall (face at x = -0.1), looking along +x; 64 x 48 px over 4 m: 1/16 m a px
    wall = _object("/World/Wall", "box", (0.0, 0.0, 0.5), scale=(0.2, 30.0, 30.0))
    # a 1 m cube 3 m in front of the camera, its centre 0.25 m left of and 0.25 m above the axis
    cube = _object("/World/Cube", "box", (-3.0, 0.25, 0.75), extra="instanceId=5")
    scene = import_scene(tmp_path, wall, cube, _ortho_camera((-6.0, 0.0, 0.5), (1, 0, 0, 0), 4.0, 64, 48))
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1, options=RenderOptions(range_image=True))
    depth = np.load(out / "World.Ortho/depth_00001.npy")
    instance = np.load(out / "World.Ortho/instance_00001.npy")
    assert depth.shape == (48, 64)
    on_wall = instance != 5
    assert depth[on_wall] == pytest.approx(np.full(on_wall.sum(), 5.9), abs=1e-4)  # no perspective falloff
    assert depth[~on_wall] == pytest.approx(np.full((~on_wall).sum(), 2.5), abs=1e-4)  # the cube's face
    assert np.array_equal(np.load(out / "World.Ortho/range_00001.npy"), depth)
    # the cube spans y in [-0.25, 0.75] (image u from 32 - 0.75 * 16 = 20 to 36) and z in [0.25, 1.25]
    # (v from 24 - 0.75 * 16 = 12 to 28): exactly 16 x 16 pixels
    rows, cols = np.nonzero(~on_wall)
    assert (rows.min(), rows.max(), cols.min(), cols.max(), len(rows)) == (12, 27, 20, 35, 256)

    sensor = _sensor(out)
    assert sensor["projection"] == "orthographic" and sensor["intrinsics"] is None
    assert sensor["resolution"] == [64, 48]
    ortho = sensor["orthographic"]
    assert ortho["pixel_size"] == pytest.approx(1 / 16) and ortho["view_size"] == pytest.approx([4.0, 3.0])
    p = np.array(ortho["P"])
    c2w = np.array(sensor["frames"][0]["camera_to_world_opencv"])
    # the cube's corner nearest to the top-left of the image, through P, is at pixel (20, 12)
    corner = np.linalg.inv(c2w) @ np.array([-3.5, 0.75, 1.25, 1.0])
    assert p @ corner == pytest.approx([20.0, 12.0, 1.0], abs=1e-9)
    # glOrtho of the same view: NDC x, y of that corner give the same pixel; z maps near..far to -1..1
    gl = np.array(sensor["opengl_projection"])
    c2w_gl = np.array(sensor["frames"][0]["camera_to_world_opengl"])
    clip = gl @ np.linalg.inv(c2w_gl) @ np.array([-3.5, 0.75, 1.25, 1.0])
    assert ((clip[0] + 1) * 64 / 2, (1 - clip[1]) * 48 / 2, clip[3]) == pytest.approx((20.0, 12.0, 1.0))
    assert gl @ [0, 0, -sensor["near"], 1] == pytest.approx([0, 0, -1, 1])
    assert gl @ [0, 0, -sensor["far"], 1] == pytest.approx([0, 0, 1, 1])


def test_box_corners_project_with_p_to_where_they_are_rendered(render_env, tmp_path):
    """A box turned about z seen obliquely from above: three faces meet at its nearest corner. The
    corner and the three edges leaving it, measured in the depth image, match the manifest's ``P``
    projection of the box's known corners within 0.1 px."""
    eye = np.array([-3.0, -4.0, 3.5])
    half = np.array([0.7, 0.5, 0.4])
    centre = np.array([0.1, 0.05, 0.4])
    yaw = np.radians(20.0)
    quat = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
    box = _object("/World/Box", "box", centre, quat, 2 * half)
    camera = _ortho_camera(eye, _look_quat(eye, centre), 3.2, 160, 120)
    scene = import_scene(tmp_path, box, camera)
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1)
    depth = np.load(out / "World.Ortho/depth_00001.npy").astype(np.float64)
    sensor = _sensor(out)
    p = np.array(sensor["orthographic"]["P"])
    w2c = np.linalg.inv(np.array(sensor["frames"][0]["camera_to_world_opencv"]))

    def project(world):
        return (p @ w2c @ np.append(world, 1.0))[:2]

    signs, corners = _turned_box_corners(centre, half, yaw)
    axis = w2c[2, :3]  # the view direction in the world
    near = int(np.argmin(corners @ axis))
    assert signs[near].tolist() == [-1, -1, 1]

    # depth is affine per face: hand _face_fits 1/depth so that the quantity it fits is depth itself
    fits = _face_fits(np.where(np.isfinite(depth), 1.0 / depth, np.inf))
    assert len(fits) == 3, fits
    neighbours = [project(corners[other]) for other in _edge_neighbours(signs, near)]
    uv_rendered = _assert_corner_and_edges(fits, project(corners[near]), neighbours)
    # and the rendered depth there is the corner's distance from the camera plane along the view axis
    corner_depth = (w2c @ np.append(corners[near], 1.0))[2]
    assert fits[0][0] * uv_rendered[0] + fits[0][1] * uv_rendered[1] + fits[0][2] == pytest.approx(
        corner_depth, abs=1e-3)


def test_blender_orthographic_camera_is_rendered_with_its_scale(render_env, tmp_path):
    import bpy
    scene = import_scene(tmp_path, _object("/World/Cube", "box", (0.0, 0.0, 0.5), extra="instanceId=2"))
    cam = bpy.data.objects.new("Top", bpy.data.cameras.new("Top"))
    cam.data.type, cam.data.ortho_scale = "ORTHO", 2.0
    cam.location = (0.0, 0.0, 10.0)  # looking down -z, image up = +y
    scene.collection.objects.link(cam)
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 40, 30, 100
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1, sensors=["Top"])
    sensor = json.loads((out / "manifest.json").read_text())["sensors"]["Top"]
    assert sensor["projection"] == "orthographic"
    assert sensor["orthographic"]["pixel_size"] == pytest.approx(0.05)
    depth = np.load(out / "Top/depth_00001.npy")
    # the 1 m cube's top face (z = 1) fills 20 x 20 pixels in the middle of a 2 m x 1.5 m view
    top = np.isclose(depth, 9.0, atol=1e-4)
    rows, cols = np.nonzero(top)
    assert (rows.min(), rows.max(), cols.min(), cols.max(), top.sum()) == (5, 24, 10, 29, 400)
    cam.data.shift_x = 0.1
    with pytest.raises(ValueError, match="lens shift"):
        render_scene(scene, tmp_path / "out2", [1], samples=1, sensors=["Top"])
