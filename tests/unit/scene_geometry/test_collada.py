"""scene_geometry/collada.py against the COLLADA meshes RaiSim ships (Laikago, ANYmal C, corpus robots/).

The truth for each file is counted straight from its XML with ElementTree, not through pycollada: the
triangles every ``<instance_geometry>`` of the visual scene draws (``<triangles count>``, ``<polylist>``
``vcount - 2`` per polygon, ``<polygons>`` ``<p>`` length / inputs - 2), and the extent of the raw positions
times ``<unit meter>``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from rscene_addon.scene_geometry import collada
from rscene_addon.scene_geometry.mesh_files import MeshFormatError, read_mesh
from tests.collada_truth import NS, count_triangles
from tests.corpus import CORPUS, require_corpus

pytest.importorskip("collada", reason="pycollada is installed by scripts/setup.sh from the shipped wheels")

RSC = CORPUS / "robots" / "raisimTech-raisim2Lib" / "rsc"
DAE_FILES = sorted(RSC.rglob("*.dae"))


def _unit(path: Path) -> float:
    unit = ET.parse(path).getroot().find(f"{NS}asset/{NS}unit")
    return float(unit.get("meter")) if unit is not None else 1.0


def test_corpus_has_the_robot_meshes():
    require_corpus("robots")
    assert len(DAE_FILES) >= 27


@pytest.mark.parametrize("path", DAE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_triangle_count_equals_the_files_own(path):
    mesh = collada.read_collada(str(path))
    assert len(mesh.triangles) == count_triangles(path)
    assert mesh.triangles.min() >= 0 and mesh.triangles.max() < len(mesh.vertices)
    assert len(mesh.material_index) == len(mesh.triangles)
    assert mesh.material_index.max() < len(mesh.materials)


def test_laikago_trunk_in_metres():
    """trunk.dae is in inches (<unit meter="0.0254">) with an identity node: its extent in metres is the
    raw positions' extent times 0.0254 (about 0.59 m long, the real Laikago's body)."""
    path = RSC / "laikago" / "trunk.dae"
    root = ET.parse(path).getroot()
    raw = np.concatenate([np.array(a.text.split(), dtype=float).reshape(-1, 3)
                          for a in root.iter(f"{NS}float_array") if a.get("id", "").endswith("positions")
                          or "position" in a.get("id", "").lower()])
    mesh = collada.read_collada(str(path))
    extent = mesh.vertices.max(0) - mesh.vertices.min(0)
    assert _unit(path) == pytest.approx(0.0254)
    np.testing.assert_allclose(extent, (raw.max(0) - raw.min(0)) * 0.0254, rtol=1e-6)  # the file's float32
    assert 0.5 < extent[0] < 0.7


def test_anymal_textures_resolve_beside_the_mesh():
    mesh = collada.read_collada(str(RSC / "anymal_c" / "meshes" / "base.dae"))
    textures = {Path(m.texture).name for m in mesh.materials if m.texture}
    assert "base.jpg" in textures
    assert all(Path(m.texture).is_file() for m in mesh.materials if m.texture)
    assert mesh.uvs is not None and mesh.uvs.shape == (len(mesh.triangles), 3, 2)
    assert mesh.normals is not None and mesh.normals.shape == (len(mesh.triangles), 3, 3)


def test_realsense_texture_one_folder_up():
    mesh = collada.read_collada(str(RSC / "anymal_c" / "meshes" / "realsense.dae"))
    assert [Path(m.texture).name for m in mesh.materials if m.texture] == ["realsense_diffuse.png"]
    assert Path(mesh.materials[0].texture).is_file()


def test_laikago_colours_from_the_effects():
    mesh = collada.read_collada(str(RSC / "laikago" / "trunk.dae"))
    colours = {tuple(round(c, 3) for c in m.rgba[:3]) for m in mesh.materials}
    assert (0.933, 0.392, 0.212) in colours    # Laikago's orange, as the file's <diffuse> says


def test_read_mesh_reads_dae_for_the_simulator():
    verts, tris = read_mesh(str(RSC / "anymal_c" / "meshes" / "3_0_collision.dae"))
    assert tris.shape == (count_triangles(RSC / "anymal_c" / "meshes" / "3_0_collision.dae"), 3)
    assert verts.shape[1] == 3


Y_UP_DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.5"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="9">0 0 0 1 0 0 0 2 0</float_array>
      <technique_common><accessor source="#pa" count="3" stride="3"><param name="X" type="float"/>
      <param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n">
    <translate>0 0 4</translate><instance_geometry url="#g"/></node>
    <node id="n2"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""


def test_up_axis_unit_and_node_transforms(tmp_path):
    """COLLADA spec: Y_UP turns +Y into +Z (x, y, z) -> (x, -z, y); <unit meter> scales; each node instance
    draws its geometry under its own transform (two instances, two triangles)."""
    path = tmp_path / "yup.dae"
    path.write_text(Y_UP_DAE)
    mesh = collada.read_collada(str(path))
    assert len(mesh.triangles) == 2
    corners = mesh.vertices[mesh.triangles]
    shifted = [c for c in corners if np.allclose(c[0], [0.0, -2.0, 0.0])]   # translate z=4 -> y=-4 * 0.5
    assert len(shifted) == 1
    np.testing.assert_allclose(shifted[0], [[0, -2, 0], [0.5, -2, 0], [0, -2, 1.0]], atol=1e-12)


def test_malformed_and_special_files_are_mesh_format_errors(tmp_path):
    bad = tmp_path / "bad.dae"
    bad.write_text("<COLLADA><library_geometries><geometry")
    with pytest.raises(MeshFormatError, match="bad.dae"):
        collada.read_collada(str(bad))
    with pytest.raises(MeshFormatError, match="not a regular file"):
        collada.read_collada(str(tmp_path))


def test_without_pycollada_the_error_says_what_is_missing(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "collada", None)
    path = tmp_path / "x.dae"
    path.write_text(Y_UP_DAE)
    with pytest.raises(MeshFormatError, match="pycollada"):
        collada.read_collada(str(path))


def test_collision_meshes_in_dae_reach_the_simulator_as_hull_points(tmp_path):
    """A link colliding with RaiSim's 3_0_collision.dae (ANYmal C's shell): the simulator's contact points of
    that link are extreme vertices of the file's triangles (corners of its convex hull), as RaiSim uses a
    collision mesh's convex hull."""
    from rscene_addon.formats.urdf import read_robot
    from rscene_addon.sim.link_points import contact_points

    dae = RSC / "anymal_c" / "meshes" / "3_0_collision.dae"
    urdf = tmp_path / "shell.urdf"
    urdf.write_text(f'''<robot name="shell"><link name="shell"><collision><origin xyz="0.1 0 0.2"/>
        <geometry><mesh filename="{dae}"/></geometry></collision></link></robot>''')
    link = read_robot(str(urdf)).links["shell"]
    verts = collada.read_collada(str(dae)).vertices
    pts = contact_points(link)[:, :3] - np.array([0.1, 0.0, 0.2])
    assert len(pts) >= 8
    dist = np.linalg.norm(pts[:, None, :] - verts[None, :, :], axis=2).min(axis=1)
    assert dist.max() < 1e-9
    for axis in range(3):
        assert np.isclose(pts[:, axis].max(), verts[:, axis].max())
        assert np.isclose(pts[:, axis].min(), verts[:, axis].min())
