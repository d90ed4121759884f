"""Pure-Python rigid-body, granular and cloth simulation of ``.rscene`` scenes (numpy only, no bpy).

    from rscene_addon.formats import rscene
    from rscene_addon.sim import World, simulate

    scene = rscene.read("scene.rscene")
    world = World.from_scene(scene)
    world.step()
    traj = simulate(scene, duration=2.0, fps=60)
    traj.save_npz("traj.npz")

Modules: ``build`` (scene -> Model/State), ``world`` (stepping), ``broadphase``, ``narrowphase``,
``solver``, ``granular``, ``cloth``, ``trajectory`` (simulate, Trajectory), ``cli``; ``kernels``: the
compiled (numba) backend of the hot loops, chosen by ``backend=`` / RSCENE_SIM_BACKEND (numpy is the
reference and the fallback).
"""
from .cli import run_simulation_cli
from .model import DYNAMIC, KINEMATIC, STATIC, Model, State
from .trajectory import Cancelled, Trajectory, simulate
from . import kernels
from .world import World

__all__ = ["Cancelled", "DYNAMIC", "kernels", "KINEMATIC", "Model", "STATIC", "State", "Trajectory", "World",
           "run_simulation_cli", "simulate"]
