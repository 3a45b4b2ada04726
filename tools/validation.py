"""Argument validation with ``jsonschema``, plus a compiled fast path.

Every tool call's arguments are checked against the tool's parameter schema
(draft 2020-12).  Validation never coerces: the string ``"50"`` is not the
integer ``50``, ``1.0`` is not an integer, ``True`` is not a number; an
``int`` is accepted where the schema says ``number``.

The fast path (:mod:`toolscript.tools.fastpath`) answers the common case in
well under a microsecond; when it is not sure, ``jsonschema`` decides and its
errors become :class:`Problem` objects with a path and a reason, joined into
one message a model can act on::

    get_daily_revenue(): argument 'date': expected a string, got the integer 5
    — write '5'; missing required argument 'store_id' (a string)

The wording (what was expected, what came, what to send) lives in
:mod:`toolscript.tools.argmessages`.
"""

from __future__ import annotations

import functools
import itertools
import json
import reprlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators

from toolscript.errors import ArgumentError, SchemaError

from .argmessages import enum_reason, missing_reason, type_reason, unexpected_reason
from .fastpath import FastCheck, compile_fast_check
from .finite import NON_FINITE_REASON, has_non_finite, non_finite_paths
from .formats import FORMAT_CHECKER

__all__ = [
    "ArgsValidator",
    "ArgumentError",
    "Problem",
    "ValidationBounds",
    "ValidationTimeout",
    "make_jsonschema_validator",
    "swap_bounds",
]

ProblemKind = Literal["invalid", "missing", "unexpected"]

ROOT = "(root)"
"""The path of a problem with the arguments dict as a whole."""


def _is_strict_integer(checker: Any, instance: Any) -> bool:
    """``integer`` means a Python int, never ``1.0`` and never a bool."""
    return isinstance(instance, int) and not isinstance(instance, bool)


@dataclass(frozen=True)
class ValidationBounds:
    """How much host work validating one call's arguments may cost.

    Attributes:
        max_items: values (containers and scalars) the full validator examines;
            more and the arguments are refused before it starts.
        max_depth: nesting depth of containers the full validator examines.
        deadline: a ``time.monotonic()`` value; a schema keyword reached after
            it raises :class:`ValidationTimeout`. None: no deadline.
        max_problems: errors collected before the report stops.
    """

    max_items: int = 100_000
    max_depth: int = 100
    deadline: float | None = None
    max_problems: int = 20


DEFAULT_BOUNDS = ValidationBounds()
"""The bounds in force when none were installed (no deadline)."""


class ValidationTimeout(Exception):
    """Internal: validating arguments passed the deadline of the installed
    :class:`ValidationBounds`."""


_local = threading.local()


def swap_bounds(bounds: ValidationBounds | None) -> ValidationBounds | None:
    """Install ``bounds`` for validations in this thread; return the previous ones.

    ``None`` restores :data:`DEFAULT_BOUNDS`. Callers restore what they replaced::

        previous = swap_bounds(ValidationBounds(deadline=time.monotonic() + 2))
        try:
            tool.validate(args)
        finally:
            swap_bounds(previous)
    """
    previous: ValidationBounds | None = getattr(_local, "bounds", None)
    _local.bounds = bounds
    return previous


def current_bounds() -> ValidationBounds:
    """The bounds installed in this thread (or :data:`DEFAULT_BOUNDS`)."""
    bounds: ValidationBounds | None = getattr(_local, "bounds", None)
    return bounds if bounds is not None else DEFAULT_BOUNDS


