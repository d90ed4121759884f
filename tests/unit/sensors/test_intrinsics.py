"""Pinhole intrinsics, OpenGL projection and Blender camera settings.

The Blender check re-implements Blender's own view-plane maths (blenkernel/intern/camera.cc,
``BKE_camera_params_compute_viewplane`` followed by ``perspective_m4``) here, independently of the
module's closed-form inverse.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.sensors.intrinsics import CameraIntrinsics


def project_with_k(k, p_cv):
    h = p_cv @ k.T
    return h[:, :2] / h[:, 2:]


def project_with_gl(proj, p_cv, width, height):
    """OpenCV camera points -> OpenGL camera -> clip -> NDC -> pixels (corner origin, v down)."""
    p_gl = p_cv * [1, -1, -1]
    clip = np.c_[p_gl, np.ones(len(p_gl))] @ proj.T
    ndc = clip[:, :3] / clip[:, 3:]
    return np.c_[(ndc[:, 0] + 1) * width / 2, (1 - ndc[:, 1]) * height / 2], ndc[:, 2]


def blender_winmat(lens, sensor_x, sensor_y, fit, shiftx, shifty, winx, winy, aspx, aspy, near, far):
    """Blender's BKE_camera_params_compute_viewplane + perspective_m4, transcribed."""
    ycor = aspy / aspx
    sensor_size = sensor_y if fit == "VERTICAL" else sensor_x
    pixsize = sensor_size * near / lens
    if fit == "AUTO":
        fit = "HORIZONTAL" if aspx * winx >= aspy * winy else "VERTICAL"
    viewfac = winx if fit == "HORIZONTAL" else ycor * winy
    pixsize /= viewfac
    xmin, xmax = -0.5 * winx, 0.5 * winx
    ymin, ymax = -0.5 * ycor * winy, 0.5 * ycor * winy
    dx, dy = shiftx * viewfac, shifty * viewfac
    l, r, b, t = [(v) * pixsize for v in (xmin + dx, xmax + dx, ymin + dy, ymax + dy)]
    return np.array(
        [
            [2 * near / (r - l), 0, (r + l) / (r - l), 0],
            [0, 2 * near / (t - b), (t + b) / (t - b), 0],
            [0, 0, -(far + near) / (far - near), -2 * far * near / (far - near)],
            [0, 0, -1, 0],
        ]
    )


def random_points_in_view(cam, n=200, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0, cam.width, n)
    v = rng.uniform(0, cam.height, n)
    z = rng.uniform(0.5, 50, n)
    return np.c_[(u - cam.cx) / cam.fx * z, (v - cam.cy) / cam.fy * z, z], np.c_[u, v]


CAMERAS = [
    CameraIntrinsics(640, 480, 320, 320, 320, 240),
    CameraIntrinsics(1280, 720, 900, 870, 600.5, 390.25),  # fx > fy, off centre
    CameraIntrinsics(640, 480, 500, 650, 300, 260),  # fy > fx
    CameraIntrinsics(480, 640, 410, 400, 250, 300),  # portrait -> vertical fit
    CameraIntrinsics(512, 512, 700, 700, 256, 256),  # square image
    CameraIntrinsics(100, 4000, 300, 2000, 40, 2100),  # extreme portrait, fy >> fx
]


def test_ninety_degree_fovs_are_exact():
    cam = CameraIntrinsics.from_horizontal_fov(640, 480, 90)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (320.0, 320.0, 320.0, 240.0)
    np.testing.assert_array_equal(cam.K, [[320, 0, 320], [0, 320, 240], [0, 0, 1]])
    cam = CameraIntrinsics.from_vertical_fov(640, 480, 90)
    assert (cam.fx, cam.fy) == (240.0, 240.0)


def test_other_fovs_against_closed_forms():
    cam = CameraIntrinsics.from_vertical_fov(1280, 720, 60)  # tan 30 = 1/sqrt(3)
    assert cam.fy == pytest.approx(360 * math.sqrt(3), rel=1e-15)
    assert cam.fov_y_deg == pytest.approx(60, abs=1e-12)
    assert cam.fov_x_deg == pytest.approx(math.degrees(2 * math.atan(640 / (360 * math.sqrt(3)))), abs=1e-12)
    cam = CameraIntrinsics.from_horizontal_fov(1920, 1080, 120)  # tan 60 = sqrt(3)
    assert cam.fx == pytest.approx(960 / math.sqrt(3), rel=1e-15)


