"""pydantic-monty's own test cases, run through toolscript, plain CPython and Monty.

Monty (``pydantic/monty``, MIT) keeps its interpreter tests as one small
Python file per case (``crates/monty/test_cases/*.py``): code, optional
directives in comments (``# xfail=monty,cpython``, ``# call-external``,
``# run-async``) and an expectation as the last line (``# Return=repr``,
``# Return.str=``, ``# Return.type=``, ``# Raise=Type('msg')``,
``# ref-counts=...``) or a ``TRACEBACK:`` string at the end. The cases are
not shipped here (see ``benchmarks/monty_cases/README.md``); give their
directory.

Method, one case at a time:

* **the compared program.** The case's code with its last statement, if it is
  an expression, replaced by ``ts_case_value = repr(<expression>)`` (else
  ``ts_case_value = repr(None)``) and ``ts_case_value`` as the final expression, so
  every engine hands back the same text; the value Monty's expectation names
  is this repr.
* **CPython** runs that program in a fresh ``python3`` process (``-I``, a
  temporary working directory, top-level ``await`` compiled with
  ``PyCF_ALLOW_TOP_LEVEL_AWAIT`` and run by ``asyncio.run``), twice with
  different hash seeds; the outcome is printed text + value repr, or the
  exception's class and message.
* **toolscript** runs the same program in a fresh session of each backend;
  Monty's external functions (``call-external``) are toolscript tools.
* **Monty** (``pydantic-monty``, the installed version) runs the original case
  in a fresh session of one ``Monty`` pool, and counts as passing when its
  outcome matches the case's own expectation (its own suite's rule).

Verdict of toolscript per case and backend:

* **identical**: same printed text and same value repr, or the same exception
  class and message (memory addresses masked; CPython's ``(main.py, line N)``
  after a ``SyntaxError`` message dropped); a ``recursion_limit`` run matches a
  CPython run that ended in an uncaught ``RecursionError``; an uncaught tool
  exception compares as the class and message the script saw (the run's
  report names the tool too). Counted apart but as identical: CPython's exact
  message followed by a hint of toolscript's (``name 'x' is not defined.
  Available tools: ...``, ``No module named 'y': it is not available in the
  sandbox. Available: ...``);
* **refused**: a clear toolscript refusal: ``policy_error``, an import the
  sandbox names as not available, a run limit (timeout, recursion, memory,
  integer size, output), a value that is not JSON data at the end;
* **wrong**: any other difference (a different value, exception, message or
  output with no refusal).
* **not applicable** (decided from the case before anything runs, rules in
  :func:`not_applicable`, or from CPython itself): the case is marked
  ``xfail=cpython`` (CPython does not do what it asserts: it tests Monty's own
  behaviour); it asserts reference counts; it uses the filesystem, the OS,
  the process, string evaluation (``eval``/``exec``/``compile``), frames or
  the interpreter's internals (a sandbox must not give them; tools do);
  its external functions return host dataclass objects (toolscript tools
  return JSON data); or CPython's own outcome differs between two runs
  (hash seeds, ids, clocks).

Usage::

    python -m benchmarks.monty_suite benchmarks/monty_cases
    python -m benchmarks.monty_suite DIR --backends inprocess,subprocess,docker --json out.json
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

VALUE_NAME = "ts_case_value"
CASE_WALL_S = 10.0
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

# ------------------------------------------------------------------ cases


@dataclass
class Case:
    """One of Monty's test case files, parsed as its own runner parses it."""

    name: str
    code: str
    expect_kind: str  # Return | Return.str | Return.type | Raise | Traceback | ref-counts | none
    expected: str
    xfail_monty: bool = False
    xfail_cpython: bool = False
    call_external: bool = False
    run_async: bool = False


_TRACEBACK = '"""\nTRACEBACK:\n'


