"""Tools whose JSON Schema is given, not derived: :class:`SchemaTool`.

Tool sources (MCP servers, OpenAPI documents) describe their operations with
a ready JSON Schema, and the function behind them is a proxy that forwards
the arguments dict to the remote side. :class:`SchemaTool` is a
:class:`~toolscript.tools.Tool` built from such a schema: the same
validation (draft 2020-12, strict integers, compiled fast path), the same
stubs (approximate Python annotations from the schema), the same approval
and audit, because the runtime cannot tell it from any other tool.

Property names that are not Python identifiers (``user-id``) are exposed
under an identifier (``user_id``) and translated back before the call. A tool
with such renamed properties takes exactly its exposed names: any other key
(the wire spelling ``user-id`` above all) is an invalid argument, even when
the remote schema allows extra properties, so the arguments the approver
sees translate one to one into what is sent. Constraints of the remote schema
that name properties (``dependentRequired``, ``propertyNames``, ``allOf``, ...)
are checked on the translated arguments just before they are sent.
It lives beside :class:`~toolscript.tools.Tool` because it builds the same
internals from a schema instead of a signature; :meth:`Tool.from_schema`
is the public way in.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, Unpack

from toolscript.errors import SchemaError, ToolDefinitionError

from .asynctools import run_coroutine
from .definition import MISSING, Param, Tool, register_schema_tool
from .options import ToolFlagArgs, ToolOptions
from .validation import ROOT, ArgsValidator, ArgumentError, Problem

__all__ = ["SchemaTool", "annotation_for_schema", "python_identifier"]

_KEPT_WHEN_RENAMED = frozenset(
    {"$schema", "$id", "$defs", "definitions", "title", "description",
     "minProperties", "maxProperties"}
)
"""Root keywords of a remote schema that name no property: kept in the exposed
schema of a tool with renamed properties (the others are checked on the wire)."""

_SCHEMA_OPTIONS = frozenset(ToolFlagArgs.__annotations__)
"""The options a schema tool takes (``inject``/``idempotent`` need a signature)."""

_SCALARS: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


def python_identifier(name: str, taken: set[str] | None = None) -> str:
    """``name`` made a valid, non-keyword Python identifier, unique within ``taken``."""
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident):
        ident += "_"
    base, n = ident, 2
    while taken is not None and ident in taken:
        ident = f"{base}_{n}"
        n += 1
    return ident


def annotation_for_schema(schema: Any, depth: int = 0) -> Any:
    """An approximate Python annotation for a JSON Schema (what a stub shows)."""
    if not isinstance(schema, Mapping) or depth > 4:
        return Any
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        values = tuple(v for v in schema["enum"] if isinstance(v, (str, int, bool)) or v is None)
        if values:
            return Literal[values]
    if "const" in schema and isinstance(schema["const"], (str, int, bool)):
        return Literal[schema["const"]]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            args = tuple(annotation_for_schema(o, depth + 1) for o in options)
            return Any if Any in args else Union[args]  # noqa: UP007
    kind = schema.get("type")
    if isinstance(kind, list):
        args = tuple(annotation_for_schema({**schema, "type": k}, depth + 1) for k in kind)
        return Union[args] if args else Any  # noqa: UP007
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        return list[annotation_for_schema(schema.get("items"), depth + 1)]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    return Any


class SchemaTool(Tool):
    """A tool from a function taking keyword arguments and a ready JSON Schema.

    Args:
        func: called with the validated arguments as keyword arguments, under
            their original (wire) names. An ``async def`` function (or one that
            returns an awaitable) is awaited on the host's loop, as for
            :meth:`Tool.from_function` (see :mod:`~toolscript.tools.asynctools`).
        name: the tool name (a Python identifier, at most 64 characters).
        description: what the tool does, as the model sees it.
        input_schema: JSON Schema of the arguments object (``type: object``).
        output_schema: JSON Schema of the result, if known.
        **options: ``read_only``, ``requires_approval``, ``timeout_s``,
            ``allowed_callers``, ``examples``: as for :class:`Tool` (see
            :class:`~toolscript.tools.options.ToolOptions`).

    Raises:
        ToolDefinitionError: bad name or options (``inject`` and ``idempotent``
            need a signature and are refused here).
        SchemaError: ``input_schema`` is not a valid JSON Schema of an object.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any] | None = None,
        **options: Unpack[ToolFlagArgs],
    ) -> None:
        if not isinstance(input_schema, Mapping):
            raise SchemaError(f"tool {name!r}: the input schema must be a JSON object")
        kind = input_schema.get("type", "object")
        if kind != "object":
            raise SchemaError(
                f"tool {name!r}: the input schema must describe an object, not {kind!r}"
            )
        self._input_schema = dict(input_schema)
        self._output_schema = dict(output_schema) if output_schema is not None else None
        self._wire_names: dict[str, str] = {}
        self._wire_to_exposed: dict[str, str] = {}
        self._exposed: frozenset[str] = frozenset()
        self._wire_validator: ArgsValidator | None = None
        self._remote = func
        refused = set(options) - _SCHEMA_OPTIONS
        if refused:
            raise ToolDefinitionError(
                f"tool {name!r}: a tool from a JSON Schema takes only the options "
                f"{sorted(_SCHEMA_OPTIONS)}, got {sorted(refused)}"
            )
        opts = ToolOptions(name=name, description=description, **options)
        if inspect.iscoroutinefunction(func):  # like from_function: async tools block
            opts = opts.replace(blocking=True)
        super().__init__(self._call_remote, options=opts)
        self.__doc__ = description

    def _call_remote(self, **kwargs: Any) -> Any:
        result = self._remote(**self.to_wire(kwargs))
        if inspect.isawaitable(result):  # an async function, or a sync one returning a coroutine
            return run_coroutine(_awaited(result))
        return result

    def to_wire(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``args`` (exposed names) under the remote side's property names.

        Raises:
            ArgumentError: a key is not an exposed name of a tool with renamed
                properties, two keys name one remote property, or the
                translated arguments break the remote schema.
        """
        wire = self._wire_names
        if not wire:
            return dict(args)
        out: dict[str, Any] = {}
        problems: list[Problem] = []
        for key, value in args.items():
            if key not in self._exposed:
                problems.append(_unexpected(key, self._wire_to_exposed.get(key)))
                continue
            name = wire.get(key, key)
            if name in out:
                problems.append(Problem(ROOT, f"two arguments name the property {name!r}"))
            out[name] = value
        checker = self._wire_validator
        if not problems and checker is not None and not checker.is_valid(out):
            problems = checker.problems(out)
        if problems:
            raise ArgumentError(self.name, problems)
        return out

    def _build_params(self, doc_params: Mapping[str, str]) -> None:
        """Params, validator and schemas from the given JSON Schema (overrides Tool)."""
        schema = self._input_schema
        properties = schema.get("properties") or {}
        if not isinstance(properties, Mapping):
            raise SchemaError(f"tool {self.name!r}: 'properties' must be an object")
        required_raw = schema.get("required") or []
        required = [r for r in required_raw if isinstance(r, str) and r in properties]
        order = required + [p for p in properties if p not in required]
        # Names that are identifiers already keep them; only the others are renamed.
        kept = {w for w in order if python_identifier(w) == w}
        taken: set[str] = set(kept)
        renamed: dict[str, Any] = {}
        params: list[Param] = []
        for wire in order:
            prop = properties[wire]
            ident = wire if wire in kept else python_identifier(wire, taken)
            taken.add(ident)
            if ident != wire:
                self._wire_names[ident] = wire
            renamed[ident] = prop
            prop_map = prop if isinstance(prop, Mapping) else {}
            description = str(prop_map.get("description") or prop_map.get("title") or "")
            default = prop_map.get("default", MISSING) if wire not in required else MISSING
            params.append(
                Param(
                    name=ident,
                    kind="positional_or_keyword",
                    required=wire in required,
                    default=default,
                    description=description if "description" in prop_map else "",
                    schema=dict(prop_map),
                    annotation=annotation_for_schema(prop_map),
                )
            )
        if self._wire_names:
            # Closed: an extra key could be a wire name and overwrite what was approved.
            exposed = {k: v for k, v in schema.items() if k in _KEPT_WHEN_RENAMED}
            exposed["additionalProperties"] = False
        else:
            exposed = {k: v for k, v in schema.items() if k not in ("properties", "required")}
        exposed["type"] = "object"
        exposed["properties"] = renamed
        exposed["required"] = [python_identifier_of(self._wire_names, r) for r in required]
        self._wire_to_exposed = {wire: ident for ident, wire in self._wire_names.items()}
        self._exposed = frozenset(renamed)
        try:
            validator = ArgsValidator(exposed, [p.name for p in params])
            if self._wire_names and set(schema) - _KEPT_WHEN_RENAMED - {
                "type", "properties", "required", "additionalProperties"
            }:
                self._wire_validator = ArgsValidator(schema, order)
        except SchemaError as exc:
            raise SchemaError(f"tool {self.name!r}: {exc}") from exc
        self.params = tuple(params)
        self.parameters_schema = exposed
        self._validator = validator
        self._converters = {}
        self._positional_only = ()
        self._defaults = {p.name: p.default for p in params}
        self._plain = True
        self.returns_schema = self._output_schema
        self.return_annotation = (
            annotation_for_schema(self._output_schema) if self._output_schema else MISSING
        )

    def _hints(self) -> dict[str, Any]:  # pragma: no cover - not used: no signature to read
        return {}


register_schema_tool(SchemaTool)  # the constructor behind Tool.from_schema


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _unexpected(key: str, exposed: str | None) -> Problem:
    if exposed is not None:
        reason = f"unexpected argument {key!r}: this property is spelled '{exposed}' here"
    else:
        reason = f"unexpected argument {key!r}"
    return Problem(key, reason, "unexpected")


def python_identifier_of(wire_names: Mapping[str, str], wire: str) -> str:
    """The exposed (identifier) name of the wire name ``wire``."""
    for ident, original in wire_names.items():
        if original == wire:
            return ident
    return wire
