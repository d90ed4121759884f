"""A small, safe evaluator for the ``{...}`` math of RaiSim world XML templates.

RaiSim lets attribute values hold C++-like expressions in braces: ``pos="{cos(0.1*3)*2} 0 {1+2}"``.
This module evaluates them with a recursive-descent parser over a fixed grammar; it never calls ``eval``
and knows no names other than the functions and constants listed below.

Grammar (lowest precedence first)::

    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '/' | '%') unary)*
    unary   := ('+' | '-') unary | power
    power   := atom ('^' unary)?            right-associative; -2^2 == -4
    atom    := number | name | name '(' [expr (',' expr)*] ')' | '(' expr ')'

Numbers are decimal (``1``, ``.5``, ``2.5e-3``). ``%`` is C's ``fmod``. Results must be finite.
An expression is at most ``MAX_LENGTH`` characters and nests (parentheses, signs) at most ``MAX_NESTING``
deep: real templates use a few dozen characters and two or three levels.
"""
from __future__ import annotations

import math
import re

__all__ = ["CONSTANTS", "FUNCTIONS", "MAX_LENGTH", "MAX_NESTING", "ExprError", "evaluate", "expand_braces",
           "format_number"]

MAX_LENGTH = 2000
MAX_NESTING = 64


class ExprError(ValueError):
    """A malformed or non-finite expression. ``position`` is the 0-based offset in the expression."""

    def __init__(self, message: str, expression: str = "", position: int = 0):
        self.expression = expression
        self.position = position
        super().__init__(f"{message} in expression {expression!r}" if expression else message)


def _checked(name, fn, arity):
    def call(*args):
        if arity is None and not args:
            raise ExprError(f"{name}() takes at least 1 argument")
        if arity is not None and len(args) not in (arity if isinstance(arity, tuple) else (arity,)):
            raise ExprError(f"{name}() takes {arity} argument(s), got {len(args)}")
        try:
            return float(fn(*args))
        except (ValueError, OverflowError, ZeroDivisionError) as exc:
            raise ExprError(f"{name}{tuple(args)}: {exc}") from None
    return call


FUNCTIONS = {name: _checked(name, fn, arity) for name, (fn, arity) in {
    "sin": (math.sin, 1), "cos": (math.cos, 1), "tan": (math.tan, 1),
    "asin": (math.asin, 1), "acos": (math.acos, 1), "atan": (math.atan, 1), "atan2": (math.atan2, 2),
    "sinh": (math.sinh, 1), "cosh": (math.cosh, 1), "tanh": (math.tanh, 1),
    "exp": (math.exp, 1), "log": (math.log, 1), "ln": (math.log, 1), "log10": (math.log10, 1),
    "log2": (math.log2, 1), "sqrt": (math.sqrt, 1), "abs": (abs, 1), "fabs": (math.fabs, 1),
    "pow": (math.pow, 2), "floor": (math.floor, 1), "ceil": (math.ceil, 1),
    "round": (lambda x: math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5), 1),
    "fmod": (math.fmod, 2), "hypot": (math.hypot, 2),
    "min": (min, None), "max": (max, None),
}.items()}
CONSTANTS = {"pi": math.pi, "e": math.e}

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)"
                    r"|(?P<op>[-+*/%^(),]))")


