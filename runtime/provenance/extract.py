"""``extract(value, schema)``: a quarantined model call (no tools) turns untrusted
text into a typed value. The result is trusted only when the schema is closed
(an enum, a boolean, a bounded number); otherwise it keeps the input's label."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...tools.definition import Tool

Quarantine = Callable[[str, Mapping[str, Any]], Any]
"""The quarantined model: ``(text, schema) -> value`` (no tools, no planner context)."""


def closed(schema: Mapping[str, Any]) -> bool:
    """True if a value of ``schema`` can only be one of a few the user chose:
    an ``enum``/``const``, a boolean, a number with both bounds."""
    if "enum" in schema or "const" in schema:
        return True
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return "minimum" in schema and "maximum" in schema
    return False


def extract_tool(quarantine: Quarantine) -> Tool:
    """The ``extract`` tool to add to a runtime with provenance on; declare it trusted
    (``Provenance(trusted={"extract"})``): the gate then labels its result with its
    arguments' sources, and :func:`closed` schemas drop them (see the guide)."""

    def extract(value: str, schema: dict[str, Any]) -> Any:
        """Turn untrusted text into a value of ``schema`` with a quarantined model call."""
        from jsonschema import validate

        result = quarantine(str(value), schema)
        validate(result, schema)
        return result

    return Tool(extract, read_only=True, returns="trusted")
