"""The restricted interpreter: one namespace, many runs.

``Interpreter.run(code, limits)`` compiles the script with the sandbox policy,
executes it in the persistent namespace, evaluates a final bare expression
once, captures printed output, and returns a result dictionary (the body of
the protocol's ``result`` message). Nothing raised by the script escapes:
every failure becomes an ``error`` object with a stable ``type``.
"""

from __future__ import annotations

import decimal
import gc
import sys
from dataclasses import dataclass
from typing import Any

from . import asyncsupport, audithook, provenance_hooks, watchdog
from .builtins import BuiltinFunction, make_builtins
from .codec import NotJSONData, json_size, to_json_data
from .defaults import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_WALL_TIME_S,
    RUN_LIMIT_DEFAULTS,
)
from .guards import AbortState, Guards, SandboxAbort
from .modules import DEFAULT_MODULES, ModuleTable
from .policy import (
    ASYNC_VALUE_NAME,
    SCRIPT_FILENAME,
    PolicyViolation,
    SyntaxProblem,
    compile_script,
)
from .provenance import Provenance
from .runsources import RunSources
from .toolcalls import (
    SCRIPT_EXCEPTIONS,
    HostLink,
    ToolCaller,
    ToolError,
    error_label,
    install_tool_stubs,
)

_GUARD_NAMES = frozenset({"__builtins__", "__name__", "_getattr_", "_write_", "_write_private_",
                          "_pow_", "_lshift_", "_check_abort_", "_defer_"})


@dataclass(frozen=True)
class RunLimits:
    """Per-run limits enforced inside the sandbox (defaults: :mod:`.defaults`,
    the table the host's ``Limits`` uses too)."""

    wall_s: float | None = DEFAULT_WALL_TIME_S
    cpu_s: float | None = DEFAULT_WALL_TIME_S
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES

    @classmethod
    def from_message(cls, data: dict[str, Any] | None) -> RunLimits:
        """Read limits from a protocol message (missing keys keep defaults)."""
        data = data or {}
        fields = {k: data[k] for k in RUN_LIMIT_DEFAULTS if k in data}
        return cls(**fields)


class OutputBuffer:
    """Captured ``print`` output with a byte cap."""

    def __init__(self, abort: AbortState) -> None:
        self._abort = abort
        self.parts: list[str] = []
        self.size = 0
        self.limit = DEFAULT_MAX_OUTPUT_CHARS
        self.truncated = False

    def reset(self, limit: int) -> None:
        """Empty the buffer for a new run."""
        self.parts = []
        self.size = 0
        self.limit = limit
        self.truncated = False

    def print(self, *values: Any, sep: Any = " ", end: Any = "\n", file: Any = None,
              flush: bool = False) -> None:
        """The sandbox's ``print``."""
        if file is not None:
            raise TypeError("print(file=...) is not available: output always goes to stdout")
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        if type(sep) is not str or type(end) is not str:
            raise TypeError("sep and end must be strings")
        text = sep.join([str(value) for value in values]) + end
        self._abort.raise_if_set()
        size = len(text)
        if self.size + size > self.limit:
            room = max(self.limit - self.size, 0)
            self.parts.append(text[:room])
            self.size = self.limit
            self.truncated = True
            message = f"printed output exceeded the limit of {self.limit} characters"
            self._abort.set("output_limit", message)
            raise SandboxAbort("output_limit", message)
        self.parts.append(text)
        self.size += size

    def text(self) -> str:
        """Everything printed in this run."""
        return "".join(self.parts)


