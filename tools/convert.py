"""Conversions across the JSON boundary.

*In* (arguments): validated JSON data -> the Python values a tool's annotations
ask for: Enum members, dataclass instances (recursively), tuples, sets.
:func:`build_converter` returns ``None`` when the JSON value is already right
(the common case), so plain tools pay nothing.

*Out* (results): :func:`json_default` (a ``json.dumps(default=...)`` hook) and
:func:`to_jsonable` turn dataclasses, Enums, tuples, sets and dates into JSON
data.
"""

from __future__ import annotations

import collections.abc as cabc
import contextlib
import dataclasses
import datetime as _dt
import enum
import types
import typing
import uuid
from collections.abc import Callable
from typing import Any

from . import pydantic_models
from .hosttypes import host_json
from .schema import (
    SchemaBuilder,
    is_typeddict,
    resolve_hints,
    unwrap_annotated,
)

__all__ = ["Converter", "build_converter", "json_default", "to_jsonable"]

Converter = Callable[[Any], Any]
"""Turns one validated JSON value into the Python value a tool expects."""

_SETS: tuple[Any, ...] = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPPINGS: tuple[Any, ...] = (dict, cabc.Mapping, cabc.MutableMapping)


def build_converter(tp: Any) -> Converter | None:
    """A converter for values of annotation ``tp``, or None if none is needed.

    ``tp`` must already have passed :class:`~toolscript.tools.schema.SchemaBuilder`.
    """
    return _ConverterBuilder().build(tp)


class _ConverterBuilder:
    """Builds converters, memoising named types so recursive types terminate."""

    def __init__(self) -> None:
        self._memo: dict[Any, list[Converter | None]] = {}

    def build(self, tp: Any) -> Converter | None:
        tp, _ = unwrap_annotated(tp)
        supertype = getattr(tp, "__supertype__", None)
        if supertype is not None:
            return self.build(supertype)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Literal:
            return _literal_converter(args)
        if origin is typing.Union or origin is types.UnionType:
            return self._union(args)
        if origin is tuple:
            return self._tuple(args)
        if origin in _SETS or tp in (set, frozenset):
            elem = self.build(args[0]) if args else None
            factory: Callable[[Any], Any] = frozenset if frozenset in (origin, tp) else set
            if elem is None:
                return factory
            return lambda v: factory(elem(x) for x in v)
        if tp is tuple:
            return tuple
        if origin is not None and args:
            if origin in _MAPPINGS:
                value = self.build(args[1])
                if value is None:
                    return None
                return lambda v: {k: value(x) for k, x in v.items()}
            if len(args) == 1:  # list and other sequences
                item = self.build(args[0])
                if item is None:
                    return None
                return lambda v: [item(x) for x in v]
            return None
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return tp
            if dataclasses.is_dataclass(tp) or is_typeddict(tp):
                return self._named(tp)
            if pydantic_models.is_model(tp):
                validate: Converter = tp.model_validate  # type: ignore[attr-defined]
                return validate
        return None

    def _named(self, tp: type) -> Converter | None:
        known = self._memo.get(tp)
        if known is not None:
            # Recursive reference: convert through the cell filled in below.
            return lambda v: known[0](v) if known[0] is not None else v
        cell: list[Converter | None] = [None]
        self._memo[tp] = cell
        hints = resolve_hints(tp, {tp.__name__: tp})
        if dataclasses.is_dataclass(tp):
            names = [f.name for f in dataclasses.fields(tp) if f.init]
        else:
            names = list(hints)
        fields = {name: self.build(hints[name]) for name in names if name in hints}
        active = {name: conv for name, conv in fields.items() if conv is not None}
        conv: Converter | None
        if dataclasses.is_dataclass(tp):
            cls = tp

            def conv(v: Any) -> Any:
                kwargs = {k: (active[k](x) if k in active else x) for k, x in v.items()}
                return cls(**kwargs)

        elif active:

            def conv(v: Any) -> Any:
                return {k: (active[k](x) if k in active else x) for k, x in v.items()}

        else:
            conv = None
        cell[0] = conv
        return conv

    def _tuple(self, args: tuple[Any, ...]) -> Converter:
        if not args or args == ((),):
            return tuple
        if len(args) == 2 and args[1] is Ellipsis:
            item = self.build(args[0])
            if item is None:
                return tuple
            return lambda v: tuple(item(x) for x in v)
        convs = [self.build(a) for a in args]
        if all(c is None for c in convs):
            return tuple
        return lambda v: tuple(c(x) if c else x for c, x in zip(convs, v, strict=False))

    def _union(self, args: tuple[Any, ...]) -> Converter | None:
        branches: list[tuple[Callable[[Any], bool], Converter | None]] = []
        for arg in args:
            conv = self.build(arg)
            branches.append((_matcher(arg), conv))
        if all(conv is None for _, conv in branches):
            return None

        def convert(v: Any) -> Any:
            for matches, conv in branches:
                if matches(v):
                    return conv(v) if conv is not None else v
            return v

        return convert


def _matcher(tp: Any) -> Callable[[Any], bool]:
    """A predicate: does a JSON value validate against ``tp``'s schema?"""
    from .validation import make_jsonschema_validator

    builder = SchemaBuilder()
    schema = builder.attach_defs(builder.schema(tp))
    is_valid: Callable[[Any], bool] = make_jsonschema_validator(schema).is_valid
    return is_valid


def _literal_converter(args: tuple[Any, ...]) -> Converter | None:
    members = {(type(a.value), a.value): a for a in args if isinstance(a, enum.Enum)}
    if not members:
        return None
    return lambda v: members.get((type(v), v), v)


def json_default(obj: Any) -> Any:
    """``json.dumps(default=json_default)`` hook for common non-JSON results.

    Handles dataclass instances, pydantic models, Enum members, tuples/sets, dates and times
    (ISO 8601) and UUIDs; raises ``TypeError`` for anything else.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if pydantic_models.is_instance(obj):
        return pydantic_models.model_dump(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (set, frozenset)):
        items = list(obj)
        with contextlib.suppress(TypeError):
            items.sort()
        return items
    if isinstance(obj, tuple):
        return list(obj)
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    text = host_json(obj)  # Decimal, timedelta, paths, IP addresses...: as pydantic sends them
    if text is not None:
        return text
    raise TypeError(f"{type(obj).__qualname__} is not JSON data")


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (dict/list/str/int/float/bool/None).

    Raises:
        TypeError: ``value`` contains something with no JSON form; the message
            says where (e.g. ``result['rows'][3]``).
    """
    return _to_jsonable(value, "result")


def _to_jsonable(value: Any, where: str) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(k, enum.Enum):
                k = k.value
            if not isinstance(k, str):
                # The same key conversions json.dumps makes.
                if k is None or isinstance(k, bool):
                    k = {None: "null", True: "true", False: "false"}[k]
                elif isinstance(k, (int, float)):
                    k = str(k)
                else:
                    raise TypeError(f"{where}: key {k!r} is not a string")
            out[k] = _to_jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_to_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, enum.Enum):
        return _to_jsonable(value.value, where)
    if isinstance(value, (str, int, float)):  # subclasses
        return (str if isinstance(value, str) else float if isinstance(value, float) else int)(
            value
        )
    try:
        converted = json_default(value)
    except TypeError:
        raise TypeError(f"{where}: {type(value).__qualname__} is not JSON data") from None
    return _to_jsonable(converted, where)
