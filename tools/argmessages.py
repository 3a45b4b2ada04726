"""The wording of argument problems: what was expected, what came, what to send.

Validation never coerces (``'50'`` is not ``50``, ``5.0`` is not an integer,
an unknown argument is an error), so each message says exactly what to send
instead, in the script's own syntax, and a model can fix the call in one turn::

    argument 'amount': expected an integer, got the string '50' — write 50
    argument 'when': expected a string, got the integer 20260824 — write '20260824'
    argument 'mode': expected one of 'fast', 'slow', got 'FAST' — write 'fast'
    unexpected argument 'amout': did you mean 'amount'? (accepted arguments: amount, note)

A fix is suggested only when it is certain (the same value in the expected
type, or a close name); otherwise the message says what is expected.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "describe_value",
    "enum_kind",
    "enum_reason",
    "expected",
    "missing_reason",
    "type_reason",
    "unexpected_reason",
]

_LIMIT = 60
_TYPE_NOUNS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean (True or False)",
    "null": "None",
    "object": "a dict",
    "array": "a list",
}
_INTEGER_TEXT = re.compile(r"[+-]?\d{1,30}")
_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_TRUE_TEXT = frozenset({"true", "yes", "1"})
_FALSE_TEXT = frozenset({"false", "no", "0"})


def _short(value: Any, limit: int = _LIMIT) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_value(value: Any) -> str:
    """``the string '50'``, ``the float 5.0``, ``None``, ``a list of 3 items``..."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, int):
        return f"the integer {_short(value)}"
    if isinstance(value, float):
        return f"the float {_short(value)}"
    if isinstance(value, str):
        return f"the string {_short(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "a dict"
    return f"a {type(value).__name__}"


def expected(types: str | Sequence[str]) -> str:
    """``'integer'`` -> ``an integer``; ``['string', 'null']`` -> ``a string or None``."""
    names = [types] if isinstance(types, str) else list(types)
    nouns = [_TYPE_NOUNS.get(n, repr(n)) for n in names]
    return nouns[0] if len(nouns) == 1 else ", ".join(nouns[:-1]) + " or " + nouns[-1]


def type_reason(value: Any, types: str | Sequence[str]) -> str:
    """A value of the wrong JSON type: what was expected, what came, what to send."""
    names = [types] if isinstance(types, str) else list(types)
    text = f"expected {expected(names)}, got {describe_value(value)}"
    advice = _advice(value, names)
    if advice:
        return f"{text}{advice}"
    for name in names:
        fix = _convert(value, name)
        if fix is not None and len(fix) > _LIMIT:
            return f"{text} — write the same value as {expected(name)}"
        if fix is not None:
            return f"{text} — write {fix}"
    if "array" in names and value is not None and not isinstance(value, (list, dict)):
        return f"{text} — for one item, write [{_short(value)}]"
    return text


def _convert(value: Any, kind: str) -> str | None:
    """``value`` written as the JSON type ``kind`` (Python syntax), if that is lossless."""
    if kind == "integer":
        if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
            return repr(int(value.strip()))
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return repr(int(value))
        return None
    if kind == "number":
        if isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
            text = value.strip()
            if _INTEGER_TEXT.fullmatch(text):
                return repr(int(text))
            number = float(text)
            return repr(number) if math.isfinite(number) else None
        return None
    if kind == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return repr(str(value))
        return None
    if kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in _TRUE_TEXT | _FALSE_TEXT:
            return repr(value.strip().lower() in _TRUE_TEXT)
        if type(value) is int and value in (0, 1):
            return repr(bool(value))
        return None
    return None


def _advice(value: Any, names: Sequence[str]) -> str:
    """What to do when no lossless fix exists."""
    if (
        "integer" in names
        and isinstance(value, float)
        and math.isfinite(value)
        and not value.is_integer()
    ):
        return " — an integer has no fraction: send a whole number"
    if isinstance(value, str) and ("object" in names or "array" in names):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        for kind, python_type, noun in (("object", dict, "dict"), ("array", list, "list")):
            if kind in names and isinstance(decoded, python_type):
                return f" — write the {noun} itself, not its JSON text"
    return ""


