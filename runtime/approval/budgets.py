"""Policy budgets: at most N approved calls of a tool, per an explicit scope.

A budget counts the calls a :class:`~toolscript.runtime.approval.policies.Policy`
approved, in one of four scopes:

* ``run``: one script run (``session.run``); the direct (classic) calls of a
  session count as one run of their own;
* ``session``: every run and direct call of one session;
* ``agent_run``: every call made during one ``Agent.run()`` (scripts and
  direct calls); calls made outside an agent count per session;
* ``runtime``: every call of one runtime, for as long as the policy is used.

Counts do not expire while their scope can still make calls: the counts of a
finished script run are dropped when the next run of its session starts
(runs of a session are sequential and a run id is never reused); session,
agent-run and runtime counts are kept for the policy's lifetime (a few
hundred bytes per scope).
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.approval.policy_schema import check_budget

__all__ = ["Budget", "BudgetBook", "budgets_from"]

_SCOPE_WORDS = {"run": "per run", "session": "per session", "agent_run": "per agent run",
                "runtime": "per runtime"}


@dataclass(frozen=True)
class Budget:
    """At most ``limit`` approved calls of tools matching ``pattern`` per ``per``."""

    pattern: str
    limit: int
    per: str = "run"

    def describe(self) -> str:
        """``at most 3 call(s) of 'send_email' per agent run``."""
        return f"at most {self.limit} call(s) of {self.pattern!r} {_SCOPE_WORDS[self.per]}"


def budgets_from(data: Mapping[str, Any] | None, where: str = "budgets") -> list[Budget]:
    """Budgets from ``{pattern: N}`` (per run) or ``{pattern: {limit, per}}``.

    Raises:
        ConfigurationError: naming the entry that is wrong.
    """
    out = []
    for name, value in (data or {}).items():
        if isinstance(value, Budget):
            out.append(value)
            continue
        limit, per = check_budget(name, value, where)
        out.append(Budget(str(name), limit, per))
    return out


class BudgetBook:
    """The counts of one policy's budgets (thread-safe)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], dict[str, int]] = {}
        self._script_run: dict[str, str] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _scope_id(budget: Budget, request: ToolCallRequest) -> str:
        if budget.per == "run":
            return f"{request.session_id}\x00{request.run_id}"
        if budget.per == "session":
            return request.session_id
        if budget.per == "agent_run":
            if request.agent_run_id is not None:
                return f"agent\x00{request.agent_run_id}"
            return f"session\x00{request.session_id}"
        return request.runtime_id

    def _forget_finished_run(self, request: ToolCallRequest) -> None:
        """Drop the counts of the session's previous script run (it is over)."""
        if request.source != "script":
            return
        previous = self._script_run.get(request.session_id)
        if previous == request.run_id:
            return
        self._script_run[request.session_id] = request.run_id
        if previous is not None:
            self._counts.pop(("run", f"{request.session_id}\x00{previous}"), None)

    def spend(self, budgets: list[Budget], request: ToolCallRequest) -> Budget | None:
        """Count one approved call against every matching budget; return the first
        budget that is used up instead (nothing is counted then)."""
        matching = [b for b in budgets if fnmatch.fnmatchcase(request.tool, b.pattern)]
        if not matching:
            return None
        with self._lock:
            self._forget_finished_run(request)
            slots = []
            for budget in matching:
                counts = self._counts.setdefault((budget.per, self._scope_id(budget, request)),
                                                 {})
                if counts.get(budget.pattern, 0) >= budget.limit:
                    return budget
                slots.append((counts, budget.pattern))
            for counts, pattern in slots:
                counts[pattern] = counts.get(pattern, 0) + 1
        return None
