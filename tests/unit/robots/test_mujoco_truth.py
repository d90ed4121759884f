"""Kinematics and dynamics of the corpus MJCF models against MuJoCo (an independent implementation).

MuJoCo is a test-only dependency; without it these tests skip. Mapping between the two conventions:
our hinge/slide coordinate is MuJoCo's qpos minus the joint's ``ref``; a free joint's velocity is linear
(world) then angular in the body frame in MuJoCo, angular in the world frame here; a ball joint's angular
velocity is in the child frame in MuJoCo, in the parent frame here. Passive forces (joint damping, springs)
are not part of either side's mass matrix or bias forces, so nothing is excluded from the comparison;
armature is on both diagonals.
"""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats.mjcf import read_robot
from rscene_addon.robots.kinematics import forward_kinematics
from rscene_addon.base.spatial import matrix_to_quat, quat_to_matrix
from rscene_addon.sim.articulated import ArticulatedSystem

from .conftest import MJCF_FILES

mujoco = pytest.importorskip("mujoco")


def _load(path):
    """MuJoCo's model of ``path``; its compiler warnings (settotalmass is deprecated) are dropped instead of
    being appended to a MUJOCO_LOG.TXT in the working directory."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: None)
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    finally:
        mujoco.set_mju_user_warning(previous)


def _loadable():
    out = []
    for path in MJCF_FILES:
        try:
            _load(path)
        except ValueError:  # e.g. cassie: its STL meshes are not in the corpus
            continue
        out.append(path)
    return out


MODELS = _loadable()
IDS = ["/".join(p.parts[-2:]) for p in MODELS]


def test_enough_models_load_in_mujoco():
    assert len(MODELS) >= 12


def _pair(path):
    mm = _load(path)
    robot = read_robot(str(path))
    # MuJoCo numbers bodies in XML pre-order, as the reader adds the (non-virtual) links
    links = [name for name, link in robot.links.items() if not link.virtual and name != "world"]
    assert len(links) == mm.nbody - 1
    for b, name in enumerate(links, 1):
        mj_name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)
        assert mj_name is None or mj_name == name
    return mm, robot, links


def _random_state(mm, robot, rng):
    """Random qpos/qvel for MuJoCo (inside joint ranges) and the same state in our coordinates;
    T maps MuJoCo's qvel to ours (u = T qvel)."""
    gcs, dofs = robot.gc_slices(), robot.dof_slices()
    qpos, qvel = mm.qpos0.copy(), rng.normal(size=mm.nv)
    q, t = robot.zero_configuration(), np.zeros((robot.dof_dim, mm.nv))
    for j in range(mm.njnt):
        name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j)
        pa, va, kind = mm.jnt_qposadr[j], mm.jnt_dofadr[j], mm.jnt_type[j]
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            gs, ds = gcs[""], dofs[""]
            value = np.concatenate([rng.normal(size=3), rng.normal(size=4)])
            value[3:] /= np.linalg.norm(value[3:])
            qpos[pa:pa + 7], q[gs] = value, value
            t[ds.start:ds.start + 3, va:va + 3] = np.eye(3)
            t[ds.start + 3:ds.stop, va + 3:va + 6] = quat_to_matrix(value[3:])
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            value = rng.normal(size=4)
            value /= np.linalg.norm(value)
            qpos[pa:pa + 4], q[gcs[name]] = value, value
            t[dofs[name], va:va + 3] = quat_to_matrix(value)
        else:
            lo, hi = mm.jnt_range[j] if mm.jnt_limited[j] else (-1.5, 1.5)
            qpos[pa] = rng.uniform(lo, hi)
            q[gcs[name]] = qpos[pa] - mm.qpos0[pa]
            t[dofs[name], va] = 1.0
    return qpos, qvel, q, t @ qvel, t