def test_record_rules():
    # horizontalFov = 0: derived from the vertical one with square pixels.
    cam = CameraIntrinsics.from_fov(1280, 720, 90, 0)
    assert (cam.fx, cam.fy) == (360.0, 360.0)
    # Positive horizontalFov sets fx; verticalFov still sets fy.
    cam = CameraIntrinsics.from_fov(1280, 720, 90, 90)
    assert (cam.fx, cam.fy) == (640.0, 360.0)
    # The .rscene sensor example: calibration wins over the FOVs.
    cam = CameraIntrinsics.from_sensor_fields(1280, 720, 45, 70, 900, 900, 640, 360)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (900, 900, 640, 360)
    cam = CameraIntrinsics.from_sensor_fields(1280, 720, 90, 0, 900, 880)
    assert (cam.cx, cam.cy) == (640, 360)
    cam = CameraIntrinsics.from_sensor_fields(1280, 720, 90, 0, 900, 0)  # incomplete calibration
    assert cam.fy == 360.0


@pytest.mark.parametrize("bad", [0, 180, -5, 200, float("nan")])
def test_bad_fov_rejected(bad):
    with pytest.raises(ValueError, match="field of view"):
        CameraIntrinsics.from_vertical_fov(640, 480, bad)


def test_bad_values_rejected():
    with pytest.raises(ValueError):
        CameraIntrinsics(0, 480, 1, 1, 0, 0)
    with pytest.raises(ValueError):
        CameraIntrinsics(640.5, 480, 1, 1, 0, 0)
    with pytest.raises(ValueError):
        CameraIntrinsics(640, 480, -1, 1, 0, 0)
    with pytest.raises(ValueError):
        CameraIntrinsics(640, 480, 1, 1, float("inf"), 0)


@pytest.mark.parametrize("cam", CAMERAS)
def test_k_and_opengl_projection_agree(cam):
    p_cv, pixels = random_points_in_view(cam)
    np.testing.assert_allclose(project_with_k(cam.K, p_cv), pixels, atol=1e-9)
    np.testing.assert_allclose(cam.project(p_cv), pixels, atol=1e-9)
    gl_pixels, _ = project_with_gl(cam.opengl_projection(0.1, 100), p_cv, cam.width, cam.height)
    np.testing.assert_allclose(gl_pixels, pixels, atol=1e-9)


def test_opengl_depth_range_and_infinite_far():
    cam = CAMERAS[1]
    pts = np.array([[0.3, -0.2, 0.1], [1.0, 2.0, 100.0]])  # at near and at far
    _, ndc_z = project_with_gl(cam.opengl_projection(0.1, 100), pts, cam.width, cam.height)
    np.testing.assert_allclose(ndc_z, [-1, 1], atol=1e-12)
    p_inf = cam.opengl_projection(0.1, math.inf)
    p_far = cam.opengl_projection(0.1, 1e12)
    np.testing.assert_allclose(p_inf, p_far, atol=1e-9)
    with pytest.raises(ValueError):
        cam.opengl_projection(1.0, 0.5)


@pytest.mark.parametrize("cam", CAMERAS)
def test_blender_settings_reproduce_k(cam):
    params = cam.blender_camera_params()
    assert params.sensor_fit in ("HORIZONTAL", "VERTICAL")
    assert min(params.pixel_aspect_x, params.pixel_aspect_y) == 1.0
    assert params.lens >= 1.0
    # Blender's own maths on those settings gives our OpenGL matrix, hence our K.
    winmat = blender_winmat(
        params.lens, params.sensor_width, params.sensor_height, params.sensor_fit,
        params.shift_x, params.shift_y, params.resolution_x, params.resolution_y,
        params.pixel_aspect_x, params.pixel_aspect_y, 0.1, 100.0,
    )
    np.testing.assert_allclose(winmat, cam.opengl_projection(0.1, 100.0), rtol=1e-12, atol=1e-12)
    # Round trip through the inverse formulas.
    back = CameraIntrinsics.from_params(params)
    np.testing.assert_allclose(back.K, cam.K, rtol=1e-12)
    assert (back.width, back.height) == (cam.width, cam.height)
    # Leaving sensor_fit on AUTO gives the same camera (both sensor sizes are set).
    auto = CameraIntrinsics.from_blender_params(**{**params.as_dict(), "sensor_fit": "AUTO"})
    np.testing.assert_allclose(auto.K, cam.K, rtol=1e-12)


def test_blender_settings_dicts():
    params = CAMERAS[1].blender_camera_params()
    cam_settings, render_settings = params.camera_settings(), params.render_settings()
    assert cam_settings["type"] == "PERSP" and cam_settings["sensor_fit"] == "HORIZONTAL"
    assert render_settings["resolution_percentage"] == 100
    assert set(cam_settings) | set(render_settings) >= set(params.as_dict())


def test_shift_signs():
    # Principal point left of and above the centre: Blender shift_x > 0 and shift_y < 0.
    params = CameraIntrinsics(640, 480, 500, 500, 300, 200).blender_camera_params()
    assert params.shift_x > 0 and params.shift_y < 0
    assert params.shift_x == pytest.approx(20 / 640) and params.shift_y == pytest.approx(-40 / 640)