def load_case(path: Path) -> Case:
    """Parse a case file (directives, expectation, code)."""
    text = path.read_text("utf-8")
    comments = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    xfail = next((c.split()[0] for c in comments if c.startswith("xfail=")), "")
    case = Case(path.name, text, "none", "",
                xfail_monty="monty" in xfail, xfail_cpython="cpython" in xfail,
                call_external=any(c.startswith("call-external") for c in comments),
                run_async=any(c.startswith("run-async") for c in comments))
    at = text.find(_TRACEBACK)
    if at >= 0:
        body = text[at + len(_TRACEBACK):]
        end = body.find('\n"""')
        case.code, case.expect_kind = text[:at].rstrip() + "\n", "Traceback"
        case.expected = body[:end if end >= 0 else len(body)]
        return case
    lines = text.splitlines()
    last = lines[-1] if lines else ""
    for prefix, kind in (("# ref-counts=", "ref-counts"), ("# Return.str=", "Return.str"),
                         ("# Return.type=", "Return.type"), ("# Return=", "Return"),
                         ("# Raise=", "Raise")):
        if last.startswith(prefix):
            case.expect_kind, case.expected = kind, last[len(prefix):]
            case.code = "\n".join(lines[:-1]) + "\n"
            break
    return case


def load_cases(directory: Path) -> list[Case]:
    """Every ``*.py`` case of ``directory``, by name."""
    return [load_case(p) for p in sorted(directory.glob("*.py"))]


# ------------------------------------------------------------------ applicability

_OS_MODULES = frozenset({"os", "subprocess", "shutil", "socket", "signal", "tempfile", "glob",
                         "io", "ctypes", "importlib", "gc", "inspect", "threading",
                         "multiprocessing", "sysconfig", "platform", "resource", "weakref"})
_EVAL_NAMES = frozenset({"eval", "exec", "compile", "globals", "locals", "breakpoint",
                         "input", "open", "__import__", "exit", "quit"})
_INTERNAL_ATTRS = frozenset({
    "__dict__", "__globals__", "__code__", "__closure__", "__subclasses__", "__bases__",
    "__base__", "__mro__", "__builtins__", "__traceback__", "tb_frame", "f_back", "f_locals",
    "f_globals", "gi_frame", "cr_frame", "ag_frame", "__self__", "__func__", "__defaults__",
    "__kwdefaults__", "__file__", "__spec__", "__loader__", "__module__", "__slots__",
    "__weakref__", "__getattribute__", "__set_name__", "__init_subclass__", "__class_getitem__",
})
_FS_CALLS = frozenset({"read_text", "write_text", "read_bytes", "write_bytes", "exists",
                       "is_file", "is_dir", "iterdir", "mkdir", "unlink", "rmdir", "stat",
                       "rename", "glob", "resolve", "cwd", "home", "touch", "absolute"})
_SYS_INTERNALS = frozenset({"modules", "setrecursionlimit", "settrace", "setprofile",
                            "_getframe", "exc_info", "exception", "stdout", "stderr", "stdin",
                            "path", "exit", "getsizeof", "getrefcount", "intern", "argv",
                            "executable", "flags", "implementation"})
_HOST_OBJECT_TOOLS = frozenset({"make_point", "make_mutable_point", "make_user", "make_empty"})

NA_XFAIL_CPYTHON = "marked xfail=cpython: tests Monty's own behaviour"
NA_REFCOUNTS = "asserts Monty's reference counts"
NA_OS = "uses the filesystem, the OS or the process"
NA_EVAL = "evaluates strings as code or reads the interpreter's namespaces"
NA_INTERNALS = "reads frames or interpreter internals"
NA_SYS = "reads or changes the interpreter through sys"
NA_HOST_OBJECTS = "external functions return host dataclass objects"
NA_NONDETERMINISTIC = "CPython's own outcome differs between two runs"
NA_CPYTHON_SYNTAX = "not valid Python for CPython 3.11 (Monty accepts newer syntax)"


def not_applicable(case: Case) -> str | None:
    """The rule that takes ``case`` out of the comparison, or None.

    The rules take out what a sandbox must not give a script (files, the OS,
    the process, string evaluation, frames and interpreter internals) and what
    tests Monty itself (``xfail=cpython``, reference counts); a missing but
    safe feature is never taken out: it counts as refused or wrong."""
    if case.xfail_cpython:
        return NA_XFAIL_CPYTHON
    if case.expect_kind == "ref-counts":
        return NA_REFCOUNTS
    try:
        tree = ast.parse(case.code)
    except SyntaxError:
        return None  # a syntax error case: compared like any other
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            roots = {n.split(".")[0] for n in names}
            if roots & _OS_MODULES:
                return NA_OS
            if isinstance(node, ast.ImportFrom) and node.module == "sys" and any(
                    a.name in _SYS_INTERNALS for a in node.names):
                return NA_SYS
        elif isinstance(node, ast.Name) and node.id in _EVAL_NAMES:
            return NA_OS if node.id == "open" else NA_EVAL
        elif isinstance(node, ast.Attribute):
            if node.attr in _INTERNAL_ATTRS:
                return NA_INTERNALS
            if isinstance(node.value, ast.Name) and node.value.id == "sys" and (
                    node.attr in _SYS_INTERNALS):
                return NA_SYS
            if node.attr in _FS_CALLS and "Path(" in case.code and (
                    "pathlib" in case.code):
                return NA_OS
        elif isinstance(node, ast.Constant) and node.value in _INTERNAL_ATTRS:
            return NA_INTERNALS
        if isinstance(node, ast.Name) and case.call_external and node.id in _HOST_OBJECT_TOOLS:
            return NA_HOST_OBJECTS
    return None


