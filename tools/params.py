"""One parameter builder for every kind of tool: :func:`signature_params` and
:func:`schema_params`.

A :class:`~toolscript.tools.Tool` exposes its parameters as :class:`Param`
records, one JSON Schema of the arguments object, a validator, converters and
what the host supplies (:class:`HostSupplied`). :func:`signature_params`
builds them from a function's signature, type hints and docstring (``@tool``,
:meth:`Tool.from_function`); :func:`schema_params` from a ready JSON Schema
(:meth:`Tool.from_schema`: MCP, OpenAPI, other frameworks' tools). Both
answer a :class:`ToolParams`, which :class:`~toolscript.tools.Tool` takes as
it is, so the two kinds of tools cannot drift apart.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from toolscript.errors import SchemaError, ToolDefinitionError

from . import pydantic_models
from .convert import Converter, build_converter
from .dependencies import warn_dependencies
from .markers import IdempotencyKeyMarker, Inject
from .options import IdempotencyScope
from .schema import (
    MISSING,
    SchemaBuilder,
    UnsupportedType,
    explain_unsupported,
    to_json_default,
    type_label,
    unwrap_annotated,
)
from .validation import ArgsValidator, Problem

__all__ = [
    "IDEMPOTENCY_PARAM",
    "HostSupplied",
    "InjectedParam",
    "Param",
    "ParamKind",
    "SchemaWire",
    "ToolParams",
    "annotation_for_schema",
    "python_identifier",
    "python_identifier_of",
    "schema_params",
    "signature_params",
]

ParamKind = Literal["positional_or_keyword", "keyword_only"]
IDEMPOTENCY_PARAM = "idempotency_key"
"""The optional argument through which a script supplies its own idempotency key."""
_IDEMPOTENCY_SCHEMA: dict[str, Any] = {
    "type": ["string", "null"],
    "minLength": 1,
    "maxLength": 200,
    "description": (
        "Optional: calls with the same key act once (a repeat returns the first result); "
        "default: derived from the arguments"
    ),
}



@dataclass(frozen=True)
class Param:
    """One parameter of a tool, as the model and the sandbox see it.

    Attributes:
        name: the parameter name (a key of the arguments dict).
        kind: ``positional_or_keyword`` or ``keyword_only`` (positional-only
            parameters are exposed as ``positional_or_keyword``).
        required: True if the parameter has no default.
        default: the default value, or ``MISSING``.
        description: from ``Annotated[T, "..."]`` or the docstring ("" if none).
        schema: the JSON Schema of the value (``$ref`` point into the tool's
            ``parameters_schema["$defs"]``).
        annotation: the resolved type hint (with ``Annotated``), for stubs.
    """

    name: str
    kind: ParamKind
    required: bool
    default: Any = MISSING
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)
    annotation: Any = Any


@dataclass(frozen=True)
class InjectedParam:
    """A parameter the host fills from the run's context (never seen by the model).

    Attributes:
        name: the function's parameter name.
        key: the context key it is read from.
        default: the parameter's default (used when the context lacks ``key``),
            or ``MISSING``.
        check: a class the value must be an instance of, when the annotation
            is a plain class; else None (not checked).
        redact: show the value to approval hooks as ``"[redacted]"``
            (``Inject(..., redact=True)``, for secrets such as tokens).
    """

    name: str
    key: str
    default: Any = MISSING
    check: type | None = None
    redact: bool = False


@dataclass(frozen=True)
class HostSupplied:
    """What the host supplies to a call of one tool beyond the script's arguments
    (``Tool.host_supplied``): injected values, an idempotency key, a two-phase role.

    Plain tools have ``host_supplied = None`` and cost nothing extra per call.

    Attributes:
        injected: parameters filled from the run's context.
        idempotency: ``"run"``, ``"session"`` or ``"global"``: the scope in
            which calls with the same arguments (or the same script-supplied
            ``idempotency_key``) act once; None if not idempotent.
        key_param: the parameter that receives the idempotency key, if any.
        phase: ``"prepare"`` or ``"commit"`` for the two tools of a
            two-phase write (see :func:`~toolscript.tools.two_phase`).
        partner: the name of the other tool of a two-phase pair.
    """

    injected: tuple[InjectedParam, ...] = ()
    idempotency: IdempotencyScope | None = None
    key_param: str | None = None
    phase: Literal["prepare", "commit"] | None = None
    partner: str | None = None




def _model_check(models: Mapping[str, Converter]) -> Callable[[Any], list[Problem]]:
    """A post-check running pydantic validation of the model-typed arguments."""

    def check(args: Any) -> list[Problem]:
        problems: list[Problem] = []
        for name, convert in models.items():
            if name in args:
                for path, reason in pydantic_models.validation_problems(convert, args[name]):
                    where = name if not path else f"{name}{'' if path[0] == '[' else '.'}{path}"
                    problems.append(Problem(where, reason))
        return problems

    return check


@dataclass(frozen=True)
class ToolParams:
    """A tool's parameters, however they were declared: what :class:`Tool` keeps.

    Attributes:
        params: the exposed parameters, in order.
        schema: JSON Schema of the arguments object (``parameters_schema``).
        validator: checks an arguments dict against ``schema``.
        converters: per parameter, JSON value -> what the function takes.
        models: the parameters typed as pydantic models.
        positional_only: the parameters passed by position, in order.
        host_supplied: injected values and idempotency, or None.
        returns_schema: JSON Schema of the result, or None if unknown.
        return_annotation: the return hint, or ``MISSING``.
    """

    params: tuple[Param, ...]
    schema: dict[str, Any]
    validator: ArgsValidator
    converters: dict[str, Converter] = field(default_factory=dict)
    models: frozenset[str] = frozenset()
    positional_only: tuple[str, ...] = ()
    host_supplied: HostSupplied | None = None
    returns_schema: dict[str, Any] | None = None
    return_annotation: Any = MISSING

    @property
    def defaults(self) -> dict[str, Any]:
        """Each parameter's default (``MISSING`` for a required one)."""
        return {p.name: p.default for p in self.params}

    @property
    def plain(self) -> bool:
        """The function takes the arguments dict as it is (no conversion, no positions)."""
        return not self.converters and not self.positional_only


