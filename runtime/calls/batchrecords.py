"""The records of one batch of calls, each finished as soon as its reply is known.

A ``parallel()`` batch (or a direct ``call_tools`` batch) runs its writes one
after another and its reads on worker threads. :class:`BatchRecords` finishes
each call's record - outcome, duration, audit line, ``tool_call`` hooks - the
moment its reply is settled, on whichever thread settles it, exactly once:
a host that dies in the middle of a batch has already logged every call that
ended before. The records join the run's ``RunResult.tool_calls`` in call order
when the batch ends, all at once (:meth:`keep_all`).

An audit callback that fails stops the run (no call of it starts after a call
that could not be recorded); the first such failure is raised by
:meth:`keep_all`, as it was from a single call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..results import ToolCallRecord
    from .runcontext import RunContext

__all__ = ["BatchRecords"]

Reply = dict[str, Any]
Settle = Callable[["RunContext", "ToolCallRecord", Reply], None]


class BatchRecords:
    """Finishes each call of one batch once (thread-safe)."""

    __slots__ = ("_ctx", "_failure", "_lock", "_settle", "_settled", "_starts",
                 "records")

    def __init__(self, ctx: RunContext, settle: Settle) -> None:
        self._ctx = ctx
        self._settle = settle
        self._lock = threading.Lock()
        self._settled: set[int] = set()
        self._starts: list[float] = []
        self._failure: BaseException | None = None
        self.records: list[ToolCallRecord] = []
        """The batch's records, in call order."""

    def add(self, record: ToolCallRecord) -> None:
        """The next call of the batch (its duration counts from now)."""
        self.records.append(record)
        self._starts.append(time.perf_counter())

    def finish(self, index: int, reply: Reply) -> None:
        """Call ``index`` has its reply: finish its record now (a second reply for
        the same call, which cannot happen by design, is ignored). (In process
        the whole batch runs with the wall-limit abort held off:
        ``RunServer.call_many``.)"""
        with self._lock:
            if index in self._settled:
                return
            self._settled.add(index)
        record = self.records[index]
        record.duration_s = time.perf_counter() - self._starts[index]
        try:
            self._settle(self._ctx, record, reply)
        except BaseException as exc:  # the audit failed: nothing more may run unrecorded
            self._ctx.stop(exc)
            with self._lock:
                if self._failure is None:
                    self._failure = exc

    def settled(self, index: int) -> bool:
        """True once call ``index`` was finished."""
        with self._lock:
            return index in self._settled

    def keep_all(self) -> None:
        """Add the records to the run in call order; raise the first audit failure."""
        self._ctx.keep(self.records)
        if self._failure is not None:
            raise self._failure
