"""smolagents ``Tool`` objects as toolscript tools.

A smolagents tool declares its arguments in ``inputs`` (``{name: {"type",
"description", "nullable"}}``) and its result in ``output_type`` (or
``output_schema``). Each input becomes a JSON Schema property (``"any"`` is
any JSON value; ``"nullable"`` inputs are optional and may be null, with the
default of ``forward``), ``output_schema`` or ``output_type`` the result's
schema. A call runs ``tool(**arguments)``, so ``setup()`` runs on the first
call as in smolagents. Inputs of type ``image`` or ``audio`` are not JSON data
and are refused when the tool is converted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolscript.errors import ToolDefinitionError

from .base import FrameworkTool, signature_defaults, tool_name

__all__ = ["from_smolagents", "input_schema", "output_schema"]

_JSON_TYPES = frozenset({"string", "boolean", "integer", "number", "array", "object", "null"})
_NOT_JSON = frozenset({"image", "audio"})


def _type_schema(tool: str, where: str, kind: Any) -> dict[str, Any]:
    kinds = kind if isinstance(kind, list) else [kind]
    if "any" in kinds:
        return {}
    refused = [k for k in kinds if k in _NOT_JSON]
    if refused:
        raise ToolDefinitionError(
            f"smolagents tool {tool!r}: {where} has type {refused[0]!r}, which is not JSON "
            "data; toolscript tools take and return JSON (pass a path or URL as a string)"
        )
    unknown = [k for k in kinds if k not in _JSON_TYPES]
    if unknown:
        raise ToolDefinitionError(
            f"smolagents tool {tool!r}: {where} has the unknown type {unknown[0]!r}"
        )
    return {"type": kinds[0] if len(kinds) == 1 else list(kinds)}


def input_schema(tool: Any) -> dict[str, Any]:
    """The JSON Schema of a smolagents tool's ``inputs``."""
    name = getattr(tool, "name", "?")
    inputs = getattr(tool, "inputs", None)
    if not isinstance(inputs, Mapping):
        raise ToolDefinitionError(f"smolagents tool {name!r}: 'inputs' must be a dict")
    defaults = signature_defaults(getattr(tool, "forward", None))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, spec in inputs.items():
        spec = spec if isinstance(spec, Mapping) else {}
        schema = _type_schema(name, f"input {arg!r}", spec.get("type", "any"))
        nullable = bool(spec.get("nullable"))
        if nullable and "type" in schema:
            kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            schema["type"] = [*kinds, "null"] if "null" not in kinds else kinds
        if spec.get("description"):
            schema["description"] = str(spec["description"])
        if nullable:
            if arg in defaults:
                schema["default"] = defaults[arg]
        else:
            required.append(arg)
        properties[str(arg)] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def output_schema(tool: Any) -> dict[str, Any] | None:
    """The result's JSON Schema: ``output_schema``, else from ``output_type``
    (None for ``"any"``)."""
    schema = getattr(tool, "output_schema", None)
    if isinstance(schema, Mapping):
        return dict(schema)
    kind = getattr(tool, "output_type", "any")
    return _type_schema(getattr(tool, "name", "?"), "the output", kind) or None


def from_smolagents(tool: Any) -> FrameworkTool:
    """A toolscript tool that calls the smolagents ``Tool`` ``tool``.

    Raises:
        ToolDefinitionError: an input or the output is not JSON data, or the
            tool lacks a name or ``inputs``.
    """
    name = tool_name("smolagents", getattr(tool, "name", None))

    def invoke(args: dict[str, Any], deps: Any) -> Any:
        return tool(**args)

    return FrameworkTool(
        invoke,
        framework="smolagents",
        source=tool,
        name=name,
        description=str(getattr(tool, "description", "") or "").strip(),
        input_schema=input_schema(tool),
        output_schema=output_schema(tool),
    )
