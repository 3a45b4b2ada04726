"""Runs tool functions, inline or on a parked worker thread, with their timeouts."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .deadlines import Deadlines
from .workers import AbandonCounter, CallTimedOut, HandoffWorkers, ToolTimedOut

if TYPE_CHECKING:
    from toolscript.tools import Tool

    from .hostsupply import BoundCall

__all__ = ["ToolExecutor"]


class ToolExecutor:
    """Runs tool functions, with a timeout when one applies.

    A call whose caller can be replaced (the serving thread of a process
    backend's run: see ``Session``) runs inline, its deadline registered with
    the runtime's one watchdog thread (:class:`~toolscript.runtime.calls.deadlines.Deadlines`),
    which does nothing unless the deadline passes; then it answers the call
    ``timeout`` and lets a fresh thread continue the run, and the stuck thread
    is abandoned. Any other call with a timeout runs on a parked worker thread
    (:class:`~toolscript.runtime.calls.workers.HandoffWorkers`) so the caller can
    give up on it. Either way a tool that never returns keeps its thread
    (Python cannot kill one), counted as abandoned, and at ``max_abandoned``
    (runtime-wide) or a run's own cap further calls are refused
    (``overloaded``). Calls without a timeout run inline. The read-only calls
    of ``parallel()`` batches run on the same workers
    (:class:`~toolscript.runtime.calls.fanout.Fanout`): no pool shared between
    sessions, so one session's hanging calls cannot hold up another's.
    """

    def __init__(self, max_abandoned: int = 64) -> None:
        self.workers = HandoffWorkers(max_abandoned)
        self.deadlines = Deadlines()

    def run(self, tool: Tool | BoundCall, args: dict[str, Any], timeout_s: float | None,
            run: AbandonCounter | None = None) -> Any:
        """Invoke the tool; raise :class:`ToolTimedOut` when the timeout passes.

        Raises:
            Overloaded: too many earlier calls are still running past their timeout.
        """
        if timeout_s is None:
            return tool.invoke(args)
        try:
            return self.workers.call(functools.partial(tool.invoke, args), timeout_s, run)
        except CallTimedOut:
            raise ToolTimedOut(f"{tool.name} did not finish within {timeout_s:g} s") from None

    def stats(self) -> dict[str, int]:
        """``abandoned_threads`` (calls still running past their timeout, across
        the runtime), ``abandoned_total`` (since start), ``max_abandoned_threads``
        and ``idle_threads`` (parked workers)."""
        counter = self.workers.abandoned
        return {"abandoned_threads": counter.count, "abandoned_total": counter.total,
                "max_abandoned_threads": counter.limit, "idle_threads": self.workers.idle()}

    def shutdown(self) -> None:
        """Stop accepting work; running tools are left to finish."""
        self.workers.shutdown()
        self.deadlines.close()
