"""One thread that acts when a deadline passes, and stays asleep otherwise.

A tool call that runs inline (in the thread serving its run) registers its
deadline here with :meth:`Deadlines.add` and cancels it with
:meth:`Deadlines.cancel` when it returns. Neither wakes the watchdog thread:
it sleeps until the earliest registered deadline (or at least
:data:`MIN_SLEEP_S`), and a new deadline wakes it only when it comes before
the moment the thread already means to wake up. Cancelled deadlines are left
in the heap and dropped when they reach its top (or in a compaction when
they outnumber the live ones), so the fast path is one lock round trip and a
heap push.

When a deadline passes, its action runs on the watchdog thread; an action
must be quick (start a thread, set a flag), never block.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable

__all__ = ["MIN_SLEEP_S", "Deadline", "Deadlines"]

MIN_SLEEP_S = 0.005
"""The watchdog sleeps at least this long between two wake-ups (an action may
run this much after its deadline); it bounds its wake-ups under a stream of
calls."""

_COMPACT_AT = 4096
"""Cancelled entries kept in the heap before it is rebuilt without them."""


class Deadline:
    """A registered deadline (returned by :meth:`Deadlines.add`)."""

    __slots__ = ("action", "when")

    def __init__(self, when: float, action: Callable[[], None]) -> None:
        self.when = when
        self.action: Callable[[], None] | None = action


class Deadlines:
    """A runtime-wide heap of deadlines served by one lazily started daemon thread."""

    def __init__(self) -> None:
        # (when, seq, entry): ordered by the tuples' own comparison, no Python
        # call per comparison (``seq`` breaks ties, so entries are never compared)
        self._heap: list[tuple[float, int, Deadline]] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._seq = itertools.count()
        self._wake_at = float("inf")
        self._cancelled = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, when: float, action: Callable[[], None]) -> Deadline:
        """Run ``action()`` (on the watchdog thread) once ``time.monotonic()`` passes
        ``when``, unless :meth:`cancel` comes first."""
        entry = Deadline(when, action)
        with self._lock:
            heapq.heappush(self._heap, (when, next(self._seq), entry))
            if self._thread is None:
                self._start()
            elif when < self._wake_at:
                self._wake.notify()
        return entry

    def cancel(self, entry: Deadline) -> bool:
        """Cancel ``entry``: True if its action had not run (and now never will),
        False if the deadline passed first (its action ran or is running)."""
        with self._lock:
            if entry.action is None:
                return False
            entry.action = None
            self._cancelled += 1
            if self._cancelled >= _COMPACT_AT and self._cancelled * 2 >= len(self._heap):
                self._heap = [item for item in self._heap if item[2].action is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0
            return True

    def pending(self) -> int:
        """Deadlines registered and neither passed nor cancelled."""
        with self._lock:
            return sum(1 for item in self._heap if item[2].action is not None)

    def held(self) -> int:
        """Entries the heap holds, cancelled ones included until it is compacted
        (diagnostics; :meth:`pending` counts only the live ones)."""
        with self._lock:
            return len(self._heap)

    def close(self) -> None:
        """Stop the watchdog thread; pending actions never run."""
        with self._lock:
            self._closed = True
            self._wake.notify()

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="toolscript-deadlines",
                                        daemon=True)
        self._thread.start()

    def _due(self, now: float) -> list[Callable[[], None]]:
        """Pop the passed deadlines (called with the lock held); their actions."""
        due: list[Callable[[], None]] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)[2]
            if entry.action is None:
                self._cancelled = max(self._cancelled - 1, 0)
                continue
            due.append(entry.action)
            entry.action = None
        return due

    def _loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                due = self._due(now)
                if not due:
                    wait = (max(self._heap[0][0] - now, MIN_SLEEP_S) if self._heap
                            else None)
                    self._wake_at = float("inf") if wait is None else now + wait
                    self._wake.wait(wait)
                    self._wake_at = float("inf")
                    continue
            for action in due:
                with contextlib.suppress(BaseException):  # one failing action must not stop it
                    action()
