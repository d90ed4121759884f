"""CoppeliaSim simple XML: the manual's BubbleRob scene, every object kind, errors with lines, round trips."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rscene_addon.formats import coppelia_xml, rscene
from rscene_addon.base import spatial as tf
from rscene_addon.model import FormatError

FULL = """<?xml version="1.0"?>
<CoppeliaSim>
  <filetype>simpleModel</filetype>
  <xmlSerializationNb>1</xmlSerializationNb>
  <shape>
    <common><alias>base</alias><localFrame><position>1 2 3</position><euler>0 0 90</euler></localFrame></common>
    <mesh><fileName>meshes/missing.dae</fileName><color><ambientDiffuse>0 255 0</ambientDiffuse></color></mesh>
    <dynamics>
      <mass>2</mass>
      <localInertiaFrame><position>0.1 0 0</position><euler>0 0 90</euler></localInertiaFrame>
      <principalMomentOfInertia>1 2 3</principalMomentOfInertia>
      <switches><static>false</static><respondable>false</respondable></switches>
      <material><engines><bullet><friction>0.25</friction></bullet><ode><friction>0.7</friction></ode></engines></material>
    </dynamics>
    <joint>
      <common><alias>slider</alias><localFrame><position>0 0 1</position></localFrame></common>
      <type>prismatic</type><mode>dynamic</mode><minPosition>-0.1</minPosition><range>0.3</range><position>0.05</position>
      <dynamics><maxForce>50</maxForce><upperVelocityLimit>0.5</upperVelocityLimit></dynamics>
      <dummy><common><alias>tip</alias><localFrame><position>0 0 0.5</position></localFrame></common><size>0.02</size></dummy>
    </joint>
    <visionSensor>
      <common><alias>eye</alias><localFrame><position>0.2 0 0</position></localFrame></common>
      <resolution>640 480</resolution><perspectiveAngle>45</perspectiveAngle>
      <clippingPlanes><near>0.01</near><far>10</far></clippingPlanes>
    </visionSensor>
  </shape>
  <shape>
    <common><alias>inline</alias></common>
    <mesh><vertices>0 0 0 1 0 0 0 1 0</vertices><indices>0 1 2</indices></mesh>
  </shape>
  <shape>
    <common><alias>terrain</alias><localFrame><position>5 6 1</position></localFrame></common>
    <heightfield><size>4 3</size><data>0.2 0.2 0.2 0.2 0.1 0.0 0.0 0.1 0.1 0.1 0.0 0.2</data><gridStep>0.5</gridStep></heightfield>
  </shape>
  <shape>
    <common><alias>cone</alias></common>
    <primitive><type>cone</type><size>0.4 0.4 1</size></primitive>
  </shape>
  <light>
    <common><alias>spot</alias><localFrame><position>0 0 4</position><euler>180 0 0</euler></localFrame></common>
    <type>spot</type><spotCutoffAngle>25</spotCutoffAngle>
    <color><light><ambientDiffuse>255 128 0</ambientDiffuse></light></color>
  </light>
