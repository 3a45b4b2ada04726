"""The runtime as an MCP server: one ``run_script`` tool over the registered tools.

Any MCP client (a desktop assistant, an IDE, another agent) gets programmatic
tool calling: the model writes a script that calls the runtime's tools as
Python functions, and the script runs in our sandbox behind the runtime's
approval, validation, limits and audit. The tool description carries the
sandbox rules and the tools' Python stubs.

Sessions: the variables of a script persist for the next ``run_script`` of
the same session. Each result names its ``session_id``; a client passes it
back to continue. Without one, a run goes to the client's own session: the
one session of a stdio server (one client per process), or the session keyed
by the HTTP transport's ``mcp-session-id``; with neither, a new session is
started. Session ids are random and unguessable, so a client cannot reach
another client's variables. Idle sessions are closed after ``idle_ttl_s``,
and the least recently used one when ``max_sessions`` are open.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..prompts import RUN_SCRIPT_NAME, run_script_description
from ..results import RunResult

if TYPE_CHECKING:
    from ..runtime import Runtime
    from ..session import Session

__all__ = ["ScriptSessions", "ToolscriptMCPServer", "build_server", "result_payload"]

SESSION_NOTE = """

Sessions: every result names its session_id. Pass it back as session_id to run the \
next script in the same session (its variables persist); omit it to use your \
connection's own session. reset_session(session_id) forgets a session's variables."""


Code = Annotated[
    str, Field(description="The Python script; its final bare expression is its result.")
]
SessionId = Annotated[
    str | None, Field(description="A session_id from an earlier result, to reuse its variables.")
]


class ToolscriptMCPServer(MCPServer):
    """An ``MCPServer`` that owns the :class:`ScriptSessions` of its ``run_script``."""

    sessions: ScriptSessions


def result_payload(result: RunResult, session_id: str) -> dict[str, Any]:
    """What ``run_script`` returns: value, output, typed error, and its tool calls."""
    return {
        "ok": result.ok,
        "value": result.value,
        "stdout": result.stdout,
        "error": result.error.to_dict() if result.error else None,
        "tool_calls": [
            {"name": c.name, "ok": c.ok, **({"error": c.error.type} if c.error else {})}
            for c in result.tool_calls
        ],
        "session_id": session_id,
        "session_restarted": result.session_restarted,
    }


class ScriptSessions:
    """Sessions of one runtime, by id, with an idle timeout and a size cap."""

    def __init__(
        self, runtime: Runtime, *, max_sessions: int = 64, idle_ttl_s: float = 900.0
    ) -> None:
        self.runtime = runtime
        self.max_sessions = max_sessions
        self.idle_ttl_s = idle_ttl_s
        self._sessions: OrderedDict[str, tuple[Session, float]] = OrderedDict()
        self._aliases: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str | None, client_key: str | None) -> tuple[str, Session]:
        """The session to run in: ``session_id`` if given, else the client's own.

        Raises:
            KeyError: ``session_id`` is unknown (expired or never issued).
        """
        with self._lock:
            self._expire()
            if session_id is None and client_key is not None:
                session_id = self._aliases.get(client_key)
                if session_id not in self._sessions:
                    session_id = None
            if session_id is not None:
                if session_id not in self._sessions:
                    raise KeyError(session_id)
                session, _ = self._sessions.pop(session_id)
            else:
                session_id = secrets.token_urlsafe(16)
                session = self.runtime.session()
                if client_key is not None:
                    self._aliases[client_key] = session_id
            self._sessions[session_id] = (session, time.monotonic())
            while len(self._sessions) > self.max_sessions:
                _, (oldest, _) = self._sessions.popitem(last=False)
                oldest.close()
            return session_id, session

    def close(self, session_id: str) -> bool:
        """Close one session; False if it was unknown."""
        with self._lock:
            entry = self._sessions.pop(session_id, None)
        if entry is None:
            return False
        entry[0].close()
        return True

    def close_all(self) -> None:
        """Close every session."""
        with self._lock:
            entries = list(self._sessions.values())
            self._sessions.clear()
            self._aliases.clear()
        for session, _ in entries:
            session.close()

    def _expire(self) -> None:
        now = time.monotonic()
        for key, (session, used) in list(self._sessions.items()):
            if now - used > self.idle_ttl_s:
                del self._sessions[key]
                session.close()

    def __len__(self) -> int:
        return len(self._sessions)


def _client_key(ctx: Any, single_client: bool) -> str | None:
    if single_client:
        return "single-client"
    try:
        headers = ctx.headers
    except Exception:
        headers = None
    if headers:
        transport_session = headers.get("mcp-session-id")
        if transport_session:
            return f"http:{transport_session}"
    return None


def build_server(
    runtime: Runtime,
    *,
    name: str = "toolscript",
    single_client: bool = False,
    max_sessions: int = 64,
    idle_ttl_s: float = 900.0,
) -> ToolscriptMCPServer:
    """An ``mcp.server.mcpserver.MCPServer`` exposing ``run_script`` over ``runtime``.

    Args:
        runtime: the tools, backend and policy scripts run with.
        name: the server name clients see.
        single_client: one client per server (stdio): runs without a
            session_id share that client's session.
        max_sessions / idle_ttl_s: bounds on open sessions.

    The returned server's ``sessions`` (:class:`ScriptSessions`) hold the open
    sessions; close them with ``server.sessions.close_all()`` when done.
    """
    sessions = ScriptSessions(runtime, max_sessions=max_sessions, idle_ttl_s=idle_ttl_s)
    description = (
        run_script_description(
            runtime.render_stubs(),
            modules=tuple(runtime.modules),
            max_chars=runtime.limits.max_output_chars,
        )
        + SESSION_NOTE
    )
    server = ToolscriptMCPServer(
        name,
        instructions=(
            "Programmatic tool calling: write a Python script for run_script that calls the "
            "listed tools as functions; only the script's final value and output come back."
        ),
    )

    def reply(payload: dict[str, Any], is_error: bool) -> CallToolResult:
        text = json.dumps(payload, ensure_ascii=False, default=str)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=payload,
            is_error=is_error,
        )

    def run_script(code: Code, ctx: Context, session_id: SessionId = None) -> CallToolResult:
        try:
            sid, session = sessions.get(session_id, _client_key(ctx, single_client))
        except KeyError:
            return reply(
                {
                    "ok": False,
                    "error": {
                        "type": "unknown_session",
                        "message": f"no session {session_id!r} (it expired or was never issued); "
                        "omit session_id to start a new session",
                    },
                },
                True,
            )
        result = session.run(code)
        return reply(result_payload(result, sid), not result.ok)

    def reset_session(session_id: str) -> CallToolResult:
        closed = sessions.close(session_id)
        return reply({"ok": closed, "session_id": session_id}, not closed)

    server.add_tool(
        run_script,
        name=RUN_SCRIPT_NAME,
        description=description,
        annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True),
    )
    server.add_tool(
        reset_session,
        name="reset_session",
        description="Close a run_script session and forget its variables.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        ),
    )
    server.sessions = sessions
    return server
