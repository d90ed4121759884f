"""How a record kind is laid out: positional layouts, named keys, types and Engine 2 defaults.

The tables themselves live in ``schema_table.py`` (one ``RecordSchema`` per tag, transcribed from the
format documents); this module defines their shape and the section order a new scene is written in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .values import ValueType


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Field:
    """One named field. ``default`` is a value, ``REQUIRED``, or ``callable(record) -> value``."""

    name: str
    type: ValueType
    default: Any = REQUIRED
    doc: str = ""

    @property
    def span(self) -> int:
        return self.type.span

    def default_for(self, record) -> Any:
        if callable(self.default):
            return self.default(record)
        return self.default


def F(name: str, type: ValueType, default: Any = REQUIRED, doc: str = "") -> Field:
    return Field(name, type, default, doc)


@dataclass(frozen=True)
class RecordSchema:
    """A record kind.

    ``layouts`` lists the accepted positional layouts, the current (longest) one first; a record uses
    the longest layout whose token count it reaches. ``keys`` are the documented ``key=value`` fields.
    ``singleton`` kinds are replaced by a later record of the same tag (the earlier one is still kept
    in the file). ``id_prefix`` + path is the default id of a node record. ``parent`` names the
    record kind this one belongs to and the field naming it (a splat layer and its terrain region).
    """

    tag: str
    layouts: tuple[tuple[Field, ...], ...]
    keys: tuple[Field, ...] = ()
    singleton: bool = False
    id_prefix: str | None = None
    parent: tuple[str, str] | None = None
    doc: str = ""
    _index: dict = field(default_factory=dict, compare=False, repr=False)
    _offsets: dict = field(default_factory=dict, compare=False, repr=False)
    _layout_by_count: dict = field(default_factory=dict, compare=False, repr=False)  # layout_for's answers

    def __post_init__(self):
        index = {}
        for layout in self.layouts:
            for f in layout:
                index.setdefault(f.name, f)
        key_index = {f.name: f for f in self.keys}
        clash = set(index) & set(key_index)
        if clash:
            raise ValueError(f"{self.tag}: names used both positionally and as keys: {sorted(clash)}")
        index.update(key_index)
        self._index.update(index)
        for layout in self.layouts:
            start, offsets = 0, {}
            for f in layout:
                offsets[f.name] = (f, start)
                start += f.span
            self._offsets[id(layout)] = offsets
        sizes = [layout_size(layout) for layout in self.layouts]
        self._offsets["sizes"] = sizes
        if sizes != sorted(sizes, reverse=True):
            raise ValueError(f"{self.tag}: layouts must be listed longest first")

    @property
    def full_layout(self) -> tuple[Field, ...]:
        return self.layouts[0]

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.keys)

    def field(self, name: str) -> Field | None:
        return self._index.get(name)

    def field_names(self) -> list[str]:
        return list(self._index)

    def offsets(self, layout: tuple[Field, ...]) -> dict[str, tuple[Field, int]]:
        """name -> (field, first token index) for one of this schema's layouts."""
        return self._offsets.get(id(layout), {})

    def layout_for(self, count: int) -> tuple[Field, ...] | None:
        """The longest layout that ``count`` positional tokens fill, or None if too few."""
        if count not in self._layout_by_count:  # asked once per record read: remembered
            self._layout_by_count[count] = next(
                (layout for layout, size in zip(self.layouts, self._offsets["sizes"]) if size <= count), None)
        return self._layout_by_count[count]


def layout_size(layout: tuple[Field, ...]) -> int:
    return sum(f.span for f in layout)


def default_id(prefix: str) -> Callable:
    """Default ``id`` of a node: a record-specific prefix and the path (``object_/World/Crate``)."""
    def default(record):
        path = record.get("path")
        return None if path is None else prefix + path  # None: a record too short to have its path
    return default


# The order Engine 2 writes sections in (seed document, "Section Order"); new records go here.
SECTION_ORDER = (
    "raisim_engine_scene",
    "time_step", "gravity", "solver",
    "snapping", "asset_root", "scene_graph", "prefab_override", "editor_ux", "render_bake",
    "environment", "weather", "rayrai_render",
    "material", "contact_material", "terrain_texture", "asset", "articulated_resource",
    "group",
    "terrain_region", "terrain_splat_layer", "terrain_foliage_layer",
    "light", "camera", "object", "compound", "compound_child", "deformable", "granular",
    "articulated", "articulated_ik",
    "sensor", "wire", "reflection_probe", "local_fog", "projected_decal", "irradiance_volume",
    "point_cloud", "instanced_visual",
)
SECTION_RANK = {tag: i for i, tag in enumerate(SECTION_ORDER)}
