"""What a run returns: the final expression's value, printed output, JSON
normalisation and the limits on the value."""

from __future__ import annotations

from typing import Any

from toolscript import Limits, RunResult


def test_final_bare_expression_is_the_value_and_is_evaluated_once(fresh: Any) -> None:
    result = fresh.run(
        "calls = []\n"
        "def bump():\n"
        "    calls.append(1)\n"
        "    return len(calls)\n"
        "bump() * 10\n"
    )
    assert result.ok, result.error
    assert result.value == 10
    again = fresh.run("len(calls)")
    assert again.value == 1, "the final expression was evaluated more than once"


def test_final_expression_tool_call_happens_once(fresh: Any) -> None:
    result = fresh.run("x = 1\nadd(x, 2)")
    assert result.value == 3
    assert [c.name for c in result.tool_calls] == ["add"]


def test_no_final_expression_gives_none(fresh: Any) -> None:
    for code in ("x = 5", "def f():\n    return 1\n", "for i in range(3):\n    pass\n",
                 "if True:\n    7\n", ""):
        result = fresh.run(code)
        assert result.ok, (code, result.error)
        assert result.value is None, code


def test_expression_statement_in_the_middle_is_not_the_value(fresh: Any) -> None:
    result = fresh.run("41\nx = 1")
    assert result.ok and result.value is None


def test_stdout_capture_with_sep_and_end(fresh: Any) -> None:
    result = fresh.run(
        "print('a', 'b', sep='-')\n"
        "print('no newline', end='')\n"
        "print('|', 1, 2.5, None, [1, 'x'], sep=', ', end='!\\n')\n"
        "print()\n"
        "print('x', sep=None, end=None)\n"
    )
    assert result.ok, result.error
    assert result.stdout == "a-b\nno newline|, 1, 2.5, None, [1, 'x']!\n\nx\n"
    assert result.stdout_truncated is False


def test_stdout_and_value_together_and_stdout_kept_on_error(fresh: Any) -> None:
    result = fresh.run("print('before')\n{'k': 1}")
    assert (result.stdout, result.value) == ("before\n", {"k": 1})
    failed = fresh.run("print('partial')\n1 / 0")
    assert not failed.ok and failed.error.type == "script_error"
    assert failed.stdout == "partial\n"
    assert "ZeroDivisionError" in failed.error.message


def test_print_to_a_file_is_refused(fresh: Any) -> None:
    result = fresh.run("print('x', file=None)\nprint('y', file='stderr')")
    assert not result.ok
    assert result.error.type == "script_error"
    assert result.stdout == "x\n"


def test_each_run_has_its_own_stdout(fresh: Any) -> None:
    fresh.run("print('one')")
    assert fresh.run("print('two')").stdout == "two\n"


def test_json_normalisation(fresh: Any) -> None:
    result = fresh.run(
        "from collections import OrderedDict, namedtuple\n"
        "P = namedtuple('P', 'x y')\n"
        "{'tuple': (1, 2), 'nested': [(3, (4,))], 1: 'int key', 'od': OrderedDict(a=1),\n"
        " 'nt': P(1, 2), 'f': 1.5, 'b': True, 'n': None, 'u': 'héllo ✓'}"
    )
    assert result.ok, result.error
    assert result.value == {
        "tuple": [1, 2], "nested": [[3, [4]]], "1": "int key", "od": {"a": 1},
        "nt": [1, 2], "f": 1.5, "b": True, "n": None, "u": "héllo ✓",
    }
    assert isinstance(result, RunResult)


def test_unserializable_set(fresh: Any) -> None:
    result = fresh.run("{1, 2, 3}")
    assert not result.ok
    assert result.error.type == "unserializable_value"
    assert "set" in result.error.message
    assert "list(" in result.error.message  # says what to do instead
    assert result.value is None


def test_unserializable_custom_object_and_nested(fresh: Any) -> None:
    result = fresh.run("class Point:\n    pass\nPoint()")
    assert result.error.type == "unserializable_value"
    assert "Point" in result.error.message
    nested = fresh.run("{'a': [1, {'b': frozenset()}]}")
    assert nested.error.type == "unserializable_value"
    nan = fresh.run("float('nan')")
    assert nan.error.type == "unserializable_value"
    tool_in_value = fresh.run("[add]")
    assert tool_in_value.error.type == "unserializable_value"


def test_unserializable_value_leaves_session_usable(fresh: Any) -> None:
    fresh.run("s = {1, 2}")
    assert fresh.run("{1, 2}").error.type == "unserializable_value"
    assert fresh.run("sorted(s)").value == [1, 2]


def test_result_limit(make_runtime: Any) -> None:
    runtime = make_runtime(limits=Limits(max_result_bytes=1000))
    with runtime.session() as session:
        small = session.run("'x' * 900")
        assert small.ok and len(small.value) == 900
        big = session.run("'x' * 2000")
        assert not big.ok
        assert big.error.type == "result_limit"
        assert "1000" in big.error.message
        assert big.value is None
        assert session.run("len('x' * 2000)").value == 2000


def test_run_result_to_dict_is_json(fresh: Any) -> None:
    import json

    result = fresh.run("print('hi')\nadd(1, 2)")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["ok"] is True and data["value"] == 3 and data["stdout"] == "hi\n"
    assert data["tool_calls"][0]["name"] == "add"
    assert data["tool_calls"][0]["args"] == {"a": 1, "b": 2}