class _Parser:
    def __init__(self, text: str, variables: dict[str, float] | None):
        if len(text) > MAX_LENGTH:
            raise ExprError(f"expression of {len(text)} characters is longer than {MAX_LENGTH}")
        self.text = text
        self.variables = variables or {}
        self.depth = 0
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            match = _TOKEN.match(stripped, pos)
            if not match:
                raise ExprError(f"unexpected character {stripped[pos:].lstrip()[:1]!r}", text,
                                pos + len(stripped[pos:]) - len(stripped[pos:].lstrip()))
            kind = match.lastgroup
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            pos = match.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise ExprError("unexpected end" + (f", expected {value!r}" if value else ""), self.text, len(self.text))
        if value is not None and token[1] != value:
            raise ExprError(f"expected {value!r}, got {token[1]!r}", self.text, token[2])
        self.i += 1
        return token

    def parse(self) -> float:
        if not self.tokens:
            raise ExprError("empty expression", self.text)
        value = self.expr()
        token = self.peek()
        if token is not None:
            raise ExprError(f"unexpected {token[1]!r}", self.text, token[2])
        if not math.isfinite(value):
            raise ExprError("result is not finite", self.text)
        return value

    def expr(self) -> float:
        value = self.term()
        while (token := self.peek()) is not None and token[1] in "+-" and token[0] == "op":
            self.take()
            rhs = self.term()
            value = value + rhs if token[1] == "+" else value - rhs
        return value

    def term(self) -> float:
        value = self.unary()
        while (token := self.peek()) is not None and token[0] == "op" and token[1] in "*/%":
            self.take()
            rhs = self.unary()
            if token[1] == "*":
                value *= rhs
            elif rhs == 0:
                raise ExprError("division by zero", self.text, token[2])
            elif token[1] == "/":
                value /= rhs
            else:
                try:
                    value = math.fmod(value, rhs)
                except ValueError:  # fmod(inf, x)
                    raise ExprError("remainder of an infinite value", self.text, token[2]) from None
        return value

    def nest(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ExprError(f"nested deeper than {MAX_NESTING} levels", self.text, pos)

    def unary(self) -> float:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in "+-":
            self.take()
            self.nest(token[2])
            value = self.unary()
            self.depth -= 1
            return -value if token[1] == "-" else value
        return self.power()

    def power(self) -> float:
        base = self.atom()
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] == "^":
            self.take()
            self.nest(token[2])
            exponent = self.unary()
            self.depth -= 1
            try:
                return float(math.pow(base, exponent))
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                raise ExprError(f"{base}^{exponent}: {exc}", self.text, token[2]) from None
        return base

    def atom(self) -> float:
        kind, value, pos = self.take()
        if kind == "num":
            return float(value)
        if kind == "op" and value == "(":
            self.nest(pos)
            inner = self.expr()
            self.take(")")
            self.depth -= 1
            return inner
        if kind == "name":
            token = self.peek()
            if token is not None and token[1] == "(":
                fn = FUNCTIONS.get(value.lower())
                if fn is None:
                    raise ExprError(f"unknown function {value!r}", self.text, pos)
                self.take("(")
                self.nest(pos)
                args = []
                if self.peek() is not None and self.peek()[1] != ")":
                    args.append(self.expr())
                    while self.peek() is not None and self.peek()[1] == ",":
                        self.take(",")
                        args.append(self.expr())
                self.take(")")
                self.depth -= 1
                try:
                    return fn(*args)
                except ExprError as exc:
                    raise ExprError(str(exc), self.text, pos) from None
            if value in self.variables:
                return float(self.variables[value])
            if value in CONSTANTS:
                return CONSTANTS[value]
            raise ExprError(f"unknown name {value!r}", self.text, pos)
        raise ExprError(f"unexpected {value!r}", self.text, pos)


def evaluate(expression: str, variables: dict[str, float] | None = None) -> float:
    """Evaluate ``expression`` (no braces). Raises ``ExprError`` for anything malformed."""
    return _Parser(expression, variables).parse()


def format_number(value: float) -> str:
    """Shortest text that reads back to ``value``; integral values without a decimal point."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


_BRACES = re.compile(r"\{([^{}]*)\}")


def expand_braces(text: str, variables: dict[str, float] | None = None) -> str:
    """Replace every ``{expr}`` in ``text`` by its value. Unbalanced braces raise ``ExprError``."""
    if "{" not in text and "}" not in text:
        return text

    def replace(match: re.Match) -> str:
        return format_number(evaluate(match.group(1), variables))

    result = _BRACES.sub(replace, text)
    if "{" in result or "}" in result:
        raise ExprError("unbalanced or nested braces", text)
    return result
