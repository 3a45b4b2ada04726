"""Engine adapters: one interface over plain ``exec``, the peers and toolscript.

Each engine runs a script and returns an :class:`Outcome` (value of the final
bare expression, printed text, error). ``session()`` gives an open session
whose variables persist (a warm interpreter/sandbox); ``run_fresh`` pays the
full per-run set-up (a new namespace, interpreter, process or container).

Peers are optional: an engine whose package is missing reports
``available=False`` with the reason ("not installed"), and the harness prints
that instead of a number.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .workloads import ToolSpec, batch_value

ALLOWED_MODULES = [
    "math", "statistics", "json", "re", "datetime", "collections", "itertools",
    "functools", "dataclasses", "typing", "string", "decimal", "fractions", "random",
    "operator", "textwrap",
]
"""The modules scripts may import (toolscript's default whitelist)."""

PARALLEL_WORKERS = 16
"""Concurrency of the host-side ``parallel()`` given to engines without one
(toolscript's ``Limits.max_parallel`` default)."""


@dataclass
class Outcome:
    """What one run produced."""

    ok: bool
    value: Any = None
    stdout: str = ""
    error: str | None = None


def json_normal(value: Any) -> Any:
    """``value`` after a JSON round trip (tuples -> lists), as results cross."""
    return json.loads(json.dumps(value, allow_nan=False, default=repr))


def split_final_expression(source: str) -> tuple[ast.Module, ast.Expression | None]:
    """Parse ``source``; pop its final bare expression (notebook-cell semantics)."""
    tree = ast.parse(source, mode="exec")
    final = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
        assert isinstance(last, ast.Expr)
        final = ast.Expression(body=last.value)
    return tree, final


def ends_with_expression(source: str) -> bool:
    """True if the script's last statement is a bare expression."""
    tree = ast.parse(source)
    return bool(tree.body) and isinstance(tree.body[-1], ast.Expr)


def make_parallel(
    resolve: Callable[[Any], Callable[..., Any]], workers: int = PARALLEL_WORKERS
) -> Callable[..., list[Any]]:
    """A host-side ``parallel(tool, [kwargs, ...])`` / ``parallel([(tool, kwargs), ...])``.

    Runs the calls on a thread pool of ``workers`` threads and returns results
    in call order; the first failure in call order is raised unless
    ``return_exceptions`` is true. ``resolve`` maps what the script passes as
    the tool (a function, or a name for engines that pass names) to a callable.
    """
    pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="bench-parallel")

    def parallel(calls: Any, arguments: Any = None, *, return_exceptions: bool = False
                 ) -> list[Any]:
        if arguments is not None:
            fn = resolve(calls)
            planned = [(fn, dict(a)) for a in arguments]
        else:
            planned = [(resolve(item[0]), dict(item[1])) for item in calls]
        futures = [pool.submit(fn, **kwargs) for fn, kwargs in planned]
        results: list[Any] = []
        for future in futures:
            try:
                results.append(future.result())
            except Exception as exc:
                if not return_exceptions:
                    raise
                results.append(exc)
        return results

    return parallel


