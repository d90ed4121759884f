"""One typed record class per tag, generated from the schema tables.

``RECORD_CLASSES['object']`` is the class ``Object``; each field is a property (``obj.mass``).
"""
from __future__ import annotations

from .record import Record, UnknownRecord, make_record_class
from .schema import RecordSchema
from .schema_table import SCHEMAS

SCHEMA_BY_TAG: dict[str, RecordSchema] = {s.tag: s for s in SCHEMAS}
RECORD_CLASSES: dict[str, type[Record]] = {s.tag: make_record_class(s) for s in SCHEMAS}
SINGLETON_TAGS = frozenset(s.tag for s in SCHEMAS if s.singleton)


def record_class(tag: str) -> type[Record]:
    """The typed class for ``tag``; ``UnknownRecord`` for a tag this version does not know."""
    return RECORD_CLASSES.get(tag, UnknownRecord)


def new_record(tag: str, **values) -> Record:
    """Create a record of kind ``tag``: ``new_record('object', path='/World/Box', primitive='box')``."""
    if tag not in RECORD_CLASSES:
        raise KeyError(f"unknown record kind {tag!r}")
    return RECORD_CLASSES[tag](**values)
