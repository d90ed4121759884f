"""One step of a whole scene: the rigid world, the robots beside it and the kinematic bodies' animation.

``SceneStepper.step()`` steps the robots first (``multibody_solver.step_systems``): their contact impulses
change the world bodies' velocities, which the world then integrates over the same step. Kinematic tracks
(a pose per frame) are followed linearly between frames (normalised lerp for the rotation, on the short
arc), so an animated pusher moves bodies as Blender shows it moving. Contact-begin events of the world and
of every robot are merged in time order, timed from the stepper's start.
"""
from __future__ import annotations

import numpy as np

from .multibody_solver import step_systems
from .world import World

__all__ = ["SceneStepper", "checked_tracks"]


class SceneStepper:
    def __init__(self, world: World, systems: list, tracks: dict | None = None):
        self.world = world
        self.systems = systems
        self.tracks = tracks or {}
        self._world_start = world.state.time
        self._robot_starts = [system.time for system in systems]

    def pose_tracks_at_frame(self, frame: int) -> None:
        """Put every tracked kinematic body at its pose of ``frame``."""
        for name, (positions, quaternions) in self.tracks.items():
            self.world.set_kinematic_pose(name, positions[frame], quaternions[frame])

    def step(self, frame: int | None = None, fraction: float = 1.0) -> None:
        """One step; tracked bodies head for ``fraction`` of the way from ``frame - 1`` to ``frame``."""
        if frame is not None:
            for name, (positions, quaternions) in self.tracks.items():
                q0, q1 = quaternions[frame - 1], quaternions[frame]
                q1 = q1 if np.dot(q0, q1) >= 0 else -q1
                position = (1 - fraction) * positions[frame - 1] + fraction * positions[frame]
                self.world.set_kinematic_pose(name, position, (1 - fraction) * q0 + fraction * q1)
        step_systems(self.systems, self.world.model.dt)
        self.world.step()

    def clear_events(self) -> None:
        self.world.events.clear()
        for system in self.systems:
            system.events.clear()

    def take_events(self, frame: int) -> list[dict]:
        """The contact-begin events since the last call, timed from the start and tagged with ``frame``."""
        sources = [(self.world.events, self._world_start)]
        sources += [(system.events, start) for system, start in zip(self.systems, self._robot_starts)]
        events = []
        for source, start in sources:
            for event in source:
                event = dict(event)
                event["time"] = event["time"] - start
                event["frame"] = frame
                events.append(event)
            source.clear()
        events.sort(key=lambda e: e["time"])  # stable: the world's events first within a step
        return events


def checked_tracks(tracks: dict, frames: int) -> dict:
    """Validate kinematic tracks: (F,3) positions and (F,4) quaternions with at least ``frames`` rows."""
    checked = {}
    for name, (positions, quaternions) in tracks.items():
        positions = np.asarray(positions, dtype=np.float64)
        quaternions = np.asarray(quaternions, dtype=np.float64)
        if positions.shape[0] < frames or quaternions.shape[0] < frames or positions.shape[1:] != (3,) \
                or quaternions.shape[1:] != (4,):
            raise ValueError(f"kinematic track for {name!r} needs ({frames},3) positions and ({frames},4) "
                             f"quaternions, got {positions.shape} and {quaternions.shape}")
        checked[name] = (positions, quaternions)
    return checked
