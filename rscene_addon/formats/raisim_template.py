"""Template expansion of RaiSim world XML: ``include``, ``params``/``@@name``, ``array`` loops, ``{math}``,
``exist`` and ``[THIS_DIR]``.

Order of expansion (each step works on the result of the one before):

1. ``<include value="file"/>`` (also ``file=``) under the root is replaced by the children of the included
   file's root, recursively; a cycle is an error. ``[THIS_DIR]`` is the directory of the file that holds
   the reference.
2. ``<params>`` children (``<name value="..."/>``) anywhere under the root define parameters; values given
   by the caller override them. A parameter may refer to others.
3. ``<array idx="@@i" start=".." end=".." increment="..">`` repeats its children for ``i = start,
   start + increment, ...`` while ``i < end`` (end excluded), substituting ``@@i`` in each copy; arrays
   nest. The bounds may use parameters and ``{math}`` and must be integers.
4. Every remaining ``@@name`` is replaced by its parameter. An undefined parameter is reported once as a
   warning and reads as ``0``, so templated worlds whose parameters come from C++ still load.
5. ``{expr}`` in attribute values is evaluated by ``xml_expr`` (never ``eval``).
6. An element whose ``exist`` attribute is false (``false``, ``0`` or a zero number) is removed.

Errors carry the file and line of the element; they are collected in ``errors`` and the expanded tree is
returned so that the caller can report everything at once.
"""
from __future__ import annotations

import os
import re

from ..model import Diagnostic, FormatError
from .xml_expr import ExprError, expand_braces, format_number
from .xmltree import MAX_DEPTH, IncludeBudget, Node, parse_file

__all__ = ["MAX_ELEMENTS", "MAX_INCLUDE_DEPTH", "MAX_ITERATIONS", "expand", "this_dir"]

# What a small file may make us build, checked before the work starts (real templated worlds unroll tens
# to hundreds of elements and include one or two levels deep).
# 100k-record worlds read in seconds since Scene.add is O(1) (it was a scan per record: 20k/50k then).
MAX_ITERATIONS = 100_000  # array iterations per file
MAX_ELEMENTS = 400_000  # elements made by array unrolling per file (a body with 2 child elements: 3 each)
MAX_INCLUDE_DEPTH = 16
MAX_VALUE_LENGTH = 65_536  # characters of a value after parameter substitution (parameters may nest)


class _Runaway(ValueError):
    pass
_PARAM = re.compile(r"@@([A-Za-z_][A-Za-z0-9_]*)")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


def this_dir(node: Node) -> str:
    return os.path.dirname(os.path.abspath(node.file)) if node.file and not node.file.startswith("<") else os.getcwd()


def substitute_this_dir(value: str, node: Node) -> str:
    if "[THIS_DIR]" not in value:
        return value
    return value.replace("[THIS_DIR]", this_dir(node).replace(os.sep, "/"))


