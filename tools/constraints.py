r"""Value constraints in ``Annotated`` metadata -> JSON Schema keywords.

Three spellings are understood, all turning into the same draft 2020-12
keywords (so the schema the model sees, the compiled fast path and
``jsonschema`` validation agree)::

    from typing import Annotated
    from toolscript.tools import Field

    limit: Annotated[int, Field(ge=1, le=100, description="Rows per page")]
    sku: Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$")]

    import annotated_types as at                 # if installed
    limit: Annotated[int, at.Ge(1), at.Le(100)]

    import pydantic                              # if installed
    limit: Annotated[int, pydantic.Field(ge=1, le=100)]

A constraint that cannot apply to the annotated type (``ge`` on a string, a
``pattern`` on an int) is a :class:`~toolscript.errors.SchemaError` at
definition time, not a constraint that is silently never checked.  Only
``format`` values that the installed ``jsonschema`` really checks are
accepted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

import jsonschema

__all__ = [
    "CHECKED_FORMATS",
    "ConstraintError",
    "Field",
    "constraint_keywords",
    "describe_constraints",
    "json_types",
    "metadata_description",
]

JSONSchema = dict[str, Any]

CHECKED_FORMATS: frozenset[str] = frozenset(
    jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
)
"""``format`` values the installed ``jsonschema`` checks (depends on extras installed)."""

_NUMERIC = ("integer", "number")
# keyword -> (JSON types it applies to, readable kind)
_APPLIES: dict[str, tuple[tuple[str, ...], str]] = {
    "minimum": (_NUMERIC, "numbers"),
    "maximum": (_NUMERIC, "numbers"),
    "exclusiveMinimum": (_NUMERIC, "numbers"),
    "exclusiveMaximum": (_NUMERIC, "numbers"),
    "multipleOf": (_NUMERIC, "numbers"),
    "minLength": (("string",), "strings"),
    "maxLength": (("string",), "strings"),
    "pattern": (("string",), "strings"),
    "format": (("string",), "strings"),
    "minItems": (("array",), "lists"),
    "maxItems": (("array",), "lists"),
    "minProperties": (("object",), "dicts"),
    "maxProperties": (("object",), "dicts"),
}
_LENGTH_KEYWORDS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


@dataclass(frozen=True)
class Field:
    """Constraints and a description for one parameter or field, used in ``Annotated``.

    Attributes:
        description: what the value means (as a string in ``Annotated`` would).
        ge: minimum, inclusive (``minimum``).
        gt: minimum, exclusive (``exclusiveMinimum``).
        le: maximum, inclusive (``maximum``).
        lt: maximum, exclusive (``exclusiveMaximum``).
        multiple_of: the value must be a multiple of this (``multipleOf``).
        min_length: least length of a string, list or dict.
        max_length: greatest length of a string, list or dict.
        pattern: a regular expression a string must contain a match of
            (``pattern``; anchor it with ``^...$`` to match the whole string).
        format: a JSON Schema format that is really checked (see
            :data:`CHECKED_FORMATS`), e.g. ``"date"``, ``"email"``, ``"uuid"``.
    """

    description: str | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None


class ConstraintError(ValueError):
    """Internal: a constraint is malformed or cannot apply; becomes a SchemaError."""


def metadata_description(item: Any) -> str | None:
    """The description one ``Annotated`` metadata object carries, if any."""
    if isinstance(item, Field):
        return item.description
    if (type(item).__module__ or "").startswith("pydantic"):
        description = getattr(item, "description", None)
        return description if isinstance(description, str) else None
    return None


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConstraintError(f"{name} must be a finite number, got {value!r}")
    return value


def _length(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConstraintError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _collect(item: Any, out: dict[str, Any], texts: list[str]) -> None:
    """Add what one metadata object says to ``out`` (generic keys) and ``texts``."""
    if isinstance(item, Field):
        for f in fields(item):
            value = getattr(item, f.name)
            if value is None:
                continue
            if f.name == "description":
                texts.append(str(value))
            else:
                out[f.name] = value
        return
    module = type(item).__module__ or ""
    name = type(item).__name__
    if module.startswith("annotated_types"):
        _collect_annotated_types(item, name, out)
        return
    if module.startswith("pydantic"):
        description = getattr(item, "description", None)
        if isinstance(description, str) and description.strip():
            texts.append(description)
        for sub in getattr(item, "metadata", None) or ():
            _collect(sub, out, texts)
        pattern = vars(item).get("pattern") if hasattr(item, "__dict__") else None
        if isinstance(pattern, str):
            out["pattern"] = pattern
        elif pattern is not None:
            raise ConstraintError(f"pattern must be a string, got {pattern!r}")


def _collect_annotated_types(item: Any, name: str, out: dict[str, Any]) -> None:
    if name in ("Gt", "Ge", "Lt", "Le", "Interval"):
        for key in ("gt", "ge", "lt", "le"):
            value = getattr(item, key, None)
            if value is not None:
                out[key] = value
    elif name == "MultipleOf":
        out["multiple_of"] = item.multiple_of
    elif name in ("MinLen", "MaxLen", "Len"):
        for key in ("min_length", "max_length"):
            value = getattr(item, key, None)
            if value is not None:
                out[key] = value
    else:
        raise ConstraintError(
            f"annotated_types.{name} has no JSON Schema equivalent; use bounds (Ge/Le/Gt/Lt), "
            "lengths (MinLen/MaxLen/Len), MultipleOf, or toolscript.tools.Field(pattern=...)"
        )


def constraint_keywords(metadata: Iterable[Any], json_types: Iterable[str]) -> JSONSchema:
    """The JSON Schema keywords the ``Annotated`` metadata asks for.

    ``json_types`` are the JSON types the annotated type allows (from its
    schema); a keyword none of them supports raises :class:`ConstraintError`.
    Strings in the metadata are descriptions and are not returned here.
    """
    generic: dict[str, Any] = {}
    texts: list[str] = []
    for item in metadata:
        if not isinstance(item, str):
            _collect(item, generic, texts)
    if not generic:
        return {}
    types = set(json_types)
    out: JSONSchema = {}
    for key, keyword in (
        ("ge", "minimum"),
        ("gt", "exclusiveMinimum"),
        ("le", "maximum"),
        ("lt", "exclusiveMaximum"),
    ):
        if key in generic:
            out[keyword] = _number(key, generic[key])
    if "multiple_of" in generic:
        step = _number("multiple_of", generic["multiple_of"])
        if step <= 0:
            raise ConstraintError(f"multiple_of must be positive, got {step!r}")
        out["multipleOf"] = step
    if "min_length" in generic or "max_length" in generic:
        targets = [t for t in ("string", "array", "object") if t in types]
        if len(targets) != 1:
            raise ConstraintError(
                "min_length/max_length apply to exactly one of str, list or dict; this type "
                f"allows {_kinds(types)}"
            )
        low, high = _LENGTH_KEYWORDS[targets[0]]
        if "min_length" in generic:
            out[low] = _length("min_length", generic["min_length"])
        if "max_length" in generic:
            out[high] = _length("max_length", generic["max_length"])
    if "pattern" in generic:
        pattern = generic["pattern"]
        if not isinstance(pattern, str):
            raise ConstraintError(f"pattern must be a string, got {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConstraintError(
                f"pattern {pattern!r} is not a valid regular expression: {exc}"
            ) from None
        out["pattern"] = pattern
    if "format" in generic:
        fmt = generic["format"]
        if fmt not in CHECKED_FORMATS:
            raise ConstraintError(
                f"format {fmt!r} is not checked by the installed jsonschema; use one of "
                f"{', '.join(sorted(CHECKED_FORMATS))} (or a pattern)"
            )
        out["format"] = fmt
    for keyword in out:
        allowed, kind = _APPLIES[keyword]
        if not types & set(allowed):
            raise ConstraintError(
                f"{keyword} applies to {kind}, but this type allows {_kinds(types)}"
            )
    _check_bounds(out)
    return out


def _check_bounds(out: JSONSchema) -> None:
    low = out.get("minimum", out.get("exclusiveMinimum"))
    high = out.get("maximum", out.get("exclusiveMaximum"))
    if low is not None and high is not None and low > high:
        raise ConstraintError(f"the lower bound {low!r} is above the upper bound {high!r}")
    for low_key, high_key in (
        ("minLength", "maxLength"),
        ("minItems", "maxItems"),
        ("minProperties", "maxProperties"),
    ):
        if low_key in out and high_key in out and out[low_key] > out[high_key]:
            raise ConstraintError(
                f"min_length {out[low_key]} is above max_length {out[high_key]}"
            )


def _kinds(types: set[str]) -> str:
    return ", ".join(sorted(types)) if types else "any JSON value (add a concrete type)"


def json_types(schema: JSONSchema, defs: dict[str, JSONSchema] | None = None) -> set[str]:
    """The JSON types a schema allows (best effort; empty when unknown)."""
    if "$ref" in schema and defs is not None:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1])
        return json_types(target, defs) if target else set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {"number", "integer"} if kind == "number" else {kind}
    if isinstance(kind, list):
        out = {str(k) for k in kind}
        return out | ({"integer"} if "number" in out else set())
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            found: set[str] = set()
            for sub in schema[key]:
                if isinstance(sub, dict):
                    found |= json_types(sub, defs)
            return found
    return set()


def describe_constraints(schema: JSONSchema) -> str:
    """A short human rendering of a schema's constraints, e.g. ``>= 1, <= 100``."""
    parts: list[str] = []
    symbols = (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    )
    for keyword, symbol in symbols:
        if keyword in schema:
            parts.append(f"{symbol} {schema[keyword]!r}")
    if "multipleOf" in schema:
        parts.append(f"multiple of {schema['multipleOf']!r}")
    for low, high, noun in (
        ("minLength", "maxLength", "characters"),
        ("minItems", "maxItems", "items"),
        ("minProperties", "maxProperties", "keys"),
    ):
        if low in schema and high in schema:
            parts.append(f"{schema[low]}-{schema[high]} {noun}")
        elif low in schema:
            parts.append(f"at least {schema[low]} {noun}")
        elif high in schema:
            parts.append(f"at most {schema[high]} {noun}")
    if "pattern" in schema:
        parts.append(f"pattern {schema['pattern']}")
    if "format" in schema:
        parts.append(f"format: {schema['format']}")
    return ", ".join(parts)
