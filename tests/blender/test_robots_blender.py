"""blender/robots.py and ops/robot_ops.py: articulated records as link empties posed by forward kinematics,
joint values round trip, the IK operator, and export of an unedited robot scene."""
from __future__ import annotations

import math
import os

import bpy
import numpy as np
import pytest
from mathutils import Matrix

from rscene_addon.blender import scene_import, extract
from rscene_addon.blender import robots as rb
from rscene_addon.formats import rscene
from rscene_addon.formats import robot_files
from rscene_addon.robots import scene_io
from rscene_addon.robots.kinematics import forward_kinematics

CORPUS = "/work/shared/corpus"
CARTPOLE = f"{CORPUS}/urdf/raisimTech-raisim2Lib/rsc/cartPole/cartpole.urdf"
CHAIN = f"{CORPUS}/urdf/raisimTech-raisim2Lib/rsc/chain/robot.urdf"
LAIKAGO = f"{CORPUS}/raisim_xml/raisimTech-raisim2Lib/rsc/laikago/laikago.urdf"
REACHER = f"{CORPUS}/mjcf/jhwangbo-raisim2Lib/rsc/mjcf/gymnasium/reacher.xml"

pytestmark = pytest.mark.skipif(not all(os.path.exists(p) for p in (CARTPOLE, CHAIN, LAIKAGO, REACHER)),
                                reason="robot corpus not available")

S = math.sqrt(0.5)
LAIKAGO_GC = [0.1, -0.2, 0.5, 0.9238795, 0.0, 0.0, 0.3826834,
              0.1, 0.7, -1.3, -0.1, 0.6, -1.2, 0.05, 0.8, -1.4, -0.05, 0.5, -1.1]

OBJ_TEXT = """v 0 0 0
v 0.1 0 0
v 0 0.1 0
f 1 2 3
"""
MESH_URDF = """<robot name="meshbot">
  <link name="base">
    <visual><origin xyz="0 0 0.1"/><geometry><mesh filename="tri.obj" scale="2 2 2"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <collision><geometry><box size="0.2 0.3 0.4"/></geometry></collision>
  </link>
  <link name="arm">
    <visual><geometry><capsule radius="0.05" length="0.3"/></geometry></visual>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5" rpy="0 0 0.3"/><axis xyz="0 1 0"/></joint>
</robot>
"""


def _lines(tmp_path):
    (tmp_path / "tri.obj").write_text(OBJ_TEXT)
    (tmp_path / "meshbot.urdf").write_text(MESH_URDF)
    return [
        "raisim_engine_scene 2",
        "time_step 0.0025",
        f"articulated_resource cartpole_res Cartpole {CARTPOLE}",
        f"articulated_resource laikago_res Laikago {LAIKAGO}",
        f"articulated_resource chain_res Chain {CHAIN}",
        "articulated_resource mesh_res Meshbot meshbot.urdf",
        f"articulated /World/Cartpole cartpole_res 1 2 0.5 {S} 0 0 {S} true true id=articulated_cartpole "
        "generalizedCoordinate=0.7,0.4",
        "articulated /World/Laikago laikago_res 0 0 0 1 0 0 0 true true id=articulated_laikago "
        "generalizedCoordinate=" + ",".join(repr(v) for v in LAIKAGO_GC),
        "articulated_ik /World/Laikago FR_foot 0.2,0,0 maxIterations=200",
        "articulated /World/Chain chain_res -1 0 -9 1 0 0 0 true true",
        "articulated /World/Meshbot mesh_res 0 3 0 1 0 0 0 true true generalizedCoordinate=0,0,0.2,1,0,0,0,0.25",
        f"articulated /World/Reacher - 0 -3 0 1 0 0 0 true true sourcePath={REACHER}",
        "articulated /World/Lost no_such_resource 0 0 0 1 0 0 0 true true",
        "object /World/Box box 1 2 0.5 1 0 0 0 1 1 1 0.5 1 1 default - false true false - static true "
        "1 18446744073709551615",
    ]


def _dispatch(monkeypatch):
    """What scene_import.py will do: ``articulated`` records to build_robot, other support kinds as before."""
    if hasattr(scene_import.SceneBuilder, "build_articulated"):  # wired in scene_import.py: nothing to patch
        return
    original = scene_import.SceneBuilder.build_support

    def dispatch(self, record):
        if record.tag == "articulated" and not getattr(self, "_in_robot_fallback", False):
            self._in_robot_fallback = True
            try:
                return rb.build_robot(self, record)
            finally:
                self._in_robot_fallback = False
        return original(self, record)

    monkeypatch.setattr(scene_import.SceneBuilder, "build_support", dispatch)


