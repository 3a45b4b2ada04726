"""Parameters that look like objects the host holds, not values a model sends.

A tool written for an agent framework often takes its environment as a
parameter (``account: BankAccount``, ``inbox: Inbox``): an object the host
holds and passes in.  Registered without ``inject=``, such a parameter
becomes a required argument whose schema (often kilobytes) the model must
fill in, and the first call fails.  :func:`dependency_reasons` says why a
parameter looks like such an object; registration warns with
:class:`~toolscript.errors.DependencyParameterWarning` and ``toolscript tools
--lint`` reports ``param-dependency``.  The signals:

* *large*: the parameter is an object whose JSON Schema (with the types it
  references) is over :data:`LARGE_SCHEMA_BYTES`;
* *nested*: the object holds lists or dicts of other object models (an inbox
  of emails, an account of transactions): records the host keeps;
* *state*: the function changes the parameter in place
  (``account.balance -= x``, ``inbox.emails.append(e)``), a change a
  model-sent copy would lose; or the tool's module changes objects of that
  class elsewhere (a module-level instance, another function's parameter).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import json
import re
import sys
import textwrap
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from toolscript.errors import DependencyParameterWarning

from . import pydantic_models
from .schema import unwrap_annotated

__all__ = [
    "LARGE_SCHEMA_BYTES",
    "dependency_reasons",
    "injection_fix",
    "object_type_key",
    "schema_size",
    "warn_dependencies",
]

LARGE_SCHEMA_BYTES = 2048
"""A parameter object whose schema is larger than this is probably not model input."""

_MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "add",
    "discard", "setdefault", "sort", "reverse",
})


def dependency_reasons(
    name: str,
    schema: Mapping[str, Any],
    defs: Mapping[str, Any],
    *,
    annotation: Any = None,
    func: Callable[..., Any] | None = None,
    shared_with: Sequence[str] = (),
) -> list[str]:
    """Why parameter ``name`` looks like an injected dependency ([] if it does not).

    ``schema`` is the parameter's JSON Schema and ``defs`` the ``$defs`` it
    refers to; ``annotation`` and ``func`` (when known) add the *state*
    signals; ``shared_with`` names other tools of the set taking the same
    type (a type holding records that several tools take is shared state).
    """
    target = _object_def(schema, defs)
    if target is None:
        return []
    reasons: list[str] = []
    size = schema_size(schema, defs)
    if size > LARGE_SCHEMA_BYTES:
        reasons.append(f"its JSON Schema is {size / 1024:.1f} KB")
    nested = _nested_collections(target, defs)
    if nested:
        reasons.append("it holds collections of other records (" + ", ".join(nested[:3]) + ")")
    cls = _class_of(annotation)
    if cls is not None and func is not None:
        changed = _function_mutations(func, name)
        if changed:
            reasons.append(f"the function changes it in place ({', '.join(changed[:3])})")
        kept = _module_state(func, cls)
        if kept:
            reasons.append(
                f"the tool's module keeps {cls.__name__} objects as state and changes them "
                f"({', '.join(kept[:3])})"
            )
    if shared_with and _record_fields(target, defs):
        others = ", ".join(sorted(shared_with)[:3]) + (", ..." if len(shared_with) > 3 else "")
        reasons.append(f"other tools take the same records too ({others})")
    return reasons


def object_type_key(
    schema: Mapping[str, Any], defs: Mapping[str, Any], annotation: Any = None
) -> str | None:
    """What identifies a parameter's object type across tools (class or ``$defs`` name)."""
    cls = _class_of(annotation)
    if cls is not None:
        return f"{cls.__module__}.{cls.__qualname__}"
    if _object_def(schema, defs) is None:
        return None
    for branch in [schema, *(schema.get("anyOf") or [])]:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if isinstance(ref, str):
            return ref.rsplit("/", 1)[-1]
    return None


