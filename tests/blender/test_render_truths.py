"""Ground truths checked against independent geometry (not against the code under test).

* instance ids equal a ``mathutils`` BVHTree ray cast through every pixel centre (rays built from the
  manifest's K and extrinsics) on >= 99.9 % of pixels, for several overlapping objects;
* known box corners, projected with the manifest's K and extrinsics, land within 0.1 px of where they
  are rendered. "Where they are rendered" is measured from the depth image alone: on a planar face
  ``1/depth`` is an affine function of the pixel position, so fitting it on each visible face (faces
  told apart by that affine gradient) and intersecting the fits gives the corner's and the edges'
  image position to a small fraction of a pixel, with no use of K. (Blender's
  ``world_to_camera_view`` is not used: it only checks Blender's camera model, which
  ``test_render_cameras.test_calibrated_fx_ne_fy_is_reproduced_by_blender`` already does, not the image);
* IMU noise of a static body has the configured standard deviation (sample std within 10 %);
* lidar ranges to a plane match the geometry within 1 mm, and with noise within 1 mm plus the noise.

Not repeated here (already asserted exactly elsewhere): planar depth of a face-on plane and the range
image (``test_depth_of_a_plane_is_exact_and_background_is_inf``), the id <-> JSON map and ids vs depth
background (``test_ids_are_exact_integers_matching_the_json_map``), the principal point
(``test_point_on_the_optical_axis_projects_to_the_principal_point``), the silhouette of a face-on box
for fx != fy (``test_calibrated_fx_ne_fy_is_reproduced_by_blender``), lidar ranges of three rays to a
box and the exact seeded lidar noise draws (``test_render_lidar_imu``), the static IMU's noiseless +g
reading (``test_imu_of_a_static_body_reads_plus_g_on_z``).
"""
from __future__ import annotations

import json

import bpy
import numpy as np
import pytest
from mathutils import Vector
from mathutils.bvhtree import BVHTree

from rscene_addon.render import render_scene
from tests.blender.test_render_support import (  # noqa: F401 - fixtures
    _session_registration, import_scene, render_env)

_TAIL = "default - false true false - static true 1 18446744073709551615"


def _object(path, primitive, pos, quat=(1, 0, 0, 0), scale=(1, 1, 1), radius=0.5, height=1.0, extra=""):
    fields = [path, primitive, *pos, *quat, *scale, radius, height, 1]
    return "object " + " ".join(str(f) for f in fields) + " " + _TAIL + (" " + extra if extra else "")


def _look_quat(eye, target) -> tuple:
    """w, x, y, z of the RaiSim sensor frame (+x forward, +z up) at ``eye`` looking at ``target``."""
    q = (Vector(target) - Vector(eye)).to_track_quat("X", "Z")
    return tuple(round(c, 12) for c in q)


def _manifest(out) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _camera(manifest, name):
    sensor = manifest["sensors"][name]
    return np.array(sensor["intrinsics"]["K"]), np.array(sensor["frames"][0]["camera_to_world_opencv"])


def _pixel_rays(k, c2w, width, height):
    """World origin and unit directions (H*W, 3) through pixel centres, rows top-down."""
    v, u = np.mgrid[0:height, 0:width]
    cam = np.stack([(u.ravel() + 0.5 - k[0, 2]) / k[0, 0], (v.ravel() + 0.5 - k[1, 2]) / k[1, 1],
                    np.ones(u.size)], axis=1)
    world = cam @ c2w[:3, :3].T
    return c2w[:3, 3], world / np.linalg.norm(world, axis=1, keepdims=True)


def _scene_tree(depsgraph):
    """One world-space BVHTree over every render-visible evaluated mesh, and triangle -> object name."""
    verts, tris, owner = [], [], []
    for inst in depsgraph.object_instances:
        ob = inst.object
        if ob.type != "MESH" or ob.original.hide_render:
            continue
        mesh = ob.data
        mesh.calc_loop_triangles()
        m = inst.matrix_world
        base = len(verts)
        verts += [tuple(m @ v.co) for v in mesh.vertices]
        for tri in mesh.loop_triangles:
            tris.append(tuple(base + i for i in tri.vertices))
            owner.append(ob.original.name)
    return BVHTree.FromPolygons(verts, tris, all_triangles=True), owner