Marker = Inject | IdempotencyKeyMarker | None


def _reserved_key_error(tool: str) -> ToolDefinitionError:
    return ToolDefinitionError(
        f"tool {tool!r}: parameter {IDEMPOTENCY_PARAM!r} is reserved on "
        "idempotent tools; annotate it `IdempotencyKey` to receive the key"
    )


def _injected(p: inspect.Parameter, marker: Inject, hint: Any) -> InjectedParam:
    bare = unwrap_annotated(hint)[0]
    return InjectedParam(
        p.name, marker.key or p.name,
        MISSING if p.default is p.empty else p.default,
        bare if isinstance(bare, type) and bare not in (object, Any) else None,
        bool(getattr(marker, "redact", False)),
    )


def _host_filled(
    tool: str, p: inspect.Parameter, marker: Inject | IdempotencyKeyMarker,
    hints: Mapping[str, Any], injected: list[InjectedParam],
) -> bool:
    """Record a parameter the host fills: True if it receives the idempotency key,
    else it is injected (appended to ``injected``)."""
    if p.kind is p.POSITIONAL_ONLY:
        raise ToolDefinitionError(
            f"tool {tool!r}: parameter {p.name!r} is filled by the host, so it "
            "cannot be positional-only; remove the '/' before it"
        )
    if isinstance(marker, IdempotencyKeyMarker):
        return True
    injected.append(_injected(p, marker, hints.get(p.name, Any)))
    return False


def _exposed(
    tool: str, p: inspect.Parameter, annotation: Any, builder: SchemaBuilder,
    doc_params: Mapping[str, str],
) -> tuple[Param, Converter | None]:
    """The :class:`Param` of one signature parameter and its converter."""
    try:
        schema = builder.schema(annotation)
        converter = build_converter(annotation)
    except UnsupportedType as exc:
        raise SchemaError(
            f"tool {tool!r}: parameter {p.name!r}: cannot express "
            f"{type_label(annotation)} as JSON Schema: "
            f"{explain_unsupported(annotation, exc)}"
        ) from exc
    described = "description" in schema
    description = schema["description"] if described else doc_params.get(p.name, "")
    if description and not described:
        schema = {**schema, "description": description}
    default = MISSING if p.default is p.empty else p.default
    if default is not MISSING:
        json_default = to_json_default(default)
        if json_default is not MISSING:
            schema = {**schema, "default": json_default}
    kind: ParamKind = "keyword_only" if p.kind is p.KEYWORD_ONLY else "positional_or_keyword"
    param = Param(name=p.name, kind=kind, required=default is MISSING, default=default,
                  description=description, schema=schema, annotation=annotation)
    return param, converter