def warn_dependencies(
    tool: str,
    func: Callable[..., Any],
    params: Iterable[tuple[str, Mapping[str, Any], Any]],
    defs: Mapping[str, Any],
) -> None:
    """Warn (:class:`DependencyParameterWarning`) for each ``(name, schema, annotation)``
    parameter of ``tool`` that looks like an object the host holds.

    The warning points at the function's definition and names the fix.
    """
    for name, schema, annotation in params:
        reasons = dependency_reasons(name, schema, defs, annotation=annotation, func=func)
        if not reasons:
            continue
        cls = _class_of(annotation)
        target = _object_def(schema, defs) or {}
        type_name = cls.__name__ if cls is not None else str(target.get("title") or "object")
        fix = injection_fix(tool, name, type_name)
        message = (
            f"tool {tool!r}: parameter {name!r} ({type_name}) looks like an object the host "
            f"holds, not a value a model can send: {'; '.join(reasons)}. As it stands the "
            f"model must write the whole object as an argument. {fix[:1].upper()}{fix[1:]}. "
            "If the model really sends it, silence this with warnings.filterwarnings('ignore', "
            "category=DependencyParameterWarning)"
        )
        code = getattr(inspect.unwrap(func), "__code__", None)
        if code is None:
            warnings.warn(DependencyParameterWarning(message), stacklevel=3)
            continue
        warnings.warn_explicit(
            DependencyParameterWarning(message),
            DependencyParameterWarning,
            code.co_filename,
            code.co_firstlineno,
            module=getattr(func, "__module__", None) or "toolscript",
        )


def injection_fix(tool: str, param: str, type_name: str) -> str:
    """How to inject a parameter: the ``inject=`` and ``Injected`` spellings."""
    return (
        f"if the host holds it, inject it: Tool({tool}, inject={{{param!r}: {param!r}}}) or "
        f"annotate it `{param}: Injected[{type_name}]`, and pass the object with "
        f"Runtime(context={{{param!r}: ...}}); it then leaves the schema and the stub"
    )


