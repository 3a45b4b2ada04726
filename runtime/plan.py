"""Plan approval: read a script before it runs, approve what it can do once.

:func:`analyze` walks a script's AST and lists every tool it can call:

* direct calls ``tool(a, b=...)`` and ``parallel(tool, [...])`` /
  ``parallel([(tool, {...}), ...])`` with literal argument lists;
* for each argument, the set of values it can take when that is static:
  a literal, a name assigned a literal once at top level, or the loop
  variable of a ``for`` over a literal list/tuple or a ``range``;
* how many times a call can run: the product of enclosing ``for`` loop
  bounds (``range`` with literal bounds, literal sequences); ``while`` loops,
  loops over computed values and recursion make the count unbounded;
* a tool used in any other way (stored in a variable, passed to a function)
  is listed with every argument unknown and no count bound.

:class:`PlanApproval` is an approval hook built from an approved plan: a
call that matches a planned call (same tool, each static argument within
its set of values, within the count) passes; anything else is gated by the
fallback hook individually (default: denied)::

    plan = analyze(code, runtime.tools)
    print(plan.describe())                  # show it to a human once
    runtime.approve = PlanApproval(plan, fallback=TerminalApproval())
"""

from __future__ import annotations

import ast
import contextlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .approval import ApprovalHook, Decision, ToolCallRequest, decide

__all__ = ["ANY", "Plan", "PlanApproval", "PlannedCall", "analyze"]


class _Any:
    """Marker: the argument's value is not known before the run."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()
"""An argument whose value cannot be known statically."""


_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


@dataclass
class PlannedCall:
    """One place in the script that can call a tool.

    ``args`` maps parameter names to a tuple of the values the argument can
    take, or :data:`ANY`; ``max_calls`` is how often this place can run
    (``None``: unbounded or unknown); ``line`` is the script line.
    """

    tool: str
    args: dict[str, Any]
    max_calls: int | None
    line: int
    exact: bool = True
    """False if the tool is used indirectly (any arguments, any count)."""

    def allows(self, args: Mapping[str, Any]) -> bool:
        """True if ``args`` fit this planned call's static argument values."""
        if not self.exact:
            return True
        for name, values in self.args.items():
            if values is ANY:
                continue
            if name not in args:
                return False
            if _key(args[name]) not in {_key(v) for v in values}:
                return False
        return True

    def describe(self) -> str:
        """``send_email(to in ['a@x'], body=ANY) x <= 3  (line 4)``."""
        if not self.exact:
            return f"{self.tool}(...) with any arguments, any number of times (line {self.line})"
        parts = []
        for name, values in self.args.items():
            if values is ANY:
                parts.append(f"{name}=ANY")
            elif len(values) == 1:
                parts.append(f"{name}={values[0]!r}")
            else:
                parts.append(f"{name} in {list(values)!r}")
        count = "unbounded" if self.max_calls is None else f"<= {self.max_calls}"
        return f"{self.tool}({', '.join(parts)}) x {count}  (line {self.line})"


@dataclass
class Plan:
    """What a script can call (see :func:`analyze`)."""

    calls: list[PlannedCall] = field(default_factory=list)
    syntax_error: str | None = None

    @property
    def tools(self) -> list[str]:
        """The tools the script can call, sorted."""
        return sorted({call.tool for call in self.calls})

    def max_calls(self, tool: str) -> int | None:
        """Upper bound of calls of ``tool`` (``None``: unbounded)."""
        total = 0
        for call in self.calls:
            if call.tool == tool:
                if call.max_calls is None or not call.exact:
                    return None
                total += call.max_calls
        return total

    def describe(self) -> str:
        """The plan as text for a human to approve."""
        if self.syntax_error:
            return f"the script does not parse: {self.syntax_error}"
        if not self.calls:
            return "the script calls no tools"
        return "\n".join(call.describe() for call in self.calls)


# --- analysis ---------------------------------------------------------------------


