"""Tool definitions: :class:`Tool` and :class:`Param`.

A :class:`Tool` wraps a host-side Python function with what the rest of
toolscript needs: a name, a description, the JSON Schema of its arguments and
of its result, flags (read-only, requires approval, timeout), a validator and
converters.  Build one with :meth:`Tool.from_function` or the
:func:`~toolscript.tools.tool` decorator.  A Tool stays callable like the
function it wraps.
"""

from __future__ import annotations

import copy
import inspect
import keyword
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

from toolscript.errors import ConfigurationError, SchemaError, ToolDefinitionError

from .binding import BoundArgs, convert_argument, render
from .docstrings import parse_docstring
from .finite import has_non_finite
from .markers import IdempotencyKeyMarker, Inject, find_marker
from .options import (
    IDEMPOTENCY_SCOPES,
    IdempotencyScope,
    ToolFlagArgs,
    ToolOptionArgs,
    ToolOptions,
)
from .params import (
    IDEMPOTENCY_PARAM,
    HostSupplied,
    InjectedParam,
    Param,
    ParamKind,
    ToolParams,
    signature_params,
)
from .schema import MISSING, UnsupportedType, resolve_hints, unwrap_annotated
from .validation import ROOT, ArgumentError, Problem

__all__ = [
    "IDEMPOTENCY_PARAM",
    "MISSING",
    "NAME_PATTERN",
    "BoundArgs",
    "HostSupplied",
    "IdempotencyScope",
    "InjectedParam",
    "Param",
    "ParamKind",
    "Tool",
    "ToolOptions",
    "check_tool_name",
    "not_a_tool_message",
    "register_schema_tool",
]

_JSON_SCALARS = (str, int, float, bool, type(None))

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


ACCEPTED_TOOLS = (
    "a function (or any callable), a function decorated with @tool, a Tool, "
    "Tool.from_schema(...), a TwoPhase pair, a Namespace(...) or Deferred(...) group of "
    "tools, a ToolSearch, a tool source (an object with a tools() "
    "method, such as MCPToolSource or OpenAPISource), or a tool of another framework: "
    "a pydantic-ai Tool, an OpenAI Agents SDK FunctionTool, a LangChain BaseTool or "
    "StructuredTool, a smolagents Tool"
)
"""What ``Runtime(tools=[...])`` accepts, as error messages name it."""


def not_a_tool_message(obj: object) -> str:
    """The error text for an object that cannot become a tool, naming what can."""
    shown = repr(obj)
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return (
        f"cannot use {shown} (a {type(obj).__module__}.{type(obj).__qualname__}) as a tool: "
        f"a tool is {ACCEPTED_TOOLS}"
    )


_SCHEMA_TOOL_FACTORY: list[Callable[..., Tool]] = []
"""The constructor behind :meth:`Tool.from_schema` (see :func:`register_schema_tool`)."""


