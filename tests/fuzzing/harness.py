"""The readers under fuzz, their seed files, and how one input is run and judged.

Scene readers run through ``registry.read_scene`` (what ``python -m rscene_addon validate`` calls). The
mutated file is written into a mirror of its seed's folder (the seed's siblings and its parent's entries
linked in), so relative references (includes, URDFs, height maps, robot configs) still resolve.

An outcome is ``ok`` (read), ``clean`` (the reader's documented error, naming the file) or ``bad``
(anything else: another exception, a hang past the time limit, memory exhausted).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import mutators

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("RSCENE_CORPUS") or REPO.parent / "shared" / "corpus")  # env: a run from a copy
DATA = REPO / "tests" / "unit" / "formats" / "data"
REGRESSIONS = REPO / "tests" / "unit" / "fuzz" / "regressions"
SEED_LIMIT = 24_000  # bytes: bigger seeds only slow the run, their structure is in the small ones too


class Hang(BaseException):
    """Raised by the alarm when one input runs past its time limit (BaseException: no reader catches it)."""


@dataclass
class Reader:
    name: str
    suffix: str  # of the mutated file
    seeds: list = field(default_factory=list)  # Path or (name, bytes) for generated seeds
    binary: bool = False

    def run(self, path: str):
        raise NotImplementedError

    def clean(self, exc: BaseException, path: str) -> bool:
        from rscene_addon.model import FormatError
        return isinstance(exc, FormatError) and bool(exc.diagnostics) and \
            os.path.basename(path) in exc.diagnostics[0].file


class SceneReader(Reader):
    def run(self, path):
        from rscene_addon.formats import registry
        return registry.read_scene(path)


class SupportReader(Reader):
    """Readers of files a scene refers to (height maps, meshes, .rasset); their own error class is clean."""

    def __init__(self, name, suffix, seeds, entry, errors, binary=False):
        super().__init__(name, suffix, seeds, binary)
        self.entry, self.errors = entry, errors

    def run(self, path):
        return self.entry(path)

    def clean(self, exc, path):
        return super().clean(exc, path) or type(exc).__name__ in self.errors


_REFERENCE = re.compile(r"[\w./-]+\.(?:png|urdf|txt|xml|obj|rasset)\b")


def _small(paths):
    """Seeds of at most SEED_LIMIT bytes that refer to no big file beside them (a 1 MB height map PNG
    costs seconds per input and only tests the PNG reader, which is fuzzed on its own)."""
    out = []
    for p in paths:
        if not p.is_file() or p.stat().st_size > SEED_LIMIT:
            continue
        refs = (p.parent / os.path.basename(m) for m in _REFERENCE.findall(p.read_text(errors="replace")))
        if any(r.is_file() and r.stat().st_size > 256_000 for r in refs):
            continue
        out.append(p)
    return sorted(out)


def _height_text(path):
    from rscene_addon.formats.raisim_xml import read_height_text
    result, problem = read_height_text(path)
    return result


def _png(path):
    from rscene_addon.formats import png
    return png.read_grey(path)


def _mesh(path):
    from rscene_addon.scene_geometry import mesh_files as meshio
    return meshio.read_mesh(path)


def _rasset(path):
    from rscene_addon.scene_geometry import mesh_files as meshio
    return meshio.read_rasset(path)


def _airsim_config(path):
    """A robot or environment-actor config (the files an AirSim scene names), read through a one-actor
    scene beside it: what ``validate`` does with every config a scene refers to."""
    import json as _json

    from rscene_addon.formats import airsim
    name = os.path.basename(path)
    section, key = (("environment-actors", "env-actor-config") if name.startswith("fuzz_env")
                    else ("actors", "robot-config"))
    scene = {"actors": [], section: [{"type": "robot" if section == "actors" else "env_actor", "name": "a",
                                      key: name}]}
    return airsim.loads(_json.dumps(scene), os.path.join(os.path.dirname(path), "fuzz_scene.jsonc"))


def _png_seeds():
    import numpy as np

    from rscene_addon.formats import png
    ramp = np.arange(48, dtype=np.float64).reshape(6, 8) * 1000
    return [(f"seed_{depth}_{filt}.png", png.encode_grey(ramp % (1 << depth), depth, filt))
            for depth, filt in ((16, 0), (8, 1), (16, 4), (8, 2))]


_CUBE_OBJ = """# cube
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
vn 0 0 1
f 1 2 3 4
f 5/1/1 6/1/1 7/1/1 8/1/1
f 1 2 6 5
f -1 -2 -3
"""
_CUBE_PLY = """ply
format ascii 1.0
element vertex 4
property float x
property float y
property float z
element face 2
property list uchar int vertex_indices
end_header
0 0 0
1 0 0
1 1 0
0 1 0
3 0 1 2
3 0 2 3
"""


def _spec_xml_blocks() -> list:
    """The XML examples (``.. code-block:: xml``) of the RaiSim documents, as generated seeds."""
    seeds = []
    for doc in sorted((CORPUS / "specs").rglob("*.rst")) if CORPUS.exists() else ():
        lines = doc.read_text(errors="replace").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != ".. code-block:: xml":
                continue
            block = []
            for body in lines[i + 1:]:
                if body.strip() and not body.startswith((" ", "\t")):
                    break
                block.append(body[4:] if body.startswith("    ") else body.strip())
            text = "\n".join(block).strip() + "\n"
            if "<raisim" in text:
                seeds.append((f"spec_{doc.stem}_{i}.xml", text.encode()))
    return seeds


def _converted(paths, fmt: str, suffix: str) -> list:
    """Corpus scenes written by our writer in another format: more seeds for a format with few files."""
    import tempfile as _tempfile

    from rscene_addon.formats import registry
    seeds = []
    with _tempfile.TemporaryDirectory() as folder:
        for path in paths:
            try:
                scene = registry.read_scene(str(path))
                out = os.path.join(folder, path.stem.split(".")[0] + suffix)
                registry.write_scene(scene, out, fmt)
                seeds.append((f"converted_{path.stem.split('.')[0]}{suffix}", Path(out).read_bytes()))
            except Exception:  # noqa: BLE001 - a seed that does not convert is simply not used
                continue
    return seeds


def _rscene_chunks(paths, lines_per_chunk: int = 40) -> list:
    """Big .rscene seeds cut into pieces of 40 records under their header: the same record kinds, a
    fraction of the cost per input (the mutations hit one record or a few, not the file's size)."""
    seeds = []
    for path in paths:
        lines = path.read_text(errors="surrogateescape").split("\n")
        if len(lines) <= lines_per_chunk * 2:
            seeds.append(path)
            continue
        header = lines[0] if lines[0].startswith("raisim_engine_scene") else None
        body = lines[1:] if header else lines
        for k in range(0, len(body), lines_per_chunk):
            piece = ([header] if header else []) + body[k:k + lines_per_chunk]
            seeds.append((f"chunk_{path.name.split('.')[0]}_{k}.rscene",
                          "\n".join(piece).encode("utf-8", "surrogateescape")))
    return seeds


def readers() -> dict[str, Reader]:
    """Every reader under fuzz, by name."""
    c = CORPUS
    rscene = _small(list((c / "rscene").rglob("*.rscene")) + list((c / "rscene").rglob("*.rscene-fragment")))
    raisim = _small(list((c / "raisim_xml").rglob("*.xml")))
    urdf = _small(list((c / "urdf").rglob("*.urdf")) + list((c / "raisim_xml").rglob("*.urdf")))
    mjcf = _small(list((c / "mjcf").rglob("*.xml")))
    airsim = _small(p for p in (c / "airsim").rglob("*.jsonc") if '"actors"' in p.read_text(errors="replace"))
    airsim_configs = _small(p for p in (c / "airsim").rglob("*.jsonc")
                            if p.name.startswith(("robot_", "env_actor_")))
    coppelia = _small(list(DATA.glob("*.simscene.xml")) + list(DATA.glob("*.simmodel.xml")))
    coppelia += _converted(rscene[:3] + raisim[:4], "coppelia_xml", ".simscene.xml")
    raisim = raisim + _spec_xml_blocks()
    rasset = _small(list(c.rglob("*.rasset")))
    height = _small(list(c.rglob("heightMap*.txt")))
    table = [
        SceneReader("rscene", ".rscene", _rscene_chunks(rscene)),
        SceneReader("raisim_xml", ".xml", raisim),
        SceneReader("coppelia_xml", ".simscene.xml", coppelia),
        SceneReader("airsim", ".jsonc", airsim),
        SceneReader("urdf", ".urdf", urdf),
        SceneReader("mjcf", ".xml", mjcf),
        SupportReader("airsim_config", ".jsonc", airsim_configs, _airsim_config, ()),
        SupportReader("height_text", ".txt", height, _height_text, ()),
        SupportReader("png", ".png", _png_seeds(), _png, ("PngError",), binary=True),
        SupportReader("rasset", ".rasset", rasset, _rasset, ("MeshFormatError",)),
        SupportReader("obj", ".obj", [("cube.obj", _CUBE_OBJ.encode())], _mesh, ("MeshFormatError",)),
        SupportReader("ply", ".ply", [("cube.ply", _CUBE_PLY.encode())], _mesh, ("MeshFormatError",)),
    ]
    return {r.name: r for r in table}


def seed_bytes(seed) -> bytes:
    return seed[1] if isinstance(seed, tuple) else seed.read_bytes()


def seed_name(seed) -> str:
    if isinstance(seed, tuple):
        return seed[0]
    try:
        return str(seed.relative_to(CORPUS))
    except ValueError:
        return str(seed.relative_to(REPO))


def seed_from_name(name: str | None, reader: Reader):
    for seed in reader.seeds:
        if seed_name(seed) == name:
            return seed
    return None


class Workspace:
    """Mirror folders of the seeds, made once, where mutated files are written."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="rscene-fuzz-")
        self._dirs: dict[str, str] = {}

    def target(self, seed, reader: Reader) -> str:
        if isinstance(seed, tuple) or seed is None:
            folder = os.path.join(self.root, "generated")
            os.makedirs(folder, exist_ok=True)
            return os.path.join(folder, "input" + reader.suffix)
        key = str(seed.parent)
        folder = self._dirs.get(key)
        if folder is None:
            mirror = os.path.join(self.root, str(len(self._dirs)))
            folder = os.path.join(mirror, seed.parent.name)
            os.makedirs(folder)
            for entry in seed.parent.parent.iterdir():
                if entry.name != seed.parent.name:
                    os.symlink(entry, os.path.join(mirror, entry.name))
            for entry in seed.parent.iterdir():
                os.symlink(entry, os.path.join(folder, entry.name))
            self._dirs[key] = folder
        stem = seed.name.split(".")[0]
        name = "fuzz_" + stem + reader.suffix
        return os.path.join(folder, name)

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Outcome:
    kind: str  # ok, clean, bad
    seconds: float
    detail: str = ""


def run_one(reader: Reader, data: bytes, path: str, time_limit: float = 10.0) -> Outcome:
    """Write ``data`` to ``path`` and read it; judge the outcome.

    ``time_limit`` is CPU seconds (ITIMER_PROF: on a shared machine wall time measures the neighbours); a
    wall limit of 6x catches an input blocked in a system call (a FIFO) that burns no CPU.
    ``Outcome.seconds`` is the input's CPU time."""
    with open(path, "wb") as handle:
        handle.write(data)
    start = time.process_time()

    def on_cpu(signum, frame):
        raise Hang(f"ran past {time_limit:g} CPU-s")

    def on_wall(signum, frame):
        raise Hang(f"blocked past {6 * time_limit:g} s wall")

    if time_limit:
        previous = signal.signal(signal.SIGPROF, on_cpu), signal.signal(signal.SIGALRM, on_wall)
        signal.setitimer(signal.ITIMER_PROF, time_limit)
        signal.setitimer(signal.ITIMER_REAL, 6 * time_limit)
    try:
        reader.run(path)
        kind, detail = "ok", ""
    except Hang as exc:
        kind, detail = "bad", f"hang: {exc}"
    except Exception as exc:  # noqa: BLE001 - judging every outcome is the point
        if reader.clean(exc, path):
            kind, detail = "clean", str(exc).split("\n")[0]
        else:
            frames = traceback.extract_tb(exc.__traceback__)
            where = next((f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(frames)
                          if "rscene_addon" in f.filename), "?")
            kind, detail = "bad", f"{type(exc).__name__}: {str(exc)[:160]} at {where}"
    finally:
        if time_limit:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGPROF, previous[0])
            signal.signal(signal.SIGALRM, previous[1])
    return Outcome(kind, time.process_time() - start, detail)


