"""``$ref`` in OpenAPI documents: escapes resolve, cycles end, broken references fail loudly."""

from __future__ import annotations

from typing import Any

import pytest
from toolscript.runtime.integrations.openapi import OpenAPISource

from toolscript.errors import ToolDefinitionError


def _document(body_schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Refs", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "addThing",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": body_schema}},
                    },
                    "responses": {"201": {"description": "made"}},
                }
            }
        },
        "components": {"schemas": schemas},
    }


def _only_tool_schema(document: dict[str, Any]) -> dict[str, Any]:
    (tool,) = OpenAPISource(document, base_url="http://127.0.0.1:9").tools()
    return tool.parameters_schema


def test_escaped_pointers_resolve() -> None:
    schemas = {
        "a/b": {"type": "string", "maxLength": 3},
        "x y": {"type": "integer", "minimum": 1},
        "t~n": {"type": "boolean"},
    }
    body = {
        "type": "object",
        "properties": {
            "slash": {"$ref": "#/components/schemas/a~1b"},
            "space": {"$ref": "#/components/schemas/x%20y"},
            "tilde": {"$ref": "#/components/schemas/t~0n"},
        },
    }
    properties = _only_tool_schema(_document(body, schemas))["properties"]
    assert properties["slash"] == {"type": "string", "maxLength": 3}
    assert properties["space"] == {"type": "integer", "minimum": 1}
    assert properties["tilde"] == {"type": "boolean"}


def test_a_recursive_schema_ends_in_an_open_schema() -> None:
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    schema = _only_tool_schema(_document({"$ref": "#/components/schemas/Node"}, {"Node": node}))
    children = schema["properties"]["children"]
    assert children == {"type": "array", "items": {}}


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        ("#/components/schemas/Missing", "points to nothing"),
        ("#/components/schemas/Thing/properties/nope", "points to nothing"),
        ("other.yaml#/components/schemas/Thing", "another document"),
        ("https://example.invalid/schemas/thing.json", "another document"),
    ],
)
def test_a_broken_or_remote_reference_is_refused(ref: str, words: str) -> None:
    thing = {"type": "object", "properties": {"id": {"type": "integer"}}}
    document = _document({"$ref": ref}, {"Thing": thing})
    with pytest.raises(ToolDefinitionError, match=words):
        OpenAPISource(document, base_url="http://127.0.0.1:9").tools()
