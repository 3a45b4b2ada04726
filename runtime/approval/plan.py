"""Plan approval: read a script before it runs, approve what it can do once.

:func:`analyze` walks a script's AST and lists every place (*call site*)
that can call a tool:

* direct calls ``tool(a, b=...)`` and ``parallel(tool, [...])`` /
  ``parallel([(tool, {...}), ...])`` with literal argument lists;
* for each argument, the set of values it can take when that is provable: a
  literal, a name bound exactly once in the whole script (by a top-level
  assignment of a literal, and a list or dict only if nothing can change
  it), or the loop variable of a ``for`` over a literal or such a constant
  or a ``range``; an omitted argument takes its parameter's default;
  anything else is ``<computed>``;
* how many times the site can run: the product of the enclosing loops'
  lengths; ``while`` loops, function and lambda bodies (calls, recursion)
  and loops over computed values make it ``unbounded``;
* a tool used in any other way (stored in a variable, passed to a function,
  its name rebound, ``*args``/``**kwargs``) is listed as used indirectly:
  any arguments, unbounded.

Names are taken for what they are in a fresh namespace: a script that binds
``range``, ``parallel`` or a tool's name anywhere loses the corresponding
proofs. What an earlier run of the session left behind cannot be seen, and
does not need to be: :class:`PlanApproval` enforces every value and count of
the plan when the calls arrive.

:class:`PlanApproval` is an approval hook built from a plan a human
approved. It is bound to the session it was approved for, to the script the
plan was made from (by the SHA-256 of its text), to the first run of that
script in that session and to the injected values (the user) of that run's
calls: calls from another session (even one running the identical script
for another user), another script, a later run or direct calls go to the
``fallback`` and never use up the plan. A call
passes on its own only if it fits a call site whose every value and count
is proven (each argument within its values, the site's count not used up;
counts are kept per site, not pooled per tool); a site with a computed
argument or an unbounded count sends its calls to the fallback, unless the
argument is listed in ``accept_computed``. Anything else goes to the
fallback (default: denied)::

    plan = analyze(code, runtime.tools)
    with runtime.session(context={"user_id": "u-42"}) as session:
        approval = PlanApproval(plan, session=session, fallback=TerminalApproval(),
                                accept_computed=["body"])
        print(approval.describe())          # show it to a human once
        runtime.approve = approval
        session.run(code)
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolscript.runtime.approval.hooks import ApprovalHook, Decision, ToolCallRequest, decide
from toolscript.tools.binding import render
from toolscript.tools.definition import IDEMPOTENCY_PARAM, MISSING

__all__ = ["ANY", "Plan", "PlanApproval", "PlannedCall", "analyze", "planned_tools"]


class _Computed:
    """Marker: the argument's value is not known before the run."""

    def __repr__(self) -> str:
        return "<computed>"


ANY: Any = _Computed()
"""An argument whose value cannot be proven statically (shown as ``<computed>``)."""

_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)
_MAX_RANGE_VALUES = 10_000


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _immutable(value: Any) -> bool:
    """True for values nothing can change in place (scalars, tuples and frozensets of them)."""
    if value is None or isinstance(value, (str, int, float, complex, bytes)):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(item) for item in value)
    return False


