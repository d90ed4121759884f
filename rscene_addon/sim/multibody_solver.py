"""One contact solve for several articulated systems: joint limits, ground, world and self contacts, and
contacts between the systems' links, as one set of sequential-impulse rows in joint space.

``step_systems(systems, dt)`` predicts every system's free velocities, gathers the rows, solves them together
(an impulse between two robots, or a robot and a world body, changes both), then finishes each system's step.
"""
from __future__ import annotations

import numpy as np

from .link_pairs import link_pair_contacts

__all__ = ["TOLERANCE", "step_systems", "warm_impulses"]

# The sweeps end when one moves no velocity by more than this (m/s, rad/s). The analytic truths hold a solve
# to 1e-9..1e-12 (head-on boxes: no spin above 1e-12; 1e-10 and 1e-11 left 3.5e-12 and 1.4e-12). Warm
# started from last step's impulses, the bench's falling Laikago averages 12 sweeps a step (median 5) and
# ANYmal C 6 (median 1) instead of 30.
TOLERANCE = 1e-12


def step_systems(systems, dt: float | None = None) -> None:
    """Advance ``systems`` one step together: every system's joint limits, ground and environment contacts
    and self contacts, and the contacts between the systems' links, are solved as one set of rows, so an
    impulse between two robots changes both. ``dt`` None: the first system's. A contact between two
    systems belongs to the first (its ``link``, ``system`` and events) and is also listed in the second's
    ``last_contacts``."""
    systems = list(systems)
    if not systems:
        return
    dt = systems[0].dt if dt is None else float(dt)
    for s in systems:
        if s.backend != "numba":
            break
    else:
        if not _COMPILED:  # imported and loaded once (an import statement costs microseconds every step)
            from . import kernels
            from .multibody_compiled import step_compiled
            _COMPILED.extend((step_compiled, kernels.load_robots()))
        step_compiled, kern = _COMPILED
        if step_compiled(systems, dt, kern):
            return
    _numpy_step_systems(systems, dt)


_COMPILED: list = []  # (multibody_compiled.step_compiled, the robot kernels) once the numba route ran


def _numpy_step_systems(systems, dt: float) -> None:
    """``step_systems`` on numpy (the reference)."""
    predicted = [s._predict(dt) for s in systems]
    u_free = {s: u for s, (_, u) in zip(systems, predicted)}
    limits, contacts = [], []
    for k, (s, (_, u)) in enumerate(zip(systems, predicted)):
        limits += [(k, j, target) for j, target in s._limit_rows(u, dt)]
        contacts += s._ground_contacts(u, dt)
        if s.environment is not None:
            contacts += s.environment.contacts(s, u, dt)
    contacts += link_pair_contacts(systems, u_free, dt)
    velocities, pushes = _solve_rows(systems, predicted, limits, contacts,
                                     max(s.contact_iterations for s in systems), dt)
    for k, s in enumerate(systems):
        s.last_contacts = [c for c in contacts if c["system"] is s or c.get("other_system") is s]
        s._finish(velocities[k], pushes[k], dt)
        s._record_events(s.last_contacts)


