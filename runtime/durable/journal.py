"""The journal of one run as the dispatcher drives it, and replay on resume.

Each tool call that reached its final arguments gets the next sequence number
(:meth:`RunJournal.step`). On a fresh run nothing is replayed; each outcome
is recorded (in memory, or durably when the runtime has a configured journal
or the run is a resume). On a resume the journal of the original run is
replayed: a call at a position the journal holds is answered from it (the
tool never runs again) when its tool and argument hash match, and ends the
run as ``replay_diverged`` when they do not; the call that paused the run
gets the person's decision; calls past the journal run as usual.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from toolscript.runtime.approval.hooks import Decision

from .pending import PendingCall, pending_id
from .store import JournalEntry, JournalStore, args_hash

Reply = dict[str, Any]
AuditAppend = Callable[[dict[str, Any]], Any]


SOURCES_SEQ = 0
"""The journal position of a run's recorded readings (calls count from 1)."""

SOURCES_TOOL = "<sources>"
"""The ``tool`` of that entry: not a tool name (those are identifiers)."""


class Paused(BaseException):
    """Internal: the run stops at a deferred call (``ctx.stop`` cause, never raised to
    the programmer: the session turns it into a paused result)."""

    def __init__(self, pending: PendingCall) -> None:
        super().__init__(f"{pending.tool}() waits for approval")
        self.pending = [pending]


class ReplayDiverged(BaseException):
    """Internal: a replayed call differs from the journal (the run ends as
    ``replay_diverged``)."""

    def __init__(self, message: str, seq: int) -> None:
        super().__init__(message)
        self.seq = seq


class Step:
    """What :meth:`RunJournal.step` decided for one call."""

    __slots__ = ("decision", "reply", "seq")

    def __init__(self, seq: int, reply: Reply | None = None,
                 decision: Decision | None = None) -> None:
        self.seq = seq
        self.reply = reply
        """Answer the call with this (replayed, or diverged) instead of running it."""
        self.decision = decision
        """The person's decision on this (formerly deferred) call, instead of the hook's."""

    def hook(self, approve: Any) -> Any:
        """The approval hook for this call: the person's decision when there is one."""
        decision = self.decision
        if decision is None:
            return approve
        return lambda request: decision


