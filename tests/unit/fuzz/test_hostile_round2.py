"""The hostile inputs of issue #29 (an independent fuzzer and hand-made files), one test each: a clear
error naming the file, or correct acceptance, in bounded time and memory.

Hang guards run under an alarm (``_within``): a regression fails the test instead of hanging the suite.
"""
from __future__ import annotations

import json
import os
import re
import signal
import struct
import zlib

import numpy as np
import pytest

from rscene_addon.base import files
from rscene_addon.formats import jsonc, mjcf, png, registry, rscene, urdf, xmltree
from rscene_addon.model import FormatError, Scene, new_record
from tests import corpus

AIRSIM = corpus.CORPUS / "airsim" / "iamaisim-ProjectAirSim" / "client" / "python" / "example_user_scripts" \
    / "sim_config"


class _Hang(BaseException):
    pass


def _within(seconds: float, call, *args):
    """``call(*args)``, failing the test (not hanging it) when it runs past ``seconds``."""
    def alarm(signum, frame):
        raise _Hang(f"ran past {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _refused(path, named=None) -> FormatError:
    """The FormatError of reading ``path``; its first diagnostic names ``named`` (default: ``path``)."""
    with pytest.raises(FormatError) as info:
        _within(30, registry.read_scene, str(path))
    assert os.path.basename(str(named or path)) in info.value.diagnostics[0].file, info.value
    return info.value


# -- the regex hangs ------------------------------------------------------------------------------------

_OLD_NOISE = re.compile(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", re.DOTALL)
_OLD_ROOT = re.compile(r"<([A-Za-z_][\w.:-]*)")


def test_xml_root_name_is_the_old_regex_answer():
    """The linear scan finds what the quadratic regex found, on every mix of openers and closers."""
    pieces = ["<?", "?>", ">", "<!--", "-->", "<!DOCTYPE", "<a", "<b:c", "x", "-", "<", "!", "\n"]
    rng = np.random.default_rng(3)
    for _ in range(5000):
        text = "".join(rng.choice(pieces, rng.integers(0, 14)))
        match = _OLD_ROOT.search(_OLD_NOISE.sub(" ", text))
        assert registry.xml_root_name(text) == (match.group(1) if match else None), text


@pytest.mark.parametrize("opener", ["<?x", "<!--", "<?xml", "<!DOCTYPE"])
def test_runs_of_unclosed_openers_are_read_in_bounded_time(tmp_path, opener):
    """120 kB of '<?x' cost the regex 17.8 CPU-s (a MiB: minutes); now a clean answer at once."""
    path = tmp_path / "runs.urdf"
    path.write_text(opener * 40000 + '<robot name="r"><link name="a"/></robot>\n')
    try:
        _within(20, registry.read_scene, str(path))
    except FormatError as exc:
        assert "runs.urdf" in exc.diagnostics[0].file


def test_xml_declarations_match_the_old_regex():
    old = re.compile(r"<\?xml[^>]*\?>")
    rng = np.random.default_rng(5)
    pieces = ["<?xml", "?>", ">", "a", "\n", "?", "<?xm"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces, rng.integers(0, 20)))
        assert list(xmltree.declarations(text)) == [m.span() for m in old.finditer(text)], text


# -- type confusion and numbers -------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, message", [
    ("links", 1, "'links' must be a list, got a number"),
    ("joints", True, "'joints' must be a list, got a boolean"),
    ("capture-settings", 1.5, "'capture-settings' must be a list, got a number"),
])
def test_airsim_wrong_json_type_is_the_config_files_error(tmp_path, key, value, message):
    corpus.require_corpus("airsim")
    config = json.loads(jsonc.strip_comments((AIRSIM / "robot_quadrotor_fastphysics.jsonc").read_text()))
    if key == "capture-settings":
        camera = next(s for s in config["sensors"] if s.get("type") == "camera")
        camera[key] = value
    else:
        config[key] = value
    (tmp_path / "robot.jsonc").write_text(json.dumps(config, indent=1))
    scene = tmp_path / "scene.jsonc"
    scene.write_text(json.dumps({"actors": [{"type": "robot", "name": "drone", "robot-config": "robot.jsonc"}]}))
    error = _refused(scene, tmp_path / "robot.jsonc")
    hits = [d for d in error.diagnostics if message in d.message]
    assert hits and hits[0].file.endswith("robot.jsonc") and hits[0].line > 0, error


def test_airsim_config_error_is_reported_once_however_many_actors_name_it(tmp_path):
    """10^5 actors naming one bad config made 10^5 copies of its error (and minutes of printing)."""
    (tmp_path / "robot_bad.jsonc").write_text('{"links": 1}\n')
    actors = [{"type": "robot", "name": f"a{i}", "robot-config": "robot_bad.jsonc"} for i in range(50)]
    path = tmp_path / "many.jsonc"
    path.write_text(json.dumps({"id": "s", "actors": actors}))
    error = _refused(path, tmp_path / "robot_bad.jsonc")
    assert len(error.diagnostics) == 1 and "'links' must be" in error.diagnostics[0].message


