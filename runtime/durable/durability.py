"""A runtime's durable-run machinery: its journal store, its continuation key,
the journal of each run, the paused result, and :func:`resume`.

This module knows the runtime and session only by duck typing (it sits below
them in the import graph): :meth:`Durability.attach` is called by the session
for each run, :meth:`Durability.finish` turns a run that paused or diverged
into its result, and :meth:`Durability.resume` is
:meth:`Runtime.resume <toolscript.Runtime.resume>`.
"""

from __future__ import annotations

import contextvars
import dataclasses
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolscript.runtime.approval.hooks import Decision
from toolscript.runtime.results import RunError, RunResult

from toolscript.errors import ContinuationError

from .continuation import DEFAULT_TTL_S, Continuation, resolve_key, sign, verify
from .fingerprints import approval_sha256, catalog_sha256, identity_sha256
from .holders import this_holder
from .journal import Paused, ReplayDiverged, RunJournal
from .opening import JOURNAL_ENV, open_store
from .store import JournalEntry, JournalStore, PausedRun, continuation_digest_of

if TYPE_CHECKING:
    from toolscript.runtime.calls.runcontext import RunContext
    from toolscript.runtime.runtime import Runtime
    from toolscript.runtime.session import Session


@dataclasses.dataclass(frozen=True)
class _Resuming:
    run_id: str
    entries: dict[int, JournalEntry]
    decisions: dict[str, Decision]
    continuation: str
    hash_seed: int | None = None


_RESUMING: contextvars.ContextVar[_Resuming | None] = contextvars.ContextVar(
    "toolscript_resuming", default=None)


def ends_run(cause: BaseException | None) -> bool:
    """True for the stop causes a durable run turns into a result (a pause, a
    divergence) instead of raising them to the programmer."""
    return isinstance(cause, (Paused, ReplayDiverged))