def test_blender_default_camera():
    # Blender's default camera: 50 mm lens, 36 mm sensor, 1920 x 1080 -> ~39.6 deg horizontal FOV.
    cam = CameraIntrinsics.from_blender_params(50, 36, 24, "AUTO", 0, 0, 1920, 1080)
    assert cam.fx == pytest.approx(50 * 1920 / 36) and cam.fy == cam.fx
    assert (cam.cx, cam.cy) == (960, 540)
    assert cam.fov_x_deg == pytest.approx(math.degrees(2 * math.atan(18 / 50)))
    # Explicit VERTICAL fit uses sensor_height.
    cam = CameraIntrinsics.from_blender_params(50, 36, 24, "VERTICAL", 0, 0, 1920, 1080)
    assert cam.fy == pytest.approx(50 * 1080 / 24)


def test_tiny_focal_length_enlarges_sensor():
    cam = CameraIntrinsics(640, 480, 10, 10, 320, 240)  # ~176 deg FOV: lens would be < 1 mm
    params = cam.blender_camera_params()
    assert params.lens == pytest.approx(1.0) and params.sensor_width > 36
    np.testing.assert_allclose(CameraIntrinsics.from_params(params).K, cam.K, rtol=1e-12)


def test_depth_range_conversion():
    cam = CameraIntrinsics(4, 3, 2.0, 2.5, 2.0, 1.5)
    depth = np.full((3, 4), 10.0)
    depth[0, 0] = np.inf
    rng = cam.depth_to_range(depth)
    # Top-left pixel centre (0.5, 0.5); pixel (row 2, col 3) centre (3.5, 2.5).
    x, y = (3.5 - 2.0) / 2.0, (2.5 - 1.5) / 2.5
    assert rng[2, 3] == pytest.approx(10 * math.sqrt(x * x + y * y + 1))
    assert rng[0, 0] == np.inf
    np.testing.assert_allclose(cam.range_to_depth(rng)[1:], depth[1:])
    rays = cam.pixel_rays()
    assert rays.shape == (3, 4, 3)
    np.testing.assert_allclose(np.linalg.norm(rays, axis=-1), 1.0)


# -- orthographic ---------------------------------------------------------------------------------

@pytest.mark.parametrize("width, height, scale", [(64, 48, 4.0), (48, 64, 4.0), (101, 37, 0.7)])
def test_orthographic_p_projection_and_gl_ortho_agree(width, height, scale):
    from rscene_addon.sensors.intrinsics import OrthographicIntrinsics
    cam = OrthographicIntrinsics(width, height, scale)
    s = scale / max(width, height)  # the scale spans the larger side, square pixels
    assert cam.pixel_size == pytest.approx(s) and cam.view_size == pytest.approx((width * s, height * s))
    rng = np.random.default_rng(3)
    p_cv = np.c_[rng.uniform(-2, 2, (50, 2)), rng.uniform(0.1, 50, 50)]
    expected = np.c_[p_cv[:, 0] / s + width / 2, p_cv[:, 1] / s + height / 2]  # no dependence on z
    assert cam.project(p_cv) == pytest.approx(expected)
    assert (np.c_[p_cv, np.ones(50)] @ cam.P.T) == pytest.approx(np.c_[expected, np.ones(50)])
    gl_pixels, ndc_z = project_with_gl(cam.opengl_projection(0.1, 100.0), p_cv, width, height)
    assert gl_pixels == pytest.approx(expected)
    assert ndc_z == pytest.approx(-1 + 2 * (p_cv[:, 2] - 0.1) / (100.0 - 0.1))  # linear in depth
    # the view's edges are the image's edges
    corners = np.array([[-width * s / 2, -height * s / 2, 1.0], [width * s / 2, height * s / 2, 1.0]])
    assert cam.project(corners) == pytest.approx(np.array([[0, 0], [width, height]]))
    assert cam.depth_to_range(np.array([[1.5, np.inf]])).tolist() == [[1.5, np.inf]]


def test_orthographic_blender_params_and_validation():
    from rscene_addon.sensors.intrinsics import OrthographicIntrinsics
    cam = OrthographicIntrinsics(64, 48, 4.0)
    assert cam.projection == "orthographic"
    assert CameraIntrinsics(4, 3, 1, 1, 2, 1.5).projection == "perspective"
    params = cam.blender_camera_params()
    assert params.camera_settings() == {"type": "ORTHO", "ortho_scale": 4.0, "sensor_fit": "AUTO",
                                        "shift_x": 0.0, "shift_y": 0.0}
    assert params.render_settings() == {"resolution_percentage": 100, "resolution_x": 64, "resolution_y": 48,
                                        "pixel_aspect_x": 1.0, "pixel_aspect_y": 1.0}
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="scale"):
            OrthographicIntrinsics(64, 48, bad)
    with pytest.raises(ValueError, match="width"):
        OrthographicIntrinsics(0, 48, 1.0)
    with pytest.raises(ValueError, match="near < far"):
        cam.opengl_projection(0.1, math.inf)