def register_schema_tool(factory: Callable[..., Tool]) -> None:
    """Install the constructor behind :meth:`Tool.from_schema`.

    :mod:`.schematool` registers :class:`~toolscript.tools.schematool.SchemaTool`,
    a subclass of :class:`Tool`, when it is imported (the ``toolscript.tools``
    package imports it), so this module does not import its own subclass.
    """
    _SCHEMA_TOOL_FACTORY[:] = [factory]


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
        examples: example argument dicts (valid against the schema), shown in
            stubs and sent as ``input_examples`` where a dialect supports them.
        host_supplied: injected parameters, idempotency and two-phase roles, or
            None for a plain tool.
        options: the :class:`ToolOptions` the tool was declared with (its
            ``name`` filled in).
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
    examples: tuple[dict[str, Any], ...]
    host_supplied: HostSupplied | None
    options: ToolOptions
    _model_params: frozenset[str] = frozenset()
    _fill_cache: tuple[tuple[str, Any, bool], ...] | None = None

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        options: ToolOptions | None = None,
        **kwargs: Unpack[ToolOptionArgs],
    ) -> None:
        """Build a tool from ``func``; see :meth:`from_function`.

        The options are keyword arguments (see :class:`ToolOptions`), or a ready
        ``options=`` that the keyword arguments, if any, override.
        """
        opts = _merge_options(options, kwargs)
        name = opts.name
        if isinstance(func, Tool):
            func = func.func
        if not callable(func):
            raise ToolDefinitionError(not_a_tool_message(func))
        if inspect.isasyncgenfunction(func):
            raise ToolDefinitionError(
                f"{_label(func)}: async generators cannot be tools; return a list instead"
            )
        if name is None:
            name = getattr(func, "__name__", None)
            if not isinstance(name, str) or name == "<lambda>":
                raise ToolDefinitionError(f"cannot derive a tool name from {func!r}; pass name=...")
        self.name = check_tool_name(name)
        self.options = opts.replace(name=self.name)
        self.func = func
        self.read_only = bool(opts.read_only)
        self.requires_approval = bool(opts.requires_approval)
        self.timeout_s = _check_timeout(self.name, opts.timeout_s)
        self.blocking = bool(opts.blocking) or inspect.iscoroutinefunction(func)
        """Calls may block: in process they run on a worker thread (see ToolOptions)."""
        self.allowed_callers = _check_callers(self.name, opts.allowed_callers)
        self._inject_option = _check_inject(self.name, opts.inject)
        self._idempotency = _check_idempotent(self.name, opts.idempotent)
        self.host_supplied = None

        doc = parse_docstring(inspect.getdoc(func))
        description = opts.description
        self.description = (description if description is not None else doc.description).strip()
        self.returns_description = doc.returns

        self._build_params(doc.params)
        self._fast = self._validator.fast if self._validator.post_check is None else None
        self.examples = self._check_examples(opts.examples)
        self.options = self.options.replace(
            timeout_s=self.timeout_s, blocking=self.blocking, allowed_callers=self.allowed_callers,
            examples=self.examples or None,
        )

        # functools.update_wrapper-like metadata, so the Tool looks like its function.
        self.__name__ = self.name
        self.__qualname__ = getattr(func, "__qualname__", self.name)
        self.__module__ = getattr(func, "__module__", __name__)
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func
        if inspect.iscoroutinefunction(func):  # runs on the host's loop: see asynctools
            from .asynctools import blocking

            self.func = blocking(func)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        options: ToolOptions | None = None,
        **kwargs: Unpack[ToolOptionArgs],
    ) -> Tool:
        """Build a tool from a plain function.

        Args:
            func: the function; every exposed parameter needs a type annotation.
                ``*args``/``**kwargs`` are not exposed.
            options: a ready :class:`ToolOptions` (keyword arguments override it).

        Keyword Args:
            name: the tool name (default: the function's ``__name__``).
            description: overrides the docstring-derived description.
            read_only: the tool has no side effects (may run in parallel).
            requires_approval: calls must be approved by the host's hook.
            timeout_s: per-call timeout in seconds.
            allowed_callers: ``"script"``, ``"direct"`` or both (default both).
            examples: example argument dicts, each checked against the schema.
            inject: parameters the host fills from the run's context: a list of
                names (context key = name) or ``{param: context_key}``; same as
                annotating them ``Injected[T]``.
            idempotent: ``True``/``"run"``, ``"session"`` or ``"global"``: calls
                with the same arguments (or the same ``idempotency_key``) in that
                scope run once; repeats return the first result.

        Raises:
            ToolDefinitionError: bad name, timeout, or unsupported function.
            SchemaError: an annotation cannot be expressed as JSON Schema.
        """
        if isinstance(func, Tool):
            func = func.func
        return cls(func, options=_merge_options(options, kwargs))

    # -- construction helpers -----------------------------------------------------

    @classmethod
    def from_schema(
        cls,
        func: Callable[..., Any],
        *,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any] | None = None,
        **options: Unpack[ToolFlagArgs],
    ) -> Tool:
        """A tool from a ready JSON Schema instead of a signature (MCP, OpenAPI, ...).

        ``func`` is called with the validated arguments as keyword arguments
        under their original names; see :class:`~toolscript.tools.schematool.SchemaTool`.
        The other options (``read_only``, ``requires_approval``, ``timeout_s``,
        ``allowed_callers``, ``examples``) are those of :class:`ToolOptions`.
        """
        if not _SCHEMA_TOOL_FACTORY:  # pragma: no cover - the package imports schematool
            raise ToolDefinitionError("Tool.from_schema: toolscript.tools.schematool is not loaded")
        return _SCHEMA_TOOL_FACTORY[0](
            func, name=name, description=description, input_schema=input_schema,
            output_schema=output_schema, **options,
        )

    # -- wrappers -----------------------------------------------------------------

    def wrap_callable(
        self, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]
    ) -> Tool:
        """A copy of this tool whose callable is ``wrap(callable)``; nothing else changes.

        Name, options, schema, validation, injected parameters, idempotency and
        two-phase roles are the original's: a wrapper (retries, rate limits,
        tracing) changes what runs, never what the model sees or the host checks.
        """
        clone = copy.copy(self)
        clone.func = wrap(self.func)
        clone._wrap_extra(wrap)
        return clone

    def _wrap_extra(self, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        """Wrap further callables a subclass runs instead of :attr:`func` (none here)."""

    def _build_params(self, doc_params: Mapping[str, str]) -> None:
        """Params, schema and validator from the signature (:func:`.params.signature_params`)."""
        self._use_params(signature_params(
            self.name, self.func, self._hints(), doc_params, marker_of=self._marker,
            inject_names=self._inject_option, idempotency=self._idempotency,
        ))

    def _use_params(self, built: ToolParams) -> None:
        """Keep what the parameter builder made (the one place both kinds of tools
        set their parameters, schema, validator and converters)."""
        self.params = built.params
        self.parameters_schema = built.schema
        self._validator = built.validator
        self._converters = built.converters
        self._model_params = built.models
        self._positional_only = built.positional_only
        self._defaults = built.defaults
        self._plain = built.plain
        self.host_supplied = built.host_supplied
        self.returns_schema = built.returns_schema
        self.return_annotation = built.return_annotation

    def _marker(self, name: str, hint: Any) -> Inject | IdempotencyKeyMarker | None:
        """How the host fills parameter ``name``, if it does (marker or ``inject=``)."""
        if name in self._inject_option:
            return Inject(self._inject_option[name])
        if hint is None:
            return None
        return find_marker(unwrap_annotated(hint)[1])

    def _check_examples(
        self, examples: Sequence[Mapping[str, Any]] | None
    ) -> tuple[dict[str, Any], ...]:
        if examples is None:
            return ()
        if isinstance(examples, (str, bytes, Mapping)) or not isinstance(examples, Sequence):
            raise ToolDefinitionError(
                f"tool {self.name!r}: examples must be a list of argument dicts"
            )
        checked: list[dict[str, Any]] = []
        for i, example in enumerate(examples):
            if not isinstance(example, Mapping):
                raise ToolDefinitionError(
                    f"tool {self.name!r}: examples[{i}] must be a dict of arguments, "
                    f"got {type(example).__name__}"
                )
            try:
                self.validate(dict(example))
            except ArgumentError as exc:
                raise ToolDefinitionError(
                    f"tool {self.name!r}: examples[{i}] does not match the parameters: "
                    + "; ".join(str(p) for p in exc.problems)
                ) from None
            checked.append(dict(example))
        return tuple(checked)

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
        """Check an arguments dict against :attr:`parameters_schema` (NaN and
        infinities are invalid anywhere).

        Raises:
            ArgumentError: with every problem found (path and reason each).
        """
        fast = self._fast
        if fast is not None:
            try:
                if fast(args) and not has_non_finite(args):
                    return
            except Exception:
                pass
        self._validator.check(self.name, args)

    def bind(self, args: Any) -> BoundArgs:
        """Validate ``args`` and return the final arguments of the call.

        The arguments are checked against :attr:`parameters_schema`, converted
        to what the annotations ask for (pydantic models run their validators
        and fill their nested defaults here) and completed with the defaults
        of the parameters left out. The result's ``values`` are what
        :meth:`call_bound` passes to the function; its ``shown`` are the same
        values as JSON data, for the approval hook, policies, plans and the
        audit record (see :mod:`toolscript.tools.binding`).

        Raises:
            ArgumentError: with every problem found (a converter that raises
                is a problem of its argument).
        """
        validator = self._validator
        if not validator.is_valid(args):
            problems = validator.problems(args) or [Problem(ROOT, "arguments are invalid")]
            raise ArgumentError(self.name, problems)
        values: dict[str, Any] = args
        converters = self._converters
        if converters:
            values = {}
            problems = []
            for key, value in args.items():
                convert = converters.get(key)
                if convert is None:
                    values[key] = value
                    continue
                converted, found = convert_argument(key, convert, value)
                problems.extend(found)
                values[key] = converted
            if problems:
                raise ArgumentError(self.name, problems)
        fill = self._fill_cache
        if fill is None:
            fill = self._fill_cache = tuple(
                (name, default, type(default) in _JSON_SCALARS)
                for name, default in self._defaults.items()
                if default is not MISSING and name != IDEMPOTENCY_PARAM
            )
        as_is = not converters
        for name, default, scalar in fill:
            if name not in values:
                if values is args:
                    values = dict(args)
                values[name] = default
                as_is = as_is and scalar
        if as_is:  # JSON data throughout: what is shown is what the function gets
            return BoundArgs(values, values, self._plain)
        shown = {p.name: render(values[p.name]) for p in self.params if p.name in values}
        return BoundArgs(values, shown, False)

    def call_bound(self, values: dict[str, Any]) -> Any:
        """Call the function with the ``values`` of :meth:`bind`, converting nothing."""
        positional_only = self._positional_only
        if positional_only:
            kwargs = dict(values)
            present = [i for i, n in enumerate(positional_only) if n in kwargs]
            positional = [
                kwargs.pop(n) if n in kwargs else self._defaults[n]
                for n in positional_only[: present[-1] + 1 if present else 0]
            ]
            return self.func(*positional, **kwargs)
        return self.func(**values)

    def problems(self, args: Any) -> list[Problem]:
        """Every problem with ``args`` (an empty list if they are valid)."""
        if self._validator.is_valid(args):
            post = self._validator.post_check
            return post(args) if post is not None else []
        return self._validator.problems(args)

    def injected_values(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """The values of the injected parameters, read from ``context``.

        A missing key falls back to the parameter's default.

        Raises:
            ConfigurationError: a required context value is missing or has
                the wrong type (a host set-up error, never the model's).
        """
        needs = self.host_supplied
        if needs is None or not needs.injected:
            return {}
        out: dict[str, Any] = {}
        for param in needs.injected:
            value = context.get(param.key, MISSING)
            if value is MISSING:
                if param.default is MISSING:
                    raise ConfigurationError(
                        f"tool {self.name!r} needs the context value {param.key!r} for its "
                        f"injected parameter {param.name!r}; pass it with "
                        f"Runtime(context={{{param.key!r}: ...}}) or "
                        f"runtime.session(context={{{param.key!r}: ...}})"
                    )
                continue
            if param.check is not None and not isinstance(value, param.check):
                raise ConfigurationError(
                    f"tool {self.name!r}: context value {param.key!r} must be "
                    f"{param.check.__qualname__}, got {type(value).__qualname__}"
                )
            out[param.name] = value
        return out

    def call_args(
        self, args: Mapping[str, Any], injected: Mapping[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """The arguments for :meth:`call_bound`: the bound ``args`` without the
        script's ``idempotency_key``, plus injected values and the key parameter."""
        full = dict(args)
        needs = self.host_supplied
        if needs is not None and needs.idempotency is not None:
            full.pop(IDEMPOTENCY_PARAM, None)
            if needs.key_param is not None:
                full[needs.key_param] = key
        full.update(injected)
        return full

    def invoke(self, args: dict[str, Any]) -> Any:
        """Call the function with an already validated arguments dict.

        JSON values are converted to what the annotations ask for (Enum
        members, dataclass instances, tuples, sets) before the call. The
        runtime does not use this: it calls :meth:`bind` before approval and
        :meth:`call_bound` with the approved values.
        """
        if self._plain:
            return self.func(**args)
        converters = self._converters
        if converters:
            args = {k: (converters[k](v) if k in converters else v) for k, v in args.items()}
        return self.call_bound(args)

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
        if self.blocking:
            flags.append("blocking=True")
        return f"Tool({', '.join([f'name={self.name!r}', *flags])})"


CALLERS = frozenset({"script", "direct"})


def _merge_options(options: ToolOptions | None, changes: Mapping[str, Any]) -> ToolOptions:
    """``options`` (or the defaults) with the keyword arguments ``changes`` applied."""
    base = options if options is not None else ToolOptions()
    if not isinstance(base, ToolOptions):
        raise ToolDefinitionError(f"options must be a ToolOptions, got {type(base).__name__}")
    return base.replace(**changes) if changes else base


def _check_inject(name: str, inject: Mapping[str, str] | Iterable[str] | None) -> dict[str, str]:
    if inject is None:
        return {}
    if isinstance(inject, str):
        inject = [inject]
    pairs = dict(inject) if isinstance(inject, Mapping) else {n: n for n in inject}
    for param, key in pairs.items():
        if not isinstance(param, str) or not isinstance(key, str) or not key:
            raise ToolDefinitionError(
                f"tool {name!r}: inject must be parameter names or {{param: context_key}} "
                f"strings, got {param!r}: {key!r}"
            )
    return pairs


def _check_idempotent(name: str, value: Any) -> IdempotencyScope | None:
    if value is False or value is None:
        return None
    if value is True:
        return "run"
    if value in IDEMPOTENCY_SCOPES:
        scope: IdempotencyScope = value
        return scope
    raise ToolDefinitionError(
        f"tool {name!r}: idempotent must be True, False or one of "
        f"{', '.join(IDEMPOTENCY_SCOPES)}, got {value!r}"
    )


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
