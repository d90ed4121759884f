"""JOB.toml: what a dataset is made of, read and checked in full before any work starts (pure).

::

    scenes = ["scenes/*.rscene", {path = "demo.rscene", variations = [{seed = 1}, {seed = 2}]}]
    frames = "1-48"          # inclusive, START-END[:STEP]
    chunk = 8                # frames per work unit
    fps = 30                 # optional (default: the scene's)
    substeps = 4             # optional physics steps per frame (default: the scene's time_step)
    samples = 16             # optional cap on Cycles samples
    device = "CPU"           # or "GPU"
    sensors = ["/World/Camera"]          # optional (default: every enabled camera and sensor)
    products = ["rgb", "depth"]          # optional (default: all a sensor makes)
    variations = [{seed = 0}]            # optional, for scenes that do not list their own
    units_per_process = 20   # a worker process is replaced after this many units (flat memory)
    threads = 2              # optional Cycles threads per unit (default: cores / --workers; Ray: num_cpus)
    retries = 2              # a unit whose worker died is run again this many times
    [ray]
    num_cpus = 1             # resources one unit asks Ray for
    num_gpus = 0
    window = 0               # optional units in flight at once (0: 2 x the cluster's unit slots, at least 32)

Scene paths and globs are relative to the job file; a glob must match at least one file. Every error
names the job file and the key (``job.toml: scenes[2]: no file matches 'x/*.rscene'``) and all errors
are reported together.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - the project needs 3.11, kept for clarity
    tomllib = None

from ..products.plan import PRODUCTS as RENDER_PRODUCTS
from ..products.plan import parse_products
from ..products.chunks import parse_frame_range

__all__ = ["Job", "JobError", "JobScene", "PRODUCTS", "Variation", "load_job", "parse_job"]

PRODUCTS = tuple(sorted(RENDER_PRODUCTS))  # what the render command makes (one list: products.plan)
SCENE_SUFFIXES = (".rscene", ".xml", ".jsonc", ".json", ".blend")
TOP_KEYS = {"scenes", "frames", "chunk", "fps", "substeps", "samples", "device", "sensors", "products",
            "variations", "units_per_process", "retries", "ray", "rgb_bits", "denoise", "cryptomatte",
            "range", "raycaster", "threads"}
RAY_KEYS = {"num_cpus", "num_gpus", "max_retries", "window"}
_NAME_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


class JobError(ValueError):
    """Every problem found in a job file, one line each (``file: key: message``)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Variation:
    """One version of a scene; ``seed`` None means "as the scene says" (no variation)."""

    seed: int | None = None

    @property
    def name(self) -> str:
        return "base" if self.seed is None else f"seed{self.seed}"


@dataclass(frozen=True)
class JobScene:
    path: str               # absolute
    name: str               # unique folder name in the dataset
    variations: tuple       # of Variation


@dataclass(frozen=True)
class Job:
    path: str
    scenes: tuple
    frames: tuple
    chunk: int
    frames_spec: str = ""   # the job's frames text, as the render command takes it
    fps: float | None = None
    substeps: int | None = None
    samples: int | None = None
    device: str = "CPU"
    sensors: tuple = ()
    products: tuple = ()
    units_per_process: int = 20
    retries: int = 2
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    threads: int | None = None   # Cycles threads per unit (None: the machine's cores / workers; Ray: num_cpus)
    window: int = 0              # Ray: units in flight at once (0: from the cluster's size)
    render: dict = field(default_factory=dict)   # rgb_bits, denoise, cryptomatte, range, raycaster

    def settings(self) -> dict:
        """What every unit's output depends on besides its scene, variation and frames (JSON values)."""
        return {"frames": list(self.frames), "chunk": self.chunk, "fps": self.fps, "substeps": self.substeps,
                "samples": self.samples, "device": self.device, "sensors": list(self.sensors),
                "products": list(self.products), "render": dict(sorted(self.render.items()))}


class _Checker:
    def __init__(self, path: str) -> None:
        self.file = os.path.basename(path)
        self.problems: list[str] = []

    def error(self, key: str, message: str) -> None:
        self.problems.append(f"{self.file}: {key}: {message}")

    def integer(self, data: dict, key: str, default, lo: int, where: str = ""):
        if key not in data:
            return default
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            self.error(where + key, f"must be an integer >= {lo}, got {value!r}")
            return default
        return value

    def number(self, data: dict, key: str, default, lo: float, where: str = "", strict: bool = False):
        if key not in data:
            return default
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < lo or (strict and value == lo):
            self.error(where + key, f"must be a number {'>' if strict else '>='} {lo:g}, got {value!r}")
            return default
        return float(value)

    def boolean(self, data: dict, key: str):
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.error(key, f"must be true or false, got {value!r}")
            return False
        return value

    def strings(self, data: dict, key: str) -> tuple:
        value = data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.error(key, f"must be a list of names, got {value!r}")
            return ()
        return tuple(value)


