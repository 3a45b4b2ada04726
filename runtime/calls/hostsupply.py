"""What the host supplies to a call beyond the script's arguments (``Tool.host_supplied``).

Plain tools never reach this module: :meth:`Dispatcher._prepare` calls
:meth:`HostSupply.bind` only for tools that declare injected parameters,
idempotency or a two-phase role, after validation and before approval.
``bind`` answers with an error reply, or with a :class:`BoundCall` (what the
dispatcher approves and executes in place of the tool) and the arguments the
approval hook is shown:

* injected parameters are read from the run's context now (a missing value
  stops the run with a ``ConfigurationError`` for the programmer) and added
  at invocation (the record keeps them, in ``record.injected``, for the audit;
  the hook sees them in ``ToolCallRequest.injected``);
* idempotent calls claim their key in the store when they run; a repeat
  returns the stored result; a script key reused with other arguments is
  ``invalid_arguments``; keys are namespaced by the declared scope (run,
  session or global), the caller's tenant and the injected values, so
  different users never share a key;
* a prepare call stores its result as a plan and answers with a plan id; a
  commit call looks the plan up (same session, not expired), shows the hook
  ``{"plan_id", "plan"}`` and commits exactly that plan, once - and only if
  it has still not expired once the approval returned (a slow approval can
  outlast a plan: the commit is then refused, :class:`NotStarted`).
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.codec import NotJSONData, to_json_data
from toolscript.tools import Tool, to_jsonable
from toolscript.tools.binding import BoundArgs
from toolscript.tools.definition import IDEMPOTENCY_PARAM
from toolscript.tools.twophase import DEFAULT_PLAN_TTL_S, CommitTool

from .idempotency import (
    TENANT_CONTEXT_KEY,
    IdempotencyStore,
    InMemoryIdempotencyStore,
    derive_key,
    fingerprint,
    key_namespace,
)
from .workers import ToolTimedOut

if TYPE_CHECKING:
    from ..results import ToolCallRecord
    from .runcontext import RunContext

__all__ = ["BoundCall", "HostSupply", "NotStarted", "PreparedPlans"]

Reply = dict[str, Any]
DEFAULT_WAIT_S = 30.0
"""How long a repeated idempotent call waits for a first call still running,
when neither the tool nor the limits give a timeout."""


def _error(error_type: str, message: str) -> Reply:
    return {"ok": False, "error": {"type": error_type, "message": message}}


def _json_data(value: Any) -> Any:
    try:
        return to_json_data(value)
    except NotJSONData:
        return to_json_data(to_jsonable(value))


class NotStarted(Exception):
    """Internal: raised by a bound call that refuses to act at invocation (after approval): the
    dispatcher answers ``error_type`` with this message and records that the tool
    never started."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


@dataclass
class _Plan:
    session_id: str
    commit_tool: str
    text: str
    expires_at: float


class PreparedPlans:
    """Plans made by prepare tools, kept on the host until committed or expired."""

    def __init__(self) -> None:
        self._plans: dict[str, _Plan] = {}
        self._lock = threading.Lock()

    def add(self, session_id: str, commit_tool: str, plan: Any, ttl_s: float) -> str:
        """Store ``plan`` (JSON data); return its new, unguessable id."""
        plan_id = "plan_" + secrets.token_urlsafe(12)
        now = time.time()
        with self._lock:
            for key in [k for k, p in self._plans.items() if p.expires_at < now]:
                del self._plans[key]
            self._plans[plan_id] = _Plan(session_id, commit_tool, json.dumps(plan), now + ttl_s)
        return plan_id

    def get(self, plan_id: Any, session_id: str, commit_tool: str) -> Any:
        """A fresh copy of the plan, or ``None`` if unknown, expired or not this session's."""
        with self._lock:
            plan = self._plans.get(plan_id) if isinstance(plan_id, str) else None
        if (
            plan is None
            or plan.session_id != session_id
            or plan.commit_tool != commit_tool
            or plan.expires_at < time.time()
        ):
            return None
        return json.loads(plan.text)