@dataclass
class PlannedCall:
    """One place in the script that can call a tool.

    Attributes:
        tool: the tool's name.
        args: parameter name -> tuple of the values the argument can take, or
            :data:`ANY` (computed); omitted arguments appear with their default.
        max_calls: how often this place can run (``None``: unbounded).
        line: the script line.
        exact: False if the tool is used indirectly (any arguments, any count).
        positional: positional arguments that could not be matched to a
            parameter name (their values, or :data:`ANY`).
    """

    tool: str
    args: dict[str, Any]
    max_calls: int | None
    line: int
    exact: bool = True
    positional: tuple[Any, ...] = ()

    @property
    def computed(self) -> list[str]:
        """The arguments whose values are not proven."""
        return [name for name, values in self.args.items() if values is ANY]

    def allows(self, args: Mapping[str, Any], accept_computed: Iterable[str] = ()) -> bool:
        """True if ``args`` (a call's final arguments) fit this site's proven values.

        A computed argument fits only if it is named in ``accept_computed``;
        an indirect use or unnamed positional arguments never fit.
        """
        if not self.exact or self.positional:
            return False
        accepted = set(accept_computed)
        for name, values in self.args.items():
            if values is ANY:
                if name not in accepted:
                    return False
                continue
            if name not in args:
                return False
            if _key(args[name]) not in {_key(v) for v in values}:
                return False
        return all(name in self.args for name in args)

    def describe(self) -> str:
        """``send_email(to='a@x', body=<computed>) x <= 3  (line 4)``."""
        if not self.exact:
            return (f"{self.tool}(...) used indirectly: any arguments, unbounded "
                    f"(line {self.line})")
        parts = [_show_values(values) for values in self.positional]
        for name, values in self.args.items():
            if values is ANY:
                parts.append(f"{name}=<computed>")
            elif len(values) == 1:
                parts.append(f"{name}={values[0]!r}")
            else:
                parts.append(f"{name} in {list(values)!r}")
        count = "unbounded" if self.max_calls is None else f"<= {self.max_calls}"
        return f"{self.tool}({', '.join(parts)}) x {count}  (line {self.line})"


def _show_values(values: Any) -> str:
    if values is ANY:
        return "<computed>"
    if len(values) == 1:
        return repr(values[0])
    return f"<one of {list(values)!r}>"


@dataclass
class Plan:
    """What a script can call (see :func:`analyze`).

    Attributes:
        calls: the call sites, in script order.
        syntax_error: why the script does not parse (then ``calls`` is empty).
        script_sha256: SHA-256 (hex) of the analysed script's text.
        notes: what the analysis could not prove about names (rebound
            builtins or tools), for the human reading the plan.
    """

    calls: list[PlannedCall] = field(default_factory=list)
    syntax_error: str | None = None
    script_sha256: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tools(self) -> list[str]:
        """The tools the script can call, sorted."""
        return sorted({call.tool for call in self.calls})

    def max_calls(self, tool: str) -> int | None:
        """Upper bound of calls of ``tool`` over all its sites (``None``: unbounded)."""
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
        return "\n".join([call.describe() for call in self.calls] + self.notes)


# --- analysis ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """What the analysis knows of a tool's parameters."""

    params: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)  # name -> (value,) or ANY


