"""The compiled narrowphase of every shape pair and the one-call step that uses it (``shape_world.step``),
imported (by ``kernels.load_shapes`` after ``kernels.load`` chose the cache folder) and run once so that a
step never pays a compile. Apart from the box world's kernels (``compiled``): a world of boxes on planes
never compiles these."""
from __future__ import annotations

import numpy as np

from .compiled import world_args
from .narrow import shape_contacts
from .shape_world import step as shape_world_step

__all__ = ["shape_contacts", "shape_world_step", "warm_up"]


def warm_up() -> None:
    """The step once on a sphere, a hull and a plane (the argument types every world passes)."""
    shape_world_step(*world_args(np.array([0, 4, 5], np.int64)))  # (SPHERE, CONVEX, PLANE)
