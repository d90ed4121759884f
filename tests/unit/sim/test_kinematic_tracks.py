"""A kinematic body driven by a per-frame track follows it exactly at every recorded frame."""
import numpy as np
import pytest

from rscene_addon.formats import rscene
from rscene_addon.sim import simulate

SCENE = """raisim_engine_scene 2
gravity 0 0 -9.81
object /World/Ground ground 0 0 0 1 0 0 0 10 10 1 0.5 1 1 default - false true false - static true 1 18446744073709551615
object /World/Pusher box -1 0 0.25 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - kinematic true 1 18446744073709551615
object /World/Crate box 0.5 0 0.25 1 0 0 0 0.5 0.5 0.5 0.5 1 1 default - false true false - dynamic true 1 18446744073709551615
"""


def test_kinematic_body_follows_its_track_and_pushes():
    scene = rscene.loads(SCENE)
    fps, frames = 30, 31
    t = np.arange(frames) / fps
    positions = np.stack([-1.0 + 1.5 * t, np.zeros(frames), np.full(frames, 0.25)], axis=1)  # 1.5 m/s along x
    angle = 0.5 * t  # and turning about z at 0.5 rad/s
    quaternions = np.stack([np.cos(angle / 2), 0 * t, 0 * t, np.sin(angle / 2)], axis=1)
    trajectory = simulate(scene, (frames - 1) / fps, fps, kinematic_tracks={"/World/Pusher": (positions, quaternions)})
    i = trajectory.index("/World/Pusher")
    assert trajectory.position[:, i] == pytest.approx(positions, abs=1e-6)
    q = trajectory.quaternion[:, i] * np.sign(trajectory.quaternion[:, i, :1])
    assert q == pytest.approx(quaternions, abs=1e-6)
    crate = trajectory.index("/World/Crate")
    assert trajectory.position[-1, crate, 0] > 0.6  # pushed along +x


def test_a_short_track_is_rejected():
    scene = rscene.loads(SCENE)
    with pytest.raises(ValueError, match="Pusher"):
        simulate(scene, 1.0, 10, kinematic_tracks={"/World/Pusher": (np.zeros((3, 3)), np.zeros((3, 4)))})
