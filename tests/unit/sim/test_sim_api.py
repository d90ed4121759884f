"""simulate(), Trajectory files, progress/cancel, the CLI function and determinism."""
from __future__ import annotations

import numpy as np
import pytest

from rscene_addon.commands.simulate_job import run_simulation_cli
from rscene_addon.sim import Cancelled, Trajectory, World, simulate
from tests.scenes import ground, header, obj, scene_from

# every test here runs on both physics backends (numpy reference, compiled numba kernels)
pytestmark = pytest.mark.usefixtures("sim_backend")

KEYS = ("time", "names", "position", "quaternion", "linear_velocity", "angular_velocity")


def _mixed_lines():
    return header(dt=1 / 240) + [
        ground(),
        obj("/World/Static", "box", pos=(3, 3, 0.5), mode="static"),
        obj("/World/Box", "box", pos=(0, 0, 1.0), quat=(0.9, 0.1, 0.3, 0.2), scale=(0.4, 0.3, 0.5)),
        obj("/World/Box2", "box", pos=(0.1, 0.05, 2.0), quat=(0.8, 0.3, 0.1, 0.5), scale=(0.3, 0.3, 0.3)),
        obj("/World/Ball", "sphere", pos=(0.1, 0.1, 3), radius=0.2),
        obj("/World/Capsule", "capsule", pos=(0.2, 0, 4), quat=(0.7, 0.7, 0, 0), radius=0.1, height=0.5),
        obj("/World/Cylinder", "cylinder", pos=(0, 0.2, 5), quat=(0.9, 0, 0.4, 0), radius=0.2, height=0.3),
        obj("/World/Carrier", "box", pos=(-2, 0, 0.2), scale=(0.5, 0.5, 0.4), mode="kinematic"),
        ("granular /World/Grains particles -1 -1 0 1 0 0 0 1 1 1 boxMin=-0.05,-0.05,0.1 boxMax=0.05,0.05,0.2 "
         "radius=0.01 spacing=0.025 normalStiffness=2e4 normalDamping=2 tangentialStiffness=5e3 "
         "normalContactModel=linear"),
        ("deformable /World/Sheet cloth - 1 -1 1 1 0 0 0 0.5 0.5 1 pinnedVertices=0 totalMass=0.1 "
         "iterations=5 particleSpacing=0.25"),
    ]


def test_trajectory_arrays_and_names():
    tr = simulate(scene_from(_mixed_lines()), 0.5, 20)
    F = 11
    assert tr.time.shape == (F,) and tr.time[0] == 0.0 and tr.time[-1] == pytest.approx(0.5)
    # the record paths of dynamic and kinematic bodies, in file order (static ones left out)
    assert tr.names.tolist() == ["/World/Box", "/World/Box2", "/World/Ball", "/World/Capsule",
                                 "/World/Cylinder",
                                 "/World/Carrier"]
    N = len(tr.names)
    assert tr.position.shape == (F, N, 3) and tr.quaternion.shape == (F, N, 4)
    assert tr.linear_velocity.shape == (F, N, 3) and tr.angular_velocity.shape == (F, N, 3)
    assert np.allclose(np.linalg.norm(tr.quaternion, axis=2), 1.0)
    assert tr.position[0, 0] == pytest.approx([0, 0, 1.0])
    assert tr.particles["/World/Grains"].shape[0] == F
    assert tr.cloth["/World/Sheet"].shape == (F, 25, 3)
    assert tr.substeps == 12 and tr.dt == pytest.approx(1 / 240)
    assert any(e["body_a"] == "/World/Ground" for e in tr.events)


def test_simulation_is_bit_identical_between_runs():
    scene = scene_from(_mixed_lines())
    a = simulate(scene, 1.0, 30)
    b = simulate(scene_from(_mixed_lines()), 1.0, 30)
    for key in KEYS[2:]:
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    assert np.array_equal(a.particles["/World/Grains"], b.particles["/World/Grains"])
    assert np.array_equal(a.cloth["/World/Sheet"], b.cloth["/World/Sheet"])
    assert [(e["time"], e["body_a"], e["body_b"]) for e in a.events] == \
           [(e["time"], e["body_a"], e["body_b"]) for e in b.events]


def test_npz_round_trip(tmp_path):
    tr = simulate(scene_from(_mixed_lines()), 0.2, 20)
    path = tmp_path / "traj.npz"
    tr.save_npz(str(path))
    with np.load(path, allow_pickle=False) as z:
        assert set(KEYS) <= set(z.files)
        assert z["names"].dtype.kind == "U"
        assert np.array_equal(z["position"], tr.position)
    back = Trajectory.load_npz(str(path))
    for key in KEYS:
        assert np.array_equal(getattr(back, key), getattr(tr, key)), key
    assert np.array_equal(back.particles["/World/Grains"], tr.particles["/World/Grains"])
    assert np.array_equal(back.cloth_faces["/World/Sheet"], tr.cloth_faces["/World/Sheet"])
    assert len(back.events) == len(tr.events)


def test_progress_and_cancel():
    scene = scene_from(header(dt=0.01) + [ground(), obj("/World/Box", "box", pos=(0, 0, 1))])
    seen = []
    simulate(scene, 1.0, 10, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 10
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        simulate(scene, 1.0, 10, cancel=cancel)
    assert len(calls) == 4


def test_substeps_argument_sets_the_time_step():
    scene = scene_from(header(dt=0.01) + [obj("/World/Ball", "sphere", pos=(0, 0, 10), radius=0.1)])
    tr = simulate(scene, 1.0, 25, substeps=8)
    assert tr.dt == pytest.approx(1 / 200) and tr.substeps == 8
    n = 200  # semi-implicit Euler after n steps
    assert tr.position[-1, 0, 2] == pytest.approx(10 - 9.81 * tr.dt ** 2 * n * (n + 1) / 2, abs=1e-9)


def test_cli_function_writes_the_npz(tmp_path):
    scene_path = tmp_path / "drop.rscene"
    lines = header(dt=0.005) + [ground(), obj("/World/Box", "box", pos=(0, 0, 1))]
    scene_path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out" / "traj.npz"
    lines = []
    code = run_simulation_cli(str(scene_path), 0.5, 20, str(out), print_fn=lines.append)
    assert code == 0
    assert out.exists()
    assert any("100%" in line for line in lines) and any("wrote" in line for line in lines)
    tr = Trajectory.load_npz(str(out))
    assert tr.names.tolist() == ["/World/Box"] and tr.position.shape == (11, 1, 3)
    assert run_simulation_cli(str(tmp_path / "missing.rscene"), 1, 10, str(out), print_fn=lines.append) != 0
    assert run_simulation_cli(str(scene_path), 1, 0, str(out), print_fn=lines.append) != 0


def test_world_api_state_and_errors():
    world = World.from_scene(scene_from(header() + [ground(), obj("/World/Box", "box", pos=(0, 0, 2))]))
    assert world.state.position.shape == (2, 3)
    world.step()
    assert world.time == pytest.approx(world.dt)
    with pytest.raises(KeyError):
        world.body_index("/World/Nope")
    with pytest.raises(ValueError):
        world.set_kinematic_pose("/World/Box", (0, 0, 0))
