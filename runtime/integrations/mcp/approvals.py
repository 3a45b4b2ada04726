"""Durable approvals over MCP: a ``run_script`` that pauses, and how it is decided.

When the runtime's approval hook defers a call (``Decision.defer``, e.g.
``toolscript mcp serve --approve defer``), ``run_script`` returns a *paused*
result: ``status: "paused"``, the ``pending`` calls (id, tool, arguments as
they will run, reason) and the ``run_id``. Who decides:

* **MCP elicitation**, where the client declares it: the server asks the
  person through the client (one form per pending call: approve, reason),
  then resumes the run in the same ``run_script`` call. A declined or
  cancelled form leaves the run paused.
* **A person elsewhere** (``toolscript approvals``, the web inbox, or code
  calling ``store.decide``), then the client calls ``resume_run(run_id)``:
  it resumes with the decisions stored in the journal and never decides
  itself, so a model cannot approve its own calls through it.
* **The client through a tool**, ``decide_pending(pending_id, approve,
  reason)``, only when the server is built with ``client_decides=True``
  (``--client-decides``): for clients that show each tool call to the person
  and ask before running it. Without that, a model could approve itself.

A run can be resumed only by the connection that started it (or, on a stdio
server, its one client).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from pydantic import BaseModel, Field
from toolscript.runtime.approval.hooks import Decision
from toolscript.runtime.durable.inbox.page import shown_json

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime

__all__ = ["ApprovalForm", "PausedRuns", "ask_person", "paused_fields", "supports_elicitation"]


class ApprovalForm(BaseModel):
    """The elicitation form of one pending call."""

    approve: bool = Field(description="Run this call with exactly these arguments?")
    reason: str = Field(default="", description="Why (recorded; a denial's reason reaches "
                        "the script)")


def paused_fields(result: Any) -> dict[str, Any]:
    """The fields a paused ``run_script`` result adds: status, pending calls, run id."""
    if getattr(result, "status", "") != "paused":
        return {"status": getattr(result, "status", "ok" if result.ok else "error")}
    return {
        "status": "paused",
        "run_id": result.run_id,
        "pending": [{k: v for k, v in p.to_dict().items() if k != "seq"}
                    for p in result.pending],
        "how_to_continue": "a person decides each pending call (toolscript approvals, the "
                           "approval inbox); then call resume_run with this run_id",
    }


def supports_elicitation(ctx: Any) -> bool:
    """The client declared the elicitation capability."""
    try:
        capabilities = ctx.client_capabilities
    except Exception:
        return False
    return capabilities is not None and getattr(capabilities, "elicitation", None) is not None


async def ask_person(ctx: Any, pending: list[Any]) -> dict[str, Decision] | None:
    """Ask through MCP elicitation about each pending call; the decisions, or None
    when the person declined or cancelled one of the forms (or the connection cannot
    carry the server's request)."""
    decisions: dict[str, Decision] = {}
    for call in pending:
        message = (f"A script wants to call {call.tool} ({call.caller}). Reason it waits: "
                   f"{call.reason or '-'}. Arguments, exactly as they will run:\n"
                   f"{shown_json(call.arguments)}")
        try:
            answer = await ctx.elicit(message, ApprovalForm)
        except Exception:  # no back-channel for server requests (stateless protocol) ...
            return None  # the run stays paused; resume_run goes on with it later
        if getattr(answer, "action", "") != "accept" or getattr(answer, "data", None) is None:
            return None
        form: ApprovalForm = answer.data
        decisions[call.id] = (Decision.allow(form.reason) if form.approve
                              else Decision.deny(form.reason or "denied by the person"))
    return decisions


class PausedRuns:
    """Which connection paused which run (only it may resume the run)."""

    def __init__(self, runtime: Runtime, single_client: bool) -> None:
        self.runtime = runtime
        self.single_client = single_client
        self._owners: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def note(self, result: Any, owner: str | None) -> None:
        """Remember the owner of a paused result."""
        if getattr(result, "status", "") == "paused":
            with self._lock:
                self._owners[result.run_id] = owner

    def may_resume(self, run_id: str, owner: str | None) -> bool:
        """``owner`` paused ``run_id`` (any run, for the one client of a stdio server)."""
        if self.single_client:
            return True
        with self._lock:
            return run_id in self._owners and self._owners[run_id] == owner and owner is not None

    def waiting(self, run_id: str) -> tuple[Any, dict[str, Decision]] | None:
        """The paused run and its stored decisions (None: no such paused run)."""
        store = self.runtime.durability.store
        runs = store.paused(run_id=run_id)
        if not runs:
            return None
        return runs[0], store.decisions(run_id)

    async def resume(self, run: Any, decisions: dict[str, Decision], session: Any) -> Any:
        """``runtime.resume`` in a worker thread (in the run's own session when given)."""
        chosen = {c.id: decisions[c.id] for c in run.pending}
        own = session if session is not None and getattr(session, "id", None) == run.session_id \
            else None
        return await anyio.to_thread.run_sync(
            lambda: self.runtime.resume(run.continuation, chosen, session=own))
