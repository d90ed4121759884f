"""Units and bakes: chunks are the render command's --chunk K/N; fingerprints follow what files depend on."""
from __future__ import annotations

from rscene_addon.dataset.job import load_job
from rscene_addon.dataset.units import bake_frames, plan_units, unit_task
from rscene_addon.products.chunks import chunk, parse_frame_range


def job_at(tmp_path, text, scene_text="raisim_engine_scene 2\n"):
    (tmp_path / "a.rscene").write_text(scene_text)
    (tmp_path / "b.rscene").write_text(scene_text + "# b\n")
    (tmp_path / "job.toml").write_text('scenes = ["a.rscene", "b.rscene"]\n' + text)
    return load_job(tmp_path / "job.toml")


def test_units_cover_every_frame_once_in_render_chunks(tmp_path):
    job = job_at(tmp_path, 'frames = "1-10"\nchunk = 4\nvariations = [{seed = 3}, {seed = 9}]\n')
    bakes, units = plan_units(job)
    assert [b.key for b in bakes] == ["a/seed3", "a/seed9", "b/seed3", "b/seed9"]
    assert len(units) == 4 * 3  # ceil(10 / 4) chunks per variation
    frames = list(parse_frame_range("1-10"))
    for bake in bakes:
        mine = [u for u in units if u.bake is bake]
        assert [u.chunk for u in mine] == ["1/3", "2/3", "3/3"]
        assert [list(u.frames) for u in mine] == [list(chunk(frames, k, 3)) for k in (1, 2, 3)]
        assert all(len(u.frames) <= 4 for u in mine)
    assert units[4].folder == "a/seed9/chunk0002-of-0003"
    assert len({u.fingerprint for u in units}) == len(units)


def test_a_bake_covers_the_frames_after_the_last_for_lidar_and_imu():
    assert bake_frames((5, 8, 11)) == (5, 13)


def test_fingerprints_follow_scene_bytes_seed_and_settings(tmp_path):
    base = {u.id: u.fingerprint for u in plan_units(job_at(tmp_path, 'frames = "1-4"\nchunk = 2\n'))[1]}
    same = {u.id: u.fingerprint for u in plan_units(job_at(tmp_path, 'frames = "1-4"\nchunk = 2\n'))[1]}
    assert base == same
    samples = {u.id: u.fingerprint for u in plan_units(job_at(tmp_path, 'frames = "1-4"\nchunk = 2\nsamples = 3\n'))[1]}
    assert set(samples) == set(base) and all(samples[k] != base[k] for k in base)
    edited = {u.id: u.fingerprint for u in plan_units(job_at(tmp_path, 'frames = "1-4"\nchunk = 2\n',
                                                               scene_text="raisim_engine_scene 2\n# x\n"))[1]}
    assert all(edited[k] != base[k] for k in base)


def test_unit_task_carries_seed_chunk_and_render_options(tmp_path):
    job = job_at(tmp_path, 'frames = "1-6"\nchunk = 3\nsamples = 1\nvariations = [{seed = 4}]\n'
                           'products = ["depth"]\nrgb_bits = 16\nrange = true\n')
    _, units = plan_units(job)
    task = unit_task(job, units[1])
    assert task["seed"] == 4 and task["bake"]["seed"] == 4
    assert (task["frames_spec"], task["chunk"], task["frames"]) == ("1-6", "2/2", [4, 5, 6])
    assert task["manifest"] == "manifest_chunk2-of-2.json"
    assert task["options"] == {"rgb_bit_depth": 16, "range_image": True, "products": ["depth"]}
    from rscene_addon.products.plan import RenderOptions
    RenderOptions(seed=task["seed"], device=task["device"], **task["options"])  # what a worker builds
