"""Run the BOP toolkit's own scripts on a BOP dataset we wrote (a test-only reference, run in its own
environment ``.venv/bop`` that ``scripts/setup_bop_toolkit.sh`` builds; never imported by the add-on).

Usage: ``python tests/bop_toolkit_check.py DATASETS_PATH DATASET_NAME REPORT.json``

As a BOP user does with a new dataset: register its name (object ids, image size, splits) in the
toolkit's ``dataset_params``, then run ``scripts/calc_gt_info.py`` (its ``p`` dict edited, as the
toolkit documents), ``scripts/create_pose_results_file_from_gt.py`` and ``scripts/eval_calc_errors.py``
(ground truth as the estimates) unchanged. The report holds the toolkit's ``scene_gt_info`` beside
ours and every error the toolkit computed, for the calling test to judge.
"""
from __future__ import annotations

import glob
import json
import os
import sys
from os.path import join

SPLIT, SPLIT_TYPE = "train", "pbr"  # our files: {dataset}/train_pbr/{scene:06d}/
TEMPLATE = "lm"  # a classic-format BOP dataset whose PBR split has our layout (rgb .jpg, depth .png)
ERROR_TYPES = ("vsd", "mssd", "mspd", "ad", "add", "adi", "proj")


def register(dataset_params, name: str, obj_ids: list[int], symmetric: list[int], im_size, scene_ids):
    """Teach ``dataset_params`` a dataset ``name`` laid out like the template's PBR split."""
    split_params, model_params = dataset_params.get_split_params, dataset_params.get_model_params

    def get_model_params(datasets_path, dataset_name, model_type=None):
        if dataset_name != name:
            return model_params(datasets_path, dataset_name, model_type)
        models = join(datasets_path, name, "models")  # our models are the exact geometry: also the eval set
        return {"obj_ids": obj_ids, "symmetric_obj_ids": symmetric,
                "model_tpath": join(models, "obj_{obj_id:06d}.ply"),
                "models_info_path": join(models, "models_info.json")}

    def get_split_params(datasets_path, dataset_name, split, split_type=None):
        if dataset_name != name:
            return split_params(datasets_path, dataset_name, split, split_type)
        p = split_params(datasets_path, TEMPLATE, split, split_type)
        old, new = join(datasets_path, TEMPLATE), join(datasets_path, name)
        p = {k: (new + v[len(old):] if isinstance(v, str) and v.startswith(old) else v) for k, v in p.items()}
        p.update(name=name, scene_ids=list(scene_ids), im_size=tuple(im_size))
        return p

    dataset_params.get_model_params = get_model_params
    dataset_params.get_split_params = get_split_params


def run_script(toolkit: str, script: str, argv: list[str], overrides: dict | None = None) -> None:
    """Run one of the toolkit's scripts as ``__main__``; ``overrides`` edit its ``p`` parameter dict
    right after the dict is written (the toolkit's documented way to set parameters)."""
    path = join(toolkit, "scripts", script)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    if overrides:
        start = source.index("\np = {")
        end = source.index("\n####", start)  # the banner line that closes the parameter block
        source = source[:end] + "\np.update(__overrides__)" + source[end:]
    sys.argv = [path, *argv]
    code = compile(source, path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path, "__overrides__": overrides or {}})


def targets(split_path: str) -> list[dict]:
    """BOP's test targets (one per object kind and image) for every annotated object."""
    out = []
    for scene_dir in sorted(glob.glob(join(split_path, "*"))):
        scene_id = int(os.path.basename(scene_dir))
        with open(join(scene_dir, "scene_gt.json"), encoding="utf-8") as handle:
            gt = json.load(handle)
        for im_id, entries in sorted(gt.items(), key=lambda kv: int(kv[0])):
            counts: dict[int, int] = {}
            for entry in entries:
                counts[entry["obj_id"]] = counts.get(entry["obj_id"], 0) + 1
            out += [{"scene_id": scene_id, "im_id": int(im_id), "obj_id": o, "inst_count": n}
                    for o, n in sorted(counts.items())]
    return out


def main(datasets_path: str, name: str, report_path: str) -> None:
    from bop_toolkit_lib import dataset_params, inout

    toolkit = os.environ["BOP_TOOLKIT"]
    base = join(datasets_path, name)
    split_path = join(base, f"{SPLIT}_{SPLIT_TYPE}")
    info = inout.load_json(join(base, "models", "models_info.json"), keys_to_int=True)
    obj_ids = sorted(info)
    symmetric = [o for o in obj_ids if info[o].get("symmetries_discrete") or info[o].get("symmetries_continuous")]
    scenes = sorted(int(os.path.basename(d)) for d in glob.glob(join(split_path, "*")))
    first = sorted(glob.glob(join(split_path, f"{scenes[0]:06d}", "depth", "*.png")))[0]
    height, width = inout.load_depth(first).shape
    register(dataset_params, name, obj_ids, symmetric, (width, height), scenes)

    ours = {}
    for scene_id in scenes:  # read before calc_gt_info overwrites scene_gt_info.json
        path = join(split_path, f"{scene_id:06d}", "scene_gt_info.json")
        ours[scene_id] = inout.load_json(path, keys_to_int=True)
        os.remove(path)  # what is read afterwards is the toolkit's own

    common = {"dataset": name, "dataset_split": SPLIT, "dataset_split_type": SPLIT_TYPE,
              "datasets_path": datasets_path, "renderer_type": "vispy", "modality": None, "sensor": None}
    run_script(toolkit, "calc_gt_info.py", [], common)
    theirs = {s: inout.load_json(join(split_path, f"{s:06d}", "scene_gt_info.json"), keys_to_int=True)
              for s in scenes}

    for file_name in ("test_targets_bop19.json", "test_targets_bop24.json"):
        inout.save_json(join(base, file_name), targets(split_path))
    results = join(datasets_path, "_results")
    os.makedirs(results, exist_ok=True)
    run_script(toolkit, "create_pose_results_file_from_gt.py",
               ["--results_path", results, "--dataset", name, "--split", SPLIT, "--split_type", SPLIT_TYPE,
                "--targets_filename", "test_targets_bop19.json"], {"datasets_path": datasets_path})
    (written,) = glob.glob(join(results, "*.csv"))
    # that script names the file without the split type; BOP's "{method}_{dataset}-{split}-{split_type}"
    result_file = f"gt-results_{name}-{SPLIT}-{SPLIT_TYPE}.csv"
    os.replace(written, join(results, result_file))

    errors = {}
    for error_type in ERROR_TYPES:
        eval_path = join(datasets_path, "_eval", error_type)
        run_script(toolkit, "eval_calc_errors.py",
                   ["--error_type", error_type, "--result_filenames", result_file, "--results_path", results,
                    "--eval_path", eval_path, "--datasets_path", datasets_path, "--num_workers", "1",
                    "--renderer_type", "vispy", "--vsd_deltas", f"{name}:15"])
        values = []
        for path in sorted(glob.glob(join(eval_path, "**", "errors_*.json"), recursive=True)):
            for entry in inout.load_json(path):
                values += [e for per_est in entry["errors"].values() for e in
                           (per_est if isinstance(per_est, list) else [per_est])]
        errors[error_type] = values

    with open(report_path, "w", encoding="utf-8") as handle:
        json.dump({"gt_info": {"ours": ours, "toolkit": theirs}, "errors": errors,
                   "obj_ids": obj_ids, "result_file": result_file}, handle)


if __name__ == "__main__":
    os.environ.setdefault("EGL_PLATFORM", "surfaceless")  # vispy's EGL context without a display
    main(*sys.argv[1:4])
