"""The compiled kernels of a world of boxes on planes, imported together (by ``kernels.load`` after it has
chosen the cache folder), and the narrowphase handlers that call them (``narrowphase.collide``'s handler
signature). The other shapes' narrowphase and step are ``shapes`` (``kernels.load_shapes``), compiled
only by worlds that have them."""
from __future__ import annotations

import numpy as np

from . import boxes, convex, terrain
from .body import body_frames, sleep
from .box_world import step as box_world_step
from .bounds import aabbs
from .contacts import box_contacts
from .events import touch_events
from .pairs import candidate_pairs
from .pgs import solve, warm_start
from .rows import contact_rows
from .step import integrate, warm

__all__ = ["body_frames", "box_box", "box_world_step", "box_contacts", "compute_aabbs", "candidate_pairs", "contact_rows", "box_plane", "handlers", "integrate", "shape_data", "sleep", "solve", "touch_events", "warm", "warm_start", "warm_up"]


def _out(n: int):
    return np.empty(n, np.int64), np.empty((n, 3)), np.empty((n, 3)), np.empty(n)


def box_box(m, fr, ga, gb, margin, pidx, buf, max_points):
    out = _out(len(ga) * max(1, min(24, max_points)))
    count = boxes.box_box(pidx, fr.pos[ga], fr.pos[gb], fr.rot[ga], fr.rot[gb], m.geom_size[ga],
                          m.geom_size[gb], margin, max_points, *out, 0)
    buf.add(*(x[:count] for x in out))


def box_plane(m, fr, ga, gb, margin, pidx, buf, max_points):
    n = np.ascontiguousarray(fr.rot[gb][:, :, 2])
    d = np.einsum("ki,ki->k", n, fr.pos[gb])
    out = _out(len(ga) * max(1, min(8, max_points)))
    count = boxes.box_plane(pidx, fr.pos[ga], fr.rot[ga], m.geom_size[ga], n, d, margin, max_points, *out, 0)
    buf.add(*(x[:count] for x in out))


def compute_aabbs(m, pos, rot, pad, heightfields=()):
    """``broadphase.compute_aabbs``: the primitives compiled, the geoms ``heightfields`` from their stored
    bounds."""
    lo, hi = aabbs(m.geom_type, m.geom_size, m.geom_local_aabb, pos, rot, pad)
    for g in heightfields:
        lo[g], hi[g] = m.geom_hfield[g].aabb
    return lo, hi


def shape_data(m):
    """What the compiled step needs of a Model's geoms beyond its arrays: local poses (G, 3), (G, 3, 3),
    height fields' stored bounds (mask, lo, hi), packed polytopes and height fields, the scratch size."""
    from ..geometry import HEIGHTFIELD
    from ..mathutil import quat_to_matrix
    G = m.num_geoms
    fixed = np.ascontiguousarray(m.geom_type == HEIGHTFIELD)
    lo, hi = np.zeros((G, 3)), np.zeros((G, 3))
    for g in np.flatnonzero(fixed):
        lo[g], hi[g] = m.geom_hfield[g].aabb
    polys = convex.pack(m.geom_poly)
    return (np.ascontiguousarray(m.geom_pos, dtype=np.float64),
            np.ascontiguousarray(quat_to_matrix(np.asarray(m.geom_quat, dtype=np.float64)).reshape(G, 3, 3)),
            fixed, lo, hi, polys, terrain.pack(m.geom_hfield), convex.largest(polys))


def handlers():
    """narrowphase.HANDLERS with the compiled pairs in place of the numpy ones."""
    from ..geometry import BOX, PLANE
    from ..narrowphase import HANDLERS as numpy_handlers
    table = dict(numpy_handlers)
    table[(BOX, BOX)] = box_box
    table[(BOX, PLANE)] = box_plane
    return table