def _solve_rows(systems, predicted, limits, contacts, iterations: int, dt: float):
    """Sequential impulses in joint space over joint limits and contacts of ``systems`` and the world bodies
    they touch (an impulse changes every side's velocity by its inverse mass; the contacts start from the
    impulses they carried last step, ``warm_impulses``, and the sweeps end once one moves no velocity by
    more than ``TOLERANCE``, as the compiled ``solve_rows`` does), then a split-impulse pass on
    the normals of penetrating contacts (a world body's contacts carry a ``push`` only deeper than
    ``link_contacts.DEEP``). Writes the world bodies' new velocities back through their environments (and
    moves those pushed, ``shift``) and each contact's impulse (normal, t1, t2) into ``impulse``. Returns the
    systems' velocities and pseudo velocities."""
    n_sys = len(systems)
    vel = [u.copy() for _, u in predicted]
    if not limits and not contacts:
        return vel, [np.zeros(s.nv) for s in systems]
    index = {id(s): k for k, s in enumerate(systems)}
    minv = [s._inverse_mass(m) for s, (m, _) in zip(systems, predicted)]
    slots: dict = {}  # (id(world), body index) -> index into vel
    owners: list = []  # per world-body slot: (environment, body index)
    inverse: dict = {}  # world-body slot -> 6x6 inverse mass (world axes)

    def side(slot: int, jac: np.ndarray):
        """(slot, J (r, n), M^-1 J^T as rows (r, n)) of one side of a row."""
        if slot < n_sys:
            return slot, jac, np.array([minv[slot](j) for j in jac]).reshape(jac.shape)
        return slot, jac, jac @ inverse[slot]  # symmetric inverse mass

    lim = []
    for k, j, target in limits:
        sd = side(k, j[None, :])
        lim.append((sd, target, _effective(sd)[0]))
    con = []
    for c in contacts:
        sides = [side(index[id(c["system"])], np.array(c["jacobian"]))]
        fixed = np.zeros(3)  # velocity of an immovable other side along the rows
        if c.get("other_jacobian") is not None:
            sides.append(side(index[id(c["other_system"])], -np.asarray(c["other_jacobian"])))
        elif c.get("body_jac") is not None:
            env, b = c["environment"], c["body_index"]
            if c["body_inv"] is None:
                fixed = c["body_jac"] @ env.body_velocity(b)
            else:
                key = (id(env.world), b)
                if key not in slots:
                    slots[key] = len(vel)
                    vel.append(env.body_velocity(b))
                    owners.append((env, b))
                    inverse[slots[key]] = c["body_inv"]
                sides.append(side(slots[key], -c["body_jac"]))  # the reaction pushes the body back
        con.append((c, sides, fixed, _effective(*sides)))
    lim_lambda = np.zeros(len(lim))
    con_lambda = warm_impulses([(c["system"], contact_key(c)) for c in contacts])
    for r, (_, sides, _, _) in enumerate(con):  # the warm start moves the velocities first
        for axis in range(3):
            for slot, _, w in sides:
                vel[slot] += w[axis] * con_lambda[r, axis]
    for _ in range(iterations):
        start = np.concatenate(vel)
        changed = False
        for r, ((slot, j, w), target, eff) in enumerate(lim):
            new = max(lim_lambda[r] + eff * (target - j[0] @ vel[slot]), 0.0)
            changed = changed or new != lim_lambda[r]
            vel[slot] += w[0] * (new - lim_lambda[r])
            lim_lambda[r] = new
        for r, (c, sides, fixed, eff) in enumerate(con):
            for axis in range(3):
                rel = sum(j[axis] @ vel[slot] for slot, j, _ in sides) - fixed[axis]
                old = con_lambda[r, axis]
                if axis == 0:
                    new = max(old + eff[0] * (c["target"] - rel), 0.0)
                else:
                    bound = c["friction"] * con_lambda[r, 0]
                    new = min(max(old - eff[axis] * rel, -bound), bound)
                changed = changed or new != old
                for slot, _, w in sides:
                    vel[slot] += w[axis] * (new - old)
                con_lambda[r, axis] = new
        if not changed or np.abs(np.concatenate(vel) - start).max() <= TOLERANCE:
            break
    for r, (c, _, _, _) in enumerate(con):
        c["impulse"] = con_lambda[r].copy()
    # split impulse: pseudo velocities that remove penetration beyond the slop move positions only
    push = [np.zeros_like(v) for v in vel]
    pushing = [(c["push"], sides, eff[0]) for c, sides, _, eff in con if c["push"] > 0]
    if pushing:
        push_lambda = np.zeros(len(pushing))
        for _ in range(iterations):
            for r, (target, sides, eff) in enumerate(pushing):
                rel = sum(j[0] @ push[slot] for slot, j, _ in sides)
                new = max(push_lambda[r] + eff * (target - rel), 0.0)
                for slot, _, w in sides:
                    push[slot] += w[0] * (new - push_lambda[r])
                push_lambda[r] = new
    for slot, (env, b) in enumerate(owners, start=n_sys):
        env.apply({b: vel[slot]})
        if pushing:
            env.shift({b: push[slot]}, dt)
    return vel[:n_sys], push[:n_sys]


def contact_key(c) -> tuple:
    """What names a contact from one step to the next: its link and the body it touches (a plane's body, or
    ``system/link`` of a link); the n-th contact of a pair in a step is matched to the n-th of the last."""
    return c["link"], c["body"]


def warm_impulses(contacts) -> np.ndarray:
    """(C, 3): per contact (``(system, contact_key)``), the impulse the same contact carried in its system's
    last step (``last_contacts``: the n-th contact of a key gets the n-th one's of the last step), else 0."""
    lam = np.zeros((len(contacts), 3))
    last: dict = {}
    used: dict = {}
    for r, (s, key) in enumerate(contacts):
        table = last.get(id(s))
        if table is None:
            table = last[id(s)] = {}
            for c in s.last_contacts or ():
                if c["system"] is s and c.get("impulse") is not None:
                    table.setdefault(contact_key(c), []).append(c["impulse"])
        seen = table.get(key)
        n = used.get((id(s), key), 0)
        if seen is not None and n < len(seen):
            lam[r] = seen[n]
        used[(id(s), key)] = n + 1
    return lam


def _effective(*sides) -> np.ndarray:
    """Per row, the inverse of the summed inverse effective masses of the sides (0 where nothing moves)."""
    denom = sum(np.einsum("ij,ij->i", j, w) for _, j, w in sides)
    return np.where(denom > 1e-12, 1.0 / np.where(denom > 1e-12, denom, 1.0), 0.0)
