#!/usr/bin/env python3
"""The MuJoCo reference of ``tests/unit/sim/test_granular_heap.py``: the same column of spheres (radius,
density, sliding friction, rolling friction as a length: ours is ``rollingFriction * r_eff``, r/2 between
two spheres and r against the ground) released on a plane, its heap's angle and height after 1.5 s.

    .venv/pure/bin/python scripts/heap_reference_mujoco.py [--dt 0.001]

MuJoCo (test-only, not a dependency of the add-on) runs its own soft-constraint contacts (condim 6,
elliptic cones, default solref), not our DEM springs: an independent model of the same heap. It takes
about a minute and a half of CPU here, too slow for the unit suite, so the test keeps the numbers it prints.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.unit.sim.granular_heap import DENSITY, FRICTION, R, ROLLING, SECONDS, column, heap_angle  # noqa: E402


def main() -> int:
    import mujoco
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dt", type=float, default=0.001)
    args = ap.parse_args()
    p = column()
    bodies = "".join(f'<body pos="{x!r} {y!r} {z!r}"><freejoint/><geom type="sphere" size="{R}" density="{DENSITY}"/>'
                     f'</body>' for x, y, z in p.tolist())
    xml = (f'<mujoco><option timestep="{args.dt}" cone="elliptic"/>'
           f'<default><geom condim="6" friction="{FRICTION} 0 {ROLLING * R / 2}"/></default>'
           f'<worldbody><geom type="plane" size="2 2 0.1" priority="1" friction="{FRICTION} 0 {ROLLING * R}"/>'
           f'{bodies}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    t = time.process_time()
    for _ in range(int(round(SECONDS / args.dt))):
        mujoco.mj_step(model, data)
    q = data.qpos.reshape(-1, 7)[:, :3]
    angle, height = heap_angle(q)
    print(f"MuJoCo {mujoco.__version__}, {len(p)} spheres, dt {args.dt}: angle {angle:.2f} deg, height {height:.4f} m, "
          f"{time.process_time() - t:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
