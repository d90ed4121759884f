"""Instance and class ids for segmentation, their colours, and 2D boxes from an id image (pure).

An *entity* is what segmentation and lidar returns distinguish: a node record's object (with every
child mesh and instance it brings along) or a plain Blender object. Ids:

* instance id: the record's ``instanceId`` when >= 0; otherwise ``offset + 1 + k`` for the k-th entity
  without one in sorted key order (key = record path, or the Blender object's name), where ``offset``
  is the largest explicit id (0 if none). So without explicit ids an entity's id is
  ``1 + index in the sorted paths``, and automatic ids never collide with explicit ones. Entities
  that share an explicit id share it in the images (e.g. parts of one robot).
* class id: 1 + index of ``semanticClass`` in the sorted list of distinct non-empty classes; 0 for
  unlabelled entities and background.
* background: instance id **-1**, class id **0**.

Cycles renders an integer per object (``pass_index``, at most 32767), so every entity gets a dense
*pass index* ``1..N`` in key order, mapped to its ids through lookup tables after the render; ids
themselves may be any int32.
"""
from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np

__all__ = ["BACKGROUND_CLASS", "BACKGROUND_INSTANCE", "Entity", "IdTable", "boxes_2d", "color_for_id"]

BACKGROUND_INSTANCE = -1
BACKGROUND_CLASS = 0
MAX_PASS_INDEX = 32767  # Blender's Object.pass_index limit

_GOLDEN = 0.618033988749895


def color_for_id(value: int) -> tuple[float, float, float]:
    """A stable, well-spread RGB colour (0..1) for an id: hue steps by the golden ratio."""
    hue = (int(value) * _GOLDEN) % 1.0
    return tuple(round(c, 6) for c in colorsys.hsv_to_rgb(hue, 0.75, 0.95))


@dataclass(frozen=True)
class Entity:
    """Something with its own id. ``key`` is unique (record path, or ``blender:<object name>``)."""

    key: str
    path: str = ""
    name: str = ""
    kind: str = ""
    explicit_id: int = -1
    semantic_class: str = ""
    color: tuple | None = None
    static: bool = False  # background that never moves: ground, terrain, bodies marked static
    primitive: str = ""  # the record's primitive (box, sphere, cylinder, capsule, ...), for BOP symmetries


class IdTable:
    """Ids for a list of entities (see the module docstring); built once per run, the same in every
    chunk since it depends on the scene only."""

    def __init__(self, entities) -> None:
        entities = sorted(entities, key=lambda e: e.key)
        keys = [e.key for e in entities]
        if len(set(keys)) != len(keys):
            raise ValueError("entity keys must be unique")
        self.entities = entities
        explicit = [e.explicit_id for e in entities if e.explicit_id >= 0]
        offset = max(explicit, default=0)
        classes = sorted({e.semantic_class for e in entities if e.semantic_class})
        self.class_ids = {name: i + 1 for i, name in enumerate(classes)}
        self.pass_index: dict[str, int] = {}
        self.instance_id: dict[str, int] = {}
        self.class_id: dict[str, int] = {}
        auto = 0
        for i, e in enumerate(entities):
            self.pass_index[e.key] = i + 1
            if e.explicit_id >= 0:
                self.instance_id[e.key] = int(e.explicit_id)
            else:
                auto += 1
                self.instance_id[e.key] = offset + auto
            self.class_id[e.key] = self.class_ids.get(e.semantic_class, BACKGROUND_CLASS)
        n = len(entities)
        self.instance_lut = np.full(n + 1, BACKGROUND_INSTANCE, dtype=np.int32)
        self.class_lut = np.full(n + 1, BACKGROUND_CLASS, dtype=np.int32)
        for e in entities:
            self.instance_lut[self.pass_index[e.key]] = self.instance_id[e.key]
            self.class_lut[self.pass_index[e.key]] = self.class_id[e.key]
        self._by_key = {e.key: e for e in entities}

    def __len__(self) -> int:
        return len(self.entities)

    def entity(self, key: str) -> Entity:
        return self._by_key[key]

    def color(self, key: str) -> tuple:
        e = self._by_key[key]
        if e.color is not None:
            return tuple(float(c) for c in e.color[:3])
        return color_for_id(self.instance_id[key])

    def decode(self, index_image) -> tuple[np.ndarray, np.ndarray]:
        """``(instance, semantic)`` int32 images ``(H, W)`` from Cycles' object index pass ``(H, W)``.

        The pass holds whole numbers (first sample only); values outside ``0..N`` (other objects'
        own pass indices) count as background.
        """
        idx = np.rint(np.asarray(index_image, dtype=np.float64)).astype(np.int64)
        idx[(idx < 0) | (idx > len(self.entities))] = 0
        return self.instance_lut[idx], self.class_lut[idx]

    def id_map(self) -> dict:
        """JSON-ready ``{"instances": {id: [...]}, "classes": {id: name}}``: each instance id lists its
        entities (path, name, kind, class, class id, colour)."""
        instances: dict[str, list] = {}
        for e in self.entities:
            iid = self.instance_id[e.key]
            instances.setdefault(str(iid), []).append({
                "key": e.key, "path": e.path, "name": e.name, "kind": e.kind, "class": e.semantic_class,
                "class_id": self.class_id[e.key], "color": list(self.color(e.key)),
            })
        classes = {str(BACKGROUND_CLASS): ""}
        classes.update({str(i): name for name, i in self.class_ids.items()})
        return {
            "background_instance_id": BACKGROUND_INSTANCE,
            "background_class_id": BACKGROUND_CLASS,
            "instances": dict(sorted(instances.items(), key=lambda kv: int(kv[0]))),
            "classes": classes,
        }


def boxes_2d(instance_image, background: int = BACKGROUND_INSTANCE) -> dict[int, dict]:
    """Per instance id present in ``instance_image`` ``(H, W)``: ``{"bbox": [x0, y0, x1, y1],
    "pixels": n}`` with pixel-corner coordinates (``x1 = last column + 1``), i.e. the tight box of
    its pixels in the top-left-origin pixel convention of ``K``."""
    img = np.asarray(instance_image)
    if img.ndim != 2:
        raise ValueError(f"instance image must be (H, W), got {img.shape}")
    flat = img.ravel()
    keep = np.flatnonzero(flat != background)
    if keep.size == 0:
        return {}
    ids = flat[keep]
    order = np.argsort(ids, kind="stable")
    ids, keep = ids[order], keep[order]
    rows, cols = np.divmod(keep, img.shape[1])
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    counts = np.diff(np.r_[starts, ids.size])
    x0, x1 = np.minimum.reduceat(cols, starts), np.maximum.reduceat(cols, starts) + 1
    y0, y1 = np.minimum.reduceat(rows, starts), np.maximum.reduceat(rows, starts) + 1
    return {
        int(ids[s]): {"bbox": [int(a), int(b), int(c), int(d)], "pixels": int(n)}
        for s, a, b, c, d, n in zip(starts, x0, y0, x1, y1, counts)
    }
