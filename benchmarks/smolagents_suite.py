"""smolagents' own executor tests, run through toolscript's interpreter.

Given the path of smolagents' ``tests/test_local_python_executor.py`` (not
shipped here: bring it from smolagents' repository at the tag of the
installed version; it imports ``numpy`` and ``pandas``), this runs that file
with pytest, in this process, after replacing the test module's
``evaluate_python_code`` and ``LocalPythonExecutor`` by adapters that run the
same code in a toolscript session. The real test bodies run; their assertions
compare what toolscript produced with what smolagents' tests expect.

What the adapters do:

* the code runs as one script of a toolscript session (``--backend``:
  ``inprocess`` by default, or ``subprocess``); ``LocalPythonExecutor`` keeps
  one session across calls, ``evaluate_python_code`` opens a fresh one;
* smolagents returns the value of the last statement (also of an
  assignment); the adapter captures the same value in the script and brings
  it back as ``repr`` text, read with ``ast.literal_eval`` (a value that is no
  literal comes back as a :class:`ScriptObject` holding its ``repr``);
* host functions and smolagents ``Tool`` objects passed as tools (or as
  callables in the state) become toolscript tools; builtins that smolagents
  passes as tools are the sandbox's own builtins;
* state values that are literals are assigned at the start of the script;
  afterwards the module-level names the code assigned are read back into the
  caller's ``state`` dict, and ``state["_print_outputs"]`` holds the printed
  text;
* a failed run raises smolagents' ``InterpreterError`` (``ExecutionTimeoutError``
  for a timeout) with toolscript's message.

How a test counts:

* **passed**: its body ran through the adapter and passed;
* **failed**: an assertion of the test failed (or an expected exception was
  not raised), or the adapter could not run the code;
* **error**: the test body raised something else (setup errors included);
* **not applicable**: the test asserts smolagents-specific behaviour, decided
  per failure from the failing statement: its error message texts, its state
  dict bookkeeping (``_operations_count``, state contents after the run), host
  objects (numpy arrays, DataFrames) placed in the state; or it never ran code
  through the adapter (it tests smolagents' internal helpers directly), or it
  fails on smolagents itself in this environment (``--baseline``, on by
  default, runs the file once unmodified to find those);
* **skipped**: skipped by the test file itself.

Usage::

    python -m benchmarks.smolagents_suite /tmp/smol/test_local_python_executor.py
    python -m benchmarks.smolagents_suite FILE --backend subprocess --json out.json
"""

from __future__ import annotations

import argparse
import ast
import builtins
import inspect
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

RESULT_NAME = "ts_suite_last"
OUT_NAME = "ts_suite_out"
WALL_CAP_S = 10.0
_BUILTIN_TYPE = re.compile(r"<class '(\w+)'>")


# ------------------------------------------------------------------ values back


@dataclass(frozen=True)
class ScriptObject:
    """A script value that is no Python literal (a function, a class instance):
    only its ``repr`` crosses back to the host."""

    text: str

    def __repr__(self) -> str:
        return self.text


