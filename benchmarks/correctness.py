"""Correctness side by side: the conformance corpus on every engine.

Each of the corpus scripts (``tests/corpus/scripts``) is run by each engine
and its ``(value, stdout)`` is compared with the plain-CPython reference
(``tests/corpus/reference.py``). The peers get the reference's own tool stubs
(the same JSON round trips and ``ToolError`` messages), so a difference is a
difference of the interpreter, not of the tool bridge:

* ``exec`` is the reference itself (a determinism check: 100 % by construction);
* smolagents: the stubs, ``parallel`` and ``ToolError`` are static tools (a
  tool passed as a value reaches ``parallel`` wrapped by smolagents, so it is
  unwrapped first); its own print capture is the stdout; the value is its output when the script
  ends with a bare expression (smolagents returns the last statement's value
  whatever it is);
* Monty: the stubs and ``parallel`` are external functions (a tool passed as a
  value reaches the host as its name, which ``parallel`` resolves); Monty
  cannot raise a host-defined exception class inside the sandbox (a host
  exception arrives as its nearest builtin base), so each session first runs
  ``ToolError = Exception``;
* toolscript: ``Runtime(tools=corpus_tools.ALL_TOOLS, approve=allow)``, as the
  conformance test does.
"""

from __future__ import annotations

import collections
import re
import sys
import time
from pathlib import Path
from typing import Any

from .engines import Engine, MontyEngine, Outcome, SmolagentsEngine, ToolscriptEngine, json_normal

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"


def _corpus_modules() -> tuple[Any, Any]:
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))
    import corpus_tools
    import reference

    return corpus_tools, reference


def _classify(error: str) -> str:
    """A short category of a failure, for the per-engine summary."""
    text = " ".join(error.split()) if error else ""
    if " due to: " in text:  # smolagents: "Code execution failed at line '...' due to: ..."
        text = text.rsplit(" due to: ", 1)[1]
    text = re.sub(r"^(MontyRuntimeError|InterpreterError): ", "", text)
    for pattern, label in (
        (r"Forbidden access to dunder attribute: (\w+)", r"dunder attribute \1 refused"),
        (r"Import of (\S+) is not allowed", r"import \1 refused"),
        (r"No module named '?([\w.]+)", r"module \1 missing"),
        (r"ModuleNotFoundError", "module missing"),
        (r"does not yet support the (\w+) option", r"dataclass \1= not supported"),
        (r"does not yet support the '(\w+)' statement", r"\1 statement not supported"),
        (r"(\w+) is not supported", r"\1 not supported"),
        (r"does not yet support ([\w' ]+?)(?: expressions| statement| \(|$)",
         r"\1 not supported"),
        (r"'Exception' object has no attribute 'message'",
         "ToolError.message (a host exception arrives as a plain Exception)"),
        (r"cannot import name '(\w+)'", r"\1 not importable"),
        (r"cannot suspend in this synchronous context", "tool call inside map()/callback"),
        (r"is not defined", "comprehension/closure scoping"),
        (r"Cannot unpack tuple of wrong size", "star-unpacking"),
        (r"takes no arguments", "dataclass/NamedTuple construction"),
        (r"would erase the existing tool", "name clashes with a built-in tool"),
        (r"is not among the explicitly allowed tools", "builtin not allowed"),
        (r"object is not an iterator", "iterator protocol"),
        (r"NotImplementedError", "not implemented"),
        (r"'(\w+)' object has no attribute '?(\w+)", r"\1.\2 missing"),
        (r"has no attribute '?(\w+)", r"attribute \1 missing"),
        (r"Reached the max number of operations", "operation cap"),
        (r"exceeded the maximum execution time", "timeout"),
        (r"value/stdout differ", "different result"),
    ):
        match = re.search(pattern, text)
        if match:
            return match.expand(label)
    head = text[:80]
    return head or "failed"


def run_corpus(engine_names: list[str], limit: int | None = None) -> dict[str, Any]:
    """Share of corpus scripts each engine runs with CPython-identical results."""
    corpus_tools, reference = _corpus_modules()
    scripts = reference.script_paths()
    if limit:
        scripts = scripts[:limit]
    expected: dict[str, tuple[Any, str]] = {}
    for path in scripts:
        corpus_tools.reset_outbox()
        expected[path.name] = reference.run_file(path)

    results: dict[str, Any] = {"scripts": len(scripts), "engines": {}}
    for name in engine_names:
        started = time.perf_counter()
        try:
            entry = _run_engine(name, scripts, expected, corpus_tools, reference)
        except _Unavailable as exc:
            entry = {"status": "unavailable", "reason": str(exc)}
        except Exception as exc:  # an engine that breaks must not stop the report
            entry = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
        entry["seconds"] = time.perf_counter() - started
        results["engines"][name] = entry
    return results