class EngineSession:
    """An open session of one engine (variables persist between runs)."""

    def run(self, code: str) -> Outcome:  # pragma: no cover - interface
        """Run one script in this session."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget the variables earlier runs left (so large data from one run does not
        stay alive in the harness process and slow other engines' garbage collection)."""

    def close(self) -> None:
        """Release the session."""

    def __enter__(self) -> EngineSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Engine:
    """An engine: how the harness runs a script with the workload tools."""

    name = "engine"
    label = "engine"
    family = "peer"
    available = True
    reason = ""
    fresh_sessions_only = False
    """A variant that differs only in how sandboxes start: run only the workloads
    marked ``fresh_sessions`` (elsewhere it would repeat its base engine)."""

    def setup(self, tools: Sequence[ToolSpec]) -> None:
        """Register the tools (called once before any run)."""

    def session(self) -> EngineSession:  # pragma: no cover - interface
        """A new open session."""
        raise NotImplementedError

    def run_fresh(self, code: str) -> Outcome:
        """One run with the full per-run set-up."""
        with self.session() as session:
            return session.run(code)

    def run_batch(self, code: str, items: Sequence[Any], concurrency: int) -> Outcome:
        """Run ``code`` once per item (bound to ``item``), ``concurrency`` fresh runs at
        a time on a thread pool; the value is :func:`~.workloads.batch_value` of the
        item values (an engine without a batch runner of its own)."""
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            outcomes = list(pool.map(lambda item: self.run_fresh(f"item = {item!r}\n{code}"),
                                     items))
        failed = [o for o in outcomes if not o.ok]
        if failed:
            return Outcome(False, error=f"{len(failed)}/{len(items)} items failed: "
                           f"{failed[0].error}")
        return Outcome(True, batch_value([o.value for o in outcomes]))

    def unsupported(self, workload: Any) -> str | None:
        """Why this engine cannot run ``workload`` (None if it can)."""
        return None

    def close(self) -> None:
        """Release everything (pools, threads, containers)."""

    def version(self) -> str:
        """The engine's package version."""
        return ""


# ---------------------------------------------------------------- plain exec


class _ExecSession(EngineSession):
    def __init__(self, namespace: dict[str, Any]) -> None:
        self.initial = namespace
        self.namespace = dict(namespace)

    def reset(self) -> None:
        self.namespace = dict(self.initial)

    def run(self, code: str) -> Outcome:
        out = io.StringIO()

        def captured_print(*args: Any, sep: str | None = " ", end: str | None = "\n",
                           **_: Any) -> None:
            out.write(("" if sep is None else sep).join(map(str, args))
                      + ("\n" if end is None else end))

        self.namespace["print"] = captured_print
        try:
            tree, final = split_final_expression(code)
            exec(compile(tree, "<script>", "exec"), self.namespace)
            value = None
            if final is not None:
                value = eval(compile(final, "<script>", "eval"), self.namespace)
            return Outcome(True, json_normal(value), out.getvalue())
        except Exception as exc:
            return Outcome(False, None, out.getvalue(), f"{type(exc).__name__}: {exc}")


class ExecEngine(Engine):
    """Plain CPython ``exec``: the limit. Tools are the plain functions, called
    directly (no validation, no copy, no boundary); ``parallel`` is a host
    thread pool."""

    name = "exec"
    label = "CPython exec"
    family = "limit"

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}

    def setup(self, tools: Sequence[ToolSpec]) -> None:
        funcs = {spec.name: spec.func for spec in tools}
        self.namespace = {"__name__": "__main__", **funcs,
                          "parallel": make_parallel(lambda fn: fn)}

    def session(self) -> EngineSession:
        return _ExecSession(self.namespace)

    def version(self) -> str:
        import platform

        return platform.python_version()


# ----------------------------------------------------------------- smolagents


class _SmolSession(EngineSession):
    def __init__(self, engine: SmolagentsEngine) -> None:
        self.engine = engine
        self.reset()

    def reset(self) -> None:
        from smolagents.local_python_executor import LocalPythonExecutor

        self.executor = LocalPythonExecutor(additional_authorized_imports=list(ALLOWED_MODULES))
        self.executor.send_tools(dict(self.engine.static_tools))

    def run(self, code: str) -> Outcome:
        try:
            result = self.executor(code)
        except Exception as exc:
            logs = str(self.executor.state.get("_print_outputs", ""))
            return Outcome(False, None, logs, f"{type(exc).__name__}: {exc}")
        # smolagents returns the value of the last statement whatever it is;
        # the contract is the value of a final *bare expression*.
        value = result.output if ends_with_expression(code) else None
        try:
            value = json_normal(value)
        except (TypeError, ValueError) as exc:
            return Outcome(False, None, result.logs, f"result is not JSON data: {exc}")
        return Outcome(True, value, result.logs)


