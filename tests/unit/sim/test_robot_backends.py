"""The compiled articulated step (numba) against the numpy reference, and which link pairs may touch.

Truths: the numpy route (a separate implementation of the same model, checked against closed forms and
MuJoCo elsewhere) for the corpus Laikago falling onto a world's plane with self-collision, and RaiSim's
pair rules (a link never touches its parent unless doNotCollideWithParent is false; links welded by a fixed
joint never touch).
"""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import urdf
from rscene_addon.sim import World, kernels
from rscene_addon.sim.articulated import ArticulatedSystem
from rscene_addon.sim.link_contacts import WorldContacts, world_erp
from rscene_addon.sim.link_pairs import self_collision_pairs
from rscene_addon.sim.multibody_solver import step_systems
from tests.corpus import require_corpus
from tests.scenes import ground, header, scene_from
from tests.unit.sim.link_robots import read_robot

LAIKAGO = "/work/shared/corpus/robots/raisimTech-raisim2Lib/rsc/laikago/laikago.urdf"
DT = 1.0 / 480.0

needs_numba = pytest.mark.skipif(not kernels.numba_available(), reason="numba does not import here")


def _laikagos(backend, count=1, spacing=1.5, self_collision=True):
    """``count`` corpus Laikagos (passive joints, legs bent) 2 cm above a world's plane, in a row."""
    world = World.from_scene(scene_from(header(dt=DT, sleeping=False) + [ground()]), backend=backend)
    robot = urdf.read_robot(LAIKAGO)
    systems = []
    for k in range(count):
        s = ArticulatedSystem(robot, dt=DT, name=f"laikago{k}", environment=WorldContacts(world),
                              erp=world_erp(world), backend=backend, self_collision=self_collision)
        q = robot.zero_configuration()
        gcs = robot.gc_slices()
        for j in robot.movable_joints():
            q[gcs[j]] = 0.6 if "thigh" in j else (-1.2 if "calf" in j else 0.0)
        s.set_generalized_coordinate(q)
        low = min(float((p[:, :3] @ f[:3, :3].T + f[:3, 3])[:, 2].min() - p[:, 3].max())
                  for p, f in zip(s._contact_local, s.frames) if len(p))
        q[0], q[2] = k * spacing, 0.02 - low
        s.set_generalized_coordinate(q)
        systems.append(s)
    return world, systems


def _run(world, systems, steps):
    for _ in range(steps):
        step_systems(systems, DT)
        world.step()


@needs_numba
@pytest.mark.parametrize("count, spacing", [(1, 1.5), (2, 0.3), (3, 1.5)])
def test_laikago_falls_the_same_on_both_backends(count, spacing):
    """One robot alone (the one-call kernel), two robots whose legs interlock (the per-part kernels with
    robot-robot rows) and three apart (all alone: one call for the three): positions, velocities, contacts
    and events of the two backends within solver tolerance."""
    require_corpus(LAIKAGO)
    steps = 60  # 0.125 s: the feet land, the legs fold, links of the robots touch each other
    out = {}
    for backend in ("numpy", "numba"):
        world, systems = _laikagos(backend, count, spacing)
        _run(world, systems, steps)
        out[backend] = (np.concatenate([s.q for s in systems]), np.concatenate([s.u for s in systems]),
                        [sorted((c["link"], c["body"]) for c in s.last_contacts) for s in systems],
                        [[(e["body_a"], e["body_b"]) for e in s.events] for s in systems])
    (q0, u0, c0, e0), (q1, u1, c1, e1) = out["numpy"], out["numba"]
    assert np.all(np.isfinite(q1))
    assert np.abs(q1 - q0).max() < 1e-4  # (the rising ground alone moves the joints by ~0.04 rad)
    assert np.abs(u1 - u0).max() < 1e-2
    assert c1 == c0 and any(len(c) for c in c0)
    assert e1 == e0 and any(len(e) for e in e0)
    if count == 2:  # the robots did touch each other
        assert any("laikago1/" in b for c in c0 for _, b in c)