def make_input(reader: Reader, ch: mutators.Chooser, foreign_lines: list[str]):
    """(seed, mutated bytes) from the decisions of ``ch``."""
    seed = ch.choice(reader.seeds)
    raw = seed_bytes(seed)
    if reader.binary:
        return seed, mutators.mutate_bytes(raw, ch, {"reader": reader.name})
    text = raw.decode("utf-8", "surrogateescape")
    ctx = {"reader": reader.name, "foreign_lines": foreign_lines}
    return seed, mutators.to_bytes(mutators.mutate(text, ch, ctx), ch)


def foreign_lines(table: dict[str, Reader], limit: int = 400) -> list[str]:
    """Some lines of every reader's seeds, to splice into other files."""
    lines = []
    for reader in table.values():
        if reader.binary:
            continue
        for seed in reader.seeds[:3]:
            lines.extend(seed_bytes(seed).decode("utf-8", "replace").splitlines()[:limit // 30])
    return lines


def save_regression(reader: Reader, seed, data: bytes, detail: str) -> Path:
    """Keep a failing input under tests/unit/fuzz/regressions/<reader>/ (replayed by a test)."""
    folder = REGRESSIONS / reader.name
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:16]
    path = folder / (digest + reader.suffix.replace(".simscene", ""))
    path.write_bytes(data)
    index = folder / "index.json"
    entries = json.loads(index.read_text()) if index.exists() else {}
    entries[path.name] = {"seed": seed_name(seed) if seed is not None else None, "found": detail[:200]}
    index.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")
    return path


def regression_cases(table: dict[str, Reader]):
    """(reader, seed or None, file) of every kept regression input."""
    cases = []
    for folder in sorted(REGRESSIONS.glob("*")) if REGRESSIONS.exists() else ():
        reader = table.get(folder.name)
        index_path = folder / "index.json"
        if reader is None or not index_path.exists():
            continue
        index = json.loads(index_path.read_text())
        for name in sorted(index):
            cases.append((reader, seed_from_name(index[name]["seed"], reader), folder / name))
    return cases