def _json_key(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (``1 == 1.0``, ``True != 1``,
    objects compared without key order), as ``jsonschema``'s ``uniqueItems``."""
    kind = type(value)
    if kind is bool:
        return ("b", value)
    if kind is int or kind is float:
        return ("n", value)
    if kind is str:
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, Mapping):
        return ("d", frozenset((k, _json_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("l", tuple(_json_key(v) for v in value))
    return ("o", id(value))  # not JSON: never equal to another item


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems`` in linear time (``jsonschema``'s own is quadratic on mixed items)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _json_key(item)
        if key in seen:
            yield jsonschema.exceptions.ValidationError(
                f"{_short(instance)} has non-unique elements"
            )
            return
        seen.add(key)


def _timed(check: Callable[..., Any]) -> Callable[..., Any]:
    """A keyword function that first checks the installed deadline."""

    def timed(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        bounds: ValidationBounds | None = getattr(_local, "bounds", None)
        if bounds is not None and bounds.deadline is not None and (
            time.monotonic() > bounds.deadline
        ):
            raise ValidationTimeout("validating the arguments passed the run's deadline")
        return check(validator, value, instance, schema)

    return timed


_KEYWORDS = {**jsonschema.Draft202012Validator.VALIDATORS, "uniqueItems": _unique_items}

_StrictValidator: Any = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    validators={keyword: _timed(check) for keyword, check in _KEYWORDS.items()},
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", _is_strict_integer
    ),
)


def _schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a valid draft 2020-12 schema, or None.

    The metaschema check dominates building a tool (~2 ms a schema), and the
    same small schemas (a union branch, a common parameter object) recur
    across tools: the answer is cached by the schema's canonical JSON text.
    """
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):  # not plain JSON: checked as it is, uncached
        return _metaschema_problem(schema)
    return _cached_problem(text)


@functools.lru_cache(maxsize=4096)
def _cached_problem(text: str) -> str | None:
    return _metaschema_problem(json.loads(text))


def _metaschema_problem(schema: Any) -> str | None:
    try:
        _StrictValidator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return str(exc.message)
    return None


def make_jsonschema_validator(
    schema: Mapping[str, Any], check_formats: bool = False
) -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for ``schema`` with strict integers.

    ``check_formats`` makes ``format`` an assertion (for the formats the
    installed ``jsonschema`` can check) instead of an annotation.

    Raises:
        SchemaError: ``schema`` is not a valid JSON Schema.
    """
    problem = _schema_problem(schema)
    if problem is not None:
        raise SchemaError(f"invalid JSON Schema: {problem}")
    checker = FORMAT_CHECKER if check_formats else None  # date-time: offset optional
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

    def _fast_ok(self, args: Any) -> bool:
        """True if the compiled fast path certainly accepts ``args``."""
        fast = self.fast
        if fast is not None:
            try:
                return bool(fast(args))
            except Exception:  # e.g. RecursionError on absurdly deep data
                return False
        return False

    def is_valid(self, args: Any) -> bool:
        """True if ``args`` is valid (fast path first, then bounded ``jsonschema``) and
        holds no NaN or infinity (see :mod:`toolscript.tools.finite`)."""
        if self._fast_ok(args):
            return not has_non_finite(args)
        return not self.problems(args)

    def problems(self, args: Any) -> list[Problem]:
        """The problems with ``args`` (empty if valid), most actionable first.

        Bounded by the installed :class:`ValidationBounds`: arguments over
        their size or depth give one problem saying so, and at most
        ``max_problems`` schema errors are reported.

        Raises:
            ValidationTimeout: the bounds' deadline passed.
        """
        bounds = current_bounds()
        too_big = _measure(args, bounds)
        if too_big is not None:
            return [too_big]
        found: dict[tuple[str, str], tuple[tuple[Any, ...], Problem]] = {}
        defs = self.schema.get("$defs")
        defs = defs if isinstance(defs, Mapping) else {}
        try:
            errors = itertools.islice(self._validator.iter_errors(args), bounds.max_problems)
            for error in errors:
                for parts, problem in _translate(error, defs, bounds.max_problems):
                    found.setdefault((problem.path, problem.reason), (parts, problem))
        except RecursionError:
            return [Problem(ROOT, "the arguments are nested too deeply to validate; "
                                  "pass flatter data")]
        for parts, number in non_finite_paths(args):
            problem = Problem(render_path(parts), f"{number!r} {NON_FINITE_REASON}")
            found.setdefault((problem.path, problem.reason), (parts, problem))
        kinds = {"invalid": 0, "missing": 1, "unexpected": 2}

        def key(item: tuple[tuple[Any, ...], Problem]) -> tuple[Any, ...]:
            parts, problem = item
            first = self._order.get(parts[0], len(self._order)) if parts else -1
            return (kinds[problem.kind], first, problem.path)

        return [problem for _, problem in sorted(found.values(), key=key)]

    def check(self, tool: str, args: Any) -> None:
        """Raise :class:`ArgumentError` naming ``tool`` if ``args`` is invalid.

        Raises:
            ArgumentError: the arguments are invalid (or over the size bounds).
            ValidationTimeout: the installed deadline passed while validating.
        """
        if not self._fast_ok(args) or has_non_finite(args):
            problems = self.problems(args)
            if problems:
                raise ArgumentError(tool, problems)
        if self.post_check is not None:
            problems = self.post_check(args)
            if problems:
                raise ArgumentError(tool, problems)


def _measure(args: Any, bounds: ValidationBounds) -> Problem | None:
    """A problem if ``args`` hold more values or deeper nesting than ``bounds``
    allow (one linear pass, without recursion)."""
    count = 1
    stack: list[tuple[Any, int]] = [(args, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is not dict and kind is not list and kind is not tuple:
            continue
        if depth > bounds.max_depth:
            return Problem(ROOT, f"the arguments are nested more than {bounds.max_depth} "
                                 "levels deep; pass flatter data")
        children = item.values() if kind is dict else item
        count += len(children)
        if count > bounds.max_items:
            return Problem(ROOT, f"the arguments hold more than {bounds.max_items} values; "
                                 "pass less data per call (split it into several calls)")
        for child in children:
            child_kind = type(child)
            if child_kind is dict or child_kind is list or child_kind is tuple:
                stack.append((child, depth + 1))
    return None


# -- error translation ------------------------------------------------------------


MAX_PATH_PART = 80
"""Characters of one key shown in a problem's path (longer keys are cut)."""


def render_path(parts: Iterable[Any]) -> str:
    """``['items', 2, 'qty']`` -> ``items[2].qty``; empty -> ``(root)``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and len(part) > MAX_PATH_PART:
            out += f"[{part[:MAX_PATH_PART]!r}...]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or ROOT


_bounded_repr = reprlib.Repr()
_bounded_repr.maxlevel = 8
_bounded_repr.maxlist = _bounded_repr.maxtuple = _bounded_repr.maxdict = 8
_bounded_repr.maxstring = _bounded_repr.maxother = 80
_bounded_repr.maxlong = 80


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut at ``limit`` characters, in time bounded by ``limit``
    (never the repr of a whole huge or deeply nested value)."""
    kind = type(value)
    try:
        if kind is str:
            text = repr(value[: limit + 1])
        elif kind in (int, float, bool) or value is None:
            text = _bounded_repr.repr(value) if kind is int else repr(value)
        else:
            text = _bounded_repr.repr(value)
    except Exception:  # e.g. RecursionError
        text = f"<{kind.__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _types(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value)
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _translate(
    error: jsonschema.exceptions.ValidationError, defs: Mapping[str, Any], limit: int = 20
) -> list[tuple[tuple[Any, ...], Problem]]:
    """One jsonschema error -> at most ``limit`` problems (with their path parts,
    for ordering)."""
    parts = tuple(error.absolute_path)
    kw = error.validator
    value: Any = error.validator_value
    inst: Any = error.instance
    top = not parts

    if kw == "required" and isinstance(inst, dict):
        props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        out = []
        for name in value[:limit] if isinstance(value, list) else value:
            if name not in inst:
                sub = (*parts, name)
                noun = "argument" if top else "field"
                reason = missing_reason(render_path(sub), noun, props.get(name), defs)
                out.append((sub, Problem(render_path(sub), reason, "missing")))
        return out
    if kw == "additionalProperties" and value is False and isinstance(inst, dict):
        props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        known = sorted(props)
        out = []
        for name in inst:
            if name in props:
                continue
            if len(out) >= limit:
                break
            sub = (*parts, name)
            noun = "argument" if top else "field"
            path = render_path(sub)
            reason = unexpected_reason(str(name), path, known, noun)
            out.append((sub, Problem(path, reason, "unexpected")))
        return out
    if kw in ("anyOf", "oneOf") and error.context:
        deeper = _best_branch(error)
        if deeper:
            return [p for e in deeper[:limit] for p in _translate(e, defs, limit)][:limit]
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
        return type_reason(inst, value)
    if kw == "enum" and isinstance(value, list):
        return enum_reason(inst, value)
    if kw == "const":
        return enum_reason(inst, [value])
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