def from_repr(text: Any) -> Any:
    """The host value of a script value's ``repr`` text."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        match = _BUILTIN_TYPE.fullmatch(text)
        if match and isinstance(getattr(builtins, match.group(1), None), type):
            return getattr(builtins, match.group(1))
        return ScriptObject(text)


def literal_repr(value: Any) -> str | None:
    """``repr(value)`` if it reads back as the same value, else None."""
    try:
        text = repr(value)
        same = ast.literal_eval(text) == value
    except Exception:
        return None
    return text if same else None


# ------------------------------------------------------------------ code rewrite


def _offset(code: str, lineno: int, col: int) -> int:
    lines = code.splitlines(keepends=True)
    return sum(len(line) for line in lines[: lineno - 1]) + col


def _store(value: ast.expr) -> ast.stmt:
    return ast.Assign(targets=[ast.Name(RESULT_NAME, ast.Store())], value=value, lineno=0)


def _mark_last(body: list[ast.stmt]) -> None:
    """Make the last statement of ``body`` (and of its branches) store its
    value in ``RESULT_NAME``, as smolagents returns the value of the last
    statement it evaluated."""
    if not body:
        return
    last = body[-1]
    if isinstance(last, ast.Expr):
        body[-1] = _store(last.value)
    elif isinstance(last, ast.Assign | ast.AugAssign | ast.AnnAssign):
        target = last.targets[0] if isinstance(last, ast.Assign) else last.target
        if isinstance(last, ast.AnnAssign) and last.value is None:
            return
        if isinstance(target, ast.Tuple | ast.List | ast.Starred):
            return
        body.append(_store(ast.parse(ast.unparse(target), mode="eval").body))
    elif isinstance(last, ast.If | ast.For | ast.AsyncFor | ast.While):
        _mark_last(last.body)
        _mark_last(last.orelse)
    elif isinstance(last, ast.With | ast.AsyncWith):
        _mark_last(last.body)
    elif isinstance(last, ast.Try):
        _mark_last(last.body)
        _mark_last(last.orelse)
        for handler in last.handlers:
            _mark_last(handler.body)


def capture_last_value(code: str) -> str:
    """``code`` with the value of its last statement stored in ``RESULT_NAME``
    and that name's ``repr`` as the final expression (smolagents' result)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code  # toolscript reports the syntax error itself
    _mark_last(tree.body)
    tree.body.insert(0, _store(ast.Constant(None)))
    tree.body.append(ast.Expr(ast.parse(f"repr({RESULT_NAME})", mode="eval").body))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def assigned_names(code: str) -> list[str]:
    """Module-level names the code binds (assignments, defs, imports, loops)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        if isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in tree.body:
        visit(stmt)
    seen: dict[str, None] = {}
    for name in names:
        if name != RESULT_NAME and not name.startswith("_") and name not in seen:
            seen[name] = None
    return list(seen)


def read_back_script(names: list[str]) -> str:
    """A script whose value maps each bound name to its ``repr``."""
    lines = [f"{OUT_NAME} = {{}}"]
    for name in names:
        lines += ["try:", f"    {OUT_NAME}[{name!r}] = repr({name})",
                  "except NameError:", "    pass"]
    lines.append(OUT_NAME)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ CPython reference

_UNSAFE_NAMES = frozenset({
    "eval", "exec", "compile", "open", "getattr", "setattr", "delattr", "globals", "locals",
    "vars", "breakpoint", "input", "exit", "quit", "help", "memoryview", "type", "object",
})
_ADDRESS = re.compile(r"<(?:[\w.<>]*\.)?([\w<>]+) object at 0x[0-9a-f]+>")
_REF_LINES = 300_000


class _ReferenceLimit(BaseException):
    """The CPython reference ran too many lines (an endless loop)."""


def normalize_repr(text: str) -> str:
    """A ``repr`` without memory addresses and module qualifiers."""
    return _ADDRESS.sub(r"<\1 object>", text)


def safe_for_reference(code: str, modules: frozenset[str]) -> bool:
    """True if running ``code`` with plain CPython ``exec`` on the host is
    harmless: it imports only modules toolscript offers, names no dunder or
    private attribute and none of the builtins that reach outside the data.
    (The file's attack tests fail this check and get no reference run.)"""
    if "__" in code:
        return False
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            roots = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            if any(r.split(".")[0] not in modules or r.startswith("sys") for r in roots):
                return False
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_")) or (
                isinstance(node, ast.Name) and node.id in _UNSAFE_NAMES | {"sys"}):
            return False
    return True


def reference_outcome(script: str, namespace: dict[str, Any]) -> tuple[str, str]:
    """``("value", repr)``, ``("error", exception type)`` or ``("timeout", "")``
    of the captured script under plain CPython."""
    lines = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal lines
        lines += 1
        if lines > _REF_LINES:
            raise _ReferenceLimit
        return tracer

    body = ast.parse(script)
    last = body.body.pop()
    assert isinstance(last, ast.Expr)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        exec(compile(body, "<reference>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<reference>", "eval"), namespace)
    except _ReferenceLimit:
        return ("timeout", "")
    except Exception as exc:
        return ("error", type(exc).__name__)
    finally:
        sys.settrace(previous)
    return ("value", normalize_repr(str(value)))


def toolscript_outcome(result: Any) -> tuple[str, str]:
    """The same triple for a toolscript run."""
    if result.ok:
        return ("value", normalize_repr(str(result.value)))
    err = result.error
    if err.type in ("timeout", "cpu_limit"):
        return ("timeout", "")
    if err.type == "script_error":
        match = re.match(r"(\w+):", err.message)
        return ("error", match.group(1) if match else "")
    return ("refused", err.type)


