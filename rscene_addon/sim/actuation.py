"""Joint actuation of robots during ``simulate``: RaiSim's stable (implicit) PD with a target per frame.

A ``Drive`` holds one robot's gains (``kp``, ``kd``: one per degree of freedom, zero on a floating base) and
its position targets per recorded frame (``targets`` (F, gc_dim), None: hold the configuration the robot
starts in). ``Actuator.before_step(frame, fraction)`` sets every driven system's gains once and, before each
substep, the target ``fraction`` of the way from frame ``frame - 1`` to ``frame`` (linear; quaternion slices
renormalised) with the track's velocity as the velocity target, through the public
``ArticulatedSystem.set_pd_gains`` / ``set_pd_targets``. A system without a drive stays passive.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Actuator", "Drive", "drive_gains"]


@dataclass
class Drive:
    kp: np.ndarray              # (dof_dim,)
    kd: np.ndarray              # (dof_dim,)
    targets: np.ndarray | None = None   # (F, gc_dim) position targets per frame; None: hold the start


def drive_gains(robot, kp: float, kd: float, joints: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-dof ``(kp, kd)`` of ``robot``: ``kp``/``kd`` on every movable joint, ``joints`` {name: (kp, kd)}
    overriding single joints, zero on a floating base (it is not actuated)."""
    joints = joints or {}
    unknown = sorted(set(joints) - set(robot.movable_joints()))
    if unknown:
        raise ValueError(f"{robot.name or 'the robot'} has no movable joint named {', '.join(unknown)}")
    p, d = np.zeros(robot.dof_dim), np.zeros(robot.dof_dim)
    for name, dofs in robot.dof_slices().items():
        if name == "":   # the floating base
            continue
        p[dofs], d[dofs] = joints.get(name, (kp, kd))
    return p, d


def _quaternion_slices(robot) -> list[slice]:
    """gc slices holding a quaternion (a floating base's or joint's orientation, a spherical joint)."""
    out = []
    for name, gcs in robot.gc_slices().items():
        kind = "floating" if name == "" else robot.joints[name].type
        if kind == "floating":
            out.append(slice(gcs.start + 3, gcs.start + 7))
        elif kind == "spherical":
            out.append(gcs)
    return out


def _scalar_pairs(robot) -> tuple[np.ndarray, np.ndarray]:
    """(gc indices, dof indices) of the 1-dof joints: there a target's rate of change is its velocity."""
    gcs, dofs = robot.gc_slices(), robot.dof_slices()
    pairs = [(gcs[n].start, dofs[n].start) for n in robot.movable_joints()
             if gcs[n].stop - gcs[n].start == 1 and dofs[n].stop - dofs[n].start == 1]
    return np.array([g for g, _ in pairs], dtype=int), np.array([d for _, d in pairs], dtype=int)


class Actuator:
    """Drives ``systems`` (ArticulatedSystem, matched by ``name``) with ``drives`` {name: Drive} over
    ``frames`` frames at ``fps``. Names of ``drives`` that no system has raise ValueError."""

    def __init__(self, systems: list, drives: dict, frames: int, fps: float):
        by_name = {system.name: system for system in systems}
        unknown = sorted(set(drives) - set(by_name))
        if unknown:
            raise ValueError(f"PD gains for robots the scene does not simulate: {', '.join(unknown)}")
        self.fps = float(fps)
        self.items = []
        for name, drive in drives.items():
            system = by_name[name]
            targets = drive.targets
            if targets is None:   # hold the configuration it starts in
                targets = np.tile(system.get_generalized_coordinate(), (frames, 1))
            targets = np.asarray(targets, dtype=float)
            if targets.ndim != 2 or targets.shape[0] < frames or targets.shape[1] != system.nq:
                raise ValueError(f"{name}: PD targets need ({frames}, {system.nq}) values, got {targets.shape}")
            system.set_pd_gains(drive.kp, drive.kd)
            gc_index, dof_index = _scalar_pairs(system.robot)
            self.items.append((system, targets, _quaternion_slices(system.robot), gc_index, dof_index))
            system.set_pd_targets(targets[0], np.zeros(system.nv))

    def before_step(self, frame: int, fraction: float) -> None:
        """Targets for a substep ending ``fraction`` of the way from frame ``frame - 1`` to ``frame``."""
        for system, targets, quaternions, gc_index, dof_index in self.items:
            a, b = targets[frame - 1], targets[frame]
            target = (1.0 - fraction) * a + fraction * b
            for qs in quaternions:
                if np.dot(a[qs], b[qs]) < 0:   # the short way round
                    target[qs] = (1.0 - fraction) * a[qs] - fraction * b[qs]
                norm = np.linalg.norm(target[qs])
                target[qs] = target[qs] / norm if norm > 0 else a[qs]
            velocity = np.zeros(system.nv)
            velocity[dof_index] = (b[gc_index] - a[gc_index]) * self.fps
            system.set_pd_targets(target, velocity)
