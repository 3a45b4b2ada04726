"""Tools from a ready JSON Schema whose property names are not identifiers:
what the approver sees translates one to one into what is sent."""

from __future__ import annotations

from typing import Any

import pytest
from toolscript.tools.schematool import SchemaTool
from toolscript.tools.validation import ArgumentError

from toolscript import Runtime

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "amount-cents": {"type": "integer"},
        "amount_cents": {"type": "integer", "description": "a second, real property"},
        "memo-text": {"type": "string"},
    },
    "required": ["to", "amount-cents"],
    "dependentRequired": {"memo-text": ["amount_cents"]},
}


def _tool(sent: list[dict[str, Any]], schema: dict[str, Any] = SCHEMA) -> SchemaTool:
    def remote(**wire: Any) -> dict[str, Any]:
        sent.append(wire)
        return wire

    return SchemaTool(remote, name="transfer", description="Move money.", input_schema=schema)


def test_names_are_a_bijection_and_extra_keys_are_refused(backend_name):
    sent: list[dict[str, Any]] = []
    tool = _tool(sent)
    exposed = tool.parameters_schema
    # 'amount_cents' is taken by the real property, so 'amount-cents' is 'amount_cents_2'.
    assert set(exposed["properties"]) == {"to", "amount_cents_2", "amount_cents", "memo_text"}
    assert exposed["additionalProperties"] is False and "dependentRequired" not in exposed
    seen: list[dict[str, Any]] = []

    def approve(request):
        seen.append(dict(request.args))
        return True

    attacks = [
        "transfer(to='m', amount_cents_2=1, **{'amount-cents': 99})",
        "transfer(to='m', amount_cents_2=1, **{'memo-text': 'x'})",
        "transfer(to='m', amount_cents_2=1, other=2)",
    ]
    with Runtime([tool], backend=backend_name, approve=approve) as rt:
        refused = [rt.run(code) for code in attacks]
        ok = rt.run("transfer(to='b', amount_cents_2=5, amount_cents=7)")
        # The remote schema's own rule on wire names is checked before sending.
        broken = rt.run("transfer(to='b', amount_cents_2=5, memo_text='m')")
    for code, result in zip(attacks, refused, strict=True):
        assert result.error.details["tool_error_type"] == "invalid_arguments", code
    assert "'memo_text'" in refused[1].error.message  # names the spelling to use
    assert ok.ok and ok.value == {"to": "b", "amount-cents": 5, "amount_cents": 7}
    assert seen[0] == {"to": "b", "amount_cents_2": 5, "amount_cents": 7}
    assert not broken.ok and "amount_cents" in broken.error.message
    assert sent == [{"to": "b", "amount-cents": 5, "amount_cents": 7}]


def test_direct_calls_translate_or_refuse():
    sent: list[dict[str, Any]] = []
    tool = _tool(sent)
    with pytest.raises(ArgumentError, match="spelled 'amount_cents_2'"):
        tool.func(to="m", amount_cents_2=1, **{"amount-cents": 2})
    assert tool.to_wire({"to": "m", "amount_cents_2": 1}) == {"to": "m", "amount-cents": 1}
    assert sent == []


def test_open_schemas_without_renames_stay_open():
    sent: list[dict[str, Any]] = []
    tool = _tool(sent, {"type": "object", "properties": {"q": {"type": "string"}}})
    assert "additionalProperties" not in tool.parameters_schema
    with Runtime([tool], backend="inprocess") as rt:
        result = rt.run("transfer(q='x', extra=1)")
    assert result.ok and sent == [{"q": "x", "extra": 1}]