def test_rscene_version_with_400_leading_zeros_is_version_2(tmp_path):
    path = tmp_path / "zeros.rscene"
    path.write_text("raisim_engine_scene " + "0" * 400 + "2\nasset_root assets\n")
    scene = registry.read_scene(str(path))
    assert scene.version == 2


def test_coppelia_resolution_out_of_range_fails_validate_not_convert(tmp_path):
    path = tmp_path / "cam.simscene.xml"
    path.write_text("<CoppeliaSim>\n<filetype>simpleScene</filetype>\n<camera><name>c</name>"
                    "<resolution>-2147483649 480</resolution></camera>\n</CoppeliaSim>\n")
    error = _refused(path)
    assert "width" in str(error) and "out of range" in str(error)


# -- special files and size caps ------------------------------------------------------------------------

def test_fifo_device_and_folder_are_refused_before_open(tmp_path):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "FIFO"), ("/dev/zero", "character device"), (tmp_path, "folder")):
        with pytest.raises(files.FileRefused, match=kind):
            _within(10, files.read_bytes, str(path))


def test_oversized_file_is_refused_unread(tmp_path):
    path = tmp_path / "huge.rscene"
    with open(path, "wb") as handle:  # sparse: 65 MiB on paper, nothing on disk
        handle.truncate(files.DEFAULT_LIMIT + 1)
    error = _refused(path)
    assert "larger than the 64 MiB limit" in str(error)


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_height_map_png_naming_a_fifo_or_dev_zero(tmp_path, target):
    if target == "fifo":
        target = str(tmp_path / "map.png")
        os.mkfifo(target)
    path = tmp_path / "world.xml"
    path.write_text(f'<raisim version="1.0"><objects><heightmap name="t" png="{target}" x_size="5" y_size="5" '
                    'center_x="0" center_y="0" z_offset="0" z_scale="1"/></objects></raisim>\n')
    error = _refused(path)
    assert "not a regular file" in str(error)


def test_raisim_urdf_path_naming_dev_zero_fails_validate(tmp_path):
    """Not only the robot loader (later, at simulate) but the world's own reading refuses a device."""
    path = tmp_path / "robot.xml"
    path.write_text('<raisim version="1.0"><objects>\n<articulatedSystem name="r" urdfPath="/dev/zero"/>'
                    "</objects></raisim>\n")
    error = _refused(path)
    assert error.first.line == 2 and "/dev/zero is not a regular file" in error.first.message


def test_simulate_out_of_memory_is_a_clean_error(tmp_path, monkeypatch):
    """A scene whose simulation cannot get its arrays (a granular fill's neighbour pairs took 2.2 GiB under a
    4 GiB limit) ends with an error naming the scene, exit 1, nothing written; no traceback."""
    from rscene_addon.commands import simulate_job

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 2.17 GiB for an array with shape (291745536,)")
    monkeypatch.setattr(simulate_job, "simulate", no_memory)
    path = tmp_path / "sand.rscene"
    path.write_text("raisim_engine_scene 2\n")
    lines: list[str] = []
    out = tmp_path / "out.npz"
    assert simulate_job.run_simulation_cli(str(path), 0.1, 30, str(out), backend="numpy",
                                           print_fn=lines.append) == 1
    assert any(line.startswith(f"error: {path}: simulation needs more memory") for line in lines), lines
    assert not out.exists()


def test_urdf_path_naming_dev_zero_is_refused():
    with pytest.raises(FormatError, match="not a regular file"):
        _within(10, urdf.read_robot, "/dev/zero")


def test_include_bomb_stops_at_the_budget(tmp_path):
    """Ten includes of a file that includes ten of the next, four levels: 10,000 includes, each level
    within the depth limit."""
    (tmp_path / "leaf.xml").write_text('<raisim><objects><sphere name="s" mass="1"><dim radius="0.1"/>'
                                       '</sphere></objects></raisim>\n')
    below = "leaf.xml"
    for level in range(4):
        name = f"level{level}.xml"
        (tmp_path / name).write_text("<raisim>" + f'<include file="{below}"/>' * 10 + "</raisim>\n")
        below = name
    path = tmp_path / "world.xml"
    path.write_text('<raisim version="1.0">' + f'<include file="{below}"/>' * 10 + "</raisim>\n")
    error = _refused(path, tmp_path / "level0.xml")  # the include where the budget ran out
    assert "more than 1000 includes" in str(error)


# -- correct acceptance ---------------------------------------------------------------------------------

# The PNG specification's figure of the seven Adam7 passes over each 8x8 block (row by row).
_ADAM7_FIGURE = ("16462646", "77777777", "56565656", "77777777", "36463646", "77777777", "56565656", "77777777")