def _variations(check: _Checker, value, key: str) -> tuple:
    if not isinstance(value, list) or not value:
        check.error(key, "must be a non-empty list of tables, e.g. [{seed = 1}, {seed = 2}]")
        return (Variation(),)
    out, seen = [], set()
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            check.error(where, f"must be a table like {{seed = 1}}, got {item!r}")
            continue
        unknown = sorted(set(item) - {"seed"})
        if unknown:
            check.error(where, f"unknown key(s) {', '.join(unknown)} (a variation has a seed)")
        seed = item.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
            check.error(where + ".seed", f"must be an integer in 0..2^63-1, got {seed!r}")
            continue
        if seed in seen:
            check.error(where + ".seed", f"seed {seed} is listed twice")
            continue
        seen.add(seed)
        out.append(Variation(seed))
    return tuple(out) or (Variation(),)


def _scene_paths(check: _Checker, base: str, pattern, key: str) -> list[str]:
    if not isinstance(pattern, str) or not pattern:
        check.error(key, f"must be a path or glob, got {pattern!r}")
        return []
    full = pattern if os.path.isabs(pattern) else os.path.join(base, pattern)
    if glob.has_magic(full):
        paths = sorted(p for p in glob.glob(full, recursive=True) if os.path.isfile(p))
        if not paths:
            check.error(key, f"no file matches {pattern!r}")
        return [os.path.abspath(p) for p in paths]
    if not os.path.isfile(full):
        check.error(key, f"no such file {pattern!r}")
        return []
    return [os.path.abspath(full)]


def _unique_names(paths: list[str]) -> list[str]:
    names, count = [], {}
    for path in paths:
        stem = _NAME_SAFE.sub("_", os.path.splitext(os.path.basename(path))[0]) or "scene"
        count[stem] = count.get(stem, 0) + 1
        names.append(stem if count[stem] == 1 else f"{stem}_{count[stem]}")
    return names


def _one_entry_per_scene(check: _Checker, found: list) -> list[tuple[str, tuple]]:
    """A scene matched by several entries (a glob and a table, a name twice): the same variations are
    one scene; a table with its own variations (``{path = "a.rscene", variations = [...]}``) overrides
    an entry with the job's (``"*.rscene"``, ``"a.rscene"``), at the first entry's place in the order;
    two tables with different variations are an error."""
    chosen: dict = {}  # path -> (variations, key, own), in first-seen order
    for path, variations, key, own in found:
        if path not in chosen:
            chosen[path] = (variations, key, own)
            continue
        old_variations, old_key, old_own = chosen[path]
        if variations == old_variations or (old_own and not own):
            continue
        if own and not old_own:
            chosen[path] = (variations, key, own)
            continue
        check.error(key, f"{os.path.basename(path)} is also listed at {old_key} with other variations "
                         f"({_seeds(old_variations)} there, {_seeds(variations)} here): list it once")
    return [(p, v) for p, (v, _key, _own) in chosen.items()]


def _seeds(variations: tuple) -> str:
    return "[" + ", ".join(v.name for v in variations) + "]"