# ------------------------------------------------------------------ tools


def _is_builtin_name(name: str) -> bool:
    return hasattr(builtins, name)


def as_tool_function(name: str, obj: Any, sink: dict[str, Any]) -> Callable[..., Any] | None:
    """A toolscript-ready function for a smolagents tool (host function or
    ``Tool`` object), with every parameter annotated ``Any``; None if it has
    no usable signature."""
    func = getattr(obj, "forward", None) if not inspect.isroutine(obj) else obj
    if func is None and callable(obj):
        func = obj
    if func is None:
        return None
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = [p.replace(annotation=Any) for p in sig.parameters.values()]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None

    def call(*args: Any, **kwargs: Any) -> Any:
        value = func(*args, **kwargs)
        if name == "final_answer":
            sink["final_answer"] = value
        return value

    call.__name__ = name
    call.__doc__ = f"The smolagents test's tool {name}."
    call.__signature__ = sig.replace(parameters=params,  # type: ignore[attr-defined]
                                     return_annotation=Any)
    call.__annotations__ = {p.name: Any for p in params} | {"return": Any}
    return call


# ------------------------------------------------------------------ runner


@dataclass
class Observed:
    """What the adapters saw during one test."""

    calls: int = 0
    notes: list[str] = field(default_factory=list)
    cpython_match: list[bool | None] = field(default_factory=list)
    grants: list[str] = field(default_factory=list)
    runners: list[ToolscriptRunner] = field(default_factory=list)


OBSERVED = Observed()
BACKEND = "inprocess"


class ToolscriptRunner:
    """One toolscript session standing in for one smolagents evaluation state."""

    def __init__(self, timeout_seconds: float | None) -> None:
        self.timeout_seconds = timeout_seconds
        self.runtime: Any = None
        self.session: Any = None
        self.tool_key: tuple[tuple[str, int], ...] | None = None
        self.injected: set[str] = set()
        self.sink: dict[str, Any] = {}
        OBSERVED.runners.append(self)

    def close(self) -> None:
        """Close the session and its runtime."""
        if self.session is not None:
            self.session.close()
        if self.runtime is not None:
            self.runtime.close()
        self.session = self.runtime = None

    def _ensure(self, tools: Mapping[str, Any]) -> None:
        from toolscript import Limits, Runtime, tool

        key = tuple(sorted((name, id(obj)) for name, obj in tools.items()))
        if key == self.tool_key and self.session is not None:
            return
        self.close()
        funcs = []
        for name, obj in tools.items():
            func = as_tool_function(name, obj, self.sink)
            if func is None:
                OBSERVED.notes.append(f"tool {name!r} has no usable signature")
                continue
            funcs.append(tool(read_only=True)(func))
        # 10 s at most: smolagents' tests of its iteration caps loop forever here.
        wall = min(float(self.timeout_seconds or WALL_CAP_S), WALL_CAP_S)
        self.runtime = Runtime(tools=funcs, backend=BACKEND,
                               limits=Limits(wall_time_s=wall, cpu_time_s=None))
        self.session = self.runtime.session()
        self.tool_key = key
        self.injected = set()

    def run(self, code: str, tools: Mapping[str, Any], state: dict[str, Any],
            authorized_imports: list[str] | None = None) -> tuple[Any, bool]:
        """Run ``code`` as smolagents' ``evaluate_python_code`` would: returns
        ``(value of the last statement, is_final_answer)``, updates ``state``."""
        from smolagents.local_python_executor import (
            ExecutionTimeoutError,
            InterpreterError,
            PrintContainer,
        )
        from smolagents.utils import BASE_BUILTIN_MODULES
        from toolscript.sandbox.modules import DEFAULT_MODULES

        OBSERVED.calls += 1
        modules = frozenset(m.split(".")[0] for m in DEFAULT_MODULES)
        # Beyond smolagents' own default list: a module it offers by default and
        # toolscript does not is a plain gap, not a grant.
        OBSERVED.grants += [f"import {m}" for m in authorized_imports or ()
                            if m.split(".")[0] not in modules and m not in BASE_BUILTIN_MODULES]
        OBSERVED.grants += [f"builtin {n}" for n in tools
                            if n in _UNSAFE_NAMES | {"__import__"} and _is_builtin_name(n)]
        all_tools = {n: t for n, t in tools.items()
                     if callable(t) and not _is_builtin_name(n) and not n.startswith("_")}
        prefix: list[str] = []
        for name, value in state.items():
            if name.startswith("_"):
                continue
            if callable(value) and not isinstance(value, type):
                all_tools.setdefault(name, value)
        self._ensure(all_tools)
        for name, value in state.items():
            if name.startswith("_") or name in self.injected or name in all_tools:
                continue
            text = literal_repr(value)
            if text is None:
                OBSERVED.notes.append(
                    f"host object in state: {name} ({type(value).__name__})")
                continue
            prefix.append(f"{name} = {text}")
            self.injected.add(name)
        self.sink.pop("final_answer", None)
        script = "\n".join([*prefix, capture_last_value(code)])
        reference: tuple[str, str] | None = None
        if not self.injected - {p.split(" = ")[0] for p in prefix} and safe_for_reference(
                code, modules) and not any(n.startswith("host object") for n in OBSERVED.notes):
            namespace = {n: t for n, t in tools.items() if not _is_builtin_name(n)}
            reference = reference_outcome(script, namespace)
        result = self.session.run(script)
        OBSERVED.cpython_match.append(
            None if reference is None else toolscript_outcome(result) == reference)
        printed = state.get("_print_outputs")
        if not isinstance(printed, PrintContainer):
            printed = PrintContainer()
        printed += result.stdout
        state["_print_outputs"] = printed
        self._read_back(code, state)
        if "final_answer" in self.sink and (result.ok or result.error.type == "tool_error"):
            return self.sink.pop("final_answer"), True
        if not result.ok:
            err = result.error
            message = f"{err.message}"
            if err.type == "timeout":
                raise ExecutionTimeoutError(message)
            raise InterpreterError(message)
        return from_repr(result.value), False

    def _read_back(self, code: str, state: dict[str, Any]) -> None:
        names = assigned_names(code)
        if not names or self.session is None:
            return
        result = self.session.run(read_back_script(names))
        if result.ok and isinstance(result.value, dict):
            for name, text in result.value.items():
                state[name] = from_repr(text)
                self.injected.add(name)