class Interpreter:
    """A restricted interpreter with a persistent namespace and tool stubs."""

    def __init__(
        self,
        link: HostLink,
        tools: list[dict[str, Any]] | None = None,
        modules: list[str] | tuple[str, ...] | None = None,
        labels: bool = False,
    ) -> None:
        self.labels = labels
        """Provenance labels on (issue 27): scripts compile with the labels pass."""
        self.provenance: Provenance | None = None
        self.abort = AbortState()
        self.output = OutputBuffer(self.abort)
        self.sources = RunSources()
        """The current run's clock readings and seed, recorded for a replay."""
        self.caller = ToolCaller(link, self.abort, self.sources)
        self.allowed_modules = frozenset(DEFAULT_MODULES if modules is None else modules)
        self.tools = list(tools or [])
        self.namespace: dict[str, Any] = {}
        self._idle()
        self.reset()

    def reset(self) -> None:
        """Forget every variable, function and class the scripts defined."""
        self._forget_script_objects()
        guards = Guards(self.namespace, self.abort, self.sources)
        self.guards = guards
        self.modules = ModuleTable(self.allowed_modules, guards)
        builtins = make_builtins(guards, self.output.print, self.modules.import_)
        builtins.update(SCRIPT_EXCEPTIONS)
        builtins["parallel"] = BuiltinFunction("parallel", self.caller.parallel)
        self.provenance = None
        if self.labels:
            self.provenance = provenance_hooks.install(builtins, guards, self.output,
                                                       self.caller)
        install_tool_stubs(builtins, self.tools, self.caller.call)
        self.namespace.update(
            {
                "__builtins__": builtins,
                "__name__": "__sandbox__",
                "_getattr_": guards.getattr,
                "_write_": guards.write,
                "_write_private_": guards.write_private,
                "_pow_": guards.pow,
                "_lshift_": guards.lshift,
                "_check_abort_": guards.check_abort,
                "_defer_": asyncsupport.defer,
            }
        )

    def forget(self) -> None:
        """Drop every object of the scripts now, and keep none: the sandbox is being
        killed (inprocess: a script still running in a thread the host gave up on
        stops at its next step, its abort set, and finds no variable of the session)."""
        self._forget_script_objects()

    def _forget_script_objects(self) -> None:
        """Drop the scripts' names first, while the guards are still in the
        namespace: generators finalised now find ``_check_abort_`` (pending
        between runs, see :meth:`_idle`) and stop quietly; then collect cycles."""
        if not self.namespace:
            return
        for name in [n for n in self.namespace if n not in _GUARD_NAMES]:
            del self.namespace[name]
        gc.collect()
        self.namespace.clear()

    def run(self, code: str, limits: RunLimits | None = None,
            sources: dict[str, list[Any]] | None = None) -> dict[str, Any]:
        """Run one script; return ``{ok, value, stdout, stdout_truncated, error}`` (and
        ``sources``, the clock readings and seed it used, if any; ``sources`` given here
        are a replayed run's, served first: see :mod:`.runsources`)."""
        limits = limits or RunLimits()
        self.sources.start(sources)
        self.output.reset(limits.max_output_chars)
        audithook.bind(self.abort)
        try:
            compiled = compile_script(code, self.allowed_modules, SCRIPT_FILENAME,
                                      labels=self.labels)
        except SyntaxProblem as exc:
            return self._result(error={
                "type": "syntax_error",
                "message": f"SyntaxError: {exc.message}",  # the location: line, column
                "line": exc.line, "column": exc.column, "text": exc.text,
            })
        except PolicyViolation as exc:
            return self._result(error={
                "type": "policy_error",
                "message": "The sandbox refused this script: " + "; ".join(exc.errors),
                "details": exc.errors, "retryable": True,
            })
        except SandboxAbort as exc:  # the process sandbox's audit hook refused a step
            return self._result(error={"type": exc.error_type, "message": exc.message})

        self.abort.clear()
        token = watchdog.arm(self.abort, limits.wall_s, limits.cpu_s)
        outcome: dict[str, Any] | None = None
        failure: BaseException | None = None
        try:
            outcome = self._execute(compiled, limits)
        except (KeyboardInterrupt, SystemExit):
            _disarm(token)
            raise
        except BaseException as exc:  # sorted out below, once the watchdog is off
            failure = exc
        finally:
            _disarm(token)
            self.caller.host_decimal = None
        # The watchdog is off: no asynchronous abort can land from here on. A
        # recorded abort (a limit, the audit hook) ends the run as that abort,
        # whatever the script's unwinding turned it into on the way out.
        if self.abort.error_type is not None and not isinstance(failure, SandboxAbort):
            outcome = None
        if outcome is None:
            if isinstance(failure, SandboxAbort):
                outcome = self._abort_error(failure)
            elif self.abort.error_type is not None:
                # An asynchronous abort that landed inside C code can surface as
                # another exception (CPython reports a SystemError for a C call
                # that "returned a result with an exception set"): the run ended
                # because of the abort, and that is what it reports.
                outcome = self._abort_error(SandboxAbort(self.abort.error_type,
                                                         self.abort.message))
            else:
                self._idle()
                assert failure is not None
                raise failure
        self._idle()
        return outcome

    def _idle(self) -> None:
        """Between runs the abort is pending: script code that still runs (the
        ``finally``/``except`` of a generator finalised when the namespace is
        cleared or by the garbage collector, on the inprocess backend in a host
        thread and without a watchdog) stops at its first handler."""
        self.abort.set("idle", "no script is running")

    def _execute(self, compiled: Any, limits: RunLimits) -> dict[str, Any]:
        value: Any = None
        self.caller.host_decimal = decimal.getcontext()
        try:
            with decimal.localcontext():
                asyncsupport.bind(self.caller, self.abort, limits.wall_s)
                if compiled.awaits:  # the top level awaits: a coroutine for the loop
                    asyncsupport.run_script(eval(compiled.body, self.namespace))
                else:
                    exec(compiled.body, self.namespace)
                if compiled.has_value:
                    value = self.namespace.pop(ASYNC_VALUE_NAME, None)
                elif compiled.final_expression is not None:
                    value = eval(compiled.final_expression, self.namespace)
                self.abort.raise_if_set()
                if value is None:
                    return self._result(value=None)
                labelled = value
                if self.provenance is not None:
                    value = provenance_hooks.plain(value)
                try:
                    data = to_json_data(value)
                except NotJSONData as exc:
                    return self._result(error={
                        "type": "unserializable_value",
                        "message": "The final expression must be JSON data (dict, list, str, "
                        "int, float, bool or None); "
                        f"got {type(value).__name__}: {exc}. Convert it, e.g. with list(...), "
                        "dict(...) or dataclasses.asdict(...).",
                    })
                size = json_size(data)
                if size > limits.max_result_bytes:
                    return self._result(error={
                        "type": "result_limit",
                        "message": f"the final value is {size} bytes of JSON; the limit is "
                        f"{limits.max_result_bytes}. Return a summary instead.",
                    })
                return self._result(value=data, labelled=labelled)
        except SandboxAbort:
            raise
        except ToolError as exc:
            return self._result(error={
                "type": "tool_error",
                "message": f"{error_label(exc)}: {_text(exc.message)}",
                "tool": _text(exc.tool), "tool_error_type": _text(exc.type),
                "line": _script_line(exc),
            }, labelled=exc)
        except RecursionError as exc:
            return self._result(error={
                "type": "recursion_limit", "message": f"RecursionError: {_text(exc)}",
                "line": _script_line(exc),
            })
        except MemoryError as exc:
            return self._result(error={
                "type": "memory_limit",
                "message": f"MemoryError: the script ran out of memory {_text(exc)}".strip(),
                "line": _script_line(exc),
            })
        except (KeyboardInterrupt, SystemExit):
            raise  # the host's (inprocess) signal: scripts cannot name these classes
        except BaseException as exc:  # incl. GeneratorExit and a script's own subclasses
            return self._result(error={  # the line is a field, never in the message
                "type": "script_error",
                "message": f"{_type_name(exc)}: {_text(exc)}{self._tools_hint(exc)}",
                "exception": _type_name(exc), "line": _script_line(exc),
            }, labelled=exc)

    def _tools_hint(self, exc: BaseException) -> str:
        """For a NameError (often a misremembered tool name): the available tools."""
        if type(exc) is not NameError or not self.tools:
            return ""
        names = ", ".join(sorted(str(spec["name"]) for spec in self.tools))
        return f". Available tools: {names}"

    def _abort_error(self, exc: SandboxAbort) -> dict[str, Any]:
        error_type = self.abort.error_type or exc.error_type
        message = self.abort.message or exc.message
        return self._result(error={"type": error_type, "message": message})

    def _result(self, value: Any = None, error: dict[str, Any] | None = None,
                labelled: Any = None) -> dict[str, Any]:
        if error is not None:
            error = {k: v for k, v in error.items() if v is not None}
        result = {
            "ok": error is None,
            "value": value if error is None else None,
            "stdout": self.output.text(),
            "stdout_truncated": self.output.truncated,
            "error": error,
        }
        if self.provenance is not None:
            result["labels"] = self.provenance.output_labels(labelled)
            self.provenance.output = []
        recorded = self.sources.recorded()
        if recorded:
            result["sources"] = recorded
        return result


