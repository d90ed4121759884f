"""The simulator's names for the shared spatial maths (:mod:`rscene_addon.base.spatial`); no maths lives here.

Kept as a re-export so the simulator's kernels import one short module. ``quat_to_matrix`` here is the
non-normalising :func:`~rscene_addon.base.spatial.unit_quat_to_matrix`: the simulator's orientations are
unit by construction (``quat_integrate`` normalises every step), and re-normalising would change results.
"""
from __future__ import annotations

from ..base.spatial import (IDENTITY_QUAT, cross, matrix_to_quat, norm, normalize, quat_angular_velocity,
                            quat_conjugate, quat_from_axis_angle, quat_integrate, quat_multiply, quat_normalize,
                            quat_rotate, quat_rotate_inv, tangent_basis)
from ..base.spatial import unit_quat_to_matrix as quat_to_matrix

__all__ = [
    "quat_normalize", "quat_multiply", "quat_conjugate", "quat_rotate", "quat_rotate_inv", "quat_to_matrix",
    "matrix_to_quat", "quat_integrate", "quat_from_axis_angle", "quat_angular_velocity", "tangent_basis",
    "cross", "normalize", "norm", "IDENTITY_QUAT",
]
