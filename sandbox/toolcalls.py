"""Tool stubs inside the sandbox: a call becomes a message to the host.

A tool name in a script is a :class:`ToolStub`. Calling it binds the
arguments to the tool's parameter names, sends ``{tool, args}`` through the
:class:`HostLink` and blocks for the reply: JSON data on success, a
:class:`ToolError` (catchable by the script) on failure. ``parallel`` sends
several calls at once; the host runs read-only ones concurrently.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .codec import NotJSONData, to_json_data
from .guards import AbortState, SandboxAbort
from .runsources import RunSources
from .standins import hide_constructor


class HostLink(Protocol):
    """How the sandbox reaches the host: one call, or many at once."""

    def call(self, tool: str, args: dict[str, Any],
             labels: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """Send one call; return the reply message (``ok`` + ``value`` or ``error``).
        ``labels`` (provenance on): per argument, the untrusted sources it depends on."""
        ...

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send several calls (each ``{tool, args}``, with ``labels`` when provenance
        is on); return one reply per call, in order."""
        ...


class ToolError(Exception):
    """A tool call failed. ``tool`` names the tool, ``type`` is a stable error
    type (``invalid_arguments``, ``denied``, ``timeout``, ``tool_exception``,
    ``unknown_tool``, ...) and ``message`` says what happened."""

    def __init__(self, message: str, tool: str = "", type: str = "tool_error", **details: Any):
        super().__init__(message)
        self.message = message
        self.tool = tool
        self.type = type
        self.details = details

    def __str__(self) -> str:
        return self.message


class ToolArgumentError(ToolError, TypeError):
    """The arguments do not match the tool's parameters."""


class ToolDenied(ToolError, PermissionError):
    """The approval policy refused the call."""


class ToolNotFound(ToolError, NameError):
    """No tool of that name is available."""


class ToolTimeout(ToolError, TimeoutError):
    """The tool did not finish within its timeout."""


_ERROR_CLASSES: dict[str, type[ToolError]] = {
    "invalid_arguments": ToolArgumentError,
    "invalid_json": ToolArgumentError,
    "denied": ToolDenied,
    "unknown_tool": ToolNotFound,
    "timeout": ToolTimeout,
}

SCRIPT_EXCEPTIONS = {
    "ToolError": ToolError,
    "ToolArgumentError": ToolArgumentError,
    "ToolDenied": ToolDenied,
    "ToolNotFound": ToolNotFound,
    "ToolTimeout": ToolTimeout,
}
"""Exception classes scripts can catch, by their builtin names."""

LIMIT_ERRORS = frozenset({"tool_call_limit", "host_abort"})
"""Reply error types that end the whole run instead of raising in the script."""


class _ToolRaised(ToolError):
    """Base of the classes of failed calls whose tool raised a builtin exception:
    ``str()``, ``repr()`` and ``type(e).__name__`` are the builtin's as CPython
    shows them (``ValueError('order not found')``); ``e.tool``, ``e.type`` and
    ``e.message`` (``'get_order: ValueError: order not found'``) name the tool."""

    def __init__(self, message: str, tool: str = "", type: str = "tool_error", **details: Any):
        super().__init__(message, tool, type, **details)
        text = str(details.get("exception_message", message))
        self.args = (_key_error_argument(text) if isinstance(self, KeyError) else text,)

    def __str__(self) -> str:
        return str(self.details.get("exception_message", self.message))


def _key_error_argument(text: str) -> str:
    """The argument of a ``KeyError`` whose ``str()`` is ``text`` (``"'C1'"`` → ``'C1'``),
    so that ``repr()`` is CPython's ``KeyError('C1')``; ``text`` itself otherwise."""
    inner = text[1:-1]
    return inner if len(text) >= 2 and repr(inner) == text else text


CATCHABLE_BUILTIN_EXCEPTIONS: tuple[type[BaseException], ...] = (
    KeyError, IndexError, LookupError, ZeroDivisionError, OverflowError, ArithmeticError,
    FileNotFoundError, ConnectionError, OSError, NotImplementedError, RecursionError,
    RuntimeError, AttributeError, TypeError, ValueError, AssertionError,
)
"""Builtin classes a failed call may also be caught as (the host names the most
specific one the tool's exception is an instance of)."""