def _returns(hints: Mapping[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    annotation = hints.get("return", MISSING)
    if annotation is MISSING:
        return annotation, None
    returns = SchemaBuilder()
    try:
        return annotation, returns.attach_defs(returns.schema(annotation))
    except UnsupportedType:
        return annotation, None


def _object_schema(tool: str, params: list[Param], idempotent: bool) -> dict[str, Any]:
    """The arguments object of ``params``; an idempotent tool also takes the
    script's optional ``idempotency_key`` (appended to ``params``)."""
    properties: dict[str, Any] = {p.name: p.schema for p in params}
    required = [p.name for p in params if p.required]
    if idempotent:
        if any(p.name == IDEMPOTENCY_PARAM for p in params):
            raise _reserved_key_error(tool)
        params.append(Param(IDEMPOTENCY_PARAM, "keyword_only", False, None,
                            str(_IDEMPOTENCY_SCHEMA["description"]),
                            dict(_IDEMPOTENCY_SCHEMA), str | None))
        properties[IDEMPOTENCY_PARAM] = dict(_IDEMPOTENCY_SCHEMA)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def signature_params(
    tool: str,
    func: Callable[..., Any],
    hints: Mapping[str, Any],
    doc_params: Mapping[str, str],
    *,
    marker_of: Callable[[str, Any], Marker],
    inject_names: Iterable[str] = (),
    idempotency: IdempotencyScope | None = None,
) -> ToolParams:
    """The parameters of a tool from the signature and hints of ``func``.

    Args:
        tool: the tool name (for messages).
        func: the function; ``*args``/``**kwargs`` are not exposed.
        hints: its resolved type hints.
        doc_params: parameter descriptions from its docstring.
        marker_of: ``marker_of(name, hint)``: how the host fills a parameter
            (``Inject``, ``IdempotencyKeyMarker``), or None.
        inject_names: the parameters the tool's ``inject=`` option names.
        idempotency: the declared idempotency scope, if any.

    Raises:
        ToolDefinitionError: an unreadable signature, a misplaced host-filled
            or reserved parameter, or ``inject=`` naming no parameter.
        SchemaError: a parameter without annotation, or one that cannot be
            expressed as JSON Schema.
    """
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool!r}: cannot read its signature: {exc}") from exc
    builder = SchemaBuilder()
    params: list[Param] = []
    converters: dict[str, Converter] = {}
    models: dict[str, Converter] = {}
    positional_only: list[str] = []
    injected: list[InjectedParam] = []
    key_param: str | None = None
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        marker = marker_of(p.name, hints.get(p.name))
        if marker is not None:
            if _host_filled(tool, p, marker, hints, injected):
                key_param = p.name
            continue
        if p.name == IDEMPOTENCY_PARAM and (idempotency or key_param):
            raise _reserved_key_error(tool)
        if p.name not in hints:
            raise SchemaError(
                f"tool {tool!r}: parameter {p.name!r} has no type annotation; "
                f"annotate it (e.g. `{p.name}: str`) so its JSON Schema is known"
            )
        param, converter = _exposed(tool, p, hints[p.name], builder, doc_params)
        if p.kind is p.POSITIONAL_ONLY:
            positional_only.append(p.name)
        params.append(param)
        if converter is not None:
            converters[p.name] = converter
            if builder.uses_models:
                models[p.name] = converter
    unknown = set(inject_names) - {i.name for i in injected}
    if unknown:
        raise ToolDefinitionError(
            f"tool {tool!r}: inject names {sorted(unknown)}, which are not parameters "
            f"of the function; parameters: {list(signature.parameters)}"
        )
    scope = idempotency or ("run" if key_param else None)
    schema = builder.attach_defs(_object_schema(tool, params, scope is not None))
    warn_dependencies(tool, func, [(p.name, p.schema, p.annotation) for p in params],
                      builder.defs)
    validator = ArgsValidator(schema, [p.name for p in params], check_formats=True,
                              post_check=_model_check(models) if models else None)
    return_annotation, returns_schema = _returns(hints)
    return ToolParams(
        params=tuple(params),
        schema=schema,
        validator=validator,
        converters=converters,
        models=frozenset(models),
        positional_only=tuple(positional_only),
        host_supplied=(HostSupplied(tuple(injected), scope, key_param)
                       if injected or scope is not None else None),
        returns_schema=returns_schema,
        return_annotation=return_annotation,
    )


# -- parameters from a ready JSON Schema ------------------------------------------

KEPT_WHEN_RENAMED = frozenset(
    {"$schema", "$id", "$defs", "definitions", "title", "description",
     "minProperties", "maxProperties"}
)
"""Root keywords of a remote schema that name no property: kept in the exposed
schema of a tool with renamed properties (the others are checked on the wire)."""

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


def python_identifier_of(wire_names: Mapping[str, str], wire: str) -> str:
    """The exposed (identifier) name of the wire name ``wire``."""
    for ident, original in wire_names.items():
        if original == wire:
            return ident
    return wire


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


@dataclass(frozen=True)
class SchemaWire:
    """How the exposed names of a schema tool map to the remote side's names.

    Attributes:
        wire_names: exposed identifier -> remote property name, for the
            renamed properties only (empty when none is renamed).
        exposed: every exposed property name.
        validator: checks translated arguments against the keywords of the
            remote schema that name properties, when a renamed tool has any.
    """

    wire_names: dict[str, str]
    exposed: frozenset[str]
    validator: ArgsValidator | None = None

    @property
    def wire_to_exposed(self) -> dict[str, str]:
        """Remote property name -> exposed identifier, for the renamed ones."""
        return {wire: ident for ident, wire in self.wire_names.items()}


def _schema_param(ident: str, prop: Any, required: bool) -> Param:
    prop_map = prop if isinstance(prop, Mapping) else {}
    return Param(
        name=ident,
        kind="positional_or_keyword",
        required=required,
        default=prop_map.get("default", MISSING) if not required else MISSING,
        description=(str(prop_map.get("description") or prop_map.get("title") or "")
                     if "description" in prop_map else ""),
        schema=dict(prop_map),
        annotation=annotation_for_schema(prop_map),
    )


def schema_params(
    tool: str, schema: Mapping[str, Any], output_schema: Mapping[str, Any] | None = None
) -> tuple[ToolParams, SchemaWire]:
    """The parameters of a tool from a ready JSON Schema of its arguments object.

    Required properties come first. Property names that are not identifiers
    are exposed under one (:func:`python_identifier`); a tool with such
    renamed properties is closed (``additionalProperties: false``) so that
    what is approved translates one to one into what is sent.

    Raises:
        SchemaError: ``properties`` is not an object, or the schema is invalid.
    """
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise SchemaError(f"tool {tool!r}: 'properties' must be an object")
    required_raw = schema.get("required") or []
    required = [r for r in required_raw if isinstance(r, str) and r in properties]
    order = required + [p for p in properties if p not in required]
    # Names that are identifiers already keep them; only the others are renamed.
    kept = {w for w in order if python_identifier(w) == w}
    taken: set[str] = set(kept)
    wire_names: dict[str, str] = {}
    renamed: dict[str, Any] = {}
    params: list[Param] = []
    for wire in order:
        ident = wire if wire in kept else python_identifier(wire, taken)
        taken.add(ident)
        if ident != wire:
            wire_names[ident] = wire
        renamed[ident] = properties[wire]
        params.append(_schema_param(ident, properties[wire], wire in required))
    if wire_names:
        # Closed: an extra key could be a wire name and overwrite what was approved.
        exposed = {k: v for k, v in schema.items() if k in KEPT_WHEN_RENAMED}
        exposed["additionalProperties"] = False
    else:
        exposed = {k: v for k, v in schema.items() if k not in ("properties", "required")}
    exposed["type"] = "object"
    exposed["properties"] = renamed
    exposed["required"] = [python_identifier_of(wire_names, r) for r in required]
    wire_validator: ArgsValidator | None = None
    try:
        validator = ArgsValidator(exposed, [p.name for p in params])
        if wire_names and set(schema) - KEPT_WHEN_RENAMED - {
            "type", "properties", "required", "additionalProperties"
        }:
            wire_validator = ArgsValidator(dict(schema), order)
    except SchemaError as exc:
        raise SchemaError(f"tool {tool!r}: {exc}") from exc
    output = dict(output_schema) if output_schema is not None else None
    built = ToolParams(
        params=tuple(params),
        schema=exposed,
        validator=validator,
        returns_schema=output,
        return_annotation=annotation_for_schema(output) if output else MISSING,
    )
    return built, SchemaWire(wire_names, frozenset(renamed), wire_validator)
