"""Simulate the open Blender scene from a start frame and bake the motion: the one path that the ``bake``
command (``commands.blender_jobs.import_and_bake``, dataset bakes) and ``render`` (``render.runner``,
before it renders a scene whose bodies move) share.

The panel's bake operator (``ops.sim_ops``) uses the same steps split in three (:func:`prepare` reads
Blender, :meth:`SimulationRun.run` simulates in a worker thread, :meth:`SimulationRun.bake` keys).
It reads Blender on the calling thread (the pose at the start frame, animated kinematic bodies, PD
drives), runs :func:`..sim.simulate` with the scene's own time step (or ``substeps`` per frame) on the
chosen backend (whose kernel cache is set where the add-on registers), refuses a trajectory that is
not finite and writes the keyframes with :func:`.bake.bake_trajectory`.
"""
from __future__ import annotations

__all__ = ["SimulationFailed", "SimulationRun", "has_bake", "moves", "prepare", "simulate_and_bake"]


class SimulationFailed(RuntimeError):
    """The simulation ran but its trajectory is not finite (nothing was baked)."""


def has_bake(bl_scene) -> bool:
    """Whether some object of ``bl_scene`` plays a simulation bake (keys or a point cache)."""
    from .bake import BAKE_TAG, CACHE_MODIFIER
    for ob in bl_scene.objects:
        animation = ob.animation_data
        if animation is not None and animation.action is not None and animation.action.get(BAKE_TAG):
            return True
        if any(m.type == "MESH_CACHE" and m.name == CACHE_MODIFIER for m in ob.modifiers):
            return True
    return False


def moves(scene_model) -> bool:
    """Whether simulating ``scene_model`` can move anything: a dynamic body, a robot, particles or cloth."""
    from ..sim import DYNAMIC
    from ..sim.model_builder import build
    if scene_model.of("articulated"):
        return True
    model, _state = build(scene_model)
    return bool((model.body_mode == DYNAMIC).any() or model.granular or model.cloth)


class SimulationRun:
    """A simulation read from Blender and ready to run: :meth:`run` touches no bpy (a worker thread may
    call it), :meth:`bake` keys the result on the main thread. Made by :func:`prepare`."""

    def __init__(self, bl_scene, frame_start, scene_model, tracks, drives, backend, fps, duration, substeps,
                 seed, say, made=None):
        self.bl_scene, self.frame_start, self.scene_model = bl_scene, frame_start, scene_model
        self.tracks, self.drives, self.backend = tracks, drives, backend
        self.fps, self.duration, self.substeps, self.seed, self.say = fps, duration, substeps, seed, say
        self.made = made or {}  # objects made in Blender, by their new record's path

    def run(self, progress=None, cancel=None, compile_progress=None):
        """The trajectory (a cancel raises ``sim.Cancelled``); no bpy, so any thread. The compiled kernels
        load here, so a first compile runs on this thread too: ``compile_progress(CompileStatus)`` after each
        of its functions, and ``cancel`` stops it as well."""
        from ..sim import simulate
        return simulate(self.scene_model, self.duration, self.fps, substeps=self.substeps, progress=progress,
                        cancel=cancel, kinematic_tracks=self.tracks, backend=self.backend, actuation=self.drives,
                        seed=self.seed, compile_progress=compile_progress)

    def bake(self, trajectory) -> int:
        """Key ``trajectory`` from the start frame; returns the bodies baked. Raises
        :class:`SimulationFailed` (and keys nothing) when it is not finite."""
        from ..sim.finite import non_finite
        from .bake import bake_trajectory
        problem = non_finite(trajectory)
        if problem:  # never a bake (or a render) of NaN poses
            raise SimulationFailed(f"simulation failed: {problem}; nothing baked")
        return bake_trajectory(self.bl_scene, trajectory, self.frame_start, skip=set(self.tracks), made=self.made)


