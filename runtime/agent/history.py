"""Continuing a conversation: which variables the earlier scripts left in the session.

When a run continues ``message_history``, the model remembers its earlier
scripts, but the sandbox session may be a new one (the conversation was
saved and loaded) or the same one (``session=``). The agent finds the names
the earlier ``run_script`` calls bound at module level (:func:`bound_names`),
asks the session which of them exist with one small probe script
(:func:`probe_script`, which leaves the namespace as it found it), and tells
the model which variables it still has and which are gone.
"""

from __future__ import annotations

import ast
import builtins
import keyword
from collections.abc import Iterable
from typing import Any

from .. import prompts
from ..providers.base import Message, Provider

__all__ = ["PROBE_FUNCTION", "bound_names", "earlier_scripts", "parse_probe", "probe_script"]

#: The helper the probe script defines and deletes again.
PROBE_FUNCTION = "toolscript_probe_names"

_BUILTINS = frozenset(dir(builtins))


def earlier_scripts(provider: Provider, messages: Iterable[Message]) -> list[str]:
    """The code of every ``run_script`` call in ``messages``, in order."""
    codes: list[str] = []
    for message in messages:
        for call in provider.tool_calls_in(message):
            if call.name != prompts.RUN_SCRIPT_NAME:
                continue
            arguments = call.parsed_arguments() or {}
            code = arguments.get("code")
            if isinstance(code, str):
                codes.append(code)
    return codes


def bound_names(codes: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """Module-level names the scripts bind (assignments, ``def``, ``class``,
    imports, loop and ``with`` targets ...), in first-seen order; builtins,
    private names and ``exclude`` (e.g. the tools) left out."""
    skip = set(exclude) | _BUILTINS
    seen: dict[str, None] = {}
    for code in codes:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for name in _bound_at_top(tree.body):
            if name.isidentifier() and not name.startswith("_") and name not in skip:
                seen.setdefault(name, None)
    return list(seen)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound_at_top(statements: list[ast.stmt]) -> Iterable[str]:
    for node in statements:
        yield from _bound_in(node)


def _bound_in(node: ast.AST) -> Iterable[str]:
    """Names ``node`` binds in the module scope (not inside nested scopes)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node.id
        return
    if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
        yield node.target.id  # a walrus binds in the enclosing scope, even in comprehensions
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            yield from _walrus_targets(child)
            continue
        yield from _bound_in(child)


def _walrus_targets(scope: ast.AST) -> Iterable[str]:
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        for child in ast.walk(scope):
            if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
                yield child.target.id


def probe_script(names: list[str]) -> str:
    """A script printing which of ``names`` are defined, then deleting its helper."""
    checks = "".join(
        f"    try:\n        {name}\n        found.append({name!r})\n"
        "    except NameError:\n        pass\n"
        for name in names
        if name.isidentifier() and not keyword.iskeyword(name)
    )
    return (
        f"def {PROBE_FUNCTION}():\n    found = []\n{checks}    return found\n"
        f"print({PROBE_FUNCTION}())\ndel {PROBE_FUNCTION}\n"
    )


def parse_probe(result: Any) -> list[str] | None:
    """The names a probe run found, or None when the probe failed."""
    if not getattr(result, "ok", False):
        return None
    try:
        found = ast.literal_eval(str(getattr(result, "stdout", "")).strip())
    except (ValueError, SyntaxError):
        return None
    if not isinstance(found, list):
        return None
    return [str(n) for n in found]
