"""Render tools as Python stubs for the model's prompt.

A script calls tools as plain functions, so the model reads them as Python::

    class Revenue(TypedDict):
        store_id: str
        revenue_yuan: float

    def get_daily_revenue(store_id: str, date: str) -> Revenue:
        \"\"\"Revenue of one store on one day, in yuan.

        (read-only: safe to run in parallel)

        Args:
            store_id: Store id, e.g. "ST001".
            date: ISO date, e.g. "2026-08-24".
        \"\"\"

Named record types (TypedDicts, dataclasses and pydantic models) are rendered
once, before the functions, as ``class X(TypedDict)`` (scripts pass and
receive plain dicts); Enums are rendered as ``Literal[...]`` of their values
(what a script passes).

A stub shows the JSON the script gets, never a host type: a ``datetime``,
``Decimal``, ``UUID``, ``EmailStr`` or ``HttpUrl`` is rendered as ``str`` with
what the string looks like (:mod:`toolscript.tools.hosttypes`), as a comment
on a record field (``sent_at: str  # ISO 8601 date-time``), in the ``Args:``
section for a parameter and as a comment on the ``def`` line for the result.
A class with no JSON form is rendered as ``Any``.  Output is deterministic
and valid Python: tools sorted by name, classes in order of first use, each
after the classes its fields use.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from . import pydantic_models
from .constraints import ConstraintError, constraint_keywords, describe_constraints
from .definition import Tool
from .docstrings import parse_docstring, split_intro
from .hosttypes import json_form
from .schema import (
    MISSING,
    annotated_description,
    class_docstring,
    is_typeddict,
    to_json_default,
    typeddict_required_keys,
    unwrap_annotated,
)

__all__ = ["READ_ONLY_NOTE", "REQUIRES_APPROVAL_NOTE", "render_stub", "render_stubs"]

READ_ONLY_NOTE = "(read-only: safe to run in parallel)"
REQUIRES_APPROVAL_NOTE = "(requires approval: each call is checked before it runs)"
_MAX_LINE = 100
_INDENT = "    "


def render_stubs(tools: Iterable[Tool],
                 namespaces: Mapping[str, str] | None = None) -> str:
    """All ``tools`` as Python source: record classes first, then functions by name.

    A tool named ``ns.tool`` (see :mod:`.catalog`) is rendered as a method of
    ``class ns:`` (its docstring: ``namespaces[ns]``), after the plain functions;
    namespaces sorted by name. Output is deterministic for the same tools.
    """
    renderer = _Renderer()
    plain: list[str] = []
    grouped: dict[str, list[str]] = {}
    for t in sorted(tools, key=lambda t: t.name):
        if "." in t.name:
            namespace, short = t.name.rsplit(".", 1)
            grouped.setdefault(namespace, []).append(renderer.function(t, short))
        else:
            plain.append(renderer.function(t))
    blocks = []
    for namespace in sorted(grouped):
        text = (namespaces or {}).get(namespace, "")
        doc = f"{text.rstrip('.')}. " if text else ""
        head = (f"class {namespace}:\n{_INDENT}\"\"\"{doc}Call as "
                f"{namespace}.<tool>(...).\"\"\"\n")
        body = "\n\n".join(_indented(f) for f in grouped[namespace])
        blocks.append(f"{head}\n{body}")
    classes = renderer.classes()
    parts = [*classes, *plain, *blocks]
    return "\n\n".join(parts) + "\n" if parts else ""


def _indented(text: str) -> str:
    return "\n".join(_INDENT + line if line else line for line in text.split("\n"))


def render_stub(tool: Tool, name: str | None = None) -> str:
    """One tool as a Python stub, with the record classes it uses before it
    (``name``: the name shown, e.g. without the namespace)."""
    if name is None:
        return render_stubs([tool])
    renderer = _Renderer()
    function = renderer.function(tool, name)
    return "\n\n".join([*renderer.classes(), function]) + "\n"


class _Renderer:
    """Renders annotations, collecting the record classes they mention."""

    def __init__(self) -> None:
        self._names: dict[type, str] = {}
        self._order: list[type] = []
        self._uses: list[type] | None = None  # records the class being rendered mentions
        self._notes: list[str] = []

    # -- annotations --------------------------------------------------------------

    def typed(self, tp: Any) -> tuple[str, list[str]]:
        """``tp`` rendered, and the notes on the host types it mentions (``ISO 8601 date``)."""
        saved, self._notes = self._notes, []
        try:
            return self.annotation(tp), self._notes
        finally:
            self._notes = saved

    def annotation(self, tp: Any) -> str:
        tp, _ = unwrap_annotated(tp)
        if tp is None or tp is type(None):
            return "None"
        if tp is Any:
            return "Any"
        supertype = getattr(tp, "__supertype__", None)
        if supertype is not None:
            return self.annotation(supertype)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Literal:
            values = [a.value if isinstance(a, enum.Enum) else a for a in args]
            return "Literal[" + ", ".join(repr(v) for v in values) + "]"
        if origin is typing.Union or origin is types.UnionType:
            return " | ".join(self.annotation(a) for a in args)
        if origin is tuple:
            if args == ((),):
                return "tuple[()]"
            if len(args) == 2 and args[1] is Ellipsis:
                return f"tuple[{self.annotation(args[0])}, ...]"
            return "tuple[" + ", ".join(self.annotation(a) for a in args) + "]"
        if origin is cabc.Callable:
            return "Callable"
        if origin is not None:
            name = getattr(origin, "__name__", None) or str(origin)
            if not args:
                return str(name)
            return f"{name}[" + ", ".join(self.annotation(a) for a in args) + "]"
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return "Literal[" + ", ".join(repr(m.value) for m in tp) + "]"
            if is_typeddict(tp) or dataclasses.is_dataclass(tp) or pydantic_models.is_model(tp):
                return self._record(tp)
            return self._class(tp)
        text = repr(tp)
        for prefix in ("typing_extensions.", "typing.", "collections.abc."):
            text = text.replace(prefix, "")
        return text

    def _class(self, tp: type) -> str:
        """A class that is not a record: a JSON type, a host type, or ``Any``."""
        for base in (bool, str, int, float, list, dict, tuple, set, frozenset):
            if issubclass(tp, base):
                return base.__name__
        if tp is object:
            return "Any"
        form = json_form(tp)
        if form is None:
            return "Any"
        if form.note and form.note not in self._notes:
            self._notes.append(form.note)
        return form.annotation

    def _record(self, tp: type) -> str:
        name = self._names.get(tp)
        if name is None:
            taken = set(self._names.values())
            name = tp.__name__
            n = 2
            while name in taken:
                name = f"{tp.__name__}{n}"
                n += 1
            self._names[tp] = name
            self._order.append(tp)
        if self._uses is not None:
            self._uses.append(tp)
        return name

    # -- record classes -------------------------------------------------------------

    def classes(self) -> list[str]:
        """Every record class mentioned so far, each after the classes it uses."""
        rendered: dict[type, str] = {}
        uses: dict[type, list[type]] = {}
        i = 0
        while i < len(self._order):  # rendering a class may discover more classes
            tp = self._order[i]
            self._uses = []
            try:
                rendered[tp] = self._record_class(tp)
            finally:
                uses[tp], self._uses = self._uses, None
            i += 1
        out: list[str] = []
        placed: set[type] = set()

        def place(tp: type, path: frozenset[type]) -> None:
            if tp in placed or tp in path:  # a cycle cannot be ordered: first use wins
                return
            for used in uses[tp]:
                place(used, path | {tp})
            placed.add(tp)
            out.append(rendered[tp])

        for tp in self._order:
            place(tp, frozenset())
        return out

    def _record_class(self, tp: type) -> str:
        doc = parse_docstring(class_docstring(tp))
        lines = [f"class {self._names[tp]}(TypedDict):"]
        if doc.description:
            lines.extend(_docstring(doc.description.splitlines(), _INDENT))
        fields: list[tuple[str, Any, bool, str]] = []
        if pydantic_models.is_model(tp):
            fields = pydantic_models.model_fields(tp)
        elif dataclasses.is_dataclass(tp):
            hints = typing.get_type_hints(tp, localns={tp.__name__: tp}, include_extras=True)
            for f in dataclasses.fields(tp):
                if not f.init:
                    continue
                has_default = (
                    f.default is not dataclasses.MISSING
                    or f.default_factory is not dataclasses.MISSING
                )
                meta = f.metadata.get("description") if f.metadata else None
                fields.append((f.name, hints.get(f.name, f.type), not has_default, meta or ""))
        else:
            hints = typing.get_type_hints(tp, localns={tp.__name__: tp}, include_extras=True)
            required = typeddict_required_keys(tp, hints)
            fields = [(n, h, n in required, "") for n, h in hints.items()]
        if not fields and not doc.description:
            lines.append(f"{_INDENT}pass")
        for name, hint, is_required, meta in fields:
            _, metadata = unwrap_annotated(hint)
            description = annotated_description(metadata) or doc.params.get(name) or meta
            description = _param_text(description, _metadata_constraints(metadata))
            rendered, notes = self.typed(hint)
            if not is_required:
                rendered = f"NotRequired[{rendered}]"
            line = f"{_INDENT}{name}: {rendered}"
            comment = "; ".join([*notes, " ".join(description.split())] if description else notes)
            if comment:
                line += f"  # {comment}"
            lines.append(line)
        return "\n".join(lines)

    # -- functions --------------------------------------------------------------------

    def function(self, t: Tool, name: str | None = None) -> str:
        params: list[str] = []
        param_notes: dict[str, list[str]] = {}
        star_done = False
        for p in t.params:
            if p.kind == "keyword_only" and not star_done:
                params.append("*")
                star_done = True
            rendered, param_notes[p.name] = self.typed(p.annotation)
            text = f"{p.name}: {rendered}"
            if not p.required:
                text += f" = {_default(p.default)}"
            params.append(text)
        returns = ""
        returns_comment = ""
        if t.return_annotation is not MISSING:
            rendered, notes = self.typed(t.return_annotation)
            returns = f" -> {rendered}"
            if notes:
                returns_comment = f"  # {'; '.join(notes)}"
        shown = name or t.name
        head = f"def {shown}({', '.join(params)}){returns}:"
        if len(head) > _MAX_LINE and params:
            inner = "".join(f"{_INDENT}{p},\n" for p in params)
            head = f"def {shown}(\n{inner}){returns}:"
        head += returns_comment

        intro, sections = split_intro(t.description)
        body: list[str] = intro.splitlines() if intro else []
        notes = []
        if t.read_only:
            notes.append(READ_ONLY_NOTE)
        if t.requires_approval:
            notes.append(REQUIRES_APPROVAL_NOTE)
        if notes:
            if body:
                body.append("")
            body.extend(notes)
        documented = [
            (p, _param_text(p.description, p.schema, param_notes.get(p.name, [])))
            for p in t.params
        ]
        documented = [(p, text) for p, text in documented if text]
        if documented:
            if body:
                body.append("")
            body.append("Args:")
            body.extend(f"{_INDENT}{p.name}: {text}" for p, text in documented)
        if t.examples:
            if body:
                body.append("")
            body.append("Examples:")
            body.extend(f"{_INDENT}{_example_call(t.name, e)}" for e in t.examples)
        if sections:
            if body:
                body.append("")
            body.extend(sections.splitlines())
        if not body:
            return f"{head}\n{_INDENT}..."
        return head + "\n" + "\n".join(_docstring(body, _INDENT))


def _docstring(lines: list[str], indent: str) -> list[str]:
    """Lines wrapped in a triple-quoted docstring at ``indent``."""
    safe = [line.replace('"""', '\\"\\"\\"') for line in lines]
    if len(safe) == 1:
        return [f'{indent}"""{safe[0]}"""']
    out = [f'{indent}"""{safe[0]}']
    out.extend(f"{indent}{line}" if line.strip() else "" for line in safe[1:])
    out.append(f'{indent}"""')
    return out


def _param_text(description: str, schema: dict[str, Any], notes: Iterable[str] = ()) -> str:
    """A parameter's description plus its constraints, e.g. ``Rows (>= 1, <= 100)``.

    ``notes`` (what a host type's string looks like) come first in the parentheses.
    """
    text = " ".join(description.split())
    extras = list(notes)
    constraints = describe_constraints(schema)
    if constraints:
        extras.append(constraints)
    if extras:
        joined = "; ".join(extras)
        text = f"{text} ({joined})" if text else joined[:1].upper() + joined[1:]
    return text


def _metadata_constraints(metadata: list[Any]) -> dict[str, Any]:
    """The constraint keywords of ``Annotated`` metadata (for record fields)."""
    try:
        return constraint_keywords(metadata, ("string", "integer", "number"))
    except ConstraintError:
        return {}


def _example_call(name: str, example: dict[str, Any]) -> str:
    """An example as a call: ``name(a=1, b='x')``."""
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in example.items()) + ")"


def _default(value: Any) -> str:
    json_value = to_json_default(value)
    return "..." if json_value is MISSING else repr(json_value)