def _interlaced_png(image: np.ndarray) -> bytes:
    """An 8-bit grey interlaced PNG of ``image``, its passes taken from the specification's figure."""
    height, width = image.shape
    raw = bytearray()
    for p in "1234567":
        rows = [[image[y, x] for x in range(width) if _ADAM7_FIGURE[y % 8][x % 8] == p] for y in range(height)]
        for row in (r for r in rows if r):
            raw += bytes([0]) + bytes(int(v) for v in row)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw)))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("size", [(1, 1), (5, 3), (8, 8), (13, 17), (31, 9)])
def test_adam7_interlaced_png_reads_back(size):
    height, width = size
    image = (np.arange(height * width).reshape(height, width) * 7 % 256).astype(np.uint8)
    assert np.array_equal(png.decode_grey(_interlaced_png(image)), image)


def test_mjcf_include_as_mujoco_reads_it(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "assets.xml").write_text('<mujoco><asset><material name="red" rgba="1 0 0 1"/>'
                                                   "</asset></mujoco>\n")
    (tmp_path / "parts" / "arm.xml").write_text(
        '<mujoco><body name="upper" pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0"/>'
        '<geom type="capsule" size="0.05 0.2" material="red"/><body name="lower" pos="0 0 -0.4">'
        '<joint name="j2" type="hinge" axis="0 1 0"/><geom type="sphere" size="0.1"/></body></body></mujoco>\n')
    main = tmp_path / "main.xml"
    main.write_text('<mujoco model="m"><include file="parts/assets.xml"/><worldbody>'
                    '<geom type="plane" size="1 1 0.1"/><include file="parts/arm.xml"/></worldbody></mujoco>\n')
    robot = mjcf.read_robot(str(main))
    model = mujoco.MjModel.from_xml_path(str(main))
    assert set(robot.links) - {"world"} == {model.body(i).name for i in range(1, model.nbody)}
    assert set(robot.joints) == {model.joint(i).name for i in range(model.njnt)}
    assert robot.materials["red"].rgba == (1.0, 0.0, 0.0, 1.0)


def test_mjcf_include_of_itself_is_an_error_naming_the_include(tmp_path):
    path = tmp_path / "self.xml"
    path.write_text('<mujoco><worldbody>\n<include file="self.xml"/></worldbody></mujoco>\n')
    with pytest.raises(FormatError) as info:
        _within(10, registry.read_scene, str(path))
    assert info.value.first.line == 2 and "included twice" in info.value.first.message


# -- physics overflow -----------------------------------------------------------------------------------

_OVERFLOWS = {
    "gravity": ([new_record("gravity", gravity=(0, 0, -1e308))], "gravity"),
    "radius": ([], "/World/ball: sphere size"),
    "mass": ([], "/World/ball: mass"),
}


@pytest.mark.parametrize("case", ["gravity", "radius", "mass"])
def test_finite_values_that_overflow_in_physics_are_refused(tmp_path, case):
    from rscene_addon.commands.simulate_job import run_simulation_cli
    ball = dict(path="/World/ball", primitive="sphere", position=(0, 0, 1), radius=0.1)
    ball.update({"radius": {"radius": 1e308}, "mass": {"mass": 1e-320}}.get(case, {}))
    scene = Scene()
    for record in _OVERFLOWS[case][0] + [new_record("object", **ball)]:
        scene.add(record)
    path = tmp_path / "overflow.rscene"
    path.write_text(rscene.dumps(scene))
    lines: list[str] = []
    out = tmp_path / "out.npz"
    assert run_simulation_cli(str(path), 0.2, 30, str(out), backend="numpy", print_fn=lines.append) == 1
    assert any(_OVERFLOWS[case][1] in line for line in lines), lines
    assert not out.exists()


def test_huge_quaternion_is_a_rotation_like_any_other(tmp_path):
    from rscene_addon.sim.trajectory import simulate
    results = []
    for q in ((1e300, 1e300, 0, 0), (1, 1, 0, 0)):
        scene = Scene()
        scene.add(new_record("object", path="/World/box", primitive="box", position=(0, 0, 1), quaternion=q))
        results.append(simulate(scene, 0.1, 30, backend="numpy").quaternion)
    assert np.isfinite(results[0]).all() and np.allclose(results[0], results[1])


def test_non_finite_trajectory_is_never_written_with_exit_0():
    from rscene_addon.commands.simulate_job import non_finite
    from rscene_addon.sim.trajectory import Trajectory
    position = np.zeros((3, 2, 3))
    position[2, 1, 0] = np.nan
    traj = Trajectory(time=np.array([0.0, 0.1, 0.2]), names=np.array(["/World/a", "/World/b"]), position=position,
                      quaternion=np.ones((3, 2, 4)), linear_velocity=np.zeros((3, 2, 3)),
                      angular_velocity=np.zeros((3, 2, 3)))
    assert non_finite(traj).startswith("/World/b: position is not a finite number from frame 2")
    traj.position[2, 1, 0] = 0.0
    assert non_finite(traj) is None