def _text(value: Any) -> str:
    """``str(value)`` as a plain ``str`` for the result: a script's exception may
    have a ``__str__`` that raises, or returns a ``str`` subclass whose methods
    would run script code wherever the host handles the text."""
    try:
        text = value if type(value) is str else str(value)
        return text if type(text) is str else str.__str__(text)
    except (SandboxAbort, KeyboardInterrupt, SystemExit):
        raise  # a limit stopped the formatting, or the host's own signal
    except BaseException:
        return f"<unprintable {_type_name(value)}>"


def _disarm(token: Any) -> None:
    """Stop the watchdog for this run, even if its last asynchronous abort lands
    while we do (disarming is idempotent and clears a pending one)."""
    while True:
        try:
            watchdog.disarm(token)
            return
        except SandboxAbort:
            continue


def _type_name(obj: Any) -> str:
    kind = obj if isinstance(obj, type) else type(obj)
    return kind.__name__


def _script_line(exc: BaseException) -> int | None:
    """The innermost line of the script in the exception's traceback.

    Reads ``tb_frame`` itself rather than through ``traceback.walk_tb``: the
    process sandboxes' audit hook allows that read from this function only.
    """
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == SCRIPT_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def set_recursion_limit(limit: int) -> None:
    """Set the interpreter's recursion limit (used by the process server)."""
    sys.setrecursionlimit(limit)
