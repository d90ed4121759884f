"""The World: steps a Model's State (rigid bodies, wires, granular particles, cloth).

One ``step()``:

1. kinematic bodies take the velocity that reaches their next pose (``set_kinematic_pose``);
2. gravity and external forces act on awake dynamic bodies (semi-implicit Euler);
3. broadphase (sweep-and-prune) and narrowphase give contacts, including speculative ones;
4. contacts and wires become constraint rows, warm-started from the previous step's impulses;
5. projected Gauss-Seidel solves velocities (Coulomb friction with static friction below its velocity
   threshold, restitution above its threshold); a second pass removes penetration with pseudo
   velocities (split impulse, ERP) that do not add energy;
6. positions and orientations integrate; islands that stayed quiet fall asleep;
7. granular particles (DEM) and cloth (XPBD) advance against the new rigid poses.

Backends (``backend=``, see ``sim.kernels``): ``numpy`` is the reference; ``numba`` runs the candidate
pairs, every shape pair's contacts (``kernels.narrow``: the numpy handlers' points), contact rows, warm
starting, the sweeps and the integration as compiled kernels, the same rules, with one difference: its
Gauss-Seidel sweep visits the rows one by one in contact order instead of by colour, so the two agree to
the solver's tolerance, not to the bit. In a world without wires the numba step from the forces to
sleeping is one compiled call (``kernels.box_world``; ``kernels.shape_world`` with other shapes than boxes
and planes), the same kernels in the same order: the same bits as calling them one by one, without a
Python round trip between them.

Interpretations and simplifications (RaiSim's own solver is not public):

* ``erp`` up to 1 is the fraction of a penetration removed per step (values above are capped at 0.8);
  ``erp2`` and the contact solver's alpha settings are not used.
* The solver stops when a sweep changes no body's velocity (linear, and angular times the body's
  radius) by more than max(tolerance, 1e-5 m/s), or after min(``iterations``, ``velocity_iterations``
  = 28) sweeps (the split-impulse pass after min(``iterations``, 20)); sweep direction alternates every
  step (``fixedContactSolverIterationOrder`` chooses the first).
* When every dynamic body sleeps and nothing kinematic moves, a step only advances time (a settled scene
  costs next to nothing); it gives exactly what the full step would.
* At most 4 contact points per pair (fewer when ``maxContactsPerPair`` is smaller).
* Rolling and spinning friction of rigid contacts and gyroscopic torques are not modelled.
"""
from __future__ import annotations

import numpy as np

from .broadphase import candidate_pairs, compute_aabbs
from .model_builder import build
from .cloth import Cloth
from . import kernels
from .geometry import BOX, HEIGHTFIELD, PLANE
from .granular import Granular
from .islands import island_labels
from .mathutil import (cross, norm, quat_angular_velocity, quat_integrate, quat_multiply, quat_normalize,
                       quat_rotate, quat_to_matrix, tangent_basis)
from .physics_model import DYNAMIC, KINEMATIC, STATIC, Model, State
from .narrowphase import Frames, collide
from .solver import Rows, color_rows, jacobians, order_by_color, solve, warm_start

MAX_MANIFOLD = 4  # contact points kept per pair for primitives and polytopes (at most maxContactsPerPair)
WARM_MATCH = 0.02  # contacts within this distance (m, in body A's frame) inherit last step's impulses


