"""The compiled (numba) backend against the numpy reference.

* The box-box and box-plane kernels give the numpy routines' contact sets (same pairs, same count, points,
  normals and separations to round-off) on random boxes that overlap, touch and miss.
* On rows that share no body the sequential compiled sweep is the coloured numpy sweep (one colour is one
  Jacobi update of independent rows): the same impulses and velocities to round-off.
* Whole scenes: the same scene on both backends ends within a stated bound (the two solvers visit
  coupled rows in another order, so they agree to the solver's tolerance, not to the bit).
* The backend switch: names, the environment variable, errors.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

from rscene_addon.sim import World, kernels, simulate
from rscene_addon.sim.mathutil import quat_from_axis_angle, quat_rotate
from rscene_addon.sim.narrowphase import Frames, collide
from tests.scenes import ALL, ground, header, obj, scene_from
from rscene_addon.sim.solver import Rows, jacobians, solve, warm_start

needs_numba = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


def _random_boxes(seed, n=40):
    rng = np.random.default_rng(seed)
    lines = header(dt=0.004) + [ground()]
    for i in range(n):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        # sizes 0.1..0.4 m in a 0.8 m cube just above the ground: overlaps, touches, misses and planes
        lines.append(obj(f"/World/B{i}", "box", pos=rng.uniform(-0.4, 0.4, 3) + [0, 0, 0.25], quat=q,
                         scale=tuple(rng.uniform(0.1, 0.4, 3))))
    # two aligned boxes face to face (coinciding clip candidates) and one edge on edge
    lines.append(obj("/World/F0", "box", pos=(3, 0, 1), scale=(0.3, 0.3, 0.3)))
    lines.append(obj("/World/F1", "box", pos=(3, 0, 1.299), scale=(0.3, 0.3, 0.3)))
    return scene_from(lines)


@needs_numba
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("max_points", [1, 4, 8])
def test_box_kernels_give_the_numpy_contact_sets(seed, max_points):
    world = World.from_scene(_random_boxes(seed), backend="numpy")
    m = world.model
    pos, rot = world.geom_poses()
    frames = Frames(m, pos, rot)
    G = m.num_geoms
    pairs = np.array([(i, j) for i in range(G) for j in range(i + 1, G)], dtype=np.int64)
    margins = np.full(len(pairs), 0.01)
    ref = collide(m, frames, pairs, margins, max_points)
    got = collide(m, frames, pairs, margins, max_points, kernels.load().handlers())
    assert len(ref[0]) > 50  # the scene makes many contacts (face, edge and plane ones)
    assert np.array_equal(ref[0], got[0])  # the same pairs touch, with the same number of points
    same = 0
    for p in np.unique(ref[0]):
        s = ref[0] == p
        # the same formulas in another summation order: differences of a few ulp of ~1 m values
        if all(np.abs(a[s] - b[s]).max() < 1e-12 for a, b in zip(ref[1:], got[1:])):
            same += 1
            continue
        # else a tie in the reduction (a box's corners equally far apart), broken by round-off: the
        # deepest point is the same and the kept sets are equally spread
        assert max_points < 8
        assert ref[3][s].min() == pytest.approx(got[3][s].min(), abs=1e-12)
        assert _spread(ref[1][s]) == pytest.approx(_spread(got[1][s]), abs=1e-9)
    assert same >= 0.9 * len(np.unique(ref[0]))



@needs_numba
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("max_points", [1, 4])
def test_fused_box_contacts_are_the_numpy_contacts(seed, max_points):
    """kernels.contacts.box_contacts (one call for a boxes-and-planes world) against the numpy
    narrowphase, with pairs in both orders (plane first and plane second: normals from pairs[:, 0])."""
    world = World.from_scene(_random_boxes(seed), backend="numpy")
    m = world.model
    pos, rot = world.geom_poses()
    G = m.num_geoms
    pairs = np.array([(i, j) if (i + j) % 2 else (j, i) for i in range(G) for j in range(i + 1, G)], np.int64)
    margins = np.full(len(pairs), 0.01)
    ref = collide(m, Frames(m, pos, rot), pairs, margins, max_points)
    got = kernels.load().box_contacts(pairs, m.geom_type, np.ascontiguousarray(pos), np.ascontiguousarray(rot),
                                      m.geom_size, margins, max_points)
    plane_first = np.isin(ref[0], np.flatnonzero(pairs[:, 0] == 0))
    assert plane_first.sum() > 5 and (~plane_first & np.isin(ref[0], np.flatnonzero(pairs[:, 1] == 0))).sum() > 5
    assert np.array_equal(ref[0], got[0])
    same = [np.abs(ref[i] - got[i]).max(axis=-1) < 1e-12 if ref[i].ndim > 1 else np.abs(ref[i] - got[i]) < 1e-12
            for i in (1, 2, 3)]
    ok = same[0] & same[1] & same[2]
    # reduction ties broken by round-off (see the test above) move a few points; normals never differ
    assert same[1].all() and ok.mean() > 0.9


def _spread(points):
    """The smallest distance between two of the points (what farthest-point sampling maximises)."""
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    return (d + np.eye(len(points)) * 1e9).min() if len(points) > 1 else 0.0


@needs_numba
@pytest.mark.parametrize("forward", [True, False])
def test_compiled_sweep_equals_the_numpy_sweep_on_independent_rows(forward):
    """Rows that share no movable body are one colour: numpy updates them at once, the kernel one by
    one; both are the exact same arithmetic on independent rows."""
    rng = np.random.default_rng(5)
    M = 30
    N = 2 * M
    a, b = np.arange(0, N, 2), np.arange(1, N, 2)
    b[::3] = N  # every third row against a static body (index N, infinite mass)
    inv_m = np.r_[rng.uniform(0.5, 2.0, N), 0.0]
    inv_I = np.zeros((N + 1, 3, 3))
    inv_I[:N] = np.eye(3) * rng.uniform(1.0, 5.0, (N, 1, 1))
    n = rng.normal(size=(M, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    ra, rb = rng.normal(scale=0.2, size=(M, 3)), rng.normal(scale=0.2, size=(M, 3))
    J, MJ, k = jacobians(ra, rb, n, inv_m[a], inv_m[b], inv_I[a], inv_I[b])
    kinv = 1.0 / k
    V0 = rng.normal(size=(N + 1, 6))
    V0[N] = 0.0
    target = rng.uniform(-0.1, 0.3, M)
    mu = rng.uniform(0.1, 1.0, M)
    lam0 = np.abs(rng.normal(scale=0.1, size=(M, 3)))
    lever = np.full(N + 1, 0.2)
    V1, lam1 = V0.copy(), lam0.copy()
    rows = Rows(a, b, J, MJ, kinv, k, target, np.zeros(M), mu, lam1, [(0, M)])
    warm_start(V1, rows)
    it1 = solve(V1, rows, 7, 1e-12, forward, lever=lever)
    kern = kernels.load()
    V2, lam2 = V0.copy(), lam0.copy()
    kern.warm_start(V2, a, b, MJ, lam2)
    it2 = kern.solve(V2, a, b, J, MJ, kinv, k, target, np.zeros(M), mu, lam2, 7, 1e-12, forward, True, lever)
    assert it1 == it2
    assert np.abs(lam1 - lam2).max() < 1e-12
    assert np.abs(V1 - V2).max() < 1e-12
    assert (lam2[:, 0] >= 0).all() and (np.hypot(lam2[:, 1], lam2[:, 2]) <= mu * lam2[:, 0] + 1e-15).all()


def _stack(n=5):
    lines = header(dt=1 / 240, sleeping=False) + [ground()]
    lines += [obj(f"/World/S{i}", "box", pos=(0, 0, 0.1 + 0.2 * i), scale=(0.2, 0.2, 0.2)) for i in range(n)]
    return scene_from(lines)


def _incline(mu):
    q = quat_from_axis_angle([0.0, 1.0, 0.0], math.radians(20.0))
    return scene_from(header(dt=0.002, friction=mu, sleeping=False) + [
        obj("/World/Slope", "box", pos=-quat_rotate(q, np.array([0.0, 0.0, 0.5])), quat=q, scale=(20, 4, 1),
            mode="static"),
        obj("/World/Box", "box", pos=quat_rotate(q, np.array([0.0, 0.0, 0.1])), quat=q, scale=(0.2, 0.2, 0.2))])


def _row_of_boxes():
    """Three boxes dropped side by side, turned, onto the ground: box-plane and box-box contacts."""
    lines = header(dt=1 / 240, sleeping=False) + [ground()]
    for i in range(3):
        q = quat_from_axis_angle([1.0, 0.3, 0.0], 0.4 * i)
        lines.append(obj(f"/World/R{i}", "box", pos=(0.35 * i, 0, 0.3 + 0.1 * i), quat=q, scale=(0.3, 0.3, 0.3)))
    return scene_from(lines)


@needs_numba
@pytest.mark.parametrize("scene,seconds", [(_stack, 2.0), (lambda: _incline(0.8), 1.0),
                                           (lambda: _incline(0.1), 1.0), (_row_of_boxes, 1.5)])
def test_both_backends_end_in_the_same_place(scene, seconds):
    ref = simulate(scene(), seconds, 60, backend="numpy")
    got = simulate(scene(), seconds, 60, backend="numba")
    assert np.isfinite(got.position).all()
    # Bound: 1 mm and 1 mrad (quaternion components) at the end. Both backends run the same contacts,
    # rows and stopping rule; only the order in which coupled rows are visited within a sweep differs
    # (colours vs rows), so each step's velocities agree to the solver's stopping tolerance (1e-5 m/s
    # per sweep) rather than to the bit. Over these non-chaotic scenes (a stack, a block that sticks,
    # one that slides, boxes that tumble once and settle) that is micrometres of drift; 1 mm would be a
    # different outcome (a box that slid or toppled on one backend only).
    assert np.abs(ref.position - got.position).max() < 1e-3
    assert np.abs(np.abs(ref.quaternion) - np.abs(got.quaternion)).max() < 1e-3


def test_backend_names_and_the_environment_variable(monkeypatch):
    monkeypatch.setenv(kernels.ENV_BACKEND, "numpy")
    assert kernels.resolve() == "numpy"
    assert kernels.resolve("auto") == ("numba" if kernels.numba_available() else "numpy")
    assert World.from_scene(_stack(1)).backend == "numpy"
    monkeypatch.delenv(kernels.ENV_BACKEND)
    assert kernels.resolve() == ("numba" if kernels.numba_available() else "numpy")
    with pytest.raises(ValueError, match="unknown simulation backend 'cuda'"):
        kernels.resolve("cuda")


def test_numba_requested_where_it_does_not_import_says_so(monkeypatch):
    monkeypatch.setattr(kernels, "_numba_error", "ImportError: No module named 'numba'")
    with pytest.raises(ValueError, match="numba backend is not available"):
        kernels.resolve("numba")
    assert kernels.resolve("auto") == "numpy"


def test_cache_folder_follows_numba_cache_dir_then_the_given_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "env"))
    monkeypatch.setattr(kernels, "_cache_dir", str(tmp_path / "blender"))
    assert kernels.cache_dir() == str(tmp_path / "env")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert kernels.cache_dir() == str(tmp_path / "blender")
    monkeypatch.setattr(kernels, "_cache_dir", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if kernels.sys.platform.startswith("linux"):
        assert kernels.cache_dir() == str(tmp_path / "xdg" / "rscene_addon" / "numba")


@needs_numba
def test_a_change_to_any_kernel_file_compiles_into_a_fresh_folder(monkeypatch, tmp_path):
    """numba checks a cached function against its own source file only: box_world.step, cached, would keep
    the old candidate_pairs after pairs.py changed. Every kernel file is part of the folder's name."""
    import os
    import shutil
    here = os.path.dirname(kernels.__file__)
    copy = tmp_path / "kernels"
    shutil.copytree(here, copy, ignore=shutil.ignore_patterns("__pycache__"))
    token = kernels.source_token()
    assert kernels.source_token(str(copy)) == token
    with open(copy / "pairs.py", "a") as fh:
        fh.write("# changed\n")
    assert kernels.source_token(str(copy)) != token
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "root"))
    assert kernels.kernel_dir() == str(tmp_path / "root" / f"kernels-{token}")


