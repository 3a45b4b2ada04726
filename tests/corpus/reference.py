"""Plain-CPython reference runner for the conformance corpus.

:func:`run_script` runs one corpus script under ordinary ``exec`` with the
semantics the sandbox promises, so the sandbox's ``(value, stdout)`` can be
compared with this one for every script and every backend.

Semantics reproduced here (the contract the sandbox must match):

* **Tools are globals.** Each tool in ``tools`` (default:
  :data:`corpus_tools.ALL_TOOLS`) is injected under its function name as a stub.
  A call binds positional and keyword arguments to the tool's signature, passes
  the bound arguments through a JSON round trip (``json.loads(json.dumps(...))``),
  runs the tool, and passes its result through a JSON round trip as well (so
  tuples come back as lists and dict keys as strings).

* **Tool failures raise ``ToolError``.** ``ToolError`` is a builtin name in the
  script's namespace, a direct subclass of ``Exception``. When a tool raises
  ``exc``, the script sees ``ToolError(message)`` with ::

      message = f"{tool_name}: {type(exc).__name__}: {exc}"

  i.e. ``str(exc)`` as CPython renders it (a ``KeyError``'s message therefore
  keeps its quotes: ``"get_customer: KeyError: 'customer C013 was deleted'"``).
  ``err.message == err.args[0]``. When ``exc`` is an instance of one of the
  common builtin exception classes (``KeyError``, ``ValueError``,
  ``LookupError``, ... see ``CATCHABLE``), ``err`` is also an instance of the
  most specific of them (so ``except KeyError:`` catches it, as it would a
  direct function call), its class has that builtin's ``__name__`` and
  ``str(err) == str(exc)``, ``repr(err) == repr(exc)`` for a one-string
  exception (``ValueError('order not found')``); otherwise ``str(err) == err.message``.
  The tool's own exception object never reaches the script (the ToolError is raised ``from None``).

* **``parallel``** is a builtin name with two call forms::

      parallel([(tool, {kwargs}), (tool, {kwargs}), ...], return_exceptions=False)
      parallel(tool, [{kwargs}, {kwargs}, ...], return_exceptions=False)

  It returns a list of results in call order. If a call fails and
  ``return_exceptions`` is false, it raises the failure of the first failing
  call in call order (a ``ToolError`` as above); with ``return_exceptions=True``
  each failure appears in place as its ``ToolError`` instance. The reference
  runs the calls one after another; the sandbox may run them concurrently, which
  is indistinguishable for the read-only tools the corpus passes to it.
  An empty call list returns ``[]``.

* **Async code.** A tool called from async code - an ``async def`` body (a
  comprehension in it included, a nested ``def`` or ``lambda`` not) or the top
  level of a script that awaits - returns a coroutine (arguments bound and
  checked at the call), as Anthropic's programmatic tool calling makes tools
  async functions; called from sync code it returns its value. A script whose
  top level awaits runs under ``asyncio.run``; its final expression is
  evaluated in the same loop after the statements. ``asyncio`` is the real one.

* **``print``** writes to a captured buffer (``sep``/``end`` honoured).

* **Result.** The source is parsed with :mod:`ast`; if its last statement is a
  bare expression, the statements before it are executed and then that
  expression is evaluated exactly once in the same namespace; otherwise the
  value is ``None``. The value is normalised through a JSON round trip
  (``allow_nan=False``; a value that is not JSON-able raises ``TypeError`` /
  ``ValueError``).

Corpus-only strictness: arguments are checked against the tool's type hints
before the call (``str``, ``int``, ``float`` accepting ints, ``bool``,
``X | None``). The real runtime validates them with JSON Schema and reports a
violation in its own words; the corpus must never depend on that wording, so a
mismatch here raises :class:`CorpusUsageError`, a ``BaseException`` a script's
``except Exception`` cannot swallow.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import io
import json
import sys
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

try:  # imported as tests.corpus.reference or with tests/corpus on sys.path
    from . import corpus_tools
except ImportError:  # pragma: no cover - direct execution
    import corpus_tools  # type: ignore[no-redef]

__all__ = [
    "SCRIPTS_DIR",
    "CorpusUsageError",
    "ToolError",
    "make_namespace",
    "run_file",
    "run_script",
    "script_paths",
    "tool_error_message",
]

SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"


class ToolError(Exception):
    """A tool call failed; ``message`` is ``"{tool}: {ExcType}: {text}"``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


