"""The model reads a failed run's error once, with its line named once."""

from __future__ import annotations

from typing import Any

from toolscript.runtime.agent.format import format_run_result


def test_a_script_error_names_its_line_once(make_runtime: Any) -> None:
    runtime = make_runtime([])
    with runtime.session() as session:
        result = session.run("x = 1\ny = 1 / 0")
    text, is_error = format_run_result(result, 10_000)
    assert is_error
    assert text.count("(line 2)") == 1, text
    assert "ZeroDivisionError" in text
