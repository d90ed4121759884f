"""Pure-Python rigid-body, granular and cloth simulation of ``.rscene`` scenes (numpy only, no bpy).

    from rscene_addon.formats import rscene
    from rscene_addon.sim import World, simulate

    scene = rscene.read("scene.rscene")
    world = World.from_scene(scene)
    world.step()
    traj = simulate(scene, duration=2.0, fps=60)
    traj.save_npz("traj.npz")

Modules: ``model_builder`` (scene -> ``physics_model`` Model/State), ``world`` (stepping), ``broadphase``,
``narrowphase``, ``solver``, ``granular``, ``cloth``, ``trajectory`` (simulate, Trajectory); ``kernels``:
the compiled (numba) backend of the hot loops, chosen by ``backend=`` / RSCENE_SIM_BACKEND (numpy is the
reference and the fallback). The ``simulate`` command is ``rscene_addon.commands.simulate_job``.
"""
from .physics_model import DYNAMIC, KINEMATIC, STATIC, Model, State
from .trajectory import Cancelled, Trajectory, simulate
from . import kernels
from .world import World

__all__ = ["Cancelled", "DYNAMIC", "kernels", "KINEMATIC", "Model", "STATIC", "State", "Trajectory", "World",
           "simulate"]
