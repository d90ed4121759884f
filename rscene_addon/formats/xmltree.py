"""A small XML element tree that remembers the file and line of every element, and an XML writer.

``xml.etree`` does not keep line numbers, and error messages must name ``file:line``. ``parse`` builds
``Node`` trees with expat directly. Text before the XML declaration (some real RaiSim files start with
blank lines or stray text) is blanked out before parsing, keeping line numbers right.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
import xml.parsers.expat
from collections.abc import Iterator
from types import MappingProxyType
from xml.sax.saxutils import escape, quoteattr

from ..model import Diagnostic, FormatError
from .atomic import read_source

__all__ = ["MAX_DEPTH", "ElementLines", "IncludeBudget", "Node", "XmlWriter", "element_text", "parse",
           "parse_elements", "parse_file"]

# Element nesting depth; real robot and world files stay under 15. Bounding it keeps every tree walk of the
# readers far from Python's recursion limit.
MAX_DEPTH = 128


class Node:
    """One element: ``tag``, ``attrib`` (ordered), ``children``, ``text`` (as written) and its origin."""

    __slots__ = ("attrib", "children", "file", "line", "tag", "text")

    def __init__(self, tag: str, attrib: dict[str, str] | None = None, file: str = "", line: int = 0):
        self.tag = tag
        self.attrib: dict[str, str] = dict(attrib or {})
        self.children: list[Node] = []
        self.text = ""
        self.file = file
        self.line = line

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrib.get(name, default)

    def find(self, tag: str) -> Node | None:
        for child in self.children:  # a plain loop: a generator per call was a readers' hot spot
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> list[Node]:
        return [c for c in self.children if c.tag == tag]

    def child_text(self, tag: str, default: str | None = None) -> str | None:
        node = self.find(tag)
        return node.text.strip() if node is not None else default

    def iter(self) -> Iterator[Node]:
        """This node and every descendant, depth first in document order (no recursion)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def copy(self) -> Node:
        """A deep copy (the template expander rewrites copies of a loop body)."""
        top = Node(self.tag, self.attrib, self.file, self.line)
        top.text = self.text
        stack = [(self, top)]
        while stack:
            source, target = stack.pop()
            for child in source.children:
                node = Node(child.tag, child.attrib, child.file, child.line)
                node.text = child.text
                target.children.append(node)
                stack.append((child, node))
        return top

    def size(self) -> int:
        """The number of elements in this subtree."""
        count, stack = 0, [self]
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(node.children)
        return count

    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def __repr__(self) -> str:
        return f"<Node {self.tag} {self.where()}>"


def declarations(text: str):
    """(start, end) of every ``<?xml ... ?>`` in ``text``, left to right, in one linear pass.

    What the regex ``<\\?xml[^>]*\\?>`` finds, without its cost: that regex rescanned to the next ``>``
    from every ``<?xml``, quadratic in a file of many ``<?xml`` and no ``>`` (18 CPU-s for 200 kB).
    """
    close = -1  # the first ">" at or after the current search position (-1: none left, or not looked yet)
    i = text.find("<?xml")
    while i >= 0:
        if close < i + 5:
            close = text.find(">", i + 5)
            if close < 0:
                return
        if text[close - 1] == "?" and close - 1 >= i + 5:
            yield i, close + 1
            i = text.find("<?xml", close + 1)
        else:
            i = text.find("<?xml", i + 1)


def _blank(text: str) -> str:
    """Same line structure, no content (keeps expat's line numbers)."""
    return re.sub(r"[^\n]", " ", text)


def prepare(text: str) -> str:
    """Blank out a BOM, anything before the first markup, and the XML declaration wherever it is."""
    text = text.removeprefix("\ufeff")
    match = next(declarations(text), None)
    if match:
        text = _blank(text[:match[1]]) + text[match[1]:]
    first = text.find("<")
    if first > 0:
        text = _blank(text[:first]) + text[first:]
    return text


class IncludeBudget:
    """What the includes of one document may add in all, whatever their nesting: a file that includes
    a file twice, which includes one twice, ... (each level within the depth limit) doubles the work per
    level; the budget stops it long before the time and memory run out."""

    MAX_FILES = 1_000  # include elements expanded per document (real worlds use a handful)
    MAX_BYTES = 64 * 2**20  # bytes of included text in all: one scene file's own cap

    def __init__(self):
        self.files = 0
        self.bytes = 0

    def charge(self, path: str) -> str | None:
        """Count the inclusion of ``path``; the problem (an error message) once the budget is spent."""
        import os
        self.files += 1
        if self.files > self.MAX_FILES:
            return f"more than {self.MAX_FILES} includes in all (an include bomb?)"
        try:
            self.bytes += os.stat(path).st_size
        except OSError:
            return None  # the read names it
        if self.bytes > self.MAX_BYTES:
            return f"included files add up to more than {self.MAX_BYTES // 2**20} MiB"
        return None


