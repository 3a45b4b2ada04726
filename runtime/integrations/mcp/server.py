"""The runtime as an MCP server: one ``run_script`` tool over the registered tools.

Any MCP client (a desktop assistant, an IDE, another agent) gets programmatic
tool calling: the model writes a script that calls the runtime's tools as
Python functions, and the script runs in our sandbox behind the runtime's
approval, validation, limits and audit. The tool description carries the
sandbox rules and the tools' Python stubs.

Sessions (:mod:`.sessions`): the variables of a script persist for the next
``run_script`` of the same connection — the one client of a stdio server, or
the transport session (``Mcp-Session-Id``) of a Streamable HTTP client (so
that the SDK's default client gets one, the HTTP server declines the 2026
protocol's ``server/discover`` probe and clients fall back to the handshake
protocol, whose HTTP transport has sessions). Each result names its
``session_id``, which only its own connection can use; idle sessions are
reaped and their number is capped. Over HTTP, serve with
:func:`~.http_gate.http_app` / :func:`~.http_gate.serve_http` (bearer token,
cleanup when a client ends its transport session).

The handlers are coroutines: a script runs through ``session.run_async`` in a
worker thread, so the server's event loop keeps serving other requests (and
runs the runtime's ``async def`` tools) while scripts run; opening and closing
sessions (starting and stopping sandboxes) happens in worker threads too.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import Field
from toolscript.runtime.approval.hooks import Decision
from toolscript.runtime.integrations.mcp.approvals import (
    PausedRuns,
    ask_person,
    paused_fields,
    supports_elicitation,
)
from toolscript.runtime.integrations.mcp.http_gate import transport_owner
from toolscript.runtime.integrations.mcp.sessions import Lease, Refusal, ScriptSessions
from toolscript.runtime.prompts import RUN_SCRIPT_NAME, run_script_description
from toolscript.runtime.results import RunResult

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime

__all__ = [
    "ScriptSessions", "ToolscriptMCPServer", "build_server", "package_version", "result_payload",
]

SESSION_NOTE = """