class _Analyzer(ast.NodeVisitor):
    def __init__(self, tools: Mapping[str, list[str]]) -> None:
        self.tools = tools
        self.calls: list[PlannedCall] = []
        self.constants: dict[str, tuple[Any, ...]] = {}
        self.loops: list[tuple[str | None, tuple[Any, ...] | None, int | None]] = []
        self.handled: set[int] = set()

    # values --------------------------------------------------------------------
    def values(self, node: ast.expr) -> Any:
        """The tuple of values ``node`` can have, or ANY."""
        with contextlib.suppress(*_LITERAL_ERRORS):
            return (ast.literal_eval(node),)
        if isinstance(node, ast.Name):
            for variable, values, _ in reversed(self.loops):
                if variable == node.id:
                    return values if values is not None else ANY
            if node.id in self.constants:
                return self.constants[node.id]
        return ANY

    def multiplier(self) -> int | None:
        total = 1
        for _, _, count in self.loops:
            if count is None:
                return None
            total *= count
        return total

    # statements ----------------------------------------------------------------
    def collect_constants(self, tree: ast.Module) -> None:
        assigned: dict[str, int] = {}
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For,
                                   ast.comprehension)):
                targets = [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned[name.id] = assigned.get(name.id, 0) + 1
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and assigned.get(target.id) == 1:
                    with contextlib.suppress(*_LITERAL_ERRORS):
                        self.constants[target.id] = (ast.literal_eval(node.value),)

    def loop_domain(self, iterable: ast.expr) -> tuple[tuple[Any, ...] | None, int | None]:
        """Values and count of a ``for`` loop's iterable, when static."""
        values = self.values(iterable)
        if values is not ANY and len(values) == 1 and isinstance(values[0], (list, tuple)):
            items = tuple(values[0])
            return items, len(items)
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                and iterable.func.id == "range" and not iterable.keywords):
            bounds = [self.values(arg) for arg in iterable.args]
            if all(b is not ANY and len(b) == 1 and isinstance(b[0], int) for b in bounds):
                numbers = range(*[b[0] for b in bounds])
                if len(numbers) <= 10_000:
                    return tuple(numbers), len(numbers)
                return None, len(numbers)
        return None, None

    def loop_target(self, target: ast.expr) -> str | None:
        return target.id if isinstance(target, ast.Name) else None

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        values, count = self.loop_domain(node.iter)
        self.loops.append((self.loop_target(node.target), values, count))
        for child in node.body:
            self.visit(child)
        self.loops.pop()
        for child in node.orelse:
            self.visit(child)

    def visit_While(self, node: ast.While) -> None:
        self.loops.append((None, None, None))
        self.generic_visit(node)
        self.loops.pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp
                       | ast.DictComp) -> None:
        pushed = 0
        for generator in node.generators:
            self.visit(generator.iter)
            values, count = self.loop_domain(generator.iter)
            # a filter (generator.ifs) only lowers the count: the bound still holds
            self.loops.append((self.loop_target(generator.target), values, count))
            pushed += 1
            for condition in generator.ifs:
                self.visit(condition)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        for _ in range(pushed):
            self.loops.pop()

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_GeneratorExp = _comprehension
    visit_DictComp = _comprehension

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        # a function body can run any number of times (calls, recursion)
        self.loops.append((None, None, None))
        self.generic_visit(node)
        self.loops.pop()

    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    # calls ---------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.tools:
            self.handled.add(id(func))
            self.add_call(func.id, node.args, node.keywords, node.lineno)
        elif isinstance(func, ast.Name) and func.id == "parallel":
            self.visit_parallel(node)
        self.generic_visit(node)

    def visit_parallel(self, node: ast.Call) -> None:
        args = node.args
        if len(args) == 2 and isinstance(args[0], ast.Name) and args[0].id in self.tools:
            tool = args[0].id
            if isinstance(args[1], (ast.List, ast.Tuple)):
                self.handled.add(id(args[0]))
                for item in args[1].elts:
                    self.add_parallel_item(tool, item, node.lineno)
        elif len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            for pair in args[0].elts:
                if (isinstance(pair, (ast.Tuple, ast.List)) and pair.elts
                        and isinstance(pair.elts[0], ast.Name) and pair.elts[0].id in self.tools):
                    self.handled.add(id(pair.elts[0]))
                    item = pair.elts[1] if len(pair.elts) > 1 else ast.Dict(keys=[], values=[])
                    self.add_parallel_item(pair.elts[0].id, item, node.lineno)

    def add_parallel_item(self, tool: str, item: ast.expr, line: int) -> None:
        if isinstance(item, ast.Dict) and all(isinstance(k, ast.Constant) for k in item.keys):
            keywords = [ast.keyword(arg=k.value, value=v)  # type: ignore[union-attr]
                        for k, v in zip(item.keys, item.values, strict=True)]
            self.add_call(tool, [], keywords, line)
        elif isinstance(item, (ast.Tuple, ast.List)):
            self.add_call(tool, list(item.elts), [], line)
        else:
            self.add_call(tool, [item], [], line)

    def add_call(self, tool: str, args: list[ast.expr], keywords: list[ast.keyword],
                 line: int) -> None:
        params = self.tools[tool]
        planned: dict[str, Any] = {name: ANY for name in params}
        exact = True
        for index, arg in enumerate(args):
            if isinstance(arg, ast.Starred) or index >= len(params):
                exact = False
                break
            planned[params[index]] = self.values(arg)
        for keyword in keywords:
            if keyword.arg is None:  # **kwargs: any argument may be anything
                exact = False
                continue
            planned[keyword.arg] = self.values(keyword.value)
        if not exact:
            planned = {name: ANY for name in params}
        self.calls.append(PlannedCall(tool, planned, self.multiplier(), line, exact=True))

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.tools and id(node) not in self.handled:
            # used other than by a direct call: anything can happen with it
            self.calls.append(PlannedCall(node.id, {}, None, node.lineno, exact=False))