class World:
    """A simulated world. ``World.from_scene(scene)``; ``step()``; ``state``."""

    def __init__(self, model: Model, state: State, backend: str | None = None):
        self.model = model
        self.state = state
        m = model
        # "numba": compiled kernels for the solver; "numpy": the reference core (see sim.kernels)
        self.backend = kernels.resolve(backend)
        self._kern = kernels.load() if self.backend == "numba" else None
        self._handlers = self._kern.handlers() if self._kern is not None else None
        self._geom_plane = m.geom_type == PLANE
        self._plane_z = np.ascontiguousarray(m.geom_pos[:, 2])  # planes are horizontal, at their height
        self._heightfields = np.flatnonzero(m.geom_type == HEIGHTFIELD).tolist()
        self.dynamic = m.body_mode == DYNAMIC
        self.kinematic = m.body_mode == KINEMATIC
        self._all_static = (None, None, False)  # (dynamic, kinematic, neither has a body): ``_idle``
        self._zero_rows = b""  # the bytes of an all-zero (N, 3) float array: ``_idle_step``
        self._index = {name: i for i, name in enumerate(m.body_name)}
        self._kin_target: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._forward = m.solver.forward_first
        self._cache_key = np.zeros(0, dtype=np.int64)
        self._cache_local = np.zeros((0, 3))
        self._cache_impulse = np.zeros((0, 3))
        self._wire_lam = np.zeros((0, 3))
        self._touching = np.zeros(0, dtype=np.int64)  # sorted keys min * N + max of touching pairs
        # principal-axis inertias (every primitive's): the world inverse inertia R diag R^T is three
        # products instead of a three-operand einsum (its sum without the zero terms: the same bits)
        off = m.body_inv_inertia.copy()
        off[:, [0, 1, 2], [0, 1, 2]] = 0.0
        self._inv_inertia_diag = None if off.any() else m.body_inv_inertia[:, [0, 1, 2], [0, 1, 2]].copy()
        # every geom at its body's centre of mass, unrotated (single-primitive bodies): geom frames are
        # the body frames, no quaternion product or second matrix per step
        self._geom_at_body = bool(np.all(m.geom_pos == 0.0) and np.all(m.geom_quat == (1.0, 0.0, 0.0, 0.0)))
        self._coloring = None  # (a, b, movable, colours) of the last step: reused while the graph stays
        self._island = np.full(m.num_bodies, -1, dtype=np.int64)
        self._static_geom = (m.body_mode == STATIC)[m.geom_body]
        self._static_poly: dict = {}
        self.external_force = np.zeros((m.num_bodies, 3))
        self.external_torque = np.zeros((m.num_bodies, 3))
        self.events: list[dict] = []  # contact-begin events since the last clear
        self.contacts = None  # the last step's contacts (dict of arrays)
        self.last_iterations = 0
        self.step_count = 0
        self._granular = [Granular(spec, m) for spec in m.granular]
        self._cloth = [Cloth(spec, m) for spec in m.cloth]
        # no wires: the whole step is one compiled call, whatever the shapes
        self._one_call = self._kern is not None and not m.wires
        if self._kern is not None:  # every shape's narrowphase compiled (kernels.narrow)
            self._shapes = self._kern.shape_data(m)
            # boxes on planes: box_world's step and contacts; other shapes compile their own (kernels.shapes)
            boxy = bool(np.all((m.geom_type == BOX) | (m.geom_type == PLANE)))
            self._shape_kern = None if boxy else kernels.load_shapes()
            self._step_kernel = self._kern.box_world_step if boxy else self._shape_kern.shape_world_step
        if self._one_call:
            self._radius = np.ascontiguousarray(m.body_radius, dtype=np.float64)
            self._gravity = np.asarray(m.gravity, dtype=np.float64)

    @classmethod
    def from_scene(cls, scene, *, dt: float | None = None, backend: str | None = None) -> "World":
        """Build a world from a ``Scene`` (optionally with another time step); ``backend``: ``auto``
        (default: numba where it imports), ``numba`` or ``numpy`` (see ``sim.kernels``)."""
        model, state = build(scene, dt=dt)
        return cls(model, state, backend=backend)

    # -- API ----------------------------------------------------------------------------------------------
    @property
    def dt(self) -> float:
        return self.model.dt

    @property
    def time(self) -> float:
        return self.state.time

    def body_index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no body named {name!r}") from None

    def set_kinematic_pose(self, name: str, pos, quat=None) -> None:
        """Move kinematic body ``name`` to this pose (record frame) over the next step."""
        i = self.body_index(name)
        if self.model.body_mode[i] != KINEMATIC:
            raise ValueError(f"{name!r} is not a kinematic body")
        q = self.state.quaternion[i] if quat is None else quat_normalize(np.asarray(quat, float))
        com = np.asarray(pos, float) + quat_rotate(q, self.model.body_com[i])
        self._kin_target[i] = (com, q)

    def set_kinematic_velocity(self, name: str, linear, angular=(0.0, 0.0, 0.0)) -> None:
        i = self.body_index(name)
        if self.model.body_mode[i] != KINEMATIC:
            raise ValueError(f"{name!r} is not a kinematic body")
        self.state.linear_velocity[i] = linear
        self.state.angular_velocity[i] = angular
        self._kin_target.pop(i, None)

    def set_velocity(self, name: str, linear, angular=None) -> None:
        """Set a body's velocity (wakes it)."""
        i = self.body_index(name)
        self.state.linear_velocity[i] = linear
        if angular is not None:
            self.state.angular_velocity[i] = angular
        self.wake(i)

    def wake(self, i: int | None = None) -> None:
        s = self.state
        if i is None:
            s.sleeping[:] = False
            s.quiet_steps[:] = 0
            return
        isl = self._island[i]
        group = (self._island == isl) if isl >= 0 else (np.arange(len(s.sleeping)) == i)
        s.sleeping[group] = False
        s.quiet_steps[group] = 0

    def body_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Position (3,) of the body's record frame and its quaternion (4,) (w, x, y, z)."""
        i = self.body_index(name)
        q = self.state.quaternion[i]
        return self.state.position[i] - quat_rotate(q, self.model.body_com[i]), q.copy()

    def geom_poses(self, R_body: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World positions (G, 3) and rotations (G, 3, 3) of the geoms in the current state; ``R_body``
        (N, 3, 3) passes the body rotations when the caller has them already."""
        m, s = self.model, self.state
        if R_body is None:
            R_body = quat_to_matrix(s.quaternion)
        g_body = m.geom_body
        if self._geom_at_body:  # every geom at its body's centre of mass, unrotated
            return s.position[g_body], R_body[g_body]
        return (s.position[g_body] + np.einsum("gij,gj->gi", R_body[g_body], m.geom_pos),
                quat_to_matrix(quat_multiply(s.quaternion[g_body], m.geom_quat)))

    def origin_positions(self) -> np.ndarray:
        """(N, 3) positions of the bodies' record frames (the centre of mass moved back by body_com)."""
        s = self.state
        return s.position - quat_rotate(s.quaternion, self.model.body_com)

    # -- stepping -----------------------------------------------------------------------------------------
    def step(self) -> None:
        if self._idle():
            self._idle_step()
            return
        m, s = self.model, self.state
        dt = m.dt
        dyn = self.dynamic
        # kinematic targets
        for i, (com, q) in self._kin_target.items():
            s.linear_velocity[i] = (com - s.position[i]) / dt
            s.angular_velocity[i] = quat_angular_velocity(s.quaternion[i], q, dt)
        if self._one_call:
            self._compiled_step()
            return
        if m.wires and s.sleeping.any():
            self._wake_by_wires()
        V0 = np.concatenate((s.linear_velocity, s.angular_velocity), axis=1)  # before forces
        awake = dyn & ~s.sleeping
        if self._kern is not None:  # rotations, world inertias and forces in one compiled call
            R_body, inv_I_world = self._kern.body_frames(
                s.quaternion, m.body_inv_inertia, awake, np.asarray(m.gravity, dtype=np.float64),
                m.body_inv_mass, self.external_force, self.external_torque, s.linear_velocity,
                s.angular_velocity, dt)
        else:
            R_body = quat_to_matrix(s.quaternion)
            inv_I_world = self._world_inv_inertia(R_body)
            # forces
            if awake.any():
                accel = m.gravity + self.external_force[awake] * m.body_inv_mass[awake, None]
                s.linear_velocity[awake] += accel * dt
                alpha = np.einsum("nij,nj->ni", inv_I_world[awake], self.external_torque[awake])
                s.angular_velocity[awake] += alpha * dt
        self.external_force[:] = 0.0
        self.external_torque[:] = 0.0
        g_pos, g_rot = self.geom_poses(R_body)
        contacts = self._detect(awake, g_pos, g_rot, R_body)
        if contacts is not None and self._wake_touched(contacts, awake):
            woken = dyn & ~s.sleeping & ~awake
            s.linear_velocity[woken] += m.gravity * dt  # the forces this step, as for the others
            awake = dyn & ~s.sleeping
            contacts = self._detect(awake, g_pos, g_rot, R_body)
        # constraint rows
        inv_m = np.where(awake, m.body_inv_mass, 0.0)
        inv_I = np.where(awake[:, None, None], inv_I_world, 0.0)
        V = np.concatenate((s.linear_velocity, s.angular_velocity), axis=1)
        rows, prow, c_info, w_rows = self._rows(contacts, V, V0, inv_m, inv_I, awake, R_body)
        solver = m.solver
        tolerance = max(solver.tolerance, solver.tolerance_floor)
        if rows is not None:
            self.last_iterations = self._solve(V, rows, min(solver.iterations, solver.velocity_iterations),
                                               tolerance, True, warm=True)
        else:
            self.last_iterations = 0
        Vp = np.zeros_like(V)
        if prow is not None:
            self._solve(Vp, prow, min(solver.iterations, solver.position_iterations), tolerance, False)
        self._forward = not self._forward
        # store impulses for warm starting and events
        if rows is not None:
            lam = np.empty_like(rows.lam)
            lam[self._row_order] = rows.lam
            self._save_cache(c_info, lam[:c_info["count"]], w_rows, lam[c_info["count"]:])
        else:
            self._save_cache(c_info, np.zeros((0, 3)), w_rows, np.zeros((0, 3)))
        # integrate
        move = awake | self.kinematic
        if self._kern is not None:
            self._kern.integrate(s.position, s.quaternion, s.linear_velocity, s.angular_velocity, V, Vp, move, dt)
        else:
            s.linear_velocity[:] = np.where(move[:, None], V[:, :3], 0.0)
            s.angular_velocity[:] = np.where(move[:, None], V[:, 3:], 0.0)
            lin = s.linear_velocity + Vp[:, :3]
            ang = s.angular_velocity + Vp[:, 3:]
            if move.any():
                s.position[move] += lin[move] * dt
                s.quaternion[move] = quat_integrate(s.quaternion[move], ang[move], dt)
        self._sleep(awake, c_info)
        self._finish_step()

    def _finish_step(self) -> None:
        """The end of a step after integration and sleeping (which read velocities only): kinematic bodies
        take their target poses exactly, particles and cloth advance against the new rigid poses, time."""
        m, s = self.model, self.state
        for i, (com, q) in self._kin_target.items():
            s.position[i] = com
            s.quaternion[i] = q
        self._kin_target.clear()
        if self._granular or self._cloth:
            frames = Frames(m, *self.geom_poses())
            for k, gran in enumerate(self._granular):
                gran.step(self, k, frames, m.dt)
            for k, cl in enumerate(self._cloth):
                cl.step(self, k, frames, m.dt)
        s.time += m.dt
        self.step_count += 1

    def _set_contacts(self, A, B, ga, gb, point, normal, sep, impulse) -> None:
        """``contacts``: the last step's contacts, as both step paths report them."""
        self.contacts = dict(body_a=A, body_b=B, point=point, normal=normal, separation=sep, impulse=impulse,
                             geom_a=ga, geom_b=gb)

    def _compiled_step(self) -> None:
        """The rest of ``step`` as ``kernels.box_world.step`` (or ``shape_world.step``: the same kernels in the
        same order)."""
        m, s = self.model, self.state
        sv = m.solver
        (self.last_iterations, A, B, ga, gb, point, normal, sep, vn0, lam, key, local, impulse, self._touching,
         events) = self._step_kernel(
            s.position, s.quaternion, s.linear_velocity, s.angular_velocity, s.sleeping, s.quiet_steps,
            self._island, self.external_force, self.external_torque, self.dynamic, self.kinematic,
            m.body_inv_mass, m.body_inv_inertia, self._radius, self._gravity, m.geom_body, m.geom_type,
            m.geom_size, m.geom_local_aabb, m.geom_material, m.geom_group, m.geom_mask, self._geom_plane,
            self._plane_z, m.material_table, self._cache_key, self._cache_local, self._cache_impulse,
            self._touching, self._geom_at_body, *self._shapes, m.dt, sv.contact_margin, min(sv.max_contacts_per_pair, MAX_MANIFOLD),
            min(sv.iterations, sv.velocity_iterations), min(sv.iterations, sv.position_iterations),
            max(sv.tolerance, sv.tolerance_floor), self._forward, sv.erp, sv.sleeping_enabled, sv.sleep_linear,
            sv.sleep_angular, sv.sleep_quiet_steps, WARM_MATCH)
        self._forward = not self._forward
        self._cache_key, self._cache_local, self._cache_impulse = key, local, impulse
        self._wire_lam = np.zeros((0, 3))
        if len(A):
            self._set_contacts(A, B, ga, gb, point, normal, sep, lam[:, 0])
            info = dict(A=A, B=B, point=point, normal=normal, vn0=vn0)
            self._append_events(events.tolist(), info, lam, m.body_name, s.time + m.dt)
        else:
            self.contacts = None
        self._finish_step()

    def _solve(self, V, rows, iterations, tolerance, friction, warm=False) -> int:
        """Warm start (``warm``) and projected Gauss-Seidel on ``rows``: numpy's coloured sweeps or the
        compiled sequential ones. Returns the sweeps done."""
        lever = self.model.body_radius
        k = self._kern
        if k is None:
            if warm:
                warm_start(V, rows)
            return solve(V, rows, iterations, tolerance, self._forward, friction=friction, lever=lever)
        if warm:
            k.warm_start(V, rows.a, rows.b, rows.MJ, rows.lam)
        R = rows.J.shape[1]
        return k.solve(V, rows.a, rows.b, rows.J, rows.MJ, rows.kinv[:, :R], rows.k[:, :R], rows.target,
                       rows.cfm * rows.kinv[:, 0], rows.mu, rows.lam, iterations, tolerance, self._forward,
                       friction, np.ascontiguousarray(lever, dtype=np.float64))

    def _world_inv_inertia(self, R):
        """(N, 3, 3) inverse inertia tensors in the world, R I^-1 R^T."""
        d = self._inv_inertia_diag
        if d is None:
            return np.einsum("nij,njk,nlk->nil", R, self.model.body_inv_inertia, R)
        RI = R * d[:, None, :]
        return (RI[:, :, 0, None] * R[:, None, :, 0] + RI[:, :, 1, None] * R[:, None, :, 1]
                + RI[:, :, 2, None] * R[:, None, :, 2])

    def _idle(self) -> bool:
        """Nothing can move this step: every dynamic body sleeps, no kinematic body moves, no particles."""
        if self._kin_target or self._granular or self._cloth:
            return False
        dyn, kin = self.dynamic, self.kinematic
        fixed = self._all_static
        if fixed[0] is not dyn or fixed[1] is not kin:  # static bodies only (a ground for robots); per array set
            fixed = self._all_static = (dyn, kin, not dyn.any() and not kin.any())
        if fixed[2]:
            return True
        s = self.state
        if not s.sleeping[dyn].all():
            return False
        return not (kin.any() and (s.linear_velocity[kin].any() or s.angular_velocity[kin].any()))

    def _idle_step(self) -> None:
        """What a full step does when nothing moves (a settled scene costs next to nothing)."""
        s = self.state
        # forces on sleeping bodies are dropped and velocities zeroed, as in a full step; an array whose bytes
        # are all zero already is left alone (its bytes cost a third of a fill: a robots' ground world steps
        # here every step)
        zero = self._zero_rows
        if len(zero) != 24 * len(s.position):
            zero = self._zero_rows = bytes(24 * len(s.position))
        f, t, v, w = self.external_force, self.external_torque, s.linear_velocity, s.angular_velocity
        if f.tobytes() != zero:
            f.fill(0.0)
        if t.tobytes() != zero:
            t.fill(0.0)
        if v.tobytes() != zero:
            v.fill(0.0)
        if w.tobytes() != zero:
            w.fill(0.0)
        self.last_iterations = 0
        self._forward = not self._forward
        # wires between sleeping bodies keep their impulses (a full step would leave them unchanged); a world
        # already quiet (no cached contacts, none touching) has nothing to clear (robots on a ground plane
        # step it every step)
        if len(self._cache_key) or self.contacts is not None or len(self._touching):
            self._save_cache(dict(count=0), None, dict(count=0), self._wire_lam)
        s.time += self.model.dt
        self.step_count += 1

    # -- contacts -------------------------------------------------------------------------------------------
    def _detect(self, awake, g_pos, g_rot, R_body):
        m, s = self.model, self.state
        dt = m.dt
        kin_moving = (np.abs(s.linear_velocity).sum(1) + np.abs(s.angular_velocity).sum(1)) > 0
        moving_body = awake | (self.kinematic & kin_moving)
        lin = norm(s.linear_velocity)
        speed = lin + norm(s.angular_velocity) * m.body_radius
        speed = np.where(moving_body, speed, 0.0)
        gb = m.geom_body
        margin0 = m.solver.contact_margin
        pad = 0.5 * margin0 + speed[gb] * dt
        if self._kern is None:
            lo, hi = compute_aabbs(m, g_pos, g_rot, pad)
        else:
            lo, hi = self._kern.compute_aabbs(m, g_pos, g_rot, pad, self._heightfields)
        active = np.ones(len(gb), dtype=bool)
        if self._kern is None:
            pairs = candidate_pairs(m, lo, hi, moving_body[gb], active, self.dynamic[gb])
        else:
            pairs = self._kern.candidate_pairs(lo, hi, self._geom_plane, self._plane_z, gb, moving_body[gb],
                                               self.dynamic[gb], m.geom_group, m.geom_mask)
        if len(pairs) == 0:
            return None
        margins = margin0 + (speed[gb[pairs[:, 0]]] + speed[gb[pairs[:, 1]]]) * dt
        max_pts = min(m.solver.max_contacts_per_pair, MAX_MANIFOLD)
        if self._kern is not None and self._shape_kern is None:  # boxes on planes, compiled
            pidx, point, normal, sep = self._kern.box_contacts(
                pairs, m.geom_type, np.ascontiguousarray(g_pos), np.ascontiguousarray(g_rot), m.geom_size, margins,
                max_pts)
        elif self._kern is not None:  # every pair compiled (the numpy handlers' contacts)
            polys, hfs, big = self._shapes[-3:]
            pidx, point, normal, sep = self._shape_kern.shape_contacts(
                pairs, m.geom_type, np.ascontiguousarray(g_pos), np.ascontiguousarray(g_rot), m.geom_size, margins,
                max_pts, polys, hfs, big)
        else:
            frames = Frames(m, g_pos, g_rot, self._static_poly, self._static_geom)
            pidx, point, normal, sep = collide(m, frames, pairs, margins, max_pts, self._handlers)
        if len(pidx) == 0:
            return None
        return dict(pair=pairs[pidx], point=point, normal=normal, sep=sep)

    def _wake_by_wires(self) -> None:
        """A wire between a sleeping body and a moving one wakes the sleeping one."""
        s = self.state
        speed = np.abs(s.linear_velocity).sum(1) + np.abs(s.angular_velocity).sum(1)
        moving = ((self.dynamic & ~s.sleeping) | self.kinematic) & (speed > 0)
        for w in self.model.wires:
            for x, y in ((w.body_a, w.body_b), (w.body_b, w.body_a)):
                if s.sleeping[x] and moving[y]:
                    self.wake(int(x))

    def _wake_touched(self, c, awake) -> bool:
        s = self.state
        if not s.sleeping.any():
            return False
        ba = self.model.geom_body[c["pair"][:, 0]]
        bb = self.model.geom_body[c["pair"][:, 1]]
        moving = awake | (self.kinematic & (np.abs(s.linear_velocity).sum(1) > 0))
        hit = (s.sleeping[ba] & moving[bb]) | (s.sleeping[bb] & moving[ba])
        if not hit.any():
            return False
        for i in np.unique(np.concatenate((ba[hit], bb[hit]))):
            if s.sleeping[i]:
                self.wake(int(i))
        return True

    def _rows(self, c, V, V0, inv_m, inv_I, awake, R_body):
        """Constraint rows for contacts and wires, coloured.

        Returns (rows, position rows, contact info, wire info)."""
        m, s = self.model, self.state
        dt = m.dt
        parts = []
        info = dict(count=0)
        if c is not None:
            ga, gb = c["pair"][:, 0], c["pair"][:, 1]
            A, B = m.geom_body[ga], m.geom_body[gb]
            n, p, sep = c["normal"], c["point"], c["sep"]
            props = m.material_table[m.geom_material[ga], m.geom_material[gb]]
            if self._kern is not None:  # the same rows, compiled
                J, MJ, k, target, mu, vn0, t1, t2, local = self._kern.contact_rows(
                    A, B, p, n, sep, s.position, R_body, V, V0, inv_m, inv_I, props, dt)
                basis = (t1, t2)
                lam = self._warm(ga, gb, local, n, basis)
            else:
                ra, rb = p - s.position[A], p - s.position[B]
                basis = tangent_basis(n)  # one basis for the rows, warm starting and the impulse cache
                J, MJ, k = jacobians(ra, rb, n, inv_m[A], inv_m[B], inv_I[A], inv_I[B], basis=basis)
                v_rel0 = (V0[B, :3] + cross(V0[B, 3:], rb)) - (V0[A, :3] + cross(V0[A, 3:], ra))
                vn0 = np.einsum("ij,ij->i", v_rel0, n)
                vt0 = norm(v_rel0 - vn0[:, None] * n)
                v_rel = (V[B, :3] + cross(V[B, 3:], rb)) - (V[A, :3] + cross(V[A, 3:], ra))
                vn = np.einsum("ij,ij->i", v_rel, n)
                mu = np.where(vt0 < props[:, 4], props[:, 3], props[:, 0])
                target = np.where(sep > 0, -sep / dt, 0.0)
                e = props[:, 1]
                bounce = (e > 0) & (-vn0 > props[:, 2]) & (sep + np.minimum(vn, vn0) * dt <= 0)
                target = np.where(bounce, np.maximum(target, -e * vn0), target)
                lam = self._warm(ga, gb, np.einsum("kji,kj->ki", R_body[A], ra), n, basis)
            info = dict(count=len(A), A=A, B=B, ga=ga, gb=gb, point=p, normal=n, sep=sep, vn0=vn0, local=None,
                        basis=basis)
            parts.append(dict(a=A, b=B, J=J, MJ=MJ, k=k, target=target, cfm=np.zeros(len(A)), mu=mu, lam=lam,
                              sep=sep, pos_ok=np.ones(len(A), dtype=bool)))
        w_info = self._wire_rows(V, inv_m, inv_I, parts)
        if not parts:
            self._row_order = np.zeros(0, dtype=np.int64)
            return None, None, info, w_info
        cat = parts[0] if len(parts) == 1 else {k: np.concatenate([pt[k] for pt in parts]) for k in parts[0]}
        if self._kern is None:
            order, slices = order_by_color(self._colors(cat["a"], cat["b"], awake))
        else:  # compiled sweeps go row by row: no colouring, the rows stay in place (views, no copies)
            order, slices = slice(None), [(0, len(cat["a"]))]
        self._row_order = order
        k = cat["k"][order]
        cfm = cat["cfm"][order]
        kk = k.copy()
        kk[:, 0] += cfm
        kinv = np.where(kk > 0, 1.0 / np.where(kk > 0, kk, 1.0), 0.0)
        rows = Rows(cat["a"][order], cat["b"][order], cat["J"][order], cat["MJ"][order], kinv, k,
                    cat["target"][order], cfm, cat["mu"][order], cat["lam"][order], slices)
        # position correction rows (split impulse): penetrating contacts and over-stretched stiff wires
        erp = min(max(m.solver.erp, 0.0), 0.8)
        slop = 1e-4
        sep_o = cat["sep"][order]
        need = (sep_o < -slop) & cat["pos_ok"][order] & (erp > 0)
        prow = None
        if need.any():
            ids = np.flatnonzero(need)  # still sorted by colour: the colours' runs are the new slices
            cut = np.searchsorted(ids, [b0 for _, b0 in slices]).tolist()
            sel_slices = [(s0, s1) for s0, s1 in zip([0] + cut[:-1], cut) if s1 > s0]
            kn = k[ids, :1]
            prow = Rows(rows.a[ids], rows.b[ids], rows.J[ids, :1], rows.MJ[ids, :1],
                        np.where(kn > 0, 1.0 / np.where(kn > 0, kn, 1.0), 0.0), kn,
                        erp * (-sep_o[ids] - slop) / dt, np.zeros(len(ids)), np.zeros(len(ids)),
                        np.zeros((len(ids), 1)), sel_slices)
        return rows, prow, info, w_info

    def _colors(self, a, b, movable):
        """``color_rows``, reused from the last step when the rows link the same bodies (a pile at rest
        keeps its contacts: the greedy Python loop is the costliest part of building rows)."""
        last = self._coloring
        if (last is not None and np.array_equal(last[0], a) and np.array_equal(last[1], b)
                and np.array_equal(last[2], movable)):
            return last[3]
        colors = color_rows(a, b, movable)
        self._coloring = (a, b, movable, colors)
        return colors

    def _wire_rows(self, V, inv_m, inv_I, parts):
        m, s = self.model, self.state
        dt = m.dt
        ws = [w for w in m.wires if w.kind != "custom"]
        if not ws:
            return dict(count=0)
        A = np.array([w.body_a for w in ws])
        B = np.array([w.body_b for w in ws])
        la = np.array([w.local_a for w in ws])
        lb = np.array([w.local_b for w in ws])
        ra = quat_rotate(s.quaternion[A], la)
        rb = quat_rotate(s.quaternion[B], lb)
        d = (s.position[B] + rb) - (s.position[A] + ra)
        L = norm(d)
        u = d / np.maximum(L, 1e-12)[:, None]
        n = -u  # impulse on B along n pulls it toward A
        length = np.array([w.length for w in ws])
        sep = length - L  # > 0 slack
        stiff = np.array([w.kind == "stiff" for w in ws])
        k_spring = np.array([w.stiffness for w in ws])
        c_damp = np.array([w.damping for w in ws])
        compliance = np.array([w.compliance for w in ws])
        J, MJ, k = jacobians(ra, rb, n, inv_m[A], inv_m[B], inv_I[A], inv_I[B])
        target = np.where(stiff, np.where(sep > 0, -sep / dt, 0.0), 0.0)
        cfm = np.where(stiff, compliance / dt, 0.0)
        # compliant wires: a spring pulling when stretched, as a soft constraint (implicit, stable)
        soft = ~stiff
        denom = c_damp + dt * k_spring
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma = np.where(denom > 0, 1.0 / (dt * denom), np.inf)
            beta = np.where(denom > 0, dt * k_spring / denom, 0.0)
        slack_soft = soft & (sep >= 0)
        target = np.where(soft, np.where(sep < 0, beta * (-sep) / dt, 0.0), target)
        cfm = np.where(soft, np.where(slack_soft | ~np.isfinite(gamma), 1e30, gamma), cfm)
        mu = np.zeros(len(ws))
        lam = self._wire_lam.copy() if len(self._wire_lam) == len(ws) else np.zeros((len(ws), 3))
        parts.append(dict(a=A, b=B, J=J, MJ=MJ, k=k, target=target, cfm=cfm, mu=mu, lam=lam, sep=sep,
                          pos_ok=stiff))
        return dict(count=len(ws), A=A, B=B, length=L)

    def _warm(self, ga, gb, local, n, basis):
        """Impulses (C, 3) in the new contacts' (n, t1, t2) frame from matching last-step contacts.

        ``local`` (C, 3): the contact points in body A's frame (R_A^T (p - x_A))."""
        C = len(ga)
        lam = np.zeros((C, 3))
        G = self.model.num_geoms
        key = ga * G + gb
        self._new_key, self._new_local = key, local
        if len(self._cache_key) == 0:
            return lam
        if self._kern is not None:
            return self._kern.warm(self._cache_key, self._cache_local, self._cache_impulse, key, local, n, *basis,
                                   WARM_MATCH)
        ck = self._cache_key
        lo = np.searchsorted(ck, key, side="left")
        hi = np.searchsorted(ck, key, side="right")
        cnt = hi - lo
        has = cnt > 0
        if not has.any():
            return lam
        K = int(cnt.max())
        cand = lo[:, None] + np.arange(K)[None, :]
        valid = np.arange(K)[None, :] < cnt[:, None]
        cand = np.where(valid, cand, 0)
        dist = norm(self._cache_local[cand] - local[:, None, :])
        dist = np.where(valid, dist, np.inf)
        best = np.argmin(dist, axis=1)
        ok = dist[np.arange(C), best] < WARM_MATCH
        if not ok.any():
            return lam
        P = self._cache_impulse[cand[np.arange(C), best]]
        t1, t2 = basis
        lam[:, 0] = np.einsum("ij,ij->i", P, n)
        lam[:, 1] = np.einsum("ij,ij->i", P, t1)
        lam[:, 2] = np.einsum("ij,ij->i", P, t2)
        lam[:, 0] = np.maximum(lam[:, 0], 0.0)
        lam[~ok] = 0.0
        return lam

    def _save_cache(self, info, lam, w_info, w_lam):
        self._wire_lam = np.array(w_lam, dtype=np.float64).reshape(-1, 3)
        if info["count"] == 0:
            self._cache_key = np.zeros(0, dtype=np.int64)
            self._cache_local = np.zeros((0, 3))
            self._cache_impulse = np.zeros((0, 3))
            self._events(None, None)
            self.contacts = None
            return
        n = info["normal"]
        t1, t2 = info["basis"]
        impulse = lam[:, :1] * n + lam[:, 1:2] * t1 + lam[:, 2:3] * t2
        key = self._new_key
        if np.all(key[1:] >= key[:-1]):  # contacts come sorted by geom pair: no sort needed
            self._cache_key, self._cache_local, self._cache_impulse = key, self._new_local, impulse
        else:
            order = np.argsort(key, kind="stable")
            self._cache_key = key[order]
            self._cache_local = self._new_local[order]
            self._cache_impulse = impulse[order]
        self._set_contacts(info["A"], info["B"], info["ga"], info["gb"], info["point"], n, info["sep"], lam[:, 0])
        self._events(info, lam)

    def _events(self, info, lam):
        """Record contact-begin events for body pairs that touch now but did not at the last step.

        Touching pairs are kept as sorted int keys ``min * N + max`` of their bodies."""
        N = self.model.num_bodies
        old = self._touching
        asleep = self.state.sleeping
        # pairs that sleep keep touching (sleeping bodies make no contacts until they wake)
        kept = old[asleep[old // N] | asleep[old % N]]
        if info is None:
            self._touching = kept
            return
        names = self.model.body_name
        t = self.state.time + self.model.dt
        if self._kern is not None:  # the same pairs and events, compiled
            self._touching, firsts = self._kern.touch_events(
                old, asleep, info["A"], info["B"], np.ascontiguousarray(lam[:, 0]), info["vn0"], N)
            self._append_events(firsts.tolist(), info, lam, names, t)
            return
        idx = np.nonzero(lam[:, 0] > 0)[0]
        a, b = info["A"][idx], info["B"][idx]
        key = np.minimum(a, b) * N + np.maximum(a, b)
        # per pair the contact that hit fastest (lowest vn0; the first of equals), events in the order
        # the pairs first appear
        order = np.lexsort((idx, info["vn0"][idx], key))
        lead = np.ones(len(order), dtype=bool)
        lead[1:] = key[order][1:] != key[order][:-1]
        pair_key, best = key[order][lead], idx[order][lead]
        first_seen = np.minimum.reduceat(idx[order], np.flatnonzero(lead)) if len(idx) else idx
        # old is sorted: a binary search instead of np.isin's sort of both arrays
        at = np.minimum(np.searchsorted(old, pair_key), max(len(old) - 1, 0))
        new = old[at] != pair_key if len(old) else np.ones(len(pair_key), dtype=bool)
        self._append_events(best[new][np.argsort(first_seen[new], kind="stable")].tolist(), info, lam, names, t)
        self._touching = np.union1d(pair_key, kept)

    def _append_events(self, contacts, info, lam, names, t):
        for j in contacts:
            A, B = int(info["A"][j]), int(info["B"][j])
            self.events.append(dict(time=t, body_a=names[A], body_b=names[B], point=info["point"][j].copy(),
                                    normal=info["normal"][j].copy(), speed=float(max(0.0, -info["vn0"][j])),
                                    impulse=float(lam[j, 0])))

    # -- sleeping -------------------------------------------------------------------------------------------
    def _sleep(self, awake, info):
        m, s = self.model, self.state
        sv = m.solver
        if not sv.sleeping_enabled:
            return
        if self._kern is not None:  # the same counts and islands, one compiled call
            A = info["A"] if info["count"] else np.zeros(0, dtype=np.int64)
            B = info["B"] if info["count"] else np.zeros(0, dtype=np.int64)
            la, lb = A, B
            if m.wires:
                la = np.concatenate((A, [w.body_a for w in m.wires])).astype(np.int64)
                lb = np.concatenate((B, [w.body_b for w in m.wires])).astype(np.int64)
            self._kern.sleep(s.linear_velocity, s.angular_velocity, awake, self.kinematic, s.quiet_steps,
                             s.sleeping, self._island, A, B, la, lb, sv.sleep_linear, sv.sleep_angular,
                             sv.sleep_quiet_steps)
            return
        lin = norm(s.linear_velocity)
        ang = norm(s.angular_velocity)
        quiet = (lin < sv.sleep_linear) & (ang < sv.sleep_angular)
        s.quiet_steps[:] = np.where(awake & quiet, s.quiet_steps + 1, np.where(awake, 0, s.quiet_steps))
        # bodies touching a moving kinematic body stay awake
        kin_moving = self.kinematic & ((lin > 0) | (ang > 0))
        A = info.get("A") if info["count"] else np.zeros(0, dtype=np.int64)
        B = info.get("B") if info["count"] else np.zeros(0, dtype=np.int64)
        if len(A) and kin_moving.any():
            hot = kin_moving[A] | kin_moving[B]
            s.quiet_steps[A[hot]] = 0
            s.quiet_steps[B[hot]] = 0
        ready = awake & (s.quiet_steps >= sv.sleep_quiet_steps)
        if not ready.any():
            return
        # islands of awake dynamic bodies linked by contacts and wires sleep when all their bodies are ready
        la, lb = A, B
        if m.wires:
            la = np.concatenate((A, [w.body_a for w in m.wires])).astype(np.int64)
            lb = np.concatenate((B, [w.body_b for w in m.wires])).astype(np.int64)
        both = awake[la] & awake[lb]
        label = island_labels(m.num_bodies, la[both], lb[both])
        restless = np.zeros(m.num_bodies, dtype=bool)
        restless[label[awake & ~ready]] = True
        now = awake & ~restless[label]
        s.sleeping[now] = True
        s.linear_velocity[now] = 0.0
        s.angular_velocity[now] = 0.0
        self._island[now] = label[now]
