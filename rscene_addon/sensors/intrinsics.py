"""Pinhole camera intrinsics (and the orthographic camera's) and their exact Blender and OpenGL
equivalents.

Pixel coordinates (``u`` right, ``v`` down) are continuous and measured from the image's top-left
*corner*: pixel ``(row i, column j)`` covers ``[j, j+1) x [i, i+1)`` and its centre is at
``(j + 0.5, i + 0.5)``. A centred principal point is therefore ``cx = W/2, cy = H/2`` (as in the
``.rscene`` example ``calibrationCx=640`` for ``width=1280``). OpenCV's own convention puts pixel
centres on integers; subtract 0.5 from ``cx, cy`` when handing ``K`` to code that assumes it.

Projection of a point ``(x, y, z)`` in the OpenCV camera frame (``+z`` forward, ``+x`` right,
``+y`` down), in pixels::

    u = fx * x / z + cx        v = fy * y / z + cy

Blender (perspective camera, render resolution ``W x H`` at 100 %, pixel aspect ``ax, ay``).
Blender's ``BKE_camera_params_compute_viewplane`` (and Cycles' own copy of it) gives, with
``ycor = ay / ax`` and the fit dimension ``V = W`` (``sensor_fit='HORIZONTAL'``, sensor size
``sensor_width``) or ``V = ycor * H`` (``'VERTICAL'``, sensor size ``sensor_height``)::

    fx = lens * V / sensor          fy = fx / ycor
    cx = W/2 - shift_x * V          cy = H/2 + shift_y * V / ycor

so lens shift is measured in units of the fitted sensor dimension (the larger one for ``'AUTO'``),
a positive ``shift_x`` moves the principal point left in the image (smaller ``cx``), and a positive
``shift_y`` moves it down (larger ``cy``, since ``v`` grows downwards while Blender's ``y`` grows
upwards). :meth:`CameraIntrinsics.blender_camera_params` inverts these formulas;
:meth:`CameraIntrinsics.from_blender_params` applies them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["BlenderCameraParams", "BlenderOrthoParams", "CameraIntrinsics", "OrthographicIntrinsics"]

# Blender's RNA limits for the settings written by blender_camera_params.
_BLENDER_MIN_LENS_MM = 1.0
_BLENDER_MAX_SHIFT = 10.0
_BLENDER_MAX_PIXEL_ASPECT = 200.0


def _focal_from_fov(size_px: float, fov_deg: float, what: str) -> float:
    """Focal length (px) that spans ``size_px`` pixels over ``fov_deg`` degrees.

    ``f = (size/2) cot(fov/2)``, with ``cot(a/2) = (1 + cos a) / sin a`` evaluated on the full angle:
    for 90 deg ``sin`` rounds to exactly 1, so ``f = size/2`` exactly (``math.tan`` of
    ``radians(45)`` is one ulp below 1).
    """
    fov = float(fov_deg)
    if not 0.0 < fov < 180.0:
        raise ValueError(f"{what} must be in (0, 180) degrees, got {fov_deg!r}")
    a = math.radians(fov)
    return 0.5 * size_px * (1.0 + math.cos(a)) / math.sin(a)



def _check_image_size(intrinsics) -> None:
    """Make a frozen dataclass's ``width``/``height`` plain positive ints (a bool or 2.5 is refused)."""
    for name in ("width", "height"):
        value = getattr(intrinsics, name)
        if isinstance(value, bool) or int(value) != value or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
        object.__setattr__(intrinsics, name, int(value))