@pytest.fixture
def scene_file(tmp_path):
    path = tmp_path / "robots.rscene"
    path.write_text("\n".join(_lines(tmp_path)) + "\n")
    return path


@pytest.fixture
def imported(blank, scene_file, monkeypatch):
    _dispatch(monkeypatch)
    warnings = []
    scene_import.import_scene_file(str(scene_file), bpy.context.scene, report=lambda lvl, msg: warnings.append(msg))
    bpy.context.view_layer.update()
    roots = {ob.rscene.path: ob for ob in bpy.data.objects if ob.rscene.kind == "articulated"}
    return roots, warnings


def _fk(scene_file, path, gc=None):
    scene = rscene.read(str(scene_file))
    record = scene.by_path(path)
    robot = robot_files.robot_for_record(scene, record)
    if gc is None:
        return robot, robot_files.posed_links_for_record(scene, record, robot)
    return robot, forward_kinematics(robot, np.asarray(gc, dtype=float), scene_io.record_base_transform(record))


def _check_links(root, expected, tol=1e-5):
    links = rb.link_objects(root)
    assert set(links) == set(expected)
    for name, want in expected.items():
        got = np.array(links[name].matrix_world)
        assert np.allclose(got, want, atol=tol), (name, got, want)


@pytest.mark.parametrize("path", ["/World/Cartpole", "/World/Laikago", "/World/Chain", "/World/Meshbot",
                                  "/World/Reacher"])
def test_links_follow_forward_kinematics(imported, scene_file, path):
    roots, _ = imported
    root = roots[path]
    robot, expected = _fk(scene_file, path)
    _check_links(root, expected)
    assert len(rb.joint_values(root)) == robot.gc_dim
    assert root.parent is None and all(ob.users_collection for ob in root.children_recursive)


def test_root_and_joint_props(imported):
    roots, _ = imported
    cart = roots["/World/Cartpole"]
    assert cart["rscene_joint_values"].to_list() == pytest.approx([0.7, 0.4])
    links = rb.link_objects(cart)
    assert links["rod"]["rscene_joint"] == "bar_revolute"
    assert links["rod"]["rscene_joint_type"] == "revolute"
    assert links["rod"]["rscene_joint_value"] == pytest.approx(0.4)
    assert links["slider"]["rscene_joint_value"] == pytest.approx(0.7)
    assert links["sliderBar"]["rscene_joint_type"] == "fixed"
    assert "rscene_joint_value" not in links["sliderBar"].keys()  # below a fixed joint: no value
    # the laikago's first seven values are its floating base
    laikago = roots["/World/Laikago"]
    assert laikago["rscene_joint_values"].to_list() == pytest.approx(LAIKAGO_GC)
    # chain: spherical joints keep a quaternion; no gc in the record -> default configuration
    chain = roots["/World/Chain"]
    assert rb.joint_values(chain) == [1.0, 0.0, 0.0, 0.0] * 3
    assert list(rb.link_objects(chain)["link2"]["rscene_joint_value"]) == [1.0, 0.0, 0.0, 0.0]


def test_geometry_children(imported):
    roots, warnings = imported
    links = rb.link_objects(roots["/World/Meshbot"])
    base_kids = {ob.name: ob for ob in links["base"].children}
    visual = next(ob for ob in base_kids.values() if "visual" in ob.name)
    assert visual.instance_type == "COLLECTION" and visual.instance_collection is not None
    assert tuple(visual.scale) == pytest.approx((2, 2, 2))
    collision = next(ob for ob in base_kids.values() if "collision" in ob.name)
    assert collision.display_type == "WIRE" and collision.hide_render and collision["rscene_collision"] == "box"
    assert tuple(collision.scale) == pytest.approx((0.2, 0.3, 0.4))
    arm = links["arm"].children[0]
    assert arm.type == "MESH" and arm.material_slots[0].material is not None
    cart = rb.link_objects(roots["/World/Cartpole"])
    slider_box = next(ob for ob in cart["slider"].children if "visual" in ob.name)
    assert tuple(slider_box.scale) == pytest.approx((0.3, 0.3, 0.2))
    # MJCF worldbody geoms hang under the root
    assert any(":world" in ob.name for ob in roots["/World/Reacher"].children)
    # laikago's .dae meshes are not in the corpus: warned about, shown as small empties
    assert any("trunk.dae" in w for w in warnings)


