"""Every record example of the format documents parses and is written back byte for byte.

The examples are extracted from the documents here, not copied:

* ``RsceneFile.rst`` (newer) and ``RsceneFile.OLDER.rst``: the ``.. code-block:: text`` blocks.
* ``rscene_format_v1.txt`` (the seed, the older document as plain text without block markers): lines whose
  first word is a record tag, minus prose sentences that happen to start with a tag word.

The older document wraps long records with a backslash at the end of a line "for legibility" (it says a
real file keeps a record on one line), so continuations are joined with one space. Examples that are
illustrative rather than literal are made literal, never skipped:

* a standalone ``...`` token ("more keys follow") is dropped;
* a key whose value is elided (``heights=0.02,0.02,0.0365,0.0640,...``) is dropped: the elided lists are
  the terrain_region paint lists, the splat-layer ``weights`` and the foliage ``density``, whose real
  length (17 x 17 samples) the example does not give;
* an annotation after a record (``gravity 0 0 -9.81   # three positional tokens``) is dropped: the newer
  document says there are no end-of-line comments, so it would be read as four extra fields.

Lines in example blocks that are not records are left out: key=value fragments (``quat=1,0,0,0``), the
record anatomy template (``<tag> <positional_1> ...``) and the Engine 2 project file.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from rscene_addon.formats import rscene
from rscene_addon.model import SCHEMA_BY_TAG

SHARED = Path(__file__).resolve().parents[3].parent / "shared"  # beside the checkout (tests/corpus.py)
NEWER = SHARED / "corpus/specs/raisimTech-raisim2Lib/docs/sections/RsceneFile.rst"
OLDER = SHARED / "corpus/specs/unknown-repo/docs/sections/RsceneFile.OLDER.rst"
SEED = SHARED / "seeds/rscene_format_v1.txt"
EXAMPLE_FILE = SHARED / "corpus/rscene/docs-examples/RsceneFile_example.rscene"

pytestmark = pytest.mark.skipif(not (NEWER.exists() and OLDER.exists() and SEED.exists()),
                                reason="format documents not available")

HEADER = "raisim_engine_scene"
TAGS = set(SCHEMA_BY_TAG)
_PROSE_WORD = re.compile(r"[A-Za-z][.,:]$")  # "records.", "record,", "1.Physics:" end a sentence


def rst_text_blocks(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, dedented lines) of every ``.. code-block:: text`` of an .rst file."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)\.\. code-block:: (\w+)", lines[i])
        i += 1
        if not match:
            continue
        indent = len(match.group(1))
        start, body = i, []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        if match.group(2) == "text":
            blocks.append((start, textwrap.dedent("\n".join(body)).strip("\n").split("\n")))
    return blocks


def join_continuations(lines: list[str]) -> list[str]:
    out: list[str] = []
    pending = None
    for line in lines:
        line = line.rstrip() if pending is None else pending + " " + line.strip()
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        pending = None
        out.append(line)
    if pending is not None:
        out.append(pending)
    return out


def make_literal(line: str) -> str:
    tokens = line.split()
    if "#" in tokens:
        tokens = tokens[:tokens.index("#")]
    tokens = [t for t in tokens if t != "..." and "..." not in t]
    return " ".join(tokens)


def is_record(line: str) -> bool:
    tokens = line.split()
    return bool(tokens) and tokens[0] in TAGS | {HEADER}


class Example:
    """A record example, or a whole-file example (``scene`` set) that begins with a header."""

    def __init__(self, doc: str, line: int, text: str, scene: bool = False):
        self.doc, self.line, self.text, self.scene = doc, line, text, scene

    @property
    def tag(self) -> str:
        return self.text.split()[0]

    def __repr__(self) -> str:
        return f"{self.doc}:{self.line}:{self.tag}"


def rst_examples(path: Path) -> list[Example]:
    examples = []
    for start, block in rst_text_blocks(path):
        joined = join_continuations(block)
        records = [line for line in joined if is_record(line)]
        if records and records[0].split()[0] == HEADER:
            # a whole file, comments included
            examples.append(Example(path.name, start, "\n".join(joined) + "\n", scene=True))
        else:
            examples.extend(Example(path.name, start, make_literal(line)) for line in records)
    return examples


def seed_examples() -> list[Example]:
    examples = []
    lines = SEED.read_text(encoding="utf-8").split("\n")
    i = 0
    run: list[tuple[int, str]] = []  # consecutive record lines: a whole file when it starts with a header
    while i <= len(lines):
        line = lines[i] if i < len(lines) else ""
        number = i + 1
        i += 1
        tokens = line.split()
        if len(tokens) >= 2 and tokens[0] in TAGS | {HEADER} and not any(map(_PROSE_WORD.search, tokens)):
            while line.endswith("\\") and i < len(lines):
                line = line[:-1].rstrip() + " " + lines[i].strip()
                i += 1
            run.append((number, line))
            continue
        if run and run[0][1].split()[0] == HEADER:
            text = "\n".join(text for _, text in run) + "\n"
            examples.append(Example(SEED.name, run[0][0], text, scene=True))
        else:
            examples.extend(Example(SEED.name, n, make_literal(text)) for n, text in run)
        run = []
    return examples


def all_examples() -> list[Example]:
    return rst_examples(NEWER) + rst_examples(OLDER) + seed_examples()


EXAMPLES = all_examples() if NEWER.exists() and OLDER.exists() and SEED.exists() else []
RECORD_EXAMPLES = [e for e in EXAMPLES if not e.scene]
SCENE_EXAMPLES = [e for e in EXAMPLES if e.scene]


def test_examples_were_found():
    assert len(RECORD_EXAMPLES) >= 2 * 45
    # newer: the example file; older: a commented header, two header examples, the minimal scene; the seed
    # lost the commented one with its code block markup
    assert len(SCENE_EXAMPLES) == 1 + 4 + 3
    # every record kind has an example in the documents
    tags = {e.tag for e in RECORD_EXAMPLES} | {line.split()[0] for e in SCENE_EXAMPLES
                                                for line in e.text.split("\n") if is_record(line)}
    assert tags == TAGS
    # the older document and the seed hold the same examples
    older = [e.text for e in EXAMPLES if e.doc == OLDER.name and not e.text.startswith("#")]
    seed = [e.text for e in EXAMPLES if e.doc == SEED.name]
    assert older == seed


def _context(example: Example) -> str:
    """Records an example needs before it: a layer's terrain_region (the document's own example)."""
    if example.tag in ("terrain_splat_layer", "terrain_foliage_layer"):
        region = next(e for e in RECORD_EXAMPLES if e.doc == example.doc and e.tag == "terrain_region")
        return region.text + "\n"
    return ""


@pytest.mark.parametrize("example", RECORD_EXAMPLES, ids=repr)
def test_record_example_reads_and_writes_back(example):
    version = 2 if example.doc == NEWER.name else 1
    text = f"{HEADER} {version}\n{_context(example)}{example.text}\n"
    scene = rscene.loads(text)  # raises FormatError listing every problem
    assert rscene.dumps(scene) == text
    record = scene.records[-1]
    assert record.tag == example.tag and record.schema is not None
    assert not record.extra_positional
    for name, _ in record.fields():
        record.get(name)  # every field, absent ones included, has a typed value


@pytest.mark.parametrize("example", SCENE_EXAMPLES, ids=repr)
def test_file_example_reads_and_writes_back(example):
    scene = rscene.loads(example.text)
    assert rscene.dumps(scene) == example.text


@pytest.mark.parametrize("doc", [OLDER.name, SEED.name])  # the newer one has only its example file
def test_all_examples_of_a_document_as_one_scene(doc):
    """All record examples of a document, in document order, make one scene without errors."""
    records = [e.text for e in RECORD_EXAMPLES if e.doc == doc]
    text = f"{HEADER} 1\n" + "\n".join(records) + "\n"
    scene = rscene.loads(text)
    assert rscene.dumps(scene) == text
    assert len(scene.records) == len(records) + 1


def test_example_file_is_the_corpus_file():
    example = next(e for e in SCENE_EXAMPLES if e.doc == NEWER.name)
    if EXAMPLE_FILE.exists():
        assert EXAMPLE_FILE.read_text(encoding="utf-8") == example.text


def test_engine2_written_records_list_their_keys_in_schema_order():
    """Records Engine 2 wrote (the older document's examples, which name its writer functions) list their
    documented keys in schema order, so a record that is edited keeps its key order."""
    for example in RECORD_EXAMPLES + SCENE_EXAMPLES:
        if example.doc == NEWER.name:
            continue  # hand-written
        for line in example.text.split("\n"):
            if not is_record(line):
                continue
            schema = SCHEMA_BY_TAG[line.split()[0]]
            keys = [t.partition("=")[0] for t in line.split() if "=" in t]
            order = [schema.key_names.index(k) for k in keys if k in schema.key_names]
            assert order == sorted(order), (example, keys)


def test_older_examples_have_no_undeclared_keys():
    """Every key the older document shows is declared, except the deformable's uniform ``scale``, whose
    name the positional scale (x, y, z) already uses; it is kept raw."""
    for example in RECORD_EXAMPLES:
        scene = rscene.loads(f"{HEADER} 1\n{_context(example)}{example.text}\n", lazy=True)
        unknown = set(scene.records[-1].unknown_keys)
        assert unknown == ({"scale"} if example.tag == "deformable" else set()), example


# ---------------------------------------------------------------------------------------------------------
# Typed values of the examples, read against what the documents say they mean


def _one(doc: str, tag: str, index: int = 0):
    examples = [e for e in RECORD_EXAMPLES if e.doc == doc and e.tag == tag]
    example = examples[index]
    return rscene.loads(f"{HEADER} 1\n{_context(example)}{example.text}\n").records[-1]


def test_older_examples_typed():
    crate = _one(OLDER.name, "object", 0)
    assert crate.path == "/World/Props/CrateA" and crate.get("primitive") == "box"
    assert crate.get("position") == (-0.6, 0.2, 0.6)
    assert crate.get("quaternion") == (0.998, 0.0, 0.0, 0.0698)
    assert crate.get("scale") == (0.7, 0.5, 0.45)
    assert (crate.get("radius"), crate.get("height"), crate.get("mass")) == (0.5, 1.0, 2.5)
    assert (crate.get("contactMaterial"), crate.get("material")) == ("default", "mat_safety")
    assert (crate.get("visualOnly"), crate.get("visible"), crate.get("locked")) == (False, True, False)
    assert crate.get("mesh") == "" and crate.get("bodyMode") == "dynamic"
    assert crate.get("collisionMask") == 18446744073709551615 == 2**64 - 1
    assert crate.id == "object_cratea" and crate.get("parentGroupId") == "folder_props"

    asset = _one(OLDER.name, "asset", 0)
    assert asset.get("name") == "A label with spaces"

    snapping = _one(OLDER.name, "snapping")
    assert (snapping.get("grid"), snapping.get("angle"), snapping.get("scale")) == (True, True, False)
    assert snapping.get("gridSize") == 0.1 and snapping.get("angleDegrees") == 15
    assert snapping.get("scaleStep") == 0.1
    assert snapping.get("surfaceNormal") == (0.0, 0.0, 1.0)

    editor = _one(OLDER.name, "editor_ux")
    assert editor.get("selectionFilterKinds") == ("object", "light", "camera")

    resource = _one(OLDER.name, "articulated_resource")
    assert resource.get("modules") == ("actuator_pd", "gait_planner")
    assert resource.get("jointOrder") == ("hip_yaw", "hip_pitch", "knee", "ankle")

    ik = _one(OLDER.name, "articulated_ik")
    assert ik.get("articulated") == "/World/Robots/Cassie" and ik.get("frame") == "left_foot_link"
    assert ik.get("target") == (0.0, 0.15, 0.05)
    assert ik.get("svdTolerance") == 1e-6

    articulated = _one(OLDER.name, "articulated")
    assert articulated.get("generalizedCoordinate").tolist() == [0, 0, 1.0, 1, 0, 0, 0, 0, -0.6, 1.2, -0.6]

    compound_child = _one(OLDER.name, "compound_child", 1)
    assert compound_child.get("compound") == "/World/Props/Forklift"
    assert compound_child.get("primitive") == "cylinder" and compound_child.get("radius") == 0.15

    deformable = _one(OLDER.name, "deformable")
    assert deformable.get("pinnedVertices").tolist() == [0, 1, 2, 3]
    assert deformable.get("scale") == (1.0, 1.0, 1.0)
    assert deformable.raw_keys["scale"] == "1"

    granular = _one(OLDER.name, "granular")
    assert granular.get("positions").shape == (0, 3) and granular.get("normalStiffness") == 1e6

    sensor = _one(OLDER.name, "sensor", 0)
    assert (sensor.get("kind"), sensor.get("parent"), sensor.get("parentLink")) == \
        ("rgb", "articulated_cassie", "head")
    assert (sensor.get("width"), sensor.get("height"), sensor.get("updateRate")) == (1280, 720, 30)
    assert (sensor.get("verticalFov"), sensor.get("horizontalFov")) == (45, 70)
    assert (sensor.get("calibrationFx"), sensor.get("calibrationCy")) == (900, 360)
    imu = _one(OLDER.name, "sensor", 1)
    assert imu.get("kind") == "imu" and imu.get("noiseStddev") == 0.01 and imu.get("noiseSeed") == 42

    cloud = _one(OLDER.name, "point_cloud")
    assert cloud.get("points").shape == (3, 3) and cloud.get("colors")[1].tolist() == [1, 0.5, 0, 1]

    pebbles = _one(OLDER.name, "instanced_visual")
    instances = pebbles.get("instances")
    assert instances.shape == (3, 10)
    assert instances[2].tolist() == [2.0, 0.3, 0.0, 1, 0, 0, 0, 0.8, 0.8, 0.8]
    assert pebbles.get("colorWeights").tolist() == [0.1, 0.5, 0.9]
    assert pebbles.get("terrainFoliageLayer") == -1 and pebbles.get("terrainBinding") == ""

    region = _one(OLDER.name, "terrain_region")
    assert (region.get("xSamples"), region.get("ySamples"), region.get("xSize"), region.get("ySize")) == \
        (17, 17, 8, 5.5)
    assert region.get("center") == (0.0, 3.2, 0.0) and region.get("baseTexture") == 2
    foliage = _one(OLDER.name, "terrain_foliage_layer")
    assert foliage.get("terrain") == "/World/Terrain/SculptedField"
    assert foliage.get("primitive") == "grass_blade"  # a name the newer document does not list: kept
    assert foliage.get("colorA") == (0.30, 0.55, 0.20, 1.0)
