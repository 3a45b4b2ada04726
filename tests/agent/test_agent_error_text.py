"""The model reads a failed run's error once, with its line named once.

The line has one owner, the error's structured ``line`` field: no message of
the sandbox names it, and ``format_error`` adds it from the field.
"""

from __future__ import annotations

from typing import Any

from toolscript.runtime.agent.format import format_run_result
from toolscript.runtime.results import RunError

from toolscript import tool


def test_a_script_error_names_its_line_once(make_runtime: Any) -> None:
    runtime = make_runtime([])
    with runtime.session() as session:
        result = session.run("x = 1\ny = 1 / 0")
    assert result.error is not None and result.error.line == 2
    assert "(line" not in result.error.message, result.error.message
    text, is_error = format_run_result(result, 10_000)
    assert is_error
    assert text.count("(line 2)") == 1, text
    assert text.startswith("error: script_error: ZeroDivisionError: division by zero (line 2)")


def test_a_syntax_error_names_its_line_and_column_once(make_runtime: Any) -> None:
    runtime = make_runtime([])
    with runtime.session() as session:
        result = session.run("x = 1\ny = (")
    assert result.error is not None and result.error.type == "syntax_error"
    assert "(line" not in result.error.message, result.error.message
    text, _ = format_run_result(result, 10_000)
    column = result.error.details["column"]
    assert text.count("(line 2") == 1 and f"(line 2, column {column})" in text, text


def test_a_name_error_keeps_its_tools_hint_and_the_line_once(make_runtime: Any) -> None:
    @tool
    def get_orders() -> list[int]:
        """Orders."""
        return [1]

    runtime = make_runtime([get_orders])
    with runtime.session() as session:
        result = session.run("x = 1\nget_order()")
    assert result.error is not None and "Available tools: get_orders" in result.error.message
    text, _ = format_run_result(result, 10_000)
    assert text.count("(line 2)") == 1 and text.rstrip().endswith("(line 2)"), text


def test_a_tool_error_gets_its_line_from_the_field(make_runtime: Any) -> None:
    @tool
    def boom() -> int:
        """Fails."""
        raise ValueError("no")

    runtime = make_runtime([boom])
    with runtime.session() as session:
        result = session.run("a = 1\nb = 2\nboom()")
    assert result.error is not None and result.error.type == "tool_error"
    text, _ = format_run_result(result, 10_000)
    assert text.count("(line 3)") == 1, text


def test_an_error_without_a_line_gets_no_location() -> None:
    from toolscript.runtime.results import RunResult

    result = RunResult(ok=False, error=RunError("timeout", "the run passed its wall limit"))
    text, _ = format_run_result(result, 10_000)
    assert text == "error: timeout: the run passed its wall limit"


def test_every_rendering_of_an_error_names_its_line_once(tmp_path: Any) -> None:
    """``str(RunError)`` and the CLI add the location from the fields too."""
    import subprocess
    import sys

    error = RunError("script_error", "ZeroDivisionError: division by zero", {"line": 2})
    assert str(error) == "script_error: ZeroDivisionError: division by zero (line 2)"
    assert RunError("timeout", "too long").location == ""
    script = tmp_path / "bad.py"
    script.write_text("print('before')\nx = 1 / 0\n")
    done = subprocess.run([sys.executable, "-m", "toolscript", "run", str(script), "--backend",
                           "inprocess"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "error [script_error]: ZeroDivisionError: division by zero (line 2)" in done.stderr
    assert done.stderr.count("(line 2)") == 1, done.stderr
