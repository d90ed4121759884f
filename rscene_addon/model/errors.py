"""Diagnostics and the error raised for malformed scene files.

Every problem names the file, the 1-based line and the record tag, so a user can jump straight to it.
A reader collects all problems of a file and raises one ``FormatError`` holding them all.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int  # 1-based; 0 when the problem is not tied to a line
    tag: str
    message: str
    severity: str = "error"  # "error" or "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        tag = f" ({self.tag})" if self.tag else ""
        return f"{where}{tag}: {self.severity}: {self.message}"


class FormatError(ValueError):
    """A scene file could not be read or written. ``diagnostics`` lists every error found."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("<input>", 0, "", diagnostics)]
        elif isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @property
    def first(self) -> Diagnostic:
        return self.diagnostics[0]


def describe(exc: FormatError, where: str = "", limit: int | None = 20, heading: str | None = None) -> list[str]:
    """A FormatError as text for a person, the one way every command and operator shows it: a heading
    (``error: N problem(s) found in WHERE`` unless ``heading`` is given) and one indented line per problem,
    at most ``limit`` of them (None: all) then how many more."""
    count = len(exc.diagnostics)
    shown = exc.diagnostics if limit is None else exc.diagnostics[:limit]
    lines = [heading if heading is not None else f"error: {count} problem(s) found" + (f" in {where}" if where else "")]
    lines.extend(f"  {diagnostic}" for diagnostic in shown)
    if len(shown) < count:
        lines.append(f"  ... and {count - len(shown)} more")
    return lines


class ValueFormatError(ValueError):
    """A single value has the wrong syntax; the reader wraps it with file, line and tag."""