def test_instance_ids_agree_with_a_ray_cast_through_every_pixel_centre(render_env, tmp_path):
    eye = (-4.0, -1.0, 1.6)
    q = _look_quat(eye, (0.0, 0.3, 0.6))
    lines = [
        _object("/World/Crate", "box", (0, 0, 0.5), extra="instanceId=3"),
        _object("/World/Ball", "sphere", (-0.4, 0.6, 0.9), radius=0.45),  # intersects the crate
        _object("/World/Tilted", "box", (-1.2, -0.3, 0.5), (0.9, 0.2, 0.1, 0.37), (0.6, 0.3, 0.9)),
        _object("/World/Can", "cylinder", (-0.8, 1.1, 0.4), radius=0.25, height=0.8),
        _object("/World/Pill", "capsule", (0.8, -0.9, 0.6), (0.92, 0.0, 0.39, 0.0), radius=0.2, height=0.9),
        _object("/World/Floor", "box", (0, 0, -0.05), scale=(6, 6, 0.1)),
        "camera /World/Cam %g %g %g %.12f %.12f %.12f %.12f 55 0.05 100 96 72 rgb true" % (*eye, *q),
    ]
    scene = import_scene(tmp_path, *lines)
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1)
    instance = np.load(out / "World.Cam/instance_00001.npy")
    h, w = instance.shape
    manifest = _manifest(out)
    k, c2w = _camera(manifest, "/World/Cam")
    seg = manifest["metadata"]["segmentation"]["instances"]
    id_of = {entry["name"]: int(i) for i, entries in seg.items() for entry in entries}

    tree, owner = _scene_tree(bpy.context.evaluated_depsgraph_get())
    origin, dirs = _pixel_rays(k, c2w, w, h)
    o = Vector(origin)
    expected = np.full(h * w, -1, dtype=np.int32)
    for i, d in enumerate(dirs.tolist()):
        hit = tree.ray_cast(o, Vector(d), 100.0)
        if hit[2] is not None:
            expected[i] = id_of[owner[hit[2]]]
    expected = expected.reshape(h, w)
    # every object is seen, several overlap in the image
    assert set(np.unique(expected)) == {-1, *id_of.values()} and len(id_of) == 6
    agree = np.mean(instance == expected)
    assert agree >= 0.999, (f"{np.sum(instance != expected)} of {h * w} pixels differ",
                            np.argwhere(instance != expected)[:10].tolist())


def _face_fits(depth, min_pixels=25):
    """Affine fits ``1/depth = a u + b v + c`` (u, v pixel-centre coordinates) of the planar faces
    seen in ``depth``: pixels whose 3x3 neighbourhood is finite and affine in 1/depth, grouped by
    their gradient. Returns ``[(a, b, c, pixel count)]``."""
    inv = np.where(np.isfinite(depth), 1.0 / depth.astype(np.float64), np.nan)
    gu = np.full_like(inv, np.nan)
    gv = np.full_like(inv, np.nan)
    gu[:, 1:-1] = (inv[:, 2:] - inv[:, :-2]) / 2
    gv[1:-1, :] = (inv[2:, :] - inv[:-2, :]) / 2
    # second differences vanish inside a face (up to float32 depth and 0.005 px sample jitter)
    duu = np.full_like(inv, np.nan)
    dvv = np.full_like(inv, np.nan)
    duu[:, 1:-1] = inv[:, 2:] - 2 * inv[:, 1:-1] + inv[:, :-2]
    dvv[1:-1, :] = inv[2:, :] - 2 * inv[1:-1, :] + inv[:-2, :]
    scale = np.nanmax(np.abs(np.stack([gu, gv])))
    interior = (np.abs(duu) < 1e-3 * scale) & (np.abs(dvv) < 1e-3 * scale)
    # also the diagonal neighbours must be on the same plane: require interior 3x3 blocks
    core = interior.copy()
    core[1:-1, 1:-1] &= interior[:-2, 1:-1] & interior[2:, 1:-1] & interior[1:-1, :-2] & interior[1:-1, 2:]
    core[[0, -1], :] = False
    core[:, [0, -1]] = False
    rows, cols = np.nonzero(core)
    grads = np.stack([gu[rows, cols], gv[rows, cols]], axis=1)
    label = np.full(len(rows), -1)
    fits = []
    while np.any(label < 0):
        seed = np.nonzero(label < 0)[0][0]
        near = (label < 0) & (np.linalg.norm(grads - grads[seed], axis=1) < 0.02 * scale)
        label[near] = len(fits)
        if near.sum() >= min_pixels:
            u, v = cols[near] + 0.5, rows[near] + 0.5
            a = np.stack([u, v, np.ones(len(u))], axis=1)
            coef, *_ = np.linalg.lstsq(a, inv[rows[near], cols[near]], rcond=None)
            residual = a @ coef - inv[rows[near], cols[near]]
            assert np.abs(residual).max() < 1e-4 * np.abs(inv[rows[near], cols[near]]).max()
            fits.append((*coef, int(near.sum())))
        else:
            fits.append(None)
    return [f for f in fits if f is not None]