def parse_job(data: dict, path: str) -> Job:
    """A :class:`Job` from the parsed TOML ``data`` of the file ``path``; raises :class:`JobError`."""
    check = _Checker(path)
    base = os.path.dirname(os.path.abspath(path))
    for key in sorted(set(data) - TOP_KEYS):
        check.error(key, f"unknown key (known: {', '.join(sorted(TOP_KEYS))})")
    default_variations = (Variation(),)
    if "variations" in data:
        default_variations = _variations(check, data["variations"], "variations")
    entries = data.get("scenes")
    if isinstance(entries, (str, dict)):
        entries = [entries]
    found: list[tuple[str, tuple, str, bool]] = []  # path, variations, key, variations of its own
    if not isinstance(entries, list) or not entries:
        check.error("scenes", "required: a list of scene paths or globs (relative to the job file)")
        entries = []
    for i, entry in enumerate(entries):
        key, variations, own = f"scenes[{i}]", default_variations, False
        if isinstance(entry, dict):
            unknown = sorted(set(entry) - {"path", "variations"})
            if unknown:
                check.error(key, f"unknown key(s) {', '.join(unknown)} (a scene table has path, variations)")
            if "variations" in entry:
                variations, own = _variations(check, entry["variations"], key + ".variations"), True
            entry, key = entry.get("path"), key + ".path"
        for scene_path in _scene_paths(check, base, entry, key):
            if not scene_path.lower().endswith(SCENE_SUFFIXES):
                check.error(key, f"{os.path.basename(scene_path)}: not a scene file "
                                 f"({', '.join(SCENE_SUFFIXES)})")
            found.append((scene_path, variations, key, own))
    unique = _one_entry_per_scene(check, found)
    scenes = tuple(JobScene(p, n, v) for (p, v), n in zip(unique, _unique_names([p for p, _ in unique])))

    frames, frames_spec = (), ""
    if "frames" not in data:
        check.error("frames", "required, e.g. frames = \"1-48\"")
    else:
        value = data["frames"]
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        try:
            frames, frames_spec = tuple(parse_frame_range(value)), value
        except (TypeError, ValueError) as exc:
            check.error("frames", str(exc))
    chunk = check.integer(data, "chunk", 8, 1)
    fps = check.number(data, "fps", None, 0.0, strict=True)
    substeps = check.integer(data, "substeps", None, 1)
    samples = check.integer(data, "samples", None, 1)
    device = data.get("device", "CPU")
    if device not in ("CPU", "GPU"):
        check.error("device", f"must be \"CPU\" or \"GPU\", got {device!r}")
        device = "CPU"
    sensors = check.strings(data, "sensors")
    products = check.strings(data, "products")
    for name in products:
        try:
            parse_products([name])  # aliases (ids, normals, nocs, ...) as the render command takes them
        except ValueError as exc:
            check.error("products", str(exc))
    units_per_process = check.integer(data, "units_per_process", 20, 1)
    threads = check.integer(data, "threads", None, 1)
    retries = check.integer(data, "retries", 2, 0)
    render = {}
    if "rgb_bits" in data:
        if data["rgb_bits"] not in (8, 16) or isinstance(data["rgb_bits"], bool):
            check.error("rgb_bits", f"must be 8 or 16, got {data['rgb_bits']!r}")
        else:
            render["rgb_bits"] = data["rgb_bits"]
    for key in ("denoise", "range"):
        if key in data:
            render[key] = check.boolean(data, key)
    if "cryptomatte" in data:
        levels = check.integer(data, "cryptomatte", 0, 0)
        if levels and not 2 <= levels <= 16:
            check.error("cryptomatte", f"must be 0 (off) or 2..16 levels, got {levels}")
        render["cryptomatte"] = levels
    if "raycaster" in data:
        if data["raycaster"] not in ("auto", "embree", "bvh"):
            check.error("raycaster", f"must be \"auto\", \"embree\" or \"bvh\", got {data['raycaster']!r}")
        else:
            render["raycaster"] = data["raycaster"]
    ray = data.get("ray", {})
    num_cpus, num_gpus, window = 1.0, 0.0, 0
    if not isinstance(ray, dict):
        check.error("ray", "must be a table: [ray] num_cpus = 1, num_gpus = 0")
    else:
        for key in sorted(set(ray) - RAY_KEYS):
            check.error(f"ray.{key}", f"unknown key (known: {', '.join(sorted(RAY_KEYS))})")
        num_cpus = check.number(ray, "num_cpus", 1.0, 0.0, where="ray.")
        num_gpus = check.number(ray, "num_gpus", 0.0, 0.0, where="ray.")
        retries = check.integer(ray, "max_retries", retries, 0, where="ray.")
        window = check.integer(ray, "window", 0, 0, where="ray.")
    if check.problems:
        raise JobError(check.problems)
    return Job(path=os.path.abspath(path), scenes=scenes, frames=frames, frames_spec=frames_spec, chunk=chunk, fps=fps, substeps=substeps,
               samples=samples, device=device, sensors=sensors, products=products,
               units_per_process=units_per_process, retries=retries, num_cpus=num_cpus, num_gpus=num_gpus,
               threads=threads, window=window, render=render)


def load_job(path: str) -> Job:
    """Read and check ``path``; raises :class:`JobError` (also for unreadable or malformed TOML)."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise JobError([f"{name}: cannot read: {exc.strerror or exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise JobError([f"{name}: not valid TOML: {exc}"]) from None
    return parse_job(data, path)
