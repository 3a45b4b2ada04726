"""Tool definitions: :class:`Tool` and :class:`Param`.

A :class:`Tool` wraps a host-side Python function with what the rest of
toolscript needs: a name, a description, the JSON Schema of its arguments and
of its result, flags (read-only, requires approval, timeout), a validator and
converters.  Build one with :meth:`Tool.from_function` or the
:func:`~toolscript.tools.tool` decorator.  A Tool stays callable like the
function it wraps.
"""

from __future__ import annotations

import inspect
import keyword
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolscript.errors import SchemaError, ToolDefinitionError

from .convert import Converter, build_converter
from .docstrings import parse_docstring
from .schema import (
    MISSING,
    SchemaBuilder,
    UnsupportedType,
    explain_unsupported,
    resolve_hints,
    to_json_default,
    type_label,
)
from .validation import ArgsValidator, Problem

__all__ = ["MISSING", "NAME_PATTERN", "Param", "ParamKind", "Tool", "check_tool_name"]

ParamKind = Literal["positional_or_keyword", "keyword_only"]

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The strictest provider rule for tool names (OpenAI, Anthropic, Gemini...)."""


def check_tool_name(name: object) -> str:
    """Return ``name`` if it can name a tool, else raise ToolDefinitionError saying why.

    A name must match ``^[a-zA-Z0-9_-]{1,64}$`` (providers' rule) and be a
    Python identifier that is not a keyword (scripts call tools as functions).
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(f"tool name must be a string, got {type(name).__name__}")
    if not NAME_PATTERN.match(name):
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: must be 1-64 characters from a-z, A-Z, 0-9, "
            "'_' and '-' (the strictest model-provider rule)"
        )
    if not name.isidentifier():
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: must be a valid Python identifier (no '-', not "
            "starting with a digit), because scripts call tools as functions; "
            "pass name= to choose another"
        )
    if keyword.iskeyword(name):
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: it is a Python keyword; pass name= to choose another"
        )
    return name


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


