"""Real robots visible (#21): Laikago and ANYmal C (corpus robots/, RaiSim's own files) import through
File > Import > Robot with every COLLADA visual (triangle counts equal to the files' own, counted from their
XML), textured and in their own colours, standing where their files put them, equal to the simulator."""
from __future__ import annotations

import os

import bpy
import numpy as np
import pytest

from rscene_addon.blender import robots as rb
from rscene_addon.formats import registry
from rscene_addon.formats.robot_files import read_robot_file
from rscene_addon.sim.articulated import ArticulatedSystem
from tests.collada_truth import count_triangles
from tests.corpus import CORPUS, require_corpus

RSC = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc"
LAIKAGO = RSC / "laikago" / "laikago.urdf"
ANYMAL_C = RSC / "anymal_c" / "urdf" / "anymal.urdf"
ANYMAL_C_SENSORED = RSC / "anymal_c" / "urdf" / "anymal_sensored.urdf"
LAIKAGO_XML = CORPUS / "raisim_xml" / "raisimTech-raisim2Lib" / "rsc" / "laikago.xml"

pytest.importorskip("collada", reason="pycollada is installed by scripts/setup.sh from the shipped wheels")


def _import_robot(path, ground=False):
    messages = []
    result = bpy.ops.import_scene.rscene_robot(filepath=str(path), add_ground=ground)
    assert result == {"FINISHED"}
    bpy.context.view_layer.update()
    roots = [ob for ob in bpy.data.objects if rb.is_robot_root(ob)]
    assert len(roots) == 1
    return roots[0], messages


def _visual_triangles(root) -> dict[str, int]:
    """Triangles each visual object of the robot draws, by the .dae file its instance collection holds."""
    seen = {}
    for ob in root.children_recursive:
        if ob.instance_type == "COLLECTION" and ob.instance_collection is not None and not ob.hide_render:
            for member in ob.instance_collection.objects:
                if member.type == "MESH" and member.name.lower().endswith(".dae"):
                    seen.setdefault(member.name, 0)
                    seen[member.name] += sum(len(p.vertices) - 2 for p in member.data.polygons)
    return seen


def _expected_triangles(path) -> tuple[int, int]:
    """(visual .dae instances, their triangles) as the URDF and the .dae files say."""
    robot = read_robot_file(str(path))
    count = total = 0
    for link in robot.links.values():
        for shape in link.visuals:
            if shape.geometry.kind == "mesh" and shape.geometry.path.endswith(".dae") \
                    and os.path.isfile(shape.geometry.path):
                count += 1
                total += count_triangles(shape.geometry.path)
    return count, total


@pytest.mark.parametrize("path", [LAIKAGO, ANYMAL_C], ids=["laikago", "anymal_c"])
def test_every_visual_mesh_with_the_files_triangles(blank, path):
    require_corpus("robots")
    root, _ = _import_robot(path)
    count, total = _expected_triangles(path)
    instances = [ob for ob in root.children_recursive
                 if ob.instance_type == "COLLECTION" and ob.instance_collection is not None and not ob.hide_render]
    assert len(instances) == count
    drawn = 0
    for ob in instances:
        mesh = next(m for m in ob.instance_collection.objects if m.type == "MESH")
        assert mesh.name.endswith(".dae")
        drawn += len(mesh.data.polygons)
        assert all(len(p.vertices) == 3 for p in mesh.data.polygons[:50])
    assert drawn == total
    missing = [ob.name for ob in root.children_recursive if "rscene_missing_file" in ob.keys()]
    assert missing == []


def test_anymal_is_textured(blank):
    require_corpus("robots")
    root, _ = _import_robot(ANYMAL_C)
    images = set()
    for ob in root.children_recursive:
        if ob.instance_collection is None:
            continue
        for member in ob.instance_collection.objects:
            assert member.data.uv_layers, f"{member.name} has no UVs"
            for mat in member.data.materials:
                for node in mat.node_tree.nodes:
                    if node.type == "TEX_IMAGE" and node.image is not None:
                        assert node.outputs["Color"].is_linked
                        images.add(os.path.basename(node.image.filepath))
    assert {"base.jpg", "thigh.jpg", "shank.jpg", "top_shell.jpg"} <= images
    for name in images:
        assert bpy.data.images[name].size[0] > 0    # the jpg really loaded