# ------------------------------------------------------------------ the compared program


def compared_program(code: str) -> str:
    """``code`` with its last expression's repr stored in ``VALUE_NAME`` and
    that name as the final expression (text-level: the rest is untouched)."""
    try:
        tree = ast.parse(code, feature_version=(3, 11))
    except SyntaxError:
        return code  # each engine reports the syntax error itself
    lines = code.splitlines()
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and last.end_lineno is not None:
        expr = ast.get_source_segment(code, last.value)
        head = lines[: last.lineno - 1]
        prefix = lines[last.lineno - 1][: last.col_offset]
        if expr is not None and not prefix.strip():
            tail = lines[last.end_lineno:]
            return "\n".join([*head, f"{VALUE_NAME} = repr(\n{expr}\n)", *tail,
                              VALUE_NAME]) + "\n"
    return "\n".join([*lines, f"{VALUE_NAME} = repr(None)", VALUE_NAME]) + "\n"


# ------------------------------------------------------------------ external functions
# Monty's runner offers these to ``call-external`` cases (crates/monty/tests/
# datatest_runner.rs); the same behaviour here, as CPython functions and as
# toolscript tools.


def add_ints(a: int, b: int) -> int:
    """Return a + b (integers)."""
    return a + b


def concat_strings(a: str, b: str) -> str:
    """Return a + b (strings)."""
    return a + b


def return_value(x: Any) -> Any:
    """Return x unchanged."""
    return x


def get_list() -> list[int]:
    """Return [1, 2, 3]."""
    return [1, 2, 3]


_RAISABLE = {"ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError,
             "RuntimeError": RuntimeError}


def raise_error(exc_type: str, message: str) -> None:
    """Raise the named exception (ValueError, TypeError, KeyError, RuntimeError)."""
    raise _RAISABLE[exc_type](message)


async def async_call(x: Any) -> Any:
    """Return x, as a coroutine."""
    return x


EXTERNALS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (add_ints, concat_strings, return_value, get_list, raise_error,
                            async_call)}

_CPYTHON_EXTERNALS = '''
def add_ints(a, b): return a + b
def concat_strings(a, b): return a + b
def return_value(x): return x
def get_list(): return [1, 2, 3]
def raise_error(exc_type, message):
    raise {"ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError,
           "RuntimeError": RuntimeError}[exc_type](message)
async def async_call(x): return x
'''

# ------------------------------------------------------------------ outcomes


@dataclass(frozen=True)
class Outcome:
    """What one engine produced for one case."""

    kind: str  # value | exception | refused | error
    value: str = ""  # value repr, or "Type: message", or the refusal
    stdout: str = ""

    def key(self) -> tuple[str, str, str]:
        """What is compared (addresses masked)."""
        return (self.kind, _ADDRESS.sub(" at 0x…", self.value),
                _ADDRESS.sub(" at 0x…", self.stdout))


_CPYTHON_DRIVER = r'''
import ast, asyncio, contextlib, io, json, sys
src = sys.stdin.read()
ns = {"__name__": "__main__"}
exec(EXTERNALS, ns)
out = io.StringIO()
result = {}
try:
    code = compile(src, "main.py", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    with contextlib.redirect_stdout(out):
        ret = eval(code, ns)
        if asyncio.iscoroutine(ret):
            asyncio.run(ret)
    result = {"kind": "value", "value": ns.get("VALUE")}
except BaseException as exc:
    result = {"kind": "exception", "value": f"{type(exc).__name__}: {exc}"}
result["stdout"] = out.getvalue()
sys.__stdout__.write("\0RESULT" + json.dumps(result))
'''.replace("EXTERNALS", repr(_CPYTHON_EXTERNALS)).replace("VALUE", VALUE_NAME)