@dataclass(frozen=True)
class BlenderCameraParams:
    """Blender settings reproducing a pinhole camera exactly.

    Camera data: ``lens`` (mm), ``sensor_width``/``sensor_height`` (mm, both set so any
    ``sensor_fit`` reads the right one), ``sensor_fit`` (``'HORIZONTAL'`` or ``'VERTICAL'``),
    ``shift_x``/``shift_y`` (fractions of the fitted sensor dimension). Render settings:
    ``resolution_x``/``resolution_y`` (px, at ``resolution_percentage = 100``) and
    ``pixel_aspect_x``/``pixel_aspect_y`` (>= 1; their ratio expresses ``fx != fy``).
    Blender stores these as float32, so expect ~1e-7 relative error after a trip through Blender.
    """

    lens: float
    sensor_width: float
    sensor_height: float
    sensor_fit: str
    shift_x: float
    shift_y: float
    resolution_x: int
    resolution_y: int
    pixel_aspect_x: float
    pixel_aspect_y: float

    def camera_settings(self) -> dict:
        """Attributes of ``bpy.types.Camera`` (camera data), plus ``type='PERSP'``."""
        keys = ("lens", "sensor_width", "sensor_height", "sensor_fit", "shift_x", "shift_y")
        return {"type": "PERSP", **{k: getattr(self, k) for k in keys}}

    def render_settings(self) -> dict:
        """Attributes of ``bpy.types.RenderSettings`` (``scene.render``)."""
        keys = ("resolution_x", "resolution_y", "pixel_aspect_x", "pixel_aspect_y")
        return {"resolution_percentage": 100, **{k: getattr(self, k) for k in keys}}

    def as_dict(self) -> dict:
        return asdict(self)


