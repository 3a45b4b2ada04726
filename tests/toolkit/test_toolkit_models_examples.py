"""Pydantic models as parameter types; tool examples in stubs and on the Anthropic wire."""

from __future__ import annotations

import anthropic
import pydantic
import pytest
from fakes.model_server import Call, FakeModelServer, Turn, say
from toolkit_helpers import run_ok
from toolscript.tools import render_stub

from toolscript import Agent, Endpoint, Runtime, tool
from toolscript.errors import ToolDefinitionError


class Address(pydantic.BaseModel):
    """A delivery address."""

    city: str = pydantic.Field(description="City name, capitalised")
    zip_code: str = pydantic.Field(pattern=r"^\d{5}$")

    @pydantic.field_validator("city")
    @classmethod
    def capitalised(cls, value: str) -> str:
        if not value[:1].isupper():
            raise ValueError("city must start with a capital letter")
        return value


class Shipment(pydantic.BaseModel):
    """What was shipped."""

    to: Address
    parcels: int


RECEIVED: list[object] = []


@tool(examples=[{"to": {"city": "Lyon", "zip_code": "69001"}, "parcels": 2}])
def ship(to: Address, parcels: int = 1) -> Shipment:
    """Ship parcels to an address."""
    RECEIVED.append(to)
    return Shipment(to=to, parcels=parcels)


def test_model_schema_is_pydantics_and_closed():
    schema = ship.parameters_schema
    assert schema["properties"]["to"] == {"$ref": "#/$defs/Address"}
    address = schema["$defs"]["Address"]
    assert address["properties"]["zip_code"]["pattern"] == r"^\d{5}$"
    assert address["additionalProperties"] is False  # unknown fields are errors, not dropped
    assert ship.returns_schema is not None and "Shipment" in ship.returns_schema["$defs"]


def test_model_arguments_validated_converted_and_dumped(backend):
    RECEIVED.clear()
    with Runtime([ship], backend=backend) as rt:
        value = run_ok(rt, "ship({'city': 'Lyon', 'zip_code': '69001'}, parcels=3)")
        assert value == {"to": {"city": "Lyon", "zip_code": "69001"}, "parcels": 3}
        assert isinstance(RECEIVED[0], Address)
        code = ("out = []\nfor to in [{'city': 'lyon', 'zip_code': '69001'},\n"
                "           {'city': 'Lyon', 'zip_code': '6900'},\n"
                "           {'city': 'Lyon', 'zip_code': '69001', 'floor': 2}]:\n"
                "    try:\n        ship(to)\n    except ToolArgumentError as e:\n"
                "        out.append(str(e))\nout")
        messages = run_ok(rt, code)
    assert "argument 'to.city': Value error, city must start with a capital letter" in messages[0]
    assert "does not match" in messages[1]
    assert "unexpected field 'to.floor'" in messages[2]
    assert len(RECEIVED) == 1


def test_model_validation_in_classic_calls():
    with Runtime([ship], backend="inprocess") as rt, rt.session() as s:
        record = s.call_tool("ship", {"to": {"city": "paris", "zip_code": "75001"}})
        assert record.error is not None and record.error.type == "invalid_arguments"
        assert "capital letter" in record.error.message
        assert s.call_tool("ship", {"to": {"city": "Paris", "zip_code": "75001"}}).ok


def test_models_render_as_typeddicts_in_stubs():
    stub = render_stub(ship)
    assert "class Address(TypedDict):" in stub
    assert "city: str  # City name, capitalised" in stub
    assert r"zip_code: str  # Pattern ^\d{5}$" in stub
    assert "def ship(to: Address, parcels: int = 1) -> Shipment:" in stub


def test_examples_are_validated_at_registration():
    def lookup(store_id: str, limit: int = 5) -> int:
        return limit

    with pytest.raises(ToolDefinitionError,
                       match=r"examples\[1\].*'limit': expected an integer, got the string '5'"):
        tool(examples=[{"store_id": "a"}, {"store_id": "b", "limit": "5"}])(lookup)
    with pytest.raises(ToolDefinitionError, match="missing required argument 'store_id'"):
        tool(examples=[{}])(lookup)
    with pytest.raises(ToolDefinitionError, match="list of argument dicts"):
        tool(examples={"store_id": "a"})(lookup)  # type: ignore[arg-type]


def test_examples_in_stubs():
    assert "Examples:\n        ship(to={'city': 'Lyon', 'zip_code': '69001'}, parcels=2)" in (
        render_stub(ship)
    )


def test_anthropic_sends_input_examples_with_the_beta_header():
    with FakeModelServer() as server, Runtime([ship], backend="inprocess") as rt:
        server.script(
            Turn(tool_calls=[Call("ship", {"to": {"city": "Lyon", "zip_code": "69001"}})]),
            say("Shipped."),
        )
        client = anthropic.Anthropic(api_key="test", base_url=server.base_url, max_retries=0)
        agent = Agent(rt, provider="anthropic", model="fake", mode="classic",
                      endpoint=Endpoint(client=client))
        assert agent.run("ship one parcel to Lyon").answer == "Shipped."
        body = server.bodies()[0]
        sent = {t["name"]: t for t in body["tools"]}
        assert sent["ship"]["input_examples"] == [
            {"to": {"city": "Lyon", "zip_code": "69001"}, "parcels": 2}
        ]
        assert server.requests[0].headers["anthropic-beta"] == "advanced-tool-use-2025-11-20"
