"""Resource exhaustion: every attack is contained by a limit with a typed error,
and the same session runs the next script.

A few attacks are one long C call (a catastrophic regex, ``math.factorial``
of a huge number, an allocation loop). The watchdog cannot interrupt a C
call and the inprocess backend has no memory limit, so those run on the
process backends only, where the host kills the sandbox (documented in
``runtime/backends/inprocess.py``); the skip says so.
"""

# ruff: noqa: E501  (tables of attack scripts read best one per line)

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from backend_marks import BACKENDS, PROCESS_BACKENDS, with_backends
from security_helpers import SECURITY_TOOLS

from toolscript import Limits

LIMITS = Limits(wall_time_s=1.5, cpu_time_s=1.5, memory_mb=256, max_output_chars=10_000,
                max_tool_calls=50, max_result_bytes=100_000, tool_timeout_s=2.0)


@dataclass(frozen=True)
class Exhaust:
    id: str
    code: str
    errors: tuple[str, ...]
    process_only: bool = False
    restarted: bool | None = None  # None: either


CASES = [
    Exhaust("cpu_loop", "while True:\n    pass", ("timeout", "cpu_limit")),
    Exhaust("cpu_loop_in_function", "def spin():\n    n = 0\n    while True:\n        n += 1\nspin()",
            ("timeout", "cpu_limit")),
    Exhaust("swallow_except", "while True:\n    try:\n        while True:\n            pass\n"
            "    except BaseException:\n        pass", ("timeout", "cpu_limit"), restarted=False),
    Exhaust("swallow_finally_continue", "while True:\n    try:\n        while True:\n            pass\n"
            "    finally:\n        continue", ("timeout", "cpu_limit"), restarted=False),
    Exhaust("swallow_finally_return", "def f():\n    try:\n        while True:\n            pass\n"
            "    finally:\n        return 1\nwhile True:\n    f()", ("timeout", "cpu_limit"),
            restarted=False),
    Exhaust("swallow_exit_true", "class S:\n    def __enter__(self): return self\n"
            "    def __exit__(self, *a): return True\nwhile True:\n    with S():\n"
            "        while True:\n            pass", ("timeout", "cpu_limit"), restarted=False),
    Exhaust("swallow_generator_close", "def g():\n    while True:\n        try:\n            yield 1\n"
            "        except BaseException:\n            pass\nfor _ in g():\n    pass",
            ("timeout", "cpu_limit"), restarted=False),
    Exhaust("str_repeat_2_40", "'a' * 2**40", ("memory_limit",)),
    Exhaust("ljust_huge", "'a'.ljust(2**40)", ("memory_limit",)),
    Exhaust("bytes_huge", "bytes(10**10)", ("memory_limit",)),
    Exhaust("bytearray_huge", "bytearray(2**40)", ("memory_limit",)),
    Exhaust("pow_tower", "10**10**10", ("integer_limit",)),
    Exhaust("pow_builtin", "pow(7, 10**10)", ("integer_limit",)),
    Exhaust("lshift_huge", "1 << 10**10", ("integer_limit",)),
    Exhaust("pow_augassign", "x = 10\nx **= 10**10", ("integer_limit",)),
    Exhaust("int_str_digits", "int('9' * 100_000)", ("script_error",)),
    Exhaust("deep_recursion", "def f(n):\n    return f(n + 1)\nf(0)", ("recursion_limit",)),
    Exhaust("mutual_recursion", "def a(n): return b(n)\ndef b(n): return a(n)\na(0)",
            ("recursion_limit",)),
    Exhaust("deep_repr", "x = []\nfor _ in range(100_000):\n    x = [x]\nrepr(x)",
            ("recursion_limit",)),
    Exhaust("output_flood", "while True:\n    print('x' * 1000)", ("output_limit",)),
    Exhaust("output_flood_swallowed", "while True:\n    try:\n        print('x' * 1000)\n"
            "    except BaseException:\n        pass", ("output_limit",)),
    Exhaust("tool_call_flood", "while True:\n    echo(1)", ("tool_call_limit",)),
    Exhaust("tool_call_flood_swallowed", "while True:\n    try:\n        echo(1)\n"
            "    except BaseException:\n        pass", ("tool_call_limit",)),
    Exhaust("parallel_flood", "parallel(echo, [{'value': i} for i in range(1000)])",
            ("tool_call_limit",)),
    Exhaust("huge_result", "'x' * 1_000_000", ("result_limit",)),
    Exhaust("unserializable_result", "len", ("unserializable_value",)),
    Exhaust("list_growth", "x = []\nwhile True:\n    x.append('a' * 1_000_000)",
            ("memory_limit", "timeout", "cpu_limit"), process_only=True),
    Exhaust("regex_backtracking", "import re\nre.match('(a+)+$', 'a' * 64 + 'b')",
            ("timeout", "cpu_limit"), process_only=True, restarted=True),
    Exhaust("factorial_c_call", "import math\nmath.factorial(10**8)",
            ("timeout", "cpu_limit"), process_only=True, restarted=True),
    Exhaust("sorted_c_call", "sorted(range(10**9))", ("memory_limit", "timeout", "cpu_limit"),
            process_only=True),
]


# One long C call or an unbounded allocation (process_only) cannot be stopped
# by the inprocess backend (no memory limit, no hard kill): process backends
# kill the sandbox, so those cases run there only.
@pytest.mark.parametrize(
    ("case", "backend_name"),
    with_backends(CASES, lambda c: PROCESS_BACKENDS if c.process_only else BACKENDS),
    indirect=["backend_name"],
)
def test_exhaustion_is_contained(case: Exhaust, backend_name: str, make_runtime: Any,
                                 host_intact: None) -> None:
    runtime = make_runtime(SECURITY_TOOLS, limits=LIMITS)
    with runtime.session() as session:
        result = session.run(case.code)
        assert not result.ok, result.to_dict()
        assert result.error is not None
        assert result.error.type in case.errors, result.to_dict()
        if case.restarted is not None:
            assert result.session_restarted is case.restarted, result.to_dict()
        after = session.run("1 + 1")
        assert after.ok and after.value == 2, after.to_dict()