def adapter_evaluate_python_code(
    code: str,
    static_tools: dict[str, Callable[..., Any]] | None = None,
    custom_tools: dict[str, Callable[..., Any]] | None = None,
    state: dict[str, Any] | None = None,
    authorized_imports: list[str] | None = None,
    max_print_outputs_length: int = 50000,
    timeout_seconds: int | None = 30,
) -> tuple[Any, bool]:
    """smolagents' ``evaluate_python_code``, run in a fresh toolscript session
    (``authorized_imports``: toolscript's own module list applies)."""
    runner = ToolscriptRunner(timeout_seconds)
    try:
        tools = {**(static_tools or {}), **(custom_tools or {})}
        return runner.run(code, tools, state if state is not None else {},
                          authorized_imports)
    finally:
        runner.close()


def make_executor_class() -> type:
    """``LocalPythonExecutor`` whose calls run in one toolscript session."""
    from smolagents.local_python_executor import CodeOutput, LocalPythonExecutor

    class ToolscriptExecutor(LocalPythonExecutor):  # type: ignore[misc]
        """smolagents' executor API over a toolscript session."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.runner = ToolscriptRunner(self.timeout_seconds)

        def __call__(self, code_action: str) -> Any:
            tools = {**(self.static_tools or {}), **(self.custom_tools or {})}
            output, final = self.runner.run(code_action, tools, self.state,
                                            list(self.authorized_imports))
            return CodeOutput(output=output, logs=str(self.state["_print_outputs"]),
                              is_final_answer=final)

    return ToolscriptExecutor


# ------------------------------------------------------------------ pytest plugin

NA_ERROR_TEXT = "smolagents error text"
NA_STATE = "smolagents state dict"
NA_HOST_OBJECTS = "host objects in state"
NA_INTERNALS = "tests smolagents internals (no code through the executor)"
NA_BASELINE = "fails on smolagents itself here"
NA_GRANTS = "authorizes a module or builtin toolscript does not offer"
NA_CPYTHON = "toolscript gives plain CPython's outcome, the test expects smolagents' own"

_ERROR_TEXT = re.compile(r"\bstr\(e|e\.value|exc_info|\.match\(|match=|error_message|\berr\b|"
                         r"expected_error|exception_message|\bmsg\b|\bmessage\b")
_STATE = re.compile(r"\bstate\b|_operations_count|_print_outputs")


@dataclass
class Outcome:
    """One test's verdict."""

    nodeid: str
    verdict: str  # passed | failed | error | n/a | skipped
    reason: str = ""