class SmolagentsEngine(Engine):
    """smolagents' ``LocalPythonExecutor`` (an AST-walking interpreter), the
    tools passed as its static tools."""

    name = "smolagents"
    label = "smolagents LocalPythonExecutor"

    def __init__(self) -> None:
        self.static_tools: dict[str, Any] = {}
        try:
            import smolagents.local_python_executor  # noqa: F401
        except Exception as exc:  # ImportError, or a broken install
            self.available = False
            self.reason = f"not installed ({type(exc).__name__}: {exc})"

    def setup(self, tools: Sequence[ToolSpec]) -> None:
        funcs = {spec.name: spec.func for spec in tools}
        self.static_tools = {**funcs, "parallel": make_parallel(lambda fn: fn)}

    def with_namespace(self, names: dict[str, Any]) -> None:
        """Replace the static tools (the corpus passes its own stubs)."""
        self.static_tools = dict(names)

    def session(self) -> EngineSession:
        return _SmolSession(self)

    def version(self) -> str:
        from importlib.metadata import version

        return version("smolagents")


# ---------------------------------------------------------------------- Monty


class _MontySession(EngineSession):
    def __init__(self, engine: MontyEngine) -> None:
        assert engine.pool is not None
        self.engine = engine
        self.session = engine.pool.checkout(limits=dict(engine.limits))
        self.session.__enter__()
        for snippet in engine.prologue:
            self.session.feed_run(snippet)

    def run(self, code: str) -> Outcome:
        from pydantic_monty import CollectString

        out = CollectString()
        try:
            value = self.session.feed_run(code, external_lookup=self.engine.functions,
                                          print_callback=out)
        except Exception as exc:
            return Outcome(False, None, out.output, f"{type(exc).__name__}: {exc}")
        try:
            value = json_normal(value)
        except (TypeError, ValueError) as exc:
            return Outcome(False, None, out.output, f"result is not JSON data: {exc}")
        return Outcome(True, value, out.output)

    def close(self) -> None:
        self.session.__exit__(None, None, None)


class MontyEngine(Engine):
    """pydantic-monty: a Python subset interpreter in Rust, run in worker
    processes (``Monty`` pool, one ``checkout()`` per session); tools are
    external functions called back on the host. ``max_suspensions`` (external
    calls per run, default 1,000) is raised so the 1,000-call chain fits."""

    name = "monty"
    label = "pydantic-monty"

    def __init__(self) -> None:
        self.pool: Any = None
        self.functions: dict[str, Any] = {}
        self.prologue: list[str] = []
        self.limits = {"max_suspensions": 10_000_000}
        try:
            import pydantic_monty  # noqa: F401
        except Exception as exc:
            self.available = False
            self.reason = f"not installed ({type(exc).__name__}: {exc})"

    def setup(self, tools: Sequence[ToolSpec]) -> None:
        funcs = {spec.name: spec.func for spec in tools}
        self.with_namespace({**funcs, "parallel": make_parallel(self._resolve)})

    def with_namespace(self, functions: dict[str, Any], prologue: Iterable[str] = ()) -> None:
        """Set the external functions (and snippets fed first in each session)."""
        self.functions = dict(functions)
        self.prologue = list(prologue)
        if self.pool is None:
            from pydantic_monty import Monty

            self.pool = Monty()
            self.pool.__enter__()

    def _resolve(self, fn: Any) -> Callable[..., Any]:
        # Monty hands an external function passed as a value to the host as its name.
        found: Callable[..., Any] = self.functions[fn] if isinstance(fn, str) else fn
        return found

    def session(self) -> EngineSession:
        return _MontySession(self)

    def close(self) -> None:
        if self.pool is not None:
            with contextlib.suppress(Exception):
                self.pool.__exit__(None, None, None)
            self.pool = None

    def version(self) -> str:
        from importlib.metadata import version

        return version("pydantic-monty")


# ----------------------------------------------------------------- toolscript


