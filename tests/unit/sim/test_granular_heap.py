"""A granular truth: a column of 300 frictional spheres released on the ground settles into a heap whose
slope agrees with MuJoCo's for the same spheres, friction and release (``scripts/heap_reference_mujoco.py``
prints the reference: MuJoCo 4.0.0 with its own soft contacts, condim 6, dt 1 ms; it needs ~90 s of CPU,
so its numbers are kept here)."""
from __future__ import annotations

import numpy as np

from rscene_addon.formats import rscene
from rscene_addon.sim.world import World
from tests.scenes import ground, header
from tests.unit.sim.granular_heap import DENSITY, FRICTION, R, ROLLING, SECONDS, column, heap_angle

MUJOCO_ANGLE, MUJOCO_HEIGHT = 11.13, 0.0611  # degrees, m


def test_a_column_settles_into_mujoco_s_heap(sim_backend):
    p = column()
    pos = ";".join(f"{x!r},{y!r},{z!r}" for x, y, z in p.tolist())  # Python floats: numpy 2 reprs name the type
    record = (f"granular /World/Heap particles 0 0 0 1 0 0 0 1 1 1 positions={pos} radius={R} density={DENSITY} "
              f"normalStiffness=1e6 normalDamping=200 tangentialStiffness=1e5 tangentialDamping=20 "
              f"friction={FRICTION} rollingFriction={ROLLING} normalContactModel=hertz")
    world = World.from_scene(rscene.loads("\n".join(header(dt=0.0025) + [ground(), record]) + "\n"))
    for _ in range(int(round(SECONDS / 0.0025))):
        world.step()
    x, v = world.state.particles[0], world.state.particle_velocity[0]
    angle, height = heap_angle(x)
    speed = np.linalg.norm(v, axis=1)
    assert np.quantile(speed, 0.99) < 0.02 and speed.max() < 0.2, speed.max()  # settled (a straggler may roll on)
    print(f"heap ({sim_backend}): angle {angle:.2f} deg (MuJoCo {MUJOCO_ANGLE}), height {height:.4f} m")
    assert abs(angle - MUJOCO_ANGLE) <= 5.0, angle
    assert abs(height - MUJOCO_HEIGHT) <= 0.01, height  # a heap, not a layer (one layer: 0.02)
    assert np.all(x[:, 2] >= R - 2e-3)  # on the ground, not through it