def _bindings(tree: ast.AST) -> Counter[str]:
    """How many places bind each name, anywhere in the script (every scope)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [alias.asname or alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            names = [node.name]
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names = [node.rest]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = list(node.names)
        counts.update(names)
    return counts


class _Analyzer(ast.NodeVisitor):
    def __init__(self, tools: Mapping[str, _Shape]) -> None:
        self.tools = dict(tools)
        self.calls: list[PlannedCall] = []
        self.constants: dict[str, tuple[Any, ...]] = {}
        self.loops: list[tuple[str | None, tuple[Any, ...] | None, int | None]] = []
        self.handled: set[int] = set()
        self.bound: Counter[str] = Counter()
        self.rebound_tools: set[str] = set()
        self.range_ok = True
        self.parallel_ok = True
        self.notes: list[str] = []

    # set-up --------------------------------------------------------------------
    def prepare(self, tree: ast.Module) -> None:
        self.bound = _bindings(tree)
        self.range_ok = self.bound["range"] == 0
        self.parallel_ok = self.bound["parallel"] == 0
        if not self.range_ok:
            self.notes.append("note: the script rebinds 'range': its loops count as unbounded")
        if not self.parallel_ok:
            self.notes.append("note: the script rebinds 'parallel': tools passed to it count "
                              "as used indirectly")
        self.rebound_tools = {name for name in self.tools if self.bound[name]}
        for name in sorted(self.rebound_tools):
            self.notes.append(f"note: the script rebinds the tool name {name!r}: its calls "
                              "count as indirect")
        self.collect_constants(tree)

    def collect_constants(self, tree: ast.Module) -> None:
        parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0]
            if not isinstance(target, ast.Name) or self.bound[target.id] != 1:
                continue
            with contextlib.suppress(*_LITERAL_ERRORS):
                value = ast.literal_eval(node.value)
                if _immutable(value) or self.only_read(tree, target.id, parents):
                    self.constants[target.id] = (value,)

    def only_read(self, tree: ast.Module, name: str, parents: Mapping[int, ast.AST]) -> bool:
        """True if every use of ``name`` only reads it: iterated by a loop or passed
        to a tool (nothing can append to, alias or change a list used so)."""
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and node.id == name
                    and isinstance(node.ctx, ast.Load)):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
                continue
            if isinstance(parent, ast.keyword):
                parent = parents.get(id(parent))
            if (isinstance(parent, ast.Call) and parent.func is not node
                    and isinstance(parent.func, ast.Name) and parent.func.id in self.tools
                    and parent.func.id not in self.rebound_tools):
                continue
            return False
        return True

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

    def loop_domain(self, iterable: ast.expr) -> tuple[tuple[Any, ...] | None, int | None]:
        """Values and count of a loop's iterable, when provable."""
        values = self.values(iterable)
        if values is not ANY and len(values) == 1 and isinstance(values[0], (list, tuple)):
            items = tuple(values[0])
            shown = items if all(_immutable(item) for item in items) else None
            return shown, len(items)
        if (self.range_ok and isinstance(iterable, ast.Call)
                and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
                and not iterable.keywords and 1 <= len(iterable.args) <= 3):
            bounds = [self.values(arg) for arg in iterable.args]
            if all(b is not ANY and len(b) == 1 and type(b[0]) is int for b in bounds):
                with contextlib.suppress(ValueError):
                    numbers = range(*[b[0] for b in bounds])
                    if len(numbers) <= _MAX_RANGE_VALUES:
                        return tuple(numbers), len(numbers)
                    return None, len(numbers)
        return None, None

    # statements ----------------------------------------------------------------
    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        values, count = self.loop_domain(node.iter)
        target = node.target
        # a for variable is trusted only if nothing else binds that name anywhere
        name = target.id if isinstance(target, ast.Name) and self.bound[target.id] == 1 else None
        self.loops.append((name, values, count))
        self.visit(node.target)
        for child in node.body:
            self.visit(child)
        self.loops.pop()
        for child in node.orelse:
            self.visit(child)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

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
            # a comprehension variable cannot be rebound inside it; a filter only
            # lowers the count, so the bound still holds
            target = generator.target
            name = target.id if isinstance(target, ast.Name) else None
            self.loops.append((name, values, count))
            pushed += 1
            self.visit(target)
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
        # a function body can run any number of times (calls, recursion), and its
        # names are not the module's: values from enclosing loops do not hold
        saved = self.loops
        self.loops = [(None, None, None)]
        self.generic_visit(node)
        self.loops = saved

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]
    visit_Lambda = visit_FunctionDef  # type: ignore[assignment]

    # calls ---------------------------------------------------------------------
    def is_tool(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in self.tools
                and node.id not in self.rebound_tools)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.is_tool(func):
            assert isinstance(func, ast.Name)
            self.handled.add(id(func))
            self.add_call(func.id, node.args, node.keywords, node.lineno)
        elif isinstance(func, ast.Name) and func.id == "parallel" and self.parallel_ok:
            self.visit_parallel(node)
        self.generic_visit(node)

    def visit_parallel(self, node: ast.Call) -> None:
        args = node.args
        if node.keywords:
            return
        if len(args) == 2 and self.is_tool(args[0]):
            assert isinstance(args[0], ast.Name)
            tool = args[0].id
            if isinstance(args[1], (ast.List, ast.Tuple)):
                self.handled.add(id(args[0]))
                for item in args[1].elts:
                    self.add_parallel_item(tool, item, node.lineno)
        elif len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            for pair in args[0].elts:
                if (isinstance(pair, (ast.Tuple, ast.List)) and 1 <= len(pair.elts) <= 2
                        and self.is_tool(pair.elts[0])):
                    first = pair.elts[0]
                    assert isinstance(first, ast.Name)
                    self.handled.add(id(first))
                    item = pair.elts[1] if len(pair.elts) > 1 else ast.Dict(keys=[], values=[])
                    self.add_parallel_item(first.id, item, node.lineno)

    def add_parallel_item(self, tool: str, item: ast.expr, line: int) -> None:
        if isinstance(item, ast.Dict) and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in item.keys):
            keywords = [ast.keyword(arg=k.value, value=v)  # type: ignore[union-attr]
                        for k, v in zip(item.keys, item.values, strict=True)]
            self.add_call(tool, [], keywords, line)
        elif isinstance(item, (ast.Tuple, ast.List)):
            self.add_call(tool, list(item.elts), [], line)
        elif isinstance(item, ast.Dict):  # computed keys: anything
            self.calls.append(PlannedCall(tool, {}, None, line, exact=False))
        else:
            self.add_call(tool, [item], [], line)

    def add_call(self, tool: str, args: list[ast.expr], keywords: list[ast.keyword],
                 line: int) -> None:
        shape = self.tools[tool]
        planned: dict[str, Any] = {}
        positional: list[Any] = []
        for index, arg in enumerate(args):
            if isinstance(arg, ast.Starred):  # *args: any argument may be anything
                self.calls.append(PlannedCall(tool, {}, None, line, exact=False))
                return
            if index < len(shape.positional):
                planned[shape.positional[index]] = self.values(arg)
            else:
                positional.append(self.values(arg))
        for keyword in keywords:
            if keyword.arg is None:  # **kwargs
                self.calls.append(PlannedCall(tool, {}, None, line, exact=False))
                return
            planned[keyword.arg] = self.values(keyword.value)
        for name in shape.params:
            if name not in planned and name in shape.defaults:
                planned[name] = shape.defaults[name]
        self.calls.append(PlannedCall(tool, planned, self.multiplier(), line,
                                      positional=tuple(positional)))

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.tools and id(node) not in self.handled:
            # used other than by a direct call: anything can happen with it
            self.calls.append(PlannedCall(node.id, {}, None, node.lineno, exact=False))