@needs_numba
def test_laikago_on_three_planes_falls_the_same_on_both_backends():
    """A robot alone on three planes at once (its own flat ground, then two world planes, all at z = 0):
    the packed step reads every plane's normal, offset, velocity and material from its table (laid column
    by column), so its contacts with each plane are the numpy route's, and so are positions and velocities."""
    require_corpus(LAIKAGO)
    out = {}
    for backend in ("numpy", "numba"):
        world = World.from_scene(scene_from(header(dt=DT, sleeping=False)
                                            + [ground(), ground(path="/World/Floor")]), backend=backend)
        robot = urdf.read_robot(LAIKAGO)
        s = ArticulatedSystem(robot, dt=DT, name="laikago0", environment=WorldContacts(world),
                              erp=world_erp(world), backend=backend, ground_height=0.0)
        _, [ref] = _laikagos(backend)
        s.set_generalized_coordinate(ref.q)
        _run(world, [s], 60)
        out[backend] = (s.q.copy(), s.u.copy(), sorted((c["link"], c["body"]) for c in s.last_contacts))
    (q0, u0, c0), (q1, u1, c1) = out["numpy"], out["numba"]
    assert np.abs(q1 - q0).max() < 1e-4 and np.abs(u1 - u0).max() < 1e-2
    assert c1 == c0 and len({body for _, body in c0}) == 3  # touching every plane

def _drive(world, s):
    """A robot driven between steps through every way the API changes it: setters (new arrays), writes into
    the arrays it holds, a new configuration; returns the q after each phase and a q kept from step 10."""
    _run(world, [s], 10)
    kept, kept_value = s.q, s.q.copy()
    _run(world, [s], 10)
    held = [np.array_equal(kept, kept_value)]
    out = [s.q.copy()]
    s.set_pd_gains(30.0, 1.0)  # new arrays
    s.set_pd_targets(s.q.copy())
    s.set_joint_damping(0.5)
    _run(world, [s], 15)
    out.append(s.q.copy())
    s.kp[6:] = 60.0  # writes into the arrays the system holds
    s.tau_ext[7] = 2.0
    s.u[8] += 0.5
    s.set_joint_limits(s.robot.movable_joints()[0], -0.1, 0.1)
    s.lock_joint(s.robot.movable_joints()[3])
    s.set_effort_limits(20.0)
    s.erp = 0.5
    _run(world, [s], 15)
    out.append(s.q.copy())
    q = s.q.copy()
    q[2] += 0.05
    kept = [(x, np.array(x, dtype=float)) for x in (s.q, s.u, s.frames, s.vel)]
    s.set_generalized_coordinate(q)  # a new configuration (and kinematics) between steps
    _run(world, [s], 15)
    held += [np.array_equal(np.array(x, dtype=float), value) for x, value in kept]
    out.append(s.q.copy())
    return held, out


@needs_numba
def test_compiled_step_follows_every_change_between_steps():
    """The one-call step keeps the systems' arrays in its own buffers: what the API changes between steps
    (setters, writes into the arrays handed out, a new configuration, scalars) must reach the next step as
    on the numpy reference, and arrays handed out earlier must keep their values."""
    require_corpus(LAIKAGO)
    res = {}
    for backend in ("numpy", "numba"):
        world, (s,) = _laikagos(backend)
        res[backend] = _drive(world, s)
    for backend, (held, _) in res.items():
        assert all(held), (backend, held)
    for phase, (a, b) in enumerate(zip(res["numpy"][1], res["numba"][1])):
        assert np.abs(a - b).max() < 1e-4, phase
    moved = [np.abs(x - y).max() for x, y in zip(res["numba"][1], res["numba"][1][1:])]
    assert min(moved) > 1e-4  # every phase changed the robot


