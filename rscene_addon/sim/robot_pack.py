"""Every system alone on planes stepped in one compiled call (``kernels.robot_step.step_alone``).

A step of one robot used to pass its kernel 57 arguments and box ~20 returned arrays (~40 us, as much as
MuJoCo's whole step), and many robots paid it once each. A ``Pack`` lays the model, controls, planes and
state of several systems into a few flat buffers once; a step passes those and gets back two arrays.

What the rest of the code sees stays as it was: after a step ``q``, ``u``, ``frames``, ``vel``, ``com``,
``inertia``, ``_S`` and ``last_pd_torque`` are new arrays (views of the step's new state buffer, which
nothing writes again: references kept from earlier steps keep their values), cut when first read
(``PackedState``: a step pays no view nobody reads). The controls (``kp``, ``q_target``, ``tau_ext``,
``lower``, ``locked``, ...) are views of the pack's control buffer (``PackedControl``), so writing into them
reaches the next step; assigning a new array to one is seen and copied in. Both are non-data descriptors on
``ArticulatedSystem``: an assigned array is the instance's own and wins (the numpy route, the setters), and
it grows the instance's dict, so the per-step check that nothing was assigned is the dict's length.
"""
from __future__ import annotations

import operator

import numpy as np

from .link_contacts import MARGIN
from .multibody_solver import TOLERANCE

__all__ = ["Pack", "PackedControl", "PackedState", "blocks", "last_pack", "pack_for", "state_attributes", "control_attributes"]

# the float controls in the order of their layout columns (C_QT .. C_HI), each nq (q) or nv (v) or 3 long
_CONTROLS = (("q_target", "q"), ("u_target", "v"), ("kp", "v"), ("kd", "v"), ("damping", "v"),
             ("tau_ext", "v"), ("effort", "v"), ("armature", "v"), ("gravity", 3), ("lower", "q"), ("upper", "q"))
# state fields in the order of S_Q .. S_INERTIA: (attribute, size per link or per coordinate, shape tail)
_STATE = (("q", "q", ()), ("u", "v", ()), ("last_pd_torque", "v", ()), ("frames", 16, (4, 4)), ("_S", 36, (6, 6)),
          ("vel", 6, (6,)), ("com", 3, (3,)), ("inertia", 36, (6, 6)))
_READ = (0, 1, 3, 4, 5, 7)  # the state fields a step reads
_NAMES = tuple(name for name, _, _ in _STATE)
_CONTROL_NAMES = tuple(name for name, _ in _CONTROLS) + ("locked",)


class _Packed:
    """An attribute of ``ArticulatedSystem`` served from a pack (a non-data descriptor: an array assigned to
    the attribute lives in the instance's dict and wins, so the numpy route and the setters work as on plain
    attributes)."""

    __slots__ = ("name", "x")

    def __init__(self, name: str, x: int):
        self.name, self.x = name, x

    def _missing(self, obj):
        return AttributeError(f"{type(obj).__name__!r} object has no attribute {self.name!r}")


class PackedState(_Packed):
    """A state attribute (``q``, ``u``, ``frames``, ...) after a packed step: the view of the step's buffer
    is cut when first read (a step does not pay eight views nobody reads), then kept for the step
    (``s.q is s.q``)."""

    __slots__ = ()

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        h = obj.__dict__.get("_packed")
        if h is None:
            raise self._missing(obj)
        v = h[self.x]
        if v is None:
            _, a, b, shape = h[9][self.x]
            v = h[8][a:b] if len(shape) == 1 else h[8][a:b].reshape(shape)
            h[self.x] = v
        return v


class PackedControl(_Packed):
    """A control attribute (``kp``, ``q_target``, ``locked``, ...) of a system in a pack: the view of the
    pack's control buffer, so writes into it reach the next step (an assigned array grows the instance's
    dict: the pack sees it and copies it in)."""

    __slots__ = ()

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        b = obj.__dict__.get("_bound")
        if b is None:
            raise self._missing(obj)
        return b[self.x]


def state_attributes() -> tuple:
    """``PackedState`` descriptors of the state fields in ``_STATE`` order (``ArticulatedSystem``'s)."""
    return tuple(PackedState(name, x) for x, name in enumerate(_NAMES))


def control_attributes() -> tuple:
    """``PackedControl`` descriptors of the controls in ``_CONTROL_NAMES`` order (``ArticulatedSystem``'s)."""
    return tuple(PackedControl(name, x) for x, name in enumerate(_CONTROL_NAMES))