def _fit_and_viewfac(
    width: int, height: int, aspect_x: float, aspect_y: float, fit: str
) -> tuple[str, float]:
    """Blender's resolved sensor fit and the fitted dimension ``V`` in pixel-width units."""
    if fit == "AUTO":
        fit = "HORIZONTAL" if aspect_x * width >= aspect_y * height else "VERTICAL"
    if fit == "HORIZONTAL":
        return fit, float(width)
    if fit == "VERTICAL":
        return fit, (aspect_y / aspect_x) * height
    raise ValueError(f"sensor_fit must be 'AUTO', 'HORIZONTAL' or 'VERTICAL', got {fit!r}")


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics: image size (px) and focal lengths / principal point (px).

    See the module docstring for the pixel convention (``cx, cy`` measured from the top-left
    image corner, so a centred camera has ``cx = width/2``).
    """

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    projection = "perspective"  # class attribute, not a field (see OrthographicIntrinsics)

    def __post_init__(self) -> None:
        _check_image_size(self)
        for name in ("fx", "fy", "cx", "cy"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if not (self.fx > 0 and self.fy > 0 and math.isfinite(self.fx) and math.isfinite(self.fy)):
            raise ValueError(f"fx and fy must be positive and finite, got {self.fx}, {self.fy}")
        if not (math.isfinite(self.cx) and math.isfinite(self.cy)):
            raise ValueError(f"cx and cy must be finite, got {self.cx}, {self.cy}")

    # -- constructors ---------------------------------------------------------------------------

    @classmethod
    def from_vertical_fov(cls, width: int, height: int, vertical_fov_deg: float) -> CameraIntrinsics:
        """Square pixels, centred principal point, ``fy = (H/2) / tan(vfov/2)``."""
        f = _focal_from_fov(height, vertical_fov_deg, "vertical field of view")
        return cls(width, height, f, f, 0.5 * width, 0.5 * height)

    @classmethod
    def from_horizontal_fov(cls, width: int, height: int, horizontal_fov_deg: float) -> CameraIntrinsics:
        """Square pixels, centred principal point, ``fx = (W/2) / tan(hfov/2)``."""
        f = _focal_from_fov(width, horizontal_fov_deg, "horizontal field of view")
        return cls(width, height, f, f, 0.5 * width, 0.5 * height)

    @classmethod
    def from_fov(
        cls, width: int, height: int, vertical_fov_deg: float, horizontal_fov_deg: float = 0.0
    ) -> CameraIntrinsics:
        """The ``camera``/``sensor`` record rule (rayrai): ``verticalFov`` sets ``fy``;
        ``horizontalFov`` sets ``fx`` when positive, otherwise pixels are square (``fx = fy``).

        Both positive and inconsistent with the aspect ratio gives non-square pixels, as rayrai's
        projection does; use :meth:`from_horizontal_fov` to keep square pixels instead.
        """
        fy = _focal_from_fov(height, vertical_fov_deg, "vertical field of view")
        fx = fy
        if horizontal_fov_deg and float(horizontal_fov_deg) > 0.0:
            fx = _focal_from_fov(width, horizontal_fov_deg, "horizontal field of view")
        return cls(width, height, fx, fy, 0.5 * width, 0.5 * height)

    @classmethod
    def from_calibration(
        cls, width: int, height: int, fx: float, fy: float, cx: float, cy: float
    ) -> CameraIntrinsics:
        """From ``calibrationFx/Fy/Cx/Cy`` (px, ``cx, cy`` from the top-left corner)."""
        return cls(width, height, fx, fy, cx, cy)

    @classmethod
    def from_sensor_fields(
        cls,
        width: int,
        height: int,
        vertical_fov_deg: float,
        horizontal_fov_deg: float = 0.0,
        calibration_fx: float = 0.0,
        calibration_fy: float = 0.0,
        calibration_cx: float = 0.0,
        calibration_cy: float = 0.0,
    ) -> CameraIntrinsics:
        """Resolve a ``sensor`` record: calibration wins when ``calibrationFx`` and
        ``calibrationFy`` are both positive (a non-positive ``cx``/``cy`` then means the image
        centre); otherwise :meth:`from_fov`. Zero is the records' "unset" value.
        """
        if calibration_fx > 0 and calibration_fy > 0:
            cx = calibration_cx if calibration_cx > 0 else 0.5 * width
            cy = calibration_cy if calibration_cy > 0 else 0.5 * height
            return cls(width, height, calibration_fx, calibration_fy, cx, cy)
        return cls.from_fov(width, height, vertical_fov_deg, horizontal_fov_deg)

    @classmethod
    def from_blender_params(
        cls,
        lens: float,
        sensor_width: float,
        sensor_height: float,
        sensor_fit: str,
        shift_x: float,
        shift_y: float,
        resolution_x: int,
        resolution_y: int,
        pixel_aspect_x: float = 1.0,
        pixel_aspect_y: float = 1.0,
    ) -> CameraIntrinsics:
        """Intrinsics that Blender renders for these settings (formulas in the module docstring).

        ``sensor_fit`` may be ``'AUTO'``: horizontal when ``W * ax >= H * ay``, sensor size
        ``sensor_width`` (Blender uses ``sensor_height`` only for an explicit ``'VERTICAL'``).
        """
        width, height = int(resolution_x), int(resolution_y)
        _, viewfac = _fit_and_viewfac(width, height, pixel_aspect_x, pixel_aspect_y, sensor_fit)
        sensor = sensor_height if sensor_fit == "VERTICAL" else sensor_width
        ycor = pixel_aspect_y / pixel_aspect_x
        fx = lens * viewfac / sensor
        return cls(
            width,
            height,
            fx,
            fx / ycor,
            0.5 * width - shift_x * viewfac,
            0.5 * height + shift_y * viewfac / ycor,
        )

    @classmethod
    def from_params(cls, params: BlenderCameraParams) -> CameraIntrinsics:
        """:meth:`from_blender_params` from a :class:`BlenderCameraParams`."""
        return cls.from_blender_params(**params.as_dict())

    def resized(self, width: int, height: int) -> CameraIntrinsics:
        """The same view on a ``width x height`` pixel grid. The image rectangle maps onto itself, so in
        the corner-origin pixel coordinates of the module docstring ``fx, cx`` scale by ``width / W``
        and ``fy, cy`` by ``height / H`` (a pixel centre ``j + 0.5`` goes to ``(j + 0.5) width / W``);
        a different aspect ratio makes the pixels non-square (``fx / fy`` changes), the view stays."""
        sx, sy = int(width) / self.width, int(height) / self.height
        return CameraIntrinsics(width, height, self.fx * sx, self.fy * sy, self.cx * sx, self.cy * sy)

    # -- matrices -------------------------------------------------------------------------------

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the conventional name
        """OpenCV camera matrix ``(3, 3)`` in pixels (corner-origin ``cx, cy``)."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def fov_x_deg(self) -> float:
        """Horizontal angular extent of the image (deg), also for an off-centre ``cx``."""
        return math.degrees(math.atan(self.cx / self.fx) + math.atan((self.width - self.cx) / self.fx))

    @property
    def fov_y_deg(self) -> float:
        """Vertical angular extent of the image (deg), also for an off-centre ``cy``."""
        return math.degrees(math.atan(self.cy / self.fy) + math.atan((self.height - self.cy) / self.fy))

    def opengl_projection(self, near: float, far: float) -> np.ndarray:
        """OpenGL/Blender projection ``(4, 4)`` for this camera; ``far`` may be ``inf``.

        Maps OpenGL camera coordinates (``-z`` forward, ``+y`` up) to clip space; after the divide
        by ``w = -z``, NDC ``x = -1 .. 1`` spans the image's left to right edge, ``y = -1 .. 1``
        bottom to top and ``z = -1 .. 1`` near to far, so ``u = (x + 1) W / 2`` and
        ``v = (1 - y) H / 2``. This is ``glFrustum`` of Blender's view plane, i.e. the matrix
        Blender builds for the settings of :meth:`blender_camera_params`.
        """
        if not 0.0 < near < far:
            raise ValueError(f"need 0 < near < far, got near={near}, far={far}")
        w, h = self.width, self.height
        p = np.zeros((4, 4))
        p[0, 0] = 2.0 * self.fx / w
        p[0, 2] = 1.0 - 2.0 * self.cx / w
        p[1, 1] = 2.0 * self.fy / h
        p[1, 2] = 2.0 * self.cy / h - 1.0
        if math.isinf(far):
            p[2, 2], p[2, 3] = -1.0, -2.0 * near
        else:
            p[2, 2] = -(far + near) / (far - near)
            p[2, 3] = -2.0 * far * near / (far - near)
        p[3, 2] = -1.0
        return p

    def blender_camera_params(self, sensor_width_mm: float = 36.0) -> BlenderCameraParams:
        """Blender settings whose projection equals ``K`` exactly (see the module docstring).

        The fit follows the longer side after pixel aspect, as ``'AUTO'`` would, so the chosen
        ``sensor_width_mm`` (the film back, which has no optical effect) spans that side. It is
        enlarged when the lens would otherwise fall under Blender's 1 mm minimum.
        """
        w, h = self.width, self.height
        # Blender's pixel aspect ratio ax/ay equals fy/fx; both must be >= 1, so the smaller is 1.
        ratio = self.fy / self.fx
        aspect_x, aspect_y = (ratio, 1.0) if ratio >= 1.0 else (1.0, 1.0 / ratio)
        if max(aspect_x, aspect_y) > _BLENDER_MAX_PIXEL_ASPECT:
            raise ValueError(f"fx/fy = {1 / ratio:g} exceeds Blender's pixel aspect limit of 200")
        fit, viewfac = _fit_and_viewfac(w, h, aspect_x, aspect_y, "AUTO")
        ycor = aspect_y / aspect_x
        sensor = max(float(sensor_width_mm), _BLENDER_MIN_LENS_MM * viewfac / self.fx)
        shift_x = (0.5 * w - self.cx) / viewfac
        shift_y = (self.cy - 0.5 * h) * ycor / viewfac
        if max(abs(shift_x), abs(shift_y)) > _BLENDER_MAX_SHIFT:
            raise ValueError(f"principal point ({self.cx}, {self.cy}) is beyond Blender's shift range")
        return BlenderCameraParams(
            lens=self.fx * sensor / viewfac,
            sensor_width=sensor,
            sensor_height=sensor,
            sensor_fit=fit,
            shift_x=shift_x,
            shift_y=shift_y,
            resolution_x=w,
            resolution_y=h,
            pixel_aspect_x=aspect_x,
            pixel_aspect_y=aspect_y,
        )

    # -- per-pixel geometry ---------------------------------------------------------------------

    def project(self, points_cv) -> np.ndarray:
        """Pixel coordinates ``(..., 2)`` of points ``(..., 3)`` in the OpenCV camera frame (m)."""
        p = np.asarray(points_cv, dtype=np.float64)
        z = p[..., 2]
        return np.stack([self.fx * p[..., 0] / z + self.cx, self.fy * p[..., 1] / z + self.cy], axis=-1)

    def pixel_rays(self) -> np.ndarray:
        """Unit rays ``(H, W, 3)`` through pixel centres, in the OpenCV camera frame."""
        u = np.arange(self.width) + 0.5
        v = np.arange(self.height) + 0.5
        x = np.broadcast_to((u - self.cx) / self.fx, (self.height, self.width))
        y = np.broadcast_to(((v - self.cy) / self.fy)[:, None], (self.height, self.width))
        rays = np.stack([x, y, np.ones_like(x)], axis=-1)
        return rays / np.linalg.norm(rays, axis=-1, keepdims=True)

    def depth_to_range(self, depth) -> np.ndarray:
        """Euclidean distance (m, ``(H, W)``) from planar depth along ``+z`` (m, ``(H, W)``).

        Cycles' Z pass is planar depth; ``inf`` (background) stays ``inf``.
        """
        return np.asarray(depth, dtype=np.float64) / self.pixel_rays()[..., 2]

    def range_to_depth(self, distance) -> np.ndarray:
        """Planar depth along ``+z`` (m, ``(H, W)``) from Euclidean distance (m, ``(H, W)``)."""
        return np.asarray(distance, dtype=np.float64) * self.pixel_rays()[..., 2]