_NO_CHILDREN: tuple = ()
_NO_ATTRIBUTES = MappingProxyType({})


def parse(text: str, path: str = "<string>", frozen: bool = False) -> Node:
    """Parse XML text into a ``Node`` tree. Raises ``FormatError`` with the line of a syntax error.

    ``frozen``: for a reader that changes no node, an element without children or attributes shares one
    empty tuple and one empty read-only mapping instead of a list and a dict of its own (a third of
    the tree's memory in a world of small leaf elements, and a tenth of a CoppeliaSim read at 10^5 shapes)."""
    parser = xml.parsers.expat.ParserCreate()
    root: list[Node] = []
    stack: list[Node] = []
    # The text of an element is the join of its character data; most elements get one chunk (buffer_text
    # hands over whole runs), so only an element with several (text around children, entity references)
    # keeps a list here: a list per element, joined at its end, was a tenth of parsing
    chunks: dict[Node, list[str]] = {}
    new_node = Node.__new__
    push, pop = stack.append, stack.pop

    def start(tag, attrs):
        if len(stack) >= MAX_DEPTH:
            raise FormatError(Diagnostic(path, parser.CurrentLineNumber, tag,
                                         f"elements nested deeper than {MAX_DEPTH} levels"))
        # built in place: Node() copies its attribute dict, and expat hands a fresh one per element
        node = new_node(Node)
        node.tag, node.attrib, node.children, node.text, node.file = tag, attrs, [], "", path
        node.line = parser.CurrentLineNumber
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        push(node)

    def start_frozen(tag, attrs):
        if len(stack) >= MAX_DEPTH:
            raise FormatError(Diagnostic(path, parser.CurrentLineNumber, tag,
                                         f"elements nested deeper than {MAX_DEPTH} levels"))
        node = new_node(Node)
        node.tag, node.attrib, node.children, node.text, node.file = (tag, attrs or _NO_ATTRIBUTES, _NO_CHILDREN,
                                                                      "", path)
        node.line = parser.CurrentLineNumber
        if stack:
            parent = stack[-1]
            if parent.children:
                parent.children.append(node)
            else:
                parent.children = [node]
        else:
            root.append(node)
        push(node)

    def end(tag):
        node = pop()
        if chunks:
            parts = chunks.pop(node, None)
            if parts is not None:
                node.text = "".join(parts)

    def data(chunk):
        if stack:
            node = stack[-1]
            if not node.text:
                node.text = chunk
            elif node in chunks:
                chunks[node].append(chunk)
            else:
                chunks[node] = [node.text, chunk]

    parser.buffer_text = True
    parser.StartElementHandler = start_frozen if frozen else start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    parser.ordered_attributes = False
    try:
        parser.Parse(prepare(text), True)
    except xml.parsers.expat.ExpatError as exc:
        tag = stack[-1].tag if stack else ""
        message = xml.parsers.expat.ErrorString(exc.code)
        raise FormatError(Diagnostic(path, exc.lineno, tag, f"XML syntax error: {message} (column {exc.offset + 1})")) from None
    finally:
        # the handlers refer to the parser (its line number), which refers to them: a cycle that kept the
        # whole tree alive until the cyclic collector's next full pass (at exit, after a big read: 0.9 s for
        # 10^5 CoppeliaSim shapes); without the handlers the tree goes when its reader lets it go
        parser.StartElementHandler = parser.EndElementHandler = parser.CharacterDataHandler = None
    if not root:
        raise FormatError(Diagnostic(path, 0, "", "no XML root element"))
    return root[0]


class _Found(Exception):
    """Stops the root-line probe at the first element."""


class ElementLines:
    """The line of each element of a tree from ``parse_elements``, what ``Node.line`` would be.

    ElementTree keeps no line numbers; they are found only when a message needs one: the root's by
    parsing up to its start tag, any other's by one more pass of expat that only counts lines (elements
    start in ``root.iter()`` order)."""

    def __init__(self, text: str, root: ElementTree.Element, table: dict | None = None):
        self._text = text  # as parsed (after ``prepare``)
        self._root = root
        self._table = table  # id(element) -> line
        self._root_line: int | None = None

    def line(self, element: ElementTree.Element) -> int:
        if self._table is None:
            if element is self._root:
                if self._root_line is None:
                    self._root_line = self._starts(first_only=True)[0]
                return self._root_line
            self._table = dict(zip(map(id, self._root.iter()), self._starts(first_only=False)))
        return self._table[id(element)]

    def _starts(self, first_only: bool) -> list[int]:
        parser = xml.parsers.expat.ParserCreate()
        lines: list[int] = []

        def start(tag, attrs):
            lines.append(parser.CurrentLineNumber)
            if first_only:
                raise _Found

        parser.StartElementHandler = start
        try:
            parser.Parse(self._text, True)
        except _Found:
            pass
        finally:
            parser.StartElementHandler = None  # (the handler refers to the parser: no cycle left behind)
        return lines