@pytest.mark.parametrize("path", MODELS, ids=IDS)
def test_world_poses_of_every_body_match_mujoco(path):
    mm, robot, links = _pair(path)
    data = mujoco.MjData(mm)
    rng = np.random.default_rng(7)
    worst_p = worst_q = 0.0
    for _ in range(5):
        qpos, _, q, _, _ = _random_state(mm, robot, rng)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(mm, data)
        poses = forward_kinematics(robot, q)
        for b, name in enumerate(links, 1):
            worst_p = max(worst_p, np.abs(poses[name][:3, 3] - data.xpos[b]).max())
            ours = matrix_to_quat(poses[name][:3, :3])
            theirs = data.xquat[b]
            worst_q = max(worst_q, min(np.abs(ours - theirs).max(), np.abs(ours + theirs).max()))
    assert worst_p < 1e-9 and worst_q < 1e-9, (worst_p, worst_q)


@pytest.mark.parametrize("path", MODELS, ids=IDS)
def test_body_mass_com_and_inertia_match_mujoco_compiler(path):
    mm, robot, links = _pair(path)
    for b, name in enumerate(links, 1):
        inertial = robot.links[name].inertial
        assert inertial is not None and inertial.mass == pytest.approx(mm.body_mass[b], rel=1e-12)
        # MuJoCo keeps principal axes (body_iquat); compare the full tensors in the body frame
        rot = quat_to_matrix(mm.body_iquat[b])
        theirs = rot @ np.diag(mm.body_inertia[b]) @ rot.T
        ours = inertial.origin[:3, :3] @ inertial.inertia @ inertial.origin[:3, :3].T
        assert np.allclose(ours, theirs, rtol=0, atol=1e-12 * max(1.0, np.abs(theirs).max()))
        assert np.allclose(inertial.origin[:3, 3], mm.body_ipos[b], rtol=0, atol=1e-12)


def _full_mass_matrix(mm, data, out):
    try:
        mujoco.mj_fullM(mm, data, out)  # MuJoCo 4
    except TypeError:
        mujoco.mj_fullM(mm, out, data.qM)  # MuJoCo 2-3


@pytest.mark.parametrize("path", MODELS, ids=IDS)
def test_mass_matrix_and_bias_forces_match_mujoco(path):
    mm, robot, _ = _pair(path)
    data = mujoco.MjData(mm)
    system = ArticulatedSystem(robot, gravity=mm.opt.gravity.copy())
    rng = np.random.default_rng(11)
    full = np.zeros((mm.nv, mm.nv))
    for _ in range(3):
        qpos, qvel, q, u, t = _random_state(mm, robot, rng)
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(mm, data)
        _full_mass_matrix(mm, data, full)
        system.set_state(q, u)
        # both sides' generalized forces do the same work: tau_mj = T^T tau_ours
        m_ours = t.T @ system.mass_matrix() @ t
        scale = max(1.0, np.abs(full).max())
        assert np.abs(m_ours - full).max() < 1e-9 * scale
        bias = t.T @ system.bias_forces()
        assert np.abs(bias - data.qfrc_bias).max() < 1e-9 * max(1.0, np.abs(data.qfrc_bias).max())


@pytest.mark.parametrize("path", MODELS, ids=IDS)
def test_joint_ranges_and_armature_match_mujoco(path):
    # our limits are on qpos - ref (reacher's target joints have ref != 0)
    mm, robot, _ = _pair(path)
    for j in range(mm.njnt):
        if mm.jnt_type[j] not in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            continue
        joint = robot.joints[mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j)]
        ref = mm.qpos0[mm.jnt_qposadr[j]]
        assert joint.armature == pytest.approx(mm.dof_armature[mm.jnt_dofadr[j]], abs=1e-15)
        if mm.jnt_limited[j]:
            assert (joint.lower + ref, joint.upper + ref) == pytest.approx(tuple(mm.jnt_range[j]), abs=1e-12)
        else:
            assert not joint.has_limits
