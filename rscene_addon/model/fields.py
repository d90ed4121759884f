"""Typed access to record fields that works whatever the schema table already knows.

The simulator and the record-to-geometry layer read positional fields at the index the schema table gives
and keys by their documented name. A key the record's schema declares is decoded by the
schema (``Record.get``); otherwise its raw text is decoded here. Positional tokens are decoded here as
well, so a record kind that the schema table does not describe yet (an ``UnknownRecord``) still works.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .kinds import SCHEMA_BY_TAG
from .values import decode_flag, decode_number, decode_text

# Kinds whose positional tokens are decoded here (leniently) rather than by ``Record.get``: where they sit
# comes from the schema table's current layout, the one home of every record layout.
LENIENT_POSITIONAL_KINDS = ("solver", "contact_material", "terrain_region", "wire", "compound", "compound_child",
                            "deformable", "granular")


def _layout(tag: str) -> dict[str, tuple[int, int]]:
    """Field name -> (first token index, token count) in the kind's current (longest) positional layout."""
    out, start = {}, 0
    for fld in SCHEMA_BY_TAG[tag].layouts[0]:
        out[fld.name] = (start, fld.span)
        start += fld.span
    return out


POSITIONAL = {tag: _layout(tag) for tag in LENIENT_POSITIONAL_KINDS}


class Fields:
    """Decoded fields of one record: ``f.num('friction', 0.8)``, ``f.vec3('position')``..."""

    def __init__(self, record):
        self.record = record
        self.tag = record.tag
        self._positional = POSITIONAL.get(self.tag, {})

    # -- raw text --------------------------------------------------------------------------------------
    def _pos_tokens(self, name: str) -> list[str] | None:
        spec = self._positional.get(name)
        if spec is None:
            return None
        start, span = spec
        tokens = self.record.positional_tokens
        if len(tokens) < start + span:
            return None
        return tokens[start:start + span]

    def _schema_value(self, name: str) -> Any:
        schema = self.record.schema
        if schema is not None and schema.field(name) is not None and name not in self._positional:
            try:
                return self.record.get(name)
            except Exception:  # malformed: the caller's default applies
                return None
        return None

    def raw(self, name: str) -> str | None:
        tokens = self._pos_tokens(name)
        if tokens is not None:
            return " ".join(tokens)
        value = self.record.raw_keys.get(name)
        if value is None or value == "":
            return None
        return value

    def has(self, name: str) -> bool:
        raw = self.raw(name)
        return raw is not None and raw != "-"

    # -- typed ------------------------------------------------------------------------------------------
    def text(self, name: str, default: str = "") -> str:
        value = self._schema_value(name)
        if isinstance(value, str):
            return value
        raw = self.raw(name)
        return default if raw is None else decode_text(raw)

    def num(self, name: str, default: float) -> float:
        value = self._schema_value(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raw = self.raw(name)
        if raw is None or raw == "-":
            return float(default)
        try:
            return decode_number(raw)
        except Exception:
            return float(default)

    def int(self, name: str, default: int) -> int:
        return int(round(self.num(name, default)))

    def group(self, name: str, default: int) -> int:
        value = self._schema_value(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raw = self.raw(name)
        try:
            return int(raw) if raw not in (None, "-") else int(default)
        except ValueError:
            return int(default)

    def flag(self, name: str, default: bool) -> bool:
        value = self._schema_value(name)
        if isinstance(value, bool):
            return value
        raw = self.raw(name)
        if raw is None or raw == "-":
            return default
        try:
            return decode_flag(raw)
        except Exception:
            return default

    def vec(self, name: str, default, n: int = 3) -> np.ndarray:
        value = self._schema_value(name)
        if value is not None and not isinstance(value, str):
            arr = np.asarray(value, dtype=np.float64).ravel()
            if arr.size >= n:
                return arr[:n].copy()
        tokens = self._pos_tokens(name)
        try:
            if tokens is not None:
                return np.array([decode_number(t) for t in tokens], dtype=np.float64)
            raw = self.record.raw_keys.get(name)
            if raw not in (None, "", "-"):
                vals = [decode_number(t) for t in raw.replace(";", ",").split(",")]
                if len(vals) >= n:
                    return np.array(vals[:n], dtype=np.float64)
        except Exception:
            pass
        return np.asarray(default, dtype=np.float64).copy()

    def vec3(self, name: str, default=(0.0, 0.0, 0.0)) -> np.ndarray:
        return self.vec(name, default, 3)

    def quat(self, name: str, default=(1.0, 0.0, 0.0, 0.0)) -> np.ndarray:
        return self.vec(name, default, 4)

    def numbers(self, name: str) -> np.ndarray:
        """A list field (``1,2;3``) as a float64 array; empty when absent."""
        value = self._schema_value(name)
        if value is not None and not isinstance(value, str):
            return np.asarray(value, dtype=np.float64).ravel()
        raw = self.raw(name)
        if raw in (None, "", "-"):
            return np.zeros(0)
        try:
            return np.array([decode_number(t) for t in raw.replace(";", ",").split(",") if t],
                            dtype=np.float64)
        except Exception:
            return np.zeros(0)
