"""JOB.toml: the whole file is checked before any work; every error names the file and the key."""
from __future__ import annotations

import pytest

from rscene_addon.dataset.job import JobError, Variation, load_job
from rscene_addon.products.chunks import parse_frame_range


def write(tmp_path, text, name="job.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def scenes(tmp_path, *names):
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("raisim_engine_scene 2\n")


def test_a_full_job_reads_every_key(tmp_path):
    scenes(tmp_path, "a/one.rscene", "a/two.rscene", "b/one.rscene", "demo.rscene")
    job = load_job(write(tmp_path, """
scenes = ["a/*.rscene", "b/one.rscene", {path = "demo.rscene", variations = [{seed = 5}]}]
frames = "2-20:3"
chunk = 3
fps = 24
substeps = 4
samples = 2
device = "GPU"
sensors = ["/World/Camera"]
products = ["rgb", "depth"]
variations = [{seed = 0}, {seed = 1}]
units_per_process = 7
threads = 3
rgb_bits = 16
range = true
[ray]
num_cpus = 2
num_gpus = 0.5
max_retries = 4
window = 64
"""))
    assert [s.name for s in job.scenes] == ["one", "two", "one_2", "demo"]
    assert [s.path for s in job.scenes][:2] == [str(tmp_path / "a/one.rscene"), str(tmp_path / "a/two.rscene")]
    assert job.scenes[0].variations == (Variation(0), Variation(1))
    assert job.scenes[3].variations == (Variation(5),)
    assert job.frames == tuple(parse_frame_range("2-20:3")) == (2, 5, 8, 11, 14, 17, 20)
    assert (job.chunk, job.fps, job.substeps, job.samples, job.device) == (3, 24.0, 4, 2, "GPU")
    assert job.sensors == ("/World/Camera",) and job.products == ("rgb", "depth")
    assert (job.units_per_process, job.retries, job.num_cpus, job.num_gpus, job.threads) == (7, 4, 2.0, 0.5, 3)
    assert job.render == {"rgb_bits": 16, "range": True}
    assert job.window == 64 and "window" not in job.settings()  # how units are scheduled, not what they make


def test_defaults_without_variations(tmp_path):
    scenes(tmp_path, "s.rscene")
    job = load_job(write(tmp_path, 'scenes = "s.rscene"\nframes = 4\n'))
    assert job.frames == (4,) and job.chunk == 8 and job.device == "CPU" and job.samples is None
    assert job.scenes[0].variations == (Variation(None),)
    assert job.scenes[0].variations[0].name == "base"


def test_every_problem_is_reported_with_file_and_key(tmp_path):
    scenes(tmp_path, "s.rscene", "notes.txt")
    with pytest.raises(JobError) as info:
        load_job(write(tmp_path, """
scenes = ["s.rscene", "missing/*.rscene", "gone.rscene", "notes.txt", 3]
frames = "9-2"
chunk = 0
fps = -1
samples = "many"
device = "TPU"
products = ["rgb", "smell"]
variations = [{seed = 1}, {seed = 1}, {seed = -3}, {seed = 2, colour = "red"}]
colour = "red"
[ray]
num_gpus = -1
workers = 3
""", name="mine.toml"))
    problems = info.value.problems
    expected = [
        "mine.toml: scenes[1]: no file matches 'missing/*.rscene'",
        "mine.toml: scenes[2]: no such file 'gone.rscene'",
        "mine.toml: scenes[3]: notes.txt: not a scene file",
        "mine.toml: scenes[4]: must be a path or glob",
        "mine.toml: frames: bad frame range '9-2'",
        "mine.toml: chunk: must be an integer >= 1, got 0",
        "mine.toml: fps: must be a number > 0, got -1",
        "mine.toml: samples: must be an integer >= 1",
        "mine.toml: device: must be \"CPU\" or \"GPU\"",
        "mine.toml: products: unknown product 'smell'",
        "mine.toml: variations[1].seed: seed 1 is listed twice",
        "mine.toml: variations[2].seed: must be an integer in 0..2^63-1, got -3",
        "mine.toml: variations[3]: unknown key(s) colour",
        "mine.toml: colour: unknown key",
        "mine.toml: ray.num_gpus: must be a number >= 0, got -1",
        "mine.toml: ray.workers: unknown key",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in problems), (start, problems)
    assert len(problems) == len(expected), problems


def test_missing_required_keys_and_bad_toml(tmp_path):
    with pytest.raises(JobError) as info:
        load_job(write(tmp_path, "chunk = 2\n"))
    assert info.value.problems == [
        "job.toml: scenes: required: a list of scene paths or globs (relative to the job file)",
        "job.toml: frames: required, e.g. frames = \"1-48\""]
    with pytest.raises(JobError) as info:
        load_job(write(tmp_path, "scenes = [\n"))
    assert info.value.problems[0].startswith("job.toml: not valid TOML:")
    with pytest.raises(JobError) as info:
        load_job(tmp_path / "absent.toml")
    assert info.value.problems[0].startswith("absent.toml: cannot read:")


def test_products_are_the_render_commands_own(tmp_path):
    """A job asks for any product the render command makes (ground truth and aliases included); an
    unknown one is reported against the products key."""
    scenes(tmp_path, "s.rscene")
    job = load_job(write(tmp_path, 'scenes = "s.rscene"\nframes = 2\n'
                                   'products = ["rgb", "flow", "object_coords", "amodal", "ids", "bop"]\n'))
    assert list(job.products) == ["rgb", "flow", "object_coords", "amodal", "ids", "bop"]
    with pytest.raises(JobError) as info:
        load_job(write(tmp_path, 'scenes = "s.rscene"\nframes = 2\nproducts = ["rgb", "x-ray"]\n', "bad.toml"))
    assert "bad.toml" in str(info.value) and "products" in str(info.value) and "x-ray" in str(info.value)


def test_a_scene_in_a_glob_and_a_table_keeps_the_tables_variations(tmp_path):
    scenes(tmp_path, "s/a.rscene", "s/b.rscene")
    job = load_job(write(tmp_path, 'scenes = ["s/*.rscene", "s/a.rscene", {path = "s/a.rscene", variations = '
                                   '[{seed = 4}, {seed = 5}]}]\nframes = "1"\nvariations = [{seed = 1}]\n'))
    assert [(s.name, [v.seed for v in s.variations]) for s in job.scenes] == [("a", [4, 5]), ("b", [1])]
    # the same order whichever entry comes first
    job = load_job(write(tmp_path, 'scenes = [{path = "s/a.rscene", variations = [{seed = 4}]}, "s/a.rscene"]\n'
                                   'frames = "1"\n'))
    assert [(s.name, [v.seed for v in s.variations]) for s in job.scenes] == [("a", [4])]


def test_a_scene_in_two_tables_with_other_variations_is_an_error(tmp_path):
    scenes(tmp_path, "a.rscene")
    with pytest.raises(JobError) as error:
        load_job(write(tmp_path, 'scenes = [{path = "a.rscene", variations = [{seed = 1}]}, '
                                 '{path = "a.rscene", variations = [{seed = 2}]}]\nframes = "1"\n'))
    assert error.value.problems == ["job.toml: scenes[1].path: a.rscene is also listed at scenes[0].path with "
                                    "other variations ([seed1] there, [seed2] here): list it once"]
