"""The concurrent half of a ``parallel()`` batch: read-only calls on worker threads.

:class:`Fanout` starts at most ``max_parallel`` calls at once on
:class:`~toolscript.runtime.calls.workers.HandoffWorkers`, starts the next queued
call as soon as one returns, and gives each call its own timeout counted
from when it started. It stops starting calls the moment the batch must
stop - the run was aborted (a ``ToolAuthorizationError``, Ctrl-C) or reached
its wall-clock deadline: calls still queued are never started, calls still
running are abandoned (their threads are counted, see ``workers.py``).

Each call's reply is handed to ``on_reply`` as soon as it is known - on the
worker's thread when the call returns, on the waiting thread when it times
out or is stopped - exactly once, outside the fanout's lock: the dispatcher
records each call then, not when the whole batch ends.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .workers import AbandonCounter, HandoffWorkers, Overloaded, Started

__all__ = ["Fanout", "FanoutJob", "StopCheck"]

Reply = dict[str, Any]
FanoutJob = tuple[int, str, Callable[[], Reply], float | None]
"""``(index, tool name, job returning its reply, timeout in seconds or None)``."""
StopCheck = Callable[[], tuple[str, str] | None]
"""``(error type, why)`` when the batch must stop, else None."""
OnReply = Callable[[int, "Reply"], None]
"""Called once per call with its batch index and reply, as soon as the reply is known."""


def _error(error_type: str, message: str, **details: Any) -> Reply:
    return {"ok": False, "error": {"type": error_type, "message": message, **details}}


class Fanout:
    """Runs the read-only calls of one batch; :meth:`start`, then :meth:`finish`."""

    def __init__(
        self,
        workers: HandoffWorkers,
        jobs: list[FanoutJob],
        max_parallel: int,
        stop: StopCheck,
        deadline: float | None,
        run_counter: AbandonCounter | None = None,
        on_reply: OnReply | None = None,
    ) -> None:
        self._workers = workers
        self._on_reply = on_reply
        self._unreported: list[tuple[int, Reply]] = []
        self._queue = deque(jobs)
        self._slots = max_parallel
        self._stop = stop
        self._deadline = deadline
        self._run_counter = run_counter
        self._cond = threading.Condition()
        self._running: dict[int, tuple[Started, str, float | None, float | None]] = {}
        self._finished: list[int] = []
        self.replies: dict[int, Reply] = {}

    def start(self) -> None:
        """Start the first calls (up to ``max_parallel``) and return at once."""
        with self._cond:
            self._fill()
        self._report()

    def _settle(self, index: int, reply: Reply) -> None:
        """A call's reply is known (called with the lock held; reported after it)."""
        self.replies[index] = reply
        if self._on_reply is not None:
            self._unreported.append((index, reply))

    def _report(self) -> None:
        """Hand the replies settled so far to ``on_reply`` (without the lock held)."""
        if self._on_reply is None:
            return
        while True:
            with self._cond:
                if not self._unreported:
                    return
                settled, self._unreported = self._unreported, []
            for index, reply in settled:
                self._on_reply(index, reply)

    def _fill(self) -> None:
        """Start queued calls while slots are free (called with the lock held)."""
        while self._queue and len(self._running) < self._slots:
            if self._stop() is not None:
                return
            index, name, job, timeout = self._queue.popleft()
            try:
                started = self._workers.start(job, functools.partial(self._done, index),
                                              self._run_counter)
            except Overloaded as exc:
                self._settle(index, _error("overloaded", f"{name}() did not start: {exc}",
                                           started=False))
                continue
            until = None if timeout is None else time.monotonic() + timeout
            self._running[index] = (started, name, timeout, until)

    def _done(self, index: int) -> None:
        """A call returned (runs on its worker's thread): its reply is settled here."""
        with self._cond:
            entry = self._running.get(index)
            if entry is not None and entry[0].poll():
                del self._running[index]
                self._settle(index, self._result(entry[0], entry[1]))
            self._finished.append(index)
            self._cond.notify_all()
            self._fill()
        self._report()

    def _collect(self) -> None:
        finished, self._finished = self._finished, []
        for index in finished:
            entry = self._running.get(index)
            if entry is not None and entry[0].poll():
                del self._running[index]
                self._settle(index, self._result(entry[0], entry[1]))

    @staticmethod
    def _result(started: Started, name: str) -> Reply:
        try:
            reply: Reply = started.result()
        except Exception as exc:  # the job turns tool errors into replies; this is a bug
            return _error("tool_exception", f"{name}: {type(exc).__name__}")
        return reply

    def _expire(self, now: float) -> None:
        for index, (started, name, timeout, until) in list(self._running.items()):
            if until is None or now < until:
                continue
            del self._running[index]
            if started.abandon():
                self._settle(index, _error("timeout",
                                           f"{name} did not finish within {timeout:g} s"))
            else:
                self._settle(index, self._result(started, name))

    def _stop_all(self, error_type: str, why: str) -> None:
        """Abandon the running calls and refuse the queued ones."""
        for index, (started, name, _timeout, _until) in list(self._running.items()):
            del self._running[index]
            if started.abandon():
                self._settle(index, _error(error_type, f"{name}() was stopped: {why}"))
            else:
                self._settle(index, self._result(started, name))
        while self._queue:
            index, name, _job, _timeout = self._queue.popleft()
            self._settle(index, _error(error_type, f"{name}() was not started: {why}",
                                       started=False))

    def _wakeup(self, now: float) -> float | None:
        times = [until for _s, _n, _t, until in self._running.values() if until is not None]
        if self._deadline is not None:
            times.append(self._deadline)
        return max(min(times) - now, 0.0) + 0.001 if times else None

    def finish(self) -> dict[int, Reply]:
        """Wait for every call (or stop them); the replies by batch index."""
        while True:
            with self._cond:
                over = self._step()
            self._report()  # timeouts and stops settled by this thread
            if over:
                return self.replies

    def _step(self) -> bool:
        """One round of :meth:`finish` (lock held): True once every call is settled."""
        self._collect()
        stop = self._stop()
        if stop is not None:
            self._stop_all(*stop)
            return True
        now = time.monotonic()
        self._expire(now)
        self._fill()
        if not self._running and not self._queue:
            return True
        if not self._finished:
            self._cond.wait(self._wakeup(now))
        return False

    def cancel(self, error_type: str, why: str) -> dict[int, Reply]:
        """Stop now (e.g. Ctrl-C while waiting); the replies by batch index."""
        with self._cond:
            self._collect()
            self._stop_all(error_type, why)
        self._report()
        return self.replies
