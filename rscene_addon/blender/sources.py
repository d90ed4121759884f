"""The source documents behind imported objects: parsed once per Text datablock and kept.

Import stores the scene file in a Text datablock and gives each node object only ``rscene.source`` (the
Text's name) and ``rscene.uid`` (its record's index); what the record says (kind, path, id) is read from
the document when asked, so import writes two properties per object instead of six.

A parsed document stays valid while its Text holds the same revision: a fresh token written into the
Text whenever this add-on writes it. The token lives in the Text, so undo, redo and reloading a .blend
bring back the token that matches the content.
"""
from __future__ import annotations

import uuid

import bpy
from bpy.app.handlers import persistent

from ..formats import rscene
from ..model import FormatError, Record, Scene

REVISION_KEY = "rscene_revision"

_documents: dict[str, tuple[object, Scene | None]] = {}  # Text name -> (revision, parsed document)


def node_name(path: str) -> str:
    """The Blender name import asks for: the last part of the record's path."""
    return path.rpartition("/")[2] or path.rstrip("/").rpartition("/")[2] or path  # "/World/Group/" too


def new_revision(text) -> None:
    """Mark ``text`` as rewritten (call after every write of its content)."""
    text[REVISION_KEY] = uuid.uuid4().hex


def _revision(text):
    # a Text stored before revisions existed is never rewritten by this add-on: its datablock identifies it
    token = text.get(REVISION_KEY)
    return token if token is not None else ("untagged", text.as_pointer())


def remember(text, scene: Scene) -> None:
    """Keep ``scene``, already parsed from ``text``'s content (the importer's), as its document."""
    _documents[text.name] = (_revision(text), scene)


def document(name: str) -> Scene | None:
    """The parsed document of the Text named ``name`` (lazily decoded), or None when there is none."""
    text = bpy.data.texts.get(name) if name else None
    if text is None:
        return None
    revision = _revision(text)
    cached = _documents.get(name)
    if cached is not None and cached[0] == revision:
        return cached[1]
    try:
        scene = rscene.loads(text.as_string(), text.get("rscene_path") or name, lazy=True)
    except FormatError:
        scene = None
    _documents[name] = (revision, scene)
    return scene


def record(name: str, uid: int) -> Record | None:
    """Record ``uid`` of the document in the Text named ``name``, or None (a user's own object, a missing
    or rewritten Text)."""
    if uid < 0 or not name:
        return None
    doc = document(name)
    if doc is None or uid >= len(doc.items):
        return None
    item = doc.items[uid]
    return item if isinstance(item, Record) else None


@persistent
def forget(*_args) -> None:
    """Drop every kept document (on loading a file: they belong to the Texts of the file closed)."""
    _documents.clear()


def register() -> None:
    if forget not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(forget)


def unregister() -> None:
    if forget in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(forget)
    forget()