@dataclass(frozen=True)
class BlenderOrthoParams:
    """Blender settings of an orthographic camera: camera data ``ortho_scale`` (m across the fitted
    dimension), ``sensor_fit`` and zero shift; render resolution at 100 % with square pixels."""

    ortho_scale: float
    sensor_fit: str
    resolution_x: int
    resolution_y: int

    def camera_settings(self) -> dict:
        """Attributes of ``bpy.types.Camera`` (camera data), plus ``type='ORTHO'``."""
        return {"type": "ORTHO", "ortho_scale": self.ortho_scale, "sensor_fit": self.sensor_fit,
                "shift_x": 0.0, "shift_y": 0.0}

    def render_settings(self) -> dict:
        """Attributes of ``bpy.types.RenderSettings`` (``scene.render``)."""
        return {"resolution_percentage": 100, "resolution_x": self.resolution_x,
                "resolution_y": self.resolution_y, "pixel_aspect_x": 1.0, "pixel_aspect_y": 1.0}


@dataclass(frozen=True)
class OrthographicIntrinsics:
    """An orthographic camera: image size (px) and ``scale``, the view's extent (m) across the image's
    larger dimension (Blender's ``ortho_scale`` with ``sensor_fit='AUTO'``; the ``camera`` record's
    ``orthoScale``). Square pixels of ``pixel_size = scale / max(W, H)`` metres, view centred on the
    optical axis. There is no ``K`` (no pinhole); projection of a point ``(x, y, z)`` in the OpenCV
    camera frame, in pixels (corner origin, see the module docstring), does not depend on ``z``::

        u = x / pixel_size + cx        v = y / pixel_size + cy        (cx, cy) = (W/2, H/2)

    i.e. ``[u, v, 1] = P @ [x, y, z, 1]`` with the affine ``P`` (3 x 4) of :attr:`P`. Depth is the
    distance along ``+z`` from the camera's plane, which for parallel rays is also the range.
    """

    width: int
    height: int
    scale: float
    projection = "orthographic"

    def __post_init__(self) -> None:
        _check_image_size(self)
        scale = float(self.scale)
        if not (scale > 0.0 and math.isfinite(scale)):
            raise ValueError(f"orthographic scale must be positive and finite, got {self.scale!r}")
        object.__setattr__(self, "scale", scale)

    def resized(self, width: int, height: int) -> OrthographicIntrinsics:
        """The same extent across the larger side on a ``width x height`` grid (what Blender renders at
        a resolution %). Pixels stay square, so the aspect ratio may change only by rounding (less than
        a pixel); anything more raises ``ValueError``."""
        if abs(int(width) * self.height - int(height) * self.width) >= max(self.width, self.height):
            raise ValueError(f"an orthographic view keeps its aspect ratio: {self.width}x{self.height} cannot "
                             f"become {width}x{height}")
        return OrthographicIntrinsics(width, height, self.scale)

    @property
    def pixel_size(self) -> float:
        """Metres per pixel (both axes)."""
        return self.scale / max(self.width, self.height)

    @property
    def cx(self) -> float:
        return 0.5 * self.width

    @property
    def cy(self) -> float:
        return 0.5 * self.height

    @property
    def view_size(self) -> tuple[float, float]:
        """``(width, height)`` of the view in metres."""
        return self.width * self.pixel_size, self.height * self.pixel_size

    @property
    def P(self) -> np.ndarray:  # noqa: N802 - the conventional name of a projection matrix
        """Affine projection ``(3, 4)``: OpenCV camera-frame ``[x, y, z, 1]`` to pixel ``[u, v, 1]``."""
        k = 1.0 / self.pixel_size
        return np.array([[k, 0.0, 0.0, self.cx], [0.0, k, 0.0, self.cy], [0.0, 0.0, 0.0, 1.0]])

    def opengl_projection(self, near: float, far: float) -> np.ndarray:
        """OpenGL/Blender ``glOrtho`` projection ``(4, 4)`` of the view (``far`` must be finite).

        Maps OpenGL camera coordinates (``-z`` forward, ``+y`` up) to clip space with ``w = 1``:
        NDC ``x = -1 .. 1`` spans the image's left to right edge, ``y = -1 .. 1`` bottom to top and
        ``z = -1 .. 1`` near to far, so ``u = (x + 1) W / 2`` and ``v = (1 - y) H / 2``.
        """
        if not (0.0 <= near < far and math.isfinite(far)):
            raise ValueError(f"need 0 <= near < far < inf, got near={near}, far={far}")
        half_w, half_h = 0.5 * np.array(self.view_size)
        p = np.zeros((4, 4))
        p[0, 0] = 1.0 / half_w
        p[1, 1] = 1.0 / half_h
        p[2, 2] = -2.0 / (far - near)
        p[2, 3] = -(far + near) / (far - near)
        p[3, 3] = 1.0
        return p

    def blender_camera_params(self) -> BlenderOrthoParams:
        """Blender settings rendering exactly this view."""
        return BlenderOrthoParams(self.scale, "AUTO", self.width, self.height)

    def project(self, points_cv) -> np.ndarray:
        """Pixel coordinates ``(..., 2)`` of points ``(..., 3)`` in the OpenCV camera frame (m)."""
        p = np.asarray(points_cv, dtype=np.float64)
        return np.stack([p[..., 0] / self.pixel_size + self.cx, p[..., 1] / self.pixel_size + self.cy],
                        axis=-1)

    def depth_to_range(self, depth) -> np.ndarray:
        """Distance along each pixel's ray from the camera plane: for parallel rays, the depth itself."""
        return np.array(depth, dtype=np.float64)
