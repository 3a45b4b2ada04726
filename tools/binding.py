"""Bound arguments: what a tool call will run with, in one value for everyone.

:meth:`Tool.bind <toolscript.tools.Tool.bind>` validates the arguments of a
call, converts them (Enum members, dataclasses, pydantic models with their
validators, normalisation and nested defaults), fills in the defaults of the
parameters left out, and returns a :class:`BoundArgs`:

* ``values``: exactly what the function will be called with;
* ``shown``: the same values as JSON data (:func:`render`), in parameter
  order: what the approval hook, a policy, a plan, the audit record and the
  idempotency fingerprint see.

Approval comes after binding, and the tool is called with ``values`` as they
are (:meth:`Tool.call_bound <toolscript.tools.Tool.call_bound>`): no second
conversion runs between what was approved and what runs.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .validation import Problem

__all__ = ["BoundArgs", "convert_argument", "ordered_copy", "render"]

_MAX_DEPTH = 200


class BoundArgs:
    """The final arguments of one call (see the module docstring).

    Attributes:
        values: keyword arguments for the function (converted, defaults filled).
        shown: ``values`` as JSON data, in parameter order.
        direct: True when ``values`` are the received JSON arguments unchanged
            and the tool needs no positional call, so ``tool.invoke(values)``
            calls the function with exactly ``values``.
    """

    __slots__ = ("direct", "shown", "values")

    def __init__(self, values: dict[str, Any], shown: dict[str, Any], direct: bool) -> None:
        self.values = values
        self.shown = shown
        self.direct = direct

    def __repr__(self) -> str:
        return f"BoundArgs({self.shown!r})"


def convert_argument(
    name: str, convert: Callable[[Any], Any], value: Any
) -> tuple[Any, list[Problem]]:
    """Run one argument's converter; ``(converted, [])`` or ``(None, problems)``.

    A converter that raises (a pydantic validator, a dataclass
    ``__post_init__``) makes the argument invalid: the call is refused before
    approval, with the converter's message.
    """
    module = sys.modules.get("pydantic")
    error_type = getattr(module, "ValidationError", None)
    try:
        return convert(value), []
    except Exception as exc:
        if error_type is not None and isinstance(exc, error_type):
            problems = []
            for error in exc.errors():
                loc = [p for p in error.get("loc", ()) if p != "__root__"]
                path = name
                for part in loc:
                    path += f"[{part}]" if isinstance(part, int) else f".{part}"
                problems.append(Problem(path, str(error.get("msg", "invalid value"))))
            return None, problems or [Problem(name, str(exc))]
        return None, [Problem(name, f"{type(exc).__name__}: {exc}")]


def _pydantic_base() -> type | None:
    module = sys.modules.get("pydantic")
    base = getattr(module, "BaseModel", None) if module is not None else None
    return base if isinstance(base, type) else None


def render(value: Any) -> Any:
    """``value`` as JSON data, showing everything the tool will receive.

    Pydantic models are rendered field by field under their aliases (not via
    ``model_dump``: excluded fields and custom serialisers would hide what the
    tool gets), dataclasses field by field, Enum members as their values,
    tuples as lists, sets as sorted lists, ``Decimal`` as its exact string,
    dates as ISO 8601; anything else as ``"<Type: repr>"``.
    """
    return _render(value, _pydantic_base(), 0)


def _render(value: Any, base: type | None, depth: int) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if depth > _MAX_DEPTH:
        return "<nested too deeply to show>"
    depth += 1
    if isinstance(value, enum.Enum):
        return _render(value.value, base, depth)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, (str, int, float)):  # subclasses
        return (str if isinstance(value, str) else float if isinstance(value, float) else int)(
            value
        )
    if base is not None and isinstance(value, base):
        return _render_model(value, base, depth)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _render(getattr(value, f.name), base, depth)
                for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {_key(k): _render(v, base, depth) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_render(v, base, depth) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_render(v, base, depth) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, uuid.UUID):
        return str(value)
    text = repr(value)
    return f"<{type(value).__qualname__}: {text if len(text) <= 200 else text[:197] + '...'}>"


def _render_model(value: Any, base: type, depth: int) -> Any:
    root_model = getattr(sys.modules.get("pydantic"), "RootModel", None)
    if isinstance(root_model, type) and isinstance(value, root_model):
        return _render(getattr(value, "root", None), base, depth)
    fields: Mapping[str, Any] = type(value).model_fields
    out: dict[str, Any] = {}
    for name, info in fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        out[alias or name] = _render(getattr(value, name, None), base, depth)
    extra = getattr(value, "__pydantic_extra__", None)
    if isinstance(extra, Mapping):
        for key, item in extra.items():
            out[_key(key)] = _render(item, base, depth)
    return out


def _key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if isinstance(key, str):
        return str(key)
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return str(key)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def ordered_copy(shown: Mapping[str, Any], order: Iterable[str]) -> dict[str, Any]:
    """A deep copy of ``shown`` (JSON data) with its keys in parameter ``order``
    (unknown keys last): what an approval hook is handed, so that nothing it
    does to its copy changes what runs or what is recorded."""
    out = {name: _copy(shown[name]) for name in order if name in shown}
    if len(out) != len(shown):
        for name, value in shown.items():
            if name not in out:
                out[name] = _copy(value)
    return out
