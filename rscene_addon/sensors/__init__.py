"""Sensor maths and output writing for RaiSim ``camera``/``sensor`` records (pure: stdlib + numpy).

Takes plain numbers and arrays, never the scene model or Blender, so it runs and is tested in plain
Python. One job per module:

* :mod:`rscene_addon.base.spatial` (re-exported here) quaternions (w, x, y, z), camera frames, extrinsics
* :mod:`.intrinsics` pinhole ``K``, OpenGL projection, exact Blender camera settings
* :mod:`.lidar` spinning lidar ray pattern, firing times, hit points
* :mod:`.imu` ideal IMU readings from a trajectory
* :mod:`.noise` seeded reproducible Gaussian noise
* :mod:`.writers` atomic PLY/PCD/CSV/NPY writing (:mod:`rscene_addon.base.atomic`, re-exported here)
* :mod:`.manifest` output paths and the JSON manifest
"""

from ..base.atomic import atomic_open, write_bytes_atomic, write_text_atomic
from ..base.spatial import (
    CONVENTIONS,
    R_OPENCV_FROM_OPENGL,
    R_RAISIM_FROM_OPENCV,
    R_RAISIM_FROM_OPENGL,
    camera_rotation,
    camera_to_world,
    invert_transform,
    matrix_to_quat,
    quat_conjugate,
    quat_from_axis_angle,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    quat_slerp,
    quat_to_matrix,
    rotation_from_raisim,
    world_to_camera,
)
from .imu import STANDARD_GRAVITY, ImuReadings, angular_velocity_body, second_derivative, simulate_imu
from .intrinsics import BlenderCameraParams, CameraIntrinsics
from .lidar import FiredRays, LidarPattern, hits_to_points
from .manifest import MANIFEST_FORMAT, Manifest, output_path, safe_sensor_name
from .noise import add_depth_noise, add_gaussian_noise, add_image_noise, gaussian_noise, noise_rng
from .writers import (
    IMU_CSV_HEADER,
    POINT_DTYPE,
    make_points,
    read_pcd,
    read_ply,
    write_imu_csv,
    write_npy,
    write_pcd,
    write_ply,
)

__all__ = [
    "CONVENTIONS",
    "IMU_CSV_HEADER",
    "MANIFEST_FORMAT",
    "POINT_DTYPE",
    "R_OPENCV_FROM_OPENGL",
    "R_RAISIM_FROM_OPENCV",
    "R_RAISIM_FROM_OPENGL",
    "STANDARD_GRAVITY",
    "BlenderCameraParams",
    "CameraIntrinsics",
    "FiredRays",
    "ImuReadings",
    "LidarPattern",
    "Manifest",
    "add_depth_noise",
    "add_gaussian_noise",
    "add_image_noise",
    "angular_velocity_body",
    "atomic_open",
    "camera_rotation",
    "camera_to_world",
    "gaussian_noise",
    "hits_to_points",
    "invert_transform",
    "make_points",
    "matrix_to_quat",
    "noise_rng",
    "output_path",
    "quat_conjugate",
    "quat_from_axis_angle",
    "quat_multiply",
    "quat_normalize",
    "quat_rotate",
    "quat_slerp",
    "quat_to_matrix",
    "read_pcd",
    "read_ply",
    "rotation_from_raisim",
    "safe_sensor_name",
    "second_derivative",
    "simulate_imu",
    "world_to_camera",
    "write_bytes_atomic",
    "write_imu_csv",
    "write_npy",
    "write_pcd",
    "write_ply",
    "write_text_atomic",
]
