"""Stopping a run whose async caller gave up on it.

``Session.run_async`` (and the agent's async driver) awaits a sync run
carried out in a worker thread (:func:`stoppable`). When
the awaiting task is cancelled (``asyncio.run`` cancels it on Ctrl-C) the
thread would go on serving the run, its calls included. A :class:`Stopper`
travels with the run (as :data:`CURRENT` in the thread's context variables):
the run *arms* it with what stopping means at each stage (stop the run's
calls; abandon its sandbox), and the caller *fires* it before the
cancellation reaches its own caller. A stopper fired before the run armed it
stops the run as it arms.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["CURRENT", "Stopper", "stoppable", "take"]

StopAction = Callable[[BaseException], None]


class Stopper:
    """Carries one caller's "stop now" to the run it awaits (thread-safe)."""

    __slots__ = ("_action", "_cause", "_lock")

    def __init__(self) -> None:
        self._action: StopAction | None = None
        self._cause: BaseException | None = None
        self._lock = threading.Lock()

    def arm(self, action: StopAction | None) -> None:
        """What :meth:`fire` does from now (``None``: nothing, the run is over); run
        at once if the stopper already fired."""
        with self._lock:
            self._action = action
            cause = self._cause
        if cause is not None and action is not None:
            action(cause)

    def fire(self, cause: BaseException) -> None:
        """Stop the run (once): carry out the armed action with ``cause``."""
        with self._lock:
            if self._cause is not None:
                return
            self._cause = cause
            action = self._action
        if action is not None:
            action(cause)


CURRENT: contextvars.ContextVar[Stopper | None] = contextvars.ContextVar(
    "toolscript_run_stopper", default=None)
"""The stopper of the run about to start in this context (set by the async caller)."""


async def stoppable(func: Callable[..., Any], *args: Any) -> Any:
    """Await ``func(*args)`` in a worker thread (``offload``); if the wait ends early
    (the task cancelled), stop the run or direct call ``func`` makes before the
    cancellation goes on."""
    from toolscript.tools.asynctools import offload

    stopper = Stopper()
    token = CURRENT.set(stopper)
    try:
        return await offload(func, *args)
    except BaseException as exc:  # cancelled: stop the run before the caller hears of it
        stopper.fire(exc)
        raise
    finally:
        CURRENT.reset(token)


def take() -> Stopper | None:
    """The stopper meant for the run starting now, cleared from this context so that
    runs the run's own tools start (they share its context) do not take it too."""
    stopper = CURRENT.get()
    if stopper is not None:
        CURRENT.set(None)
    return stopper