def _project(k, c2w, world):
    p = np.linalg.inv(c2w) @ np.append(world, 1.0)
    return (k @ p[:3])[:2] / p[2]


def _turned_box_corners(centre, half, yaw):
    """The 8 world corners of a box of half extents ``half`` at ``centre`` turned by ``yaw`` about z, and
    their sign patterns (8, 3)."""
    rot = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return signs, centre + (signs * half) @ rot.T


def _edge_neighbours(signs, corner: int) -> list[int]:
    """The three corners one edge away from ``corner``."""
    return [int(i) for i in np.nonzero((signs == signs[corner]).sum(axis=1) == 2)[0]]


def _assert_corner_and_edges(fits, uv_corner, uv_neighbours):
    """The three rendered faces (``_face_fits``) meet where the corner projects, within 0.1 px, and each
    edge from it is where two faces meet: every neighbour corner lies on one of the three edge lines
    within 0.1 px and not near the others (the edges are told apart). Returns the rendered corner."""
    a = np.array([[f[0] - fits[0][0], f[1] - fits[0][1]] for f in fits[1:]])
    b = np.array([fits[0][2] - f[2] for f in fits[1:]])
    uv_rendered = np.linalg.solve(a, b)  # where the three planes coincide
    assert np.linalg.norm(uv_rendered - uv_corner) < 0.1, (uv_rendered, uv_corner)
    for uv_other in uv_neighbours:
        gaps = []
        for i in range(3):
            for j in range(i + 1, 3):
                n = np.array([fits[i][0] - fits[j][0], fits[i][1] - fits[j][1]])
                gaps.append(abs(n @ uv_other + fits[i][2] - fits[j][2]) / np.linalg.norm(n))
        assert min(gaps) < 0.1, (uv_other, gaps)
        assert sorted(gaps)[1] > 1.0
    return uv_rendered


@pytest.mark.parametrize("sensor", [
    "camera /World/Cam {pos} {quat} 50 0.05 100 160 120 rgb true",
    # calibrated: fx != fy and a principal point off the pixel grid
    "sensor /World/Cam depth - {pos} {quat} width=150 height=110 calibrationFx=130 calibrationFy=110 "
    "calibrationCx=72.37 calibrationCy=56.81 nearPlane=0.05 farPlane=100",
])
def test_box_corners_project_to_where_they_are_rendered(render_env, tmp_path, sensor):
    """A box turned about z, seen from above at an angle: three faces meet at its nearest corner.
    The corner, and the three edges leaving it, measured in the depth image, must match the K and
    extrinsics projection of the box's known corners within 0.1 px."""
    eye = np.array([-1.3, -2.4, 1.9])
    half = np.array([0.7, 0.5, 0.4])
    centre = np.array([0.1, 0.05, 0.4])
    yaw = np.radians(20.0)
    quat = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))
    box = _object("/World/Box", "box", centre, quat, 2 * half)
    q = _look_quat(eye, centre)
    pos_text = " ".join(f"{c:g}" for c in eye)
    quat_text = " ".join(f"{c:.12f}" for c in q)
    scene = import_scene(tmp_path, box, sensor.format(pos=pos_text, quat=quat_text))
    out = tmp_path / "out"
    render_scene(scene, out, [1], samples=1)
    depth = np.load(out / "World.Cam/depth_00001.npy")
    k, c2w = _camera(_manifest(out), "/World/Cam")

    # the box's corners in the world, and which are on the faces seen
    signs, corners = _turned_box_corners(centre, half, yaw)
    near = int(np.argmin(np.linalg.norm(corners - eye, axis=1)))
    assert signs[near].tolist() == [-1, -1, 1]  # the top corner facing the camera

    fits = _face_fits(depth)
    assert len(fits) == 3, fits  # top, front and side faces
    _assert_corner_and_edges(fits, _project(k, c2w, corners[near]),
                             [_project(k, c2w, corners[other]) for other in _edge_neighbours(signs, near)])