def test_missing_robot_falls_back_to_an_empty(imported):
    roots, warnings = imported
    lost = roots["/World/Lost"]
    assert lost.type == "EMPTY" and not rb.is_robot_root(lost) and not lost.children
    assert any("/World/Lost" in w for w in warnings)


def test_apply_joint_values_round_trip(imported, scene_file):
    roots, _ = imported
    for path, new in (("/World/Cartpole", [-1.5, 2.0]),
                      ("/World/Chain", [S, S, 0, 0, 1, 0, 0, 0, S, 0, S, 0]),
                      # inside the URDF's limits: the rig's limit constraints hold a bone inside them
                      ("/World/Laikago", [0, 0, 1.0, 1, 0, 0, 0] + [0.2, -0.3, -1.0] * 4)):
        root = roots[path]
        rb.apply_joint_values(root, new)
        assert rb.joint_values(root) == pytest.approx(new, abs=0)
        bpy.context.view_layer.update()
        _, expected = _fk(scene_file, path, new)
        _check_links(root, expected)
    with pytest.raises(ValueError):
        rb.apply_joint_values(roots["/World/Cartpole"], [1.0, 2.0, 3.0])


def test_update_articulated_only_when_changed(imported, scene_file):
    roots, _ = imported
    original = scene_file.read_text()
    scene = rscene.loads(original, str(scene_file))
    for path, root in roots.items():
        if rb.is_robot_root(root):
            assert not rb.update_articulated(scene.by_path(path), root), path
    assert rscene.dumps(scene) == original
    # an edit changes that record's generalizedCoordinate only
    cart = roots["/World/Cartpole"]
    rb.apply_joint_values(cart, [0.7, 0.4 + 1e-6])
    record = scene.by_path("/World/Cartpole")
    assert rb.update_articulated(record, cart)
    assert record.get("generalizedCoordinate").tolist() == pytest.approx([0.7, 0.4 + 1e-6], abs=1e-12)
    rb.apply_joint_values(cart, [0.7, 0.4 + 1e-6 + 1e-12])
    assert not rb.update_articulated(record, cart)
    # a robot without a stored gc gets one when moved
    chain = roots["/World/Chain"]
    chain.location.x += 1
    assert rb.update_articulated(scene.by_path("/World/Chain"), chain)
    assert scene.by_path("/World/Chain").get("position")[0] == pytest.approx(0.0)
    assert not scene.by_path("/World/Chain").has("generalizedCoordinate")
    lines = rscene.dumps(scene).split("\n")
    changed = [a for a, b in zip(lines, original.split("\n")) if a != b]
    assert len(changed) == 2 and "0.7,0.400001" in changed[0]


def test_export_unedited_is_byte_identical(imported, scene_file, tmp_path, monkeypatch):
    """Export with update_articulated wired for articulated objects (as extract.py will do)."""
    roots, _ = imported
    out = tmp_path / "out.rscene"
    extract.export_scene(bpy.context.scene, str(out))
    assert out.read_bytes() == scene_file.read_bytes()
    # and with the wiring: the extractor's loop applied to articulated roots
    scene = extract.scene_from_blender(bpy.context.scene, str(out))
    items = list(scene.items)
    for ob in bpy.context.scene.objects:
        if ob.rscene.kind == "articulated" and rb.is_robot_root(ob):
            rb.update_articulated(items[ob.rscene.uid], ob)
    assert rscene.dumps(scene) == scene_file.read_text()


def _select(root):
    for ob in bpy.context.view_layer.objects:
        ob.select_set(False)
    root.select_set(True)
    bpy.context.view_layer.objects.active = root


def _register_ops():
    """Register robot_ops' classes unless registration.py already did; returns those registered here."""
    from rscene_addon.ops import robot_ops
    added = []
    for cls in robot_ops.CLASSES:
        if not getattr(cls, "is_registered", False):
            bpy.utils.register_class(cls)
            added.append(cls)
    return robot_ops, added


@pytest.fixture
def ops(imported):
    robot_ops, added = _register_ops()
    yield robot_ops
    for cls in reversed(added):
        bpy.utils.unregister_class(cls)


def _link_world(root, link):
    bpy.context.view_layer.update()
    return np.array(rb.link_objects(root)[link].matrix_world)