TOOL_RAISED_MODULE = "toolerror"
"""The ``__module__`` of those classes: ``repr(type(e))`` is ``<class 'toolerror.ValueError'>``,
never the builtin's own name (a script cannot mistake one for the other)."""

_BUILTIN_BASES = {kind.__name__: kind for kind in CATCHABLE_BUILTIN_EXCEPTIONS}

_RAISED_CLASSES: dict[str, type[ToolError]] = {
    name: type(name, (_ToolRaised, base), {
        "__module__": TOOL_RAISED_MODULE, "__qualname__": name,
        "__doc__": f"A tool raised {name}: catchable as ToolError and as {name}.",
    })
    for name, base in _BUILTIN_BASES.items()
}


def error_label(exc: ToolError) -> str:
    """How a run ended by an uncaught failed call names it: the class for the
    sandbox's own (``ToolDenied``), ``ToolError`` for a tool that raised a
    builtin (its message names the tool and the builtin)."""
    return "ToolError" if isinstance(exc, _ToolRaised) else type(exc).__name__


def error_from_reply(tool: str, error: dict[str, Any]) -> ToolError:
    """Turn a reply's ``error`` object into the matching :class:`ToolError`.

    A ``tool_exception`` whose tool raised a builtin exception class (or a
    subclass of one) is also an instance of that class, so the common
    ``except KeyError:`` around a tool call catches it; its ``str()`` is the
    tool's own message.
    """
    error_type = str(error.get("type", "tool_error"))
    message = str(error.get("message", "tool call failed"))
    cls = _ERROR_CLASSES.get(error_type, ToolError)
    if error_type == "tool_exception":
        cls = _RAISED_CLASSES.get(str(error.get("builtin_exception")), ToolError)
    details = {k: v for k, v in error.items() if k not in ("type", "message")}
    return cls(message, tool=tool, type=error_type, **details)


def not_json_reply(exc: Exception) -> dict[str, Any]:
    """The reply to a call whose arguments are not JSON data (made in the sandbox:
    such a call never reaches the host)."""
    return {
        "ok": False,
        "error": {
            "type": "invalid_arguments",
            "message": "tool arguments must be JSON data (dict, list, str, int, float, bool, "
            f"None): {exc}",
        },
    }