def cpython_outcome(program: str, seed: str) -> Outcome:
    """The compared program under plain CPython, in a fresh isolated process."""
    with tempfile.TemporaryDirectory() as cwd:
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", _CPYTHON_DRIVER], input=program, text=True,
                capture_output=True, cwd=cwd, timeout=CASE_WALL_S * 3,
                env={"PYTHONHASHSEED": seed, "PATH": os.environ.get("PATH", "")})
        except subprocess.TimeoutExpired:
            return Outcome("error", "timeout")
    _, sep, payload = proc.stdout.rpartition("\0RESULT")
    if not sep:
        return Outcome("error", f"exit {proc.returncode}: {proc.stderr[-300:]}")
    data = json.loads(payload)
    return Outcome(data["kind"], data["value"] or "", data["stdout"])


_LIMITS = ("timeout", "cpu_limit", "memory_limit", "recursion_limit", "integer_limit",
           "output_limit", "result_limit", "pids_limit")
_NOT_AVAILABLE = "not available in the sandbox"


def toolscript_outcome(result: Any) -> Outcome:
    """A toolscript ``RunResult`` as an outcome."""
    if result.ok:
        return Outcome("value", str(result.value), result.stdout)
    err = result.error
    if err.type in ("script_error", "syntax_error"):
        message = err.message
        if err.type == "syntax_error" and not message.startswith(("SyntaxError", "Indentation")):
            message = f"SyntaxError: {message}"
        first = message.split(":", 1)[0]
        if first in ("ImportError", "ModuleNotFoundError", "AttributeError") and (
                _NOT_AVAILABLE in message):
            return Outcome("refused", message, result.stdout)
        return Outcome("exception", message, result.stdout)
    if err.type == "tool_error":
        # An uncaught tool exception: the script saw the tool's own class and
        # message (``except ValueError`` catches it); the run's report adds the
        # tool's name: "ToolError: raise_error: ValueError: message".
        match = re.fullmatch(r"ToolError: \w+: (\w+: .*)", err.message, re.S)
        return Outcome("exception", match.group(1) if match else err.message, result.stdout)
    return Outcome("refused", f"{err.type}: {err.message}", result.stdout)


def toolscript_tools() -> list[Any]:
    """Monty's external functions as toolscript tools."""
    from toolscript import tool

    return [tool(read_only=True)(f) for f in EXTERNALS.values()]


def monty_passes(case: Case, value: Any, error: BaseException | None) -> bool:
    """Monty's own rule: the outcome matches the case's expectation (strict
    xfail: a case marked ``xfail=monty`` passes when Monty fails it)."""
    ok = _matches(case, value, error)
    return not ok if case.xfail_monty else ok


def _matches(case: Case, value: Any, error: BaseException | None) -> bool:
    exc: Any = None
    if error is not None:
        getter = getattr(error, "exception", None)
        try:
            exc = getter() if callable(getter) else error
        except Exception:
            exc = error
    kind, expected = case.expect_kind, case.expected.strip()
    if kind == "none":
        return error is None
    if kind == "Raise":
        return exc is not None and (repr(exc) == expected or (
            f"{type(exc).__name__}: {exc}" == expected))
    if kind == "Traceback":
        last = expected.strip().splitlines()[-1] if expected.strip() else ""
        return exc is not None and (f"{type(exc).__name__}: {exc}" == last
                                    or type(exc).__name__ == last)
    if error is not None:
        return False
    if kind == "Return":
        return repr(value) == expected
    if kind == "Return.str":
        return str(value) == expected
    if kind == "Return.type":
        return type(value).__name__ == expected
    return False


