"""Injected parameters: filled by the host, invisible to the model, impossible to override."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from toolkit_helpers import run_ok
from toolscript.tools import Inject, Injected, Tool, render_stubs

from toolscript import Runtime, tool
from toolscript.errors import ConfigurationError, ToolDefinitionError

SEEN: list[tuple[str, str]] = []


@tool(read_only=True)
def my_orders(status: str, user_id: Injected[str]) -> list[str]:
    """Orders of the current user with a status."""
    SEEN.append((status, user_id))
    return [f"{user_id}:{status}"]


@tool(read_only=True)
def my_invoices(year: int, tenant: Annotated[str, Inject("tenant_id")] = "none") -> str:
    """Invoices of the tenant for a year."""
    return f"{tenant}/{year}"


def _region_report(region: str, user_id: str, api) -> str:  # type: ignore[no-untyped-def]
    """Report for a region (``inject=`` with an unannotated host object)."""
    return f"{region} for {user_id} via {api.name}"


class FakeApi:
    """A host object: injected values need not be JSON."""

    name = "api-client"


region_report = Tool.from_function(_region_report, name="region_report",
                                   inject={"user_id": "user_id", "api": "api"})

TOOLS = [my_orders, my_invoices, region_report]


def _runtime(backend: str, **kwargs: object) -> Runtime:
    return Runtime(TOOLS, backend=backend, **kwargs)  # type: ignore[arg-type]


def test_injected_parameters_are_not_in_schema_or_stub():
    for t in TOOLS:
        assert set(t.parameters_schema["properties"]).isdisjoint({"user_id", "tenant", "api"})
        assert [p.name for p in t.params if p.name in ("user_id", "tenant", "api")] == []
    stubs = render_stubs(TOOLS)
    assert "def my_orders(status: str) -> list[str]:" in stubs
    assert "def my_invoices(year: int) -> str:" in stubs
    assert "def region_report(region: str)" in stubs
    assert "user_id" not in stubs and "tenant:" not in stubs and "api" not in stubs
    assert "user_id" not in json.dumps([t.function_spec() for t in TOOLS])


def test_script_gets_values_from_runtime_and_session_context(backend):
    SEEN.clear()
    with _runtime(backend, context={"user_id": "u1", "tenant_id": "acme", "api": FakeApi()}) as rt:
        assert run_ok(rt, "my_orders('open')") == ["u1:open"]
        assert run_ok(rt, "my_invoices(2026)") == "acme/2026"
        assert run_ok(rt, "region_report('north')") == "north for u1 via api-client"
        assert run_ok(rt, "my_orders('paid')", context={"user_id": "u9"}) == ["u9:paid"]
        with rt.session(context={"user_id": "u2"}) as s:
            both = s.run("parallel(my_orders, [{'status': 'a'}, {'status': 'b'}])")
            assert both.value == [["u2:a"], ["u2:b"]]
    assert sorted(SEEN) == [("a", "u2"), ("b", "u2"), ("open", "u1"), ("paid", "u9")]


def test_default_used_when_context_lacks_the_key(backend):
    with _runtime(backend, context={"user_id": "u1", "api": FakeApi()}) as rt:
        assert run_ok(rt, "my_invoices(2025)") == "none/2025"


@pytest.mark.parametrize(
    "code",
    [
        "my_orders('open', user_id='root')",
        "my_orders('open', **{'user_id': 'root'})",
        "my_orders(**{'status': 'open', 'user_id': 'root'})",
        "my_orders('open', 'root')",
        "parallel(my_orders, [{'status': 'open', 'user_id': 'root'}])",
        "my_invoices(2026, tenant='other')",
        "my_invoices(2026, tenant_id='other')",
    ],
)
def test_a_script_cannot_override_an_injected_value(backend, code):
    SEEN.clear()
    with _runtime(backend, context={"user_id": "u1", "tenant_id": "acme", "api": FakeApi()}) as rt:
        attack = rt.run(f"try:\n    r = {code}\nexcept ToolError as e:\n    r = e.type\nr")
    assert attack.ok, attack.error
    assert attack.value == "invalid_arguments"
    assert SEEN == []  # the tool never ran
    assert all(not c.ok for c in attack.tool_calls)


def test_classic_calls_get_context_and_refuse_overrides():
    SEEN.clear()
    context = {"user_id": "u1", "api": FakeApi()}
    with _runtime("inprocess", context=context) as rt, rt.session(context={"user_id": "u7"}) as s:
        ok = s.call_tool("my_orders", {"status": "open"})
        assert ok.ok and ok.value == ["u7:open"]
        assert ok.args == {"status": "open"}  # the audit record holds the model's args
        attack = s.call_tool("my_orders", '{"status": "open", "user_id": "root"}')
        assert not attack.ok and attack.error is not None
        assert attack.error.type == "invalid_arguments"
        assert "unexpected argument 'user_id'" in attack.error.message
    assert SEEN == [("open", "u7")]


def test_approval_hook_sees_only_the_models_arguments():
    requests = []

    def approve(request):  # type: ignore[no-untyped-def]
        requests.append(request.args)
        return True

    with _runtime("inprocess", context={"user_id": "u1", "api": FakeApi()}, approve=approve) as rt:
        run_ok(rt, "my_orders('open')")
    assert requests == [{"status": "open"}]


def test_missing_context_value_is_a_programmer_error(backend):
    with _runtime(backend) as rt:
        with pytest.raises(ConfigurationError, match="context value 'user_id'"):
            rt.run("my_orders('open')")
        with rt.session() as s, pytest.raises(ConfigurationError, match="user_id"):
            s.call_tool("my_orders", {"status": "open"})


def test_context_value_of_the_wrong_type_is_refused():
    with _runtime("inprocess", context={"user_id": 42}) as rt, pytest.raises(
        ConfigurationError, match="must be str, got int"
    ):
        rt.run("my_orders('open')")


def test_inject_must_name_parameters():
    def f(a: int) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match="inject names"):
        Tool.from_function(f, inject=["nope"])

    def g(a: int, uid: Injected[str], /) -> int:
        return a

    with pytest.raises(ToolDefinitionError, match="positional-only"):
        Tool.from_function(g)
