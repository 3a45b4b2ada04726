"""Run a call on another thread so the caller can stop waiting for it.

A tool call with a timeout cannot run in the caller's thread: a tool blocked
in a socket read or ``time.sleep`` can be neither interrupted nor abandoned
there. :class:`HandoffWorkers` keeps idle threads parked on a lock and hands
each call over with two lock operations, which costs a fraction of a
``ThreadPoolExecutor`` round trip (no queue, no ``Future``, no condition
variable). A call that times out leaves its thread to finish alone; the
thread rejoins the idle set when the call returns, and its result is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class CallTimedOut(Exception):
    """The call did not return within its timeout (it goes on in its thread)."""


class _Worker:
    __slots__ = ("_done", "_go", "_job", "_owner", "_result", "_state", "abandoned")

    def __init__(self, owner: HandoffWorkers) -> None:
        self._owner = owner
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._state = threading.Lock()
        self._job: Callable[[], Any] | None = None
        self._result: tuple[bool, Any] = (True, None)
        self.abandoned = False
        threading.Thread(target=self._loop, name="toolscript-tool", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            job = self._job
            if job is None:
                return
            try:
                self._result = (True, job())
            except BaseException as exc:  # handed back to the caller
                self._result = (False, exc)
            self._job = None
            with self._state:
                if self.abandoned:
                    self.abandoned = False
                    self._result = (True, None)
                    self._owner._park(self)
                    continue
                self._done.release()

    def call(self, job: Callable[[], Any], timeout: float) -> Any:
        self._job = job
        self._go.release()
        if not self._done.acquire(timeout=timeout):
            with self._state:
                # The call may have finished between the timeout and here.
                if not self._done.acquire(blocking=False):
                    self.abandoned = True
                    raise CallTimedOut
        ok, value = self._result
        self._result = (True, None)
        self._owner._park(self)
        if ok:
            return value
        raise value

    def stop(self) -> None:
        self._job = None
        self._go.release()


class HandoffWorkers:
    """A growing set of parked threads that run calls with a timeout."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def call(self, job: Callable[[], Any], timeout: float) -> Any:
        """Run ``job()`` on a worker; its result or exception, or :class:`CallTimedOut`."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
        return worker.call(job, timeout)

    def _park(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.stop()

    def shutdown(self) -> None:
        """Let idle workers exit; busy ones exit when their call returns."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()