class Pack:
    """Several systems' buffers for ``step_alone``; ``key`` says which systems and tables it was built for.

    A system stepped by a pack holds ``_packed``: [8 views or None, the step's buffer, its state slices]
    (``PackedState`` cuts the views on demand), after a step also (n, K, head) and its index, where its
    contacts lie (the same list is its ``_contact_arrays``: ``step_contacts``); while its dict keeps the
    length it had after the step and that list, nothing replaced its state (an assignment adds the name to
    the dict)."""

    def __init__(self, systems, arrs, planes, selfs, kern, key):
        rs = kern.robot_step
        self.systems, self.key, self.rs = list(systems), key, rs
        rows = [_arrays(rs, s, a, t, sp) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
        self.lay, b = rs.pack(rows)
        self.mf, self.mi, self.cf, self.cb, self.state, self.pf, self.pb = (
            b["mf"], b["mi"], b["cf"], b["cb"], b["st"], b["pf"], b["pb"])
        self.scal = np.zeros(4)
        self.scal_key = None  # (dt, touch impulse) written into ``scal``
        # the solve's warm start: the last step's contacts (rows of CONTACT; system k's wrange[k, 0]:wrange[k, 1]),
        # the pack's last ``out`` while its systems come from it, else their ``last_contacts`` (``_rewarm``)
        self.last_out = None
        self.warm = np.zeros(0)
        self.wrange = np.zeros((len(systems), 2), np.int64)
        self.call = None  # ``step_alone``'s compiled entry for the buffers' types (``_entry``), after a step
        self.inputs = None  # what the tables were made from (``multibody_compiled._inputs``), None: unknown
        self.arrs = list(arrs)  # the systems' ``RobotArrays``
        self.near = None  # (live systems, their sphere tables, all live): ``multibody_compiled._near_any``
        self.scal_at = self.lay[:, rs.C_SCAL].tolist()
        self.scalars = [[s.erp, s.contact_slop] for s in systems]
        self.n = self.state.shape[0]
        self.touch_sig = None  # the last step's touch codes of all systems (``advance``)
        self.touching = None  # and the systems' touching sets it left
        last = len(systems) - 1
        # the state's frames and velocities of all systems: one block each (robot_step.pack lays them so)
        self.frames_at = (int(self.lay[0, rs.S_FRAMES]), int(self.lay[last, rs.S_FRAMES]) + 16 * int(self.lay[last, 0]))
        self.vel_at = (int(self.lay[0, rs.S_VEL]), int(self.lay[last, rs.S_VEL]) + 6 * int(self.lay[last, 0]))
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
        self.handed = [None] * len(systems)  # per system the ``_packed`` list it was handed
        self.sizes = [-1] * len(systems)  # per system its dict's length after the step (-1: check it all)
        self.bound = [None] * len(systems)  # per system the control views it reads
        self.handed_state = None  # the state buffer the systems were handed (``_take`` copies it once)
        for k, s in enumerate(systems):
            self._bind_controls(k, s)
            self._hand(k, s.__dict__, self.state)
            self._rewarm(k, s)

    def _rewarm(self, k, s) -> None:
        """System ``k``'s warm start from its ``last_contacts`` (another route or pack stepped it last)."""
        rows = _warm_rows(s, int(self.lay[k, self.rs.NG]), self.rs.CONTACT)
        at = self.warm.shape[0] // self.rs.CONTACT
        if len(rows):
            self.warm = np.concatenate((self.warm, rows.ravel()))
        self.wrange[k] = (at, at + len(rows))

    def _bind_controls(self, k, s):
        """System ``k`` reads its controls from the pack's buffers (``PackedControl``), as they are now."""
        d = s.__dict__
        views = []
        for name, buf, at, size in self.control_slices[k]:
            v = buf[at:at + size]
            now = getattr(s, name)
            if now is not v:
                v[:] = now
            d.pop(name, None)
            views.append(v)
        d["_bound"] = self.bound[k] = tuple(views)

    def _hand(self, k, d, buf):
        """System ``k`` (its dict ``d``) reads its state from ``buf`` (views cut on demand)."""
        if self.sizes[k] != len(d):  # names assigned since the last step hide the descriptors: drop them
            for name in _NAMES:
                d.pop(name, None)
        d["_packed"] = self.handed[k] = [None] * 8 + [buf, self.state_slices[k]]
        d["_S_list"] = None

    def sync(self) -> None:
        """Take what the systems' attributes say now where it is not the state and controls last handed out
        (a new configuration, new gains, another route's step, another pack's step): the state buffer then
        holds what they say."""
        self.handed_state = self.state
        cf, sizes, handed, bound, scalars = self.cf, self.sizes, self.handed, self.bound, self.scalars
        for k, s in enumerate(self.systems):
            d = s.__dict__
            if sizes[k] != len(d) or d.get("_packed") is not handed[k] or d.get("_bound") is not bound[k]:
                self._take(k, s, d)
            sc = scalars[k]
            if d["erp"] != sc[0] or d["contact_slop"] != sc[1]:
                sc[0], sc[1] = d["erp"], d["contact_slop"]
                cf[self.scal_at[k]], cf[self.scal_at[k] + 1] = sc

    def _take(self, k, s, d) -> None:
        """``sync`` of system ``k`` when its dict says something was assigned: the state when it is not the
        one handed out (into a copy of the buffer: arrays handed out for the last step keep their values),
        the controls assigned (copied into the pack's views, which the attributes show again)."""
        h = self.handed[k]
        if d.get("_packed") is not h or any(d.get(_NAMES[x], h[x]) is not h[x] for x in _READ):
            if self.state is self.handed_state:
                self.state = self.state.copy()
            for x in _READ:
                name, a, b, _ = self.state_slices[k][x]
                self.state[a:b] = np.ravel(getattr(s, name))
        self._bind_controls(k, s)
        ca = d.get("_contact_arrays")
        if ca is None or ca[8] is not self.last_out:  # the handed list: the step's buffer at 8
            self._rewarm(k, s)
        self.sizes[k] = -1  # the step's hand-out drops the state names assigned

    def _current(self, k, d) -> bool:
        """System ``k`` reads the state this pack handed it (nothing assigned since)."""
        h = self.handed[k]
        if d.get("_packed") is not h:
            return False
        return self.sizes[k] == len(d) or all(d.get(_NAMES[x], h[x]) is h[x] for x in range(8))

    def blocks(self, systems):
        """(frames (N, 4, 4), spatial velocities (N, 6)) of all links of ``systems`` as they are now, when
        they are this pack's systems in its order and hold the state it handed out (else None)."""
        if len(systems) != len(self.systems):
            return None
        for k, (s, t) in enumerate(zip(systems, self.systems)):
            if s is not t or not self._current(k, s.__dict__):
                return None
        return self.state_blocks()

    def step(self, dt: float, touch_impulse: float) -> list:
        """One step of every system of the pack; returns the systems whose step failed (nothing changed)."""
        self.sync()
        return self.advance(dt, touch_impulse)

    def state_blocks(self):
        """(frames (N, 4, 4), spatial velocities (N, 6)) of all links of the pack's state buffer."""
        a, b = self.frames_at
        c, e = self.vel_at
        return self.state[a:b].reshape(-1, 4, 4), self.state[c:e].reshape(-1, 6)

    def advance(self, dt: float, touch_impulse: float) -> list:
        """``step`` after ``sync``; returns the systems whose step failed (nothing changed)."""
        if self.scal_key != (dt, touch_impulse):
            self.scal[0], self.scal[1], self.scal[2], self.scal[3] = MARGIN, dt, touch_impulse, TOLERANCE
            self.scal_key = (dt, touch_impulse)
        call = self.call
        if call is None:  # the first step: through the dispatcher (which loads or compiles the kernel)
            args = (self.lay, self.mf, self.mi, self.cf, self.cb, self.state, self.pf, self.pb, self.scal,
                    self.warm, self.wrange)
            out, meta = self.rs.step_alone(*args)
            self.call = _entry(self.rs.step_alone, args)
        else:
            out, meta = call(self.lay, self.mf, self.mi, self.cf, self.cb, self.state, self.pf, self.pb, self.scal,
                             self.warm, self.wrange)
        systems = self.systems
        K, n = len(systems), self.n
        self.state = out[:n]  # the contacts and rows follow it
        failed = []
        # one list for the whole head and the touch codes: a numpy slice per item costs more
        head = meta.tolist()
        t0, touch = 2 * K + 1, 6 * K + 3  # where the starts of the touch codes and the codes lie
        # the next step's warm start: this step's contacts (system k's rows wrange[k], the kernel's table)
        self.last_out = out
        self.warm = out[n:n + head[2 * K] * self.rs.CONTACT]
        self.wrange = meta[4 * K + 3:touch].reshape(K, 2)
        # every system's touch codes and touching pairs as this pack's last step left them: no system's
        # touching changes (robots standing still), so none is looked at (one system: its own check is as cheap)
        sig = (head[t0:t0 + K + 1], head[touch:]) if K > 1 else None
        quiet = sig is not None and sig == self.touch_sig and all(map(operator.is_, map(_TOUCHING, systems),
                                                                      self.touching))
        step = (n, K, head)  # where every system's contacts and rows lie (``step_contacts``)
        sizes, handed, slices = self.sizes, self.handed, self.state_slices
        for k in range(K):
            s = systems[k]
            if not head[k]:
                failed.append(s)
                continue
            d = s.__dict__
            # ``_hand``, inline (a call per system costs more than its body); the list is the system's
            # ``_contact_arrays`` too (its contacts are sliced from the step's buffer when asked for)
            if sizes[k] != len(d):
                for name in _NAMES:
                    d.pop(name, None)
            d["_packed"] = d["_contact_arrays"] = handed[k] = [None, None, None, None, None, None, None, None, out,
                                                               slices[k], step, k]
            d["_S_list"] = None
            d["time"] += dt
            d["_last_contacts"] = None
            if not quiet:
                codes = head[touch + head[t0 + k]:touch + head[t0 + k + 1]]
                last = d.get("_touch_sig")
                if last is None or last[0] != codes or last[1] is not d["_touching"]:
                    if not _touch_quietly(s, codes):
                        _record_events(s, step_contacts(handed[k], s.nv)[0], touch_impulse)
                    d["_touch_sig"] = (codes, d["_touching"])
            sizes[k] = len(d)
        if sig is not None and not quiet:
            self.touch_sig, self.touching = sig, list(map(_TOUCHING, systems))
        return failed


def _entry(dispatcher, args):
    """The compiled entry point of ``dispatcher`` for the types of ``args`` (the pack's buffers, whose types
    never change: C-contiguous arrays of fixed dtype and rank), which skips the dispatcher's typing of nine
    arrays each call (~0.7 us of a step); the dispatcher itself when it has no such entry (numba off)."""
    try:
        return dispatcher.overloads[tuple(dispatcher.typeof_pyval(a) for a in args)].entry_point
    except (AttributeError, KeyError, TypeError):
        return dispatcher


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
    pdt = getattr(s, "last_pd_torque", None)
    for col, (name, n, tail) in zip(range(rs.S_Q, rs.S_INERTIA + 1), _STATE):
        size = nq if n == "q" else nv if n == "v" else n * L
        value = getattr(s, name, None) if name not in ("com", "last_pd_torque") else None
        if name == "last_pd_torque" and pdt is not None:
            value = pdt
        cols[col] = np.zeros(size) if value is None else np.asarray(value, float).reshape(size)
    # column by column (``robot_step._plane_columns`` views each as it lies)
    table = [np.ravel(np.asarray(x, float)) for x in (pn, pd, vbody, pmat, perp, pslop, rmin, rbase, vw)]
    cols[rs.P_F] = np.concatenate(table + [np.asarray(mat, float)])
    cols[rs.P_ALLOW] = pallow
    cols[rs.P_SELF] = allowed
    return sizes, cols


def _warm_rows(s, G: int, width: int) -> np.ndarray:
    """(c, width): ``s.last_contacts`` as ``step_alone`` lists contacts (kind, link, plane or other link; the
    impulse at 14:17), the rows a warm start reads; contacts with other systems left out (no row of a system
    alone meets them)."""
    from .multibody_compiled import _plane_body
    contacts = s.last_contacts or ()
    if not contacts:
        return np.zeros((0, width))
    links = {b.link: i for i, b in enumerate(s.bodies)}
    planes: dict = {}
    for g in reversed(range(G)):  # the first plane of a body gets its name
        planes[_plane_body(s, g)] = g
    rows = []
    for c in contacts:
        if c["system"] is not s or c.get("impulse") is None:
            continue
        other = c.get("other_system")
        if other is s:
            kind, b = 1, links.get(c["other_link"])
        elif other is None:
            kind, b = 0, planes.get(c["body"])
        else:
            continue
        a = links.get(c["link"])
        if a is None or b is None:
            continue
        row = np.zeros(width)
        row[0], row[1], row[2] = kind, a, b
        row[14:17] = c["impulse"]
        rows.append(row)
    return np.array(rows).reshape(-1, width)


def step_contacts(handed, nv: int):
    """One system's contacts (c, CONTACT) and rows (c, 3, nv) in a packed step's buffer, from the
    ``_contact_arrays`` a step keeps (the ``_packed`` list it handed the system: the buffer, then
    (its state's length n, the systems K, the step's head) and the system's index k). The contacts of all
    systems follow the state, their flat rows the contacts."""
    if not _CONTACT:
        from .kernels.robot_step import CONTACT
        _CONTACT.append(CONTACT)
    width = _CONTACT[0]
    buf, (n, K, head), k = handed[8], handed[10], handed[11]
    c0, c1, r0, r1 = head[K + k], head[K + k + 1], head[3 * K + 2 + k], head[3 * K + 3 + k]
    rows_at = n + head[2 * K] * width
    return (buf[n + c0 * width:n + c1 * width].reshape(c1 - c0, width),
            buf[rows_at + r0:rows_at + r1].reshape(c1 - c0, 3, nv))


_CONTACT: list = []  # ``kernels.robot_step.CONTACT`` (imported once: the kernels load lazily)
_TOUCHING = operator.attrgetter("_touching")


def _pair_names(s) -> dict:
    """Touch code (kind << 42 | other << 21 | link, as ``step_alone`` writes them) -> (the pair of body names,
    its sorted key) of a system, kept while its planes and names stay."""
    planes = s._arrays.__dict__.get("_env_planes")
    key = (s.ground_height is not None and s.collidable, s.name)
    cached = s.__dict__.get("_pair_names")
    if cached is None or cached[0] is not planes or cached[1] != key:
        cached = s._pair_names = (planes, key, {})
    return cached[2]


def _touch_quietly(s, sig) -> bool:
    """The touching pairs of a step whose touch codes ``sig`` changed, when each is a pair already touching
    (no event: ``s._touching`` becomes them, as ``_record_events`` would set it); False when a code is new
    to the system's table or its pair is not touching yet (``_record_events`` then runs)."""
    names = _pair_names(s)
    touching = s._touching
    keys = set()
    for code in sig:
        entry = names.get(code)
        if entry is None or entry[1] not in touching:
            return False
        keys.add(entry[1])
    s._touching = keys
    return True


def _record_events(s, cont, touch_impulse: float) -> None:
    """``ArticulatedSystem._record_events`` on a packed step's contacts (C, CONTACT): a touching pair not
    touching at the last step is an event (its fastest contact's point, normal, speed and impulse). The
    contacts are read as one list (numpy's masks and fancy indexing on a few rows cost ~20 us a call)."""
    names = _pair_names(s)
    best: dict = {}
    for c, row in enumerate(cont.tolist()):
        if not row[14] > touch_impulse:
            continue
        kind, link, other, speed = int(row[0]), int(row[1]), int(row[2]), row[12]
        code = (kind << 42) | (other << 21) | link
        entry = names.get(code)
        if entry is None:
            if kind == 0:
                from .multibody_compiled import _plane_body
                body = _plane_body(s, other)
            else:
                body = f"{s.name}/{s.bodies[other].link}"
            pair = (body, f"{s.name}/{s.bodies[link].link}")
            entry = names[code] = (pair, tuple(sorted(pair)))
        pair, pkey = entry
        if pkey not in best or speed > best[pkey][1]:
            best[pkey] = (pair, speed, c, row[14])
    touching = s._touching
    for pkey, (pair, speed, c, impulse) in best.items():
        if pkey not in touching:
            s.events.append(dict(time=s.time, body_a=pair[0], body_b=pair[1], point=cont[c, 3:6].copy(),
                                 normal=cont[c, 6:9].copy(), speed=speed, impulse=impulse))
    s._touching = set(best)


_PACKS: list = []  # the packs of the last steps (a few: the systems alone may change from step to step)


def last_pack(systems):
    """The last step's pack when it holds exactly ``systems`` in this order (its ``inputs``, set by the
    caller, say what its tables were made from)."""
    if not _PACKS:
        return None
    p = _PACKS[0]
    # systems compare by identity (no __eq__): the list comparison runs in C
    return p if p.systems == systems else None


def blocks(systems):
    """``Pack.blocks`` of the last step's pack (None: no pack, or not these systems as it left them)."""
    return _PACKS[0].blocks(systems) if _PACKS else None


def pack_for(systems, arrs, planes, selfs, kern) -> Pack:
    """The pack of these systems with these tables (built when any of them changed)."""
    # ids of objects the pack holds (so no other object can take their id while it lives)
    key = [(id(s), id(t), id(sp[0]), id(sp[1]), id(a.limits(s)[0]), bool(s.enforce_effort_limits),
            s.contact_iterations) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
    for p in _PACKS:
        if p.key == key:
            _PACKS.remove(p)
            _PACKS.insert(0, p)  # the last step's pack first (``last_pack``, ``blocks``)
            return p
    p = Pack(systems, arrs, planes, selfs, kern, key)
    p.refs = [(t, sp, a.limits(s)[0]) for s, a, t, sp in zip(systems, arrs, planes, selfs)]
    _PACKS.insert(0, p)
    del _PACKS[4:]
    return p
