"""The command line in plain Python: validate, convert, simulate, help; exit codes and messages."""
import subprocess
import sys

import numpy as np
import pytest

from tests.corpus import EXAMPLE, REPO, RSCENE_FILES


def run(*args):
    return subprocess.run([sys.executable, "-m", "rscene_addon", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_help_lists_the_commands():
    result = run("--help")
    assert result.returncode == 0
    for command in ("validate", "convert", "simulate", "import", "export", "demo"):
        assert command in result.stdout


def test_validate_counts_records_of_every_kind():
    result = run("validate", EXAMPLE)
    assert result.returncode == 0, result.stderr
    assert "object                   2" in result.stdout
    assert "terrain_region           1" in result.stdout


def test_validate_reports_every_error_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.rscene"
    bad.write_text("raisim_engine_scene 2\ntime_step fast\ngravity 0 0\nobject /A box 0 0 1 1 0 0 0 1 1 1 0.5 1 1 d - x=1 2\n")
    result = run("validate", bad)
    assert result.returncode == 1
    assert f"{bad}:2 (time_step)" in result.stdout
    assert f"{bad}:3 (gravity)" in result.stdout
    assert f"{bad}:4 (object)" in result.stdout


def test_validate_warns_of_unknown_kinds_and_refuses_surplus_tokens(tmp_path):
    """The spec's example with an unknown record kind added: OK, with a warning naming file:line. Then with
    surplus positional tokens on known kinds (the issue's lines): INVALID, each error naming file:line."""
    lines = EXAMPLE.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("rayrai_render"))
    unknown = tmp_path / "unknown.rscene"
    unknown.write_text("\n".join(lines[:at + 1] + ["mystery_kind 1 2 3"] + lines[at + 1:]))
    result = run("validate", unknown)
    assert result.returncode == 0, result.stdout
    assert f"{unknown}:{at + 2} (mystery_kind): warning: unknown record kind" in result.stdout
    ball = next(i for i, line in enumerate(lines) if line.startswith("object /World/Ball"))
    tokens = lines[ball].split(" ")
    first_key = next(i for i, token in enumerate(tokens) if "=" in token)
    lines[ball] = " ".join(tokens[:first_key] + ["extra1", "extra2"] + tokens[first_key:])
    garbage = tmp_path / "garbage.rscene"
    garbage.write_text("\n".join(lines[:at + 1] + ["rayrai_render foo bar baz"] + lines[at + 1:]))
    result = run("validate", garbage)
    assert result.returncode == 1
    assert f"{garbage}:{at + 2} (rayrai_render): error: 3 positional field(s) too many: 'foo bar baz'" in result.stdout
    assert f"{garbage}:{ball + 2} (object): error: 2 positional field(s) too many: 'extra1 extra2'" in result.stdout


def test_convert_unchanged_rscene_is_byte_identical(tmp_path):
    for path in RSCENE_FILES:
        out = tmp_path / path.name
        assert run("convert", path, out).returncode == 0
        assert out.read_bytes() == path.read_bytes()


def test_simulate_writes_the_documented_arrays(tmp_path):
    out = tmp_path / "traj.npz"
    result = run("simulate", EXAMPLE, "--duration", "0.5", "--fps", "20", "--out", out)
    assert result.returncode == 0, result.stderr
    data = np.load(out)
    for key in ("time", "names", "position", "quaternion", "linear_velocity", "angular_velocity"):
        assert key in data
    assert data["position"].shape == (11, 2, 3)
    assert list(data["names"]) == ["/World/Crate", "/World/Ball"]
    assert data["time"][-1] == pytest.approx(0.5)


def test_simulate_takes_every_format_import_takes(tmp_path):
    """RaiSim's laikago.xml (a World XML, not .rscene): simulated from where its qpos stands the trunk."""
    from tests.corpus import CORPUS, require_corpus
    require_corpus()
    scene = CORPUS / "raisim_xml" / "raisimTech-raisim2Lib" / "rsc" / "laikago.xml"
    out = tmp_path / "traj.npz"
    result = run("simulate", scene, "--duration", "0.02", "--fps", "100", "--out", out, "--backend", "numpy")
    assert result.returncode == 0, result.stdout + result.stderr
    data = np.load(out)
    names = [str(n) for n in data["names"]]
    trunk = [i for i, n in enumerate(names) if n.endswith("laikago0/trunk")]
    assert len(trunk) == 1, names
    np.testing.assert_allclose(data["position"][0, trunk[0]], (0.0, 0.0, 0.48), atol=1e-6)


def test_missing_file_is_a_clean_error(tmp_path):
    result = run("validate", tmp_path / "nope.rscene")
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr


def test_blender_style_arguments_after_double_dash(tmp_path):
    """Inside `blender --python scripts/rscene_cli.py -- args` only what follows `--` is ours."""
    script = REPO / "scripts" / "rscene_cli.py"
    result = subprocess.run([sys.executable, str(script), "--", "validate", str(EXAMPLE)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "OK, version 2" in result.stdout
    bad = tmp_path / "bad.rscene"
    bad.write_text("raisim_engine_scene 3\n")
    result = subprocess.run([sys.executable, str(script), "--", "validate", str(bad)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1


def test_demo_scene_ships_inside_the_package():
    """``demo`` runs from an installed extension too: its default scene is a file of the package."""
    import os

    import rscene_addon
    from rscene_addon import cli
    from rscene_addon.formats import rscene

    package = os.path.dirname(os.path.abspath(rscene_addon.__file__))
    assert os.path.dirname(cli.DEMO_SCENE) == package
    scene = rscene.read(cli.DEMO_SCENE)
    assert scene.of("object") and scene.of("camera")
    assert cli.build_parser().parse_args(["demo"]).scene == cli.DEMO_SCENE


def test_bake_pd_gains_argument():
    """``bake --pd-gains KP,KD`` (docs/robots.md): two non-negative numbers, else a usage error."""
    from rscene_addon import cli
    parser = cli.build_parser()
    args = parser.parse_args(["bake", "s.rscene", "--blend", "o.blend", "--pd-gains", "1000,20"])
    assert args.pd_gains == (1000.0, 20.0)
    assert parser.parse_args(["bake", "s.rscene", "--blend", "o.blend"]).pd_gains is None
    for bad in ("1000", "a,b", "-1,2"):
        with pytest.raises(SystemExit):
            parser.parse_args(["bake", "s.rscene", "--blend", "o.blend", "--pd-gains", bad])