def _tool_params(tools: Any) -> dict[str, list[str]]:
    """``{tool name: positional parameter names}`` from a registry, Tools or names."""
    if isinstance(tools, Mapping):
        return {str(name): list(params) for name, params in tools.items()}
    if hasattr(tools, "describe_for_sandbox"):
        return {spec["name"]: [p["name"] for p in spec["params"]]
                for spec in tools.describe_for_sandbox()}
    result: dict[str, list[str]] = {}
    for item in tools:
        if isinstance(item, str):
            result[item] = []
        else:
            result[item.name] = [p.name for p in item.params]
    return result


def analyze(code: str, tools: Any) -> Plan:
    """List what ``code`` can call among ``tools`` (a registry, Tools, names, or
    ``{name: [param, ...]}``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Plan(syntax_error=f"{exc.msg} (line {exc.lineno})")
    analyzer = _Analyzer(_tool_params(tools))
    analyzer.collect_constants(tree)
    analyzer.visit(tree)
    return Plan(analyzer.calls)


class PlanApproval:
    """An approval hook that passes the calls of an approved plan.

    A call passes if it matches a planned call of its tool (see
    :meth:`PlannedCall.allows`) and the run has not used up the plan's count
    for that tool; anything else goes to ``fallback`` (``None``: denied).
    Counts are kept per run.
    """

    def __init__(self, plan: Plan, fallback: ApprovalHook | None = None,
                 *, approved_by: str = "plan") -> None:
        self.plan = plan
        self.fallback = fallback
        self.approved_by = approved_by
        self._used: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def __call__(self, request: ToolCallRequest) -> Decision:
        args = request.args if isinstance(request.args, Mapping) else {}
        inside = [call for call in self.plan.calls
                  if call.tool == request.tool and call.allows(args)]
        if inside:
            bound = self.plan.max_calls(request.tool)
            with self._lock:
                key = (request.run_id, request.tool)
                used = self._used.get(key, 0)
                if bound is None or used < bound:
                    self._used[key] = used + 1
                    where = ", ".join(f"line {call.line}" for call in inside)
                    return Decision.allow(f"inside the approved plan ({where})")
            reason = f"outside the approved plan: more than {bound} call(s) of {request.tool}"
        else:
            reason = f"outside the approved plan: {request.tool}({_short(args)})"
        if self.fallback is None:
            return Decision.deny(reason)
        decision, _ = decide(self.fallback, request)
        return Decision(decision.approved, f"{reason}; {decision.reason}".rstrip("; "))


def _short(args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), default=repr)
    return text if len(text) <= 200 else text[:200] + "..."


def planned_tools(plans: Iterable[Plan]) -> list[str]:
    """The union of tools over several plans (e.g. one per script of a session)."""
    return sorted({tool for plan in plans for tool in plan.tools})
