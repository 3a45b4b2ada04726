"""Pydantic models as parameter and result types, when pydantic is installed.

pydantic is never imported here: a class can only be a ``BaseModel``
subclass if pydantic was already imported by the code that defined it, so
:func:`is_model` looks it up in ``sys.modules``.

* schema: the model's own ``model_json_schema()`` (its ``$defs`` merged into
  the tool's), with ``additionalProperties: false`` on every object whose
  model does not say otherwise: an unknown field name is an error the model
  can fix, not a value silently dropped;
* validation: ``jsonschema`` first (strict types: ``"50"`` is not ``50``),
  then ``Model.model_validate`` (custom validators), whose errors become
  :class:`~toolscript.tools.Problem` objects;
* conversion: the tool receives model instances; results that are models
  are dumped with ``model_dump(mode="json")``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

__all__ = [
    "close_objects",
    "is_model",
    "model_dump",
    "model_fields",
    "model_schema",
    "validation_problems",
]

JSONSchema = dict[str, Any]


def _base_model() -> type | None:
    module = sys.modules.get("pydantic")
    base = getattr(module, "BaseModel", None) if module is not None else None
    return base if isinstance(base, type) else None


def is_model(tp: Any) -> bool:
    """True for pydantic ``BaseModel`` subclasses (never imports pydantic)."""
    base = _base_model()
    return base is not None and isinstance(tp, type) and issubclass(tp, base) and tp is not base


def is_instance(value: Any) -> bool:
    """True for pydantic model instances."""
    base = _base_model()
    return base is not None and isinstance(value, base)


def model_dump(value: Any) -> Any:
    """A model instance as JSON data."""
    return value.model_dump(mode="json")


def model_schema(tp: type) -> tuple[JSONSchema, dict[str, JSONSchema]]:
    """``(schema, defs)``: the model's JSON Schema with its ``$defs`` split off.

    ``schema`` is either the model's object schema or a ``$ref`` into ``defs``
    (recursive models); references use ``#/$defs/NAME``.
    """
    raw: JSONSchema = tp.model_json_schema(ref_template="#/$defs/{model}")  # type: ignore[attr-defined]
    defs = dict(raw.pop("$defs", {}) or {})
    for name in list(defs):
        defs[name] = close_objects(defs[name])
    return close_objects(raw), defs


def close_objects(schema: JSONSchema) -> JSONSchema:
    """``schema`` with ``additionalProperties: false`` where an object says nothing."""
    if (
        schema.get("type") == "object"
        and "properties" in schema
        and "additionalProperties" not in schema
    ):
        return {**schema, "additionalProperties": False}
    return schema


def model_fields(tp: type) -> list[tuple[str, Any, bool, str]]:
    """``(json name, annotation, required, description)`` of each field, for stubs."""
    out: list[tuple[str, Any, bool, str]] = []
    for name, info in tp.model_fields.items():  # type: ignore[attr-defined]
        alias = info.alias or name
        annotation = info.annotation
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]
        out.append((alias, annotation, bool(info.is_required()), info.description or ""))
    return out


def validation_problems(convert: Callable[[Any], Any], value: Any) -> list[tuple[str, str]]:
    """Run a converter that may call ``model_validate``; ``[(path, reason)]`` of its errors."""
    module = sys.modules.get("pydantic")
    error_type = getattr(module, "ValidationError", None)
    if error_type is None:
        convert(value)
        return []
    try:
        convert(value)
    except error_type as exc:
        out = []
        for error in exc.errors():
            loc = [p for p in error.get("loc", ()) if p != "__root__"]
            path = ""
            for part in loc:
                path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
            out.append((path, str(error.get("msg", "invalid value"))))
        return out
    return []