def test_pruning_keeps_the_current_kernels_and_foreign_files(tmp_path):
    old, new = "kernels-" + "a" * 16, "kernels-" + "0123456789abcdef"

    def fill(root):
        for name in (old, new, "kernels_0123abcd", "kernels-notahash", "other"):
            (root / name).mkdir(parents=True)
        (root / "rscene-kernels-0011.ready").write_text("")
        (root / "notes.txt").write_text("")
        for path in root.iterdir():  # untouched for two hours
            os.utime(path, (time.time() - 7200, time.time() - 7200))
        return root
    root = fill(tmp_path / "own")
    kernels._prune(str(root), str(root / new))
    assert sorted(p.name for p in root.iterdir()) == sorted(["kernels-notahash", new, "notes.txt", "other"])
    # another version compiling right now (a second install or checkout) keeps its folder
    root = fill(tmp_path / "busy")
    os.utime(root / old)
    kernels._prune(str(root), str(root / new))
    assert sorted(p.name for p in root.iterdir()) == sorted(["kernels-notahash", new, old, "notes.txt", "other"])
    # a NUMBA_CACHE_DIR other projects may share: only our own versioned folders go
    root = fill(tmp_path / "shared")
    kernels._prune(str(root), str(root / new), legacy=False)
    assert sorted(p.name for p in root.iterdir()) == sorted(["kernels-notahash", new, "kernels_0123abcd", "notes.txt",
                                                             "other", "rscene-kernels-0011.ready"])


