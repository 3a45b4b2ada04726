"""Continuing a conversation: which variables the earlier scripts left in the session.

When a run continues ``message_history``, the model remembers its earlier
scripts, but the sandbox session may be a new one (the conversation was
saved and loaded) or the same one (``session=``). The agent finds the names
the earlier ``run_script`` calls bound at module level (:func:`bound_names`),
asks the session which of them exist with one small probe script
(:func:`probe_script`, which leaves the namespace as it found it), and tells
the model which variables it still has and which are gone.

The probe runs in the model's namespace, where every name an earlier script
bound (``print``, ``NameError``, a tool's name ...) may mean something else
now. So it resolves no name a script could have bound except the ones it
probes, and those it only reads, never calls: its helper has a fresh random
name, a bare ``except``, only locals with that random name, and it answers
through the run's value, not ``print``.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import secrets
from collections.abc import Iterable
from typing import Any

from .. import prompts
from ..providers.base import Message, Provider

__all__ = ["PROBE_FUNCTION", "bound_names", "earlier_scripts", "parse_probe", "probe_script"]

#: The start of the name of the helper the probe script defines and deletes again
#: (a random suffix follows, so no earlier script can have bound it).
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


def probe_script(names: list[str], token: str | None = None) -> str:
    """A script whose value is the list of those of ``names`` that are defined.

    It reads each name and calls nothing a script can rebind (see the module
    docs); its helper, ``{PROBE_FUNCTION}_{token}``, deletes itself as it
    starts. ``token`` (default: random hex) must not be guessable by the
    script whose names are probed.
    """
    token = token or secrets.token_hex(8)
    helper, found = f"{PROBE_FUNCTION}_{token}", f"toolscript_found_{token}"
    checks = "".join(
        f"    try:\n        {name}\n        {found}.append({name!r})\n"
        "    except:\n        pass\n"
        for name in names
        if name.isidentifier() and not keyword.iskeyword(name) and name not in (helper, found)
    )
    return (
        f"def {helper}():\n    global {helper}\n    del {helper}\n    {found} = []\n"
        f"{checks}    return {found}\n{helper}()\n"
    )


def parse_probe(result: Any, names: Iterable[str] | None = None) -> list[str] | None:
    """The names a probe run found (its value; only those of ``names`` when given),
    or None when the probe failed."""
    if not getattr(result, "ok", False):
        return None
    found = getattr(result, "value", None)
    if not isinstance(found, list) or not all(isinstance(n, str) for n in found):
        return None
    if names is not None:
        asked = set(names)
        found = [n for n in found if n in asked]
    return list(found)
