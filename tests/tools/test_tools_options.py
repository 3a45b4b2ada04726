"""One set of tool options: ``ToolOptions`` and wrappers that keep every option."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
from toolscript.tools import Tool, ToolOptions, resilient, tool, two_phase
from toolscript.tools.options import ToolFlagArgs, ToolOptionArgs, option_names
from toolscript.tools.resilience import ToolRetry, TransientToolError

from toolscript.errors import ToolDefinitionError


def _no_sleep(_: float) -> None:
    """A retry policy's sleep that does not wait."""


NO_WAIT = ToolRetry(sleep=_no_sleep)


# -- one declaration ---------------------------------------------------------------


def test_the_typed_keywords_are_exactly_the_option_fields() -> None:
    assert frozenset(ToolOptionArgs.__annotations__) == option_names()
    assert frozenset(ToolFlagArgs.__annotations__) < option_names()


@pytest.mark.parametrize(
    "entry", [tool, Tool, Tool.from_function], ids=["tool", "Tool", "from_function"]
)
def test_every_entry_point_takes_the_options_as_keywords(entry: Any) -> None:
    params = inspect.signature(entry).parameters
    assert "options" in params
    assert any(p.kind is p.VAR_KEYWORD for p in params.values())


def test_keywords_and_options_object_build_the_same_tool() -> None:
    def lookup(user: str, sku: str) -> str:
        """Look a SKU up for a user."""
        return sku

    kwargs: dict[str, Any] = {
        "name": "lookup_sku", "description": "Find it.", "read_only": True,
        "requires_approval": True, "timeout_s": 2, "blocking": True, "allowed_callers": ["script"],
        "examples": [{"sku": "A"}], "inject": ["user"], "idempotent": "session",
        "returns": "untrusted",
    }
    assert set(kwargs) == option_names()
    by_kw = Tool.from_function(lookup, **kwargs)
    by_obj = Tool.from_function(lookup, options=ToolOptions(**kwargs))
    decorated = tool(**kwargs)(lookup)
    for built in (by_obj, decorated):
        assert built.options == by_kw.options
        assert built.parameters_schema == by_kw.parameters_schema
        assert built.host_supplied == by_kw.host_supplied
    assert by_kw.options.timeout_s == 2.0
    assert by_kw.blocking and by_kw.options.blocking
    assert by_kw.options.allowed_callers == frozenset({"script"})


def test_keywords_override_a_given_options_object() -> None:
    def ping() -> str:
        return "pong"

    base = ToolOptions(read_only=True, timeout_s=5)
    built = Tool(ping, options=base, timeout_s=1)
    assert built.read_only and built.timeout_s == 1.0


def test_an_unknown_option_is_refused() -> None:
    def ping() -> str:
        return "pong"

    with pytest.raises(TypeError):
        Tool(ping, retries=3)  # type: ignore[call-arg]


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolOptions().read_only = True  # type: ignore[misc]


def test_schema_tools_take_the_shared_flags_and_refuse_signature_options() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    built = Tool.from_schema(
        lambda **kw: kw, name="search", description="Search.", input_schema=schema,
        read_only=True, allowed_callers=["direct"], examples=[{"q": "x"}],
    )
    assert built.read_only and built.allowed_callers == frozenset({"direct"})
    assert built.examples == ({"q": "x"},)
    with pytest.raises(ToolDefinitionError, match="idempotent"):
        Tool.from_schema(
            lambda **kw: kw, name="search", description="Search.", input_schema=schema,
            idempotent=True,  # type: ignore[call-arg]
        )


# -- wrappers copy a tool and wrap only its callable --------------------------------


def _charge_tool(calls: list[tuple[str, int]], fail_first: int = 0) -> Tool:
    @tool(inject=["user"], idempotent=True, requires_approval=False, timeout_s=10)
    def charge(amount: int, user: str) -> dict[str, Any]:
        """Charge the current user."""
        calls.append((user, amount))
        if len(calls) <= fail_first:
            raise TransientToolError("upstream hiccup")
        return {"user": user, "amount": amount, "n": len(calls)}

    return charge