def test_laikago_in_its_own_colours(blank):
    require_corpus("robots")
    root, _ = _import_robot(LAIKAGO, ground=True)
    colours = set()
    for ob in root.children_recursive:
        if ob.instance_collection is None:
            continue
        for member in ob.instance_collection.objects:
            for mat in member.data.materials:
                bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
                colours.add(tuple(round(c, 3) for c in bsdf.inputs["Base Color"].default_value[:3]))
    assert (0.933, 0.392, 0.212) in colours       # trunk.dae's orange <diffuse>
    ground = [ob for ob in bpy.data.objects if ob.rscene.path == "/World/Ground"]
    assert len(ground) == 1 and ground[0].rscene.body_mode == "static"
    # standing on it: lifted by its legs' length (the calf's foot sphere touches z = 0)
    links = _link_world_positions(root)
    assert 0.35 < links["trunk"][2] < 0.6
    feet = [links[f"{leg}_foot"][2] for leg in ("FR", "FL", "RR", "RL")]
    np.testing.assert_allclose(feet, min(feet), atol=1e-9)
    assert 0.0 < min(feet) < 0.05      # the foot link at the sphere's centre, one radius up


def test_missing_sensor_mesh_is_one_warning(blank, capsys):
    """anymal_sensored.urdf's Ouster set names os1_64.dae, which RaiSim's anymal_c folder does not ship."""
    require_corpus("robots")
    from rscene_addon.blender.scene_import import import_scene_file
    warnings = []
    import_scene_file(str(ANYMAL_C_SENSORED), bpy.context.scene, report=lambda lvl, msg: warnings.append(msg))
    about = [w for w in warnings if "os1_64" in w]
    assert len(about) == 1, warnings
    assert "lidar_link" in about[0]
    root = next(ob for ob in bpy.data.objects if rb.is_robot_root(ob))
    links = rb.link_objects(root)
    realsense = [c for c in links["depth_camera_front_camera_parent"].children if c.instance_collection is not None]
    assert realsense and realsense[0].instance_collection.objects[0].name == "realsense.dae"


def _link_world_positions(root) -> dict[str, np.ndarray]:
    bpy.context.view_layer.update()
    return {name: np.array(ob.matrix_world.translation) for name, ob in rb.link_objects(root).items()}


RXML = CORPUS / "raisim_xml" / "raisimTech-raisim2Lib" / "rsc"
MJCF = CORPUS / "mjcf"
POSED = [  # (file, where its base stands at frame 1: the qpos it gives, or None to check against the sim only)
    (LAIKAGO_XML, (0.0, 0.0, 0.48)),
    (RXML / "laikagoOnHeightMap.xml", (0.0, 0.0, 0.48)),
    (RXML / "xmlScripts" / "heightMaps" / "heightMapUsingPng.xml", (0.0, 0.0, 10.84)),
    (LAIKAGO, (0.0, 0.0, 0.0)),
    (ANYMAL_C, (0.0, 0.0, 0.0)),
    (MJCF / "jhwangbo-raisim2Lib" / "rsc" / "cassie" / "cassie.xml", None),
    (MJCF / "Farama-Foundation-Gymnasium" / "gymnasium" / "envs" / "mujoco" / "assets" / "hopper.xml", None),
]


@pytest.mark.parametrize("path,base", POSED, ids=lambda v: getattr(v, "name", None) or "")
def test_one_pose_in_blender_and_the_simulator(blank, path, base):
    """Every link where the simulator puts it at frame 1, the base where the file says (qpos, or the origin)."""
    require_corpus("robots")
    from rscene_addon.blender.scene_import import import_scene_file
    import_scene_file(str(path), bpy.context.scene)
    root = next(ob for ob in bpy.data.objects if rb.is_robot_root(ob))
    blender = _link_world_positions(root)
    scene = registry.read_scene(str(path))
    record = next(iter(scene.of("articulated")))
    system = ArticulatedSystem.from_record(scene, record)
    sim = {name: pose[:3, 3] for name, pose in system.link_poses().items()}
    if base is not None:
        np.testing.assert_allclose(blender[system.robot.root], base, atol=1e-6)
    for name, position in sim.items():
        np.testing.assert_allclose(blender[name], position, atol=1e-5, err_msg=name)
