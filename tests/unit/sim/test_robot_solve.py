"""The robot contact solve's warm start: a resting robot's solve starts from the last step's impulses of the
same contacts and stops once a sweep moves no velocity by more than ``multibody_solver.TOLERANCE``.

Truth: the same rows solved for thousands of sweeps (projected Gauss-Seidel settles a resting robot's
velocities; its impulses share the load in many ways and are not unique, so they are not compared).
"""
from __future__ import annotations

import numpy as np

from rscene_addon.sim import kernels, multibody_compiled
from tests.corpus import require_corpus
from tests.unit.sim.test_robot_backends import DT, LAIKAGO, _laikagos, _run, needs_numba

SETTLE = 500  # steps: the bench's Laikago has collapsed onto its knees and rests by then


def _group_solve(monkeypatch, systems, cold=False):
    """One step of ``systems`` through the per-part kernels (``_step_group``), its solve's arguments and
    result recorded; ``cold``: the solve starts from zero impulses instead of the warm start."""
    kern = kernels.load_robots()
    solve = kern.solve_rows
    seen = []

    def recording(*args):
        if cold:
            args = args[:-2] + (np.zeros_like(args[-2]), args[-1])
        seen.append((args, solve(*args)))
        return seen[-1][1]

    monkeypatch.setattr(kern, "solve_rows", recording)
    assert multibody_compiled._step_group(systems, DT, kern)
    monkeypatch.setattr(kern, "solve_rows", solve)
    (args, result), = seen
    return solve, args, result


@needs_numba
def test_resting_robot_solve_starts_warm_and_converges_in_fewer_sweeps(monkeypatch):
    require_corpus(LAIKAGO)
    world, systems = _laikagos("numba", 1)
    _run(world, systems, SETTLE)
    solve, args, (vel, _, lam, sweeps) = _group_solve(monkeypatch, systems)
    lam0, iterations = args[-2], args[-3]
    nax = args[6]
    contacts = nax == 3
    # every contact of the last step carried over: the feet hold the robot up from the first sweep
    assert contacts.sum() >= 4 and (lam0[contacts, 0] > 0).sum() >= 4
    cold = solve(*args[:-2], np.zeros_like(lam0), args[-1])
    assert sweeps < iterations // 2 <= cold[3] == iterations  # cold: the 30-sweep cap, warm: half or less
    # the warm solve stopped where more sweeps no longer move it; the cold one stopped short
    longer = solve(*args[:-3], 5000, lam0, 0.0)[0]
    assert np.abs(vel - longer).max() < 1e-9
    cold_longer = solve(*args[:-3], 5000, np.zeros_like(lam0), 0.0)[0]
    assert np.abs(cold[0] - cold_longer).max() > 1e-8  # the check above can fail
    # friction bounded by a load the contacts share in many ways: the two starts settle on velocities a
    # few 1e-8 m/s apart (both at rest: |u| < 1e-6), far closer than the cold solve's 30 sweeps get
    assert np.abs(vel - cold_longer).max() < 0.1 * np.abs(cold[0] - cold_longer).max()
    assert np.abs(vel - args[0]).max() > 1e-3  # the solve did change the free velocities


@needs_numba
def test_packed_step_warm_starts_as_the_group_step_does(monkeypatch):
    """The one-call kernel matches contacts by (kind, link, plane or link) numbers, the per-part route by
    names (``multibody_solver.warm_impulses``, the numpy route's): from the same state both steps agree to
    rounding, and a cold start would not."""
    require_corpus(LAIKAGO)
    runs = [_laikagos("numba", 1) for _ in range(3)]
    for world, systems in runs:
        _run(world, systems, SETTLE)
    (wa, (a,)), (wb, (b,)), (wc, (c,)) = runs
    assert np.array_equal(a.q, b.q) and np.array_equal(a.q, c.q)  # deterministic: the same state
    _run(wa, [a], 1)  # the packed step (``step_alone``)
    _group_solve(monkeypatch, [b])
    _group_solve(monkeypatch, [c], cold=True)
    assert np.abs(a.u - b.u).max() < 1e-9
    assert np.abs(a.u - c.u).max() > 1e-8
