"""Simulate a scene for a duration and collect per-frame arrays (Kubric style: substeps per frame,
arrays out).

``simulate(scene, duration, fps)`` returns a ``Trajectory``: time (F,), names (N,) of the dynamic and
kinematic bodies (their record paths), position (F, N, 3) of each record frame, quaternion (F, N, 4)
(w, x, y, z), linear_velocity and angular_velocity (F, N, 3), contact-begin events, and per granular
system particle positions (F, P, 3) and per cloth vertex positions (F, V, 3).

Robots (``articulated`` records) are stepped together before the world each substep
(``scene_step.SceneStepper``): their links touch the world's geoms, each other and other robots, and those
contacts' begin events join the world's in ``events`` (a link named ``<record path>/<link>``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import kernels
from .actuation import Actuator
from .compile_watch import CompileCancelled, CompileStatus
from .physics_model import DYNAMIC, KINEMATIC
from .robot_scene import systems_for_scene
from .scene_step import SceneStepper, checked_tracks
from .world import World

REQUIRED_KEYS = ("time", "names", "position", "quaternion", "linear_velocity", "angular_velocity")


class Cancelled(Exception):
    """Raised by ``simulate`` when its ``cancel()`` callback returns True."""


@dataclass
class Trajectory:
    time: np.ndarray  # (F,)
    names: np.ndarray  # (N,) str
    position: np.ndarray  # (F, N, 3)
    quaternion: np.ndarray  # (F, N, 4)
    linear_velocity: np.ndarray  # (F, N, 3)
    angular_velocity: np.ndarray  # (F, N, 3)
    # contact-begin events, dicts: time, frame, body_a, body_b, point, normal, speed, impulse
    events: list = field(default_factory=list)
    particles: dict = field(default_factory=dict)  # granular path -> (F, P, 3)
    particle_radii: dict = field(default_factory=dict)  # granular path -> (P,)
    cloth: dict = field(default_factory=dict)  # deformable path -> (F, V, 3)
    cloth_faces: dict = field(default_factory=dict)  # deformable path -> (T, 3)
    fps: float = 0.0
    substeps: int = 1
    dt: float = 0.0
    warnings: list = field(default_factory=list)

    @property
    def num_frames(self) -> int:
        return len(self.time)

    def index(self, name: str) -> int:
        return int(np.nonzero(self.names == name)[0][0])

    # -- contact events as arrays ------------------------------------------------------------------------
    def event_arrays(self) -> dict:
        ev = self.events
        return {
            "contact_time": np.array([e["time"] for e in ev], dtype=np.float64),
            "contact_frame": np.array([e["frame"] for e in ev], dtype=np.int64),
            "contact_body_a": np.array([e["body_a"] for e in ev], dtype=str),
            "contact_body_b": np.array([e["body_b"] for e in ev], dtype=str),
            "contact_point": np.array([e["point"] for e in ev], dtype=np.float64).reshape(-1, 3),
            "contact_normal": np.array([e["normal"] for e in ev], dtype=np.float64).reshape(-1, 3),
            "contact_speed": np.array([e["speed"] for e in ev], dtype=np.float64),
            "contact_impulse": np.array([e["impulse"] for e in ev], dtype=np.float64),
        }

    # -- files ---------------------------------------------------------------------------------------------
    def save_npz(self, path: str) -> None:
        """Write the required keys (time, names, position, quaternion, linear_velocity, angular_velocity)
        plus extras: contact_* arrays, particles_<i>/particle_radii_<i> with particle_names, cloth_<i>/
        cloth_faces_<i> with cloth_names, fps, substeps, dt. Everything loads without pickle."""
        data = dict(time=self.time, names=np.asarray(self.names, dtype=str), position=self.position,
                    quaternion=self.quaternion, linear_velocity=self.linear_velocity,
                    angular_velocity=self.angular_velocity)
        data.update(self.event_arrays())
        data["particle_names"] = np.array(list(self.particles), dtype=str)
        for i, (name, arr) in enumerate(self.particles.items()):
            data[f"particles_{i}"] = arr
            data[f"particle_radii_{i}"] = self.particle_radii.get(name, np.zeros(arr.shape[1]))
        data["cloth_names"] = np.array(list(self.cloth), dtype=str)
        for i, (name, arr) in enumerate(self.cloth.items()):
            data[f"cloth_{i}"] = arr
            data[f"cloth_faces_{i}"] = self.cloth_faces.get(name, np.zeros((0, 3), np.int64))
        data["fps"] = np.float64(self.fps)
        data["substeps"] = np.int64(self.substeps)
        data["dt"] = np.float64(self.dt)
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **data)

    @classmethod
    def load_npz(cls, path: str) -> "Trajectory":
        with np.load(path, allow_pickle=False) as z:
            keys = set(z.files)
            missing = [k for k in REQUIRED_KEYS if k not in keys]
            if missing:
                raise ValueError(f"{path}: missing keys {missing}")
            traj = cls(z["time"], z["names"], z["position"], z["quaternion"], z["linear_velocity"],
                       z["angular_velocity"])
            if "contact_time" in keys:
                n = len(z["contact_time"])
                traj.events = [dict(time=float(z["contact_time"][i]), frame=int(z["contact_frame"][i]),
                                    body_a=str(z["contact_body_a"][i]), body_b=str(z["contact_body_b"][i]),
                                    point=z["contact_point"][i], normal=z["contact_normal"][i],
                                    speed=float(z["contact_speed"][i]),
                                    impulse=float(z["contact_impulse"][i]))
                               for i in range(n)]
            if "particle_names" in keys:
                for i, name in enumerate(z["particle_names"].tolist()):
                    traj.particles[name] = z[f"particles_{i}"]
                    traj.particle_radii[name] = z[f"particle_radii_{i}"]
            if "cloth_names" in keys:
                for i, name in enumerate(z["cloth_names"].tolist()):
                    traj.cloth[name] = z[f"cloth_{i}"]
                    traj.cloth_faces[name] = z[f"cloth_faces_{i}"]
            for key in ("fps", "dt"):
                if key in keys:
                    setattr(traj, key, float(z[key]))
            if "substeps" in keys:
                traj.substeps = int(z["substeps"])
        return traj


def frame_count(duration: float, fps: float) -> int:
    """Frames recorded: t = 0 and every 1/fps up to ``duration`` (inclusive, with a rounding tolerance)."""
    return int(math.floor(duration * fps + 1e-9)) + 1


def simulate(scene, duration: float, fps: float, substeps: int | None = None,
             progress: Callable[[float], None] | None = None, cancel: Callable[[], bool] | None = None,
             world: World | None = None, kinematic_tracks: dict | None = None,
             backend: str | None = None, actuation: dict | None = None, seed: int | None = None,
             compile_progress: Callable[[CompileStatus], None] | None = None) -> Trajectory:
    """Simulate ``scene`` for ``duration`` seconds and record ``fps`` frames per second.

    ``kinematic_tracks`` maps a kinematic body's name to its animated pose per frame,
    ``(positions (F,3), quaternions (F,4) w,x,y,z)``; substeps follow it linearly (normalised lerp for
    the rotation), so an animated pusher moves bodies as Blender shows it moving.

    Without ``substeps`` the scene's time step is kept and rounded so that a whole number of steps fits in
    a frame; with ``substeps`` the step is ``1 / (fps * substeps)``. ``progress(fraction)`` is called after
    every frame; ``cancel()`` returning True raises ``Cancelled``. ``backend`` (``auto``, ``numba``,
    ``numpy``; see ``sim.kernels``) chooses the world's solver when no ``world`` is given.
    ``actuation`` maps a robot's record path to an ``actuation.Drive`` (PD gains, targets per frame).
    ``seed`` seeds the world built here (a granular fill's jitter, ``model_builder.build``).

    The compiled kernels load on this thread as the world and its robots first need them; a first compile
    (a cold cache, no kernels shipped compiled) reports ``compile_progress(compile_watch.CompileStatus)``
    after each function and stops at ``cancel()`` too (``Cancelled``; what compiled stays
    cached).
    """
    if not fps > 0:
        raise ValueError("fps must be positive")
    if duration < 0:
        raise ValueError("duration must not be negative")
    with kernels.watch(compile_progress, cancel):
        try:
            return _simulate(scene, duration, fps, substeps, progress, cancel, world, kinematic_tracks, backend,
                             actuation, seed)
        except CompileCancelled as exc:
            raise Cancelled(str(exc)) from None


def _simulate(scene, duration, fps, substeps, progress, cancel, world, kinematic_tracks, backend, actuation,
              seed) -> Trajectory:
    world, substeps = _world_for(scene, fps, substeps, world, backend, seed)
    model = world.model
    # robots (articulated records) step beside the rigid world and touch its geoms (two-way)
    robot_warnings: list = []
    systems = systems_for_scene(scene, dt=model.dt, gravity=model.gravity, warnings=robot_warnings,
                                world=world) if scene is not None else []
    frames = frame_count(duration, fps)
    stepper = SceneStepper(world, systems, checked_tracks(kinematic_tracks or {}, frames))
    recorder = _FrameRecorder(world, systems, frames)
    actuator = Actuator(systems, actuation or {}, frames, fps)
    stepper.pose_tracks_at_frame(0)
    recorder.record(0)
    stepper.clear_events()
    for frame in range(1, frames):
        if cancel is not None and cancel():
            raise Cancelled(f"cancelled at frame {frame} of {frames}")
        for sub in range(substeps):
            actuator.before_step(frame, (sub + 1) / substeps)
            stepper.step(frame, (sub + 1) / substeps)
        recorder.record(frame)
        recorder.events.extend(stepper.take_events(frame))
        if progress is not None:
            progress(frame / (frames - 1))
    if frames == 1 and progress is not None:
        progress(1.0)
    return recorder.trajectory(fps, substeps, list(model.warnings) + robot_warnings)


def _world_for(scene, fps: float, substeps: int | None, world: World | None,
               backend: str | None = None, seed: int | None = None) -> tuple[World, int]:
    """The World to run (built from ``scene`` on ``backend`` unless given) with its step set to fit whole
    steps in a frame, and the number of steps per frame."""
    frame_dt = 1.0 / fps
    if world is not None:
        steps = max(1, int(substeps or round(frame_dt / world.dt)))
        world.model.dt = frame_dt / steps
        return world, steps
    from .model_builder import build
    if substeps is not None:
        steps = max(1, int(substeps))
        return World(*build(scene, dt=frame_dt / steps, seed=seed), backend=backend), steps
    model, state = build(scene, seed=seed)
    steps = max(1, int(round(frame_dt / model.dt)))
    model.dt = frame_dt / steps
    return World(model, state, backend=backend), steps


MAX_TRAJECTORY_BYTES = 2**30  # the recorded arrays of one simulation; the world itself needs memory too


def _check_size(frames: int, count: int, model) -> None:
    """Refuse (ValueError, before allocating) a trajectory larger than MAX_TRAJECTORY_BYTES: a granular
    fill at its particle cap over a few seconds of frames asked for 2.65 GiB and died of a MemoryError."""
    values = count * 14 + sum(g.positions.size for g in model.granular) + sum(c.vertices.size for c in model.cloth)
    size = 8 * (frames * values + frames)
    if size > MAX_TRAJECTORY_BYTES:
        raise ValueError(f"the trajectory would take {size / 2**30:.2f} GiB ({frames} frames of {count} bodies, "
                         f"{sum(len(g.positions) for g in model.granular)} particles and "
                         f"{sum(len(c.vertices) for c in model.cloth)} cloth vertices), more than "
                         f"{MAX_TRAJECTORY_BYTES / 2**30:g} GiB: simulate fewer frames or particles")


class _FrameRecorder:
    """Per-frame arrays of the movable bodies, then the robots' links (named ``<record path>/<link>``),
    and of every particle system and cloth."""

    def __init__(self, world: World, systems: list, frames: int):
        model = world.model
        self.world, self.systems = world, systems
        self.movable = np.nonzero((model.body_mode == DYNAMIC) | (model.body_mode == KINEMATIC))[0]
        self.link_names = [f"{system.name}/{link}" for system in systems for link in system.link_names]
        count = len(self.movable) + len(self.link_names)
        _check_size(frames, count, model)
        self.time = np.zeros(frames)
        self.position = np.zeros((frames, count, 3))
        self.quaternion = np.zeros((frames, count, 4))
        self.linear_velocity = np.zeros((frames, count, 3))
        self.angular_velocity = np.zeros((frames, count, 3))
        self.particles = {g.name: np.zeros((frames,) + g.positions.shape) for g in model.granular}
        self.cloth = {c.name: np.zeros((frames,) + c.vertices.shape) for c in model.cloth}
        self.events: list = []
        self.start = world.state.time

    def record(self, frame: int) -> None:
        state, model, bodies = self.world.state, self.world.model, len(self.movable)
        self.time[frame] = state.time - self.start
        self.position[frame, :bodies] = self.world.origin_positions()[self.movable]
        self.quaternion[frame, :bodies] = state.quaternion[self.movable]
        self.linear_velocity[frame, :bodies] = state.linear_velocity[self.movable]
        self.angular_velocity[frame, :bodies] = state.angular_velocity[self.movable]
        for k, granular in enumerate(model.granular):
            self.particles[granular.name][frame] = state.particles[k]
        for k, cloth in enumerate(model.cloth):
            self.cloth[cloth.name][frame] = state.cloth[k]
        at = bodies
        for system in self.systems:
            positions, quaternions = system.link_positions_quaternions()
            linear, angular = system.link_velocities()
            rows = slice(at, at + len(positions))
            self.position[frame, rows], self.quaternion[frame, rows] = positions, quaternions
            self.linear_velocity[frame, rows], self.angular_velocity[frame, rows] = linear, angular
            at += len(positions)

    def trajectory(self, fps: float, substeps: int, warnings: list) -> Trajectory:
        model = self.world.model
        names = np.array([model.body_name[i] for i in self.movable] + self.link_names, dtype=str)
        return Trajectory(time=self.time, names=names, position=self.position, quaternion=self.quaternion,
                          linear_velocity=self.linear_velocity, angular_velocity=self.angular_velocity,
                          events=self.events, particles=self.particles,
                          particle_radii={g.name: g.radii.copy() for g in model.granular},
                          cloth=self.cloth, cloth_faces={c.name: c.faces.copy() for c in model.cloth},
                          fps=float(fps), substeps=substeps, dt=model.dt, warnings=warnings)
