"""``toolscript run`` output is unambiguous for pipes: standard output holds only the
script's JSON value (the script's prints go to standard error); ``--json`` prints one
JSON document. Run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRINTS_THEN_VALUE = (
    "print('{\"looks\": \"like json\"}')\n"
    "print('a line', end='')\n"
    "{'answer': 42, 'text': 'é'}\n"
)


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolscript", "run", *args],
                          input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT,
                          check=False)


def test_stdout_is_the_value_alone_and_the_prints_go_to_stderr() -> None:
    done = run("-", "--backend", "inprocess", stdin=PRINTS_THEN_VALUE)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answer": 42, "text": "é"}
    assert done.stderr.startswith('{"looks": "like json"}\na line\n')


def test_a_script_without_a_value_leaves_stdout_empty() -> None:
    done = run("-", "--backend", "inprocess", stdin="print('only this')\nx = 1\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "only this" in done.stderr


def test_a_value_that_is_a_string_is_one_json_string() -> None:
    done = run("-", "--backend", "inprocess", stdin="print('noise')\n'two\\nlines'\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == "two\nlines"


def test_json_is_one_document_with_the_prints_inside() -> None:
    done = run("-", "--backend", "inprocess", "--json", stdin=PRINTS_THEN_VALUE)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # the whole of stdout is one document
    assert data["value"] == {"answer": 42, "text": "é"}
    assert data["stdout"] == '{"looks": "like json"}\na line'
    assert '"looks"' not in done.stderr


def test_a_failed_run_says_why_on_stderr_only() -> None:
    done = run("-", "--backend", "inprocess", stdin="print('before')\n1 / 0\n")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "before" in done.stderr and "error [script_error]" in done.stderr


def test_help_says_where_the_output_goes() -> None:
    done = run("--help")
    assert done.returncode == 0
    assert "standard error" in done.stdout and "--json" in done.stdout