def test_ik_reaches_a_reachable_target(imported, ops, scene_file):
    roots, _ = imported
    root = roots["/World/Laikago"]
    # a reachable target: the foot where another leg configuration puts it
    goal = list(LAIKAGO_GC)
    goal[7:10] = [-0.2, 0.3, -0.9]
    _, expected = _fk(scene_file, "/World/Laikago", goal)
    target = bpy.data.objects.new("target", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = expected["FR_foot"][:3, 3]
    _select(root)
    bpy.context.scene.frame_set(7)
    assert bpy.ops.rscene.solve_ik(target="target") == {"FINISHED"}  # link from the articulated_ik record
    assert root["rscene_ik_converged"]
    foot = _link_world(root, "FR_foot")
    assert np.linalg.norm(foot[:3, 3] - expected["FR_foot"][:3, 3]) < 1e-3
    # the base did not move, the other legs did not move
    assert rb.joint_values(root)[:7] == pytest.approx(LAIKAGO_GC[:7])
    assert rb.joint_values(root)[10:] == pytest.approx(LAIKAGO_GC[10:])
    # links are where FK puts them for the new values
    _, now = _fk(scene_file, "/World/Laikago", rb.joint_values(root))
    _check_links(root, now)
    # keyframed at the current frame: each joint's bone channel on the robot's rig
    from rscene_addon.blender.bake import action_fcurves
    rig = rb.rig_of(root)
    assert rig.animation_data is not None and rig.animation_data.action is not None
    curves = action_fcurves(rig)
    assert sorted(fc.data_path for fc in curves) == sorted(
        f'pose.bones["{name}"].rotation_euler' for name in rb.robot_of(root).joint_order)
    assert all(fc.array_index == 1 and fc.keyframe_points[0].co[0] == 7 for fc in curves)


def test_ik_to_the_cursor_with_orientation(imported, ops, scene_file):
    roots, _ = imported
    root = roots["/World/Cartpole"]
    _, expected = _fk(scene_file, "/World/Cartpole", [-2.0, 0.9])
    cursor = bpy.context.scene.cursor
    cursor.matrix = Matrix(expected["rod"].tolist())
    _select(root)
    assert bpy.ops.rscene.solve_ik(link="rod", use_orientation=True, keyframe=False) == {"FINISHED"}
    assert root["rscene_ik_converged"]
    assert rb.joint_values(root) == pytest.approx([-2.0, 0.9], abs=2e-3)
    assert root.animation_data is None


def test_ik_reports_unreachable_targets(imported, ops):
    roots, _ = imported
    root = roots["/World/Laikago"]
    target = bpy.data.objects.new("far", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = (10.0, 0.0, 0.0)
    _select(root)
    assert bpy.ops.rscene.solve_ik(target="far", link="FR_foot") == {"FINISHED"}  # best effort applied
    assert not root["rscene_ik_converged"]
    assert root["rscene_ik_position_error"] > 5.0
    foot = _link_world(root, "FR_foot")
    assert np.linalg.norm(foot[:3, 3] - (10, 0, 0)) == pytest.approx(root["rscene_ik_position_error"], abs=1e-4)
    with pytest.raises(RuntimeError):  # a link the robot does not have
        bpy.ops.rscene.solve_ik(target="far", link="no_such_link")


def test_keyframed_values_repose_on_frame_change(imported, ops, scene_file):
    roots, _ = imported
    root = roots["/World/Cartpole"]
    registered = hasattr(bpy.types.Object, "rscene_ik")  # the add-on's own registration, when on
    ops.register_extra()
    try:
        rb.apply_joint_values(root, [0.0, 0.0])
        ops.keyframe_joint_values(root, 1)
        rb.apply_joint_values(root, [1.0, 0.5])
        ops.keyframe_joint_values(root, 11)
        bpy.context.scene.frame_set(1)
        assert rb.joint_values(root) == pytest.approx([0.0, 0.0], abs=1e-6)
        _, expected = _fk(scene_file, "/World/Cartpole", [0.0, 0.0])
        bpy.context.view_layer.update()
        _check_links(root, expected)
        bpy.context.scene.frame_set(11)
        assert rb.joint_values(root) == pytest.approx([1.0, 0.5], abs=1e-6)
    finally:
        if not registered:  # leave the session's registration as it was (later tests use Object.rscene_ik)
            ops.unregister_extra()


BOX_ROBOT = """<robot name="box">
  <link name="body"><inertial><mass value="2"/>
    <inertia ixx="0.0217" iyy="0.0333" izz="0.0417" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision></link>
</robot>
"""


def _bake_box_robots(tmp_path, monkeypatch, lines):
    """Import a scene of ``lines`` using ``BOX_ROBOT`` and bake frames 1-25 at 24 fps. Returns the scene,
    ``simulate()`` of the same file over that second (the truth the bake must equal) and its body names."""
    from rscene_addon.sim import simulate
    _dispatch(monkeypatch)
    (tmp_path / "box.urdf").write_text(BOX_ROBOT)
    path = tmp_path / "robots.rscene"
    path.write_text("\n".join(["raisim_engine_scene 2", "time_step 0.002",
                               "articulated_resource box_res box box.urdf", *lines]) + "\n")
    scene_import.import_scene_file(str(path), bpy.context.scene)
    scene = bpy.context.scene
    scene.render.fps = 24
    assert bpy.ops.rscene.bake_simulation(frame_start=1, frame_end=25) == {"FINISHED"}
    expected = simulate(rscene.read(str(path)), 1.0, 24)
    return scene, expected, list(expected.names)


def _robot_body(record_path: str):
    return rb.link_objects(next(ob for ob in bpy.data.objects if ob.rscene.path == record_path))["body"]


def test_baked_robot_lands_on_a_static_box_and_pushes_a_dynamic_one(blank, tmp_path, monkeypatch):
    """Link-world contacts in the bake: a box robot dropped on a static table stays on its top (0.5 + 0.1);
    a second robot slides into a crate and moves it. Baked poses are simulate()'s."""
    scene, expected, names = _bake_box_robots(tmp_path, monkeypatch, [
        ("object /World/Ground ground 0 0 0 1 0 0 0 20 20 1 0.5 1 1 default - false true false - static true "
         "1 18446744073709551615"),
        ("object /World/Table box 0 0 0.25 1 0 0 0 1 1 0.5 0.5 1 1 default - false true false - static true "
         "1 18446744073709551615"),
        ("object /World/Crate box 3 0 0.25 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - dynamic "
         "true 1 18446744073709551615"),
        "articulated /World/Dropped box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=0,0,0.8,1,0,0,0",
        ("articulated /World/Slider box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=2,0,0.1,1,0,0,0 "
         "generalizedVelocity=4,0,0,0,0,0"),
    ])
    dropped = _robot_body("/World/Dropped")
    scene.frame_set(25)
    location = np.array(dropped.matrix_world.translation)
    assert location == pytest.approx(expected.position[-1, names.index("/World/Dropped/body")], abs=1e-5)
    assert location[2] == pytest.approx(0.6, abs=3e-3)
    crate = next(ob for ob in scene.objects if ob.rscene.path == "/World/Crate")
    assert crate.matrix_world.translation.x > 3.05  # pushed along +x by the slider


def test_baked_robots_bounce_off_each_other(blank, tmp_path, monkeypatch):
    """Robot-robot contacts in the bake: without gravity, box robot A (1.5 m/s) meets B (-0.5 m/s) 0.6 m
    away at t = 0.3 s; with restitution 1 (the solver's default material) equal masses swap velocities,
    so at t = 1 s A is at 0.45 - 0.5 * 0.7 = 0.1 and B at 0.85 + 1.5 * 0.7 = 1.9. Baked poses are
    simulate()'s, whose events name the two links."""
    scene, expected, names = _bake_box_robots(tmp_path, monkeypatch, [
        "gravity 0 0 0",
        "solver 80 1e-07 0.2 accurate defaultRestitution=1.0 defaultRestitutionThreshold=0.001",
        ("articulated /World/A box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=0,0,0,1,0,0,0 "
         "generalizedVelocity=1.5,0,0,0,0,0"),
        ("articulated /World/B box_res 0 0 0 1 0 0 0 true true generalizedCoordinate=1,0,0,1,0,0,0 "
         "generalizedVelocity=-0.5,0,0,0,0,0"),
    ])
    scene.frame_set(25)
    for record, x in (("/World/A", 0.1), ("/World/B", 1.9)):
        location = np.array(_robot_body(record).matrix_world.translation)
        assert location == pytest.approx(expected.position[-1, names.index(f"{record}/body")], abs=1e-5)
        assert location == pytest.approx([x, 0.0, 0.0], abs=5e-3)
    assert [{e["body_a"], e["body_b"]} for e in expected.events] == [{"/World/A/body", "/World/B/body"}]
