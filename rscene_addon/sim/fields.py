"""Typed access to record fields that works whatever the schema table already knows.

The simulator reads positional fields by their documented index (``RsceneFile.rst`` and the v1 seed
document) and keys by their documented name. A key the record's schema declares is decoded by the
schema (``Record.get``); otherwise its raw text is decoded here. Positional tokens are decoded here as
well, so a record kind that the schema table does not describe yet (an ``UnknownRecord``) still works.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..model.values import decode_flag, decode_number, decode_text

# Documented positional layouts: name -> (first token index, token count).
POSITIONAL = {
    "solver": {"iterations": (0, 1), "tolerance": (1, 1), "erp": (2, 1), "mode": (3, 1)},
    "contact_material": {"materialA": (0, 1), "materialB": (1, 1), "friction": (2, 1), "restitution": (3, 1),
                         "restitutionThreshold": (4, 1), "staticFriction": (5, 1),
                         "staticFrictionVelocityThreshold": (6, 1), "rollingFriction": (7, 1),
                         "spinningFriction": (8, 1)},
    "terrain_region": {"path": (0, 1), "xSamples": (1, 1), "ySamples": (2, 1), "xSize": (3, 1),
                       "ySize": (4, 1), "center": (5, 3)},
    "wire": {"path": (0, 1), "kind": (1, 1), "bodyA": (2, 1), "bodyB": (3, 1), "length": (4, 1)},
    "compound": {"path": (0, 1), "position": (1, 3), "quaternion": (4, 4), "scale": (8, 3), "mass": (11, 1),
                 "bodyMode": (12, 1), "visible": (13, 1), "collidable": (14, 1)},
    "compound_child": {"compound": (0, 1), "primitive": (1, 1), "position": (2, 3), "quaternion": (5, 4),
                       "scale": (9, 3)},
    "deformable": {"path": (0, 1), "kind": (1, 1), "meshPath": (2, 1), "position": (3, 3),
                   "quaternion": (6, 4), "scale": (10, 3)},
    "granular": {"path": (0, 1), "kind": (1, 1), "position": (2, 3), "quaternion": (5, 4), "scale": (9, 3)},
}


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
