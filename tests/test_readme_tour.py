"""The README's short tour prints what its comments say.

The tour is a newcomer's first contact: each expression there carries its
value in a comment (``sn.cross_entropy(logits, targets)  # 2.5141009281709015``).
The tour runs here statement by statement, and every comment that states
numbers is compared with the value, to the digits it prints: a comment of
three decimals holds within half a unit of the third decimal.  Arithmetic is
held to the last printed digit (with a floor of 1e-15 relative, about four
units in the last place, that math libraries may round differently); the trained networks'
numbers are printed to three decimals, coarser than the drift between CPUs'
BLAS kernels (``OPENBLAS_CORETYPE``: the same printed digits under Haswell,
Sandybridge and SkylakeX).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import scratchnet as sn

README = Path(__file__).resolve().parent.parent / "README.md"
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def tour() -> str:
    """The Python block under the README's ``## A short tour``."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^## A short tour\n.*?^```python\n(.*?)^```", text, re.S | re.M)
    assert found, "the README has no Python block under '## A short tour'"
    return found.group(1)


def claim_of(lines: list[str], node: ast.stmt) -> str:
    """What the comment on a statement's last line (or the comment line right
    after it) says the value prints as: its text up to the first colon, when
    it reads as a value (a number, a bracket, or a name called: ``MSELoss()``),
    else nothing (``# or loss=...``, prose)."""
    last = lines[node.end_lineno - 1]
    comment = last.split("#", 1)[1] if "#" in last else ""
    if not comment.strip() and node.end_lineno < len(lines):
        following = lines[node.end_lineno].strip()
        comment = following[1:] if following.startswith("#") else ""
    claim = comment.split(":", 1)[0].strip()
    return claim if re.match(r"[-+.\d\[(]|\w+\(", claim) else ""


def numbers_of(value: Any) -> list[float]:
    """Every number a value holds, in order: arrays flattened, tuples (named
    or not) element by element; objects without numbers add none."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return []
    if isinstance(value, (int, float, np.number)):
        return [float(value)]
    if isinstance(value, np.ndarray):
        return [float(v) for v in value.ravel()]
    if isinstance(value, tuple):
        return [n for item in value for n in numbers_of(item)]
    return []


def tolerances(claim: str) -> list[tuple[float, float]]:
    """The claim's numbers, each with half a unit of its last printed digit.

    Inside brackets, an array's entries share the finest decimals among them
    (NumPy pads: ``[1.    0.472]`` prints 1.000 as ``1.``); elsewhere each
    number has its own (``1.73697`` of a ``%g`` repr: 0.5e-5; ``2e-08``:
    0.5e-08), and a whole number claims that number exactly.
    """
    out = []
    for bracket, rest in re.findall(r"(\[[^\]]*\])|([^\[]+)", claim):
        found = _NUMBER.findall(bracket or rest)
        shared = max((_decimals(n) for n in found), default=0)
        for text in found:
            places = shared if bracket else _decimals(text)
            if "e" in text.lower():
                places -= int(re.split("[eE]", text)[1])
            exact = not bracket and re.fullmatch(r"[-+]?\d+", text)
            out.append((float(text), 0.0 if exact else 0.5 * 10.0 ** -places))
    return out


def _decimals(text: str) -> int:
    """Digits after the point of a printed number (of its mantissa)."""
    mantissa = re.split("[eE]", text)[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def holds(claim: str, value: Any) -> bool:
    """Whether ``value`` prints as ``claim`` says, number for number."""
    wanted, got = tolerances(claim), numbers_of(value)
    return len(wanted) == len(got) and all(
        abs(g - w) <= max(tol, 1e-15 * abs(g)) for (w, tol), g in zip(wanted, got))


def run_tour() -> list[tuple[int, str, Any]]:
    """Run the tour; (line, claim, value) of every expression whose comment
    states numbers."""
    block = tour()
    lines, namespace, checked = block.splitlines(), {}, []
    for node in ast.parse(block).body:
        if isinstance(node, ast.Expr):
            value = eval(compile(ast.Expression(node.value), "README tour", "eval"),
                         namespace)
            claim = claim_of(lines, node)
            if tolerances(claim):
                checked.append((node.lineno, claim, value))
        else:
            exec(compile(ast.Module([node], []), "README tour", "exec"), namespace)
    return checked


def test_every_number_the_tour_prints_is_what_it_computes():
    checked = run_tour()
    assert len(checked) >= 12, [c for _, c, _ in checked]
    wrong = [(line, claim, value) for line, claim, value in checked
             if not holds(claim, value)]
    assert not wrong, wrong


@pytest.mark.parametrize("claim, value, expected", [
    ("[0.989 0.55  0.016]", np.array([0.98887, 0.54954, 0.01551]), True),
    ("[0.989 0.55  0.016]", np.array([0.98887, 0.5561, 0.01551]), False),   # 0.556
    ("[0.989 0.55  0.016]", np.array([0.98887, 0.54954]), False),           # too few
    ("(0.1664 nats, 0.9332)", (0.16637, 0.93319), True),
    ("(0.1664 nats, 0.9332)", (0.16637, 0.93331), False),
    ("2e-08", 1.99e-8, True),
    ("2e-08", 2.6e-8, False),
    ("2.5141009281709015", 2.5141009281709015, True),
    ("2.5141009281709015", 2.514100928170906, False),                     # 10 ulps off
    ("MSELoss(), [1.    0.472 0.079]", (sn.objectives.MSELoss(),
                                         np.array([0.99990, 0.47240, 0.07927])), True),
    ("GibbsResult(cross_entropy=1.73697, entropy=1, gap=0.736966)",
     sn.gibbs_inequality(p=[0.5, 0.5], q=[0.9, 0.1], base=2), True),
    ("GibbsResult(cross_entropy=1.73697, entropy=1, gap=0.736966)",
     sn.gibbs_inequality(p=[0.5, 0.5], q=[0.8, 0.2], base=2), False),
    ("GibbsResult(cross_entropy=1.73697, entropy=1, gap=0.736966)",
     (1.73697, 1.0000001, 0.736966), False),                              # entropy=1
])
def test_the_comparison_reads_the_printed_digits(claim, value, expected):
    """The check itself can fail: one digit off, a number missing."""
    assert holds(claim, value) is expected


def test_the_tours_bad_input_fails_as_shown():
    """The README's example of a clear error, message and all."""
    text = README.read_text(encoding="utf-8")
    shown = re.search(r">>> (sn\.cross_entropy\(logits, \[0, 3\]\))\n(ValueError: .*)\n",
                      text)
    assert shown, "the README no longer shows cross_entropy's error"
    logits = np.array([[-1.0, -3.0, 4.0], [-3.0, 3.0, -1.0]])
    with pytest.raises(ValueError) as info:
        eval(shown.group(1), {"sn": sn, "logits": logits})
    assert f"ValueError: {info.value}" == shown.group(2)