def test_imu_noise_has_the_configured_standard_deviation(render_env, tmp_path):
    imu = "sensor /World/Imu imu - 0 0 1 1 0 0 0 updateRate=2000 noiseStddev=0.05 noiseSeed=11"
    scene = import_scene(tmp_path, imu)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    out = tmp_path / "out"
    render_scene(scene, out, [1, 2, 3])
    table = np.concatenate([np.loadtxt(out / f"World.Imu/imu_{f:05d}.csv", delimiter=",", skiprows=1,
                                       ndmin=2) for f in (1, 2, 3)])
    assert len(table) == 250  # 2000 Hz over 3 / 24 s
    accel = table[:, 1:4] - np.array([0.0, 0.0, 9.81])
    gyro = table[:, 4:7]
    for name, values in (("accel", accel), ("gyro", gyro)):
        assert values.std() == pytest.approx(0.05, rel=0.10), name  # 750 samples: 1 sigma is 2.6 %
        assert abs(values.mean()) < 4 * 0.05 / np.sqrt(values.size), name
        for axis in range(3):
            assert values[:, axis].std() == pytest.approx(0.05, rel=0.15), (name, axis)
    # independent streams: accelerometer and gyro noise are uncorrelated
    assert abs(np.corrcoef(accel.ravel(), gyro.ravel())[0, 1]) < 0.15


def test_lidar_ranges_to_a_plane_match_geometry(render_env, tmp_path):
    """A wall (face x = 4.95) in front of a lidar at the origin: every ray of a 16 x 90 pattern over a
    120 degree sector hits it, at range 4.95 / (cos(elevation) cos(azimuth))."""
    wall = _object("/World/Wall", "box", (5.0, 0.0, 0.0), scale=(0.1, 40.0, 40.0))
    pattern = ("lidarChannels=16 lidarSamples=90 lidarVerticalFov=30 horizontalFov=120 lidarMinRange=0.1 "
               "lidarMaxRange=50 updateRate=24")
    clean = f"sensor /World/Lidar lidar - 0 0 0 1 0 0 0 {pattern}"
    noisy = f"sensor /World/Noisy lidar - 0 0 0 1 0 0 0 {pattern} noiseStddev=0.02 noiseSeed=5"
    scene = import_scene(tmp_path, wall, clean, noisy)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    out = tmp_path / "out"
    render_scene(scene, out, [1])
    props = _manifest(out)["sensors"]["/World/Lidar"]["properties"]["pattern"]
    elevations = np.radians(props["elevations_deg"])
    for name, tolerance in (("Lidar", 0.0), ("Noisy", 0.02)):
        points = np.load(out / f"World.{name}/points_00001.npy")
        assert len(points) == 16 * 90  # every ray hits the wall
        xyz = np.stack([points["x"], points["y"], points["z"]], axis=1).astype(np.float64)
        direction = xyz / np.linalg.norm(xyz, axis=1, keepdims=True)
        # each ray leaves at its ring's elevation
        elevation = np.arcsin(direction[:, 2])
        assert elevation == pytest.approx(elevations[points["ring"]], abs=1e-5)
        assert np.degrees(np.abs(np.arctan2(direction[:, 1], direction[:, 0]))).max() <= 60.0 + 1e-4
        geometric = 4.95 / direction[:, 0]  # along the ray to the plane x = 4.95
        error = points["range"].astype(np.float64) - geometric
        if tolerance == 0.0:
            assert np.abs(error).max() < 1e-3
            assert xyz[:, 0] == pytest.approx(4.95, abs=1e-3)  # the points lie on the plane
        else:
            assert error.std() == pytest.approx(tolerance, rel=0.10)
            assert abs(error.mean()) < 1e-3 + 4 * tolerance / np.sqrt(len(error))
            assert np.abs(error).max() < 1e-3 + 5 * tolerance
        assert np.linalg.norm(xyz, axis=1) == pytest.approx(points["range"], abs=1e-5)