class Durability:
    """Journal store, key and continuations of one runtime.

    Args:
        journal: a store, a URL or path, or ``None`` (the default SQLite file,
            opened only when a run first pauses or resumes).
        key: the continuation key (``None``: see
            :func:`~toolscript.runtime.durable.continuation.resolve_key`).
        ttl_s: how long continuations stay valid.
    """

    def __init__(self, journal: JournalStore | str | os.PathLike[str] | None = None, *,
                 key: str | bytes | None = None, ttl_s: float = DEFAULT_TTL_S) -> None:
        self._spec = journal
        self.write_through = journal is not None or bool(os.environ.get(JOURNAL_ENV))
        """Every run journals each call durably (a journal was configured); otherwise
        a run keeps its journal in memory until it first pauses."""
        self._key_arg = key
        self._key: bytes | None = None
        self.ttl_s = ttl_s
        self._store: JournalStore | None = None
        self._lock = threading.Lock()

    @property
    def store(self) -> JournalStore:
        """The journal store (opened on first use)."""
        with self._lock:
            if self._store is None:
                self._store = open_store(self._spec)
            return self._store

    def _open_store(self) -> JournalStore:
        return self.store

    @property
    def key(self) -> bytes:
        """The continuation key."""
        if self._key is None:
            self._key = resolve_key(self._key_arg)
        return self._key

    def close(self) -> None:
        """Close a store this object opened from a URL or path."""
        with self._lock:
            store, self._store = self._store, None
        if store is not None and store is not self._spec:
            store.close()

    # --- one run -------------------------------------------------------------------
    @staticmethod
    def resuming_hash_seed() -> int | None:
        """The string hash seed the run about to start must have: its original run's
        when it is a resume, else None (any)."""
        resuming = _RESUMING.get()
        return None if resuming is None else resuming.hash_seed

    def attach(self, runtime: Runtime, ctx: RunContext) -> RunJournal | None:
        """The journal of a run starting now (a resume's replays the original run).

        None when nothing can pause the run and nothing asks for its calls to be
        journaled: no approval hook is set (only a hook defers a call) and no
        journal was configured. A hook assigned while such a run goes on cannot
        pause it (the deferred call fails ``paused``, naming why): a journal
        begun halfway could not replay the calls before it."""
        resuming = _RESUMING.get()
        if resuming is not None and ctx.script is not None:
            _RESUMING.set(None)  # only the resumed script, not a run it causes
            ctx.run_id = resuming.run_id
            return RunJournal(resuming.run_id, self._open_store, durable=True,
                              replay=resuming.entries, decisions=resuming.decisions,
                              audit=_audit_append(runtime), stop=ctx.stop)
        if runtime.approve is None and not self.write_through:
            return None
        return RunJournal(ctx.run_id, self._open_store, durable=self.write_through,
                          audit=_audit_append(runtime), stop=ctx.stop)

    def finish(self, runtime: Runtime, ctx: RunContext, result: RunResult) -> RunResult:
        """The result of a run: paused (with pending calls and a continuation),
        ``replay_diverged``, or ``result`` as it is."""
        journal: RunJournal | None = getattr(ctx, "journal", None)
        cause = ctx.abort
        if journal is None:
            return result
        if isinstance(cause, ReplayDiverged) or (
            result.ok and cause is None and journal.short_of_journal()
        ):
            message = str(cause) if cause is not None else (
                f"replay diverged: the script ended after {journal.seq} calls, but the "
                f"journal of run {journal.run_id} holds {journal.furthest}; it does not make "
                "the same calls when run again")
            return dataclasses.replace(result, ok=False, status="error", value=None,
                                       error=RunError("replay_diverged", message),
                                       run_id=ctx.run_id)
        if not isinstance(cause, Paused):
            return dataclasses.replace(result, run_id=ctx.run_id) if (
                result.run_id != ctx.run_id) else result
        journal.flush()
        journal.save_sources()
        now = time.time()
        content = Continuation(
            run_id=ctx.run_id, session_id=ctx.session_id, script=ctx.script or "",
            script_sha256=ctx.script_sha256 or "",
            catalog_sha256=catalog_sha256(runtime.registry.describe_for_sandbox()),
            approval_sha256=approval_sha256(runtime.approve),
            identity_sha256=identity_sha256(ctx.context),
            pending=tuple(p.id for p in cause.pending), issued_at=now,
            expires_at=now + self.ttl_s, hash_seed=ctx.hash_seed)
        continuation = sign(content, self.key)
        self.store.save_pause(PausedRun(ctx.run_id, ctx.session_id, tuple(cause.pending),
                                        continuation, now, content.expires_at))
        audit = _audit_append(runtime)
        if audit is not None:
            audit({"event": "durable_pause", "run_id": ctx.run_id,
                   "session_id": ctx.session_id, "pending": [p.to_dict() for p in cause.pending],
                   "continuation_sha256": continuation_digest_of(continuation),
                   "expires_at": content.expires_at})
        first = cause.pending[0]
        text = (f"the run paused at {first.tool}() (call {first.seq}), waiting for approval; "
                "resume it with runtime.resume(continuation, decisions)")
        return dataclasses.replace(
            result, ok=False, status="paused", value=None, error=RunError("paused", text),
            pending=list(cause.pending), continuation=continuation, run_id=ctx.run_id)

    # --- resume --------------------------------------------------------------------------
    def check(self, runtime: Runtime, continuation: str, decisions: Mapping[str, Any],
              session: Session | None) -> Continuation:
        """Verify a continuation against this runtime and the decisions.

        Raises:
            ContinuationError: see :class:`~toolscript.errors.ContinuationError`.
        """
        content = verify(continuation, self.key)
        if session is not None and session.id != content.session_id:
            raise ContinuationError(
                f"the continuation belongs to session {content.session_id}, not to session "
                f"{session.id}; resume it without a session (or in its own)", reason="session")
        if catalog_sha256(runtime.registry.describe_for_sandbox()) != content.catalog_sha256:
            raise ContinuationError(
                "the tool catalog differs from the one the run paused with (a tool was added, "
                "removed or changed); resume it with the same tools", reason="catalog")
        if approval_sha256(runtime.approve) != content.approval_sha256:
            raise ContinuationError(
                "the approval configuration differs from the one the run paused with; resume "
                "it with the same approval hook or policy", reason="approval")
        context = session.context if session is not None else runtime.context
        if identity_sha256(context) != content.identity_sha256:
            raise ContinuationError(
                "the injected identity (context values) differs from the one the run paused "
                "with; resume it for the same user", reason="identity")
        for pid in content.pending:
            decision = decisions.get(pid)
            if not isinstance(decision, Decision):
                raise ContinuationError(
                    f"no decision for pending call {pid}: pass decisions={{{pid!r}: "
                    "Decision.allow() or Decision.deny(reason)}", reason="decision")
        return content

    def resume(self, runtime: Runtime, continuation: str, decisions: Mapping[str, Any], *,
               session: Session | None = None) -> RunResult:
        """Continue a paused run (see :meth:`Runtime.resume <toolscript.Runtime.resume>`)."""
        content = self.check(runtime, continuation, decisions, session)
        store = self.store
        digest = continuation_digest_of(continuation)
        lease = runtime.limits.wall_time_s + 60.0
        claim = store.claim_resume(digest, content.run_id, this_holder(), lease)
        if claim != "claimed":
            raise ContinuationError(
                f"the continuation of run {content.run_id} was already resumed" if claim ==
                "resumed" else f"the continuation of run {content.run_id} is being resumed by "
                "another live process now", reason="resumed")
        entries = {entry.seq: entry for entry in store.entries(content.run_id)}
        for pid in content.pending:
            seq = int(pid.rpartition(":")[2])
            if seq not in entries:
                raise ContinuationError(f"the journal of run {content.run_id} has no call {seq}"
                                        " (pruned, or another journal store)", reason="journal")
        chosen = {pid: decisions[pid] for pid in content.pending}
        audit = _audit_append(runtime)
        if audit is not None:
            for pid, decision in chosen.items():
                audit({"event": "durable_decision", "run_id": content.run_id,
                       "pending_id": pid, "approved": decision.approved,
                       "deferred": decision.deferred, "reason": decision.reason})
            audit({"event": "durable_resume", "run_id": content.run_id,
                   "session_id": content.session_id, "continuation_sha256": digest,
                   "journal_entries": len(entries)})
        own = session is None
        if session is None:
            session = runtime.session()
            session.id = content.session_id
        token = _RESUMING.set(_Resuming(content.run_id, entries, chosen, continuation,
                                           content.hash_seed))
        try:
            result = session.run(content.script)
        finally:
            _RESUMING.reset(token)
            if own:
                session.close()
        store.mark_resumed(content.run_id, digest)
        return result


def _audit_append(runtime: Runtime) -> Any:
    """``append`` of the runtime's audit log, if it has one (an ``AuditLog``)."""
    append = getattr(runtime.dispatcher.audit, "append", None)
    return append if callable(append) else None