def _shape_of_tool(item: Any) -> _Shape:
    params = [p for p in item.params if p.name != IDEMPOTENCY_PARAM]
    defaults: dict[str, Any] = {}
    for p in params:
        if p.default is not MISSING and not p.required:
            defaults[p.name] = (render(p.default),)
    return _Shape(tuple(p.name for p in params),
                  tuple(p.name for p in params if p.kind != "keyword_only"), defaults)


def _tool_shapes(tools: Any) -> dict[str, _Shape]:
    """What is known of each tool's parameters, from a registry, Tools, names or
    ``{name: [param, ...]}`` (then omitted arguments count as computed)."""
    if isinstance(tools, Mapping):
        out = {}
        for name, params in tools.items():
            names = tuple(str(p) for p in params)
            out[str(name)] = _Shape(names, names, {p: ANY for p in names})
        return out
    result: dict[str, _Shape] = {}
    for item in tools:
        if isinstance(item, str):
            result[item] = _Shape()
        else:
            result[item.name] = _shape_of_tool(item)
    return result


def analyze(code: str, tools: Any) -> Plan:
    """List what ``code`` can call among ``tools`` (a registry, Tools, names, or
    ``{name: [param, ...]}``)."""
    digest = hashlib.sha256(code.encode("utf-8")).hexdigest()
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Plan(syntax_error=f"{exc.msg} (line {exc.lineno})", script_sha256=digest)
    except (ValueError, MemoryError, RecursionError) as exc:
        return Plan(syntax_error=f"cannot be analysed: {type(exc).__name__}",
                    script_sha256=digest)
    analyzer = _Analyzer(_tool_shapes(tools))
    try:
        analyzer.prepare(tree)
        analyzer.visit(tree)
    except RecursionError:
        return Plan(syntax_error="nested too deeply to analyse", script_sha256=digest)
    return Plan(analyzer.calls, script_sha256=digest, notes=analyzer.notes)


# --- approval ---------------------------------------------------------------------


class SessionLike(Protocol):
    """What a plan reads of the session it is approved for."""

    @property
    def id(self) -> str: ...