class MontyRunner:
    """One ``pydantic_monty.Monty`` pool; a fresh session per case."""

    def __init__(self) -> None:
        from pydantic_monty import Monty

        self.pool = Monty()
        self.pool.__enter__()

    def run(self, case: Case) -> tuple[bool, Outcome]:
        """``(passes its own expectation, outcome of the compared program)``."""
        from pydantic_monty import CollectString

        def once(code: str) -> tuple[Any, BaseException | None, str]:
            out = CollectString()
            session = self.pool.checkout(limits={"max_feed_duration_secs": CASE_WALL_S})
            with session:
                try:
                    return session.feed_run(code, external_lookup=EXTERNALS,
                                            print_callback=out), None, out.output
                except Exception as exc:
                    return None, exc, out.output

        value, error, _ = once(case.code)
        passes = monty_passes(case, value, error)
        value, error, printed = once(compared_program(case.code))
        if error is None:
            return passes, Outcome("value", str(value), printed)
        getter = getattr(error, "exception", None)
        try:
            inner = getter() if callable(getter) else error
        except Exception:
            inner = error
        if isinstance(inner, BaseException) and type(inner).__module__ == "builtins":
            return passes, Outcome("exception", f"{type(inner).__name__}: {inner}", printed)
        return passes, Outcome("refused", f"{type(error).__name__}: {error}", printed)

    def close(self) -> None:
        """Close the pool."""
        self.pool.__exit__(None, None, None)


# ------------------------------------------------------------------ verdicts


@dataclass
class CaseResult:
    """Everything measured for one case."""

    name: str
    applicable: bool
    reason: str = ""
    cpython: dict[str, Any] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)  # backend -> verdict
    details: dict[str, str] = field(default_factory=dict)  # backend -> toolscript outcome
    monty_passes: bool | None = None
    monty_verdict: str = ""


_SYNTAX_WHERE = re.compile(r" \(main\.py, line \d+\)$")
_HINT_SEPARATORS = (". ", ": ", " (")


def with_hint(ours: str, reference: str) -> bool:
    """True if ``ours`` is CPython's message with a hint of toolscript's after it
    (``name 'x' is not defined. Available tools: ...``)."""
    return ours.startswith(reference) and ours[len(reference):].startswith(_HINT_SEPARATORS)


def verdict(ours: Outcome, reference: Outcome) -> str:
    """identical, identical+hint, refused or wrong."""
    if reference.kind == "exception" and reference.value.startswith("SyntaxError"):
        reference = Outcome(reference.kind, _SYNTAX_WHERE.sub("", reference.value),
                            reference.stdout)
    if ours.key() == reference.key():
        return "identical"
    if (ours.kind in ("exception", "refused") and reference.kind == "exception"
            and ours.stdout == reference.stdout and with_hint(ours.value, reference.value)):
        return "identical+hint"
    if (ours.kind == "refused" and ours.value.startswith("recursion_limit")
            and reference.kind == "exception" and reference.value.startswith("RecursionError")
            and ours.stdout == reference.stdout):
        return "identical"
    if ours.kind == "refused":
        return "refused"
    return "wrong"


def run_suite(cases: Iterable[Case], backends: list[str], with_monty: bool = True,
              progress: Callable[[str], None] | None = None) -> list[CaseResult]:
    """Run every case on CPython, on each toolscript backend and on Monty."""
    from toolscript import Limits, Runtime

    runtimes = {b: Runtime(tools=toolscript_tools(), backend=b,
                           limits=Limits(wall_time_s=CASE_WALL_S)) for b in backends}
    monty = MontyRunner() if with_monty else None
    results: list[CaseResult] = []
    try:
        for case in cases:
            reason = not_applicable(case)
            program = compared_program(case.code)
            res = CaseResult(case.name, reason is None, reason or "")
            if monty is not None:
                res.monty_passes, monty_out = monty.run(case)
            if reason is None:
                first = cpython_outcome(program, "1")
                second = cpython_outcome(program, "2")
                res.cpython = asdict(first)
                if first.kind == "error":
                    res.applicable, res.reason = False, f"CPython did not finish: {first.value}"
                elif first.key() != second.key():
                    res.applicable, res.reason = False, NA_NONDETERMINISTIC
                elif first.kind == "exception" and first.value.startswith(
                        ("SyntaxError", "IndentationError")) and case.expect_kind != "Raise":
                    res.applicable, res.reason = False, NA_CPYTHON_SYNTAX
            if res.applicable:
                for backend, rt in runtimes.items():
                    with rt.session() as session:
                        ours = toolscript_outcome(session.run(program))
                    res.verdicts[backend] = verdict(ours, first)
                    if res.verdicts[backend] not in ("identical", "identical+hint"):
                        res.details[backend] = f"{ours.kind}: {ours.value[:300]}" + (
                            f" | stdout {ours.stdout[:200]!r}" if ours.stdout != first.stdout
                            else "")
                if monty is not None:
                    res.monty_verdict = verdict(monty_out, first)
            results.append(res)
            if progress is not None:
                progress(f"{case.name}: " + (", ".join(f"{b} {v}" for b, v in res.verdicts.items())
                                              or f"n/a ({res.reason})"))
    finally:
        for rt in runtimes.values():
            rt.close()
        if monty is not None:
            monty.close()
    return results


