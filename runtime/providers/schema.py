"""Pure JSON-Schema transforms the dialects apply to a tool's parameter schema.

* :func:`strict_schema` — the "strict mode" shape (OpenAI structured outputs,
  Anthropic ``strict``): ``additionalProperties: false`` on every object, every
  property required, formerly optional properties made nullable, ``default``
  moved into the description.
* :func:`inline_defs` — replace local ``$ref`` s by their ``$defs`` /
  ``definitions`` targets (endpoints that do not resolve references).
* :func:`drop_nulls_for_optional` — undo the strict transform on the way
  back: a ``null`` for a parameter that was optional means "use the default".
"""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = [
    "StrictSchemaUnsupported",
    "drop_nulls_for_optional",
    "inline_defs",
    "strict_schema",
]

Schema = dict[str, Any]

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_DEFS_KEYS = ("$defs", "definitions")


class StrictSchemaUnsupported(ValueError):
    """Internal: the schema cannot be expressed in strict mode (e.g. ``dict[str, T]``)."""


def strict_schema(schema: Schema) -> Schema:
    """Return the strict-mode version of ``schema`` (the input is not modified)."""
    result: Schema = _strict(copy.deepcopy(schema), path="$")
    return result


def _strict(node: Any, path: str) -> Any:
    if not isinstance(node, dict):
        return node
    if "default" in node:
        default = node.pop("default")
        note = f"(default: {json.dumps(default)})"
        node["description"] = f"{node['description']} {note}" if node.get("description") else note
    for key in _DEFS_KEYS:
        if isinstance(node.get(key), dict):
            node[key] = {k: _strict(v, f"{path}.{key}.{k}") for k, v in node[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [_strict(v, f"{path}.{key}[{i}]") for i, v in enumerate(node[key])]
    if isinstance(node.get("items"), dict):
        node["items"] = _strict(node["items"], path + "[]")
    if _is_object(node):
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            raise StrictSchemaUnsupported(
                f"{path}: an object with free-form keys (additionalProperties schema) "
                "has no strict-mode form"
            )
        properties: dict[str, Any] = node.get("properties") or {}
        required = set(node.get("required") or [])
        node["properties"] = {
            name: _strict(sub, f"{path}.{name}") if name in required
            else _nullable(_strict(sub, f"{path}.{name}"))
            for name, sub in properties.items()
        }
        node["required"] = list(properties)
        node["additionalProperties"] = False
    return node


def _is_object(node: Schema) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or (
        kind is None and "properties" in node
    )


def _nullable(node: Schema) -> Schema:
    kind = node.get("type")
    if "const" not in node and isinstance(kind, (str, list)):
        kinds = [kind] if isinstance(kind, str) else list(kind)
        result = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            result["enum"] = [*node["enum"], None]
        return result
    if isinstance(node.get("anyOf"), list):
        if any(isinstance(s, dict) and s.get("type") == "null" for s in node["anyOf"]):
            return node
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    description = node.get("description")
    inner = {k: v for k, v in node.items() if k != "description"}
    wrapped: Schema = {"anyOf": [inner, {"type": "null"}]}
    if description:
        wrapped["description"] = description
    return wrapped


def inline_defs(schema: Schema) -> Schema:
    """Return ``schema`` with local ``$ref`` s replaced by their definitions.

    Raises:
        ValueError: the schema is recursive (a definition refers to itself),
            which cannot be inlined.
    """
    defs: dict[str, Any] = {}
    for key in _DEFS_KEYS:
        for name, sub in (schema.get(key) or {}).items():
            defs[f"#/{key}/{name}"] = sub

    def resolve(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in defs:
            if ref in stack:
                raise ValueError(f"recursive schema reference {ref} cannot be inlined")
            target = resolve(defs[ref], (*stack, ref))
            siblings = {k: resolve(v, stack) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        return {k: resolve(v, stack) for k, v in node.items() if k not in _DEFS_KEYS}

    result = resolve(schema, ())
    assert isinstance(result, dict)
    return result


def drop_nulls_for_optional(arguments: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """Remove top-level ``null`` arguments for parameters the original schema made optional.

    In strict mode an optional parameter is sent as required-but-nullable; the
    model passes ``null`` to mean "leave it out", so the tool's default applies.
    A parameter whose original schema accepts ``null`` keeps its ``null``.
    """
    required = set(schema.get("required") or [])
    properties: dict[str, Any] = schema.get("properties") or {}
    cleaned = {}
    for name, value in arguments.items():
        optional = name in properties and name not in required
        if value is None and optional and not _accepts_null(properties[name]):
            continue
        cleaned[name] = value
    return cleaned


def _accepts_null(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_accepts_null(s) for s in node.get("anyOf") or node.get("oneOf") or [])