class PlanApproval:
    """An approval hook that passes the calls of an approved plan, once.

    Args:
        plan: from :func:`analyze`.
        session: the session the plan is approved for (a
            :class:`~toolscript.runtime.session.Session` or its ``id``): only
            that session's run of the script can use the plan.
        fallback: the hook asked for every call the plan does not cover
            (``None``: such calls are denied).
        approved_by: a name for the approval, used in reasons.
        accept_computed: arguments whose computed values the human accepts
            along with the plan: parameter names (``"body"``) or
            ``"tool.param"``; ``True`` accepts every computed argument. A
            site with an unbounded count is never passed on its own.
        injected: the injected values the plan is approved for, by parameter
            name as the hook sees them (``{"user_id": "u-42"}``); by default
            those of the first call that passes. Every call that passes must
            carry the same value for each such parameter it has.

    A call passes if it comes from ``session``, from the analysed script
    (same SHA-256), in the first run that called with it, with the plan's
    injected values, and fits a covered call site whose count is not used up;
    the site it is counted against is the most specific one that fits.
    Everything else goes to ``fallback`` (and uses up nothing).

    Raises:
        TypeError: ``session`` is missing or neither a session nor a string.
    """

    def __init__(self, plan: Plan, fallback: ApprovalHook | None = None,
                 *, session: SessionLike | str, approved_by: str = "plan",
                 accept_computed: Iterable[str] | bool = (),
                 injected: Mapping[str, Any] | None = None) -> None:
        self.plan = plan
        self.session_id = _session_id(session)
        """The session the plan is approved for."""
        self.fallback = fallback
        self.approved_by = approved_by
        self.accept_computed: frozenset[str] | bool = (
            accept_computed if isinstance(accept_computed, bool) else frozenset(accept_computed))
        self.run_id: str | None = None
        """The run the plan was bound to by its first call (``None`` until then)."""
        self.injected: dict[str, str] | None = (
            None if injected is None else {str(k): _key(v) for k, v in injected.items()})
        """The injected values the plan is bound to (JSON text by parameter name;
        ``None`` until the first call that passes, unless given)."""
        self._used = [0] * len(plan.calls)
        self._lock = threading.Lock()

    def accepted(self, call: PlannedCall) -> list[str]:
        """The computed arguments of ``call`` that ``accept_computed`` covers."""
        if self.accept_computed is True:
            return call.computed
        if self.accept_computed is False:
            return []
        names = self.accept_computed
        return [n for n in call.computed if n in names or f"{call.tool}.{n}" in names]

    def covers(self, call: PlannedCall) -> bool:
        """True if calls at this site can pass without the fallback."""
        return (call.exact and not call.positional and call.max_calls is not None
                and len(self.accepted(call)) == len(call.computed))

    def describe(self) -> str:
        """The plan as a human should approve it: each site, and whether its calls
        pass on their own or are asked (the fallback)."""
        if self.plan.syntax_error:
            return f"the script does not parse: {self.plan.syntax_error}; every call is asked"
        if not self.plan.calls:
            return "the script calls no tools"
        lines = []
        for call in self.plan.calls:
            if self.covers(call):
                accepted = self.accepted(call)
                extra = f"; any value of {', '.join(accepted)} accepted" if accepted else ""
                lines.append(f"{call.describe()}  -> passes{extra}")
            else:
                lines.append(f"{call.describe()}  -> asked: {self._why_not(call)}")
        lines.append("(values and counts are checked as the calls arrive, per call site, for "
                     f"this script's first run in session {self.session_id} only"
                     + (f", injected {_short(self._shown_injected())}" if self.injected else "")
                     + ")")
        return "\n".join(lines + self.plan.notes)

    def _why_not(self, call: PlannedCall) -> str:
        if not call.exact:
            return "used indirectly"
        if call.positional:
            return "positional arguments the plan cannot name"
        reasons = []
        computed = [n for n in call.computed if n not in self.accepted(call)]
        if computed:
            reasons.append(f"computed {', '.join(computed)}")
        if call.max_calls is None:
            reasons.append("unbounded count")
        return " and ".join(reasons)

    def __call__(self, request: ToolCallRequest) -> Decision:
        decision_or_reason = self._check(request)
        if isinstance(decision_or_reason, Decision):
            return decision_or_reason
        reason = decision_or_reason
        if self.fallback is None:
            return Decision.deny(reason)
        decision, _ = decide(self.fallback, request)
        return Decision(decision.approved, f"{reason}; {decision.reason}".rstrip("; "))

    def _check(self, request: ToolCallRequest) -> Decision | str:
        plan = self.plan
        if plan.syntax_error:
            return f"outside the approved plan: the planned script did not parse ({request.tool})"
        if request.source != "script":
            return f"outside the approved plan: a direct call of {request.tool}"
        if request.session_id != self.session_id:
            return (f"outside the approved plan: {request.tool} called from session "
                    f"{request.session_id}; the plan was approved for session {self.session_id}")
        if plan.script_sha256 is None or request.script_sha256 != plan.script_sha256:
            return (f"outside the approved plan: {request.tool} called from another script "
                    "than the one the plan was made from")
        args = request.args if isinstance(request.args, Mapping) else {}
        injected = {str(k): _key(v) for k, v in (request.injected or {}).items()}
        with self._lock:
            if self.run_id is None:
                self.run_id = request.run_id
            elif self.run_id != request.run_id:
                return (f"outside the approved plan: the plan approved run {self.run_id}, "
                        f"not run {request.run_id}")
            mismatch = self._other_identity(injected)
            if mismatch is not None:
                return (f"outside the approved plan: {request.tool} injects {mismatch}, not "
                        "the value the plan was approved for")
            fitting = []
            exhausted = []
            for index, call in enumerate(plan.calls):
                if call.tool != request.tool or not self.covers(call):
                    continue
                if not call.allows(args, self.accepted(call)):
                    continue
                assert call.max_calls is not None
                if self._used[index] < call.max_calls:
                    fitting.append(index)
                else:
                    exhausted.append(call)
            if fitting:
                index = min(fitting, key=lambda i: self._specificity(plan.calls[i]))
                self._used[index] += 1
                self.injected = {**injected, **(self.injected or {})}
                line = plan.calls[index].line
                return Decision.allow(f"inside the approved plan (line {line})")
        if exhausted:
            where = ", ".join(f"line {c.line}: <= {c.max_calls}" for c in exhausted)
            return (f"outside the approved plan: more calls of {request.tool} with these "
                    f"arguments than planned ({where})")
        uncovered = [c for c in plan.calls if c.tool == request.tool and not self.covers(c)]
        if uncovered:
            why = "; ".join(f"line {c.line}: {self._why_not(c)}" for c in uncovered)
            return f"outside the approved plan: {request.tool}({_short(args)}) ({why})"
        return f"outside the approved plan: {request.tool}({_short(args)})"

    def _other_identity(self, injected: Mapping[str, str]) -> str | None:
        """The first injected parameter whose value is not the plan's, or None."""
        bound = self.injected
        if bound is None:
            return None
        for name, value in injected.items():
            if name in bound and bound[name] != value:
                return f"{name}={value}"
        return None

    def _shown_injected(self) -> dict[str, Any]:
        return {name: json.loads(value) for name, value in (self.injected or {}).items()}

    def _specificity(self, call: PlannedCall) -> tuple[int, int, int]:
        """Sort key: the site with the fewest accepted values is charged first."""
        computed = len(call.computed)
        spread = sum(len(v) for v in call.args.values() if v is not ANY)
        return (computed, spread, call.max_calls or 0)


def _session_id(session: Any) -> str:
    if isinstance(session, str):
        return session
    sid = getattr(session, "id", None)
    if not isinstance(sid, str):
        raise TypeError("PlanApproval(session=...) takes the Session the plan is approved for "
                        f"(or its id), got {type(session).__name__}")
    return sid


def _short(args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), default=repr, ensure_ascii=True)
    return text if len(text) <= 200 else text[:200] + "..."


def planned_tools(plans: Iterable[Plan]) -> list[str]:
    """The union of tools over several plans (e.g. one per script of a session)."""
    return sorted({tool for plan in plans for tool in plan.tools})
