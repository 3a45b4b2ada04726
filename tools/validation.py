"""Argument validation with ``jsonschema``, plus a compiled fast path.

Every tool call's arguments are checked against the tool's parameter schema
(draft 2020-12).  Validation never coerces: the string ``"50"`` is not the
integer ``50``, ``1.0`` is not an integer, ``True`` is not a number; an
``int`` is accepted where the schema says ``number``.

The fast path (:mod:`toolscript.tools.fastpath`) answers the common case in
well under a microsecond; when it is not sure, ``jsonschema`` decides and its
errors become :class:`Problem` objects with a path and a reason, joined into
one message a model can act on::

    get_daily_revenue(): argument 'date': 5 is not of type 'string'; missing
    required argument 'store_id'
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators

from toolscript.errors import SchemaError

from .fastpath import FastCheck, compile_fast_check

__all__ = [
    "ArgsValidator",
    "ArgumentError",
    "Problem",
    "make_jsonschema_validator",
]

ProblemKind = Literal["invalid", "missing", "unexpected"]

ROOT = "(root)"
"""The path of a problem with the arguments dict as a whole."""


def _is_strict_integer(checker: Any, instance: Any) -> bool:
    """``integer`` means a Python int, never ``1.0`` and never a bool."""
    return isinstance(instance, int) and not isinstance(instance, bool)


_StrictValidator: Any = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", _is_strict_integer
    ),
)


def make_jsonschema_validator(
    schema: Mapping[str, Any], check_formats: bool = False
) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for ``schema`` with strict integers.

    ``check_formats`` makes ``format`` an assertion (for the formats the
    installed ``jsonschema`` can check) instead of an annotation.

    Raises:
        SchemaError: ``schema`` is not a valid JSON Schema.
    """
    try:
        _StrictValidator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        raise SchemaError(f"invalid JSON Schema: {exc.message}") from exc
    checker = _StrictValidator.FORMAT_CHECKER if check_formats else None
    validator: jsonschema.protocols.Validator = _StrictValidator(schema, format_checker=checker)
    return validator


PostCheck = Callable[[Any], list["Problem"]]
"""Extra checks run after the schema accepted the arguments (e.g. pydantic validators)."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the arguments of a call.

    Attributes:
        path: where, e.g. ``items[2].qty``; ``(root)`` for the arguments as a whole.
        reason: what is wrong, a complete sentence fragment.
        kind: ``invalid`` (bad value), ``missing`` (required, absent) or
            ``unexpected`` (not a parameter/field).
    """

    path: str
    reason: str
    kind: ProblemKind = "invalid"

    def __str__(self) -> str:
        """The problem as one clause of the error message."""
        if self.kind != "invalid" or self.path == ROOT:
            return self.reason
        return f"argument '{self.path}': {self.reason}"


