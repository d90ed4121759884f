"""Records: one line of a scene file, typed on demand, written back exactly unless changed.

A record read from a file keeps its source line. Reading only splits the line into tokens; fields are
decoded when first asked for (a 16 MB height map is not parsed until someone needs it). A record that is
never changed is written back as its source line, byte for byte. Setting a field marks it changed, and a
changed or new record is written canonically: the full positional layout, the documented keys in
schema order, then unknown keys in their original order.
"""
from __future__ import annotations

import gc
import re
from contextlib import contextmanager
from itertools import repeat
from typing import Any, Iterator

from .errors import ValueFormatError
from .schema import REQUIRED, Field, RecordSchema, layout_size
from .values import FLAG, NUMBER, TEXT, decode_number_column, encode_text


_SEPARATORS = re.compile(r"[ \t\r\n\x0b\x0c]+")
# Edits of any record so far (Scene.find rebuilds its index on a miss only after one). A module-level
# cell, not a class attribute: writing an attribute of ``Record`` invalidates the attribute caches of every
# record class, which made each record that a reader builds (one write each) about twice as slow to make.
_EDITS = [0]


def record_edits() -> int:
    """How many times any record was edited (set, unset, or made with keys) so far in this process."""
    return _EDITS[0]


def split_tokens(line: str) -> list[str]:
    """Tokens are separated by spaces, tabs and carriage returns."""
    # str.split() is fast but also splits at Unicode spaces, which are ordinary bytes in this format.
    if line.isascii():
        return line.split()
    return [t for t in _SEPARATORS.split(line) if t]