def schema_size(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> int:
    """Bytes of compact JSON of ``schema`` plus every ``$defs`` entry it reaches."""
    seen: dict[str, Any] = {}
    pending = [schema]
    while pending:
        node = pending.pop()
        for ref in _refs(node):
            if ref not in seen and ref in defs:
                seen[ref] = defs[ref]
                pending.append(defs[ref])
    return len(json.dumps({"schema": schema, "defs": seen}, separators=(",", ":"), default=str))


def _refs(node: Any) -> list[str]:
    """Names of the ``#/$defs/NAME`` references anywhere in ``node``."""
    out: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                out.append(ref[len("#/$defs/") :])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _resolve(node: Any, defs: Mapping[str, Any]) -> Any:
    """``node`` with a top-level ``$ref`` followed (once per hop, cycles stop)."""
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            return node
        seen.add(name)
        node = defs[name]
    return node


def _non_null(node: Any, defs: Mapping[str, Any]) -> list[Any]:
    """The branches of ``node`` other than null (``X | None`` -> ``[X]``)."""
    node = _resolve(node, defs)
    if isinstance(node, dict) and isinstance(node.get("anyOf"), list):
        branches = [_resolve(b, defs) for b in node["anyOf"]]
        return [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
    return [node]


def _is_object_model(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and node.get("type") == "object"
        and isinstance(node.get("properties"), dict)
        and bool(node["properties"])
    )


def _object_def(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object model a parameter schema stands for (through ``$ref``, ``| None``)."""
    branches = _non_null(dict(schema), defs)
    if len(branches) == 1 and _is_object_model(branches[0]):
        found: dict[str, Any] = branches[0]
        return found
    return None


def _nested_collections(target: Mapping[str, Any], defs: Mapping[str, Any]) -> list[str]:
    """``field: list of Model`` for the fields holding collections of other records,
    when they make ``target`` a store of records rather than one input value.

    That is: two or more such fields (``transactions`` and
    ``scheduled_transactions``), or records that hold collections of records
    in turn.  One list of line items (an order) or a recursive tree is input.
    """
    fields = [f for f in _record_fields(target, defs) if f[2] is not target]
    deep = any(
        inner is not item and inner is not target
        for _, _, item in fields
        for _, _, inner in _record_fields(item, defs)
    )
    if len(fields) < 2 and not deep:
        return []
    return [f"{name}: {kind} of {item.get('title') or 'record'}" for name, kind, item in fields]


def _record_fields(
    target: Mapping[str, Any], defs: Mapping[str, Any]
) -> list[tuple[str, str, dict[str, Any]]]:
    """``(field, "list" or "dict", record schema)`` for each field holding records."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for field_name, prop in (target.get("properties") or {}).items():
        for branch in _non_null(prop, defs):
            found = _collection_of_records(branch, defs)
            if found is not None:
                out.append((field_name, *found))
                break
    return out


def _collection_of_records(
    node: Any, defs: Mapping[str, Any], depth: int = 0
) -> tuple[str, dict[str, Any]] | None:
    """``("list" or "dict", record)`` if ``node`` is a list or dict (of lists) of records."""
    if not isinstance(node, dict) or depth > 1:
        return None
    if node.get("type") == "array":
        kind, inner = "list", node.get("items")
    elif node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        kind, inner = "dict", node["additionalProperties"]
    else:
        return None
    for item in _non_null(inner, defs):
        if _is_object_model(item):
            return kind, item
        deeper = _collection_of_records(item, defs, depth + 1)
        if deeper is not None:
            return kind, deeper[1]
    return None


def _class_of(annotation: Any) -> type | None:
    """The model or dataclass class of an annotation (``X``, ``X | None``), if any."""
    bare, _ = unwrap_annotated(annotation)
    if typing.get_origin(bare) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(bare) if a is not type(None)]
        bare = members[0] if len(members) == 1 else None
    is_record = dataclasses.is_dataclass(bare) or pydantic_models.is_model(bare)
    if isinstance(bare, type) and is_record:
        return bare
    return None


def _function_mutations(func: Callable[..., Any], param: str) -> list[str]:
    """Source snippets where ``func`` changes ``param`` in place (best effort)."""
    tree = _parse(inspect.unwrap(func))
    return _mutations(tree, {param}) if tree is not None else []


def _module_state(func: Callable[..., Any], cls: type) -> list[str]:
    """Where the tool's module changes ``cls`` objects it keeps or receives (best effort).

    A module-level instance alone is no evidence (a default, an example); one
    the module changes (``STATE.items.append(x)``), or a parameter of that
    class another function changes, is state.
    """
    module_name = getattr(func, "__module__", "") or ""
    module = sys.modules.get(module_name)
    tree = _module_tree(module_name, id(module)) if module is not None else None
    if module is None or tree is None:
        return []
    held = {
        name for name, value in vars(module).items()
        if not name.startswith("__") and isinstance(value, cls)
    }
    found = _mutations(tree, held) if held else []
    own = getattr(inspect.unwrap(func), "__name__", None)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name == own:
            continue
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        typed = {
            a.arg for a in args
            if a.annotation is not None
            and cls.__name__ in re.findall(r"\w+", ast.unparse(a.annotation))
        }
        if typed:
            found.extend(f"{node.name}: {m}" for m in _mutations(node, typed))
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=32)
def _module_tree(name: str, ident: int) -> ast.AST | None:
    """The AST of module ``name`` (parsed once per module object ``ident``)."""
    module = sys.modules.get(name)
    return _parse(module) if module is not None and id(module) == ident else None


def _parse(obj: Any) -> ast.AST | None:
    """The AST of ``obj``'s source, or None when the source is not available."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None


def _mutations(tree: ast.AST, roots: set[str]) -> list[str]:
    """Source snippets in ``tree`` that change objects named ``roots`` in place."""
    found: list[str] = []

    def rooted(node: ast.AST) -> bool:
        """True for ``root.x``, ``root.x[i]``, ``root.x.y``... (not ``root`` alone)."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
            if isinstance(node, ast.Name) and node.id in roots:
                return True
        return False

    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and rooted(node.func.value)
        ):
            found.append(ast.unparse(node.func) + "(...)")
        for target in targets:
            if rooted(target):
                found.append(ast.unparse(target) + " = ...")
    return list(dict.fromkeys(found))
