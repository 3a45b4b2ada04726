"""The bookkeeping of one run that all of its tool calls share.

A :class:`RunContext` is made by the session for each run (and for each direct
call): the run's ids, its tool-call budget, its deadline and validation bounds,
the records of its finished calls, why it was stopped, its journal.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolscript.tools.validation import ValidationBounds

from ..limits import Limits
from .retention import RetentionBudget, summarize_args
from .workers import AbandonCounter

if TYPE_CHECKING:
    from ..durable.journal import RunJournal
    from ..results import ToolCallRecord

__all__ = ["RunContext"]

NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})
"""An empty, read-only mapping: a run without context, a call without injected values."""
_DEFAULT_LIMITS = Limits()


class RunContext:
    """Per-run bookkeeping shared by all calls of one run.

    ``limits`` bound the host's work for the run: ``deadline`` (a
    ``time.monotonic()`` value; no call starts after it and none waits past
    it), validation bounds, the bytes its records keep, its abandoned calls.
    ``context`` holds the host's values for injected tool parameters;
    ``script`` the text of the script (``None`` for direct calls), whose hash
    approval hooks see; ``agent_run_id`` the ``Agent.run()`` the run belongs to.
    """

    __slots__ = ("_attempts", "_closed", "_gate", "_script_sha256", "_used", "abandoned",
                 "abort", "agent_run_id", "bounds", "context", "deadline", "hash_seed",
                 "journal", "max_tool_calls", "records", "retention", "run_id", "script",
                 "session_id")

    def __init__(self, run_id: str, session_id: str, max_tool_calls: int,
                 context: Mapping[str, Any] | None = None, *, script: str | None = None,
                 agent_run_id: str | None = None, limits: Limits | None = None,
                 deadline: float | None = None) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.max_tool_calls = max_tool_calls
        self.context = NO_CONTEXT if context is None else context
        self.script = script
        self.agent_run_id = agent_run_id
        self._script_sha256: str | None = None
        self.records: list[ToolCallRecord] = []
        """The run's finished calls, in order (added by :meth:`keep`)."""
        self._closed = False
        self.abort: BaseException | None = None
        """Why the run was stopped (re-raised to the programmer); no call starts once set."""
        self._gate = threading.Lock()
        self._attempts = itertools.count(1)
        self._used = 0
        limits = limits if limits is not None else _DEFAULT_LIMITS
        self.deadline = deadline
        self.bounds = ValidationBounds(limits.max_argument_items, limits.max_argument_depth,
                                       deadline)
        """What validating one call's arguments may cost (installed by the session)."""
        self.retention = RetentionBudget(limits.max_retained_args_bytes)
        self.abandoned = AbandonCounter(limits.max_parallel)
        """This run's calls still running past their timeout (at most ``max_parallel``)."""
        self.journal: RunJournal | None = None
        """The run's journal (issue 30, :mod:`toolscript.runtime.durable`), set by the session."""
        self.hash_seed: int | None = None
        """The string hash seed of the sandbox running the script (None: unknown); a
        continuation carries it so that a resume runs with the same one."""

    @property
    def script_sha256(self) -> str | None:
        """SHA-256 (hex) of the script's text, or None for direct calls."""
        if self._script_sha256 is None and self.script is not None:
            self._script_sha256 = hashlib.sha256(self.script.encode("utf-8")).hexdigest()
        return self._script_sha256

    def stop(self, cause: BaseException) -> None:
        """Stop the run, from any thread (the first cause counts): from then on no
        call of the run starts (:meth:`may_start` is False, checked by every call
        just before its tool runs); a call already running runs on. Call it
        before ``cause`` is raised to the programmer."""
        with self._gate:
            if self.abort is None:
                self.abort = cause

    def keep(self, records: Sequence[ToolCallRecord]) -> None:
        """Add finished records to the run's records, all at once and in order,
        each within the run's retention budget. Once the result has taken the
        records (:meth:`take_records`), later ones - calls of a run abandoned at
        its wall-clock limit that ended after it - are left out: a returned
        ``RunResult`` never changes (the audit log and hooks still see them)."""
        with self._gate:
            if self._closed:
                return
            for record in records:
                self.records.append(record)
                if not self.retention.keep(record.args):
                    record.args = summarize_args(record.args)
                    record.args_omitted = True

    def keep_one(self, record: ToolCallRecord) -> None:
        """:meth:`keep` of one record (a single call's path)."""
        with self._gate:
            if self._closed:
                return
            self.records.append(record)
            if not self.retention.keep(record.args):
                record.args = summarize_args(record.args)
                record.args_omitted = True

    def take_records(self) -> list[ToolCallRecord]:
        """The run's records for its result; no record is added after this."""
        with self._gate:
            self._closed = True
            return list(self.records)

    def may_start(self) -> bool:
        """True if a call may start its tool now (the run was not stopped)."""
        return self.abort is None

    def admit(self) -> bool:
        """Count one attempt; False once the budget is exhausted (thread-safe:
        ``next`` on ``itertools.count`` is atomic)."""
        self._used = used = next(self._attempts)
        return used <= self.max_tool_calls

    def reserve(self, count: int) -> bool:
        """Whether ``count`` more attempts fit the budget; if not, the budget is
        spent, so that no later call of the run is admitted either. (A run's
        calls reach the host one message at a time, so nothing is admitted
        between the check and the batch's own attempts.)"""
        if count <= self.max_tool_calls - self._used:
            return True
        self._used = self.max_tool_calls
        self._attempts = itertools.count(self.max_tool_calls + 1)
        return False