class _ToolscriptSession(EngineSession):
    def __init__(self, runtime: Any) -> None:
        self.session = runtime.session()

    def run(self, code: str) -> Outcome:
        return _outcome(self.session.run(code))

    def reset(self) -> None:
        self.session.reset()

    def close(self) -> None:
        self.session.close()


def _outcome(result: Any) -> Outcome:
    error = None if result.ok else f"{result.error.type}: {result.error.message}"
    return Outcome(bool(result.ok), result.value, result.stdout, error)


VARIANTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "ts-subprocess": ("subprocess", {}, "zygote"),
    "ts-subprocess-direct": ("subprocess", {"zygote": False}, "direct start"),
    "ts-docker": ("docker", {"isolation": "container"}, "container per session"),
    "ts-docker-process": ("docker", {"isolation": "process"}, "process isolation"),
}
"""Isolation modes: engine name -> (backend, backend options, label). The subprocess
backend forks sandboxes from a zygote by default (``zygote=False`` starts a new
interpreter per sandbox); docker gives a session a container of its own
(``isolation="container"``) or a forked, walled process in a shared warm
container (``isolation="process"``)."""


class ToolscriptEngine(Engine):
    """toolscript on one backend, with default limits or inline tools
    (``Limits(tool_timeout_s=None)``: calls without a timeout), in one of the
    backend's isolation modes (:data:`VARIANTS`)."""

    family = "toolscript"

    def __init__(self, backend: str, inline: bool = False,
                 backend_options: dict[str, Any] | None = None, variant: str = "") -> None:
        self.backend = backend
        self.inline = inline
        key = variant or f"ts-{backend}"
        mode = ""
        if key in VARIANTS:
            _, options, mode = VARIANTS[key]
            backend_options = {**options, **(backend_options or {})}
        self.fresh_sessions_only = bool(variant) and variant not in VARIANTS_BASE
        self.name = key + ("-inline" if inline else "")
        details = [d for d in (mode, "inline tools" if inline else "") if d]
        self.label = f"toolscript {backend}" + (f" ({', '.join(details)})" if details else "")
        self.backend_options = dict(backend_options or {})
        self.runtime: Any = None
        self.approve: Any = None
        self.limits_overrides: dict[str, Any] = {}
        if backend == "docker":
            reason = docker_unavailable_reason()
            if reason:
                self.available = False
                self.reason = reason

    def limits(self) -> Any:
        """The :class:`toolscript.Limits` this engine runs with."""
        from toolscript import Limits

        changes: dict[str, Any] = dict(self.limits_overrides)
        if self.inline:
            changes["tool_timeout_s"] = None
        return Limits(**changes)

    def setup(self, tools: Sequence[ToolSpec]) -> None:
        from toolscript import tool

        wrapped = [tool(read_only=spec.read_only)(spec.func) for spec in tools]
        self.setup_raw(wrapped)

    def setup_raw(self, tools: Sequence[Any], approve: Any = None,
                  limits: dict[str, Any] | None = None) -> None:
        """Build the runtime with ready tools (the corpus uses its own)."""
        from toolscript import Runtime

        self.close()
        self.limits_overrides = dict(limits or {})
        self.runtime = Runtime(tools=list(tools), backend=self.backend, approve=approve,
                               limits=self.limits(), backend_options=self.backend_options)

    def session(self) -> EngineSession:
        return _ToolscriptSession(self.runtime)

    def run_fresh(self, code: str) -> Outcome:
        return _outcome(self.runtime.run(code))

    def run_batch(self, code: str, items: Sequence[Any], concurrency: int) -> Outcome:
        """The batch runner behind ``toolscript batch --out``: ``run_batch`` with a JSONL
        results file and checkpoint (fsync per record, as the command does), no
        progress display and no signal handlers."""
        import tempfile
        from pathlib import Path

        from toolscript.runtime.batch.run import run_batch

        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            out = Path(tmp) / "results.jsonl"
            report = run_batch(self.runtime, code, items, concurrency=concurrency, out=out,
                               progress=None, stop_signals=())
            records = [json.loads(line) for line in out.read_text("utf-8").splitlines()
                       if line.strip()]
        summary = report.summary
        if summary.failed or summary.ok != len(items):
            errors = dict(summary.errors_by_type)
            first = next((r.get("error") for r in records if r.get("error")), None)
            return Outcome(False, error=f"{summary.failed}/{len(items)} items failed "
                           f"({errors}): {first}")
        records.sort(key=lambda r: r["index"])
        return Outcome(True, batch_value([r["value"] for r in records]))

    def warm_pool(self, timeout: float = 120.0) -> bool:
        """Docker: fill the warm pool now and wait for it (other backends: no-op)."""
        if self.backend != "docker" or self.runtime is None:
            return True
        from toolscript.runtime.backends.base import SandboxSpec
        from toolscript.runtime.backends.docker.backend import settle

        pool = self.runtime.backend.warm(SandboxSpec(limits=self.runtime.limits))
        if pool is not None and not pool.wait_ready(timeout):
            return False
        # And no other docker engine's container start or removal still under way: the
        # engines run round by round, and another engine's container churn would load
        # the CPUs during this sample.
        return settle(timeout)

    def close(self) -> None:
        if self.runtime is not None:
            self.runtime.close()
            self.runtime = None

    def version(self) -> str:
        from importlib.metadata import version

        try:
            return version("toolscript")
        except Exception:
            return "source"


