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
from collections.abc import Callable, Mapping
from typing import Any, Unpack

from toolscript.errors import SchemaError, ToolDefinitionError

from .asynctools import run_coroutine
from .definition import Tool, register_schema_tool
from .options import ToolFlagArgs, ToolOptions
from .params import (
    annotation_for_schema,
    python_identifier,
    python_identifier_of,
    schema_params,
)
from .validation import ROOT, ArgsValidator, ArgumentError, Problem

__all__ = [
    "SchemaTool",
    "annotation_for_schema",
    "python_identifier",
    "python_identifier_of",
]

_SCHEMA_OPTIONS = frozenset(ToolFlagArgs.__annotations__)
"""The options a schema tool takes (``inject``/``idempotent`` need a signature)."""


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
        """Params, validator and schemas from the given JSON Schema (overrides Tool;
        :func:`.params.schema_params`)."""
        built, wire = schema_params(self.name, self._input_schema, self._output_schema)
        self._use_params(built)
        self._wire_names = wire.wire_names
        self._wire_to_exposed = wire.wire_to_exposed
        self._exposed = wire.exposed
        self._wire_validator = wire.validator

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