@needs_numba
def test_cli_compiles_once_into_numba_cache_dir_then_loads(tmp_path):
    """``simulate --backend numba`` with an empty NUMBA_CACHE_DIR compiles (and says so) into that folder;
    the next process loads from it and says nothing; ``--backend numpy`` never compiles."""
    import os
    import subprocess
    import sys
    scene = tmp_path / "drop.rscene"
    scene.write_text("\n".join(header(dt=1 / 240) + [ground(), obj("/World/B", "box", pos=(0, 0, 0.5),
                                                                    scale=(0.3, 0.3, 0.3))]) + "\n")
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop(kernels.ENV_BACKEND, None)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

    def run(backend):
        res = subprocess.run([sys.executable, "-m", "rscene_addon", "simulate", str(scene), "--duration", "0.5",
                              "--out", str(tmp_path / f"{backend}.npz"), "--backend", backend],
                             env=env, cwd=root, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        return res.stdout
    assert "compiling physics kernels, once" in run("numba")
    assert any(name.endswith(".nbi") for _, _, files in os.walk(cache) for name in files)
    assert "compiling physics kernels" not in run("numba")
    assert "compiling physics kernels" not in run("numpy")
    a, b = np.load(tmp_path / "numba.npz"), np.load(tmp_path / "numpy.npz")
    assert np.abs(a["position"] - b["position"]).max() < 1e-3  # the bound of the scene test above


@needs_numba
@pytest.mark.parametrize("seed", [4, 5])
def test_compiled_candidate_pairs_are_the_numpy_pairs(seed):
    """Boxes, spheres and capsules (some static, some with group/mask) over the ground: the same sorted
    pair list for several moving subsets."""
    from rscene_addon.sim.broadphase import candidate_pairs, compute_aabbs
    from rscene_addon.sim.geometry import PLANE
    rng = np.random.default_rng(seed)
    lines = header(dt=0.004) + [ground()]
    for i in range(80):
        kind = ("box", "sphere", "capsule")[i % 3]
        mode = "static" if i % 11 == 0 else "dynamic"
        group, mask = (2, 2) if i % 7 == 0 else (1, ALL)
        lines.append(obj(f"/World/G{i}", kind, pos=rng.uniform(-0.6, 0.6, 3) + [0, 0, 0.5], scale=(0.3, 0.2, 0.25),
                         radius=0.15, height=0.3, mode=mode, group=group, mask=mask))
    world = World.from_scene(scene_from(lines), backend="numpy")
    m = world.model
    pos, rot = world.geom_poses()
    lo, hi = compute_aabbs(m, pos, rot, np.full(m.num_geoms, 0.01))
    gb = m.geom_body
    dynamic = (m.body_mode == 2)[gb]
    kern = kernels.load()
    for moving in (dynamic, dynamic & (rng.random(m.num_geoms) < 0.5)):
        ref = candidate_pairs(m, lo, hi, moving, np.ones(m.num_geoms, bool), dynamic)
        got = kern.candidate_pairs(lo, hi, m.geom_type == PLANE, np.ascontiguousarray(m.geom_pos[:, 2]), gb,
                                   moving, dynamic, m.geom_group, m.geom_mask)
        assert len(ref) > 20
        assert np.array_equal(ref, got)


@needs_numba
def test_compiled_aabbs_are_the_numpy_aabbs():
    from rscene_addon.sim.broadphase import compute_aabbs
    rng = np.random.default_rng(11)
    lines = header(dt=0.004) + [ground()]
    for i in range(40):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        lines.append(obj(f"/World/G{i}", ("box", "sphere", "capsule", "cylinder")[i % 4], pos=rng.uniform(-1, 1, 3),
                         quat=q, scale=tuple(rng.uniform(0.1, 0.5, 3)), radius=0.2, height=0.5))
    world = World.from_scene(scene_from(lines), backend="numpy")
    m = world.model
    pos, rot = world.geom_poses()
    pad = rng.uniform(0.0, 0.02, m.num_geoms)
    ref = compute_aabbs(m, pos, rot, pad)
    got = kernels.load().compute_aabbs(m, pos, rot, pad)
    for a, b in zip(ref, got):
        assert np.abs(a - b).max() < 1e-12  # the same sums (another order at most: an ulp)


@needs_numba
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compiled_touch_events_are_the_numpy_events(seed):
    """kernels.events.touch_events against World._events' numpy path on random contacts: repeated pairs
    in both orders, equal approach speeds (ties), non-pushing contacts, old pairs awake and asleep."""
    rng = np.random.default_rng(seed)
    world = World.from_scene(_random_boxes(seed, n=12), backend="numpy")
    N = world.model.num_bodies
    C = 60
    A = rng.integers(0, N, C)
    B = (A + rng.integers(1, N, C)) % N
    info = dict(count=C, A=A, B=B, vn0=rng.choice([-1.0, -0.5, 0.0, 0.3], C), point=rng.normal(size=(C, 3)),
                normal=rng.normal(size=(C, 3)))
    lam = np.where(rng.random((C, 3)) < 0.7, rng.random((C, 3)), 0.0)
    old = np.unique(rng.integers(0, N * N, 25))
    world.state.sleeping[:] = rng.random(N) < 0.3
    world._touching = old.copy()
    world._events(info, lam)
    touching, firsts = kernels.load().touch_events(old, world.state.sleeping, A, B, np.ascontiguousarray(lam[:, 0]),
                                                  info["vn0"], N)
    assert len(world.events) > 3
    assert np.array_equal(touching, world._touching)
    got = [(int(A[j]), int(B[j]), float(lam[j, 0]), float(max(0.0, -info["vn0"][j]))) for j in firsts]
    names = world.model.body_name
    ref = [(names.index(e["body_a"]), names.index(e["body_b"]), e["impulse"], e["speed"]) for e in world.events]
    assert got == ref


@needs_numba
def test_compiled_body_frames_are_the_numpy_frames_and_forces():
    """kernels.body.body_frames against quat_to_matrix, R I^-1 R^T by einsum (a full, non-diagonal
    inverse inertia) and the numpy force update; sleeping bodies take no force."""
    from rscene_addon.sim.mathutil import quat_to_matrix
    rng = np.random.default_rng(5)
    N = 30
    q = rng.normal(size=(N, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    L = rng.normal(size=(N, 3, 3))
    inv_I = L @ L.transpose(0, 2, 1) + np.eye(3)  # symmetric positive definite, off-diagonal terms
    awake = rng.random(N) < 0.6
    g, inv_m = np.array([0.0, 0.5, -9.81]), rng.uniform(0.1, 2.0, N)
    f, t = rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    lin, ang = rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    dt = 0.004
    R, Iw = kernels.load().body_frames(q, inv_I, awake, g, inv_m, f, t, lin2 := lin.copy(), ang2 := ang.copy(), dt)
    R_ref = quat_to_matrix(q)
    Iw_ref = np.einsum("nij,njk,nlk->nil", R_ref, inv_I, R_ref)
    assert np.abs(R - R_ref).max() < 1e-15
    assert np.abs(Iw - Iw_ref).max() < 1e-12
    lin[awake] += (g + f[awake] * inv_m[awake, None]) * dt
    ang[awake] += np.einsum("nij,nj->ni", Iw_ref[awake], t[awake]) * dt
    assert np.abs(lin2 - lin).max() < 1e-14 and np.abs(ang2 - ang).max() < 1e-14


@needs_numba
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_compiled_sleep_is_the_numpy_sleep(seed):
    """kernels.body.sleep against World._sleep's numpy path: random speeds around the limits, quiet counts
    around the threshold, a moving kinematic body touching some, islands partly ready."""
    rng = np.random.default_rng(seed)
    worlds = [World.from_scene(_random_boxes(seed, n=20), backend=b) for b in ("numpy", "numba")]
    N = worlds[0].model.num_bodies
    sv = worlds[0].model.solver
    kin = rng.random(N) < 0.1
    lin = rng.normal(size=(N, 3)) * sv.sleep_linear * rng.choice([0.1, 0.5, 0.5, 3.0], (N, 1))
    ang = rng.normal(size=(N, 3)) * sv.sleep_angular * rng.choice([0.1, 0.5, 0.5, 3.0], (N, 1))
    quiet = rng.integers(sv.sleep_quiet_steps - 2, sv.sleep_quiet_steps + 2, N)
    sleeping = rng.random(N) < 0.2
    awake = ~sleeping & ~kin & worlds[0].dynamic
    C = 10
    A = rng.integers(0, N, C)
    B = (A + rng.integers(1, N, C)) % N
    info = dict(count=C, A=A, B=B)
    for w in worlds:
        s = w.state
        w.kinematic = kin.copy()
        s.linear_velocity[:], s.angular_velocity[:] = lin, ang
        s.quiet_steps[:], s.sleeping[:] = quiet, sleeping
        w._sleep(awake, info)
    ref, got = worlds[0], worlds[1]
    assert ref.state.sleeping.sum() > sleeping.sum()  # some islands fell asleep
    for name in ("sleeping", "quiet_steps", "linear_velocity", "angular_velocity"):
        assert np.array_equal(getattr(got.state, name), getattr(ref.state, name)), name
    assert np.array_equal(got._island, ref._island)


def _box_world_scenes():
    """Boxes on a plane that exercise every part of the one-call step: a pile that falls asleep, a box
    dropped later onto the sleeping pile (waking its island), a kinematic pusher, two materials, external
    forces and an impulse cache that carries over."""
    lines = header(dt=1 / 240, sleeping=True) + [ground()]
    for i in range(12):
        q = quat_from_axis_angle([0.3, 1.0, 0.2], 0.37 * i)
        lines.append(obj(f"/World/P{i}", "box", pos=(0.32 * (i % 4), 0.3 * (i // 4), 0.2 + 0.05 * i), quat=q,
                         scale=(0.25, 0.25, 0.25), cmat="default" if i % 3 else "rubber"))
    lines.append(obj("/World/Late", "box", pos=(0.3, 0.3, 3.0), scale=(0.2, 0.2, 0.2)))
    lines.append(obj("/World/Pusher", "box", pos=(-1.5, 0.3, 0.15), scale=(0.3, 0.3, 0.3), mode="kinematic"))
    return scene_from(lines)


@needs_numba
def test_one_call_box_step_is_the_kernel_by_kernel_step():
    """kernels.box_world.step (one compiled call per step for boxes on planes) against the same World
    stepping kernel by kernel: the same kernels in the same order, so the states agree to the bit, with
    the same contacts, sweeps, events, sleeping and impulse cache at every step."""
    one, sep = (World.from_scene(_box_world_scenes(), backend="numba") for _ in range(2))
    assert one._one_call
    sep._one_call = False
    asleep, woke = [], 0
    for step in range(900):
        for w in (one, sep):
            if step < 400:  # the pusher slides in, then stops
                w.set_kinematic_pose("/World/Pusher", (-1.5 + 0.004 * step, 0.3, 0.15))
            if step == 300:
                w.external_force[w.body_index("/World/P5")] = (30.0, 0.0, 0.0)
                w.external_torque[w.body_index("/World/P6")] = (0.0, 0.0, 2.0)
            w.step()
        a, b = one.state, sep.state
        for name in ("position", "quaternion", "linear_velocity", "angular_velocity", "sleeping", "quiet_steps"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (step, name)
        assert one.last_iterations == sep.last_iterations
        assert (one.contacts is None) == (sep.contacts is None)
        if one.contacts is not None:
            for key in one.contacts:
                assert np.array_equal(one.contacts[key], sep.contacts[key]), (step, key)
        assert np.array_equal(one._island, sep._island) and np.array_equal(one._touching, sep._touching)
        assert np.array_equal(one._cache_key, sep._cache_key)
        assert np.array_equal(one._cache_impulse, sep._cache_impulse)
        asleep.append(int(a.sleeping.sum()))
        woke += len(asleep) > 1 and asleep[-1] < asleep[-2]
    assert max(asleep) >= 10 and woke >= 3  # most of the pile slept, and bodies woke (the late box, the pusher)
    assert len(one.events) == len(sep.events) > 12
    for ea, eb in zip(one.events, sep.events):
        assert ea.keys() == eb.keys() and all(np.array_equal(ea[k], eb[k]) for k in ea)
