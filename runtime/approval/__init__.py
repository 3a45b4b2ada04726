"""Approval: who decides whether a tool call runs.

- :mod:`~toolscript.runtime.approval.hooks`: the hook asked before every call
  (:class:`ToolCallRequest`, :class:`Decision`) and the named modes
  (``allow``, ``default``, ``ask``, ``deny``);
- :mod:`~toolscript.runtime.approval.policies`: declarative rule files
  (:mod:`~toolscript.runtime.approval.policy_schema` checks them,
  :mod:`~toolscript.runtime.approval.budgets` counts approved calls,
  :mod:`~toolscript.runtime.approval.textnorm` normalises matched strings);
- :mod:`~toolscript.runtime.approval.plan`: plan approval, a static analysis of
  what a script can call, approved before it runs;
- :mod:`~toolscript.runtime.approval.prompt`: the terminal prompt behind
  ``--approve ask``.

The hook's names are importable from here, as ``toolscript.runtime.approval``.
"""

from toolscript.runtime.approval.hooks import (
    MODES,
    ApprovalHook,
    Decision,
    ToolCallRequest,
    allow_all,
    check_hook,
    decide,
    deny_all,
    named_policy,
)

__all__ = [
    "MODES",
    "ApprovalHook",
    "Decision",
    "ToolCallRequest",
    "allow_all",
    "check_hook",
    "decide",
    "deny_all",
    "named_policy",
]
