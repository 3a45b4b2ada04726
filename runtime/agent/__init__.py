"""The agent loop: a model drives a toolscript runtime through a provider dialect.

``Agent(runtime, provider=..., model=..., mode=...)``; ``.run(prompt)`` returns an
:class:`AgentResult`. See :mod:`.loop` for the loop, :mod:`.offer` for modes
and ``allowed_callers``, :mod:`.executor` for how calls run.
"""

from __future__ import annotations

from .executor import Step
from .loop import Agent
from .offer import CALLERS_ATTRIBUTE, MODES, allowed_callers
from .result import AgentResult, StopReason

__all__ = [
    "CALLERS_ATTRIBUTE",
    "MODES",
    "Agent",
    "AgentResult",
    "Step",
    "StopReason",
    "allowed_callers",
]
