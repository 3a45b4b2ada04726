"""Smoke test of ``benchmarks/monty_suite.py`` on a few cases written here in
Monty's test-case format (Monty's own cases are not in this repository).

Checks the parsing of directives and expectations, the not-applicable rules,
the three verdicts and the summary, on the in-process backend (and Monty's own
rate when ``pydantic-monty`` is installed). No timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from benchmarks import monty_suite as ms

Out = ms.Outcome

CASES = {
    "arith__sum.py": "x = [1, 2, 3]\nsum(x) * 2\n# Return=12\n",
    "str__upper.py": "print('hi')\n'abc'.upper()\n# Return='ABC'\n",
    "exc__key.py": "d = {}\nd['missing']\n# Raise=KeyError('missing')\n",
    "name__hint.py": "undefined_name\n# Raise=NameError(\"name 'undefined_name' is not\")\n",
    "import__os.py": "import os\nos.getcwd()\n",
    "monty__only.py": "# xfail=cpython\nx = 1\n",
    "refs__counts.py": "x = [1]\n# ref-counts={'x': 1}\n",
    "dunder__refused.py": "class A:\n    pass\nA().__reduce_ex__(2) is not None\n# Return=True\n",
    "async__top.py": "# run-async\nasync def f():\n    return 3\nawait f()\n# Return=3\n",
    "ext__call.py": "# call-external\nadd_ints(2, 3)\n# Return=5\n",
    "tb__case.py": "1 / 0\n\"\"\"\nTRACEBACK:\nTraceback (most recent call last):\n"
                   "  File \"tb__case.py\", line 1, in <module>\n"
                   "ZeroDivisionError: division by zero\n\"\"\"\n",
}


def _write(directory: Path) -> None:
    for name, text in CASES.items():
        (directory / name).write_text(text, "utf-8")


def test_cases_are_parsed_like_montys_runner(tmp_path: Path) -> None:
    _write(tmp_path)
    cases = {c.name: c for c in ms.load_cases(tmp_path)}
    assert cases["arith__sum.py"].expect_kind == "Return"
    assert cases["arith__sum.py"].expected == "12"
    assert cases["exc__key.py"].expect_kind == "Raise"
    assert cases["monty__only.py"].xfail_cpython
    assert cases["async__top.py"].run_async and cases["ext__call.py"].call_external
    tb = cases["tb__case.py"]
    assert tb.expect_kind == "Traceback" and tb.expected.endswith("division by zero")
    assert "TRACEBACK" not in tb.code
    assert ms.not_applicable(cases["import__os.py"]) == ms.NA_OS
    assert ms.not_applicable(cases["monty__only.py"]) == ms.NA_XFAIL_CPYTHON
    assert ms.not_applicable(cases["refs__counts.py"]) == ms.NA_REFCOUNTS
    assert ms.not_applicable(cases["arith__sum.py"]) is None
    program = ms.compared_program(cases["arith__sum.py"].code)
    assert program.endswith(f"{ms.VALUE_NAME}\n") and "repr(\nsum(x) * 2\n)" in program


def test_verdicts() -> None:
    ref = ms.Outcome("exception", "NameError: name 'x' is not defined")
    assert ms.verdict(Out("exception", ref.value), ref) == "identical"
    hinted = ms.Outcome("exception", ref.value + ". Available tools: a, b")
    assert ms.verdict(hinted, ref) == "identical+hint"
    assert ms.verdict(Out("exception", "NameError: name 'x' is not definedX"), ref) == "wrong"
    assert ms.verdict(Out("refused", "policy_error: no"), Out("value", "1")) == "refused"
    assert ms.verdict(Out("value", "2"), Out("value", "1")) == "wrong"
    assert ms.verdict(Out("value", "1", "a\n"), Out("value", "1", "b\n")) == "wrong"
    syntax = ms.Outcome("exception", "SyntaxError: bad (main.py, line 3)")
    assert ms.verdict(Out("exception", "SyntaxError: bad"), syntax) == "identical"


def test_runner_end_to_end(tmp_path: Path) -> None:
    _write(tmp_path)
    out = tmp_path / "out.json"
    args = [str(tmp_path), "--backends", "inprocess", "--json", str(out)]
    with_monty = importlib.util.find_spec("pydantic_monty") is not None
    assert ms.main(args if with_monty else [*args, "--no-monty"]) == 0
    data = json.loads(out.read_text("utf-8"))
    by_name = {c["name"]: c for c in data["cases"]}
    for name in ("arith__sum.py", "str__upper.py", "exc__key.py", "async__top.py",
                 "ext__call.py", "tb__case.py"):
        assert by_name[name]["verdicts"] == {"inprocess": "identical"}, by_name[name]
    assert by_name["name__hint.py"]["verdicts"] == {"inprocess": "identical+hint"}
    assert by_name["dunder__refused.py"]["verdicts"] == {"inprocess": "refused"}
    for name in ("import__os.py", "monty__only.py", "refs__counts.py"):
        assert not by_name[name]["applicable"]
    summary = data["summary"]["toolscript"]["inprocess"]
    assert summary == {"identical": 7, "with_hint": 1, "refused": 1, "wrong": 0,
                       "applicable": 8, "identical_pct": 87.5}
    if with_monty:
        assert data["summary"]["monty_own_suite"]["cases"] == len(CASES)