@needs_numba
def test_packed_state_is_read_from_the_step_that_made_it():
    """A packed step hands its state out as views of its buffer cut when first read (``PackedState``): the
    same array on every read within a step, consistent with the numpy reference's forward kinematics of its
    q and u, and an array read before a step keeps its values after it. A control assigned and then written
    into before the step is what the step uses, as on the numpy reference."""
    require_corpus(LAIKAGO)
    world, (s,) = _laikagos("numba")
    _run(world, [s], 30)  # the feet are down: contacts and a moving state
    assert s.q is s.q and s.frames is s.frames and s.kp is s.kp
    ref = ArticulatedSystem(s.robot, dt=DT, backend="numpy")
    ref.set_state(s.q, s.u)
    assert np.abs(np.asarray(ref.frames) - s.frames).max() < 1e-12
    assert np.abs(np.asarray(ref.vel) - s.vel).max() < 1e-9
    assert np.abs(np.asarray(ref.com) - s.com).max() < 1e-12
    before = [(x, x.copy()) for x in (s.q, s.u, s.frames, s.inertia)]
    _run(world, [s], 1)
    assert all(np.array_equal(x, v) for x, v in before) and not np.array_equal(s.q, before[0][1])
    out = []
    for backend in ("numpy", "numba"):
        world, (t,) = _laikagos(backend)
        _run(world, [t], 5)
        tau = np.zeros(t.nv)
        t.tau_ext = tau
        tau[8] = 3.0  # written after the assignment: the step must see it
        _run(world, [t], 10)
        out.append(t.q.copy())
    assert np.abs(out[0] - out[1]).max() < 1e-4


@needs_numba
def test_compiled_step_keeps_last_contacts_shape():
    require_corpus(LAIKAGO)
    world, (s,) = _laikagos("numba")
    _run(world, [s], 40)
    contacts = s.last_contacts
    assert contacts and all(c["system"] is s for c in contacts)
    for c in contacts:
        assert c["body"] in ("/World/Ground", ) or c["body"].startswith("laikago0/")
        assert c["impulse"].shape == (3,) and c["impulse"][0] >= 0
        assert len(c["jacobian"]) == 3 and c["jacobian"][0].shape == (s.nv,)


ARM = """<robot name="arm">
  <link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/></joint>
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="upper"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.05 0.05"/></geometry></collision></link>
  <link name="lower"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.05 0.05"/></geometry></collision></link>
  <link name="tool"><collision><origin xyz="0.05 0 0"/><geometry><box size="0.1 0.04 0.04"/></geometry>
    </collision></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="weld" type="fixed"><parent link="lower"/><child link="tool"/><origin xyz="0.3 0 0"/></joint>
</robot>"""


def test_parent_child_pairs_skipped_unless_collide_with_parent(tmp_path):
    """RaiSim's doNotCollideWithParent (default true): parent-child pairs never tested; with it false they
    are; welded links (tool on lower, base on world) never, and links two joints apart always."""
    robot = read_robot(tmp_path, ARM)
    names = None
    # rigid bodies: {world, base} (welded), {upper}, {lower, tool} (welded); upper is the parent of lower
    apart = {("world", "lower"), ("world", "tool"), ("base", "lower"), ("base", "tool")}
    across = {("world", "upper"), ("base", "upper"), ("upper", "lower"), ("upper", "tool")}
    for flag, expect in ((False, apart), (True, apart | across)):
        system = ArticulatedSystem(robot, collide_with_parent=flag, backend="numpy")
        names = system.link_names
        ok = self_collision_pairs(system)
        got = {tuple(sorted((names[i], names[j]), key=names.index)) for i, j in zip(*np.nonzero(np.triu(ok)))}
        assert got == expect
        assert not ok[names.index("lower"), names.index("tool")]
    assert names is not None


# the arm without its tool: the folding lower link meets nothing but its parent
ELBOW = ARM.replace(ARM[ARM.index('  <link name="tool">'):ARM.index('  <joint name="shoulder"')], "").replace(
    ARM[ARM.index('  <joint name="weld"'):ARM.index("</robot>")], "").replace(
    '<child link="upper"/><origin xyz="0 0 0.1"/>', '<child link="upper"/><origin xyz="0 0 0.4"/>')  # clear of base


def test_do_not_collide_with_parent_record_flag(tmp_path):
    from rscene_addon.sim.robot_scene import _record_flag
    assert _record_flag({"doNotCollideWithParent": "false"}, "doNotCollideWithParent", True) is False
    assert _record_flag({"doNotCollideWithParent": "true"}, "doNotCollideWithParent", True) is True
    assert _record_flag({}, "doNotCollideWithParent", True) is True


