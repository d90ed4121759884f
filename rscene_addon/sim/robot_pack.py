"""Every system alone on planes stepped in one compiled call (``kernels.robot_step.step_alone``).

A step of one robot used to pass its kernel 57 arguments and box ~20 returned arrays (~40 us, as much as
MuJoCo's whole step), and many robots paid it once each. A ``Pack`` lays the model, controls, planes and
state of several systems into a few flat buffers once; a step passes those and gets back six arrays.

What the rest of the code sees stays as it was: after a step ``q``, ``u``, ``frames``, ``vel``, ``com``,
``inertia``, ``_S`` and ``last_pd_torque`` are new arrays (views of the step's new state buffer, which
nothing writes again: references kept from earlier steps keep their values). The controls (``kp``,
``q_target``, ``tau_ext``, ``lower``, ``locked``, ...) are views of the pack's control buffer, so writing
into them reaches the next step; assigning a new array to one is seen (by identity) and copied in.
"""
from __future__ import annotations

import numpy as np

from .link_contacts import MARGIN

__all__ = ["Pack", "pack_for"]

# the float controls in the order of their layout columns (C_QT .. C_HI), each nq (q) or nv (v) or 3 long
_CONTROLS = (("q_target", "q"), ("u_target", "v"), ("kp", "v"), ("kd", "v"), ("damping", "v"),
             ("tau_ext", "v"), ("effort", "v"), ("armature", "v"), ("gravity", 3), ("lower", "q"), ("upper", "q"))
# state fields in the order of S_Q .. S_INERTIA: (attribute, size per link or per coordinate, shape tail)
_STATE = (("q", "q", ()), ("u", "v", ()), ("last_pd_torque", "v", ()), ("frames", 16, (4, 4)), ("_S", 36, (6, 6)),
          ("vel", 6, (6,)), ("com", 3, (3,)), ("inertia", 36, (6, 6)))
_READ = (0, 1, 3, 4, 5, 7)  # the state fields a step reads