class Record:
    """Base of every record kind. Subclasses set ``schema`` (``None`` for unknown tags)."""

    schema: RecordSchema | None = None
    tag: str = ""

    __slots__ = ("_token_list", "source", "line", "_layout", "_pos", "_keys", "_split", "changed", "_cache", "_problems")
    _template: tuple | None = None  # per record class, see _new_template
    _built_checked: frozenset | None = None  # per record class, see decode_keys

    def __init__(self, **values: Any):
        """A new record: ``Object(path="/World/Box", primitive="box", mass=2.0)``.

        Positional fields take their Engine 2 default when not given; required ones must be given.
        """
        self._token_list: list[str] | None = []
        self.source: str | None = None  # the source line (without its newline) while unchanged
        self.line = 0
        self._split = True
        self.changed = True
        self._cache: dict[str, Any] = {}
        self._keys: dict[str, str] = {}
        defaults, derived, eager, required, slots, self._layout = type(self)._template or _new_template(type(self))
        for name in required:
            if name not in values:
                raise TypeError(f"{self.tag}: missing required field {name!r}")
        pos = self._pos = list(defaults)
        keys = None
        for name, value in values.items():
            slot = slots.get(name)
            if slot is None:
                if keys is None:
                    keys = {}
                keys[name] = value
            elif slot[2] == 1:
                pos[slot[1]] = slot[0].encode(value)
            else:
                start = slot[1]
                pos[start:start + slot[2]] = slot[0].encode_tokens(value)
        for field in eager:  # a default that does not encode fails per record, as it always did
            if field.name not in values:
                self._set_positional(field, field.default)
        for field in derived:
            if field.name not in values:
                self._set_positional(field, field.default(self))
                self._cache.clear()
        if keys:  # ``set`` of each, without its per-call steps that a record being made does not need
            index = self.schema._index
            own = self._keys
            for name, value in keys.items():
                field = index.get(name)
                if field is not None:
                    own[name] = field.type.encode(value)
                else:  # _encode_unknown, its common case (a str) without the call
                    own[name] = encode_text(value) if type(value) is str else _encode_unknown(value)  # noqa: E721
            self._cache.clear()
            _EDITS[0] += 1

    @classmethod
    def maker(cls, fixed: dict[str, Any], varying: tuple[str, ...]):
        """``make(*values)``, what ``cls(**fixed, **dict(zip(varying, values)))`` makes, with ``fixed``
        encoded once: for a reader's many records alike but for a few fields (10^5 shapes of one size and
        material differ in path and pose). Positional fields only; None where a record cannot be made this
        way (a key, a derived or eagerly encoded default not given, a value of ``fixed`` that does not
        encode). A value of ``varying`` that does not encode goes through ``cls(...)`` itself, for its
        error as ever."""
        defaults, derived, eager, required, slots, layout = cls._template or _new_template(cls)
        names = set(fixed) | set(varying)
        if (len(names) != len(fixed) + len(varying) or any(name not in slots for name in names)
                or any(name not in names for name in required)
                or any(field.name not in names for field in derived + eager)):
            return None
        pos = list(defaults)
        try:
            for name, value in fixed.items():
                kind, start, span = slots[name]
                pos[start:start + span] = [kind.encode(value)] if span == 1 else kind.encode_tokens(value)
        except Exception:  # noqa: BLE001 - cls(...) gives the error, each time, as it would have
            return None
        template = tuple(pos)
        plan = tuple(slots[name] for name in varying)
        new = cls.__new__

        def make(*values):
            record = new(cls)
            pos = list(template)
            try:
                for (kind, start, span), value in zip(plan, values):
                    if span == 1:
                        pos[start] = kind.encode(value)
                    else:
                        pos[start:start + span] = kind.encode_tokens(value)
            except Exception:  # noqa: BLE001
                return cls(**fixed, **dict(zip(varying, values)))
            # what __init__ leaves in a record made without keys
            record._token_list = []
            record.source = None
            record.line = 0
            record._split = True
            record.changed = True
            record._cache = {}
            record._keys = {}
            record._layout = layout
            record._pos = pos
            return record
        return make

    @classmethod
    def from_line(cls, source: str, line: int) -> "Record":
        """A record read from a file: only the source line is stored; it is split on first use."""
        record = cls.__new__(cls)
        record._token_list = None
        record.source = source
        record.line = line
        record._split = False
        record.changed = False
        record._cache = {}
        return record

    @property
    def _tokens(self) -> list[str]:
        if self._token_list is None:
            self._token_list = split_tokens(self.source)
        return self._token_list

    # -- structure ----------------------------------------------------------------------------------------

    def _ensure_split(self) -> None:
        """Separate positional tokens from ``key=value`` tokens (first use only)."""
        if not self._split:
            self._split_tokens()

    def _split_tokens(self) -> None:
        """One pass over the tokens: positional list, key dict, and the structural problems found."""
        keys: dict[str, str] = {}
        if "=" not in self.source:  # no key=value token (most records): nothing out of order or repeated
            # neither the token list is kept (_tokens splits again if asked) nor an empty problems list:
            # two objects fewer per record, for memory and for the collector's passes
            pos = (self._token_list or split_tokens(self.source))[1:]
            problems: list[str] | tuple[()] = ()
        else:
            pos, problems = [], []
            for token in self._tokens[1:]:
                key, eq, value = token.partition("=")
                if eq:
                    if key in keys:  # the first one counts; check() reports the repeat
                        problems.append(f"repeated key {key!r}")
                    else:
                        keys[key] = value
                elif keys:
                    problems.append(f"positional field {token!r} after a key=value field")
                else:
                    pos.append(token)
        self._pos, self._keys, self._problems = pos, keys, problems
        self._layout = (self.schema.layout_for(len(pos)) if self.schema else ()) or ()
        self._split = True

    def structure_errors(self) -> list[str]:
        """Positional after key, repeated key, missing positional fields (surplus ones: ``surplus_errors``)."""
        self._ensure_split()
        errors = list(getattr(self, "_problems", None) or ())
        count = len(self._pos)
        if self.schema is not None and self.schema.layout_for(count) is None:
            shortest = self.schema.layouts[-1]
            names = []
            size = 0
            for f in shortest:
                size += f.span
                if size > count:
                    names.append(f.name)
            errors.append(
                f"missing positional field(s) {', '.join(names)}: {count} given, at least "
                f"{layout_size(shortest)} needed")
        return errors

    def surplus_errors(self) -> list[str]:
        """Positional tokens beyond the record's layout. RaiSim's reader ignores them, but for a known kind they
        are garbage a person would want to hear about (``rayrai_render foo bar baz``), so the check pass
        reports them; the tokens stay in the record and are written back as they were."""
        self._ensure_split()
        if self.schema is None or not self._pos or self.schema.layout_for(len(self._pos)) is None:
            return []  # unknown kind, or too few tokens (the other error)
        size = layout_size(self._layout)
        extra = self._pos[size:]
        if not extra:
            return []
        sizes = [str(layout_size(layout)) for layout in self.schema.layouts]
        takes = " or ".join(sizes) if len(sizes) < 3 else ", ".join(sizes[:-1]) + " or " + sizes[-1]
        shown = " ".join(extra[:6]) + (" ..." if len(extra) > 6 else "")
        return [f"{len(extra)} positional field(s) too many: {shown!r} ({self.schema.tag} takes {takes} "
                "positional field(s), then key=value fields)"]

    def decode_all(self) -> list[str]:
        """Decode every documented field the record has (positional and keys) into the cache.

        Returns one message per malformed value; used by the reader's check pass.
        """
        self._ensure_split()
        problems = []
        cache, pos = self._cache, self._pos
        for name, (field, start) in self.schema.offsets(self._layout).items():
            if name in cache:
                continue
            try:
                cache[name] = field.type.decode_tokens(pos[start:start + field.type.span])
            except ValueFormatError as exc:
                problems.append(f"field {name!r}: {exc}")
        return self.decode_keys(problems)

    def decode_keys(self, problems: list[str] | None = None, built: bool = False) -> list[str]:
        """Decode the documented ``key=value`` fields into the cache; one message per malformed value.

        ``built``: of a record made from values (no source line), skip the fields whose type's text always
        decodes (``ValueType.built_decodes``): nothing can be wrong with them."""
        problems = [] if problems is None else problems
        cache, field = self._cache, self.schema.field
        skip = built and self.source is None
        if skip:  # only the documented keys whose text may not decode (most records: none of their keys)
            checked = type(self)._built_checked
            if checked is None:
                checked = type(self)._built_checked = frozenset(
                    name for name, f in self.schema._index.items() if not f.type.built_decodes)
            for key in self._keys:
                if key in checked and key not in cache:
                    try:
                        self.get(key)
                    except ValueFormatError as exc:
                        problems.append(str(exc))
            return problems
        for key in self._keys:
            if key not in cache:
                f = field(key)
                if f is not None and not (skip and f.type.built_decodes):
                    try:
                        self.get(key)
                    except ValueFormatError as exc:
                        problems.append(str(exc))
        return problems

    @property
    def layout(self) -> tuple[Field, ...]:
        self._ensure_split()
        return self._layout

    @property
    def positional_tokens(self) -> list[str]:
        self._ensure_split()
        return self._pos

    @property
    def extra_positional(self) -> list[str]:
        """Positional tokens beyond the record's layout (kept and written back)."""
        self._ensure_split()
        return self._pos[layout_size(self._layout):]

    @property
    def raw_keys(self) -> dict[str, str]:
        """Every ``key=value`` of the record as raw text, in file order (unknown keys included)."""
        self._ensure_split()
        return self._keys

    @property
    def unknown_keys(self) -> dict[str, str]:
        known = self.schema.key_names if self.schema else ()
        return {k: v for k, v in self.raw_keys.items() if k not in known}

    # -- field access ---------------------------------------------------------------------------------------

    def _positional_slice(self, name: str) -> tuple[Field, int] | None:
        if self.schema is None:
            return None
        return self.schema.offsets(self.layout).get(name)

    def raw(self, name: str) -> str | None:
        """The field's text as written (positional tokens joined by spaces), or None when absent."""
        found = self._positional_slice(name)
        if found:
            field, start = found
            return " ".join(self._pos[start:start + field.span])
        return self.raw_keys.get(name)

    def has(self, name: str) -> bool:
        """Whether the record gives the field a non-empty value (else the default applies)."""
        if self._positional_slice(name):
            return True
        value = self.raw_keys.get(name)
        return value is not None and value != ""

    def get(self, name: str, default: Any = None) -> Any:
        """The typed value of a field: decoded from the file, or the Engine 2 default when absent.

        Unknown keys come back as decoded text. Raises ``ValueFormatError`` for a malformed value.
        """
        cache = self._cache
        if name in cache:
            return cache[name]
        value = self._decode(name, default)
        cache[name] = value
        return value

    def _decode(self, name: str, default: Any) -> Any:
        field = self.schema.field(name) if self.schema else None
        found = self._positional_slice(name)
        try:
            if found:
                field, start = found
                return field.type.decode_tokens(self._pos[start:start + field.span])
            raw = self.raw_keys.get(name)
            if field is None:
                if raw is None:
                    return default
                from .values import decode_text
                return decode_text(raw)
            # '-' and nothing are both the empty value: an absent or empty key takes Engine 2's default
            if raw is None or raw == "" or raw == "-":
                value = field.default_for(self)
                return default if value is REQUIRED else value
            return field.type.decode(raw)
        except ValueFormatError as exc:
            raise ValueFormatError(f"field {name!r}: {exc}") from None

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(name, value)

    def set(self, name: str, value: Any) -> None:
        """Set a field (typed value). The record will be written canonically."""
        if not self._split:
            self._split_tokens()
        schema = self.schema
        field = schema._index.get(name) if schema is not None else None
        if field is None:
            self._keys[name] = _encode_unknown(value)
        elif name in (type(self)._template or _new_template(type(self)))[4]:  # positional
            self._promote()
            self._set_positional(field, value)
        else:
            self._keys[name] = field.type.encode(value)
        self._cache.clear()  # derived defaults (such as the id) may depend on this field
        self.changed = True
        _EDITS[0] += 1

    def unset(self, name: str) -> None:
        """Remove a ``key=value`` field, so the default applies again."""
        self._ensure_split()
        if name in self._keys:
            del self._keys[name]
            self._cache.clear()
            self.changed = True
            _EDITS[0] += 1

    def _set_positional(self, field: Field, value: Any) -> None:
        found = self.schema.offsets(self._layout).get(field.name)  # a walk of the layout per field made a
        if found is not None:  # new record cost O(fields^2): most of reading a 100k-body RaiSim world
            f, start = found
            tokens = field.type.encode_tokens(value)
            while len(self._pos) < start + f.span:
                self._pos.append("-")
            self._pos[start:start + f.span] = tokens
            return
        start = 0
        for f in self._layout:
            if f.name == field.name:
                tokens = field.type.encode_tokens(value)
                while len(self._pos) < start + f.span:
                    self._pos.append("-")
                self._pos[start:start + f.span] = tokens
                return
            start += f.span

    def _promote(self) -> None:
        """Move a record in an older positional layout to the current one, keeping its values."""
        if not self.schema or self._layout is self.schema.full_layout:
            return
        values = {f.name: self.get(f.name) for f in self.schema.full_layout}
        extra = self.extra_positional
        self._layout = self.schema.full_layout
        self._pos = []
        for f in self._layout:
            self._pos.extend(f.type.encode_tokens(values[f.name]))
        self._pos.extend(extra)
        self._cache.clear()

    # -- writing -----------------------------------------------------------------------------------------

    def to_line(self) -> str:
        """The record's text: the source line if unchanged, else canonical."""
        if not self.changed and self.source is not None:
            return self.source
        return self.canonical()

    def canonical(self) -> str:
        self._ensure_split()
        tokens = [self.tag]
        if self.schema is None:
            return " ".join(self._tokens) if self._tokens else self.tag
        for field in self._layout:
            tokens.extend(field.type.encode_tokens(self.get(field.name)))
        tokens.extend(self.extra_positional)
        keys = self._keys
        for field in self.schema.keys:
            if field.name in keys:
                raw = keys[field.name]
                tokens.append(f"{field.name}={field.type.encode(self.get(field.name)) if raw not in ('', '-') else raw}")
        known = set(self.schema.key_names)
        tokens.extend(f"{k}={v}" for k, v in keys.items() if k not in known)
        return " ".join(tokens)

    # -- conveniences -----------------------------------------------------------------------------------

    def fields(self) -> Iterator[tuple[str, Any]]:
        """(name, typed value) of every documented field, defaults included."""
        if self.schema is None:
            return iter(())
        names = [f.name for f in self.layout] + list(self.schema.key_names)
        return ((n, self.get(n)) for n in names)

    @property
    def path(self) -> str | None:
        """The node path (``/World/Props/Crate``), for records that have one."""
        return self.get("path") if self.schema and self.schema.field("path") else None

    @path.setter
    def path(self, value: str) -> None:
        self.set("path", value)

    @property
    def id(self) -> str | None:
        """The node id (explicit, or the record's default such as ``object_<path>``)."""
        return self.get("id") if self.schema and self.schema.field("id") else None

    @id.setter
    def id(self, value: str) -> None:
        self.set("id", value)

    def __repr__(self) -> str:
        label = self.path if self.schema and self.schema.field("path") else ""
        where = f" line {self.line}" if self.line else ""
        return f"<{type(self).__name__} {label}{where}>".replace("  ", " ")


