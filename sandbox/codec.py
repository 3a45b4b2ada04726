"""Copy values across the sandbox boundary as plain JSON data.

Whatever crosses between host and sandbox is JSON: ``dict`` with string keys,
``list``, ``str``, ``int`` (of at most 4,300 digits: what ``json`` can encode
under the interpreter's default limit), finite ``float``, ``bool`` and ``None``. Process
backends get this for free from the encoder; the inprocess backend calls
:func:`to_json_data` so that no host object (and no sandbox object with
overridden methods) ever crosses by reference.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

_encoder = json.JSONEncoder(allow_nan=False, check_circular=True)


class NotJSONData(ValueError):
    """Internal: the value cannot be represented as JSON data."""


_SCALARS = frozenset({str, bool, type(None)})
_MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_INT_BOUND = 10**_MAX_DIGITS
_INT_FLOOR = -_INT_BOUND
"""Integers must stay strictly between these (at most ``_MAX_DIGITS`` digits)."""


def _fast_copy(value: Any, depth: int) -> Any:
    # Exact types only: a subclass could run script code when copied. Scalars
    # are handled inline because most tool arguments and results are flat.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        if _INT_FLOOR < value < _INT_BOUND:
            return value
        raise NotJSONData(f"an integer of more than {_MAX_DIGITS} digits cannot be JSON data")
    if kind is float:
        if math.isfinite(value):
            return value
        raise NotJSONData(f"{value!r} is not a finite number")
    if depth > 100:
        raise NotJSONData("value is nested more than 100 levels deep")
    if kind is dict:
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _SlowPath
            copy[key] = (item if (t := type(item)) in _SCALARS
                         or (t is int and _INT_FLOOR < item < _INT_BOUND)
                         else _fast_copy(item, depth + 1))
        return copy
    if kind is list or kind is tuple:
        return [item if (t := type(item)) in _SCALARS
                or (t is int and _INT_FLOOR < item < _INT_BOUND)
                else _fast_copy(item, depth + 1) for item in value]
    raise _SlowPath


class _SlowPath(Exception):
    pass


def _describe(value: Any) -> str:
    return type(value).__name__


def to_json_data(value: Any) -> Any:
    """Return a deep copy of ``value`` made only of JSON types.

    Tuples become lists and non-string dict keys become strings, exactly as a
    JSON round trip would do. Anything else raises :class:`NotJSONData` with a
    message naming the offending type.
    """
    try:
        return _fast_copy(value, 0)
    except _SlowPath:
        pass
    try:
        text = _encoder.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        message = str(exc)
        if isinstance(exc, TypeError) and "not JSON serializable" in message:
            message = message.replace("Object of type", "a value of type")
        raise NotJSONData(message) from None
    # The same depth bound as the fast path: nothing deeper ever reaches the wire.
    result: Any = _fast_copy(json.loads(text), 0)
    return result


def json_size(value: Any) -> int:
    """Length in bytes of ``value`` encoded as compact JSON (value must be JSON data)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
