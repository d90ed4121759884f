"""Quaternion helpers and camera frame conventions against hand-derived truths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.base import spatial as fr

SQ = math.sqrt(0.5)


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def random_quats(n, seed=0):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_hamilton_units():
    i, j, k = np.eye(4)[1], np.eye(4)[2], np.eye(4)[3]
    np.testing.assert_array_equal(fr.quat_multiply(i, j), k)
    np.testing.assert_array_equal(fr.quat_multiply(j, i), -k)
    np.testing.assert_array_equal(fr.quat_multiply(i, i), [-1, 0, 0, 0])


def test_quat_to_matrix_known_rotations():
    np.testing.assert_allclose(fr.quat_to_matrix([SQ, 0, 0, SQ]), [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
                               atol=1e-15)
    np.testing.assert_allclose(fr.quat_to_matrix([SQ, SQ, 0, 0]), rot_x(math.pi / 2), atol=1e-15)
    np.testing.assert_allclose(fr.quat_to_matrix([0, 0, 1, 0]), rot_y(math.pi), atol=1e-15)
    # Not normalized on input: same rotation.
    np.testing.assert_allclose(fr.quat_to_matrix([2, 0, 0, 0]), np.eye(3))


def test_product_composes_matrices_and_batches():
    a, b = random_quats(50, 1), random_quats(50, 2)
    ra, rb = fr.quat_to_matrix(a), fr.quat_to_matrix(b)
    np.testing.assert_allclose(fr.quat_to_matrix(fr.quat_multiply(a, b)), ra @ rb, atol=1e-12)
    assert fr.quat_to_matrix(a.reshape(5, 10, 4)).shape == (5, 10, 3, 3)


def test_rotation_matrices_are_proper():
    r = fr.quat_to_matrix(random_quats(100))
    np.testing.assert_allclose(r @ np.swapaxes(r, 1, 2), np.broadcast_to(np.eye(3), r.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, atol=1e-12)


def test_matrix_to_quat_round_trip_including_half_turns():
    q = random_quats(200, 3)
    # Half turns (w = 0) and near half turns stress the pivot choice.
    q = np.concatenate([q, [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, SQ, SQ, 0], [1e-9, 0, 0, 1]]])
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    back = fr.matrix_to_quat(fr.quat_to_matrix(q))
    np.testing.assert_allclose(fr.quat_to_matrix(back), fr.quat_to_matrix(q), atol=1e-12)
    assert np.all(back[:, 0] >= 0)
    # Same quaternion up to sign.
    np.testing.assert_allclose(np.abs(np.sum(back * q, axis=1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(fr.matrix_to_quat(rot_z(math.pi / 2)), [SQ, 0, 0, SQ], atol=1e-15)
    assert fr.matrix_to_quat(np.broadcast_to(np.eye(3), (2, 3, 3, 3))).shape == (2, 3, 4)


def test_rotate_vectors():
    np.testing.assert_allclose(fr.quat_rotate([SQ, 0, 0, SQ], [1, 0, 0]), [0, 1, 0], atol=1e-15)
    q, v = random_quats(30, 4), np.random.default_rng(5).normal(size=(30, 3))
    expected = np.einsum("nij,nj->ni", fr.quat_to_matrix(q), v)
    np.testing.assert_allclose(fr.quat_rotate(q, v), expected, atol=1e-12)
    # conjugate undoes the rotation
    np.testing.assert_allclose(fr.quat_rotate(fr.quat_conjugate(q), fr.quat_rotate(q, v)), v, atol=1e-12)


def test_axis_angle_and_slerp():
    q90 = fr.quat_from_axis_angle([0, 0, 2], math.pi / 2)
    np.testing.assert_allclose(q90, [SQ, 0, 0, SQ], atol=1e-15)
    half = fr.quat_slerp([1, 0, 0, 0], q90, 0.5)
    np.testing.assert_allclose(fr.quat_to_matrix(half), rot_z(math.pi / 4), atol=1e-12)
    np.testing.assert_allclose(fr.quat_slerp([1, 0, 0, 0], q90, [0.0, 1.0]), [[1, 0, 0, 0], q90], atol=1e-15)
    # Shorter arc: -q90 is the same rotation.
    short = fr.quat_slerp([1, 0, 0, 0], -q90, 0.5)
    np.testing.assert_allclose(fr.quat_to_matrix(short), rot_z(math.pi / 4), atol=1e-12)
    # Nearly equal endpoints must not produce NaN.
    assert np.all(np.isfinite(fr.quat_slerp([1, 0, 0, 0], [1, 1e-12, 0, 0], 0.3)))


def test_zero_quaternion_is_the_identity_everywhere():
    """One rule for every layer: a zero quaternion is no rotation (it used to raise in the sensors only)."""
    zero = [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(fr.quat_normalize(zero), [1, 0, 0, 0])
    np.testing.assert_array_equal(fr.quat_normalize([zero, [0, 0, 0, 2.0]]), [[1, 0, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(fr.quat_to_matrix(zero), np.eye(3))
    np.testing.assert_array_equal(fr.unit_quat_to_matrix(zero), np.eye(3))
    np.testing.assert_array_equal(fr.quat_rotate(zero, [1.0, 2.0, 3.0]), [1, 2, 3])
    assert fr.record_quat(zero) == fr.IDENTITY
    assert fr.same_rotation(zero, fr.IDENTITY)
    assert fr.compose(((1.0, 2.0, 3.0), zero), ((1.0, 0.0, 0.0), fr.IDENTITY)) == ((2.0, 2.0, 3.0), fr.IDENTITY)
    np.testing.assert_array_equal(fr.camera_rotation(zero, "raisim"), np.eye(3))
    np.testing.assert_array_equal(fr.quat_slerp(zero, zero, 0.5), [1, 0, 0, 0])
    with pytest.raises(ValueError):
        fr.quat_to_matrix([1, 0, 0])


def test_zero_quaternion_record_simulates_and_senses_unrotated():
    from rscene_addon.formats import rscene
    from rscene_addon.sensors.imu import simulate_imu
    from rscene_addon.sim import World

    text = ("raisim_engine_scene 2\ngravity 0 0 -9.81\n"
            "object /World/Box box 0 0 5 0 0 0 0 1 2 3 0.5 1 1 default - false true false - static true 1 "
            "18446744073709551615\n")
    world = World.from_scene(rscene.loads(text))
    np.testing.assert_array_equal(world.state.quaternion[0], [1, 0, 0, 0])
    t = np.linspace(0.0, 1.0, 5)
    readings = simulate_imu(t, np.zeros((5, 3)), np.tile([1.0, 0, 0, 0], (5, 1)), None,
                            mount_quaternion=(0, 0, 0, 0))
    np.testing.assert_allclose(readings.specific_force, np.tile([0.0, 0.0, 9.81], (5, 1)), atol=1e-9)


def test_fixed_rotations_map_axes():
    # RaiSim camera: +x forward, +y left, +z up.
    forward, left, up = np.eye(3)
    cv, gl = fr.R_RAISIM_FROM_OPENCV, fr.R_RAISIM_FROM_OPENGL
    np.testing.assert_array_equal(cv @ [0, 0, 1], forward)  # OpenCV +z forward
    np.testing.assert_array_equal(cv @ [1, 0, 0], -left)  # +x right
    np.testing.assert_array_equal(cv @ [0, 1, 0], -up)  # +y down
    np.testing.assert_array_equal(gl @ [0, 0, -1], forward)  # OpenGL -z forward
    np.testing.assert_array_equal(gl @ [1, 0, 0], -left)
    np.testing.assert_array_equal(gl @ [0, 1, 0], up)
    for r in (cv, gl, fr.R_OPENCV_FROM_OPENGL):
        assert np.linalg.det(r) == pytest.approx(1.0)
    np.testing.assert_array_equal(cv @ fr.R_OPENCV_FROM_OPENGL, gl)
    assert not cv.flags.writeable


def test_blender_camera_looking_along_world_x():
    # A Blender camera with XYZ Euler (90, 0, -90) deg looks along world +x with +z up; Blender's
    # XYZ Euler matrix is Rz @ Ry @ Rx. The identity RaiSim pose looks the same way.
    blender = rot_z(-math.pi / 2) @ rot_x(math.pi / 2)
    np.testing.assert_allclose(fr.camera_rotation([1, 0, 0, 0], "opengl"), blender, atol=1e-15)


def test_extrinsics_of_spec_example_camera():
    # RsceneFile.rst example: camera at (-4, 0, 1.5), quaternion 15 deg about +y, "tilts its +x
    # view direction down".
    pos, q = np.array([-4.0, 0.0, 1.5]), [0.991445, 0, 0.130526, 0]
    t = fr.camera_to_world(pos, q, "opencv")
    a = math.radians(15)
    np.testing.assert_allclose(t[:3, 2], [math.cos(a), 0, -math.sin(a)], atol=1e-5)  # optical axis
    np.testing.assert_allclose(t[:3, 1], [-math.sin(a), 0, -math.cos(a)], atol=1e-5)  # image down
    np.testing.assert_allclose(t[:3, 0], [0, -1, 0], atol=1e-12)  # image right = world -y
    np.testing.assert_array_equal(t[:3, 3], pos)
    np.testing.assert_array_equal(t[3], [0, 0, 0, 1])
    # A point 3 m ahead lies on the optical axis at z = 3 in OpenCV and at -z in OpenGL.
    ahead = np.append(pos + 3 * t[:3, 2], 1.0)
    np.testing.assert_allclose(fr.world_to_camera(pos, q, "opencv") @ ahead, [0, 0, 3, 1], atol=1e-12)
    np.testing.assert_allclose(fr.world_to_camera(pos, q, "opengl") @ ahead, [0, 0, -3, 1], atol=1e-12)
    np.testing.assert_allclose(fr.world_to_camera(pos, q, "raisim") @ ahead, [3, 0, 0, 1], atol=1e-12)


def test_batched_extrinsics_and_inverse():
    q = random_quats(10, 7)
    p = np.random.default_rng(8).normal(size=(10, 3))
    t = fr.camera_to_world(p, q, "opengl")
    assert t.shape == (10, 4, 4)
    np.testing.assert_allclose(fr.invert_transform(t) @ t, np.broadcast_to(np.eye(4), t.shape), atol=1e-12)
    with pytest.raises(ValueError, match="convention"):
        fr.camera_to_world(p[0], q[0], "vulkan")


def _same_bits(a, b) -> bool:
    a, b = tuple(map(float, a)), tuple(map(float, b))
    return len(a) == len(b) and all(x == y and math.copysign(1, x) == math.copysign(1, y) or x != x and y != y
                                    for x, y in zip(a, b))


def _awkward_quaternions(rng, n):
    """Random rotations, plus the cases where an order of operations shows: zero, tiny, huge, NaN,
    negative w, exact half turns and ties between Shepperd pivots."""
    qs = list(rng.normal(size=(n, 4)))
    qs += [np.zeros(4), np.array([0.0, -0.0, 0.0, -0.0]), np.full(4, 1e-170), np.full(4, 1e200),
           np.array([np.nan, 0, 0, 1]), np.array([-1.0, 0, 0, 0]), np.array([0.0, 1, 0, 0]),
           np.array([0.0, 0, 1, 1]), np.array([1.0, 1, 1, 1]), np.array([-0.5, 0.5, -0.5, 0.5])]
    return qs


def test_record_tuple_helpers_are_bit_identical_to_the_array_functions():
    """The per-record helpers (plain floats, for the readers' speed) give the very doubles the array
    functions give, so a reader's output does not change with the path it took."""
    rng = np.random.default_rng(11)
    qs = _awkward_quaternions(rng, 500)
    with np.errstate(all="ignore"):
        for i, q in enumerate(qs):
            p = qs[(i * 7 + 3) % len(qs)]
            assert _same_bits(fr.record_quat(q), fr._clean(fr.quat_normalize(q)))
            assert _same_bits(fr.record_quat_mul(q, p), fr._clean(fr.quat_multiply(q, p)))
            m = fr.quat_to_matrix(q)
            assert _same_bits(fr.record_rotate(q, p[:3]), fr._clean(m @ p[:3]))
            assert _same_bits(fr.record_rpy(q), fr.matrix_to_rpy(m))
            assert _same_bits(fr.record_coppelia_euler(q, degrees=False), fr.matrix_to_coppelia_euler(m))
            for matrix in (m, fr.coppelia_euler_to_matrix(*(p[:3] * 3)), np.diag(q[:3]), q[:3, None] * p[None, :3]):
                assert _same_bits(fr.record_quat_from_matrix(matrix), fr._clean(fr.matrix_to_quat(matrix))), matrix


def test_compose_shortcuts_match_the_matrix_product_bit_for_bit():
    """``compose`` skips the product for an identity parent rotation or a zero offset; the doubles must be
    those of the product, signed zeros, tiny, huge and non-finite inputs included."""
    rng = np.random.default_rng(5)
    qs = _awkward_quaternions(rng, 200)
    qs += [np.array([1.0, -0.0, 0.0, -0.0]), np.array([1.0, 0.0, 0.0, 0.0])] * 20
    vectors = [rng.normal(size=3) * 10.0 ** rng.integers(-200, 200) for _ in range(100)]
    vectors += [np.zeros(3), np.array([-0.0, 0.0, -0.0]), np.array([np.inf, 0.0, 1.0]),
                np.array([np.nan, -0.0, 0.0]), np.array([1e308, -1e308, 5e-324])]
    with np.errstate(all="ignore"):
        for i, q in enumerate(qs):
            for j in (i, i * 3 + 1, i * 5 + 2):
                pa, pb = vectors[j % len(vectors)], vectors[(j * 7 + i) % len(vectors)]
                qb = qs[(i * 11 + j) % len(qs)]
                for b_position in (pb, fr.ORIGIN, (-0.0, 0.0, -0.0)):
                    a, b = (tuple(pa), tuple(q)), (tuple(b_position), tuple(qb))
                    fast, slow = fr.compose(a, b), fr._compose_product(a, b)
                    assert _same_bits(fast[0], slow[0]) and _same_bits(fast[1], slow[1]), (a, b)
                    a = (tuple(pa), fr.IDENTITY)
                    fast, slow = fr.compose(a, b), fr._compose_product(a, b)
                    assert _same_bits(fast[0], slow[0]) and _same_bits(fast[1], slow[1]), (a, b)
