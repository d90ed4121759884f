"""Blender and the simulator are two views of one scene: the same bodies at the same places, the same
particles, the same cloth vertices and pins, for every corpus scene and the spec's examples."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.blender import scene_import
from rscene_addon.formats import rscene
from rscene_addon.sim import World
from rscene_addon.sim import geometry as geo
from tests.corpus import RSCENE_FILES
from tests.unit.scene_geometry.test_record_geometry import HEADER, SPEC_DEFORMABLE, SPEC_GRANULAR

PLY_SHEET = ("ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\nproperty float z\n"
             "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
             "0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 0.5 0\n4 0 1 2 3\n3 1 4 2\n")
SPEC_LINES = [
    "object /World/Ground ground 0 0 0 1 0 0 0 10 10 1 0.5 1 1 default - false true false - static true 1 "
    "18446744073709551615",
    "object /World/Crate box 0.5 0 0.25 0.9238795 0 0 0.3826834 0.5 0.6 0.7 0.5 1 1 default - false true false "
    "- dynamic true 1 18446744073709551615",
    "object /World/Ball sphere 2 0 1 1 0 0 0 2 2 2 0.25 1 1 default - false true false - dynamic true 1 "
    "18446744073709551615",
    "object /World/Can cylinder 3 0 1 1 0 0 0 2 2 3 0.1 0.4 1 default - false true false - dynamic true 1 "
    "18446744073709551615",
    "object /World/Pill capsule 4 0 1 1 0 0 0 1 1 2 0.1 0.3 1 default - false true false - dynamic true 1 "
    "18446744073709551615",
    SPEC_GRANULAR,
    SPEC_DEFORMABLE,
    "deformable /World/Sheet cloth sheet.ply 0 0 1 0.7071068 0.7071068 0 0 2 2 2 pinnedVertices=4,1",
    "granular /World/Scaled particles 1 2 3 0.7071068 0 0 0.7071068 1 2 0.5 boxMin=-0.1,-0.1,0 "
    "boxMax=0.1,0.1,0.05 radius=0.01 spacing=0.05",
]


def _spec_scene(tmp_path):
    (tmp_path / "sheet.ply").write_text(PLY_SHEET)
    path = tmp_path / "spec.rscene"
    path.write_text(HEADER + "\n".join(SPEC_LINES) + "\n")
    return path


def _world_points(ob):
    co = np.array([v.co for v in ob.data.vertices], dtype=np.float64).reshape(-1, 3)
    m = np.array(ob.matrix_world, dtype=np.float64)
    return co @ m[:3, :3].T + m[:3, 3]


SIZED = (geo.BOX, geo.SPHERE, geo.CYLINDER, geo.CAPSULE)


def _extent(model, g):
    """Full extent (x, y, z) of geom ``g`` in its body's frame (geom_size: box half extents; sphere r;
    cylinder and capsule r, half height)."""
    size, kind = model.geom_size[g], model.geom_type[g]
    if kind == geo.BOX:
        return 2 * size
    if kind == geo.SPHERE:
        return np.full(3, 2 * size[0])
    if kind == geo.CYLINDER:
        return np.array([2 * size[0], 2 * size[0], 2 * size[1]])
    return np.array([2 * size[0], 2 * size[0], 2 * size[1] + 2 * size[0]])  # capsule: caps included


def _assert_views_agree(path):
    import bpy

    scene_import.import_scene_file(str(path), bpy.context.scene, report=lambda *a: None)
    bpy.context.view_layer.update()
    objects = {ob.rscene.path: ob for ob in bpy.data.objects if ob.rscene.kind}
    world = World.from_scene(rscene.read(str(path)))
    model, state = world.model, world.state
    for i, name in enumerate(model.body_name):
        if name in objects:
            position, _ = world.body_pose(name)
            ob = objects[name]
            np.testing.assert_allclose(np.array(ob.matrix_world.translation), position, atol=1e-5, err_msg=name)
            geoms = np.flatnonzero(model.geom_body == i)
            if len(geoms) == 1 and ob.type == "MESH" and model.geom_type[geoms[0]] in SIZED:
                # the Blender mesh's extent (object scale included) is the simulator's geom
                np.testing.assert_allclose(np.array(ob.dimensions), _extent(model, geoms[0]), rtol=1e-4,
                                           atol=1e-6, err_msg=name)
    for spec, particles in zip(model.granular, state.particles):
        ob = objects[spec.name]
        assert len(ob.data.vertices) == len(particles), spec.name
        np.testing.assert_allclose(_world_points(ob), particles, atol=1e-5, err_msg=spec.name)
    for spec in model.cloth:
        ob = objects[spec.name]
        assert len(ob.data.vertices) == len(spec.vertices), spec.name
        np.testing.assert_allclose(_world_points(ob), spec.vertices, atol=1e-5, err_msg=spec.name)
        group = ob.vertex_groups["pinned"].index
        pinned = [v.index for v in ob.data.vertices if any(g.group == group for g in v.groups)]
        assert pinned == np.flatnonzero(spec.inv_mass == 0).tolist(), spec.name
        faces = {tuple(sorted(p.vertices)) for p in ob.data.polygons}
        assert faces == {tuple(sorted(f)) for f in spec.faces.tolist()}, spec.name
    return model


def test_spec_examples_agree(blank, tmp_path):
    model = _assert_views_agree(_spec_scene(tmp_path))
    assert [len(g.positions) for g in model.granular] == [19200, 4 * 4]  # both views, one count
    assert [len(c.vertices) for c in model.cloth] == [21 * 21, 5]


@pytest.mark.parametrize("path", RSCENE_FILES, ids=lambda p: p.name)
def test_corpus_scenes_agree(blank, path):
    _assert_views_agree(path)