class ToolStub:
    """The callable a script sees for one tool."""

    def __init__(
        self,
        name: str,
        positional: Sequence[str],
        read_only: bool,
        doc: str,
        call_host: Callable[[str, dict[str, Any]], Any],
    ) -> None:
        self._name = name
        self._positional = tuple(positional)
        self._read_only = read_only
        self._call_host = call_host
        self.__doc__ = doc

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def read_only(self) -> bool:
        """True if the tool only reads (it may run concurrently in ``parallel``)."""
        return self._read_only

    def bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Map positional and keyword arguments onto parameter names."""
        if len(args) > len(self._positional):
            raise ToolArgumentError(
                f"{self._name}() takes {len(self._positional)} positional argument(s) but "
                f"{len(args)} were given",
                tool=self._name,
                type="invalid_arguments",
            )
        bound = dict(zip(self._positional, args, strict=False))
        for key, value in kwargs.items():
            if key in bound:
                raise ToolArgumentError(
                    f"{self._name}() got multiple values for argument {key!r}",
                    tool=self._name,
                    type="invalid_arguments",
                )
            bound[key] = value
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call_host(self._name, self.bind(args, kwargs))

    def __repr__(self) -> str:
        return f"<tool {self._name}>"


# ``type(tool)(name, params, read_only, doc, callback)`` would make stubs with any
# name, any read-only claim and any callback
hide_constructor(ToolStub, "call the tools by name: every tool the script may call is "
                 "already defined", shown_as="tool")


class ToolNamespace:
    """What a script sees for a namespace of tools (``github``): its tools as
    read-only attributes (``github.list_prs(...)`` is an ordinary :class:`ToolStub`
    call). No state but the name and the stubs (private names); nothing can be
    set, and ``type(ns)`` is a stand-in shown as ``'tool_namespace'``."""

    __slots__ = ("_name", "_stubs")

    def __init__(self, name: str, stubs: dict[str, ToolStub]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_stubs", dict(stubs))

    def __getattr__(self, attr: str) -> ToolStub:
        stubs: dict[str, ToolStub] = object.__getattribute__(self, "_stubs")
        stub = stubs.get(attr)
        if stub is None or attr.startswith("_"):
            name = object.__getattribute__(self, "_name")
            raise ToolNotFound(
                f"namespace {name!r} has no tool {attr!r}; search_tools('...') finds tools "
                f"and dir({name}) lists this namespace's tools",
                tool=f"{name}.{attr}", type="unknown_tool")
        return stub

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("a tool namespace is read-only")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError("a tool namespace is read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_stubs"))

    def __repr__(self) -> str:
        name = object.__getattribute__(self, "_name")
        return f"<tool namespace {name}: {len(object.__getattribute__(self, '_stubs'))} tools>"


hide_constructor(ToolNamespace, "use the namespaces the script already has",
                 shown_as="tool_namespace")


def install_tool_stubs(builtins: dict[str, Any], specs: list[dict[str, Any]],
                       call: Callable[[str, dict[str, Any]], Any]) -> None:
    """Put a :class:`ToolStub` per tool into ``builtins``; tools named ``ns.tool`` go
    into one :class:`ToolNamespace` ``ns`` (a name already taken is left alone)."""
    grouped: dict[str, dict[str, ToolStub]] = {}
    for spec in specs:
        params = [p["name"] for p in spec.get("params", [])
                  if p.get("kind", "positional_or_keyword") != "keyword_only"]
        name = str(spec["name"])
        stub = ToolStub(name, params, bool(spec.get("read_only")), str(spec.get("doc", "")),
                        call)
        if "." in name:
            namespace, short = name.split(".", 1)
            grouped.setdefault(namespace, {})[short] = stub
        else:
            builtins[name] = stub
    for namespace, stubs in grouped.items():
        if namespace.isidentifier() and namespace not in builtins:
            builtins[namespace] = ToolNamespace(namespace, stubs)


class ToolCaller:
    """Sends tool calls for one interpreter and turns replies into values or errors.

    When the link runs host code in the script's own thread (the inprocess
    backend, tools without a timeout), the call runs under the host thread's
    ``decimal`` context, not the script's: ``decimal.getcontext().prec = 2``
    in a script must not change how a host tool computes money. A link that
    only moves frames says so with ``runs_host_code = False``.
    """

    def __init__(self, link: HostLink, abort: AbortState,
                 sources: RunSources | None = None) -> None:
        self.link = link
        self.abort = abort
        self.sources = sources
        """The run's recorded readings: a ``paused`` reply ends what a replay re-reads."""
        self.host_decimal: decimal.Context | None = None
        self._switch_decimal = bool(getattr(link, "runs_host_code", True))

    def _link_call(self, tool: str, args: dict[str, Any],
                   labels: dict[str, list[str]] | None = None) -> dict[str, Any]:
        try:
            args = to_json_data(args)
        except NotJSONData as exc:
            return not_json_reply(exc)
        host = self.host_decimal
        call = self.link.call
        if host is None or not self._switch_decimal:
            reply = call(tool, args) if labels is None else call(tool, args, labels)
        else:
            script = decimal.getcontext()
            decimal.setcontext(host)
            try:
                reply = call(tool, args) if labels is None else call(tool, args, labels)
            finally:
                decimal.setcontext(script)
        if type(reply) is not dict or reply.get("ok") is not True:
            self._note_pause(reply)
        return reply

    def _note_pause(self, reply: Any) -> None:
        """A call answered ``paused``: what the script reads from now on is not recorded."""
        if (self.sources is not None and type(reply) is dict and not reply.get("ok")
                and type(reply.get("error")) is dict and reply["error"].get("type") == "paused"):
            self.sources.freeze()

    def call_reply(self, tool: str, args: dict[str, Any],
                   labels: dict[str, list[str]]) -> dict[str, Any]:
        """One labelled call (provenance on): the reply, for the caller to unpack."""
        self.abort.raise_if_set()
        reply = self._link_call(tool, args, labels)
        self.abort.raise_if_set()
        return reply

    def send_batch(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A labelled ``parallel`` batch (``{tool, args, labels}`` each): the replies."""
        self.abort.raise_if_set()
        failures: dict[int, dict[str, Any]] = {}
        valid: list[dict[str, Any]] = []
        for index, call in enumerate(calls):
            try:
                valid.append({**call, "args": to_json_data(call["args"])})
            except NotJSONData as exc:
                failures[index] = not_json_reply(exc)
        replies = iter(self._send_many(valid) if valid else [])
        self.abort.raise_if_set()
        return [failures[i] if i in failures else next(replies) for i in range(len(calls))]

    def failure(self, tool: str, error: dict[str, Any]) -> BaseException:
        """What a failed reply raises in the script (see :meth:`call`)."""
        return self._failure(tool, error)

    def _link_call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send the calls whose arguments are JSON data; a call whose arguments are
        not fails alone with ``invalid_arguments`` and the others run — the same
        rule on every link (a direct call, frames over pipes or a socket)."""
        failures: dict[int, dict[str, Any]] = {}
        valid: list[dict[str, Any]] = []
        for index, call in enumerate(calls):
            try:
                valid.append({"tool": call["tool"], "args": to_json_data(call["args"])})
            except NotJSONData as exc:
                failures[index] = not_json_reply(exc)
        if not failures:
            return self._send_many(valid)
        replies = iter(self._send_many(valid) if valid else [])
        return [failures[i] if i in failures else next(replies) for i in range(len(calls))]

    def _send_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        host = self.host_decimal
        if host is None or not self._switch_decimal:
            replies = self.link.call_many(calls)
        else:
            script = decimal.getcontext()
            decimal.setcontext(host)
            try:
                replies = self.link.call_many(calls)
            finally:
                decimal.setcontext(script)
        for reply in replies:
            self._note_pause(reply)
        return replies

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        """One call: the value, or raise the reply's error."""
        abort = self.abort
        if abort.error_type is not None:  # the check inline: it is on every call's path
            abort.raise_if_set()
        reply = self._link_call(tool, args)
        if abort.error_type is not None:
            abort.raise_if_set()
        if reply.get("ok"):
            return reply.get("value")
        raise self._failure(tool, reply.get("error") or {})

    def _failure(self, tool: str, error: dict[str, Any]) -> BaseException:
        error_type = str(error.get("type", ""))
        if error_type in LIMIT_ERRORS:
            self.abort.set(error_type, str(error.get("message", error_type)))
            return SandboxAbort(error_type, str(error.get("message", error_type)))
        return error_from_reply(tool, error)

    def parallel(
        self, calls: Any, arguments: Any = None, *, return_exceptions: bool = False
    ) -> Any:
        """``parallel(calls)`` / ``parallel(tool, [args, ...])``: see :func:`make_parallel`."""
        requests = _normalize_parallel(calls, arguments)
        if not requests:
            return []
        self.abort.raise_if_set()
        replies = self._link_call_many([{"tool": t, "args": a} for t, a in requests])
        self.abort.raise_if_set()
        results: list[Any] = []
        for (tool, _args), reply in zip(requests, replies, strict=True):
            if reply.get("ok"):
                results.append(reply.get("value"))
                continue
            failure = self._failure(tool, reply.get("error") or {})
            if isinstance(failure, SandboxAbort) or not return_exceptions:
                raise failure
            results.append(failure)
        return results


def normalize_parallel(calls: Any, arguments: Any) -> list[tuple[str, dict[str, Any]]]:
    """The ``(tool name, bound arguments)`` of each call of a ``parallel(...)``."""
    return _normalize_parallel(calls, arguments)


def _normalize_parallel(calls: Any, arguments: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(calls, ToolStub):
        if arguments is None:
            raise TypeError("parallel(tool, arguments): give a list of argument dicts or tuples")
        return [_bind_item(calls, item) for item in arguments]
    if arguments is not None:
        raise TypeError("parallel(calls): give either a list of (tool, args) pairs, or a tool "
                        "and a list of argument dicts")
    requests = []
    for item in calls:
        if not isinstance(item, (tuple, list)) or len(item) not in (1, 2):
            raise TypeError("parallel(calls): each call is a (tool, args) pair, e.g. "
                            "(get_weather, {'city': 'Paris'})")
        stub = item[0]
        if not isinstance(stub, ToolStub):
            raise TypeError(f"parallel(calls): {stub!r} is not a tool")
        requests.append(_bind_item(stub, item[1] if len(item) == 2 else {}))
    return requests


def _bind_item(stub: ToolStub, item: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(item, dict):
        return stub.name, stub.bind((), item)
    if isinstance(item, (tuple, list)):
        return stub.name, stub.bind(tuple(item), {})
    return stub.name, stub.bind((item,), {})
