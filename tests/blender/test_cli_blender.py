"""`python -m rscene_addon import/export` with the bpy module: a .blend in between, nothing lost."""
import subprocess
import sys

from tests.corpus import REPO, RSCENE_FILES


def run(*args):
    return subprocess.run([sys.executable, "-m", "rscene_addon", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_import_to_blend_then_export_is_byte_identical(tmp_path):
    source = next(p for p in RSCENE_FILES if p.name == "blue_wall.rscene")
    blend = tmp_path / "scene.blend"
    result = run("import", source, "--blend", blend)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not found" in result.stdout  # the glTF wall and the HDR are not in the corpus: warned, not fatal
    out = tmp_path / "out.rscene"
    result = run("export", blend, out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_bytes() == source.read_bytes()


def test_import_of_a_bad_file_fails_with_its_line(tmp_path):
    bad = tmp_path / "bad.rscene"
    bad.write_text("raisim_engine_scene 9\n")
    result = run("import", bad, "--blend", tmp_path / "x.blend")
    assert result.returncode == 1
    assert "bad.rscene:1" in result.stderr
    assert not (tmp_path / "x.blend").exists()


def test_bake_command_saves_keyframes_in_the_blend(tmp_path):
    from tests.corpus import EXAMPLE
    blend = tmp_path / "baked.blend"
    result = run("bake", EXAMPLE, "--frames", "1-25", "--blend", blend)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "baked.blend1").exists()  # no backup of the command's own intermediate save
    check = subprocess.run([sys.executable, "-c", (
        "import bpy, sys, os; bpy.ops.wm.open_mainfile(filepath=sys.argv[1]); "
        "ob = bpy.data.objects['Crate']; bpy.context.scene.frame_set(1); z1 = ob.location.z; "
        "bpy.context.scene.frame_set(25); print(round(z1, 4), ob.location.z < z1); os._exit(0)"), str(blend)],
        capture_output=True, text=True, timeout=300)
    assert check.stdout.split()[-2:] == ["1.0", "True"], check.stdout + check.stderr
