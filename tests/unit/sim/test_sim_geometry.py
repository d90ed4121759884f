"""Shapes, mass properties, mesh files, .rasset descriptors, narrowphase and broadphase."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.sim import World, simulate
from rscene_addon.sim import geometry as geo
from rscene_addon.sim.broadphase import group_mask_ok, sweep_and_prune
from rscene_addon.scene_geometry.mesh_files import read_mesh, read_rasset
from rscene_addon.sim.narrowphase import WorldPoly, polytope_polytope
from tests.scenes import ALL, ground, header, obj

CUBE_V = [(x, y, z) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
CUBE_F = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]


def _write_cube_obj(path, scale=1.0):
    with open(path, "w") as fh:
        for v in CUBE_V:
            fh.write("v %g %g %g\n" % tuple(scale * c for c in v))
        for f in CUBE_F:
            fh.write("f " + " ".join(map(str, f)) + "\n")


def test_convex_hull_contains_its_points_and_has_the_right_mass():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(500, 3))
    verts, tris = geo.convex_hull(pts)
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    assert np.all(np.einsum("ij,kj->ki", n, pts) - np.einsum("ij,ij->i", n, a) <= 1e-7)
    extreme = np.unique(np.argmax(pts @ rng.normal(size=(3, 5000)), axis=0))
    assert len(verts) == len(extreme)  # every extreme point is a hull vertex, and nothing else
    # a cube's hull: 8 vertices, 6 quad faces, unit volume, box inertia
    poly = geo.hull_polytope(np.array(CUBE_V) * np.array([1.0, 2.0, 3.0]))
    assert len(poly.vertices) == 8 and sorted(len(f) for f in poly.faces) == [4] * 6
    vol, com, inertia = geo.polytope_mass(poly)
    v_box, _, i_box = geo.box_mass([1.0, 2.0, 3.0])
    assert vol == pytest.approx(6.0) and np.allclose(com, 0) and np.allclose(inertia, i_box)


def test_primitive_mass_properties_match_formulas():
    r, h = 0.3, 1.2
    v, _, i = geo.capsule_mass(r, h)
    assert v == pytest.approx(math.pi * r * r * h + 4 / 3 * math.pi * r ** 3)
    # a capsule's inertia lies between the inscribed cylinder's and the bounding cylinder's (same density)
    _, _, i_in = geo.cylinder_mass(r, h)
    _, _, i_out = geo.cylinder_mass(r, h + 2 * r)
    assert i_in[0, 0] < i[0, 0] < i_out[0, 0]
    # a fine prism converges to the cylinder
    vol, _, ip = geo.polytope_mass(geo.prism_polytope(r, h / 2, segments=512))
    vc, _, ic = geo.cylinder_mass(r, h)
    assert vol == pytest.approx(vc, rel=1e-4) and np.allclose(ip, ic, rtol=1e-3)


def test_mesh_readers(tmp_path):
    _write_cube_obj(tmp_path / "c.obj")
    v, t = read_mesh(str(tmp_path / "c.obj"))
    assert v.shape == (8, 3) and t.shape == (12, 3)
    tris = v[t]
    # ASCII and binary STL, ASCII and binary PLY of the same triangles
    with open(tmp_path / "c.stl", "w") as fh:
        fh.write("solid c\n")
        for tri in tris:
            corners = "".join("vertex %r %r %r\n" % tuple(p.tolist()) for p in tri)
            fh.write("facet normal 0 0 0\nouter loop\n" + corners
                     + "endloop\nendfacet\n")
        fh.write("endsolid c\n")
    with open(tmp_path / "b.stl", "wb") as fh:
        fh.write(b"\0" * 80 + struct.pack("<I", len(tris)))
        for tri in tris:
            fh.write(struct.pack("<12fH", 0, 0, 0, *tri.ravel(), 0))
    with open(tmp_path / "a.ply", "w") as fh:
        fh.write(f"ply\nformat ascii 1.0\nelement vertex {len(v)}\nproperty float x\nproperty float y\n"
                 f"property float z\nelement face {len(t)}\n"
                 "property list uchar int vertex_indices\nend_header\n")
        fh.writelines("%r %r %r\n" % tuple(p.tolist()) for p in v)
        fh.writelines("3 %d %d %d\n" % tuple(f) for f in t)
    with open(tmp_path / "b.ply", "wb") as fh:
        fh.write((f"ply\nformat binary_little_endian 1.0\nelement vertex {len(v)}\nproperty float x\n"
                  f"property float y\nproperty float z\nelement face {len(t)}\n"
                  f"property list uchar int vertex_indices\nend_header\n").encode())
        fh.write(v.astype("<f4").tobytes())
        for f in t:
            fh.write(struct.pack("<B3i", 3, *f))
    for name in ("c.stl", "b.stl", "a.ply", "b.ply"):
        v2, t2 = read_mesh(str(tmp_path / name))
        assert np.allclose(np.sort(v2, axis=0), np.sort(v, axis=0)), name
        assert len(t2) == 12
        vol, _, _ = geo.mesh_mass(v2, t2)
        assert vol == pytest.approx(1.0), name


def test_mesh_rasset_missing_mesh_and_compound_bodies(tmp_path):
    _write_cube_obj(tmp_path / "cube.obj")
    (tmp_path / "rock.rasset").write_text(
        '<rasset version="1"><visual file="x.gltf"/>'
        '<collision type="box" size="1 2 0.5" position="0 0 0.25"/>'
        '<collision type="capsule" radius="0.1" height="0.8" position="0 0 1" '
        'quaternion="0.7071068 0.7071068 0 0"/>'
        '<collision type="convex_mesh" file="cube.obj" position="3 0 0.5"/></rasset>')
    shapes = read_rasset(str(tmp_path / "rock.rasset")).shapes
    assert [s.type for s in shapes] == ["box", "capsule", "convex_mesh"]
    assert shapes[0].size == (1.0, 2.0, 0.5) and shapes[1].quaternion[1] == pytest.approx(0.7071068)
    lines = header(dt=0.002) + [
        ground(),
        obj("/World/Hull", "mesh", pos=(-3, 0, 1.0), mesh="cube.obj", scale=(0.4, 0.4, 0.4)),
        obj("/World/Missing", "mesh", pos=(-5, 0, 1.0), mesh="nothere.obj", scale=(0.3, 0.2, 0.1)),
        obj("/World/Rock", "mesh", pos=(0, 0, 0), mesh="rock.rasset", mode="static"),
        obj("/World/OnBox", "sphere", pos=(0, 0.6, 1.0), radius=0.1),
        obj("/World/OnHull", "sphere", pos=(3, 0, 2.0), radius=0.1),
        "compound /World/Dumbbell 0 -3 1 1 0 0 0 1 1 1 2.0 dynamic true true",
        "compound_child /World/Dumbbell sphere -0.3 0 0 1 0 0 0 1 1 1 radius=0.1",
        "compound_child /World/Dumbbell sphere 0.3 0 0 1 0 0 0 1 1 1 radius=0.1",
        "compound_child /World/Dumbbell capsule 0 0 0 0.7071068 0 0.7071068 0 1 1 1 radius=0.03 height=0.6",
    ]
    (tmp_path / "s.rscene").write_text("\n".join(lines) + "\n")
    scene = rscene.read(str(tmp_path / "s.rscene"))
    world = World.from_scene(scene)
    assert any("nothere.obj" in w and "box" in w for w in world.model.warnings)
    i = world.body_index("/World/Dumbbell")
    assert world.model.body_mass[i] == 2.0
    inertia = world.model.body_inertia[i]
    assert inertia[1, 1] > 5 * inertia[0, 0]  # the bar lies along x
    tr = simulate(scene, 1.5, 20)
    z = dict(zip(tr.names.tolist(), tr.position[-1, :, 2]))
    assert z["/World/Hull"] == pytest.approx(0.2, abs=1e-3)  # a 0.4 m cube
    assert z["/World/Missing"] == pytest.approx(0.05, abs=1e-3)  # a box of the scale: 0.1 m high
    assert z["/World/OnBox"] == pytest.approx(0.6, abs=1e-3)  # on the descriptor's box (top at 0.5)
    assert z["/World/OnHull"] == pytest.approx(1.1, abs=1e-3)  # on its convex mesh (top at 1.0)
    assert z["/World/Dumbbell"] == pytest.approx(0.1, abs=1e-3)


def test_box_box_sat_gives_a_four_point_face_manifold():
    half = np.array([0.5, 0.5, 0.5])
    a = WorldPoly(geo.box_polytope(half), np.zeros(3), np.eye(3))
    c, s = math.cos(0.3), math.sin(0.3)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    b = WorldPoly(geo.box_polytope(half * 0.5), np.array([0.1, 0.0, 0.74]), rot)
    pts, n, seps = polytope_polytope(a, b, 0.01, 4)
    assert np.allclose(n, [0, 0, 1])
    assert len(pts) == 4 and np.allclose(seps, 0.74 - 0.25 - 0.5)
    # an edge-on-edge contact: two boxes rotated 45 degrees about different axes
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    r1 = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])  # 45 degrees about x
    r2 = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])  # 45 degrees about y
    a = WorldPoly(geo.box_polytope(half), np.zeros(3), r1)
    b = WorldPoly(geo.box_polytope(half), np.array([0, 0, 2 * math.sqrt(0.5) - 0.01]), r2)
    pts, n, seps = polytope_polytope(a, b, 0.01, 4)
    assert len(pts) == 1 and np.allclose(n, [0, 0, 1], atol=1e-6)
    assert seps[0] == pytest.approx(-0.01, abs=1e-9)


def test_sweep_and_prune_matches_brute_force():
    rng = np.random.default_rng(5)
    n = 300
    c = rng.uniform(0, 10, (n, 3))
    e = rng.uniform(0.05, 0.6, (n, 3))
    lo, hi = c - e, c + e
    pairs = sweep_and_prune(lo, hi, np.arange(n))
    brute = {(i, j) for i in range(n) for j in range(i + 1, n)
             if np.all(lo[i] <= hi[j]) and np.all(lo[j] <= hi[i])}
    assert {tuple(p) for p in pairs.tolist()} == brute


def test_group_mask_rule():
    group = np.array([1, 2, 4, 1 << 63], dtype=np.uint64)
    mask = np.array([ALL, ALL ^ 1, ALL, ALL ^ 2], dtype=np.uint64)
    a = np.array([0, 0, 1, 1, 2, 3])
    b = np.array([1, 2, 2, 3, 3, 0])
    assert group_mask_ok(group, mask, a, b).tolist() == [False, True, True, False, True, True]


def test_sweep_and_prune_strips_match_brute_force_on_grids_and_mixed_sizes():
    # boxes on an exact grid touch strip boundaries; one long box spans everything across the sweep
    rng = np.random.default_rng(11)
    g = np.stack(np.meshgrid(np.arange(12) * 0.5, np.arange(9) * 0.5, [0.0, 0.3], indexing="ij"), -1)
    c = g.reshape(-1, 3)
    e = np.full_like(c, 0.25)
    e[::7] = rng.uniform(0.01, 0.4, (len(e[::7]), 3))
    c = np.vstack((c, [[2.0, 2.0, 0.1]]))
    e = np.vstack((e, [[0.1, 3.0, 0.1]]))
    lo, hi = c - e, c + e
    n = len(c)
    idx = np.arange(n)[::-1].copy()  # any order of geom indices
    pairs = sweep_and_prune(lo, hi, idx)
    brute = {(i, j) for i in range(n) for j in range(i + 1, n)
             if np.all(lo[i] <= hi[j]) and np.all(lo[j] <= hi[i])}
    assert len(pairs) == len(brute) and {tuple(p) for p in pairs.tolist()} == brute
