"""Records to geometry, against the spec's own examples (../shared/seeds/rscene_format_v1.txt) and files
written here by hand; and the simulator builds exactly that geometry."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.scene_geometry.cloth_mesh import cloth_mesh
from rscene_addon.scene_geometry.mesh_files import MeshFormatError, read_rasset
from rscene_addon.scene_geometry.particles import granular_particles
from rscene_addon.sim import World

HEADER = "raisim_engine_scene 2\ngravity 0 0 -9.81\n"
# The spec's examples, verbatim but for the line continuations.
SPEC_GRANULAR = (
    "granular /World/Sandbox/Sand particles 0 0 0 1 0 0 0 1 1 1 id=granular_sand parentGroupId=folder_sandbox "
    "positions= radii= boxMin=-0.5,-0.5,0.0 boxMax=0.5,0.5,0.3 radius=0.01 spacing=0.025 maxParticles=20000 "
    "velocity=0,0,0 angularVelocity=0,0,0 materialId=0 fixed=false density=1600 normalStiffness=1e6 "
    "normalDamping=200 tangentialStiffness=1e5 tangentialDamping=20 friction=0.6 rollingFriction=0.05 "
    "cohesionStiffness=0 cohesionMaxDistance=0 normalContactModel=hertz substeps=2 visible=true")
SPEC_DEFORMABLE = (
    "deformable /World/Props/Flag cloth meshes/flag.obj 2 0 1.8 1 0 0 0 1 1 1 id=deformable_flag "
    "parentGroupId=folder_props pinnedVertices=0,1,2,3 scale=1 totalMass=0.2 distanceCompliance=0 "
    "distanceStiffness=1000 bendCompliance=0 bendStiffness=100 youngsModulus=0 poissonRatio=0.3 "
    "thickness=0.002 damping=0.01 collisionRadius=0.01 iterations=20 substeps=1 solverMode=xpbd "
    "particleMode=skinned particleSpacing=0.05 contactMaterial=default material=mat_fabric visible=true "
    "collidable=true collisionGroup=1 collisionMask=18446744073709551615")


def _scene(tmp_path, *lines):
    path = tmp_path / "scene.rscene"
    path.write_text(HEADER + "\n".join(lines) + "\n")
    return rscene.read(str(path))


def test_spec_granular_fills_its_box_without_overlap(tmp_path):
    scene = _scene(tmp_path, SPEC_GRANULAR)
    layout = granular_particles(scene.of("granular")[0])
    # centres inset by the radius: 0.98 / 0.025 -> 40 per side, 0.28 / 0.025 -> 12 layers
    assert len(layout.positions) == 40 * 40 * 12 == 19200
    jitter = 0.05 * (0.025 - 0.02 + 0.002)
    assert np.all(layout.positions >= np.array([-0.49, -0.49, 0.01]) - jitter - 1e-12)
    assert np.all(layout.positions <= np.array([0.49, 0.49, 0.29]) + jitter + 1e-12)
    first = layout.positions[:2]
    assert np.linalg.norm(first[1] - first[0]) >= 0.02  # no overlap at rest
    np.testing.assert_array_equal(layout.radii, 0.01)
    world = World.from_scene(scene)
    np.testing.assert_array_equal(world.state.particles[0], layout.positions)  # identity pose


def test_granular_cap_and_huge_box_stay_small(tmp_path):
    scene = _scene(tmp_path, "granular /World/Dune particles 0 0 0 1 0 0 0 1 1 1 boxMin=-500,-500,0 "
                             "boxMax=500,500,100 radius=0.001 spacing=0.002 maxParticles=1000")
    layout = granular_particles(scene.of("granular")[0])
    assert len(layout.positions) == 1000
    assert any("capped at maxParticles=1000" in w for w in layout.warnings)
    # x fastest: the first 1000 particles are one row along x
    np.testing.assert_allclose(np.diff(layout.positions[:, 0]), 0.002, atol=2e-4)


def test_explicit_particles_win_over_the_box(tmp_path):
    scene = _scene(tmp_path, "granular /World/P particles 0 0 1 1 0 0 0 2 2 2 positions=0,0,0;0.1,0,0 "
                             "radii=0.02,0.03")
    layout = granular_particles(scene.of("granular")[0])
    np.testing.assert_array_equal(layout.positions, [[0, 0, 0], [0.1, 0, 0]])
    np.testing.assert_array_equal(layout.radii, [0.02, 0.03])
    world = World.from_scene(scene)
    np.testing.assert_allclose(world.state.particles[0], [[0, 0, 1], [0.2, 0, 1]])  # scaled 2, lifted 1


def test_spec_deformable_without_its_file_is_a_grid_pinned_on_its_first_row(tmp_path):
    scene = _scene(tmp_path, SPEC_DEFORMABLE)
    cloth = cloth_mesh(scene.of("deformable")[0], scene.resolve)
    assert not cloth.from_file and any("flag.obj" in w for w in cloth.warnings)
    assert len(cloth.vertices) == 21 * 21  # 1 m at 0.05 m
    assert len(cloth.faces) == 2 * 20 * 20
    np.testing.assert_array_equal(cloth.pinned, [0, 1, 2, 3])
    np.testing.assert_allclose(cloth.vertices[:4], [[-0.5, -0.5, 0], [-0.45, -0.5, 0], [-0.4, -0.5, 0],
                                                    [-0.35, -0.5, 0]], atol=1e-12)
    world = World.from_scene(scene)
    spec = world.model.cloth[0]
    np.testing.assert_array_equal(np.flatnonzero(spec.inv_mass == 0), [0, 1, 2, 3])
    np.testing.assert_allclose(spec.vertices, cloth.vertices + [2, 0, 1.8])


def test_fine_cloth_spacing_is_bounded_with_a_warning(tmp_path):
    scene = _scene(tmp_path, "deformable /World/C cloth - 0 0 1 1 0 0 0 1 1 1 particleSpacing=0.001 "
                             "pinnedVertices=0,2000")
    cloth = cloth_mesh(scene.of("deformable")[0], scene.resolve)
    assert len(cloth.vertices) == 41 * 41
    assert any("41 x 41" in w for w in cloth.warnings)
    assert any("1 pinned vertices are out of range" in w for w in cloth.warnings)
    np.testing.assert_array_equal(cloth.pinned, [0])


def test_ply_cloth_is_the_file_in_both(tmp_path):
    (tmp_path / "sheet.ply").write_text(
        "ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\nproperty float z\n"
        "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
        "0 0 0\n1 0 0\n1 1 0\n0 1 0\n2 0.5 0\n4 0 1 2 3\n3 1 4 2\n")
    scene = _scene(tmp_path, "deformable /World/Sheet cloth sheet.ply 0 0 1 1 0 0 0 1 1 1 pinnedVertices=4")
    cloth = cloth_mesh(scene.of("deformable")[0], scene.resolve)
    assert cloth.from_file and cloth.warnings == []
    np.testing.assert_array_equal(cloth.vertices, [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0.5, 0]])
    np.testing.assert_array_equal(cloth.faces, [[0, 1, 2], [0, 2, 3], [1, 4, 2]])
    spec = World.from_scene(scene).model.cloth[0]
    np.testing.assert_array_equal(np.flatnonzero(spec.inv_mass == 0), [4])
    np.testing.assert_allclose(spec.vertices, cloth.vertices + [0, 0, 1])


def test_rasset_visual_and_shapes_and_a_clear_error(tmp_path):
    (tmp_path / "rock.rasset").write_text(
        '<rasset><visual file="rock.glb"/><collision type="sphere" radius="0.5" position="0 0 1"/></rasset>')
    asset = read_rasset(str(tmp_path / "rock.rasset"))
    assert asset.visual == str(tmp_path / "rock.glb")
    assert [(s.type, s.radius, s.position) for s in asset.shapes] == [("sphere", 0.5, (0.0, 0.0, 1.0))]
    (tmp_path / "bad.rasset").write_text("<rasset><collision type='box'")
    with pytest.raises(MeshFormatError, match="bad.rasset"):
        read_rasset(str(tmp_path / "bad.rasset"))