</CoppeliaSim>
"""


@pytest.fixture
def bubblerob(data_dir):
    return coppelia_xml.read(str(data_dir / "bubblerob.simscene.xml"))


def test_bubblerob_by_hand(bubblerob):
    scene = bubblerob
    errors, _ = rscene.check(rscene.loads(rscene.dumps(scene), lazy=True))
    assert errors == []
    robot = scene.by_path("/World/bubbleRob")
    assert robot.get("primitive") == "sphere" and robot.get("radius") == 0.1
    assert robot.get("position") == (0.0, 0.0, 0.12) and robot.get("mass") == 4
    assert robot.get("bodyMode") == "dynamic"
    assert robot.get("inertiaDiagonal") == pytest.approx((0.016, 0.016, 0.016))  # per-unit-mass 0.004 x 4 kg
    assert "sysCall_init" in robot.get("childScript")
    assert robot.get("cs.dynamics.respondableMask") == "65295"
    material = [m for m in scene.of("material") if m.get("name") == robot.get("material")][0]
    assert material.get("color") == pytest.approx((1.0, 167 / 255, 36 / 255, 1.0))
    wheel = scene.by_path("/World/bubbleRob/bubbleRobLeftMotor/bubbleRobLeftWheel")
    assert wheel.get("position") == pytest.approx((0.05, 0.1, 0.04))
    assert wheel.get("radius") == 0.04 and wheel.get("height") == 0.02 and wheel.get("mass") == 0.8
    assert np.allclose(tf.record_rotate(wheel.get("quaternion"), (0, 0, 1)), (0, 1, 0))  # axle along +y
    motor = scene.by_path("/World/bubbleRob/bubbleRobLeftMotor")
    assert motor.get("bodyMode") == "visual_only" and motor.get("coppeliaType") == "joint"
    assert (motor.get("jointType"), motor.get("jointMode"), motor.get("jointCyclic")) == ("revolute", "force", "true")
    assert float(motor.get("jointMaxVelocity")) == pytest.approx(2 * math.pi)
    assert wheel.get("parentGroupId") == motor.id and motor.get("parentGroupId") == robot.id
    assert scene.setting("scene_graph").get("inheritedTransforms") is False
    caster = scene.by_path("/World/bubbleRob/bubbleRobLink/bubbleRobCaster")
    assert caster.get("position") == pytest.approx((-0.07, 0.0, 0.025))
    assert caster.get("friction") == "0"
    nose = scene.by_path("/World/bubbleRob/bubbleRobSensingNose")
    assert (nose.get("kind"), nose.get("parent"), nose.get("position")) == ("proximity", robot.id, (0.1, 0.0, 0.0))
    assert (nose.get("farPlane"), nose.get("nearPlane"), nose.get("horizontalFov")) == (0.15, 0.01, 60.0)
    link = scene.by_path("/World/bubbleRob/bubbleRobLink")
    assert link.get("kind") == "force_torque"
    floor = scene.by_path("/World/floor")
    assert (floor.get("scale"), floor.get("position"), floor.get("bodyMode")) == ((5.0, 5.0, 0.04), (0.0, 0.0, -0.02), "static")
    assert floor.get("cs.common.localObjectProperty.selectable") == "false"
    light = scene.of("light")[0]
    assert light.get("type") == "directional" and light.get("color") == pytest.approx((127 / 255,) * 3 + (1.0,))
    camera = scene.by_path("/World/camera")
    forward = tf.record_rotate(camera.get("quaternion"), (1, 0, 0))
    to_origin = -np.asarray(camera.get("position")) / np.linalg.norm(camera.get("position"))
    assert float(np.dot(forward, to_origin)) > 0.9  # the manual's camera looks at the scene
    assert camera.get("coppeliaMainCamera") == "true"


def test_bubblerob_walls_by_hand(bubblerob):
    walls = bubblerob.by_path("/World/walls")
    assert walls.get("bodyMode") == "static"
    centers, extents = [], []
    for child in bubblerob.of("compound_child"):
        assert child.get("size") == (5.0, 0.02, 0.2)
        position, rotation = tf.compose((walls.get("position"), walls.get("quaternion")),
                                        (child.get("position"), child.get("quaternion")))
        centers.append(tuple(round(v, 9) for v in position))
        extent = np.abs(tf.quat_to_matrix(rotation)) @ np.array([5.0, 0.02, 0.2])
        extents.append(tuple(round(v, 9) for v in extent))
    assert sorted(centers) == sorted([(0, 2.5, 0.1), (2.5, 0, 0.1), (-2.5, 0, 0.1), (0, -2.5, 0.1)])
    assert all(e[2] == 0.2 for e in extents)  # the walls stand 0.2 m high around the 5 m floor


def test_every_object_kind(tmp_path):
    path = tmp_path / "model.simmodel.xml"
    path.write_text(FULL)
    scene = coppelia_xml.read(str(path))
    assert scene.coppelia_filetype == "simpleModel"
    base = scene.by_path("/World/base")
    assert base.get("mesh") == "meshes/missing.dae" and base.get("mass") == 2
    assert any("mesh file not found" in d.message for d in scene.warnings)
    assert base.get("collisionMask") == 0 and base.get("bodyMode") == "dynamic"
    assert base.get("friction") == "0.25" and base.get("cs.dynamics.material.engines.ode.friction") == "0.7"
    # inertia: principal (1,2,3)/kg x 2 kg, frame turned 90 deg about z: Ixx and Iyy swap
    assert base.get("inertiaDiagonal") == pytest.approx((4.0, 2.0, 6.0))
    assert base.get("centerOfMass") == pytest.approx((0.1, 0.0, 0.0))
    slider = scene.by_path("/World/base/slider")
    assert slider.get("position") == pytest.approx((1.0, 2.0, 4.0))
    assert float(slider.get("jointLowerLimit")) == pytest.approx(-0.1)
    assert float(slider.get("jointUpperLimit")) == pytest.approx(0.2)
    assert float(slider.get("jointMaxVelocity")) == pytest.approx(0.5)
    tip = scene.by_path("/World/base/slider/tip")
    assert tip.get("coppeliaType") == "dummy" and tip.get("radius") == 0.01
    assert tip.get("position") == pytest.approx((1.0, 2.0, 4.5))
    eye = scene.by_path("/World/base/eye")
    assert (eye.get("kind"), eye.get("width"), eye.get("height"), eye.get("verticalFov")) == ("rgb", 640, 480, 45.0)
    assert eye.get("position") == pytest.approx((0.2, 0.0, 0.0))  # relative to base
    # a vision sensor looks along its +z: in the scene convention that is the sensor's +x
    assert np.allclose(tf.record_rotate(eye.get("quaternion"), (1, 0, 0)), (0, 0, 1))
    inline = scene.by_path("/World/inline")
    assert inline.get("meshIndices") == "0,1,2"
    terrain = scene.of("terrain_region")[0]
    assert (terrain.get("xSamples"), terrain.get("ySamples"), terrain.get("xSize"), terrain.get("ySize")) == (4, 3, 1.5, 1.0)
    assert terrain.get("center") == pytest.approx((5.0, 6.0, 0.9))  # frame z 1 minus the middle height 0.1
    cone = scene.by_path("/World/cone")
    assert (cone.get("primitive"), cone.get("coppeliaPrimitive"), cone.get("radius")) == ("cylinder", "cone", 0.2)
    spot = scene.by_path("/World/spot")
    assert spot.get("type") == "spot" and spot.get("coneAngle") == 25
    assert np.allclose(spot.get("direction"), (0, 0, -1))  # +z turned 180 deg about x
    assert spot.get("position") == (0.0, 0.0, 4.0)


def test_round_trips(bubblerob, data_dir, tmp_path, scenes_match):
    text, warnings = coppelia_xml.dumps(bubblerob, str(data_dir / "x.simscene.xml"))
    again = coppelia_xml.loads(text, str(data_dir / "x.simscene.xml"))
    scenes_match(bubblerob, again, 1e-9)
    assert warnings == []
    path = tmp_path / "model.simmodel.xml"
    path.write_text(FULL)
    scene = coppelia_xml.read(str(path))
    out = tmp_path / "out" / "copy.simmodel.xml"
    out.parent.mkdir()
    coppelia_xml.write(scene, str(out))
    again = coppelia_xml.read(str(out))
    assert again.by_path("/World/base").get("mesh") == "../meshes/missing.dae"
    scenes_match(scene, again, 1e-9, ignore_keys=("mesh",))
    assert again.coppelia_filetype == "simpleModel"


@pytest.mark.parametrize(("text", "line", "words"), [
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape>\n<common/>\n</shape>\n</CoppeliaSim>", 3, "needs one of"),
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape>\n<primitive>\n<type>torus</type>\n</primitive>\n</shape>\n</CoppeliaSim>", 4, "torus"),
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape>\n<common><localFrame>\n<position>1 2</position>\n"
     "</localFrame></common><primitive><type>cuboid</type></primitive></shape>\n</CoppeliaSim>", 5, "position"),
    ("<CoppeliaSim>\n<filetype>scene</filetype>\n</CoppeliaSim>", 2, "simple XML"),
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape><heightfield>\n<size>3 3</size><data>1 2</data>"
     "</heightfield></shape>\n</CoppeliaSim>", 3, "heightfield"),
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape>\n<primitive><type>cuboid</type></primitive>\n"
     "<dynamics><switches><static>false</static></switches>\n<mass>0</mass>\n</dynamics>\n</shape>\n</CoppeliaSim>",
     6, "mass"),
    ("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<shape>\n</CoppeliaSim>", 4, "XML syntax"),
])
def test_errors_name_the_line(tmp_path, text, line, words):
    path = tmp_path / "bad.simscene.xml"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        coppelia_xml.read(str(path))
    assert info.value.first.line == line and words in info.value.first.message, str(info.value)


def test_writer_from_an_rscene_scene(corpus, tmp_path):
    scene = rscene.read(str(corpus / "rscene/docs-examples/RsceneFile_example.rscene"))
    out = tmp_path / "example.simscene.xml"
    warnings = coppelia_xml.write(scene, str(out))
    assert any("solver" in w for w in warnings)
    again = coppelia_xml.read(str(out))
    crate = again.by_path("/World/Crate")
    assert crate.get("scale") == (0.5, 0.5, 0.5) and crate.get("mass") == 2 and crate.get("bodyMode") == "dynamic"
    assert again.by_path("/World/Ball").get("radius") == pytest.approx(0.15)
    terrain = again.of("terrain_region")[0]
    assert terrain.get("heights").tolist() == [0.3, 0.15, 0.3, 0.15, 0, 0.15, 0.3, 0.15, 0.3]
    assert terrain.get("center") == pytest.approx((0, 0, 0)) and terrain.get("xSize") == 4
    camera = again.of("camera")[0]
    original = scene.of("camera")[0]
    assert camera.get("position") == original.get("position")
    assert tf.same_rotation(camera.get("quaternion"), original.get("quaternion"), 1e-12)
    light = again.of("light")[0]
    assert np.allclose(np.asarray(light.get("direction")) / np.linalg.norm(light.get("direction")),
                       np.asarray(scene.of("light")[0].get("direction")) / np.linalg.norm(scene.of("light")[0].get("direction")))


def test_remembered_compose_is_spatial_compose_bit_for_bit():
    """The reader's _compose (rotation product remembered per pair, compose's shortcuts inline) gives the very
    doubles of base.spatial.compose, first time and from its table, over awkward poses."""
    import struct

    def bits(pose):
        return [struct.pack("<d", v) for part in pose for v in part]

    rng = np.random.default_rng(3)
    quats = [tf.IDENTITY, tf.record_quat((0.0, 1.0, 0.0, 0.0)), tf.record_quat((1.0, 1e-300, 0.0, 0.0))]
    quats += [tf.record_quat(tuple(q)) for q in rng.normal(size=(6, 4))]
    positions = [tf.ORIGIN, (0.0, -0.0, 0.0), (1e308, -1e308, 3.0), (-0.0, 2.5, -7.25)]
    positions += [tuple(p) for p in rng.normal(size=(4, 3)) * 100]
    for _ in range(2):  # the second pass reads every rotation from the table
        for qa in quats:
            for qb in quats:
                for pa in positions:
                    for pb in positions:
                        assert bits(coppelia_xml._compose((pa, qa), (pb, qb))) == bits(tf.compose((pa, qa), (pb, qb)))


_COMMONS = ["", "<common><alias>a</alias></common>", "<common><name>nm</name></common>",
            "<common><alias></alias><name>n2</name></common>",
            "<common><alias>a b/c</alias><localFrame><euler>0 0 90</euler><position>1 2 3</position></localFrame></common>",
            "<common><alias>a</alias><localFrame/></common>", "<common><alias>a</alias><alias>b</alias></common>",
            "<common><localFrame><position>1 2 3</position><position>1 2 3</position></localFrame></common>",
            "<common><alias>x</alias><other>1</other></common>",
            "<common><alias>a</alias><localFrame><position>-0 0 -0</position><euler>-0 0 0</euler></localFrame></common>",
            "<common><alias>s</alias><localFrame><position>0.5,0,0</position><euler>90 0 0</euler></localFrame></common>"]
_PRIMITIVES = ["<primitive><type>cuboid</type><size>0.1 0.2 0.3</size></primitive>",
               "<primitive><size>1</size><type> Cuboid </type></primitive>",
               "<primitive><type>sphere</type><size>0.2 0.2 0.2</size></primitive>",
               "<primitive><type>sphere</type><size>0.2 0.3 0.2</size></primitive>",
               "<primitive><type>cylinder</type><size>0.2 0.2 0.5</size></primitive>",
               "<primitive><type>cone</type><size>0.2 0.2 0.5</size></primitive>",
               "<primitive><type>disc</type><size>1 1 0</size></primitive>",
               "<primitive><type>cuboid</type></primitive>", "<primitive><type>cuboid</type><size></size></primitive>",
               "<primitive><type>cuboid</type><size>1 2 3 4</size></primitive>",
               "<primitive><type>cuboid</type><color><ambientDiffuse>255 0 0</ambientDiffuse></color></primitive>",
               "<primitive><type>cuboid</type><color><specular>1 2 3</specular></color></primitive>",
               "<primitive><type>cuboid</type><localFrame><euler>0 90 0</euler><position>0 1 0</position></localFrame>"
               "</primitive>",
               "<primitive><type>cuboid</type><extra>5</extra></primitive>",
               "<primitive><type>cuboid</type><type>sphere</type></primitive>"]
_DYNAMICS = ["", "<dynamics/>", "<dynamics><mass>2</mass></dynamics>", "<dynamics><mass>-0</mass></dynamics>",
             "<dynamics><switches><static>false</static><respondable>false</respondable></switches><mass>3</mass></dynamics>",
             "<dynamics><switches><static>true</static><respondable>0</respondable></switches></dynamics>",
             "<dynamics><switches><static>maybe</static></switches></dynamics>",
             "<dynamics><mass>1</mass><principalMomentOfInertia>1 1 1</principalMomentOfInertia></dynamics>",
             "<dynamics><switches><static>false</static><other>1</other></switches></dynamics>",
             "<dynamics><switches><static>false</static></switches><mass>0</mass></dynamics>"]


def test_plain_shapes_read_as_every_shape(monkeypatch):
    """_Reader.plain_shape (the commonest shape in fewer steps) against visit's general steps, which it
    must match: the same .rscene text and warnings, or the same error, over shapes that are plain, nearly
    plain and not, nested and side by side."""
    import random
    rng = random.Random(7)
    texts = []
    for _ in range(300):
        body = ""
        for _ in range(rng.randint(1, 4)):
            parts = [rng.choice(_COMMONS), rng.choice(_PRIMITIVES), rng.choice(_DYNAMICS)]
            if rng.random() < 0.2:
                rng.shuffle(parts)
            if rng.random() < 0.25:
                parts.append(f"<shape>{rng.choice(_COMMONS)}{rng.choice(_PRIMITIVES)}{rng.choice(_DYNAMICS)}</shape>")
            body += "<shape>" + "".join(parts) + "</shape>\n"
            if rng.random() < 0.15:
                body = f"<joint><common><alias>j</alias></common>{body}</joint>\n"
        texts.append("<CoppeliaSim><filetype>simpleScene</filetype><xmlSerializationNb>1</xmlSerializationNb>\n"
                     f"{body}</CoppeliaSim>\n")

    def outcomes():
        results = []
        for text in texts:
            try:
                scene = coppelia_xml.loads(text, "plain.simscene.xml")
            except FormatError as error:
                results.append(str(error))
            else:
                results.append((rscene.dumps(scene), [str(w) for w in scene.warnings]))
        return results

    taken = []
    plain = coppelia_xml._Reader.plain_shape

    def counted(self, *args):
        taken.append(plain(self, *args))
        return taken[-1]

    monkeypatch.setattr(coppelia_xml._Reader, "plain_shape", counted)
    fast = outcomes()
    monkeypatch.setattr(coppelia_xml._Reader, "plain_shape", lambda self, *args: False)
    general = outcomes()
    assert fast == general
    assert sum(taken) > 100 and taken.count(False) > 100  # both ways were taken often
    assert sum(isinstance(r, tuple) for r in fast) > 50  # and many texts read
