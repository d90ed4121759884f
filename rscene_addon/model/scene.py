"""The Engine 2 Scene: records in file order, lookup by path and id, the group tree, asset paths.

A ``Scene`` holds every line of its file: records (typed) and ``Comment`` lines (comments and blank
lines, kept so that writing reproduces the file). Absent singleton records and absent keys take
Engine 2's defaults through ``setting()`` and ``Record.get``.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator

from .errors import ValueFormatError
from .kinds import RECORD_CLASSES, SINGLETON_TAGS, new_record
from .record import Record, record_edits
from .schema import SECTION_RANK


class Comment:
    """A comment or blank line, kept verbatim."""

    __slots__ = ("source", "line")
    changed = False

    def __init__(self, source: str, line: int = 0):
        self.source = source
        self.line = line

    def to_line(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<Comment line {self.line}: {self.source[:40]!r}>"


_LAST_RANK = len(SECTION_RANK)  # unknown kinds go last


def _child_ranks() -> dict[str, tuple[int, ...]]:
    """Owner tag -> the sorted sections of the records that hang under it (compound -> compound_child)."""
    out: dict[str, list[int]] = {}
    for tag, cls in RECORD_CLASSES.items():
        parent = cls.schema.parent if cls.schema else None
        if parent and tag in SECTION_RANK:
            out.setdefault(parent[0], []).append(SECTION_RANK[tag])
    return {owner: tuple(sorted(ranks)) for owner, ranks in out.items()}


_CHILD_RANKS = _child_ranks()


class _Order:
    """Where the records of each section end, for ``Scene.add``: ``last[rank]`` is the index of the last
    record of that section (-1: none), ``sorted`` whether the records stand in section order,
    ``last_comment`` the index of the last comment line. Kept up to date by ``inserted``; rebuilt when the
    item count changed behind its back (a reader appending to ``items``)."""

    __slots__ = ("last", "sorted", "last_comment", "length")

    def __init__(self, items: list):
        self.last = [-1] * (_LAST_RANK + 1)
        self.sorted = True
        self.last_comment = -1
        previous = -1
        for i, item in enumerate(items):
            if not isinstance(item, Record):
                self.last_comment = i
                continue
            rank = SECTION_RANK.get(item.tag, _LAST_RANK)
            self.last[rank] = i
            if rank < previous:
                self.sorted = False
            previous = max(previous, rank)
        self.length = len(items)

    def inserted(self, items: list, at: int, rank: int) -> None:
        """``items[at]`` (of section ``rank``) was just inserted."""
        last = self.last
        if at == len(items) - 1:  # appended (most adds): no section end moves, nothing after it
            last[rank] = at
            self.length += 1
            if self.sorted:
                before = items[at - 1] if at else None
                self.sorted = (SECTION_RANK.get(before.tag, _LAST_RANK) if isinstance(before, Record)
                               else _rank_near(items, at, -1)) <= rank
            return
        for r in range(len(last)):  # inserted before others: the section ends from ``at`` on move
            if last[r] >= at:
                last[r] += 1
        if self.last_comment >= at:
            self.last_comment += 1
        last[rank] = max(last[rank], at)
        self.length += 1
        if self.sorted:  # still in order when its neighbouring records are of its section or beyond
            self.sorted = _rank_near(items, at, -1) <= rank <= _rank_near(items, at, 1)


def _rank_near(items: list, at: int, step: int) -> int:
    """The section of the nearest record before (step -1) or after (+1) ``items[at]``; -1 / the last
    rank where there is none."""
    i = at + step
    while 0 <= i < len(items):
        if isinstance(items[i], Record):
            return SECTION_RANK.get(items[i].tag, _LAST_RANK)
        i += step
    return -1 if step < 0 else _LAST_RANK


class Scene:
    """A scene document. ``items`` is every line in file order (records and comments)."""

    def __init__(self, version: int = 2, path: str | None = None, *, header: bool = True):
        self.items: list[Record | Comment] = []
        self.path = path
        self.crlf = False  # line ending for lines this program adds
        self.final_newline = True
        self.warnings: list = []
        self._index: dict[str, Record] | None = None
        self._order: _Order | None = None
        self._index_edits = -1
        if header:
            self.items.append(new_record("raisim_engine_scene", version=version))

    # -- records ------------------------------------------------------------------------------------------

    @property
    def header(self) -> Record:
        for item in self.items:
            if isinstance(item, Record) and item.tag == "raisim_engine_scene":
                return item
        raise LookupError("scene has no header record")

    @property
    def version(self) -> int:
        return self.header.get("version")

    @property
    def records(self) -> list[Record]:
        """Every record in file order (header included)."""
        return [item for item in self.items if isinstance(item, Record)]

    def of(self, *tags: str) -> list[Record]:
        """Records of the given kinds, in file order."""
        wanted = set(tags)
        return [item for item in self.items if isinstance(item, Record) and item.tag in wanted]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.records:
            counts[record.tag] = counts.get(record.tag, 0) + 1
        return counts

    def setting(self, tag: str) -> Record:
        """The record in force for a singleton kind (the last one wins), or Engine 2's defaults."""
        return self.settings(tag)[tag]

    def settings(self, *tags: str) -> dict[str, Record]:
        """``setting`` of several singleton kinds, in one pass over the records (a pass per kind adds up
        in a large scene)."""
        for tag in tags:
            if tag not in SINGLETON_TAGS:
                raise KeyError(f"{tag!r} is not a singleton record kind")
        found = {record.tag: record for record in self.of(*tags)}  # the last one of a kind wins
        return {tag: found[tag] if tag in found else new_record(tag) for tag in tags}

    @property
    def time_step(self) -> float:
        return self.setting("time_step").get("dt")

    @property
    def gravity(self) -> tuple[float, float, float]:
        return self.setting("gravity").get("gravity")

    # -- editing ----------------------------------------------------------------------------------------

    def add(self, record: Record) -> Record:
        """Insert a record where Engine 2 would write it: after the last record of its section or
        an earlier one (after its parent's other children for splat layers, IK targets and the like).

        O(1) (a few dozen steps, plus the list insert) while the records stand in section order, as every
        reader builds them; a scene read from a file in another order takes the scan of every item."""
        rank = SECTION_RANK.get(record.tag, _LAST_RANK)
        order = self._order_state()
        parent = record.schema.parent if record.schema else None
        owner = self.find(record.get(parent[1])) if parent else None
        if owner is None:
            last = max(order.last[:rank + 1])  # the last record of this section or an earlier one
            insert_at = last + 1 if last >= 0 else len(self.items)
        else:
            insert_at = self._after_children_sorted(order, owner) if order.sorted else None
            if insert_at is None:
                insert_at = self._after_children(owner)
        self.items.insert(insert_at, record)
        order.inserted(self.items, insert_at, rank)
        self._indexed(record)
        return record

    def _order_state(self) -> _Order:
        if self._order is None or self._order.length != len(self.items):
            self._order = _Order(self.items)
        return self._order

    def _after_children_sorted(self, order: _Order, owner: Record) -> int | None:
        """Where ``_after_children`` would put a child of ``owner``, without its walk, when the owner is
        the last record of its section: in section order its children's sections follow it directly."""
        owner_rank = SECTION_RANK.get(owner.tag, _LAST_RANK)
        q = order.last[owner_rank]
        child_ranks = _CHILD_RANKS.get(owner.tag)
        if q < 0 or self.items[q] is not owner or not child_ranks or order.last_comment > q:
            return None
        if child_ranks != tuple(range(owner_rank + 1, owner_rank + 1 + len(child_ranks))):
            return None  # other sections between the owner's and its children's: the walk stops there
        end = max(order.last[r] for r in child_ranks)
        return max(end, q) + 1

    def _indexed(self, record: Record) -> None:
        """Keep the lookup index up to date (a rebuild per added record made adding n records O(n^2))."""
        if self._index is None:
            return
        if record.schema is None or record.schema.field("path") is None:
            return
        try:
            keys = [key for key in (record.path, record.id) if key]
        except ValueFormatError:
            return
        if any(key in self._index for key in keys):
            self._index = None  # a clash: which record wins depends on the file order, rebuild
            return
        for key in keys:
            self._index[key] = record

    def _after_children(self, owner: Record) -> int:
        i = self.items.index(owner) + 1
        while i < len(self.items):
            item = self.items[i]
            if not (isinstance(item, Record) and item.schema and item.schema.parent
                    and item.schema.parent[0] == owner.tag):
                break
            i += 1
        return i

    def remove(self, record: Record) -> None:
        self.items.remove(record)
        self._index = None
        self._order = None

    def extend(self, records: Iterable[Record]) -> None:
        for record in records:
            self.add(record)

    # -- lookup -----------------------------------------------------------------------------------------

    def _build_index(self) -> dict[str, Record]:
        self._index_edits = record_edits()
        index: dict[str, Record] = {}
        for record in self.records:
            if record.schema is None or record.schema.field("path") is None:
                continue  # only scene-tree nodes: material, asset and texture ids are other namespaces
            try:
                keys = (record.path, record.id)
            except ValueFormatError:  # check() reports it with its line; nothing can refer to it
                continue
            for key in keys:
                if key and key not in index:
                    index[key] = record
        return index

    def find(self, ref: str | None) -> Record | None:
        """The node whose id or path is ``ref`` (ids win over paths on a clash), or None."""
        if not ref:
            return None
        if self._index is None:
            self._index = self._build_index()
        found = self._index.get(ref)
        if found is None and self._index_edits == record_edits():
            return None  # no record was edited since the index was built: a miss is a miss
        if found is None or ref not in (found.path, found.id):
            self._index = self._build_index()  # records may have been renamed since the last lookup
            found = self._index.get(ref)
        return found

    def by_path(self, path: str) -> Record | None:
        return next((r for r in self.records if r.schema and r.path == path), None)

    def by_id(self, ident: str) -> Record | None:
        return next((r for r in self.records if r.schema and r.id == ident), None)

    def parent_of(self, record: Record) -> Record | None:
        """The folder or node a record hangs under (``parentGroupId``, or ``parentId`` for groups)."""
        if record.schema is None:
            return None
        keys = record.raw_keys
        if not keys:  # both are keys: a record without any (most) has no parent
            return None
        for key in ("parentGroupId", "parentId"):
            if keys.get(key, "-") in ("", "-"):
                continue  # absent or empty: the default, no parent (both keys default to "")
            if record.schema.field(key) or key in keys:
                parent = self.find(record.get(key))
                if parent is not None and parent is not record:
                    return parent
        return None

    def parent_cycle(self, record: Record) -> list[Record] | None:
        """The loop of parents (``parentGroupId``/``parentId``) that ``record`` is on, starting with it, or
        None. A loop further up the chain that does not pass through ``record`` is not its loop."""
        chain, on_chain = [record], {id(record)}
        walk = self.parent_of(record)
        while walk is not None:
            if walk is record:
                return chain
            if id(walk) in on_chain:
                return None
            chain.append(walk)
            on_chain.add(id(walk))
            walk = self.parent_of(walk)
        return None

    def children(self) -> dict[Record | None, list[Record]]:
        """The group tree: parent (None for the root) -> child nodes in file order.

        A cycle of parents is broken by putting its first member at the root.
        """
        tree: dict[Record | None, list[Record]] = {None: []}
        for record in self.records:
            if record.schema is None or not record.schema.field("path"):
                continue
            parent = self.parent_of(record)
            if parent is not None:
                seen = {id(record)}
                walk = parent
                while walk is not None:
                    if id(walk) in seen:
                        parent = None
                        break
                    seen.add(id(walk))
                    walk = self.parent_of(walk)
            tree.setdefault(parent, []).append(record)
        return tree

    # -- files ------------------------------------------------------------------------------------------

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()

    def resolve(self, ref: str) -> str:
        """Absolute path of a file reference, by the version-2 rule: an empty or absolute path as is;
        a relative path next to the scene file if it exists there, else under ``asset_root``."""
        if not ref or os.path.isabs(ref):
            return ref
        here = os.path.normpath(os.path.join(self.directory, ref))
        if os.path.exists(here):
            return here
        root = self.setting("asset_root").get("root") or "."
        base = root if os.path.isabs(root) else os.path.join(self.directory, root)
        return os.path.normpath(os.path.join(base, ref))

    def __repr__(self) -> str:
        return f"<Scene v{self.version} {len(self.records)} records{' ' + self.path if self.path else ''}>"


__all__ = ["Comment", "Scene", "RECORD_CLASSES"]
