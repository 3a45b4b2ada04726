"""Stopping a batch job: the first request drains, the second abandons.

A :class:`BatchStop` is what Ctrl-C and SIGTERM turn into while a batch runs
(:func:`stop_on_signals`). The first request stops the batch from taking new
items and lets the running ones finish and be recorded; the second abandons
the running items at once. The signal handler only counts requests: the batch
loop looks at the count between waits, so a signal never interrupts the loop
half-way through recording an item (which is what an exception raised from
the handler would do).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["BatchStop", "stop_on_signals"]


class BatchStop:
    """Asks a running batch to stop (safe to call from a signal handler or a thread).

    The first :meth:`request` makes :attr:`stopping` true: no new items start
    and the running ones finish. A second one makes :attr:`abandoning` true:
    the batch stops waiting for its running items.
    """

    def __init__(self) -> None:
        self.requests = 0
        self.reason: str | None = None

    def request(self, reason: str = "stop requested") -> None:
        """Ask for a stop (the first call) or to abandon running items (later calls)."""
        # Only plain assignments: this runs inside signal handlers, where taking
        # a lock the interrupted code holds would deadlock.
        if self.reason is None:
            self.reason = reason
        self.requests += 1

    @property
    def stopping(self) -> bool:
        """A stop was asked for: take no new items."""
        return self.requests >= 1

    @property
    def abandoning(self) -> bool:
        """A second stop was asked for: stop waiting for running items."""
        return self.requests >= 2


@contextmanager
def stop_on_signals(stop: BatchStop, signals: Collection[int]) -> Iterator[BatchStop]:
    """Turn ``signals`` into requests on ``stop`` while the block runs.

    The previous handlers come back afterwards. Outside the main thread
    (where Python cannot install handlers) nothing is installed.
    """
    if not signals or threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.request(signal.Signals(signum).name)

    previous: dict[int, Any] = {}
    try:
        for signum in signals:
            previous[signum] = signal.signal(signum, handler)
        yield stop
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