def prepare(bl_scene, frame_start: int, frame_end: int, substeps: int | None = None, *, scene_model=None,
            from_current_pose: bool = True, seed: int | None = None, backend: str | None = None,
            say=None, made: dict | None = None) -> SimulationRun:
    """Read frames ``frame_start..frame_end`` (inclusive) of ``bl_scene`` for a simulation from its pose
    at ``frame_start`` (main thread): the scene model (``scene_model``, else what Blender shows, or the
    document as imported when ``from_current_pose`` is False), animated kinematic bodies and PD drives.

    ``seed`` seeds the world (a granular fill's jitter); ``backend``: ``auto``/``numba``/``numpy``
    (None: RSCENE_SIM_BACKEND, else auto); ``say(text)`` gets one-line notices; ``made``: the objects made in
    Blender that ``scene_model`` holds, by record path (``bake.current_scene_model``), to key them too
    (found here when no ``scene_model`` is given). Raises ``ValueError``
    for bad PD gains or a backend that does not import."""
    from ..sim import kernels
    from .bake import current_scene_model, kinematic_tracks, robot_drives
    if frame_end < frame_start:
        raise ValueError(f"the end frame {frame_end} is before the start frame {frame_start}")
    say = say or (lambda text: None)
    fps = bl_scene.render.fps / bl_scene.render.fps_base
    count = frame_end - frame_start + 1
    bl_scene.frame_set(frame_start)
    made = {} if made is None else made
    if scene_model is None:
        scene_model = current_scene_model(bl_scene, from_current_pose, made=made)
    _name_added_bodies(bl_scene, made, say)
    tracks = kinematic_tracks(bl_scene, frame_start, count)
    drives = robot_drives(bl_scene, frame_start, count)
    backend = kernels.prepare(backend, report=say)
    say(f"simulating frames {frame_start}-{frame_end} at {fps:g} fps ({backend} backend)")
    return SimulationRun(bl_scene, frame_start, scene_model, tracks, drives, backend, fps,
                         (frame_end - frame_start) / fps, substeps, seed, say, made)


def _name_added_bodies(bl_scene, made: dict, say) -> None:
    """Tell ``say`` which meshes made in Blender simulate beside an imported file's bodies (the bake keys
    them like the others), with their body mode: a leftover default Cube is then seen, not a surprise. (A
    scene made in Blender, with no file behind it, is all the user's on purpose: nothing said.)"""
    from .extract import source_text
    added = [ob for ob in made.values() if ob.type == "MESH"] if source_text(bl_scene) is not None else []
    if added:
        names = ", ".join(f"{ob.name} ({ob.rscene.body_mode}, {ob.rscene.mass:g} kg)" for ob in added[:5])
        more = f" and {len(added) - 5} more" if len(added) > 5 else ""
        say(f"also simulating objects made in Blender, not in the file: {names}{more} (their RaiSim Record "
            "panel sets the body mode; export adds them to the file)")


def simulate_and_bake(bl_scene, frame_start: int, frame_end: int, substeps: int | None = None, *,
                      scene_model=None, seed: int | None = None, backend: str | None = None, say=None,
                      progress=None, cancel=None, compile_progress=None, made: dict | None = None):
    """Simulate frames ``frame_start..frame_end`` (inclusive) of ``bl_scene`` from its pose at
    ``frame_start`` and key them, all on the calling thread; returns ``(bodies baked, trajectory)``.

    Arguments as :func:`prepare`; ``progress(fraction)``, ``cancel()`` and ``compile_progress(status)`` go to
    the simulation (:meth:`SimulationRun.run`; a cancel raises ``sim.Cancelled``). Raises
    :class:`SimulationFailed` when the trajectory is not finite."""
    run = prepare(bl_scene, frame_start, frame_end, substeps, scene_model=scene_model, seed=seed,
                  backend=backend, say=say, made=made)
    trajectory = run.run(progress, cancel, compile_progress)
    baked = run.bake(trajectory)
    run.say(f"baked {baked} bodies over {len(trajectory.time)} frames")
    return baked, trajectory
