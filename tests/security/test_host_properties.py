"""Property-based attacks on the host boundary: ``rt.run()`` always returns.

Hypothesis picks a hostile value (integers past 4,300 digits, deep nesting,
NaN and infinities, lone surrogates, huge strings, odd exception classes)
and a way to push it at the host: as a tool argument, as a tool's result,
as the script's final value, printed, or raised. On every backend the run
must come back as a :class:`RunResult` whose contents are plain JSON data,
whose texts respect ``max_output_chars``, and the session must still work.

Bounded on purpose (``slow`` marker, few examples, no deadline): each
example is a real run on a real backend.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from host_helpers import plain_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscript import Limits, Runtime, tool

pytestmark = pytest.mark.slow

TEXT_LIMIT = 5_000
BOUNDED = settings(max_examples=12, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.function_scoped_fixture,
                                          HealthCheck.too_slow])

KINDS = ["bigint", "negbig", "deep_list", "deep_dict", "nan", "inf", "surrogate", "huge_str",
         "mixed", "wide"]
BUILD = '''
def build(kind, n):
    if kind == "bigint":
        return 10 ** n
    if kind == "negbig":
        return -(10 ** n) + 1
    if kind == "deep_list":
        x = "leaf"
        for _ in range(n):
            x = [x]
        return x
    if kind == "deep_dict":
        x = 1
        for _ in range(n):
            x = {"k": x}
        return x
    if kind == "nan":
        return [1.0, float("nan")]
    if kind == "inf":
        return {"v": float("inf") if n % 2 else float("-inf")}
    if kind == "surrogate":
        return "a\\ud800b" * (n % 50 + 1)
    if kind == "huge_str":
        return "x" * (n * 1000)
    if kind == "mixed":
        return [n, "s", None, 2.5, True, {"k": [n, {"z": [None]}]}]
    if kind == "wide":
        return list(range(n * 50))
    return None
'''
_host_build: dict[str, Any] = {}
exec(BUILD, _host_build)  # the same recipe on the host

SIZES = {"bigint": (4200, 6000), "negbig": (4200, 6000), "deep_list": (50, 400),
         "deep_dict": (50, 400), "huge_str": (1, 3000), "wide": (1, 3000)}

HOSTILE_RESULT: list[Any] = [None]


@tool(read_only=True)
def echo(value: Any = None) -> Any:
    """Return the value."""
    return value


@tool(read_only=True)
def typed(count: int, items: list[dict[str, int]], tags: set[str]) -> int:
    """A tool with a typed signature."""
    return count


@tool(read_only=True)
def hostile() -> Any:
    """Return the value the test chose (built on the host)."""
    return HOSTILE_RESULT[0]


ACTIONS = {
    "echo_arg": "r = echo(value)",
    "typed_count": "r = typed(value, [], [])",
    "typed_items": "r = typed(1, [{'a': value}], [])",
    "typed_tags": "r = typed(1, [], [value, 'a'])",
    "parallel": "r = parallel(echo, [{'value': value}, {'value': 1}])",
    "tool_result": "r = hostile()",
    "final": "r = value",
    "print": "print(value)\nr = None",
    "raise_value": "raise ValueError(value)",
    "raise_str": ("class E(Exception):\n    def __str__(self):\n        return value\n"
                  "raise E()"),
    "raise_repr": ("class E(Exception):\n    def __str__(self):\n        raise E()\n"
                   "    def __repr__(self):\n        return value\nraise E()"),
    "tool_error_subclass": ("class T(ToolError):\n    pass\nt = T(value)\nt.tool = value\n"
                            "raise t"),
}


def _script(kind: str, n: int, action: str, catch: bool) -> str:
    body = ACTIONS[action]
    if catch:
        body = "try:\n" + "\n".join("    " + line for line in body.splitlines()) + (
            "\nexcept ToolError as e:\n    r = [e.type, len(e.message)]")
    return f"{BUILD}\nvalue = build({kind!r}, {n})\n{body}\n" + ("r" if "r =" in body else "")


@st.composite
def attacks(draw: st.DrawFn) -> tuple[str, int, str, bool]:
    kind = draw(st.sampled_from(KINDS))
    low, high = SIZES.get(kind, (0, 50))
    n = draw(st.integers(min_value=low, max_value=high))
    action = draw(st.sampled_from(sorted(ACTIONS)))
    return kind, n, action, draw(st.booleans())


@pytest.fixture
def runtime(make_runtime: Callable[..., Runtime]) -> Iterator[Runtime]:
    yield make_runtime([echo, typed, hostile],
                       limits=Limits(wall_time_s=10, max_output_chars=TEXT_LIMIT))


@BOUNDED
@given(attack=attacks())
def test_run_returns_whatever_the_script_does(runtime: Runtime,
                                              attack: tuple[str, int, str, bool]):
    kind, n, action, catch = attack
    HOSTILE_RESULT[0] = _host_build["build"](kind, n)
    with runtime.session() as session:
        result = session.run(_script(kind, n, action, catch))
        data = result.to_dict()
        assert plain_json(data), data
        json.dumps(data)  # everything a run returns can be written out
        if result.error is not None:
            assert len(result.error.message) <= TEXT_LIMIT
            assert result.error.type != "protocol_error", result.error
        for record in result.tool_calls:
            if record.error is not None:
                assert len(record.error.message) <= TEXT_LIMIT
        assert len(result.stdout) <= TEXT_LIMIT
        assert session.run("1 + 1").value == 2, "the session stays usable"
    assert threading.active_count() < 200


odd_names = st.text(alphabet=st.characters(min_codepoint=0x41, max_codepoint=0x2FFF,
                                           categories=["Lu", "Ll", "Lo"]),
                    min_size=1, max_size=12)


@BOUNDED
@given(name=odd_names, base=st.sampled_from(["Exception", "BaseException", "ValueError",
                                             "ToolError", "KeyError", "RecursionError",
                                             "MemoryError", "StopIteration"]),
       body=st.sampled_from(["return 'x' * 10_000_000", "raise self", "return None",
                             "return 5", "return str(self)", "raise KeyError(1)"]))
def test_odd_exception_classes_become_errors(runtime: Runtime, name: str, base: str,
                                             body: str):
    code = (f"class {name}({base}):\n    def __str__(self):\n        {body}\n"
            f"raise {name}()")
    with runtime.session() as session:
        result = session.run(code)
        assert not result.ok and result.error is not None
        assert plain_json(result.error.to_dict())
        assert len(result.error.message) <= TEXT_LIMIT
        assert session.run("2").value == 2