CATCHABLE: tuple[type[BaseException], ...] = (
    KeyError, IndexError, LookupError, ZeroDivisionError, OverflowError, ArithmeticError,
    FileNotFoundError, ConnectionError, OSError, NotImplementedError, RecursionError,
    RuntimeError, AttributeError, TypeError, ValueError, AssertionError,
)


class _Raised(ToolError):
    def __init__(self, message: str, original: str) -> None:
        super().__init__(message)
        self.original = original
        key = original[1:-1]  # a KeyError's str() is the repr of its argument
        self.args = (key if isinstance(self, KeyError) and repr(key) == original else original,)

    def __str__(self) -> str:
        return self.original


_RAISED = {kind: type(kind.__name__, (_Raised, kind), {}) for kind in CATCHABLE}


def tool_error_for(tool_name: str, exc: BaseException) -> ToolError:
    """The exception a script sees when ``tool_name`` raised ``exc``."""
    message = tool_error_message(tool_name, exc)
    for kind in type(exc).__mro__:
        if kind in _RAISED:
            return _RAISED[kind](message, str(exc))  # type: ignore[no-any-return]
    return ToolError(message)


class CorpusUsageError(BaseException):
    """A corpus script called a tool or ``parallel`` in a way the sandbox rejects."""


def tool_error_message(tool_name: str, exc: BaseException) -> str:
    """The message a script sees when ``tool_name`` raised ``exc``."""
    return f"{tool_name}: {type(exc).__name__}: {exc}"


def _json_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


def _matches(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, h) for h in typing.get_args(hint))
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is not None:
        return isinstance(value, origin)
    return isinstance(value, hint)


