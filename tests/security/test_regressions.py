"""Regressions for holes found by this suite that do not fit the attack tables.

* Script code that ran outside any run: a generator's ``finally`` executed
  when the namespace was cleared (inprocess: in a host thread, no watchdog).
* Scripts the parser accepts but the compiler refuses (``return`` at top
  level, ``*a = 1``) or that nest too deeply crashed the sandbox process (or
  raised into the host on inprocess) - found by the atheris policy fuzzer.
* A frame nested deeper than the reader's stack crashed the host's decoder.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from toolscript.sandbox.protocol import FrameError, decode_body

from toolscript import Limits


@pytest.mark.parametrize("code", [
    "return 5", "*a = 1", "break", "continue", "nonlocal x", "yield 1",
    "def f():\n    x = 1\n    global x", "x = 1\0", "+".join(["1"] * 5000), "a." * 3000 + "b",
    "x = " + "-" * 100_000 + "1", "[" * 300 + "]" * 300,
])
def test_compiler_only_errors_are_syntax_errors(code: str, make_runtime: Any) -> None:
    runtime = make_runtime()
    with runtime.session() as session:
        result = session.run(code)
        assert not result.ok and result.error is not None
        assert result.error.type == "syntax_error", result.to_dict()
        assert not result.session_restarted
        assert session.run("1 + 1").value == 2


def test_generator_finalizer_cannot_run_outside_a_run(make_runtime: Any) -> None:
    """Clearing the namespace finalises the generator; its ``finally`` must not
    loop forever in the host thread (reset/close must return)."""
    runtime = make_runtime(limits=Limits(wall_time_s=2.0))
    session = runtime.session()
    result = session.run("def g():\n    try:\n        yield 1\n    finally:\n        while True:\n"
                         "            pass\nx = g()\nnext(x)")
    assert result.ok and result.value == 1
    done: list[bool] = []

    def reset_and_close() -> None:
        session.reset()
        assert session.run("y = 2\ny").value == 2
        session.close()
        done.append(True)

    worker = threading.Thread(target=reset_and_close, daemon=True)
    worker.start()
    worker.join(10)
    assert done == [True], "reset/close hung in a script generator's finally block"


def test_script_cannot_print_or_call_tools_between_runs() -> None:
    """The abort is pending between runs: code reached outside a run stops at
    its first handler, prints nothing and calls nothing."""
    from toolscript.sandbox.guards import SandboxAbort
    from toolscript.sandbox.interpreter import Interpreter

    calls: list[str] = []

    class Link:
        def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
            calls.append(tool)
            return {"ok": True, "value": None}

        def call_many(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return []

    interpreter = Interpreter(Link(), tools=[{"name": "t", "params": []}])
    result = interpreter.run("def f():\n    t()\n    print('x')\nsaved = f")
    assert result["ok"]
    with pytest.raises(SandboxAbort):
        interpreter.namespace["saved"]()
    assert calls == []


def test_deeply_nested_frame_is_a_frame_error() -> None:
    with pytest.raises(FrameError):
        decode_body(b'{"type":"call","args":' + b"[" * 200_000 + b"]" * 200_000 + b"}")
