"""The journal store interface: what a durable run writes and the inbox reads.

A store keeps, per run, one :class:`JournalEntry` per tool call (by sequence
number), the run's pauses (:class:`PausedRun`: the pending calls and the
continuation), the decisions people made on pending calls, and which
continuations were already resumed. :func:`open_store` builds one from a
URL: ``sqlite:///path`` (:mod:`.sqlite`, the default) or
``postgresql://...`` (:mod:`.postgres`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from toolscript.runtime.approval.hooks import Decision

from .pending import PendingCall

STATUSES = ("started", "ok", "error", "denied", "deferred")
"""The statuses of a :class:`JournalEntry`."""


@dataclass(frozen=True)
class JournalEntry:
    """One tool call of a durable run, as the journal holds it.

    Attributes:
        run_id: the run.
        seq: the call's position in the run (1, 2, ...).
        tool: the tool's name.
        args_hash: SHA-256 of the canonical JSON of the final arguments
            (:func:`args_hash`); a replayed call must match it.
        status: ``started`` (the tool was about to run; a crash may have left it
            there), ``ok``, ``error``, ``denied`` or ``deferred``.
        result: for ``ok`` the value, for ``error``/``denied`` the error object
            the script saw; for ``deferred`` the :class:`PendingCall` as a dict.
        idempotency_key: ``"<run_id>:<seq>"``, what an idempotent tool receives.
        at: UNIX time of the entry.
    """

    run_id: str
    seq: int
    tool: str
    args_hash: str
    status: str
    result: Any = None
    idempotency_key: str = ""
    at: float = 0.0


@dataclass(frozen=True)
class PausedRun:
    """A paused run: its pending calls and the continuation that resumes it.

    Attributes:
        run_id: the run.
        session_id: the session it ran in (a resume runs under the same id).
        pending: the calls waiting for a decision.
        continuation: the signed continuation string.
        created_at: UNIX time of the pause.
        expires_at: UNIX time after which the continuation is refused.
    """

    run_id: str
    session_id: str
    pending: tuple[PendingCall, ...]
    continuation: str
    created_at: float
    expires_at: float


@runtime_checkable
class JournalStore(Protocol):
    """Where durable runs keep their journals, pauses and decisions.

    Implementations: :class:`~toolscript.runtime.durable.sqlite.SQLiteJournal`
    and :class:`~toolscript.runtime.durable.postgres.PostgresJournal`. Every
    write is durable (fsync / commit) before the method returns.
    """

    def record(self, entry: JournalEntry) -> None:
        """Write (or replace: same run and seq) one entry, durably."""

    def entries(self, run_id: str) -> list[JournalEntry]:
        """The run's entries, by seq."""

    def save_pause(self, run: PausedRun) -> None:
        """Store a pause (replaces an earlier pause of the same run)."""

    def paused(self, *, run_id: str | None = None) -> list[PausedRun]:
        """Pauses not yet resumed (all, or the one of ``run_id``), oldest first."""

    def decide(self, pending_id: str, decision: Decision, *, by: str = "") -> None:
        """Store a person's decision on a pending call."""

    def decisions(self, run_id: str) -> dict[str, Decision]:
        """The stored decisions of a run's pending calls, by pending id."""

    def claim_resume(self, digest: str, run_id: str, holder: str, lease_s: float) -> str:
        """Claim the resume of the continuation with ``digest``: ``"claimed"``,
        ``"resumed"`` (its resume already ended) or ``"busy"`` (another live
        holder resumes it now). A claim whose holder is gone (a dead process on
        this host, or past its lease) is taken over."""

    def mark_resumed(self, run_id: str, continuation_digest: str) -> None:
        """The resume of this continuation ended: a second resume is refused."""

    def prune(self, older_than_s: float) -> int:
        """Delete runs whose last write is older than ``older_than_s`` seconds and
        which are not paused; return how many runs went."""

    def close(self) -> None:
        """Release connections."""


def args_hash(tool: str, args: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``[tool, args]``."""
    text = json.dumps([tool, args], sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def continuation_digest_of(continuation: str) -> str:
    """SHA-256 (hex) of a continuation string: how stores name it."""
    return hashlib.sha256(continuation.encode("utf-8")).hexdigest()


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """A decision as JSON data."""
    return {"approved": decision.approved, "reason": decision.reason,
            "deferred": decision.deferred}


def decision_from_dict(data: dict[str, Any]) -> Decision:
    """The inverse of :func:`decision_to_dict`."""
    return Decision(bool(data.get("approved")), str(data.get("reason", "")),
                    deferred=bool(data.get("deferred", False)))