def summarize(results: list[CaseResult], backends: list[str]) -> dict[str, Any]:
    """Counts per backend, not-applicable reasons, Monty's rates."""
    applicable = [r for r in results if r.applicable]
    per_backend = {}
    for b in backends:
        counts = Counter(r.verdicts.get(b, "") for r in applicable)
        same = counts["identical"] + counts["identical+hint"]
        per_backend[b] = {"identical": same, "with_hint": counts["identical+hint"],
                          "refused": counts["refused"],
                          "wrong": counts["wrong"], "applicable": len(applicable),
                          "identical_pct": round(100 * same / len(applicable), 1)
                          if applicable else 0.0}
    monty_ran = [r for r in results if r.monty_passes is not None]
    monty_cpython = Counter(r.monty_verdict.replace("+hint", "") for r in applicable
                            if r.monty_verdict)
    return {
        "cases": len(results), "applicable": len(applicable),
        "not_applicable": dict(Counter(r.reason for r in results if not r.applicable)),
        "toolscript": per_backend,
        "monty_own_suite": {"passes": sum(1 for r in monty_ran if r.monty_passes),
                            "cases": len(monty_ran)},
        "monty_vs_cpython": {"identical": monty_cpython["identical"],
                             "refused": monty_cpython["refused"],
                             "wrong": monty_cpython["wrong"], "applicable": len(applicable)},
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: run the cases, print the non-identical ones and the totals."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("cases", type=Path, help="directory of Monty's test case files")
    parser.add_argument("--backends", default="inprocess,subprocess",
                        help="comma-separated toolscript backends (inprocess,subprocess,docker)")
    parser.add_argument("--no-monty", action="store_true", help="skip pydantic-monty")
    parser.add_argument("-k", dest="keyword", help="only cases whose name contains this")
    parser.add_argument("--json", type=Path, help="write every case's result to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each case")
    args = parser.parse_args(argv)
    if not args.cases.is_dir():
        print(f"no such directory: {args.cases}", file=sys.stderr)
        return 2
    backends = [b for b in args.backends.split(",") if b]
    cases = [c for c in load_cases(args.cases) if not args.keyword or args.keyword in c.name]
    started = time.perf_counter()
    results = run_suite(cases, backends, with_monty=not args.no_monty,
                        progress=print if args.verbose else None)
    summary = summarize(results, backends)
    for r in results:
        for b, v in r.verdicts.items():
            if v not in ("identical", "identical+hint"):
                print(f"{v:9} {b:10} {r.name}: {r.details.get(b, '')}")
                ref = f"{r.cpython.get('kind')}: {r.cpython.get('value', '')[:300]}"
                print(f"{'':20} CPython: {ref}")
    print(f"\n{summary['cases']} cases, {summary['applicable']} applicable, "
          f"{time.perf_counter() - started:.0f} s")
    for reason, n in sorted(summary["not_applicable"].items(), key=lambda kv: -kv[1]):
        print(f"  not applicable ({n}): {reason}")
    for b, c in summary["toolscript"].items():
        print(f"toolscript {b}: identical {c['identical']}/{c['applicable']} "
              f"({c['identical_pct']} %; {c['with_hint']} of them with a hint after "
              f"CPython's message), refused {c['refused']}, wrong {c['wrong']}")
    if not args.no_monty:
        own, vs = summary["monty_own_suite"], summary["monty_vs_cpython"]
        from importlib.metadata import version

        print(f"pydantic-monty {version('pydantic-monty')}: passes its own expectation on "
              f"{own['passes']}/{own['cases']} cases; identical to CPython on "
              f"{vs['identical']}/{vs['applicable']} applicable (refused {vs['refused']}, "
              f"wrong {vs['wrong']})")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary,
                                         "cases": [asdict(r) for r in results]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