_DOCKER_REASON: list[str] = []


def docker_unavailable_reason() -> str:
    """Empty if a Docker engine answers and the sandbox image is usable; else why not."""
    if _DOCKER_REASON:
        return _DOCKER_REASON[0]
    reason = ""
    try:
        from toolscript.runtime.backends.docker.image import (
            DEFAULT_IMAGE,
            check_image,
            docker_client,
        )

        client = docker_client(timeout=10)
        client.ping()
        check_image(DEFAULT_IMAGE, client=client)
    except ImportError as exc:
        reason = f"not available (docker SDK not installed: {exc})"
    except Exception as exc:
        reason = f"not available ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
    _DOCKER_REASON.append(reason)
    return reason


VARIANTS_BASE = frozenset({"ts-subprocess", "ts-docker"})
"""The default isolation mode of each backend (run on every workload)."""

ENGINE_ORDER = (
    "exec", "smolagents", "monty",
    "ts-inprocess", "ts-inprocess-inline",
    "ts-subprocess", "ts-subprocess-inline", "ts-subprocess-direct",
    "ts-docker", "ts-docker-inline", "ts-docker-process",
)


def make_engine(name: str) -> Engine:
    """Construct the engine called ``name`` (see :data:`ENGINE_ORDER`)."""
    if name == "exec":
        return ExecEngine()
    if name == "smolagents":
        return SmolagentsEngine()
    if name == "monty":
        return MontyEngine()
    if name in VARIANTS and name not in VARIANTS_BASE:
        return ToolscriptEngine(VARIANTS[name][0], variant=name)
    if name.startswith("ts-"):
        parts = name.split("-")
        return ToolscriptEngine(parts[1], inline=parts[-1] == "inline")
    raise KeyError(name)


def select_engines(patterns: Iterable[str] | None) -> list[str]:
    """Engine names matching ``patterns`` (exact names or substrings; ``toolscript``
    means every ``ts-*``). ``exec`` is always included: ratios need it."""
    if not patterns:
        return list(ENGINE_ORDER)
    chosen = {"exec"}
    for pattern in patterns:
        pattern = pattern.strip().lower()
        if pattern in ("toolscript", "ts"):
            chosen.update(n for n in ENGINE_ORDER if n.startswith("ts-"))
            continue
        matched = [n for n in ENGINE_ORDER if pattern in n]
        if not matched:
            raise SystemExit(f"unknown engine {pattern!r}; choose from {', '.join(ENGINE_ORDER)}")
        chosen.update(matched)
    return [n for n in ENGINE_ORDER if n in chosen]