def _one_line(text: str, width: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _failing_statement(excinfo: Any, test_file: str) -> str:
    for entry in reversed(excinfo.traceback):
        if str(entry.path) == test_file:
            try:
                return str(entry.statement)
            except Exception:
                return ""
    return ""


class SuitePlugin:
    """Swaps the adapters into the test module and classifies each test."""

    def __init__(self, test_file: str, baseline_failures: set[str]) -> None:
        self.test_file = test_file
        self.baseline_failures = baseline_failures
        self.outcomes: dict[str, Outcome] = {}
        self.pytest_counts: dict[str, str] = {}
        self.executor_class = make_executor_class()

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            module = getattr(item, "module", None)
            if module is not None:
                module.evaluate_python_code = adapter_evaluate_python_code
                module.LocalPythonExecutor = self.executor_class

    def pytest_runtest_setup(self, item: Any) -> None:
        OBSERVED.calls = 0
        OBSERVED.notes = []
        OBSERVED.cpython_match = []
        OBSERVED.grants = []

    def pytest_runtest_teardown(self, item: Any) -> None:
        for runner in OBSERVED.runners:
            runner.close()
        OBSERVED.runners = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or report.outcome != "passed":
            self._classify(item, call, report)
        self._count_as_pytest(item.nodeid, report)

    def _count_as_pytest(self, nodeid: str, report: Any) -> None:
        # pytest's own tally: the call phase's outcome; a failed setup or teardown
        # is an error; a skip in any phase is a skip.
        if report.skipped:
            self.pytest_counts.setdefault(nodeid, "skipped")
        elif report.when == "call":
            self.pytest_counts[nodeid] = report.outcome
        elif report.failed:
            self.pytest_counts[nodeid] = "error"

    def _classify(self, item: Any, call: Any, report: Any) -> None:
        nodeid = item.nodeid
        if report.skipped:
            self.outcomes.setdefault(nodeid, Outcome(nodeid, "skipped"))
            return
        if report.when != "call":
            if report.failed:
                self.outcomes[nodeid] = Outcome(nodeid, "error", _one_line(
                    f"{report.when}: {call.excinfo.exconly() if call.excinfo else ''}"))
            return
        if nodeid in self.baseline_failures:
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", NA_BASELINE)
            return
        if OBSERVED.calls == 0:
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", NA_INTERNALS)
            return
        if report.passed:
            self.outcomes[nodeid] = Outcome(nodeid, "passed")
            return
        exc = call.excinfo
        crash = _one_line(exc.exconly()) if exc else "failed"
        statement = _one_line(_failing_statement(exc, self.test_file)) if exc else ""
        host_notes = [n for n in OBSERVED.notes if n.startswith("host object")]
        reason = f"{statement} -> {crash}" if statement else crash
        is_assert = exc is not None and (
            exc.errisinstance(AssertionError) or "DID NOT RAISE" in crash
            or "Regex pattern did not match" in crash)
        if OBSERVED.grants and ("not available" in crash or "refused" in crash):
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", f"{NA_GRANTS}: "
                                            f"{', '.join(sorted(set(OBSERVED.grants)))}")
        elif OBSERVED.cpython_match and all(OBSERVED.cpython_match):
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", f"{NA_CPYTHON}: {reason}")
        elif host_notes:
            self.outcomes[nodeid] = Outcome(nodeid, "n/a",
                                            f"{NA_HOST_OBJECTS}: {host_notes[0]}")
        elif "Regex pattern did not match" in crash or (
                is_assert and _ERROR_TEXT.search(statement)):
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", f"{NA_ERROR_TEXT}: {reason}")
        elif is_assert and _STATE.search(statement):
            self.outcomes[nodeid] = Outcome(nodeid, "n/a", f"{NA_STATE}: {reason}")
        elif is_assert or (exc is not None and exc.typename in (
                "InterpreterError", "ExecutionTimeoutError")):
            self.outcomes[nodeid] = Outcome(nodeid, "failed", reason)
        else:
            self.outcomes[nodeid] = Outcome(nodeid, "error", reason)


