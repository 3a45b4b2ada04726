"""Tool calls from scripts and from the host: binding, validation, errors,
timeouts, budgets, parallel(), and the audit records of every attempt."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from corehelpers import ALL_TOOLS, SPANS, overlapping, serial

from toolscript import Limits, ToolCallRecord, tool
from toolscript.errors import ToolscriptError

HOST_MARKERS = ("Traceback", "corehelpers.py", 'File "', "site-packages")


def _no_host_traceback(result: Any) -> None:
    text = json.dumps(result.to_dict(), default=str)
    for marker in HOST_MARKERS:
        assert marker not in text, f"host detail {marker!r} leaked: {text[:500]}"


# --- records -------------------------------------------------------------------------

def test_record_of_a_successful_call(fresh: Any) -> None:
    result = fresh.run("add(2, b=3)")
    assert result.value == 5
    [record] = result.tool_calls
    assert isinstance(record, ToolCallRecord)
    assert record.name == "add"
    assert record.args == {"a": 2, "b": 3}
    assert record.approved is True
    assert record.ok is True and record.error is None
    assert record.value == 5
    assert record.duration_s >= 0 and record.duration == record.duration_s
    assert record.source == "script"


def test_every_attempt_is_recorded_in_order(fresh: Any) -> None:
    result = fresh.run(
        "out = []\n"
        "for attempt in [lambda: add(1), lambda: add('x'), lambda: send('bob'),\n"
        "                lambda: boom('bad'), lambda: not_json(), lambda: add(a=1, c=2)]:\n"
        "    try:\n"
        "        out.append(attempt())\n"
        "    except ToolError as exc:\n"
        "        out.append(exc.type)\n"
        "out"
    )
    assert result.ok, result.error
    assert result.value == [1, "invalid_arguments", "denied", "tool_exception",
                            "invalid_result", "invalid_arguments"]
    records = result.tool_calls
    assert [r.name for r in records] == ["add", "add", "send", "boom", "not_json", "add"]
    assert [r.ok for r in records] == [True, False, False, False, False, False]
    assert [r.approved for r in records] == [True, None, False, True, True, None]
    assert [r.error.type if r.error else None for r in records] == [
        None, "invalid_arguments", "denied", "tool_exception", "invalid_result",
        "invalid_arguments"]
    assert records[1].args == {"a": "x"}
    assert len({r.id for r in records}) == len(records)
    assert all(r.duration_s >= 0 for r in records)


# --- binding ---------------------------------------------------------------------------

def test_positional_and_keyword_binding(fresh: Any) -> None:
    result = fresh.run("[add(1, 2), add(1, b=2), add(a=1, b=2), add(b=2, a=1), add(5)]")
    assert result.value == [3, 3, 3, 3, 5]
    # records hold the final arguments: an omitted argument shows with its default
    assert [r.args for r in result.tool_calls] == [
        {"a": 1, "b": 2}, {"a": 1, "b": 2}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 5, "b": 0}]


def test_too_many_positional_arguments(fresh: Any) -> None:
    result = fresh.run("add(1, 2, 3)")
    assert not result.ok
    assert result.error.type == "tool_error"
    assert "ToolArgumentError" in result.error.message
    assert "2 positional" in result.error.message and "3 were given" in result.error.message
    caught = fresh.run("try:\n    add(1, 2, 3)\nexcept TypeError as e:\n    r = str(e)\nr")
    assert caught.ok and "positional" in caught.value


def test_multiple_values_for_an_argument(fresh: Any) -> None:
    result = fresh.run("try:\n    add(1, a=2)\nexcept ToolArgumentError as e:\n    r = str(e)\nr")
    assert result.ok and "multiple values" in result.value and "'a'" in result.value


def test_unknown_tool_from_a_script_names_the_available_ones(fresh: Any) -> None:
    result = fresh.run("get_weather('Paris')")
    assert not result.ok
    assert "NameError" in result.error.message and "get_weather" in result.error.message
    for name in ("add", "echo", "stamp"):
        assert name in result.error.message, result.error.message


def test_unknown_tool_direct_lists_available(module_session: Any) -> None:
    record = module_session.call_tool("get_weather", {"city": "Paris"})
    assert record.ok is False and record.approved is None
    assert record.error.type == "unknown_tool"
    assert "get_weather" in record.error.message
    for name in ("add", "echo", "send"):
        assert name in record.error.message
    assert "add" in record.error.details["available"]


def test_schema_violation_names_the_field(fresh: Any) -> None:
    result = fresh.run(
        "try:\n    add('one', b=[2])\nexcept ToolArgumentError as e:\n"
        "    r = [e.type, e.tool, str(e)]\nr"
    )
    assert result.ok, result.error
    kind, tool, message = result.value
    assert (kind, tool) == ("invalid_arguments", "add")
    assert "'a'" in message and "integer" in message
    record = result.tool_calls[0]
    paths = {p["path"] for p in record.error.details["problems"]}
    assert any("a" in p for p in paths) and any("b" in p for p in paths), paths


def test_missing_required_argument(fresh: Any) -> None:
    result = fresh.run("add(b=1)")
    assert result.error.type == "tool_error"
    assert "ToolArgumentError" in result.error.message and "'a'" in result.error.message


def test_non_json_argument_is_refused(fresh: Any) -> None:
    result = fresh.run("try:\n    echo({1, 2})\nexcept ToolArgumentError as e:\n    r = e.type\nr")
    assert result.ok and result.value == "invalid_arguments"
    obj = fresh.run("class A:\n    pass\ntry:\n    echo(A())\nexcept ToolError as e:\n"
                    "    r = e.type\nr")
    assert obj.value == "invalid_arguments"


def test_tool_values_are_copies(fresh: Any) -> None:
    result = fresh.run("v = {'k': [1]}\nr = echo(v)\nr['k'].append(2)\n[v, r, r is v]")
    assert result.value == [{"k": [1]}, {"k": [1, 2]}, False]


# --- tool failures -------------------------------------------------------------------

def test_tool_raising_is_a_catchable_tool_error_without_host_traceback(fresh: Any) -> None:
    result = fresh.run(
        "try:\n    boom('disk is full')\nexcept ToolError as e:\n"
        "    r = [str(e), e.type, e.tool, type(e).__name__]\nr"
    )
    assert result.ok, result.error
    assert result.value == ["disk is full", "tool_exception", "boom", "ValueError"]
    _no_host_traceback(result)
    uncaught = fresh.run("boom('disk is full')")
    assert uncaught.error.type == "tool_error"
    assert uncaught.error.message == "ToolError: boom: ValueError: disk is full"
    assert uncaught.error.line == 1
    assert uncaught.tool_calls[0].error.details.get("exception") == "ValueError"
    _no_host_traceback(uncaught)


def test_tool_timeout(fresh: Any) -> None:
    result = fresh.run(
        "try:\n    hang(3)\nexcept ToolTimeout as e:\n    r = ['ToolTimeout', e.type, str(e)]\n"
        "r"
    )
    assert result.ok, result.error
    assert result.value[:2] == ["ToolTimeout", "timeout"]
    assert "0.2" in result.value[2]
    assert result.tool_calls[0].error.type == "timeout"
    as_builtin = fresh.run("try:\n    hang(3)\nexcept TimeoutError:\n    r = 'builtin'\nr")
    assert as_builtin.value == "builtin"


def test_non_json_tool_result(fresh: Any) -> None:
    result = fresh.run("not_json()")
    assert result.error.type == "tool_error"
    record = result.tool_calls[0]
    assert record.error.type == "invalid_result"
    assert "not JSON" in record.error.message
    _no_host_traceback(result)


def test_toolscript_error_in_a_tool_reaches_the_programmer(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS)
    with runtime.session() as session:
        with pytest.raises(ToolscriptError, match="host misconfigured"):
            session.run("try:\n    fatal()\nexcept BaseException:\n    pass\n'swallowed'")
        assert session.run("add(1, 1)").value == 2


def test_tool_call_budget(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS, limits=Limits(max_tool_calls=3))
    with runtime.session() as session:
        result = session.run("rows = []\nfor i in range(10):\n    rows.append(add(i))\nrows")
        assert not result.ok
        assert result.error.type == "tool_call_limit"
        assert "3" in result.error.message
        assert [r.ok for r in result.tool_calls] == [True, True, True, False]
        assert result.tool_calls[-1].error.type == "tool_call_limit"
        swallowed = session.run(
            "n = 0\nfor i in range(10):\n    try:\n        add(i)\n        n += 1\n"
            "    except BaseException:\n        pass\nn"
        )
        assert swallowed.error.type == "tool_call_limit"
        # The budget is per run.
        assert session.run("[add(1), add(2), add(3)]").value == [1, 2, 3]


def test_tool_call_budget_in_parallel(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS, limits=Limits(max_tool_calls=3))
    result = runtime.run("parallel(add, [1, 2, 3, 4, 5])")
    assert result.error.type == "tool_call_limit"
    # A batch larger than what is left of the budget is refused whole: nothing ran.
    assert "batch of 5 calls" in result.error.message
    assert result.tool_calls == []
    fits = runtime.run("add(1)\nparallel(add, [1, 2])")
    assert fits.ok and fits.value == [1, 2], fits.to_dict()
    over = runtime.run("add(1)\nparallel(add, [1, 2, 3])")
    assert over.error.type == "tool_call_limit" and len(over.tool_calls) == 1


# --- parallel ------------------------------------------------------------------------

def test_parallel_both_forms_preserve_order(fresh: Any) -> None:
    result = fresh.run(
        "a = parallel(add, [(1, 1), {'a': 2, 'b': 2}, [3], 4])\n"
        "b = parallel([(add, {'a': 10}), (echo, ['x']), (add, (5, 6)), (echo, {'value': None})])\n"
        "c = parallel([])\n"
        "[a, b, c]"
    )
    assert result.ok, result.error
    assert result.value == [[2, 4, 3, 4], [10, "x", 11, None], []]
    assert [r.name for r in result.tool_calls] == ["add"] * 4 + ["add", "echo", "add", "echo"]


def test_parallel_results_keep_call_order_when_finishing_out_of_order(fresh: Any) -> None:
    result = fresh.run(
        "parallel(stamp, [{'tag': 'slow', 'seconds': 0.3}, {'tag': 'fast', 'seconds': 0.0}])"
    )
    assert result.value == [{"tag": "slow"}, {"tag": "fast"}]
    finished = [s["tag"] for s in sorted(SPANS, key=lambda s: s["end"])]
    assert finished == ["fast", "slow"]


def test_parallel_read_only_calls_overlap(fresh: Any) -> None:
    result = fresh.run("parallel(stamp, [('a',), ('b',), ('c',), ('d',)])")
    assert result.ok, result.error
    assert [s["tag"] for s in SPANS] and len(SPANS) == 4
    assert overlapping(SPANS), "read-only calls in parallel() did not run concurrently"
    assert len({s["thread"] for s in SPANS}) == 4


def test_parallel_write_calls_never_overlap(fresh: Any) -> None:
    result = fresh.run(
        "parallel([(write_stamp, ['w1']), (stamp, ['r1', 0.2]), (write_stamp, ['w2']),\n"
        "          (write_stamp, ['w3']), (stamp, ['r2', 0.2])])"
    )
    assert result.ok, result.error
    assert [v["tag"] for v in result.value] == ["w1", "r1", "w2", "w3", "r2"]
    writes = [s for s in SPANS if s["kind"] == "write"]
    assert len(writes) == 3
    assert serial(writes), "write tools ran concurrently"
    assert [s["tag"] for s in sorted(writes, key=lambda s: s["start"])] == ["w1", "w2", "w3"]


def test_parallel_errors_raise_or_are_returned(fresh: Any) -> None:
    raised = fresh.run(
        "try:\n    parallel([(add, [1]), (boom, ['x']), (add, [2])])\n"
        "except ToolError as e:\n    r = [str(e), e.message]\nr"
    )
    assert raised.value == ["x", "boom: ValueError: x"]
    returned = fresh.run(
        "res = parallel([(add, [1]), (boom, ['x']), (send, ['bob']), (add, ['y']), (add, [2])],\n"
        "               return_exceptions=True)\n"
        "[r if not isinstance(r, ToolError) else [type(r).__name__, r.type] for r in res]"
    )
    assert returned.ok, returned.error
    assert returned.value == [1, ["ValueError", "tool_exception"], ["ToolDenied", "denied"],
                              ["ToolArgumentError", "invalid_arguments"], 2]
    assert [r.ok for r in returned.tool_calls] == [True, False, False, False, True]


def test_parallel_misuse_is_a_type_error(fresh: Any) -> None:
    for code in ("parallel([add])", "parallel([(len, [1])])", "parallel(add)",
                 "parallel([(add, {})], [1])"):
        result = fresh.run(code)
        assert not result.ok, code
        assert result.error.type in ("script_error", "tool_error"), (code, result.error)


def test_parallel_tool_timeout(fresh: Any) -> None:
    result = fresh.run("parallel([(hang, [3]), (add, [1])], return_exceptions=True)\n"
                       "[type(r).__name__ for r in _]" if False else
                       "res = parallel([(hang, [3]), (add, [1])], return_exceptions=True)\n"
                       "[type(r).__name__ for r in res]")
    assert result.value == ["ToolTimeout", "int"]


# --- direct (classic) calls ------------------------------------------------------------

def test_call_tool_with_dict_and_json_string(module_session: Any) -> None:
    record = module_session.call_tool("add", {"a": 1, "b": 2})
    assert (record.ok, record.value, record.source) == (True, 3, "direct")
    from_text = module_session.call_tool("add", '{"a": 4, "b": 5}')
    assert (from_text.ok, from_text.value, from_text.args) == (True, 9, {"a": 4, "b": 5})
    empty = module_session.call_tool("add", "")
    assert empty.error.type == "invalid_arguments"


def test_call_tool_with_invalid_json(module_session: Any) -> None:
    record = module_session.call_tool("add", '{"a": 1,')
    assert record.ok is False
    assert record.error.type == "invalid_json"
    assert "JSON" in record.error.message
    assert record.approved is None


def test_call_tool_schema_denial_and_exception(module_session: Any) -> None:
    assert module_session.call_tool("add", {"a": "1"}).error.type == "invalid_arguments"
    denied = module_session.call_tool("send", {"to": "bob"})
    assert (denied.approved, denied.error.type) == (False, "denied")
    failed = module_session.call_tool("boom", {"message": "m"})
    assert failed.error.message == "boom: ValueError: m"


def test_call_tools_order_and_concurrency(module_session: Any) -> None:
    records = module_session.call_tools([
        ("stamp", {"tag": "a"}), ("stamp", '{"tag": "b"}'), ("add", "{bad json"),
        ("nope", {}), ("stamp", {"tag": "c"}),
    ])
    assert [r.name for r in records] == ["stamp", "stamp", "add", "nope", "stamp"]
    assert [r.ok for r in records] == [True, True, False, False, True]
    assert records[2].error.type == "invalid_json"
    assert records[3].error.type == "unknown_tool"
    assert [r.value for r in records if r.ok] == [{"tag": "a"}, {"tag": "b"}, {"tag": "c"}]
    assert overlapping(SPANS)


def test_tool_exceptions_keep_their_builtin_class(make_runtime: Any) -> None:
    """``except KeyError:`` around a tool call catches a tool's KeyError (or its
    subclass), as it would a direct call; ``str()`` is the tool's own message;
    ``ToolError`` still catches every failure; single calls and ``parallel`` agree."""

    class CustomerGone(KeyError):
        pass

    @tool(read_only=True)
    def customer(cid: str) -> dict:
        """Look a customer up."""
        if cid == "gone":
            raise CustomerGone(f"customer {cid} was deleted")
        if cid == "bad":
            raise ValueError(f"malformed id {cid!r}")
        if cid == "zero":
            return {"ratio": 1 / 0}
        raise RuntimeError("backend down")

    runtime = make_runtime([customer])
    result = runtime.run(textwrap.dedent("""
        out = []
        try:
            customer('gone')
        except KeyError as e:
            out.append(['KeyError', str(e), isinstance(e, LookupError), isinstance(e, ToolError)])
        try:
            customer('bad')
        except ValueError as e:
            out.append(['ValueError', str(e)])
        try:
            customer('zero')
        except ArithmeticError as e:
            out.append([type(e).__name__])
        try:
            customer('other')
        except KeyError:
            out.append('wrong')
        except ToolError as e:
            out.append(['ToolError', isinstance(e, RuntimeError), e.tool])
        batch = parallel([(customer, {'cid': 'gone'}), (customer, {'cid': 'bad'})],
                         return_exceptions=True)
        out.append([isinstance(batch[0], KeyError), isinstance(batch[1], ValueError)])
        out
    """))
    assert result.ok, result.error
    assert result.value == [
        ["KeyError", "'customer gone was deleted'", True, True],
        ["ValueError", "malformed id 'bad'"],
        ["ZeroDivisionError"],
        ["ToolError", True, "customer"],
        [True, True],
    ]