class _Expander:
    def __init__(self, params: dict[str, str] | None, errors: list[Diagnostic], warnings: list[Diagnostic]):
        self.user_params = {k: str(v) for k, v in (params or {}).items()}
        self.params: dict[str, str] = {}
        self.errors = errors
        self.warnings = warnings
        self.undefined: set[str] = set()
        self.iterations = 0
        self.elements = 0
        self.over_limit = False  # once an array is refused, no more unrolling (one error, not thousands)
        self.budget = IncludeBudget()

    def error(self, node: Node, message: str) -> None:
        self.errors.append(Diagnostic(node.file, node.line, node.tag, message))

    # -- 1. includes ---------------------------------------------------------------------------------

    def includes(self, root: Node, stack: tuple[str, ...]) -> None:
        """Replace every ``<include>`` by the included root's children (no recursion: files nest files)."""
        work = [(root, stack)]
        while work:
            node, node_stack = work.pop()
            out: list[Node] = []
            pending = [(child, node_stack) for child in reversed(node.children)]
            while pending:
                child, chain = pending.pop()
                if child.tag != "include":
                    out.append(child)
                    work.append((child, chain))
                    continue
                included = self._include(child, chain)
                if included is not None:
                    target, tree = included
                    pending.extend((c, chain + (target,)) for c in reversed(tree.children))
            node.children = out

    def _include(self, child: Node, stack: tuple[str, ...]) -> tuple[str, Node] | None:
        ref = child.get("value") or child.get("file") or child.get("path")
        if not ref:
            self.error(child, "<include> needs a value attribute naming the file")
            return None
        ref = substitute_this_dir(self._substitute(ref, child, dict(self.user_params)), child)
        target = ref if os.path.isabs(ref) else os.path.join(this_dir(child), ref)
        target = os.path.normpath(target)
        if target in stack:
            self.error(child, f"include cycle: {target} includes itself")
            return None
        if len(stack) >= MAX_INCLUDE_DEPTH:
            self.error(child, f"includes nested deeper than {MAX_INCLUDE_DEPTH} files")
            return None
        if not os.path.isfile(target):
            self.error(child, f"included file not found: {target}")
            return None
        problem = None if self.over_limit else self.budget.charge(target)
        if problem or self.over_limit:
            if not self.over_limit:  # one error, then no more includes
                self.error(child, problem)
            self.over_limit = True
            return None
        try:
            return target, parse_file(target)
        except FormatError as exc:  # reported with the included file's own lines
            self.errors.extend(exc.diagnostics)
            return None

    # -- 2. params ------------------------------------------------------------------------------------

    def collect_params(self, node: Node) -> None:
        out = []
        for child in node.children:
            if child.tag == "params":
                for param in child.children:
                    value = param.get("value")
                    if value is None:
                        value = param.text.strip()
                    self.params[param.tag] = value
                continue
            self.collect_params(child)
            out.append(child)
        node.children = out
        if node is self.root:
            self.params.update(self.user_params)

    def _lookup(self, name: str, scope: dict[str, str], depth: int = 0) -> str | None:
        if name in scope:
            return scope[name]
        if name not in self.params:
            return None
        value = self.params[name]
        if "@@" in value and depth < 32:
            value = self._replace_known(value, scope, depth + 1)
        return value

    def _replace_known(self, value: str, scope: dict[str, str], depth: int = 0) -> str:
        """Literal replacement of every known ``@@name``, longest names first (as RaiSim replaces text)."""
        for name in sorted(set(scope) | set(self.params), key=len, reverse=True):
            token = "@@" + name
            if token in value:
                value = value.replace(token, self._lookup(name, scope, depth) or "")
                if len(value) > MAX_VALUE_LENGTH:
                    raise _Runaway(f"parameters expand to more than {MAX_VALUE_LENGTH} characters")
                if "@@" not in value:
                    break
        return value

    def _substitute(self, value: str, node: Node, scope: dict[str, str], strict: bool = False) -> str:
        if "@@" not in value:
            return value
        try:
            value = self._replace_known(value, scope)
        except _Runaway as exc:
            self.error(node, str(exc))
            return ""
        if not strict or "@@" not in value:
            return value

        def undefined(match: re.Match) -> str:
            name = match.group(1)
            if name not in self.undefined:
                self.undefined.add(name)
                self.warnings.append(Diagnostic(node.file, node.line, node.tag,
                                                f"parameter @@{name} is not defined: read as 0", "warning"))
            return "0"

        return _PARAM.sub(undefined, value)

    # -- 3. arrays -------------------------------------------------------------------------------------

    def _bound(self, node: Node, name: str, scope: dict[str, str]) -> int | None:
        raw = node.get(name)
        if raw is None:
            self.error(node, f"<array> needs the attribute {name!r}")
            return None
        text = self._substitute(raw, node, scope, strict=True)
        try:
            value = float(expand_braces(text))
        except (ExprError, ValueError):
            self.error(node, f"<array> {name}={raw!r} is not a number")
            return None
        if not value.is_integer():
            self.error(node, f"<array> {name}={raw!r} must be an integer, got {format_number(value)}")
            return None
        return int(value)

    def arrays(self, node: Node, scope: dict[str, str]) -> None:
        out: list[Node] = []
        for child in node.children:
            if child.tag != "array":
                self._substitute_loop_vars(child, scope)
                self.arrays(child, scope)
                out.append(child)
                continue
            out.extend(self._unroll(child, scope))
        node.children = out

    def _unroll(self, array: Node, scope: dict[str, str]) -> list[Node]:
        var = (array.get("idx") or "").strip()
        var = var.removeprefix("@@")
        if not _PARAM.fullmatch("@@" + var):
            self.error(array, f"<array> idx={array.get('idx')!r} must name a variable such as '@@idx'")
            return []
        start, end, step = (self._bound(array, n, scope) for n in ("start", "end", "increment"))
        if None in (start, end, step):
            return []
        if step == 0 or (step < 0 and start < end):
            self.error(array, f"<array> increment={step} never reaches end={end} from start={start}")
            return []
        if self.over_limit:
            return []
        count = len(range(start, end, step))
        body_size = sum(c.size() for c in array.children)
        self.iterations += count
        self.elements += count * body_size
        self.over_limit = self.iterations > MAX_ITERATIONS or self.elements > MAX_ELEMENTS
        if self.iterations > MAX_ITERATIONS:
            self.error(array, f"<array> from {start} to {end} by {step} repeats {count} times: more than "
                       f"{MAX_ITERATIONS} array iterations in one file")
            return []
        if self.elements > MAX_ELEMENTS:
            self.error(array, f"<array> repeats {body_size} element(s) {count} times: more than "
                       f"{MAX_ELEMENTS} elements made by arrays in one file")
            return []
        result: list[Node] = []
        i = start
        if not any(n.tag == "array" for c in array.children for n in c.iter()):
            # No nested array (the common body): each copy is the body with the loop variables replaced,
            # made in one pass from a plan of the attributes that hold "@@" (what copy + arrays do).
            inner = dict(scope)
            inner[var] = ""
            names = sorted(inner, key=len, reverse=True) if len(inner) > 1 else list(inner)
            pairs = [("@@" + name, inner[name]) for name in names]
            where = names.index(var)
            plan = [_plan(c) for c in array.children]
            while (i < end) if step > 0 else (i > end):
                pairs[where] = ("@@" + var, str(i))
                result.extend([_build(p, pairs) for p in plan])
                i += step
            return result
        while (i < end) if step > 0 else (i > end):
            inner = dict(scope)
            inner[var] = str(i)
            body = Node(array.tag, {}, array.file, array.line)
            body.children = [c.copy() for c in array.children]
            self.arrays(body, inner)
            result.extend(body.children)
            i += step
        return result

    def _substitute_loop_vars(self, node: Node, scope: dict[str, str]) -> None:
        if not scope:
            return
        names = sorted(scope, key=len, reverse=True) if len(scope) > 1 else scope
        for key, value in node.attrib.items():
            if "@@" not in value:
                continue
            for name in names:
                if "@@" + name in value:
                    value = value.replace("@@" + name, scope[name])
            node.attrib[key] = value

    # -- 4-6. parameters, math, exist -------------------------------------------------------------------

    def finish(self, node: Node) -> None:
        out = []
        for child in node.children:
            joined = "".join(child.attrib.values())  # one test for all (a false "@@" across two is harmless)
            for key, value in (list(child.attrib.items()) if "@@" in joined or "[" in joined or "{" in joined
                               or "}" in joined else ()):
                if "@@" not in value and "[" not in value and "{" not in value and "}" not in value:
                    continue  # nothing to substitute or expand (most attributes)
                value = self._substitute(value, child, {}, strict=True)
                value = substitute_this_dir(value, child)
                if "{" in value or "}" in value:
                    try:
                        value = expand_braces(value)
                    except ExprError as exc:
                        self.error(child, f"attribute {key}: {exc}")
                child.attrib[key] = value
            exist = child.attrib.pop("exist", None)
            if exist is not None and not self._truth(child, exist):
                continue
            self.finish(child)
            out.append(child)
        node.children = out

    def _truth(self, node: Node, value: str) -> bool:
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        try:
            return float(low) != 0.0
        except ValueError:
            self.error(node, f"exist={value!r} is neither a flag nor a number")
            return True

    def run(self, root: Node) -> Node:
        self.root = root
        self.includes(root, (os.path.normpath(os.path.abspath(root.file)),) if root.file else ())
        if _depth(root) > MAX_DEPTH:  # includes nest files in files: keep every walk below the limit
            self.error(root, f"elements nested deeper than {MAX_DEPTH} levels once includes are in place")
            root.children = []
        self.collect_params(root)
        self.arrays(root, {})
        if self.over_limit:  # the file is refused: reading half of its expansion would only cost time
            root.children = []
            return root
        self.finish(root)
        return root