def world_args(types):
    """The arguments of a one-call step (``box_world.step``, ``shape_world.step``) for two bodies and the
    three geoms of ``types`` (body 0 has geom 0, body 1 the others): what warm-ups call them with."""
    from ..geometry import box_polytope
    a = np.zeros(1, np.int64)
    I3, x3, flags = np.zeros((2, 3, 3)), np.zeros((2, 3)), np.zeros(2, np.bool_)
    poly = box_polytope(np.full(3, 0.5))
    polys = convex.pack([poly, poly, None])
    shapes = (np.zeros((3, 3)), np.eye(3)[None].repeat(3, 0), types == 6, np.zeros((3, 3)), np.zeros((3, 3)), polys,
              terrain.pack([None] * 3), convex.largest(polys))
    return (np.zeros((2, 3)), np.array([[1.0, 0.0, 0.0, 0.0]] * 2), x3.copy(), x3.copy(), flags.copy(),
            np.zeros(2, np.int64), np.full(2, -1, np.int64), x3.copy(), x3.copy(), ~flags, flags, np.ones(2),
            I3, np.ones(2), np.zeros(3), np.array([0, 1, 1], np.int64), types, np.full((3, 3), 0.5),
            np.zeros((3, 2, 3)), np.zeros(3, np.int64), np.ones(3, np.uint64), np.ones(3, np.uint64),
            types == 5, np.zeros(3), np.zeros((1, 1, 5)), a[:0], x3[:0], x3[:0], a[:0], True, *shapes, 0.01,
            0.005, 4, 28, 20, 1e-5, True, 0.2, True, 0.002, 0.01, 5, 0.02)


def warm_up() -> None:
    """Run every kernel once on tiny inputs with the types a step passes (compiles or loads them)."""
    V = np.zeros((2, 6))
    a, b = np.zeros(1, np.int64), np.ones(1, np.int64)
    for R in (3, 1):
        J = np.zeros((1, R, 12))
        lam = np.zeros((1, R))
        warm_start(V, a, b, J, lam)
        for lever in (np.ones(2), np.zeros(0)):
            solve(V, a, b, J, J, np.ones((1, R)), np.ones((1, R)), np.zeros(1), np.zeros(1), np.zeros(1), lam,
                  1, 1e-5, True, True, lever)
    I3 = np.zeros((2, 3, 3))
    contact_rows(a, b, np.zeros((1, 3)), np.array([[0.0, 0.0, 1.0]]), np.zeros(1), np.zeros((2, 3)), I3, V, V,
                 np.ones(2), I3, np.zeros((1, 5)), 0.01)
    flags, u64 = np.zeros(2, np.bool_), np.ones(2, np.uint64)
    x3 = np.zeros((2, 3))
    warm(a, x3, x3, a, x3, x3, x3, x3, 0.02)
    body_frames(np.array([[1.0, 0.0, 0.0, 0.0]] * 2), I3, flags, np.zeros(3), np.ones(2), x3, x3, x3.copy(),
                x3.copy(), 0.01)
    sleep(x3.copy(), x3.copy(), ~flags, flags, np.zeros(2, np.int64), flags.copy(), np.full(2, -1, np.int64), a, b,
          a, b, 0.1, 0.1, 5)
    touch_events(a, flags, a, b, np.ones(1), np.zeros(1), 2)
    integrate(x3.copy(), np.array([[1.0, 0.0, 0.0, 0.0]] * 2), x3.copy(), x3.copy(), V, V, ~flags, 0.01)
    candidate_pairs(np.zeros((2, 3)), np.ones((2, 3)), flags, np.zeros(2), a.repeat(2), flags, flags, u64, u64)
    pos, rot, h = np.zeros((1, 3)), np.eye(3)[None].copy(), np.full((1, 3), 0.5)
    aabbs(np.zeros(1, np.int64), h, np.zeros((1, 2, 3)), pos, rot, np.zeros(1))
    out = _out(24)
    boxes.box_plane(a, pos, rot, h, rot[:, :, 2].copy(), np.zeros(1), np.ones(1), 4, *out, 0)
    boxes.box_box(a, pos, pos + 0.9, rot, rot, h, h, np.ones(1), 4, *out, 0)
    types = np.array([1, 1, 5], np.int64)  # (BOX, BOX, PLANE)
    box_world_step(*world_args(types))
    box_contacts(np.array([[0, 1], [0, 2], [2, 1]], np.int64), types, np.zeros((3, 3)), np.eye(3)[None].repeat(3, 0),
                 np.full((3, 3), 0.5), np.ones(3), 4)
