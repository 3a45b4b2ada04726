"""The inprocess backend: the sandbox server called directly in the host's thread.

Fastest (a tool call is a function call), and it runs the same server and
interpreter as the process backends. It isolates nothing but what the
restricted interpreter enforces: no memory limit, no protection against a
crash of the interpreter, and a wall-clock limit that cannot interrupt a long
C call (a huge sort, a catastrophic regex). Use it for trusted scripts,
tests and benchmarks; use ``subprocess`` or ``docker`` for model-written code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolscript.sandbox.codec import NotJSONData, to_json_data
from toolscript.sandbox.server import SandboxServer


class DirectLink:
    """The sandbox's :class:`~toolscript.sandbox.toolcalls.HostLink` for inprocess runs.

    Arguments are copied to plain JSON data before the host sees them, and
    results before the sandbox does: no object crosses by reference.
    """

    def __init__(self) -> None:
        self.call_one: Callable[[str, Any], dict[str, Any]] | None = None
        self.call_several: Callable[[list[tuple[str, Any]]], list[dict[str, Any]]] | None = None

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Forward one call to the host's dispatcher."""
        assert self.call_one is not None, "no run is active"
        try:
            data = to_json_data(args)
        except NotJSONData as exc:
            return _not_json(exc)
        reply = self.call_one(tool, data)
        return _copy_reply(reply)

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Forward several calls to the host's dispatcher."""
        assert self.call_several is not None, "no run is active"
        prepared: list[tuple[str, Any]] = []
        failures: dict[int, dict[str, Any]] = {}
        for index, call in enumerate(calls):
            try:
                prepared.append((call["tool"], to_json_data(call["args"])))
            except NotJSONData as exc:
                failures[index] = _not_json(exc)
                prepared.append((call["tool"], None))
        replies = self.call_several([c for i, c in enumerate(prepared) if i not in failures])
        merged = iter(replies)
        return [
            failures[i] if i in failures else _copy_reply(next(merged)) for i in range(len(calls))
        ]


def _not_json(exc: Exception) -> dict[str, Any]:
    return {
        "ok": False,
        "error": {
            "type": "invalid_arguments",
            "message": "tool arguments must be JSON data (dict, list, str, int, float, bool, "
            f"None): {exc}",
        },
    }


def _copy_reply(reply: dict[str, Any]) -> dict[str, Any]:
    # The dispatcher already made the value fresh JSON data (never the tool's
    # own object), and the call's record keeps it: the script gets its own
    # copy, so mutating a result cannot rewrite ``RunResult.tool_calls``.
    if reply.get("ok"):
        value = reply.get("value")
        if isinstance(value, (dict, list)):
            return {"ok": True, "value": to_json_data(value)}
    return reply


class InprocessSandbox:
    """A sandbox server living in the host process.

    The interpreter turns everything a script raises into an error result;
    should anything still escape a run, :meth:`handle` answers with a
    ``sandbox_crashed`` result naming only the exception's type - the object
    (the script's own, perhaps with a ``__str__`` that never returns) is
    dropped without being formatted - and marks the sandbox ``broken``.
    """

    def __init__(self) -> None:
        self.link = DirectLink()
        self.server = SandboxServer(self.link)
        self.broken = False

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Pass one protocol message to the server."""
        if message.get("type") != "run":
            return self.server.handle(message)
        try:
            return self.server.handle(message)
        except (KeyboardInterrupt, SystemExit):
            raise  # the host's own signals (scripts cannot name these classes)
        except BaseException as exc:
            self.broken = True
            kind = _type_name(type(exc))
        return {
            "type": "result", "id": message.get("id"), "ok": False, "value": None,
            "stdout": "", "stdout_truncated": False,
            "error": {"type": "sandbox_crashed",
                      "message": f"the interpreter failed with {kind} and was reset; "
                                 "variables from earlier runs of this session are lost"},
        }


def _type_name(cls: type) -> str:
    """A class's ``__name__`` read from ``type`` itself (no metaclass code runs)."""
    name = type.__dict__["__name__"].__get__(cls)
    return name if type(name) is str else "an exception"