@contextmanager
def paused_gc():
    """Bulk reading and building allocate millions of objects and free almost none of them, so the
    cyclic collector's full passes (over every object of the process, and Blender's Python holds many)
    find nothing: pausing it saves about a third of the check's time. Nestable."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        # What was made while paused sits in the youngest generation, so the first collection after
        # enabling would walk all of it (0.8 s CPU after a 10^5-record read) to free nothing; freeze then
        # unfreeze moves it to the oldest generation, which later full collections still cover.
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def decode_batch(records: list[Record], built: bool = False) -> list[bool]:
    """Split many records and decode their positional fields column by column (the reader's fast path).

    Records of one kind and token count are decoded together: one ``decode_column`` per field instead of
    one call per field and record. Returns, per record, whether it is split without structural problems
    and every positional field decoded; the rest (and every record of a group with a malformed value
    anywhere) are left to ``structure_errors``/``decode_all``, which name the line and field.
    Key fields are not decoded here (``decode_keys``). ``built``: of the records made from values (no source
    line: what the non-.rscene readers build), only the fields whose type's text may not decode are (the
    others are left to ``get``: a check of the values of a 10^5-record world decoded every number again).
    """
    done = [False] * len(records)
    groups: dict[tuple, list[int]] = {}
    for i, record in enumerate(records):
        if record.schema is None:
            continue
        if not record._split:
            record._split_tokens()
        if getattr(record, "_problems", None) or not record._layout:  # built records have none
            continue
        # grouped by class, not schema: a schema's dataclass hash walks all its fields
        groups.setdefault((type(record), len(record._pos), built and record.source is None), []).append(i)
    for (_, _, trusted), indices in groups.items():
        group = [records[i] for i in indices]
        layout = group[0]._layout
        if trusted and all(field.type.built_decodes for field in layout):
            for i in indices:
                done[i] = True
            continue
        columns = list(zip(*[record._pos for record in group]))
        names, values, start = [], [], 0
        try:
            for field in layout:
                span = field.type.span
                if trusted and field.type.built_decodes:
                    start += span
                    continue
                if span == 1:
                    values.append(field.type.decode_column(columns[start]))
                else:  # a positional vector is ``span`` numbers, whatever its key form
                    values.append(list(zip(*[decode_number_column(c) for c in columns[start:start + span]])))
                names.append(field.name)
                start += span
        except ValueFormatError:
            continue
        for record, decoded in zip(group, map(dict, map(zip, repeat(names), zip(*values)))):
            if record._cache:
                record._cache.update(decoded)
            else:
                record._cache = decoded
        for i in indices:
            done[i] = True
    return done


def _new_template(cls) -> tuple:
    """(default tokens of the full layout, derived fields, fields whose default does not encode,
    required names, name -> (type, first token, span) of the full layout, the full layout), made once per
    record class:
    encoding every default anew and walking the layout per field was most of building a record (18
    fields of an ``object``), and building was most of reading a 100k-body world."""
    tokens, derived, eager, required, slots = [], [], [], [], {}
    for field in cls.schema.full_layout:
        blank = ["-"] * field.span
        slots[field.name] = (field.type, len(tokens), field.span)
        if field.default is REQUIRED:
            required.append(field.name)
        elif callable(field.default):
            derived.append(field)
        else:
            try:
                encoded = field.type.encode_tokens(field.default)
            except (TypeError, ValueError):
                eager.append(field)
            else:
                if len(encoded) == field.span:
                    blank = encoded
                else:
                    eager.append(field)
        tokens.extend(blank)
    template = (tuple(tokens), tuple(derived), tuple(eager), tuple(required), slots, cls.schema.full_layout)
    cls._template = template
    return template


class UnknownRecord(Record):
    """A record whose tag this version does not know: kept verbatim and written back as it was."""

    __slots__ = ()

    @property
    def tag(self) -> str:  # type: ignore[override]
        return self._tokens[0] if self._tokens else ""

    def set(self, name, value):
        raise TypeError(f"cannot edit a record of unknown kind {self.tag!r}")


def _encode_unknown(value: Any) -> str:
    if type(value) is str:  # noqa: E721 - the common case first (extra keys readers already encoded)
        return encode_text(value)
    if isinstance(value, bool):
        return FLAG.encode(value)
    if isinstance(value, (int, float)):
        return NUMBER.encode(value)
    return TEXT.encode(str(value))


def make_record_class(schema: RecordSchema) -> type[Record]:
    """A typed class for a record kind, with one property per field (``obj.mass``, ``obj.position``)."""
    name = "".join(part.capitalize() for part in schema.tag.split("_"))
    namespace: dict[str, Any] = {"schema": schema, "tag": schema.tag, "__slots__": (), "__doc__": schema.doc,
                                 "_template": None, "_built_checked": None}
    for field_name in schema.field_names():
        if not field_name.isidentifier() or field_name in ("path", "id", "tag", "line", "source"):
            continue
        if hasattr(Record, field_name):
            continue
        namespace[field_name] = property(
            lambda self, n=field_name: self.get(n),
            lambda self, value, n=field_name: self.set(n, value),
            doc=f"``{field_name}`` ({schema.field(field_name).type!r})")
    return type(name, (Record,), namespace)
