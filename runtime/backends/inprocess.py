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

from toolscript.sandbox.codec import to_json_data
from toolscript.sandbox.server import SandboxServer


class DirectLink:
    """The sandbox's :class:`~toolscript.sandbox.toolcalls.HostLink` for inprocess runs.

    Arguments arrive as fresh plain JSON data: the sandbox's ``ToolCaller``
    checks and copies them once for every link, and answers a call whose
    arguments are not JSON itself. Results are copied before the sandbox sees
    them: no object crosses by reference.
    """

    def __init__(self) -> None:
        self.call_one: Callable[[str, Any], dict[str, Any]] | None = None
        self.call_several: Callable[[list[tuple[str, Any]]], list[dict[str, Any]]] | None = None

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Forward one call to the host's dispatcher."""
        assert self.call_one is not None, "no run is active"
        return _copy_reply(self.call_one(tool, args))

    def call_many(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Forward several calls to the host's dispatcher."""
        assert self.call_several is not None, "no run is active"
        replies = self.call_several([(call["tool"], call["args"]) for call in calls])
        return [_copy_reply(reply) for reply in replies]


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