Sessions: the scripts of one connection share their variables (each result \
names its session_id and says whether it started a new_session). \
reset_session() forgets them."""


Code = Annotated[
    str, Field(description="The Python script; its final bare expression is its result.")
]
RunId = Annotated[str, Field(description="The run_id of a paused run_script result.")]
PendingId = Annotated[str, Field(description="The id of a pending call of a paused result.")]
SessionId = Annotated[
    str | None,
    Field(description="A session_id from an earlier result of this connection (optional)."),
]


class ToolscriptMCPServer(MCPServer):
    """An ``MCPServer`` that owns the :class:`ScriptSessions` of its ``run_script``."""

    sessions: ScriptSessions


def package_version() -> str:
    """The installed toolscript's version (what the server reports in its
    ``serverInfo``): the distribution's metadata, else the package's own."""
    try:
        return importlib.metadata.version("toolscript")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        from toolscript import __version__

        return __version__


def result_payload(result: RunResult, lease: Lease) -> dict[str, Any]:
    """What ``run_script`` returns: value, output, typed error, its tool calls,
    and the session it ran in."""
    return {
        "ok": result.ok,
        "value": result.value,
        "stdout": result.stdout,
        "error": result.error.to_dict() if result.error else None,
        "tool_calls": [
            {"name": c.name, "ok": c.ok, **({"error": c.error.type} if c.error else {})}
            for c in result.tool_calls
        ],
        "session_id": lease.key,
        "new_session": lease.new,
        "session_restarted": result.session_restarted,
        **paused_fields(result),
    }


def client_key(ctx: Any, single_client: bool) -> str | None:
    """Who owns the sessions of this request: the one client of a stdio server,
    the HTTP transport session, or None (no transport session: one run each).

    The ``Mcp-Session-Id`` header counts only on the handshake protocol, where
    the SDK routed the request to that transport session (it answers 404 to
    an unknown id); on the stateless protocol the header is unchecked input.
    """
    if single_client:
        return "single-client"
    if getattr(ctx, "protocol_version", None) not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    try:
        headers = ctx.headers
    except Exception:
        headers = None
    transport_session = headers.get("mcp-session-id") if headers else None
    return transport_owner(transport_session) if transport_session else None


def build_server(
    runtime: Runtime,
    *,
    name: str = "toolscript",
    single_client: bool = False,
    max_sessions: int = 16,
    idle_ttl_s: float = 900.0,
    elicit: bool = True,
    approvals: bool = False,
    client_decides: bool = False,
) -> ToolscriptMCPServer:
    """An ``mcp.server.mcpserver.MCPServer`` exposing ``run_script`` over ``runtime``.

    Args:
        runtime: the tools, backend and policy scripts run with.
        name: the server name clients see.
        single_client: one client per server (stdio): every run belongs to it.
        max_sessions / idle_ttl_s: at most this many sessions (sandboxes) open;
            one unused for ``idle_ttl_s`` seconds is closed.
        elicit: when a run pauses (a deferred approval) and the client supports
            MCP elicitation, ask the person through the client and resume at once
            (:mod:`.approvals`).
        approvals: offer ``resume_run``, which resumes a paused run once a person
            decided its calls (``toolscript approvals``, the inbox); set it when the
            approval hook may defer (``toolscript mcp serve --approve defer`` does).
        client_decides: also offer ``decide_pending``, with which the client
            approves or denies pending calls itself (only for clients that
            confirm every tool call with the person).

    See :mod:`.approvals` for runs that pause.

    The returned server's ``sessions`` (:class:`ScriptSessions`) hold the open
    sessions; close them with ``server.sessions.close_all()`` when done. Serve
    it over HTTP with :func:`~.http_gate.serve_http` (or mount
    :func:`~.http_gate.http_app`).
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
        version=package_version(),
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

    def refused(refusal: Refusal) -> CallToolResult:
        error = {"type": refusal.type, "message": refusal.message}
        return reply({"ok": False, "error": error, "session_id": None}, True)

    paused = PausedRuns(runtime, single_client)

    def answer(result: RunResult, lease: Lease) -> CallToolResult:
        failed = not result.ok and getattr(result, "status", "") != "paused"
        return reply(result_payload(result, lease), failed)

    async def settle(result: RunResult, lease: Lease, ctx: Context, key: str | None) -> RunResult:
        """A paused result: ask the person by elicitation (if the client can) and resume,
        as long as the run pauses again and the person answers."""
        for _ in range(64):
            paused.note(result, key)
            if getattr(result, "status", "") != "paused" or not elicit \
                    or not supports_elicitation(ctx):
                return result
            decisions = await ask_person(ctx, list(result.pending))
            waiting = paused.waiting(result.run_id) if decisions is not None else None
            if decisions is None or waiting is None:
                return result
            for pending_id, decision in decisions.items():
                await anyio.to_thread.run_sync(functools.partial(
                    runtime.durability.store.decide, pending_id, decision, by="mcp-elicitation"))
            result = await paused.resume(waiting[0], decisions, lease.session)
        return result

    async def run_leased(lease: Lease, code: str, ctx: Context, key: str | None
                         ) -> CallToolResult:
        try:
            result = await lease.session.run_async(code)
            result = await settle(result, lease, ctx, key)
        finally:
            await anyio.to_thread.run_sync(sessions.release, lease)
        return answer(result, lease)

    async def run_script(
        code: Code, ctx: Context, session_id: SessionId = None
    ) -> CallToolResult:
        key = client_key(ctx, single_client)
        # Shielded: a cancelled request still waits for its script (which runs on)
        # before giving its session back.
        with anyio.CancelScope(shield=True):
            lease = await anyio.to_thread.run_sync(sessions.acquire, session_id, key)
            if isinstance(lease, Refusal):
                outcome = refused(lease)
            else:
                outcome = await run_leased(lease, code, ctx, key)
        return outcome

    async def resume_leased(run_id: str, ctx: Context,
                            decide: tuple[str, bool, str] | None = None) -> CallToolResult:
        key = client_key(ctx, single_client)
        if not paused.may_resume(run_id, key):
            return refused(Refusal("unknown_run", f"no paused run {run_id!r} of this "
                                   "connection"))
        waiting = await anyio.to_thread.run_sync(paused.waiting, run_id)
        if waiting is None:
            return refused(Refusal("unknown_run", f"run {run_id!r} is not paused (finished, "
                                   "resumed already, or unknown)"))
        run, decisions = waiting
        if decide is not None:
            pending_id, approve, reason = decide
            decision = Decision.allow(reason) if approve else Decision.deny(reason)
            await anyio.to_thread.run_sync(
                lambda: runtime.durability.store.decide(pending_id, decision, by="mcp-client"))
            decisions = {**decisions, pending_id: decision}
        undecided = [c.id for c in run.pending if c.id not in decisions]
        if undecided:
            return reply({"ok": False, "status": "paused", "run_id": run_id,
                          "error": {"type": "undecided", "message": "these calls still wait "
                                    f"for a person's decision: {', '.join(undecided)}"}}, False)
        with anyio.CancelScope(shield=True):
            lease = await anyio.to_thread.run_sync(sessions.acquire, None, key)
            if isinstance(lease, Refusal):
                return refused(lease)
            leased: Lease = lease
            try:
                result = await paused.resume(run, decisions, leased.session)
                result = await settle(result, leased, ctx, key)
            finally:
                await anyio.to_thread.run_sync(sessions.release, leased)
        return answer(result, leased)

    async def resume_run(run_id: RunId, ctx: Context) -> CallToolResult:
        return await resume_leased(run_id, ctx)

    async def decide_pending(pending_id: PendingId, approve: bool, ctx: Context,
                             reason: str = "") -> CallToolResult:
        run_id = pending_id.rpartition(":")[0]
        return await resume_leased(run_id, ctx, (pending_id, approve, reason))

    async def reset_session(ctx: Context, session_id: SessionId = None) -> CallToolResult:
        key = client_key(ctx, single_client)
        closed = await anyio.to_thread.run_sync(sessions.reset, session_id, key)
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
        description="Close this connection's run_script session and forget its variables.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        ),
    )
    if approvals or client_decides:
        server.add_tool(
            resume_run,
            name="resume_run",
            description="Resume a run_script run that paused (status 'paused') once a person "
            "has decided its pending calls; returns its result like run_script (it may pause "
            "again).",
            annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True),
        )
    if client_decides:
        server.add_tool(
            decide_pending,
            name="decide_pending",
            description="Approve or deny one pending call of a paused run, as the person "
            "decided; when every call of the run is decided, the run resumes and its result "
            "comes back.",
            annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True),
        )
    server.sessions = sessions
    return server
