"""Bad input: each ends with its own typed error within its limit, the host is
unaffected, the session stays usable, and no sandbox process is left behind."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
from backend_marks import process_backends
from corehelpers import ALL_TOOLS, assert_gone, pid_alive, read_environ, sandbox_pid

from toolscript import Limits, RunResult

SECRET = "sk-test-DO-NOT-LEAK-7f3a9c"


def run_bad(make_runtime: Any, code: str, limits: Limits | None = None,
            tools: Any = ALL_TOOLS) -> RunResult:
    """Run ``code`` in a session, check the session still works afterwards and
    that every sandbox process it used is gone once it is closed."""
    threads_before = threading.active_count()
    runtime = make_runtime(tools, limits=limits)
    with runtime.session() as session:
        warm = session.run("warm = 1")
        assert warm.ok, warm.error
        pids = [sandbox_pid(session)]
        result = session.run(code)
        if result.session_restarted:
            assert_gone(pids[0])
        after = session.run("6 * 7")
        assert after.ok and after.value == 42, after.error
        assert after.session_restarted is False
        pids.append(sandbox_pid(session))
    for pid in pids:
        assert_gone(pid)
    assert threading.active_count() <= threads_before + 70  # tool workers at most
    return result


def test_syntax_error_has_line_and_column(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "x = 1\ny = (2 +\n")
    assert result.error.type == "syntax_error"
    assert result.error.details["line"] == 2 and result.error.details["column"] == 5
    assert result.error.line == 2
    assert "line" not in result.error.message  # the fields own the location
    assert str(result.error).endswith("(line 2, column 5)")
    assert result.error.details["text"] == "y = (2 +"


def test_syntax_error_indentation(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "def f():\nreturn 1\n")
    assert result.error.type == "syntax_error"
    assert result.error.line == 2 and "indent" in result.error.message.lower()


@pytest.mark.parametrize(("code", "must_mention"), [
    ("async def f():\n    return 1\nf().cr_frame\n", "cr_frame"),
    ("().__class__.__subclasses__()", "__subclasses__"),
    ("__import__('os')", "__import__"),
    ("x = [1]\nx.__class__.__bases__", "__bases__"),
    ("def f():\n    yield 1\nf().gi_frame", "gi_frame"),
    ("exec('1')", "exec"),
    ("eval('1')", "eval"),
    ("class M(type):\n    pass\nclass A(metaclass=M):\n    pass", "metaclass"),
    ("try:\n    pass\nexcept* ValueError:\n    pass", "except"),
], ids=["async", "subclasses", "dunder_import", "bases",
        "gi_frame", "exec", "eval", "metaclass", "except_star"])
def test_policy_refusal_is_retryable_with_a_hint(fresh: Any, code: str,
                                                 must_mention: str) -> None:
    result = fresh.run(code)
    assert not result.ok
    assert result.error.type == "policy_error", result.error
    assert result.error.details.get("retryable") is True
    assert must_mention in result.error.message, result.error.message
    assert result.error.details["details"]
    assert "Line " in result.error.message
    assert fresh.run("1 + 1").value == 2


def test_infinite_loop_times_out(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "n = 0\nwhile True:\n    n += 1\n",
                     Limits(wall_time_s=0.5))
    assert result.error.type == "timeout"


def test_infinite_loop_under_except_base_exception_still_times_out(make_runtime: Any) -> None:
    code = (
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except BaseException:\n"
        "        pass\n"
    )
    result = run_bad(make_runtime, code, Limits(wall_time_s=0.5))
    assert result.error.type == "timeout"


@pytest.mark.parametrize("code", [
    # return/continue in finally and a suppressing __exit__ also swallow exceptions.
    "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 1\n"
    "while True:\n    f()\n",
    "while True:\n    try:\n        while True:\n            pass\n"
    "    finally:\n        continue\n",
    "class Quiet:\n    def __enter__(self):\n        return self\n"
    "    def __exit__(self, *exc):\n        return True\n"
    "while True:\n    with Quiet():\n        while True:\n            pass\n",
], ids=["finally_return", "finally_continue", "suppressing_exit"])
def test_swallowing_constructs_still_time_out(make_runtime: Any, code: str,
                                               backend_name: str) -> None:
    result = run_bad(make_runtime, code, Limits(wall_time_s=0.5))
    assert result.error.type == "timeout"
    # The in-sandbox watchdog ends it: no host kill needed (inprocess has no other way).
    assert result.session_restarted is False


def test_cpu_limit(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "while True:\n    pass\n",
                     Limits(wall_time_s=20, cpu_time_s=0.5))
    assert result.error.type == "cpu_limit"


@process_backends  # inprocess has no memory isolation (documented)
def test_memory_bomb(make_runtime: Any, backend_name: str) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    result = run_bad(make_runtime, code, Limits(memory_mb=256, wall_time_s=20))
    assert result.error.type == "memory_limit", result.error


@process_backends  # inprocess has no memory isolation (documented)
def test_single_huge_allocation(make_runtime: Any, backend_name: str) -> None:
    result = run_bad(make_runtime, "s = 'x' * (4 * 1024 ** 3)\nlen(s)",
                     Limits(memory_mb=256, wall_time_s=20))
    assert result.error.type == "memory_limit", result.error


def test_bytes_of_huge_size_refused_everywhere(fresh: Any) -> None:
    result = fresh.run("b = bytes(10 ** 12)")
    assert result.error.type == "memory_limit"


def test_output_flood(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "while True:\n    print('x' * 99)\n",
                     Limits(max_output_chars=1000))
    assert result.error.type == "output_limit"
    assert result.stdout_truncated is True
    assert len(result.stdout) == 1000
    assert result.stdout.startswith("x" * 99 + "\n")


def test_output_flood_cannot_be_swallowed(make_runtime: Any) -> None:
    code = ("n = 0\nwhile n < 10 ** 6:\n    n += 1\n    try:\n        print('y' * 50)\n"
            "    except BaseException:\n        pass\n'survived'")
    result = run_bad(make_runtime, code, Limits(max_output_chars=500))
    assert result.error.type == "output_limit"
    assert len(result.stdout) == 500


def test_deep_recursion(make_runtime: Any) -> None:
    result = run_bad(make_runtime, "def f(n):\n    return f(n + 1) + 1\nf(0)")
    assert result.error.type == "recursion_limit"
    assert result.error.line == 2


def test_deep_recursion_through_repr_and_data(make_runtime: Any) -> None:
    code = "x = []\nfor _ in range(100000):\n    x = [x]\nstr(x)"
    result = run_bad(make_runtime, code)
    assert result.error.type == "recursion_limit"


@pytest.mark.parametrize("code", [
    "10 ** 10 ** 10", "1 << 10 ** 10", "x = 10\nx **= 10 ** 10", "x = 1\nx <<= 10 ** 10",
    "pow(10, 10 ** 10)", "2 ** (2 ** 40)",
], ids=["pow", "lshift", "ipow", "ilshift", "pow_builtin", "pow2"])
def test_huge_integer(make_runtime: Any, code: str) -> None:
    result = run_bad(make_runtime, code, tools=())
    assert result.error.type == "integer_limit", result.error


def test_reasonable_integers_still_work(fresh: Any) -> None:
    result = fresh.run("[2 ** 100, 1 << 70, pow(3, 1000, 7), (-2) ** 63, 10 ** -2]")
    assert result.value == [2 ** 100, 1 << 70, pow(3, 1000, 7), (-2) ** 63, 0.01]


def test_huge_integer_cannot_be_swallowed(fresh: Any) -> None:
    result = fresh.run("try:\n    x = 10 ** 10 ** 10\nexcept BaseException:\n"
                       "    x = 'swallowed'\nx")
    assert result.error is not None and result.error.type == "integer_limit"


@process_backends  # inprocess cannot interrupt a long C call (documented)
def test_catastrophic_regex_is_contained_by_the_wall_clock(make_runtime: Any,
                                                           backend_name: str) -> None:
    code = "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')"
    result = run_bad(make_runtime, code, Limits(wall_time_s=0.5))
    # One C call cannot be interrupted from inside: whichever kernel-side
    # backstop fires first ends it, the host's wall-clock kill or RLIMIT_CPU.
    assert result.error.type in ("timeout", "cpu_limit")
    assert result.session_restarted is True


def test_host_environment_is_unreachable(make_runtime: Any, monkeypatch: pytest.MonkeyPatch,
                                         backend_name: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    probes = [
        "import os\nos.environ",
        "import os.path",
        "from os import environ",
        "import json\ngetattr(json, 'os', None)",
        "import random\nrandom._os",
        "import random\ngetattr(random, '_os', None)",
        "import dataclasses\ngetattr(dataclasses, 'sys', None)",
        "import typing\ngetattr(typing, 'sys', None)",
        "import statistics\n[n for n in dir(statistics) if 'sys' in n or 'os' == n]",
        "import re\n[getattr(re, n, None) for n in ('os', 'sys', 'environ')]",
        "import collections\n'{0.__init__.__globals__}'.format(collections.Counter)",
        "import functools\nfunctools.reduce.__self__",
        "str(type(print).__dict__)",
        "getattr(print, '__self__', None)",
        "getattr(add, '_call_host', None)",
        "add._call_host",
        "vars(add)",
        "[k for k in dir(add)]",
    ]
    runtime = make_runtime(ALL_TOOLS)
    with runtime.session() as session:
        assert session.run("1").ok
        for code in probes:
            result = session.run(code)
            text = repr(result.to_dict())
            assert SECRET not in text, code
            assert "environ({" not in text, code
        pid = sandbox_pid(session)
        if pid is not None:  # subprocess, docker: read the sandbox's environment from the host
            environ = read_environ(pid)
            assert SECRET.encode() not in environ
            assert b"OPENAI_API_KEY" not in environ
            if backend_name == "subprocess":
                # nothing at all from the host: only the hash seed it chose
                assert environ == f"PYTHONHASHSEED={runtime.backend.hash_seed}\0".encode()
    assert os.environ["OPENAI_API_KEY"] == SECRET  # the host kept its own


def test_host_is_unaffected_by_a_script_writing_shared_objects(fresh: Any) -> None:
    for code in ("import json\njson.dumps = None", "import math\nmath.pi = 3",
                 "len.x = 1", "import collections\ncollections.Counter.most_common = None",
                 "add.name = 'x'", "setattr(echo, '_name', 'add')"):
        result = fresh.run(code)
        assert not result.ok, code
    import json
    import math

    assert math.pi != 3 and callable(json.dumps)
    assert fresh.run("import json\n[json.dumps([1]), add(1, 1)]").value == ["[1]", 2]


@pytest.mark.parametrize(("code", "shown"), [
    ("raise BaseException('plain')", "BaseException: plain"),
    ("raise GeneratorExit", "GeneratorExit"),
    ("class Stop(BaseException):\n    pass\nraise Stop('mine')", "Stop: mine"),
    ("raise BaseExceptionGroup('g', [GeneratorExit()])", "BaseExceptionGroup: g"),
], ids=["BaseException", "GeneratorExit", "own_subclass", "group"])
def test_base_exceptions_from_the_script_are_data(fresh: Any, code: str, shown: str) -> None:
    pid = sandbox_pid(fresh)
    result = fresh.run(code)  # must not propagate into the host nor kill the sandbox
    assert result.error.type == "script_error"
    assert shown in result.error.message
    assert result.session_restarted is False
    assert sandbox_pid(fresh) == pid
    assert "Traceback" not in result.error.message


def test_sandbox_survives_many_failures_in_one_session(fresh: Any) -> None:
    pid = sandbox_pid(fresh)
    for code in ("1/0", "x = (", "import os", "{1}", "boom('x')", "raise SystemExit(0)",
                 "raise KeyboardInterrupt", "raise GeneratorExit", "def f(): f()\nf()"):
        assert not fresh.run(code).ok, code
    assert fresh.run("'alive'").value == "alive"
    assert sandbox_pid(fresh) == pid
    if pid is not None:
        assert pid_alive(pid)
