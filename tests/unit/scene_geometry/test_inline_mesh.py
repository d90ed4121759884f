"""A CoppeliaSim shape with inline ``<vertices>``/``<indices>`` (the manual's "mesh, with inlined mesh data"):
the pure reader gives the file's own numbers, they survive .rscene and XML round trips, and the simulator
collides with that mesh, not a placeholder box. Truth: the numbers written in the test file, and a cube's
rest height on a plane."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rscene_addon.formats import coppelia_xml, rscene
from rscene_addon.model import new_record
from rscene_addon.scene_geometry.inline_mesh import inline_mesh
from rscene_addon.scene_geometry.mesh_files import MeshFormatError
from rscene_addon.sim import World

FILE = Path(__file__).resolve().parents[1] / "formats" / "data" / "inline_mesh.simscene.xml"


def _file_numbers(tag: str) -> np.ndarray:
    """The numbers between <tag> and </tag> in the file, read with a regular expression (not the reader)."""
    text = re.search(rf"<{tag}>([^<]*)</{tag}>", FILE.read_text()).group(1)
    return np.array([float(t) for t in text.split()])


def test_the_reader_gives_the_vertices_and_triangles_of_the_file():
    crate = coppelia_xml.read(str(FILE)).by_path("/World/crate")
    vertices, triangles = inline_mesh(crate)
    np.testing.assert_array_equal(vertices, _file_numbers("vertices").reshape(-1, 3))
    np.testing.assert_array_equal(triangles, _file_numbers("indices").astype(int).reshape(-1, 3))
    assert vertices.shape == (8, 3) and triangles.shape == (12, 3)


def test_the_mesh_survives_rscene_and_xml_round_trips():
    scene = coppelia_xml.read(str(FILE))
    expected = inline_mesh(scene.by_path("/World/crate"))
    again = rscene.loads(rscene.dumps(scene))
    for got in (inline_mesh(again.by_path("/World/crate")),
                inline_mesh(coppelia_xml.loads(coppelia_xml.dumps(again)[0]).by_path("/World/crate"))):
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])


def test_a_record_without_its_own_mesh_has_none():
    assert inline_mesh(new_record("object", path="/World/m", primitive="mesh", mesh="a.obj")) is None


@pytest.mark.parametrize("vertices, indices, words", [
    ("0,0,0,1,0", "0,1,2", "x y z per vertex"),
    ("0,0,0,1,0,0,0,1,0", "0,1,3", "names a vertex that does not exist (3 vertices)"),
    ("0,0,0,1,0,0,0,1,0", "0,1,1.5", "names a vertex that does not exist"),
    ("0,0,0,1,0,0,0,x,0", "0,1,2", "meshVertices is not a list of numbers"),
    ("0,0,0,1,0,0,0,inf,0", "0,1,2", "not a finite number"),
])
def test_malformed_lists_name_the_record(vertices, indices, words):
    record = new_record("object", path="/World/bad", primitive="mesh")
    record.set("meshVertices", vertices)
    record.set("meshIndices", indices)
    with pytest.raises(MeshFormatError, match=re.escape(words)) as info:
        inline_mesh(record)
    assert str(info.value).startswith("/World/bad: ")


def test_the_simulator_collides_with_the_inline_mesh():
    """The 0.1 m crate dropped from 0.3 m comes to rest on the plane at half its height (a placeholder box
    from its unit scale would rest at 0.5 m)."""
    world = World.from_scene(coppelia_xml.read(str(FILE)), backend="numpy")  # the reference path
    for _ in range(int(round(1.5 / world.dt))):
        world.step()
    position, _ = world.body_pose("/World/crate")
    assert position[2] == pytest.approx(0.05, abs=2e-3)
    assert np.hypot(position[0], position[1]) < 1e-3


def _compound_xml() -> str:
    """The test file with its crate made a compound: the inline cube 0.2 m along x beside a 0.1 m cuboid."""
    text = FILE.read_text()
    mesh = re.search(r"<mesh>.*?</mesh>", text, re.S).group(0)
    part = mesh.replace("<position>0 0 0</position>", "<position>0.2 0 0</position>")
    cuboid = "<primitive><type>cuboid</type><size>0.1 0.1 0.1</size></primitive>"
    return text.replace(mesh, f"<compound>{part}{cuboid}</compound>")


def test_a_compound_part_with_inline_triangles():
    scene = coppelia_xml.loads(_compound_xml())
    (part,) = [c for c in scene.of("compound_child") if c.get("primitive") == "mesh"]
    vertices, triangles = inline_mesh(part)
    np.testing.assert_array_equal(vertices, _file_numbers("vertices").reshape(-1, 3))
    assert tuple(part.get("position")) == (0.2, 0.0, 0.0)
    text, warnings = coppelia_xml.dumps(scene)
    assert not any("mesh part" in w for w in warnings)
    (again,) = [c for c in coppelia_xml.loads(text).of("compound_child") if c.get("primitive") == "mesh"]
    np.testing.assert_array_equal(inline_mesh(again)[1], triangles)
    world = World.from_scene(scene, backend="numpy")
    for _ in range(int(round(1.5 / world.dt))):
        world.step()
    position, _ = world.body_pose("/World/crate")
    assert position[2] == pytest.approx(0.05, abs=2e-3)  # both parts 0.1 m tall (a box from a unit scale: 0.5)