@pytest.mark.parametrize("flag", [False, True])
def test_folding_elbow_touches_its_parent_only_when_allowed(tmp_path, sim_backend, flag):
    """The elbow folds (no limits, no gravity): its lower link swings into the upper one, its parent. By
    default it passes through; with collide_with_parent the two touch and the fold stops short."""
    robot = read_robot(tmp_path, ELBOW)
    system = ArticulatedSystem(robot, dt=0.002, gravity=(0.0, 0.0, 0.0), collide_with_parent=flag)
    system.lock_joint("shoulder")  # the upper link holds still
    system.set_state([0.0, 0.0], [0.0, -12.0])  # the lower link swings up and back over the upper one
    seen = set()
    folded = 0.0
    for _ in range(200):
        system.step()
        folded = min(folded, float(system.q[1]))
        seen |= {(c["link"], c["body"]) for c in system.last_contacts}
    touched = any({a, b.split("/")[-1]} == {"upper", "lower"} for a, b in seen)
    assert touched == flag
    if flag:
        assert folded > -np.pi + 0.05  # stopped before lying flat on the upper link
    else:
        assert folded < -np.pi + 0.05


@needs_numba
def test_near_systems_by_bounding_spheres():
    """``near_systems`` (which systems step alone): two systems' spheres (mean of their link spheres, radius
    reaching each) are near when their gap is under the margin plus the horizon times both link speeds."""
    near_systems = kernels.load_robots().near_systems

    def frames_at(xs):
        f = np.eye(4)[None].repeat(len(xs), 0)
        f[:, 0, 3] = xs
        return f

    # system 0: links at x = -0.5 and 0.5, spheres 0.25 -> centre 0, radius 0.75; system 1: one link at x = d,
    # sphere 0.25 (its local centre 0.1 along x: at d + 0.1)
    bc = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.1, 0.0, 0.0]])
    br = np.array([0.25, 0.25, 0.25])
    starts = np.array([0, 2, 3], np.int64)
    still = np.zeros((3, 6))
    # at rest: near while d + 0.1 < 0.75 + 0.25 + margin 0.02
    for d, want in ((0.91, True), (0.93, False)):
        assert list(near_systems(frames_at([-0.5, 0.5, d]), still, bc, br, starts, 0.02, 0.1)) == [want, want]
    # link 2 moving at 1 m/s along x (velocities spatial: angular, then linear at the world origin): reach
    # grows by horizon 0.1 * 1 m/s
    moving = still.copy()
    moving[2, 3] = 1.0
    assert near_systems(frames_at([-0.5, 0.5, 1.01]), moving, bc, br, starts, 0.02, 0.1).all()
    assert not near_systems(frames_at([-0.5, 0.5, 1.03]), moving, bc, br, starts, 0.02, 0.1).any()
    # link 2 spinning at 2 rad/s about z through its origin: its sphere's centre (0.1 off the axis) moves at
    # 0.2 m/s, its rim at 0.2 + 2 * 0.25 = 0.7 m/s: reach grows by 0.07
    for d, want in ((0.98, True), (1.0, False)):
        spinning = still.copy()
        spinning[2, 2], spinning[2, 4] = 2.0, -2.0 * d  # linear part: the axis through (d, 0, 0)
        assert list(near_systems(frames_at([-0.5, 0.5, d]), spinning, bc, br, starts, 0.02, 0.1)) == [want, want]


