"""Every shape on the compiled path: ``kernels.narrow.shape_contacts`` against the numpy narrowphase (the
reference, written pair type by pair type in array code), the one-call step with every shape against the
same World stepping kernel by kernel, and the two backends settling the same shapes alike."""
from __future__ import annotations

import os

import numpy as np
import pytest

from rscene_addon.sim import World, kernels, simulate
from rscene_addon.sim.geometry import TYPE_NAMES
from rscene_addon.sim.narrowphase import Frames, collide
from tests.scenes import ground, header, obj, scene_from

needs_numba = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


def _pebble(folder) -> str:
    """A 24-point hull (an ellipsoid's points), as an OBJ."""
    d = np.random.default_rng(3).normal(size=(24, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    path = os.path.join(folder, "pebble.obj")
    with open(path, "w") as fh:
        fh.writelines(f"v {p[0]} {p[1]} {p[2]}\n" for p in d * np.array([0.18, 0.14, 0.11]))
    return path


def _terrain(n=17, size=4.0):
    x = np.linspace(-size / 2, size / 2, n)
    X, Y = np.meshgrid(x, x)
    H = 0.1 * np.sin(1.7 * X) * np.cos(1.3 * Y)
    heights = ",".join(repr(float(h)) for h in H.ravel())
    return f"terrain_region /World/Terrain {n} {n} {size} {size} 0 0 0.0 heights={heights}"


SHAPES = {"box": dict(scale=(0.3, 0.2, 0.25)), "sphere": dict(radius=0.15), "capsule": dict(radius=0.1, height=0.25),
          "cylinder": dict(radius=0.12, height=0.3)}


def _jumble(tmp_path, seed, count=8):
    """Every shape ``count`` times at random poses, overlapping each other, a plane and a height field;
    some upright or on their side (parallel axes, face-on contacts)."""
    rng = np.random.default_rng(seed)
    mesh = _pebble(str(tmp_path))
    lines = header() + [ground(), _terrain()]
    for i, kind in enumerate(["sphere", "box", "capsule", "cylinder", "mesh"] * count):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        if rng.random() < 0.3:
            q = np.array([1.0, 0, 0, 0]) if rng.random() < 0.5 else np.array([np.sqrt(0.5), np.sqrt(0.5), 0, 0])
        p = np.array([*rng.uniform(-0.35, 0.35, 2), rng.uniform(0.0, 0.4)])
        kw = dict(mesh=mesh) if kind == "mesh" else SHAPES[kind]
        lines.append(obj(f"/World/B{i}", kind, pos=p, quat=q, **kw))
    return scene_from(lines)


@needs_numba
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("max_points", [4, 2])
def test_compiled_contacts_of_every_shape_pair_are_the_numpy_contacts(tmp_path, seed, max_points):
    from rscene_addon.sim.kernels import convex, narrow, terrain
    w = World.from_scene(_jumble(tmp_path, seed), backend="numpy")
    m = w.model
    pos, rot = w.geom_poses()
    G = m.num_geoms
    pairs = np.array([(a, b) for a in range(G) for b in range(a + 1, G)], np.int64)
    margins = np.random.default_rng(seed).uniform(0.0, 0.03, len(pairs))
    ref = collide(m, Frames(m, pos, rot), pairs, margins, max_points)
    polys = convex.pack(m.geom_poly)
    got = narrow.shape_contacts(pairs, m.geom_type, np.ascontiguousarray(pos), np.ascontiguousarray(rot),
                                m.geom_size, margins, max_points, polys, terrain.pack(m.geom_hfield),
                                convex.largest(polys))
    # every pair type the simulator handles is in the jumble (so each kernel was compared)
    kinds = {tuple(sorted((int(m.geom_type[a]), int(m.geom_type[b])))) for a, b in pairs[ref[0]]}
    assert len(kinds) >= 22, sorted((TYPE_NAMES[a], TYPE_NAMES[b]) for a, b in kinds)
    assert np.array_equal(got[0], ref[0])  # the same pairs, each with the same number of points
    for r, g in zip(ref[2:], got[2:]):  # normals and separations to rounding
        assert np.abs(r - g).max() < 1e-9
    # points too, except where rounding breaks an exact tie between parallel edges of upright shapes (an
    # edge-edge contact's midpoint then sits on the other of two equally deep edges)
    off = np.abs(ref[1] - got[1]).max(axis=1) > 1e-9
    assert off.sum() <= max(1, len(off) // 100)


def _shape_world():
    """One body of each primitive per row, dropped in a loose heap on a plane and on a height field, with a
    kinematic pusher and a late body that wakes them: every part of the one-call step with round shapes."""
    lines = header(dt=1 / 240, sleeping=True) + [ground(z=-0.3), _terrain()]
    kinds = ["sphere", "capsule", "cylinder", "box"]
    for i in range(12):
        q = np.array([np.cos(0.2 * i), np.sin(0.2 * i), 0.3, 0.0])
        lines.append(obj(f"/World/P{i}", kinds[i % 4], pos=(0.33 * (i % 4) - 0.5, 0.35 * (i // 4), 0.4 + 0.05 * i),
                         quat=q / np.linalg.norm(q), **SHAPES[kinds[i % 4]]))
    lines.append(obj("/World/Late", "capsule", pos=(0.0, 0.35, 3.0), radius=0.1, height=0.2))
    lines.append(obj("/World/Pusher", "box", pos=(-1.5, 0.3, 0.3), scale=(0.3, 0.3, 0.3), mode="kinematic"))
    return scene_from(lines)


@needs_numba
def test_one_call_step_with_every_shape_is_the_kernel_by_kernel_step():
    """Spheres, capsules, cylinders and boxes on a plane and a height field: kernels.box_world.step against
    the same World stepping kernel by kernel, the states equal to the bit at every step."""
    one, sep = (World.from_scene(_shape_world(), backend="numba") for _ in range(2))
    assert one._one_call
    sep._one_call = False
    asleep = []
    for step in range(700):
        for w in (one, sep):
            if step < 300:
                w.set_kinematic_pose("/World/Pusher", (-1.5 + 0.004 * step, 0.3, 0.3))
            w.step()
        a, b = one.state, sep.state
        for name in ("position", "quaternion", "linear_velocity", "angular_velocity", "sleeping", "quiet_steps"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (step, name)
        assert one.last_iterations == sep.last_iterations
        if one.contacts is not None:
            for key in one.contacts:
                assert np.array_equal(one.contacts[key], sep.contacts[key]), (step, key)
        asleep.append(int(a.sleeping.sum()))
    assert max(asleep) >= 2  # islands fell asleep (sleeping and waking ran in both)
    assert len(one.events) == len(sep.events) > 12


def _drops(tmp_path):
    """Each shape alone, tilted, no neighbours: on the plane (off the height field) and on the height field."""
    mesh = _pebble(str(tmp_path))
    lines = header(dt=1 / 240, sleeping=False) + [ground(z=-0.5), _terrain()]
    for i, kind in enumerate(["sphere", "box", "capsule", "cylinder", "mesh"]):
        q = np.array([1.0, 0.15 * i, 0.1, 0.0])
        kw = dict(mesh=mesh) if kind == "mesh" else SHAPES[kind]
        lines.append(obj(f"/World/T{i}", kind, pos=(0.8 * i - 1.6, -3.0, -0.2), quat=q / np.linalg.norm(q), **kw))
        lines.append(obj(f"/World/F{i}", kind, pos=(0.8 * i - 1.6, 0.5, 0.4), quat=q / np.linalg.norm(q), **kw))
    return scene_from(lines)


@needs_numba
def test_both_backends_settle_every_shape_in_the_same_place(tmp_path):
    # The same contacts (above) and rows; the sweeps differ only in the order coupled rows are visited,
    # so single bodies settling on terrain end within a millimetre of each other.
    ref = simulate(_drops(tmp_path), 1.5, 60, backend="numpy")
    got = simulate(_drops(tmp_path), 1.5, 60, backend="numba")
    assert np.isfinite(got.position).all()
    assert np.abs(ref.position[-1] - got.position[-1]).max() < 1e-3
    assert np.abs(ref.position[-1, :, 2] - ref.position[0, :, 2]).max() > 0.2  # they fell and landed


def _pebbles_and_boxes(folder, rng, n, spread):
    """n shapes at random poses within +-spread (every fourth a box, the others pebbles): their numpy World
    and every pair of its geoms."""
    mesh = _pebble(folder)
    lines = header()
    for i in range(n):
        q = rng.normal(size=4)
        kind = "box" if i % 4 == 3 else "mesh"
        kw = dict(mesh=mesh) if kind == "mesh" else SHAPES["box"]
        lines.append(obj(f"/World/H{i}", kind, pos=rng.uniform(-spread, spread, 3), quat=q / np.linalg.norm(q),
                         **kw))
    w = World.from_scene(scene_from(lines), backend="numpy")
    G = w.model.num_geoms
    return w, np.array([(a, b) for a in range(G) for b in range(a + 1, G)], np.int64)


@needs_numba
def test_pruned_hull_sat_gives_the_numpy_contacts_pose_by_pose(tmp_path):
    """The compiled hull SAT skips face and edge axes by bounds (inradius balls, edge supports); the numpy
    reference projects every face and every Minkowski-face edge pair. Pebbles against pebbles and boxes
    at random poses around touching (apart, grazing, overlapping), each pair alone: the same contacts."""
    from rscene_addon.sim.kernels import convex, narrow, terrain
    rng = np.random.default_rng(5)
    w, pairs = _pebbles_and_boxes(str(tmp_path), rng, 60, 0.5)
    m = w.model
    pos, rot = w.geom_poses()
    margins = rng.uniform(0.0, 0.05, len(pairs))
    ref = collide(m, Frames(m, pos, rot), pairs, margins, 4)
    polys = convex.pack(m.geom_poly)
    got = narrow.shape_contacts(pairs, m.geom_type, np.ascontiguousarray(pos), np.ascontiguousarray(rot),
                                m.geom_size, margins, 4, polys, terrain.pack(m.geom_hfield), convex.largest(polys))
    assert len(np.unique(ref[0])) > 80  # many touching pairs, most of the others apart
    assert np.array_equal(got[0], ref[0])
    for r, g in zip(ref[1:], got[1:]):
        assert np.abs(r - g).max() < 1e-9


@needs_numba
def test_cached_separating_axes_change_no_contact_as_hulls_move(tmp_path):
    """The compiled hull SAT first tries each pair's last separating axis, kept in the packed polytopes
    across calls. Pebbles and boxes moved a little between calls (pairs coming apart, closing, turning):
    with the cache carried along, the contacts of every call are those of a fresh pack (no cache) to the
    bit, and on the last call those of the numpy reference."""
    from rscene_addon.sim.kernels import convex, narrow, terrain
    rng = np.random.default_rng(11)
    w, pairs = _pebbles_and_boxes(str(tmp_path), rng, 40, 0.45)
    m = w.model
    pos, rot = (np.ascontiguousarray(a) for a in w.geom_poses())
    G = m.num_geoms
    margins = np.full(len(pairs), 0.02)
    kept = convex.pack(m.geom_poly)
    hfs = terrain.pack(m.geom_hfield)
    touching = []
    for _ in range(8):
        got = narrow.shape_contacts(pairs, m.geom_type, pos, rot, m.geom_size, margins, 4, kept, hfs,
                                    convex.largest(kept))
        fresh = convex.pack(m.geom_poly)
        want = narrow.shape_contacts(pairs, m.geom_type, pos, rot, m.geom_size, margins, 4, fresh, hfs,
                                     convex.largest(fresh))
        for g, r in zip(got, want):
            assert np.array_equal(g, r)
        touching.append(set(np.unique(got[0]).tolist()))
        # every geom moves up to ~2 cm and turns up to ~3 degrees about a random axis
        pos = pos + rng.normal(scale=0.01, size=pos.shape)
        for g in range(G):
            k = rng.normal(size=3)
            k *= rng.uniform(0.0, 0.05) / np.linalg.norm(k)
            K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
            t = np.linalg.norm(k)
            R = np.eye(3) + np.sin(t) / t * K + (1 - np.cos(t)) / t ** 2 * K @ K
            rot[g] = R @ rot[g]
        pos, rot = np.ascontiguousarray(pos), np.ascontiguousarray(rot)
    axes = kept[19]
    assert np.count_nonzero(axes) > 300  # separated pairs left their axes (faces of both and edge pairs)
    assert set(np.unique(axes[axes != 0] >> 48).tolist()) == {convex.FACE_A, convex.FACE_B, convex.EDGES}
    assert any(touching[i] ^ touching[i + 1] for i in range(len(touching) - 1))  # pairs came apart or closed
    ref = collide(m, Frames(m, pos, rot), pairs, margins, 4)
    got = narrow.shape_contacts(pairs, m.geom_type, pos, rot, m.geom_size, margins, 4, kept, hfs,
                                convex.largest(kept))
    assert np.array_equal(got[0], ref[0])
    for r, g in zip(ref[1:], got[1:]):
        assert np.abs(r - g).max() < 1e-9