class _Unavailable(Exception):
    pass


def _run_engine(name: str, scripts: list[Path], expected: dict[str, tuple[Any, str]],
                corpus_tools: Any, reference: Any) -> dict[str, Any]:
    runner, close = _runner(name, corpus_tools, reference)
    failures: dict[str, str] = {}
    try:
        for path in scripts:
            corpus_tools.reset_outbox()
            source = path.read_text("utf-8")
            try:
                outcome = runner(source, path)
            except BaseException as exc:  # CorpusUsageError is a BaseException
                if isinstance(exc, KeyboardInterrupt):
                    raise
                outcome = Outcome(False, error=f"{type(exc).__name__}: {exc}")
            want = expected[path.name]
            if not outcome.ok:
                failures[path.name] = outcome.error or "failed"
            elif (outcome.value, outcome.stdout) != want:
                failures[path.name] = (f"value/stdout differ: got {outcome.value!r:.120} / "
                                       f"{outcome.stdout!r:.80}, want {want[0]!r:.120} / "
                                       f"{want[1]!r:.80}")
    finally:
        close()
    identical = len(scripts) - len(failures)
    reasons = collections.Counter(_classify(error) for error in failures.values())
    return {
        "status": "ok",
        "identical": identical,
        "share": identical / len(scripts) if scripts else 0.0,
        "failures": failures,
        "reasons": dict(reasons.most_common()),
    }


def _runner(name: str, corpus_tools: Any, reference: Any) -> tuple[Any, Any]:
    if name == "exec":
        def run_exec(source: str, path: Path) -> Outcome:
            value, stdout = reference.run_script(source, filename=str(path))
            return Outcome(True, value, stdout)

        return run_exec, lambda: None

    if name == "smolagents":
        smol = SmolagentsEngine()
        if not smol.available:
            raise _Unavailable(smol.reason)
        names = _reference_names(reference)
        reference_parallel = names["parallel"]

        def unwrap(fn: Any) -> Any:
            # smolagents hands a tool used as a value over wrapped (functools.wraps)
            return getattr(fn, "__wrapped__", fn)

        def smol_parallel(calls: Any, arguments: Any = None, **kwargs: Any) -> Any:
            if arguments is not None:
                calls = unwrap(calls)
            else:
                calls = [(unwrap(c[0]), *c[1:]) if isinstance(c, (tuple, list)) and c else c
                         for c in calls]
            return reference_parallel(calls, arguments, **kwargs)

        smol.with_namespace({**names, "parallel": smol_parallel})

        def run_smol(source: str, path: Path) -> Outcome:
            with smol.session() as session:
                return session.run(source)

        return run_smol, smol.close

    if name == "monty":
        monty = MontyEngine()
        if not monty.available:
            raise _Unavailable(monty.reason)
        names = _reference_names(reference)
        stubs = {k: v for k, v in names.items() if k not in ("ToolError", "parallel")}
        original_parallel = names["parallel"]

        def parallel(calls: Any, arguments: Any = None, **kwargs: Any) -> Any:
            if arguments is not None:
                calls = stubs.get(calls, calls)
            else:
                calls = [(stubs.get(c[0], c[0]), *c[1:]) for c in calls]
            return original_parallel(calls, arguments, **kwargs)

        monty.with_namespace({**stubs, "parallel": parallel},
                             prologue=["ToolError = Exception"])

        def run_monty(source: str, path: Path) -> Outcome:
            with monty.session() as session:
                return session.run(source)

        return run_monty, monty.close

    if name.startswith("ts-"):
        engine: Engine = _make_ts(name)
        if not engine.available:
            raise _Unavailable(engine.reason)
        assert isinstance(engine, ToolscriptEngine)
        engine.setup_raw(corpus_tools.ALL_TOOLS, approve=lambda request: True,
                         limits={"wall_time_s": 60, "max_output_chars": 1_000_000})
        engine.warm_pool()

        def run_ts(source: str, path: Path) -> Outcome:
            outcome = engine.run_fresh(source)
            if outcome.ok:
                outcome.value = json_normal(outcome.value)
            return outcome

        return run_ts, engine.close

    raise KeyError(name)


def _make_ts(name: str) -> ToolscriptEngine:
    parts = name.split("-")
    return ToolscriptEngine(parts[1], inline=parts[-1] == "inline")


def _reference_names(reference: Any) -> dict[str, Any]:
    """The reference namespace's tool stubs, ``parallel`` and ``ToolError``."""
    namespace = reference.make_namespace()
    return {k: v for k, v in namespace.items()
            if k not in ("__name__", "__builtins__", "print")}