def element_text(element: ElementTree.Element) -> str:
    """An element's character data as ``Node.text`` has it: all of it, the runs between its children too."""
    if len(element):
        return "".join([element.text or "", *[child.tail or "" for child in element]])
    return element.text or ""


def parse_elements(text: str, path: str = "<string>") -> tuple[ElementTree.Element, ElementLines]:
    """Parse XML text into an ``xml.etree`` tree (built in C: half the time of ``parse``'s Python handlers
    at 10^5 elements) and the ``ElementLines`` of its elements. Same tree, text (``element_text``) and
    errors as ``parse``: what ElementTree's parser reads differently (namespaces, which it resolves; a
    DOCTYPE) and every error or too deep a tree go through ``parse`` itself, its ``Node`` tree copied."""
    prepared = prepare(text)
    if "xmlns" not in prepared and "xml:" not in prepared and "<!DOCTYPE" not in prepared:
        try:
            root = ElementTree.fromstring(prepared)
        except Exception:  # noqa: BLE001 - parse() below gives the error as it always read
            root = None
        if root is not None and _depth_within(root):
            return root, ElementLines(prepared, root)
    return _elements(parse(text, path), prepared)


def _depth_within(root: ElementTree.Element) -> bool:
    """Whether no element is nested deeper than ``MAX_DEPTH`` (what ``parse`` refuses), level by level:
    ``level`` holds the elements at ``depth`` that have children (a leaf nests nothing)."""
    level, depth = [root], 1
    while level:
        if depth >= MAX_DEPTH:  # (the root aside, each has children: they lie deeper than MAX_DEPTH)
            return len(root) == 0
        level = [child for element in level for child in element if len(child)]
        depth += 1
    return True


def _elements(top: Node, prepared: str) -> tuple[ElementTree.Element, ElementLines]:
    """A ``Node`` tree as ElementTree elements (each element's whole text as its ``text``) with its lines."""
    new = ElementTree.Element
    root = new(top.tag, dict(top.attrib))
    root.text = top.text
    table = {id(root): top.line}
    stack = [(top, root)]
    while stack:
        source, target = stack.pop()
        for child in source.children:
            element = new(child.tag, dict(child.attrib))
            element.text = child.text
            target.append(element)
            table[id(element)] = child.line
            stack.append((child, element))
    return root, ElementLines(prepared, root, table)


def parse_file(path: str) -> Node:
    return parse(read_source(path), path)


class XmlWriter:
    """Writes indented XML: ``open``/``close`` elements, ``leaf`` elements with text, ``empty`` elements."""

    def __init__(self, indent: str = "  "):
        self.lines: list[str] = []
        self.depth = 0
        self.indent = indent

    @staticmethod
    def _attrs(attrib: dict | None) -> str:
        if not attrib:
            return ""
        return "".join(f" {k}={quoteattr(str(v))}" for k, v in attrib.items() if v is not None)

    def line(self, text: str) -> None:
        self.lines.append(self.indent * self.depth + text)

    def open(self, tag: str, attrib: dict | None = None) -> None:
        self.line(f"<{tag}{self._attrs(attrib)}>")
        self.depth += 1

    def close(self, tag: str) -> None:
        self.depth -= 1
        self.line(f"</{tag}>")

    def empty(self, tag: str, attrib: dict | None = None) -> None:
        self.line(f"<{tag}{self._attrs(attrib)}/>")

    def leaf(self, tag: str, text, attrib: dict | None = None) -> None:
        self.line(f"<{tag}{self._attrs(attrib)}>{escape(str(text))}</{tag}>")

    def cdata(self, tag: str, text: str) -> None:
        safe = text.replace("]]>", "]]]]><![CDATA[>")
        self.line(f"<{tag}><![CDATA[{safe}]]></{tag}>")

    def text(self, declaration: bool = True) -> str:
        head = ['<?xml version="1.0" encoding="UTF-8"?>'] if declaration else []
        return "\n".join(head + self.lines) + "\n"