def enum_reason(value: Any, allowed: Sequence[Any]) -> str:
    """A value outside an enum: the accepted values and, if one is close, which."""
    shown = ", ".join(_short(v, 40) for v in allowed[:20])
    if len(allowed) > 20:
        shown += f", ... ({len(allowed)} values)"
    text = f"expected one of {shown}, got {_short(value)}"
    match = _closest_value(value, allowed)
    return f"{text} — write {_short(match)}" if match is not None else text


def _closest_value(value: Any, allowed: Sequence[Any]) -> Any:
    """The allowed value ``value`` most likely meant (case, spacing, type), if any."""
    for candidate in allowed:  # the same text or number in another type or case
        if (
            isinstance(candidate, str)
            and isinstance(value, (str, int, float))
            and not isinstance(value, bool)
            and candidate.strip().lower() == str(value).strip().lower()
        ):
            return candidate
        if (
            isinstance(candidate, (int, float))
            and not isinstance(candidate, bool)
            and isinstance(value, str)
            and value.strip() == str(candidate)
        ):
            return candidate
    if isinstance(value, str):
        texts = {str(c).lower(): c for c in allowed if isinstance(c, str)}
        close = difflib.get_close_matches(value.lower(), list(texts), n=1, cutoff=0.75)
        if close:
            return texts[close[0]]
    return None


def unexpected_reason(name: str, path: str, known: Iterable[str], noun: str) -> str:
    """An unknown argument or field: the nearest accepted name and all accepted names."""
    accepted = sorted(known)
    text = f"unexpected {noun} '{path}'"
    if not accepted:
        return f"{text}: no {noun}s are accepted"
    close = _nearest_name(name, accepted)
    listing = f"accepted {noun}s: {', '.join(accepted)}"
    if close:
        return f"{text}: did you mean '{close[0]}'? ({listing})"
    return f"{text} ({listing})"


def _nearest_name(name: str, accepted: Sequence[str]) -> list[str]:
    """The accepted name ``name`` most likely meant: similar spelling, other case or
    separators, or one a prefix of the other (``zip`` -> ``zip_code``)."""
    close = difflib.get_close_matches(name, accepted, n=1)
    if close:
        return close
    key = name.lower().replace("-", "").replace("_", "")
    if not key:
        return []
    for candidate in accepted:
        other = candidate.lower().replace("-", "").replace("_", "")
        if other == key:
            return [candidate]
    prefixed = [a for a in accepted if a.lower().startswith(name.lower())
                or name.lower().startswith(a.lower())]
    return prefixed[:1] if len(prefixed) == 1 else []


def missing_reason(path: str, noun: str, schema: Any, defs: Mapping[str, Any]) -> str:
    """A required argument or field that is absent, with the kind of value it takes."""
    text = f"missing required {noun} '{path}'"
    kind = _schema_kind(schema, defs)
    return f"{text} ({kind})" if kind else text


def _schema_kind(schema: Any, defs: Mapping[str, Any]) -> str:
    """A few words for the value a schema accepts, or ""."""
    if not isinstance(schema, dict):
        return ""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name)
        if isinstance(target, dict) and "enum" in target:
            return enum_kind(target["enum"])
        is_object = isinstance(target, dict) and target.get("type") == "object"
        return f"a {name} dict" if is_object else ""
    if "enum" in schema and isinstance(schema["enum"], list):
        return enum_kind(schema["enum"])
    if "const" in schema:
        return f"always {_short(schema['const'])}"
    kind = schema.get("type")
    if isinstance(kind, str) or (isinstance(kind, list) and all(isinstance(k, str) for k in kind)):
        return expected(kind)
    return ""


def enum_kind(values: Sequence[Any]) -> str:
    """``one of 'a', 'b'`` for a short list of enum values."""
    shown = ", ".join(_short(v, 40) for v in values[:10])
    return f"one of {shown}" + (", ..." if len(values) > 10 else "")