@needs_numba
def test_a_failed_system_in_a_pack_leaves_its_neighbours_step_alone():
    """Three robots alone, packed into one ``step_alone`` call; the middle one's link inertias (the state
    the step's mass matrix is built from) negated, so its mass matrix is not positive definite and its step
    fails. Its state comes back as it was, and the two beside it step exactly as they do when all three are
    healthy (the state buffer holds each field of every system one after another: restoring the failed one
    must not touch theirs)."""
    from rscene_addon.sim import robot_pack
    from rscene_addon.sim.kernels import robot_step as rs
    require_corpus(LAIKAGO)
    world, systems = _laikagos("numba", 3)
    _run(world, systems, 3)
    pack = robot_pack.last_pack(systems)
    assert pack is not None and len(pack.systems) == 3
    args = [pack.lay, pack.mf, pack.mi, pack.cf, pack.cb, pack.state, pack.pf, pack.pb, pack.scal, pack.warm,
            pack.wrange]
    healthy, meta = rs.step_alone(*args)
    assert meta[:3].tolist() == [1, 1, 1]
    sick = pack.state.copy()
    fields = {name: (a, b) for name, a, b, _ in pack.state_slices[1]}
    a, b = fields["inertia"]
    sick[a:b] *= -1.0
    args[5] = sick
    out, meta = rs.step_alone(*args)
    assert meta[:3].tolist() == [1, 0, 1]
    for k in range(3):
        for name, a, b, _ in pack.state_slices[k]:
            expected = sick[a:b] if k == 1 else healthy[a:b]
            assert np.array_equal(out[a:b], expected), (k, name)
    a, b = fields["q"]
    assert not np.array_equal(healthy[a:b], sick[a:b])  # a healthy step moves it: the check above can fail


@needs_numba
def test_packed_robots_follow_in_place_writes_and_record_new_touches():
    """Three robots alone (one ``step_alone`` call for all, the checks of what changed made for all of them
    at once), driven between steps by writes into arrays a user holds: one robot's collision mask zeroed in
    place (it loses the ground: its feet stop touching), then restored (they touch again: new contact-begin
    events after steps in which nothing touched anew), and the ground's velocity written into
    the world's state before each step (a rising ground: the feet are pushed up). The numba step follows
    each as the numpy reference does: positions within solver tolerance, the same events in the same
    order."""
    require_corpus(LAIKAGO)
    out = {}
    for backend in ("numpy", "numba"):
        world, systems = _laikagos(backend, 3)
        ground = world.body_index("/World/Ground")
        _run(world, systems, 40)
        mask = systems[1].collision_mask.copy()
        phases = []
        systems[1].collision_mask[:] = 0
        _run(world, systems, 4)
        phases.append([sorted(s._touching) for s in systems])
        systems[1].collision_mask[:] = mask
        _run(world, systems, 12)
        for _ in range(8):
            world.state.linear_velocity[ground] = (0.0, 0.0, 0.5)
            step_systems(systems, DT)
            world.step()
        out[backend] = (np.concatenate([s.q for s in systems]), phases,
                        [[(e["body_a"], e["body_b"], round(e["time"], 9)) for e in s.events] for s in systems])
    (q0, p0, e0), (q1, p1, e1) = out["numpy"], out["numba"]
    assert p1 == p0 and p0[0][1] == [] and p0[0][0]  # robot 1 lost the ground, the others did not
    assert e1 == e0
    late = [e for e in e0[1] if e[2] > 44 * DT]
    assert late  # robot 1's feet touched again after the mask came back
    assert np.abs(q1 - q0).max() < 1e-4  # (the rising ground alone moves the joints by ~0.04 rad)


# one floating link of every primitive the pair search culls by its exact box: two boxes (one along the link's
# axes, where its box is the shape itself, sized apart so that the two links' points do not find each other's
# contacts twice), a cylinder and a capsule turned off the axes, a sphere off centre
SHAPES = """<robot name="{name}"><link name="body"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><origin xyz="0.05 0 0"/><geometry><box size="{size}"/></geometry></collision>
  <collision><origin xyz="0 0 -0.1" rpy="0.3 0.2 0.1"/><geometry><box size="0.1 0.06 0.04"/></geometry></collision>
  <collision><origin xyz="-0.1 0.12 0" rpy="0.9 0 0.4"/><geometry><cylinder radius="0.04" length="0.2"/></geometry>
  </collision>
  <collision><origin xyz="0 -0.12 0.05" rpy="0 1.1 0.3"/><geometry><capsule radius="0.03" length="0.16"/></geometry>
  </collision>
  <collision><origin xyz="0.1 0 0.1"/><geometry><sphere radius="0.05"/></geometry></collision>
</link></robot>"""