class BoundCall:
    """One call of a tool the host supplies values to, as the dispatcher approves and runs it.

    It has the attributes the dispatcher reads from a tool (``name``,
    ``read_only``, ``requires_approval``, ``timeout_s``) and an ``invoke``
    that does the host's part around the tool function.
    """

    __slots__ = ("_run", "injected", "name", "read_only", "requires_approval", "timeout_s",
                 "tool")

    def __init__(self, tool: Tool, run: Callable[[], Any],
                 injected: dict[str, Any] | None = None) -> None:
        self.tool = tool
        self.name = tool.name
        self.read_only = tool.read_only
        self.requires_approval = tool.requires_approval
        self.timeout_s = tool.timeout_s
        self.injected = injected
        """The values injected into the call, if any (shown to the approval hook)."""
        self._run = run

    def invoke(self, args: dict[str, Any]) -> Any:
        """Run the call (``args`` are the approved ones, already bound)."""
        return self._run()


class HostSupply:
    """Injection, idempotency and two-phase plans for one runtime's dispatcher.

    Args:
        idempotency_store: where idempotent calls record their results
            (default: a new :class:`InMemoryIdempotencyStore`).
        plans: where prepared plans wait for their commit.
        default_wait_s: wait bound of a repeated call when no timeout applies.
    """

    def __init__(
        self,
        idempotency_store: IdempotencyStore | None = None,
        plans: PreparedPlans | None = None,
        default_wait_s: float = DEFAULT_WAIT_S,
    ) -> None:
        self.store = idempotency_store or InMemoryIdempotencyStore()
        self.plans = plans or PreparedPlans()
        self.default_wait_s = default_wait_s
        self.plan_ttls: dict[str, float] = {}

    def bind(
        self,
        ctx: RunContext,
        record: ToolCallRecord,
        tool: Tool,
        bound: BoundArgs,
        wait_s: float | None,
    ) -> tuple[BoundCall, dict[str, Any]] | Reply:
        """The bound call and the arguments to show the approval hook, or an error reply.

        ``bound`` are the call's final arguments (:meth:`Tool.bind`); the call
        runs with exactly ``bound.values`` plus the injected values.
        """
        try:
            return self._bind(ctx, record, tool, bound, wait_s)
        except Exception as exc:  # a host set-up error (or a bug): the programmer must see it
            ctx.stop(exc)
            return _error("host_abort", f"the run was stopped: {exc}")

    def _bind(
        self,
        ctx: RunContext,
        record: ToolCallRecord,
        tool: Tool,
        bound: BoundArgs,
        wait_s: float | None,
    ) -> tuple[BoundCall, dict[str, Any]] | Reply:
        needs = tool.host_supplied
        assert needs is not None
        injected = tool.injected_values(ctx.context)
        if needs.injected:  # the audit shows them as the approver does
            record.injected = {p.name: "[redacted]" if p.redact else injected[p.name]
                               for p in needs.injected if p.name in injected}
        wait = wait_s if wait_s is not None else self.default_wait_s
        args, shown = bound.values, bound.shown
        if needs.phase == "commit" and isinstance(tool, CommitTool):
            return self._bind_commit(ctx, record, tool, shown, wait)
        if needs.idempotency is not None:
            supplied = args.get(IDEMPOTENCY_PARAM)
            visible = {k: v for k, v in shown.items() if k != IDEMPOTENCY_PARAM}
            # Keys live in the scope's namespace (its run or session, the
            # caller's tenant, the injected values): another user's call with
            # the same key or arguments never sees this one's result.
            try:
                space = key_namespace(needs.idempotency, ctx.run_id, ctx.session_id,
                                      ctx.context.get(TENANT_CONTEXT_KEY), injected)
                fp = fingerprint({"args": visible, "injected": injected})
                if supplied is not None:
                    key = f"{tool.name}:key:{space}:{json.dumps(str(supplied))[1:-1]}"
                    passed = str(supplied)
                else:
                    key = passed = derive_key(space, tool.name, visible)
            except (ValueError, RecursionError):  # arguments nested past the encoder's depth
                return _error("invalid_arguments", f"{tool.name}(): the arguments are nested "
                              "too deeply to derive an idempotency key; pass flatter data")
            seen = self.store.peek(key)
            if seen is not None and seen[1] != fp:
                return _error(
                    "invalid_arguments",
                    f"{tool.name}(): idempotency_key {supplied!r} was already used with other "
                    "arguments; use a new key for a different call",
                )
            full = tool.call_args(args, injected, passed)
            run = functools.partial(tool.call_bound, full)
            once = functools.partial(self._once, key, fp, wait, run, record)
            return BoundCall(tool, once, injected), shown
        full = tool.call_args(args, injected)
        if needs.phase == "prepare":
            return BoundCall(tool, lambda: self._prepare(ctx, tool, full), injected), shown
        return BoundCall(tool, functools.partial(tool.call_bound, full), injected), shown

    # --- idempotency --------------------------------------------------------------
    def _once(
        self, key: str, fp: str, wait_s: float, run: Callable[[], Any], record: ToolCallRecord
    ) -> Any:
        """Run at most once per key; a repeat returns the first (JSON) result
        and is marked ``replayed`` in its record."""
        claim = self.store.claim(key, fp, wait_s)
        if claim.status == "done":
            record.replayed = True
            return claim.value
        if claim.status == "busy":
            raise ToolTimedOut(
                f"an earlier call with the same idempotency key was still running after "
                f"{wait_s:g} s; retry later"
            )
        if claim.status == "conflict":
            raise ValueError("this idempotency key was already used with other arguments")
        try:
            value = _json_data(run())
        except BaseException:
            self.store.release(key)
            raise
        self.store.complete(key, value)
        return value

    # --- two-phase ----------------------------------------------------------------
    def _prepare(self, ctx: RunContext, tool: Tool, full: dict[str, Any]) -> Any:
        needs = tool.host_supplied
        assert needs is not None and needs.partner is not None
        plan = _json_data(tool.call_bound(full))
        ttl = self.plan_ttls.get(needs.partner, DEFAULT_PLAN_TTL_S)
        plan_id = self.plans.add(ctx.session_id, needs.partner, plan, ttl)
        return {
            "plan_id": plan_id,
            "plan": plan,
            "expires_in_s": ttl,
            "next": f"nothing has changed yet; call {needs.partner}(plan_id={plan_id!r}) "
                    "to carry out this plan",
        }

    def _bind_commit(
        self,
        ctx: RunContext,
        record: ToolCallRecord,
        tool: CommitTool,
        args: dict[str, Any],
        wait_s: float,
    ) -> tuple[BoundCall, dict[str, Any]] | Reply:
        plan_id = args.get("plan_id")
        plan = self.plans.get(plan_id, ctx.session_id, tool.name)
        if plan is None:
            partner = tool.host_supplied.partner if tool.host_supplied else "the prepare tool"
            return _error(
                "invalid_arguments",
                f"{tool.name}(): unknown or expired plan_id {plan_id!r}; call {partner}(...) "
                f"first and pass the plan_id it returns (plans last {tool.plan_ttl_s:g} s and "
                "belong to the session that made them)",
            )
        self.plan_ttls.setdefault(tool.name, tool.plan_ttl_s)
        record.plan = plan  # the audit line names the plan approved, not just its id
        key = f"{tool.name}:plan:{plan_id}"

        def commit() -> Any:  # runs after the approval, however long that took
            if self.plans.get(plan_id, ctx.session_id, tool.name) is None:
                raise NotStarted("invalid_arguments", (
                    f"{tool.name}(): plan {plan_id!r} expired before the commit was approved "
                    f"(plans last {tool.plan_ttl_s:g} s); nothing was committed: prepare it "
                    "again"))
            return tool.apply_plan(plan)

        bound = BoundCall(tool, lambda: self._once(key, str(plan_id), wait_s, commit, record))
        return bound, {"plan_id": plan_id, "plan": json.loads(json.dumps(plan))}

    def register(self, tools: Any) -> None:
        """Learn the plan lifetimes of the commit tools among ``tools``."""
        for t in tools:
            if isinstance(t, CommitTool):
                self.plan_ttls[t.name] = t.plan_ttl_s
