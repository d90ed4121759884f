"""The safe ``{...}`` evaluator of RaiSim XML templates."""
from __future__ import annotations

import math

import pytest

from rscene_addon.formats.xml_expr import ExprError, evaluate, expand_braces, format_number


@pytest.mark.parametrize(("text", "value"), [
    ("1+2*3", 7.0), ("(1+2)*3", 9.0), ("-2^2", -4.0), ("2^3^2", 512.0), ("10/4", 2.5), ("7%3", 1.0),
    ("-7%3", -1.0), ("cos(0)", 1.0), ("sin(pi/2)", 1.0), ("exp(0)+log(e)", 2.0), ("sqrt(16)", 4.0),
    ("atan2(1, 1)*4", math.pi), ("pow(2, 10)", 1024.0), ("max(1, 5, 3)", 5.0), ("abs(-3.5)", 3.5),
    (" 0.5 + 1e-3 ", 0.501), (".5*2", 1.0), ("--1", 1.0), ("+3", 3.0), ("floor(2.7)+ceil(2.1)", 5.0),
    ("log10(1000)", 3.0), ("2*-3", -6.0),
])
def test_values(text, value):
    assert evaluate(text) == pytest.approx(value, abs=1e-15)


def test_the_corpus_expression_by_hand():
    # SingleBodies.xml: pos x of sphere_array_@@idx for idx = 3
    assert evaluate("cos(0.1*3)*(3*0.2+0.1)") == pytest.approx(math.cos(0.3) * 0.7)


@pytest.mark.parametrize("text", ["", "1+", "(1", "1)", "foo(1)", "__import__('os')", "1/0", "log(-1)",
                                  "sqrt(-1)", "a", "1 2", "2**3", "sin()", "pow(1)", "1e999*10", "[1]",
                                  "x.y", "exp(1000)"])
def test_rejects(text):
    with pytest.raises(ExprError):
        evaluate(text)


def test_variables():
    assert evaluate("2*idx+1", {"idx": 4}) == 9.0


def test_expand_braces():
    assert expand_braces("{1+1} {2*0.25} plain") == "2 0.5 plain"
    assert expand_braces("no braces") == "no braces"
    assert expand_braces("{0.5+1*0.001}") == "0.501"
    with pytest.raises(ExprError):
        expand_braces("{1+{2}}")
    with pytest.raises(ExprError):
        expand_braces("{1+2")


def test_format_number():
    assert format_number(3.0) == "3"
    assert format_number(-0.0) == "0"
    assert format_number(0.1 + 0.2) == repr(0.1 + 0.2)
    assert float(format_number(1e20)) == 1e20