class ArgumentError(Exception):
    """The arguments of a tool call do not match the tool's schema.

    Attributes:
        tool: the tool's name.
        problems: every problem found, most actionable first.
        message: one line naming the tool and each problem, for the model.
    """

    def __init__(self, tool: str, problems: Sequence[Problem]) -> None:
        """Build the error for ``tool`` from a non-empty list of problems."""
        self.tool = tool
        self.problems = list(problems)
        self.message = f"{tool}(): " + "; ".join(str(p) for p in self.problems)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle support (exceptions with custom __init__ need it)."""
        return (type(self), (self.tool, self.problems))


class ArgsValidator:
    """Validates argument dicts against one schema; built once per tool."""

    def __init__(
        self,
        schema: Mapping[str, Any],
        order: Sequence[str] | None = None,
        *,
        check_formats: bool = False,
        post_check: PostCheck | None = None,
    ) -> None:
        """Compile ``schema``; ``order`` lists parameter names in signature order.

        ``check_formats`` asserts ``format`` (see
        :func:`make_jsonschema_validator`); ``post_check`` runs after the
        schema accepted a value and returns its problems (empty: valid).

        Raises:
            SchemaError: ``schema`` is not a valid JSON Schema.
        """
        self.schema = schema
        self._validator = make_jsonschema_validator(schema, check_formats)
        self.fast: FastCheck | None = compile_fast_check(schema)
        self.post_check = post_check
        if order is None:
            props = schema.get("properties", {})
            order = list(props) if isinstance(props, Mapping) else []
        self._order = {name: i for i, name in enumerate(order)}

    def is_valid(self, args: Any) -> bool:
        """True if ``args`` is valid (fast path first, then ``jsonschema``)."""
        fast = self.fast
        if fast is not None:
            try:
                if fast(args):
                    return True
            except Exception:  # e.g. RecursionError on absurdly deep data
                pass
        return bool(self._validator.is_valid(args))

    def problems(self, args: Any) -> list[Problem]:
        """Every problem with ``args`` (empty if valid), most actionable first."""
        found: dict[tuple[str, str], tuple[tuple[Any, ...], Problem]] = {}
        for error in self._validator.iter_errors(args):
            for parts, problem in _translate(error):
                found.setdefault((problem.path, problem.reason), (parts, problem))
        kinds = {"invalid": 0, "missing": 1, "unexpected": 2}

        def key(item: tuple[tuple[Any, ...], Problem]) -> tuple[Any, ...]:
            parts, problem = item
            first = self._order.get(parts[0], len(self._order)) if parts else -1
            return (kinds[problem.kind], first, problem.path)

        return [problem for _, problem in sorted(found.values(), key=key)]

    def check(self, tool: str, args: Any) -> None:
        """Raise :class:`ArgumentError` naming ``tool`` if ``args`` is invalid."""
        if self.is_valid(args):
            if self.post_check is not None:
                problems = self.post_check(args)
                if problems:
                    raise ArgumentError(tool, problems)
            return
        problems = self.problems(args) or [Problem(ROOT, "arguments are invalid")]
        raise ArgumentError(tool, problems)


# -- error translation ------------------------------------------------------------


def render_path(parts: Iterable[Any]) -> str:
    """``['items', 2, 'qty']`` -> ``items[2].qty``; empty -> ``(root)``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or ROOT


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _types(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value)
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _translate(
    error: jsonschema.exceptions.ValidationError,
) -> list[tuple[tuple[Any, ...], Problem]]:
    """One jsonschema error -> problems (with their path parts, for ordering)."""
    parts = tuple(error.absolute_path)
    kw = error.validator
    value: Any = error.validator_value
    inst: Any = error.instance
    top = not parts

    if kw == "required" and isinstance(inst, dict):
        out = []
        for name in value:
            if name not in inst:
                sub = (*parts, name)
                noun = "argument" if top else "field"
                out.append(
                    (
                        sub,
                        Problem(
                            render_path(sub),
                            f"missing required {noun} '{render_path(sub)}'",
                            "missing",
                        ),
                    )
                )
        return out
    if kw == "additionalProperties" and value is False and isinstance(inst, dict):
        props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        known = sorted(props)
        out = []
        for name in inst:
            if name in props:
                continue
            sub = (*parts, name)
            noun = "argument" if top else "field"
            close = difflib.get_close_matches(str(name), known, n=1)
            if close:
                hint = f" (did you mean '{close[0]}'?)"
            elif known:
                hint = f" (valid {noun}s: {', '.join(known)})"
            else:
                hint = f" (no {noun}s are accepted)"
            path = render_path(sub)
            out.append((sub, Problem(path, f"unexpected {noun} '{path}'{hint}", "unexpected")))
        return out
    if kw in ("anyOf", "oneOf") and error.context:
        deeper = _best_branch(error)
        if deeper:
            return [p for e in deeper for p in _translate(e)]
    return [(parts, Problem(render_path(parts), _reason(error, top)))]


def _best_branch(
    error: jsonschema.exceptions.ValidationError,
) -> list[jsonschema.exceptions.ValidationError]:
    """The errors of the anyOf branch whose *type* matched, if exactly one did."""
    by_branch: dict[Any, list[jsonschema.exceptions.ValidationError]] = {}
    for sub in error.context or ():
        branch = sub.relative_schema_path[0] if sub.relative_schema_path else None
        by_branch.setdefault(branch, []).append(sub)
    matching = [
        errs
        for errs in by_branch.values()
        if not any(e.validator == "type" and not e.relative_path for e in errs)
        and not any(e.validator in ("enum", "const") and not e.relative_path for e in errs)
    ]
    if len(matching) == 1:
        return matching[0]
    return []


def _summary(schema: Any) -> str:
    """A few words describing one anyOf branch."""
    if not isinstance(schema, dict):
        return "anything" if schema is True else "nothing"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "const" in schema:
        return _short(schema["const"])
    if "enum" in schema:
        return "one of " + _short(schema["enum"])
    if "type" in schema:
        return _types(schema["type"])
    return "another schema"


def _reason(error: jsonschema.exceptions.ValidationError, top: bool) -> str:
    kw = error.validator
    value: Any = error.validator_value
    inst: Any = error.instance
    shown = _short(inst)
    if kw == "type":
        if top and value == "object":
            return (
                "arguments must be an object mapping argument names to values, "
                f"got {type(inst).__name__}"
            )
        return f"{shown} is not of type {_types(value)}"
    if kw == "enum":
        return f"{shown} is not one of {_short(value, 200)}"
    if kw == "const":
        return f"{shown} is not {_short(value)}"
    if kw in ("anyOf", "oneOf"):
        options = [_summary(s) for s in value] if isinstance(value, list) else []
        return f"{shown} does not match any of: {', '.join(options)}"
    if kw == "items" and value is False:
        allowed = len(error.schema.get("prefixItems", [])) if isinstance(error.schema, dict) else 0
        return f"expected at most {allowed} items, got {len(inst)}"
    if kw == "minItems":
        return f"expected at least {value} items, got {len(inst)}"
    if kw == "maxItems":
        return f"expected at most {value} items, got {len(inst)}"
    if kw == "uniqueItems":
        return f"items must be unique, got {shown}"
    message = str(error.message)
    return message if len(message) <= 200 else message[:197] + "..."