class Tool:
    """A host-side function exposed to scripts and models.

    Attributes:
        name: what scripts call it (a valid identifier, at most 64 characters).
        description: the docstring without its parameter sections.
        func: the wrapped function.
        params: the exposed parameters, in signature order.
        parameters_schema: JSON Schema (2020-12) of the arguments dict.
        returns_schema: JSON Schema of the result, or None if unknown.
        return_annotation: the resolved return hint, or ``MISSING``.
        returns_description: the docstring's ``Returns:`` text, if any.
        read_only: no side effects; may run in parallel.
        requires_approval: must be approved by the host's approval hook.
        timeout_s: per-call timeout in seconds, or None for the runtime default.
        allowed_callers: ``{"script", "direct"}`` or a subset: whether scripts,
            the model's classic function calls, or both may call the tool.
    """

    name: str
    description: str
    func: Callable[..., Any]
    params: tuple[Param, ...]
    parameters_schema: dict[str, Any]
    returns_schema: dict[str, Any] | None
    return_annotation: Any
    returns_description: str | None
    read_only: bool
    requires_approval: bool
    timeout_s: float | None
    allowed_callers: frozenset[str]

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        requires_approval: bool = False,
        timeout_s: float | None = None,
        allowed_callers: Iterable[str] | None = None,
    ) -> None:
        """Build a tool from ``func``; see :meth:`from_function`."""
        if isinstance(func, Tool):
            func = func.func
        if not callable(func):
            raise ToolDefinitionError(f"a tool must wrap a callable, got {func!r}")
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            raise ToolDefinitionError(
                f"{_label(func)}: async tools are not supported yet; wrap it in a "
                "plain function (e.g. with asyncio.run)"
            )
        if name is None:
            name = getattr(func, "__name__", None)
            if not isinstance(name, str) or name == "<lambda>":
                raise ToolDefinitionError(f"cannot derive a tool name from {func!r}; pass name=...")
        self.name = check_tool_name(name)
        self.func = func
        self.read_only = bool(read_only)
        self.requires_approval = bool(requires_approval)
        self.timeout_s = _check_timeout(self.name, timeout_s)
        self.allowed_callers = _check_callers(self.name, allowed_callers)

        doc = parse_docstring(inspect.getdoc(func))
        self.description = (description if description is not None else doc.description).strip()
        self.returns_description = doc.returns

        self._build_params(doc.params)
        self._fast = self._validator.fast

        # functools.update_wrapper-like metadata, so the Tool looks like its function.
        self.__name__ = self.name
        self.__qualname__ = getattr(func, "__qualname__", self.name)
        self.__module__ = getattr(func, "__module__", __name__)
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        requires_approval: bool = False,
        timeout_s: float | None = None,
        allowed_callers: Iterable[str] | None = None,
    ) -> Tool:
        """Build a tool from a plain function.

        Args:
            func: the function; every exposed parameter needs a type annotation.
                ``*args``/``**kwargs`` are not exposed.
            name: the tool name (default: the function's ``__name__``).
            description: overrides the docstring-derived description.
            read_only: the tool has no side effects (may run in parallel).
            requires_approval: calls must be approved by the host's hook.
            timeout_s: per-call timeout in seconds.
            allowed_callers: ``"script"``, ``"direct"`` or both (default both).

        Raises:
            ToolDefinitionError: bad name, timeout, or unsupported function.
            SchemaError: an annotation cannot be expressed as JSON Schema.
        """
        if isinstance(func, Tool):
            func = func.func
        return cls(
            func,
            name=name,
            description=description,
            read_only=read_only,
            requires_approval=requires_approval,
            timeout_s=timeout_s,
            allowed_callers=allowed_callers,
        )

    # -- construction helpers -----------------------------------------------------

    def _build_params(self, doc_params: Mapping[str, str]) -> None:
        func = self.func
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError) as exc:
            raise ToolDefinitionError(
                f"tool {self.name!r}: cannot read its signature: {exc}"
            ) from exc
        hints = self._hints()
        builder = SchemaBuilder()
        params: list[Param] = []
        properties: dict[str, Any] = {}
        required: list[str] = []
        converters: dict[str, Converter] = {}
        positional_only: list[str] = []
        for p in signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name not in hints:
                raise SchemaError(
                    f"tool {self.name!r}: parameter {p.name!r} has no type annotation; "
                    f"annotate it (e.g. `{p.name}: str`) so its JSON Schema is known"
                )
            annotation = hints[p.name]
            try:
                schema = builder.schema(annotation)
                converter = build_converter(annotation)
            except UnsupportedType as exc:
                raise SchemaError(
                    f"tool {self.name!r}: parameter {p.name!r}: cannot express "
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
            kind: ParamKind = (
                "keyword_only" if p.kind is p.KEYWORD_ONLY else "positional_or_keyword"
            )
            if p.kind is p.POSITIONAL_ONLY:
                positional_only.append(p.name)
            params.append(
                Param(
                    name=p.name,
                    kind=kind,
                    required=default is MISSING,
                    default=default,
                    description=description,
                    schema=schema,
                    annotation=annotation,
                )
            )
            properties[p.name] = schema
            if default is MISSING:
                required.append(p.name)
            if converter is not None:
                converters[p.name] = converter
        self.params = tuple(params)
        self.parameters_schema = builder.attach_defs(
            {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        )
        self._validator = ArgsValidator(self.parameters_schema, [p.name for p in params])
        self._converters = converters
        self._positional_only = tuple(positional_only)
        self._defaults = {p.name: p.default for p in params}
        self._plain = not converters and not positional_only

        self.return_annotation = hints.get("return", MISSING)
        self.returns_schema = None
        if self.return_annotation is not MISSING:
            returns = SchemaBuilder()
            try:
                self.returns_schema = returns.attach_defs(returns.schema(self.return_annotation))
            except UnsupportedType:
                self.returns_schema = None

    def _hints(self) -> dict[str, Any]:
        func = self.func
        targets: list[Any] = [func]
        inner = getattr(func, "func", None)  # functools.partial
        if inner is not None:
            targets.append(inner)
        if not inspect.isroutine(func) and not isinstance(func, type):
            targets.append(type(func).__call__)
        last: UnsupportedType | None = None
        for target in targets:
            try:
                hints = resolve_hints(target)
            except UnsupportedType as exc:
                last = exc
                continue
            if hints:
                return hints
        if last is not None:
            raise SchemaError(f"tool {self.name!r}: {last.reason}") from last
        return {}

    # -- use --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly (no validation, no conversion)."""
        return self.func(*args, **kwargs)

    def validate(self, args: Any) -> None:
        """Check an arguments dict against :attr:`parameters_schema`.

        Raises:
            ArgumentError: with every problem found (path and reason each).
        """
        fast = self._fast
        if fast is not None:
            try:
                if fast(args):
                    return
            except Exception:
                pass
        self._validator.check(self.name, args)

    def problems(self, args: Any) -> list[Problem]:
        """Every problem with ``args`` (an empty list if they are valid)."""
        if self._validator.is_valid(args):
            return []
        return self._validator.problems(args)

    def invoke(self, args: dict[str, Any]) -> Any:
        """Call the function with an already validated arguments dict.

        JSON values are converted to what the annotations ask for (Enum
        members, dataclass instances, tuples, sets) before the call.
        """
        if self._plain:
            return self.func(**args)
        converters = self._converters
        if converters:
            args = {k: (converters[k](v) if k in converters else v) for k, v in args.items()}
        if self._positional_only:
            kwargs = dict(args)
            present = [i for i, n in enumerate(self._positional_only) if n in kwargs]
            positional = [
                kwargs.pop(n) if n in kwargs else self._defaults[n]
                for n in self._positional_only[: present[-1] + 1 if present else 0]
            ]
            return self.func(*positional, **kwargs)
        return self.func(**args)

    def validate_and_invoke(self, args: Any) -> Any:
        """:meth:`validate` then :meth:`invoke`; raises :class:`ArgumentError`."""
        self.validate(args)
        return self.invoke(args)

    def function_spec(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}`` for classic function calling."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters_schema,
        }

    def __repr__(self) -> str:
        """``Tool(name='x', read_only=True, ...)``."""
        flags = []
        if self.read_only:
            flags.append("read_only=True")
        if self.requires_approval:
            flags.append("requires_approval=True")
        if self.timeout_s is not None:
            flags.append(f"timeout_s={self.timeout_s!r}")
        return f"Tool({', '.join([f'name={self.name!r}', *flags])})"


CALLERS = frozenset({"script", "direct"})


def _check_callers(name: str, callers: Iterable[str] | None) -> frozenset[str]:
    if callers is None:
        return CALLERS
    chosen = frozenset([callers] if isinstance(callers, str) else callers)
    if not chosen or chosen - CALLERS:
        raise ToolDefinitionError(
            f"tool {name!r}: allowed_callers must be a non-empty subset of "
            f"{sorted(CALLERS)}, got {sorted(chosen)}"
        )
    return chosen


def _check_timeout(name: str, timeout_s: Any) -> float | None:
    if timeout_s is None:
        return None
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise ToolDefinitionError(
            f"tool {name!r}: timeout_s must be a number of seconds, got {timeout_s!r}"
        )
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise ToolDefinitionError(
            f"tool {name!r}: timeout_s must be positive and finite, got {timeout_s!r}"
        )
    return float(timeout_s)


def _label(func: Any) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)