class Pack:
    """Several systems' buffers for ``step_alone``; ``key`` says which systems and tables it was built for."""

    def __init__(self, systems, arrs, planes, selfs, kern, key):
        rs = kern.robot_step
        self.systems, self.key, self.rs = list(systems), key, rs
        rows = [_arrays(rs, s, a, t, sp) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
        self.lay, b = rs.pack(rows)
        self.mf, self.mi, self.cf, self.cb, self.state, self.pf, self.pb = (
            b["mf"], b["mi"], b["cf"], b["cb"], b["st"], b["pf"], b["pb"])
        self.scal = np.zeros(3)
        self.scal_at = self.lay[:, rs.C_SCAL].tolist()
        # where each system's controls and state lie in the buffers: (attribute, start, stop, shape)
        self.control_slices, self.state_slices = [], []
        for k, s in enumerate(systems):
            L, nq, nv = len(s.bodies), s.nq, s.nv
            ctl = []
            for col, (name, n) in zip(range(rs.C_QT, rs.C_HI + 1), _CONTROLS):
                size = nq if n == "q" else nv if n == "v" else n
                ctl.append((name, self.cf, int(self.lay[k, col]), size))
            ctl.append(("locked", self.cb, int(self.lay[k, rs.C_LOCKED]), nv))
            self.control_slices.append(ctl)
            sl = []
            for col, (name, n, tail) in zip(range(rs.S_Q, rs.S_INERTIA + 1), _STATE):
                size = nq if n == "q" else nv if n == "v" else n * L
                at = int(self.lay[k, col])
                sl.append((name, at, at + size, (L,) + tail if tail else (size,)))
            self.state_slices.append(sl)
        # hand the systems views of the buffers (their controls, their state)
        self.handed = [None] * len(systems)
        self.bound = [None] * len(systems)
        for k, s in enumerate(systems):
            self._bind_controls(k, s)
            self._hand_out(k, s, self.state)

    def _bind_controls(self, k, s):
        views = []
        for name, buf, at, size in self.control_slices[k]:
            v = buf[at:at + size]
            setattr(s, name, v)
            views.append(v)
        self.bound[k] = views

    def _hand_out(self, k, s, buf):
        views = []
        for name, a, b, shape in self.state_slices[k]:
            v = buf[a:b] if len(shape) == 1 else buf[a:b].reshape(shape)
            views.append(v)
        s.q, s.u, s.last_pd_torque, s.frames, s._S, s.vel, s.com, s.inertia = views
        s._S_list = None
        self.handed[k] = views

    def _sync(self) -> None:
        """Take what the systems' attributes say now where it is not the arrays last handed out (a new
        configuration, new gains, another route's step)."""
        copied = False
        for k, s in enumerate(self.systems):
            h = self.handed[k]
            if not (s.q is h[0] and s.u is h[1] and s.frames is h[3] and s._S is h[4] and s.vel is h[5]
                    and s.inertia is h[7]):
                if not copied:  # arrays handed out for the last step keep their values
                    self.state = self.state.copy()
                    copied = True
                for x in _READ:
                    name, a, b, _ = self.state_slices[k][x]
                    self.state[a:b] = np.ravel(getattr(s, name))
                self._hand_out(k, s, self.state)
            for (name, _, _, _), v in zip(self.control_slices[k], self.bound[k]):
                now = getattr(s, name)
                if now is not v:
                    v[:] = now
                    setattr(s, name, v)
            at = self.scal_at[k]
            self.cf[at], self.cf[at + 1] = s.erp, s.contact_slop

    def step(self, dt: float, touch_impulse: float) -> list:
        """One step of every system of the pack; returns the systems whose step failed (nothing changed)."""
        self._sync()
        self.scal[0], self.scal[1], self.scal[2] = MARGIN, dt, touch_impulse
        out, ok, starts, contacts, rows, touch = self.rs.step_alone(self.lay, self.mf, self.mi, self.cf, self.cb,
                                                                    self.state, self.pf, self.pb, self.scal)
        self.state = out
        failed = []
        c0, t0, r0 = starts.tolist()
        for k, s in enumerate(self.systems):
            if not ok[k]:
                failed.append(s)
                continue
            self._hand_out(k, s, out)
            s.time += dt
            s._last_contacts = None
            nv = s.nv
            s._contact_arrays = (contacts[c0[k]:c0[k + 1]], rows[r0[k]:r0[k + 1]].reshape(-1, 3, nv))
            sig = touch[t0[k]:t0[k + 1]].tobytes()
            last = s.__dict__.get("_touch_sig")
            if last is None or last[0] != sig or last[1] is not s._touching:
                _record_events(s, s._contact_arrays[0], touch_impulse)
                s._touch_sig = (sig, s._touching)
        return failed


def _arrays(rs, s, a, t, sp):
    """One system's row for ``robot_step.pack``: its sizes and every array the kernel reads."""
    L, nq, nv = len(s.bodies), s.nq, s.nv
    lg, ld = a.limits(s)
    pallow, pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw = t
    allowed, mat = sp
    G = len(pn)
    sizes = (L, nq, nv, len(a.pts), len(a.st), len(lg), G, s.contact_iterations, int(bool(s.enforce_effort_limits)))
    cols = dict(zip(range(rs.M_ORIGIN, rs.M_BR + 1), (a.origin, a.axis, a.offset, a.pu, a.pv, a.mass, a.com_local,
                                                      a.inertia_local, a.pts, a.ss, a.so, a.bc, a.br)))
    cols.update(zip(range(rs.I_PARENT, rs.I_LD + 1), (a.parent, a.kind, a.gs0, a.ds0, a.nd, a.p0, a.st, a.s0, lg, ld)))
    for col, (name, n) in zip(range(rs.C_QT, rs.C_HI + 1), _CONTROLS):
        cols[col] = np.broadcast_to(np.asarray(getattr(s, name), float), (nq if n == "q" else nv if n == "v" else n,))
    cols[rs.C_SCAL] = (s.erp, s.contact_slop)
    cols[rs.C_LOCKED] = s.locked
    pdt = s.__dict__.get("last_pd_torque")
    for col, (name, n, tail) in zip(range(rs.S_Q, rs.S_INERTIA + 1), _STATE):
        size = nq if n == "q" else nv if n == "v" else n * L
        value = getattr(s, name, None) if name not in ("com", "last_pd_torque") else None
        if name == "last_pd_torque" and pdt is not None:
            value = pdt
        cols[col] = np.zeros(size) if value is None else np.asarray(value, float).reshape(size)
    table = np.concatenate((pn, pd[:, None], vbody, pmat, perp[:, None], pslop[:, None], rmin[:, None],
                            rbase[:, None], vw[:, None]), axis=1) if G else np.zeros((0, 15))
    cols[rs.P_F] = np.concatenate((table.ravel(), np.asarray(mat, float)))
    cols[rs.P_ALLOW] = pallow
    cols[rs.P_SELF] = allowed
    return sizes, cols


def _record_events(s, cont, touch_impulse: float) -> None:
    """``ArticulatedSystem._record_events`` on a packed step's contacts (C, CONTACT): a touching pair not
    touching at the last step is an event (its fastest contact's point, normal, speed and impulse)."""
    from .multibody_compiled import _plane_body
    best: dict = {}
    for c in np.flatnonzero(cont[:, 14] > touch_impulse).tolist():
        kind, other, link = int(cont[c, 0]), int(cont[c, 2]), int(cont[c, 1])
        body = _plane_body(s, other) if kind == 0 else f"{s.name}/{s.bodies[other].link}"
        pair = (body, f"{s.name}/{s.bodies[link].link}")
        key = tuple(sorted(pair))
        speed = float(cont[c, 12])
        if key not in best or speed > best[key][1]:
            best[key] = (pair, speed, c)
    for key, (pair, speed, c) in best.items():
        if key not in s._touching:
            s.events.append(dict(time=s.time, body_a=pair[0], body_b=pair[1], point=cont[c, 3:6].copy(),
                                 normal=cont[c, 6:9].copy(), speed=speed, impulse=float(cont[c, 14])))
    s._touching = set(best)


_PACKS: list = []  # the packs of the last steps (a few: the systems alone may change from step to step)


def pack_for(systems, arrs, planes, selfs, kern) -> Pack:
    """The pack of these systems with these tables (built when any of them changed)."""
    # ids of objects the pack holds (so no other object can take their id while it lives)
    key = [(id(s), id(t), id(sp[0]), id(sp[1]), id(a.limits(s)[0]), bool(s.enforce_effort_limits),
            s.contact_iterations) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
    for p in _PACKS:
        if p.key == key:
            return p
    p = Pack(systems, arrs, planes, selfs, kern, key)
    p.refs = [(t, sp, a.limits(s)[0]) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
    _PACKS.insert(0, p)
    del _PACKS[4:]
    return p