class _ToolStub:
    """What a script sees under a tool's name: a callable with the tool's signature."""

    def __init__(self, fn: Callable[..., Any], calls: list[dict[str, Any]]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.signature = inspect.signature(fn)
        self.hints = typing.get_type_hints(fn)
        self.calls = calls

    def bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise CorpusUsageError(f"{self.name}: bad arguments: {exc}") from None
        for pname, value in bound.arguments.items():
            hint = self.hints.get(pname, Any)
            if not _matches(value, hint):
                raise CorpusUsageError(
                    f"{self.name}: argument {pname}={value!r} does not match {hint}"
                )
        try:
            return dict(_json_round_trip(bound.arguments))
        except (TypeError, ValueError) as exc:
            raise CorpusUsageError(f"{self.name}: arguments are not JSON: {exc}") from None

    def invoke(self, arguments: dict[str, Any]) -> Any:
        self.calls.append({"tool": self.name, "args": arguments})
        try:
            result = self.fn(**arguments)
        except Exception as exc:
            raise tool_error_for(self.name, exc) from None
        return _json_round_trip(result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.bind(args, kwargs)
        if _called_from_async_code():
            return self._later(bound)
        return self.invoke(bound)

    async def _later(self, arguments: dict[str, Any]) -> Any:
        return self.invoke(arguments)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


_COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
_ASYNC_CODE = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _called_from_async_code() -> bool:
    """True if the stub's caller (past comprehension frames) is a coroutine."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name in _COMPREHENSIONS:
        frame = frame.f_back
    return frame is not None and bool(frame.f_code.co_flags & _ASYNC_CODE)


def _make_parallel(stubs: Iterable[_ToolStub]) -> Callable[..., list[Any]]:
    known = {id(s) for s in stubs}

    def check_stub(fn: Any) -> _ToolStub:
        if not isinstance(fn, _ToolStub) or id(fn) not in known:
            raise CorpusUsageError(f"parallel: {fn!r} is not a tool")
        return fn

    def parallel(
        calls: Any, kwargs_list: Any = None, *, return_exceptions: bool = False
    ) -> list[Any]:
        planned: list[tuple[_ToolStub, dict[str, Any]]] = []
        if kwargs_list is None:
            for item in calls:
                if not (isinstance(item, (tuple, list)) and len(item) == 2):
                    raise CorpusUsageError("parallel: each call must be (tool, {kwargs})")
                fn, kw = item
                if not isinstance(kw, dict):
                    raise CorpusUsageError("parallel: the kwargs of a call must be a dict")
                planned.append((check_stub(fn), kw))
        else:
            stub = check_stub(calls)
            for kw in kwargs_list:
                if not isinstance(kw, dict):
                    raise CorpusUsageError("parallel: the kwargs of a call must be a dict")
                planned.append((stub, kw))
        if any(s.fn in corpus_tools.WRITE_TOOLS for s, _ in planned):
            raise CorpusUsageError("parallel: write tools never run concurrently")
        # bind (and validate) everything first, as the host does before dispatching
        bound = [(s, s.bind((), kw)) for s, kw in planned]
        results: list[Any] = []
        for stub, arguments in bound:
            try:
                results.append(stub.invoke(arguments))
            except ToolError as err:
                if not return_exceptions:
                    raise
                results.append(err)
        return results

    return parallel


def make_namespace(
    tools: Sequence[Callable[..., Any]] | None = None,
    out: io.StringIO | None = None,
    calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A fresh global namespace with tool stubs, ``parallel``, ``ToolError`` and ``print``."""
    tools = corpus_tools.ALL_TOOLS if tools is None else tools
    out = io.StringIO() if out is None else out
    calls = [] if calls is None else calls
    stubs = [_ToolStub(fn, calls) for fn in tools]

    def captured_print(
        *args: Any,
        sep: str | None = " ",
        end: str | None = "\n",
        file: Any = None,
        flush: bool = False,
    ) -> None:
        if file is not None:
            raise CorpusUsageError("print(file=...) is not part of the corpus")
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        out.write(sep.join(str(a) for a in args) + end)

    ns: dict[str, Any] = {"__name__": "__toolscript__", "__builtins__": __builtins__}
    ns.update({s.name: s for s in stubs})
    ns["parallel"] = _make_parallel(stubs)
    ns["ToolError"] = ToolError
    ns["print"] = captured_print
    return ns


def run_script(
    source: str,
    *,
    tools: Sequence[Callable[..., Any]] | None = None,
    filename: str = "<script>",
    calls: list[dict[str, Any]] | None = None,
) -> tuple[Any, str]:
    """Run ``source`` and return ``(value, stdout)``.

    ``value`` is the JSON-normalised result of the final bare expression (``None``
    if the script does not end with one). Exceptions the script does not catch
    propagate. The write tools' outbox is reset before the run. Each attempted
    tool call is appended to ``calls`` if given.
    """
    corpus_tools.reset_outbox()
    out = io.StringIO()
    ns = make_namespace(tools, out, calls)
    tree = ast.parse(source, filename=filename, mode="exec")
    last: ast.expr | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop().value
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    final = (compile(ast.Expression(body=last), filename, "eval", flags=flags, dont_inherit=True)
             if last is not None else None)
    if body.co_flags & inspect.CO_COROUTINE or (
            final is not None and final.co_flags & inspect.CO_COROUTINE):

        async def main() -> Any:
            started = eval(body, ns)
            if body.co_flags & inspect.CO_COROUTINE:
                await started
            if final is None:
                return None
            result = eval(final, ns)
            return await result if final.co_flags & inspect.CO_COROUTINE else result

        value = asyncio.run(main())
    else:
        exec(body, ns)
        value = eval(final, ns) if final is not None else None
    return _json_round_trip(value), out.getvalue()


def script_paths() -> list[Path]:
    """Every corpus script, sorted by name."""
    return sorted(SCRIPTS_DIR.glob("[0-9][0-9][0-9]_*.py"))


def run_file(path: str | Path, **kwargs: Any) -> tuple[Any, str]:
    """:func:`run_script` on a file."""
    path = Path(path)
    return run_script(path.read_text(encoding="utf-8"), filename=str(path), **kwargs)


if __name__ == "__main__":  # pragma: no cover - manual use
    import sys

    for arg in sys.argv[1:] or [str(p) for p in script_paths()]:
        value, stdout = run_file(arg)
        print(f"== {arg}")
        print(stdout, end="")
        print("=>", json.dumps(value)[:500])