def _plan(node: Node) -> tuple:
    """A body element for ``_build``: its fields, the keys of the attributes that hold "@@", its children."""
    return (node.tag, node.attrib, node.file, node.line, node.text,
            [key for key, value in node.attrib.items() if "@@" in value], [_plan(c) for c in node.children])


def _build(plan: tuple, pairs: list, new=Node.__new__) -> Node:
    """A copy of a planned element with each ``@@name`` of ``pairs`` replaced, longest name first (as
    ``_substitute_loop_vars`` does)."""
    tag, attrib, file, line, text, keys, children = plan
    node = new(Node)
    node.tag = tag
    node.attrib = attrib = dict(attrib)
    node.file = file
    node.line = line
    node.text = text
    for key in keys:
        value = attrib[key]
        for token, replacement in pairs:
            if token in value:
                value = value.replace(token, replacement)
        attrib[key] = value
    node.children = [_build(c, pairs) for c in children] if children else []
    return node


def _depth(root: Node) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.children)
    return deepest


def expand(root: Node, params: dict[str, str] | None = None, errors: list[Diagnostic] | None = None,
           warnings: list[Diagnostic] | None = None) -> Node:
    """Expand the templates of ``root`` in place and return it (see the module doc for the rules)."""
    errors = errors if errors is not None else []
    warnings = warnings if warnings is not None else []
    return _Expander(params, errors, warnings).run(root)