class RunJournal:
    """One run's journal (see the module docstring).

    Args:
        run_id: the run.
        store: opens the store (called at the first durable write only).
        durable: write every outcome through to the store as it happens;
            otherwise keep them in memory until the run pauses.
        replay: the entries of the original run (a resume), by seq.
        decisions: the decisions on the pending calls (a resume).
        audit: writes one audit record (``AuditLog.append``), or None.
    """

    def __init__(self, run_id: str, store: Callable[[], JournalStore], *, durable: bool = False,
                 replay: Mapping[int, JournalEntry] | None = None,
                 decisions: Mapping[str, Decision] | None = None,
                 audit: AuditAppend | None = None,
                 stop: Callable[[BaseException], None] | None = None) -> None:
        self.run_id = run_id
        self._stop = stop
        self._open = store
        self._store: JournalStore | None = None
        self.durable = durable
        self.replay = dict(replay or {})
        held = self.replay.pop(SOURCES_SEQ, None)
        self.replay_sources: dict[str, list[Any]] | None = (
            held.result if held is not None and held.tool == SOURCES_TOOL
            and isinstance(held.result, dict) else None)
        """The original run's clock readings and seed (a resume hands them to the sandbox)."""
        self.sources: dict[str, list[Any]] | None = None
        """This run's readings, as its result reported them (kept at a pause)."""
        self.decisions = dict(decisions or {})
        self.audit = audit
        self.seq = 0
        self._kept: list[tuple[int, str, Any, float]] = []
        self._hashes: dict[int, tuple[str, str]] = {}
        # A fresh run that keeps its journal in memory hashes a call's arguments only if
        # the run pauses (the hash is about a third of a call's cost in process). A tool
        # that mutates its arguments in place then makes a resume end as replay_diverged:
        # loud, never a silent wrong replay.
        self._unhashed: dict[int, tuple[str, Any]] = {}
        self._seq_of: dict[str, int] = {}
        self.replayed = 0
        """Calls answered from the journal."""
        self.furthest = max(self.replay, default=0)

    @property
    def store(self) -> JournalStore:
        """The store, opened on first use."""
        if self._store is None:
            self._store = self._open()
        return self._store

    def key(self, seq: int) -> str:
        """The idempotency key of the call at ``seq``: ``"<run_id>:<seq>"``."""
        return f"{self.run_id}:{seq}"

    # --- the dispatcher's calls ----------------------------------------------------------
    def step(self, tool: str, args: Any, record_id: str) -> Step:
        """Number the next call (record ``record_id``) and replay it if the journal
        holds its position."""
        self.seq = seq = self.seq + 1
        entry = self.replay.get(seq)
        if entry is None and not self.durable:
            self._unhashed[seq] = (tool, args)
            self._seq_of[record_id] = seq
            return Step(seq)
        digest = args_hash(tool, args)
        self._hashes[seq] = (tool, digest)
        if entry is None or entry.status == "started":  # new, or in flight at a crash
            self._seq_of[record_id] = seq
            return Step(seq)
        if entry.tool != tool or entry.args_hash != digest:
            what = ("another tool" if entry.tool != tool else "other arguments")
            message = (f"replay diverged at call {seq}: the script called {tool}() where the "
                       f"journal of run {self.run_id} has {entry.tool}() with "
                       f"{'the same' if entry.tool == tool else 'its'} arguments ({what}); the "
                       "script does not make the same calls when run again, so the run was "
                       "stopped instead of guessing")
            if self._stop is not None:
                self._stop(ReplayDiverged(message, seq))
            return Step(seq, _error("replay_diverged", message, seq=seq))
        if entry.status == "deferred":
            self._seq_of[record_id] = seq
            return Step(seq, decision=self.decisions.get(pending_id(self.run_id, seq)))
        self.replayed += 1
        if self.audit is not None:
            self.audit({"event": "durable_replayed", "run_id": self.run_id, "seq": seq,
                        "tool": tool, "status": entry.status})
        if entry.status == "ok":
            return Step(seq, {"ok": True, "value": entry.result})
        error = entry.result if isinstance(entry.result, dict) else {
            "type": "tool_exception", "message": str(entry.result)}
        return Step(seq, {"ok": False, "error": error})

    def finished(self, record_id: str, reply: Reply) -> None:
        """The call of record ``record_id`` ended with ``reply`` (called before the reply
        reaches the script; replayed answers and unnumbered calls are not written)."""
        seq = self._seq_of.pop(record_id, None)
        if seq is None:
            return
        if reply.get("ok"):
            self._write(seq, "ok", reply.get("value"))
            return
        error = reply.get("error") or {}
        if error.get("started") is False or error.get("type") in ("host_abort", "paused",
                                                                  "replay_diverged"):
            return  # the tool never ran: a resume runs it (nothing to answer from)
        status = "denied" if error.get("type") == "denied" else "error"
        self._write(seq, status, error)

    def pause(self, seq: int, tool: str, arguments: dict[str, Any], caller: str,
              reason: str) -> Reply:
        """The call at ``seq`` was deferred: journal it, stop the run (it pauses
        here) and return the reply the script gets meanwhile."""
        pending = PendingCall(pending_id(self.run_id, seq), tool, arguments, caller, reason,
                              self.run_id, seq)
        self._write(seq, "deferred", pending.to_dict())
        if self._stop is not None:
            self._stop(Paused(pending))
        why = f" ({reason})" if reason else ""
        return _error("paused", f"{tool}() waits for a person's approval{why}; the run pauses "
                      "here and resumes once it is decided", pending_id=pending.id)

    def save_sources(self) -> None:
        """Keep the run's readings with its journal (at a pause, after :meth:`flush`):
        the resume's sandbox replays them (``sandbox/runsources.py``)."""
        if self.sources:
            self.store.record(JournalEntry(self.run_id, SOURCES_SEQ, SOURCES_TOOL, "", "ok",
                                           self.sources, "", time.time()))

    def _write(self, seq: int, status: str, result: Any) -> None:
        if not self.durable:
            self._kept.append((seq, status, result, time.time()))
            return
        self.store.record(self._entry(seq, status, result, time.time()))

    def _entry(self, seq: int, status: str, result: Any, at: float) -> JournalEntry:
        known = self._hashes.get(seq)
        if known is None:
            tool, args = self._unhashed.pop(seq)
            known = self._hashes[seq] = (tool, args_hash(tool, args))
        tool, digest = known
        return JournalEntry(self.run_id, seq, tool, digest, status, result, self.key(seq), at)

    @property
    def memory(self) -> list[JournalEntry]:
        """The entries kept in memory so far (a run that has not paused)."""
        return [self._entry(*kept) for kept in self._kept]

    def flush(self) -> None:
        """Write what was kept in memory (at a pause); from then on write through."""
        if self._kept:
            store = self.store
            for entry in self.memory:
                store.record(entry)
            self._kept.clear()
        self._unhashed.clear()
        self.durable = True

    def short_of_journal(self) -> bool:
        """The run ended before reaching every position its journal holds."""
        return self.seq < self.furthest


def _error(error_type: str, message: str, **details: Any) -> Reply:
    return {"ok": False, "error": {"type": error_type, "message": message, **details}}