@needs_numba
def test_pair_rows_find_the_reference_contacts_of_turned_shapes_at_random_poses(tmp_path):
    """The compiled pair search culls links, shapes and points by the shapes' exact world boxes before any
    signed distance; for two such links turned at random and slid towards each other, at the farthest
    distance where ``link_pairs`` (numpy, no cull) finds a contact and a few depths below it, it finds the
    same contacts, in the same order, with the same numbers (a contact is kept only once it closes this step,
    well inside the reach the culls keep: boxes shrunk by 3 cm, or sample points' radii left out of them,
    fail here)."""
    from rscene_addon.sim.link_contacts import MARGIN
    from rscene_addon.sim.link_pairs import link_pair_contacts
    from rscene_addon.sim.multibody_compiled import arrays

    kern = kernels.load_robots()
    a, b = (ArticulatedSystem(read_robot(tmp_path, SHAPES.format(name=n, size=size), f"{n}.urdf"), dt=DT, name=n,
                              backend="numpy") for n, size in (("a", "0.3 0.12 0.08"), ("b", "0.2 0.1 0.16")))
    A, B = arrays(a), arrays(b)
    rng = np.random.default_rng(7)

    def place(s, xyz, quat):
        s.set_generalized_coordinate(np.concatenate([xyz, quat / np.linalg.norm(quat)]))

    def compare(uf):
        want = link_pair_contacts([a, b], uf, DT)
        # the numpy route's kinematics as the kernels hold them: frames (L, 4, 4), motion subspaces (L, 6, 6)
        fa, fb = np.array(a.frames), np.array(b.frames)
        Sa, Sb = np.zeros((1, 6, 6)), np.zeros((1, 6, 6))
        Sa[0], Sb[0] = a.S[0], b.S[0]
        got = kern.pair_rows(np.bool_(False), np.ones((1, 1), np.bool_), fa, A.pts, A.p0, A.st, A.ss, A.so, A.s0,
                             A.bc, A.br, uf[a], a.u, A.parent, A.ds0, A.nd, Sa,
                             fb, B.pts, B.p0, B.st, B.ss, B.so, B.s0, B.bc, B.br, uf[b], b.u,
                             B.parent, B.ds0, B.nd, Sb, 0.5, 0.0, 0.0, a.erp, a.contact_slop, MARGIN, DT)
        assert len(got[0]) == len(want)
        for c, w in enumerate(want):
            assert np.allclose(got[2][c], w["point"], atol=1e-9) and np.allclose(got[3][c], w["normal"], atol=1e-9)
            assert got[4][c] == pytest.approx(w["depth"], abs=1e-9)
            assert np.allclose(got[8][c], np.array(w["jacobian"]), atol=1e-9)
            assert np.allclose(got[9][c], w["other_jacobian"], atol=1e-9)
        return len(want)

    found = 0
    for k in range(100):
        # every other pose along the axes, both links unturned: where the boxes' culls are tight
        place(a, np.zeros(3), rng.normal(size=4) if k % 2 else np.array([1.0, 0, 0, 0]))
        direction, quat = rng.normal(size=3), rng.normal(size=4)
        if not k % 2:
            direction, quat = np.eye(3)[k % 3] * (-1) ** (k // 6), np.array([1.0, 0, 0, 0])
        direction /= np.linalg.norm(direction)
        # b closing on a: still (its reach is the margin) or moving at up to 2 m/s (a wider reach)
        uf = {a: np.zeros(6), b: np.zeros(6) if rng.random() < 0.5 else rng.normal(scale=1.0, size=6)}
        near, far = 0.0, 1.0  # the farthest distance with a contact, by bisection on the numpy route
        for _ in range(30):
            mid = 0.5 * (near + far)
            place(b, mid * direction, quat)
            near, far = (mid, far) if link_pair_contacts([a, b], uf, DT) else (near, mid)
        for depth in (0.0, 1e-4, 2e-3, 2e-2):
            place(b, (near - depth) * direction, quat)
            found += compare(uf) > 0
        place(b, (far + 1e-6) * direction, quat)
        assert compare(uf) == 0
    assert found == 400  # every pose at and below the first touch has contacts