def test_resilient_keeps_every_option_and_the_host_needs() -> None:
    original = _charge_tool([])
    wrapped = resilient(original, retry=NO_WAIT)
    assert wrapped is not original
    assert wrapped.options == original.options
    assert wrapped.parameters_schema == original.parameters_schema
    assert "user" not in wrapped.parameters_schema["properties"]
    assert wrapped.host_supplied == original.host_supplied
    assert wrapped.host_supplied is not None and wrapped.host_supplied.idempotency == "run"
    assert original.func is not wrapped.func  # the original is left as it was


def test_resilient_keeps_injection_and_idempotency_on_every_backend(make_runtime: Any) -> None:
    calls: list[tuple[str, int]] = []
    charge = resilient(_charge_tool(calls, fail_first=1), retry=NO_WAIT)
    rt = make_runtime([charge])
    result = rt.run("a = charge(5)\nb = charge(5)\n[a, b]", context={"user": "ana"})
    assert result.ok, result.error
    first = {"user": "ana", "amount": 5, "n": 2}
    assert result.value == [first, first]  # the repeat returned the first result
    assert calls == [("ana", 5), ("ana", 5)]  # one failed attempt, one retry, no repeat


def test_the_model_cannot_set_an_injected_parameter_of_a_wrapped_tool(make_runtime: Any) -> None:
    calls: list[tuple[str, int]] = []
    charge = resilient(_charge_tool(calls), retry=NO_WAIT)
    rt = make_runtime([charge])
    result = rt.run("charge(5, user='mallory')", context={"user": "ana"})
    assert not result.ok
    assert result.error is not None and result.error.type == "tool_error"
    assert result.error.details["tool_error_type"] == "invalid_arguments"
    assert "unexpected argument 'user'" in result.error.message
    assert calls == []


def _schema_tool(sent: list[dict[str, Any]]) -> Tool:
    def remote(**kwargs: Any) -> dict[str, Any]:
        sent.append(kwargs)
        return {"found": kwargs["user-id"]}

    return Tool.from_schema(
        remote, name="find_user", description="Find a user.",
        input_schema={
            "type": "object",
            "properties": {"user-id": {"type": "integer", "minimum": 1}},
            "required": ["user-id"],
        },
        read_only=True,
    )


def test_resilient_keeps_the_schema_of_a_schema_tool(make_runtime: Any) -> None:
    sent: list[dict[str, Any]] = []
    original = _schema_tool(sent)
    wrapped = resilient(original, retry=NO_WAIT)
    assert wrapped.parameters_schema == original.parameters_schema
    assert wrapped.read_only
    rt = make_runtime([wrapped])
    good = rt.run("find_user(user_id=7)")
    assert good.ok, good.error
    assert good.value == {"found": 7}
    bad = rt.run("find_user(user_id=0)")
    assert bad.error is not None and bad.error.details["tool_error_type"] == "invalid_arguments"
    assert sent == [{"user-id": 7}]


def test_resilient_retries_the_commit_of_a_two_phase_pair() -> None:
    done: list[dict[str, Any]] = []

    def pay(amount: int) -> dict[str, Any]:
        """Plan a payment."""
        return {"amount": amount}

    def do_pay(plan: dict[str, Any]) -> str:
        done.append(plan)
        if len(done) == 1:
            raise TransientToolError("flaky")
        return "paid"

    pair = two_phase(pay, do_pay)
    commit = resilient(pair.commit, retry=NO_WAIT)
    assert commit.host_supplied == pair.commit.host_supplied
    assert commit.requires_approval
    assert commit.apply_plan({"amount": 3}) == "paid"  # type: ignore[attr-defined]
    assert len(done) == 2


def test_wrap_callable_changes_only_what_runs() -> None:
    calls: list[tuple[str, int]] = []
    original = _charge_tool(calls)
    seen: list[dict[str, Any]] = []

    def trace(func: Any) -> Any:
        def traced(**kwargs: Any) -> Any:
            seen.append(kwargs)
            return func(**kwargs)

        return traced

    traced = original.wrap_callable(trace)
    assert traced.call_bound({"amount": 1, "user": "u"})["amount"] == 1
    assert seen == [{"amount": 1, "user": "u"}]
    assert traced.name == original.name and traced.options == original.options
