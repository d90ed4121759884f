"""The ``.rscene`` codec: RaiSim Engine 2 scene files, versions 1 and 2, read and written losslessly.

Reading is two passes. ``parse`` splits lines into tokens and builds records (nothing is decoded yet);
``check`` decodes every field and runs the per-record rules, collecting every error of the file.
``read``/``loads`` do both unless ``lazy=True``. Writing puts back the source line of every record that
was not changed, so an unedited scene is reproduced byte for byte (CRLF, comments, spacing included).
"""
from __future__ import annotations

from ..model import Comment, Diagnostic, FormatError, Record, Scene, record_class
from ..model.checks import RECORD_CHECKS
from ..model.kinds import RECORD_CLASSES
from ..model.errors import ValueFormatError
from ..model.record import decode_batch, paused_gc, split_tokens
from ..model.values import decode_int
from .atomic import read_text, write_text_atomic

HEADER_TAG = "raisim_engine_scene"
SUPPORTED_VERSIONS = (1, 2)
EXTENSIONS = (".rscene",)
def parse(text: str, path: str = "<string>") -> Scene:
    """Split ``text`` into a Scene without decoding fields. Raises FormatError for a bad header."""
    scene = Scene(path=None if path.startswith("<") else path, header=False)
    lines = text.split("\n")
    scene.final_newline = lines[-1] == ""
    if scene.final_newline:
        lines.pop()
    scene.crlf = bool(lines) and lines[0].endswith("\r")
    items = scene.items
    classes = RECORD_CLASSES
    header_seen = False
    for number, line in enumerate(lines, 1):
        head = line.split(None, 1) if line.isascii() else split_tokens(line)[:1]
        if not head or head[0][0] == "#":
            items.append(Comment(line, number))
            continue
        tag = head[0]
        if not header_seen:
            _check_header(split_tokens(line), path, number)
            header_seen = True
        items.append((classes.get(tag) or record_class(tag)).from_line(line, number))
    if not header_seen:
        raise FormatError(Diagnostic(path, 0, "", "empty file: missing 'raisim_engine_scene' header"))
    return scene


def _check_header(tokens: list[str], path: str, number: int) -> None:
    if tokens[0] != HEADER_TAG:
        raise FormatError(Diagnostic(path, number, tokens[0],
                                     f"expected the '{HEADER_TAG} N' header (N: the format version) before "
                                     f"the first record, got {tokens[0]!r}"))
    if len(tokens) != 2:
        raise FormatError(Diagnostic(path, number, HEADER_TAG, "the header takes exactly one field, the version"))
    try:
        version = decode_int(tokens[1])  # the record's own rule, so that scene.version reads it back
    except ValueFormatError:
        raise FormatError(Diagnostic(path, number, HEADER_TAG, f"bad version {tokens[1]!r}")) from None
    if version not in SUPPORTED_VERSIONS:
        raise FormatError(Diagnostic(path, number, HEADER_TAG,
                                     f"unsupported rscene version {version} (this reader knows 1 and 2)"))


def check(scene: Scene, path: str | None = None) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """Decode every field and apply the record rules. Returns (errors, warnings)."""
    path = path or scene.path or "<string>"
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    seen: dict[str, list[Record]] = {}
    records = scene.records
    for record, decoded in zip(records, decode_batch(records)):
        if record.schema is None:
            warnings.append(Diagnostic(path, record.line, record.tag,
                                       "unknown record kind: kept as written", "warning"))
            continue
        if decoded:  # positional fields done column-wise; keys are few and vary
            problems = record.decode_keys()
        else:
            problems = record.structure_errors()
            if not problems:
                problems = record.decode_all()
        problems += record.surplus_errors()  # tokens beyond the layout: kept, but reported
        rule = RECORD_CHECKS.get(record.tag)
        if rule is not None and not problems:
            problems = rule(record, scene, seen)
        for message in problems:
            if message.startswith("warning: "):
                warnings.append(Diagnostic(path, record.line, record.tag, message[9:], "warning"))
            else:
                errors.append(Diagnostic(path, record.line, record.tag, message))
        seen.setdefault(record.tag, []).append(record)
    return errors, warnings


def loads(text: str, path: str = "<string>", *, lazy: bool = False) -> Scene:
    """Parse and (unless ``lazy``) check a scene. Raises FormatError listing every error."""
    with paused_gc():
        scene = parse(text, path)
        if lazy:
            return scene
        errors, warnings = check(scene, path)
    scene.warnings = warnings
    if errors:
        raise FormatError(errors)
    return scene


def read(path: str, *, lazy: bool = False) -> Scene:
    return loads(read_text(path), path, lazy=lazy)


def dumps(scene: Scene) -> str:
    """The scene's text: unchanged lines as read, changed and new records canonical."""
    new_cr = "\r" if scene.crlf else ""
    lines = []
    for item in scene.items:
        if not item.changed:
            lines.append(item.source)
            continue
        text = item.to_line()
        source = item.source
        lines.append(text + ("\r" if (source.endswith("\r") if source is not None else new_cr) else ""))
    text = "\n".join(lines)
    if scene.final_newline and lines:
        text += "\n"
    return text


def write(scene: Scene, path: str) -> None:
    """Write atomically (a temporary file in the same folder, then a rename)."""
    write_text_atomic(path, dumps(scene))
