"""Simulate a scene for a duration and collect per-frame arrays (Kubric style: substeps per frame,
arrays out).

``simulate(scene, duration, fps)`` returns a ``Trajectory``: time (F,), names (N,) of the dynamic and
kinematic bodies (their record paths), position (F, N, 3) of each record frame, quaternion (F, N, 4)
(w, x, y, z), linear_velocity and angular_velocity (F, N, 3), contact-begin events, and per granular
system particle positions (F, P, 3) and per cloth vertex positions (F, V, 3).

Robots (``articulated`` records) are stepped together before the world each substep
(``articulated.step_systems``): their links touch the world's geoms, each other and other robots, and those
contacts' begin events join the world's in ``events`` (a link named ``<record path>/<link>``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .articulated import step_systems, systems_for_scene
from .physics_model import DYNAMIC, KINEMATIC
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
             world: World | None = None, kinematic_tracks: dict | None = None) -> Trajectory:
    """Simulate ``scene`` for ``duration`` seconds and record ``fps`` frames per second.

    ``kinematic_tracks`` maps a kinematic body's name to its animated pose per frame,
    ``(positions (F,3), quaternions (F,4) w,x,y,z)``; substeps follow it linearly (normalised lerp for
    the rotation), so an animated pusher moves bodies as Blender shows it moving.

    Without ``substeps`` the scene's time step is kept and rounded so that a whole number of steps fits in
    a frame; with ``substeps`` the step is ``1 / (fps * substeps)``. ``progress(fraction)`` is called after
    every frame; ``cancel()`` returning True raises ``Cancelled``.
    """
    if not fps > 0:
        raise ValueError("fps must be positive")
    if duration < 0:
        raise ValueError("duration must not be negative")
    frame_dt = 1.0 / fps
    if world is None:
        if substeps is None:
            from .model_builder import build
            model, state = build(scene)
            n_sub = max(1, int(round(frame_dt / model.dt)))
            dt = frame_dt / n_sub
            model.dt = dt
            world = World(model, state)
        else:
            n_sub = max(1, int(substeps))
            world = World.from_scene(scene, dt=frame_dt / n_sub)
    else:
        n_sub = max(1, int(substeps or round(frame_dt / world.dt)))
        world.model.dt = frame_dt / n_sub
    m = world.model
    # robots (articulated records) step beside the rigid world and touch its geoms (two-way); their links
    # are recorded as "<record path>/<link name>" after the rigid bodies
    art_warnings: list = []
    systems = systems_for_scene(scene, dt=m.dt, gravity=m.gravity, warnings=art_warnings,
                                world=world) if scene is not None else []
    art_names = [f"{a.name}/{link}" for a in systems for link in a.link_names]
    movable = np.nonzero((m.body_mode == DYNAMIC) | (m.body_mode == KINEMATIC))[0]
    F = frame_count(duration, fps)
    N = len(movable)
    NB = N + len(art_names)
    time = np.zeros(F)
    pos = np.zeros((F, NB, 3))
    quat = np.zeros((F, NB, 4))
    lin = np.zeros((F, NB, 3))
    ang = np.zeros((F, NB, 3))
    particles = {g.name: np.zeros((F,) + g.positions.shape) for g in m.granular}
    cloth = {c.name: np.zeros((F,) + c.vertices.shape) for c in m.cloth}
    events: list = []
    t0 = world.state.time

    def record(f):
        s = world.state
        time[f] = s.time - t0
        origin = world.origin_positions()
        pos[f, :N] = origin[movable]
        quat[f, :N] = s.quaternion[movable]
        lin[f, :N] = s.linear_velocity[movable]
        ang[f, :N] = s.angular_velocity[movable]
        for k, g in enumerate(m.granular):
            particles[g.name][f] = s.particles[k]
        for k, c in enumerate(m.cloth):
            cloth[c.name][f] = s.cloth[k]
        at = N
        for a in systems:
            a_pos, a_quat = a.link_positions_quaternions()
            a_lin, a_ang = a.link_velocities()
            nl = len(a_pos)
            pos[f, at:at + nl], quat[f, at:at + nl] = a_pos, a_quat
            lin[f, at:at + nl], ang[f, at:at + nl] = a_lin, a_ang
            at += nl

    tracks = _checked_tracks(kinematic_tracks or {}, F)
    for name, (track_pos, track_quat) in tracks.items():
        world.set_kinematic_pose(name, track_pos[0], track_quat[0])
    record(0)
    world.events.clear()
    for a in systems:
        a.events.clear()
    robot_t0 = [a.time for a in systems]
    for f in range(1, F):
        if cancel is not None and cancel():
            raise Cancelled(f"cancelled at frame {f} of {F}")
        for sub in range(n_sub):
            alpha = (sub + 1) / n_sub
            for name, (track_pos, track_quat) in tracks.items():
                q0, q1 = track_quat[f - 1], track_quat[f]
                q1 = q1 if np.dot(q0, q1) >= 0 else -q1
                world.set_kinematic_pose(name, (1 - alpha) * track_pos[f - 1] + alpha * track_pos[f],
                                         (1 - alpha) * q0 + alpha * q1)
            # robots first: their contact impulses change the world bodies' velocities, which the world
            # then integrates over the same step
            step_systems(systems, m.dt)
            world.step()
        record(f)
        new = []
        for source, start in [(world.events, t0)] + list(zip((a.events for a in systems), robot_t0)):
            for e in source:
                e = dict(e)
                e["time"] = e["time"] - start
                e["frame"] = f
                new.append(e)
            source.clear()
        new.sort(key=lambda e: e["time"])  # stable: the world's events first within a step
        events.extend(new)
        if progress is not None:
            progress(f / (F - 1))
    if F == 1 and progress is not None:
        progress(1.0)
    names = np.array([m.body_name[i] for i in movable] + art_names, dtype=str)
    return Trajectory(time=time, names=names, position=pos, quaternion=quat, linear_velocity=lin,
                      angular_velocity=ang, events=events,
                      particles=particles, particle_radii={g.name: g.radii.copy() for g in m.granular},
                      cloth=cloth, cloth_faces={c.name: c.faces.copy() for c in m.cloth}, fps=float(fps),
                      substeps=n_sub, dt=m.dt, warnings=list(m.warnings) + art_warnings)


def _checked_tracks(tracks: dict, frames: int) -> dict:
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