# ------------------------------------------------------------------ main


def baseline_failures(test_file: Path) -> set[str]:
    """Node ids that fail with smolagents' own executor (a separate pytest
    process, so the test module is imported unmodified)."""
    with_report = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
         "--rootdir", str(test_file.parent), str(test_file)],
        capture_output=True, text=True, cwd=test_file.parent, timeout=900, check=False)
    failed = set()
    for line in with_report.stdout.splitlines():
        match = re.match(r"(?:FAILED|ERROR) (\S+)", line)
        if match:
            failed.add(match.group(1))
    return failed


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """Counts by verdict and by not-applicable reason."""
    counts = Counter(o.verdict for o in outcomes)
    na = Counter(o.reason.split(":")[0] for o in outcomes if o.verdict == "n/a")
    applicable = counts["passed"] + counts["failed"] + counts["error"]
    return {"total": len(outcomes), "passed": counts["passed"], "failed": counts["failed"],
            "error": counts["error"], "not_applicable": counts["n/a"],
            "skipped": counts["skipped"], "applicable": applicable,
            "not_applicable_by_reason": dict(na)}


def main(argv: list[str] | None = None) -> int:
    """Command line: run the file, print per-test verdicts and the totals."""
    global BACKEND
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("test_file", type=Path,
                        help="smolagents' tests/test_local_python_executor.py")
    parser.add_argument("--backend", default="inprocess", choices=["inprocess", "subprocess"])
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the unmodified run that finds tests failing on smolagents")
    parser.add_argument("--json", type=Path, help="write every verdict to this file")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    args = parser.parse_args(argv)
    test_file = args.test_file.resolve()
    if not test_file.is_file():
        print(f"no such file: {test_file}", file=sys.stderr)
        return 2
    BACKEND = args.backend
    started = time.perf_counter()
    base = set() if args.no_baseline else baseline_failures(test_file)
    plugin = SuitePlugin(str(test_file), base)
    pytest_args = ["-q", "-p", "no:cacheprovider", "--rootdir", str(test_file.parent),
                   "--no-header", "--tb=no", "--durations=8", "-o", "console_output_style=classic",
                   str(test_file)]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    pytest.main(pytest_args, plugins=[plugin])
    outcomes = list(plugin.outcomes.values())
    print()
    for o in outcomes:
        print(f"{o.verdict:8} {o.nodeid}" + (f"  [{o.reason}]" if o.verdict == "n/a" else ""))
    summary = summarize(outcomes)
    print("\nfailing tests:")
    for o in outcomes:
        if o.verdict in ("failed", "error"):
            print(f"  {o.verdict}: {o.nodeid}: {o.reason}")
    from importlib.metadata import version

    print(f"\nsmolagents {version('smolagents')}, toolscript backend {BACKEND}, "
          f"{time.perf_counter() - started:.0f} s")
    print(f"passed {summary['passed']}/{summary['applicable']} applicable "
          f"(failed {summary['failed']}, errors {summary['error']}); "
          f"not applicable {summary['not_applicable']}; skipped {summary['skipped']}; "
          f"total {summary['total']}")
    for reason, n in summary["not_applicable_by_reason"].items():
        print(f"  not applicable, {reason}: {n}")
    raw = Counter(plugin.pytest_counts.values())
    ran_code = [o.nodeid for o in outcomes
                if not (o.verdict == "n/a" and o.reason == NA_INTERNALS) and o.verdict != "skipped"]
    raw_code = Counter(plugin.pytest_counts.get(n, "") for n in ran_code)
    summary["pytest"] = {"collected": len(plugin.pytest_counts), **dict(raw),
                         "ran_code_through_executor": len(ran_code),
                         "ran_code_passed": raw_code["passed"]}
    print(f"as pytest counts (the adapter run, no verdicts): {raw['passed']} passed, "
          f"{raw['failed']} failed, {raw['error']} errors, {raw['skipped']} skipped of "
          f"{len(plugin.pytest_counts)} collected; of the {len(ran_code)} tests that ran code "
          f"through the executor, {raw_code['passed']} passed")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "backend": BACKEND,
                                         "tests": [o.__dict__ for o in outcomes]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
