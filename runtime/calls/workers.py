"""Run a call on another thread so the caller can stop waiting for it.

A tool call with a timeout cannot run in the caller's thread: a tool blocked
in a socket read or ``time.sleep`` can be neither interrupted nor abandoned
there. :class:`HandoffWorkers` keeps idle threads parked on a lock and hands
each call over with two lock operations, which costs a fraction of a
``ThreadPoolExecutor`` round trip (no queue, no ``Future``, no condition
variable).

A call that times out is *abandoned*: it goes on in its thread (Python cannot
stop a thread), its result is dropped, and the thread rejoins the idle set
when the call returns. Abandoned calls are counted, runtime-wide and per
:class:`AbandonCounter` (one per run): at either cap a call that needs a
thread is refused with :class:`Overloaded` instead of leaking another one.
Calls that run inline under the deadline watchdog (see ``dispatch.py``) are
counted the same way. :meth:`HandoffWorkers.spawn` starts a job nobody waits
for on the same parked threads (the thread serving a process backend's run).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

MAX_IDLE_WORKERS = 64
"""Idle threads kept parked; more exit when their call returns."""


class CallTimedOut(Exception):
    """Internal: the call did not return within its timeout (it goes on in its thread)."""


class ToolTimedOut(Exception):
    """Internal: a tool call passed its timeout (distinct from a ``TimeoutError`` the tool raises).

    The dispatcher raises it for a call past its deadline, and :mod:`.hostsupply` for
    an idempotent call whose first run is still going; the dispatcher maps it to
    the ``timeout`` reply.
    """


class Overloaded(Exception):
    """Internal: too many calls are still running past their timeout; no thread was started."""


class AbandonCounter:
    """Counts calls still running past their timeout (for one run, or a whole runtime)."""

    __slots__ = ("_lock", "count", "limit", "total")

    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self.limit = limit
        self.count = 0
        """Abandoned calls whose thread is still running."""
        self.total = 0
        """Calls abandoned since this counter was made."""

    def full(self) -> bool:
        """True when no further call may be abandoned."""
        return self.count >= self.limit

    def add(self) -> None:
        """One more call is running past its timeout."""
        with self._lock:
            self.count += 1
            self.total += 1

    def remove(self) -> None:
        """An abandoned call returned; its thread is free again."""
        with self._lock:
            self.count -= 1


class _Worker:
    __slots__ = ("_counters", "_detached", "_done", "_go", "_job", "_notify", "_owner", "_result",
                 "_state", "abandoned")

    def __init__(self, owner: HandoffWorkers) -> None:
        self._owner = owner
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._state = threading.Lock()
        self._job: Callable[[], Any] | None = None
        self._notify: Callable[[], None] | None = None
        self._counters: tuple[AbandonCounter, ...] = ()
        self._result: tuple[bool, Any] = (True, None)
        self.abandoned = False
        self._detached = False
        threading.Thread(target=self._loop, name="toolscript-tool", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            job = self._job
            if job is None:
                return
            if self._detached:  # nobody waits: the job reports its own outcome
                self._job = None
                self._detached = False
                with contextlib.suppress(BaseException):
                    job()
                self._owner._park(self)
                continue
            try:
                self._result = (True, job())
            except BaseException as exc:  # handed back to the caller
                self._result = (False, exc)
            self._job = None
            with self._state:
                if self.abandoned:
                    self.abandoned = False
                    self._result = (True, None)
                    counters, self._counters = self._counters, ()
                    for counter in counters:
                        counter.remove()
                    self._owner._park(self)
                    continue
                notify, self._notify = self._notify, None
                self._done.release()
            if notify is not None:
                with contextlib.suppress(BaseException):  # never let bookkeeping kill the loop
                    notify()

    def begin(self, job: Callable[[], Any], notify: Callable[[], None] | None) -> None:
        """Start ``job``; ``notify()`` is called (on this worker's thread) when it returns."""
        self._job = job
        self._notify = notify
        self._go.release()

    def wait(self, timeout: float | None) -> bool:
        """True once the call returned (then :meth:`collect`); False on timeout."""
        if timeout is None:
            self._done.acquire()
            return True
        return self._done.acquire(timeout=max(timeout, 0.0))

    def abandon(self, counters: tuple[AbandonCounter, ...]) -> bool:
        """Give up on the running call; False if it returned meanwhile (then collect it)."""
        with self._state:
            if self._done.acquire(blocking=False):
                return False
            self.abandoned = True
            self._notify = None
            self._counters = counters
            for counter in counters:
                counter.add()
            return True

    def collect(self) -> Any:
        """The result of a call that returned (its exception is raised); parks the worker."""
        ok, value = self._result
        self._result = (True, None)
        self._owner._park(self)
        if ok:
            return value
        raise value

    def call(self, job: Callable[[], Any], timeout: float | None,
             counters: tuple[AbandonCounter, ...]) -> Any:
        self.begin(job, None)
        if not self.wait(timeout) and self.abandon(counters):
            raise CallTimedOut
        return self.collect()

    def stop(self) -> None:
        self._job = None
        self._go.release()


class HandoffWorkers:
    """A growing set of parked threads that run calls with a timeout.

    Args:
        max_abandoned: calls of the whole set that may run past their timeout.
    """

    def __init__(self, max_abandoned: int = 64) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.abandoned = AbandonCounter(max_abandoned)
        """The runtime-wide count of calls running past their timeout."""

    def check(self, run: AbandonCounter | None) -> None:
        """Raise :class:`Overloaded` when a cap on abandoned calls is reached (the
        runtime's, or ``run``'s): a call that might be abandoned must not start."""
        host = self.abandoned  # ``full()`` inline: this is on every watched call's path
        if host.count >= host.limit or (run is not None and run.count >= run.limit):
            who = "this run" if run is not None and run.full() else "the host"
            count = run.count if run is not None and run.full() else self.abandoned.count
            raise Overloaded(
                f"{count} earlier tool calls of {who} are still running past their timeout; "
                "no new call starts until they finish"
            )

    def _take(self, run: AbandonCounter | None) -> _Worker:
        self.check(run)
        return self._idle_worker()

    def _idle_worker(self) -> _Worker:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        return worker if worker is not None else _Worker(self)

    def counters(self, run: AbandonCounter | None) -> tuple[AbandonCounter, ...]:
        """The counters an abandoned call of ``run`` is counted in (the runtime's first)."""
        return (self.abandoned,) if run is None else (self.abandoned, run)


    def spawn(self, job: Callable[[], Any]) -> None:
        """Run ``job()`` on a parked (or new) worker and return at once; nobody waits
        for it, its result and exceptions are dropped (the job reports its own
        outcome). Not subject to the caps on abandoned calls: a run's own serving
        thread uses it."""
        worker = self._idle_worker()
        worker._detached = True
        worker.begin(job, None)

    def call(self, job: Callable[[], Any], timeout: float | None,
             run: AbandonCounter | None = None) -> Any:
        """Run ``job()`` on a worker; its result or exception, or :class:`CallTimedOut`.

        ``run`` counts this caller's abandoned calls (with its own cap).

        Raises:
            Overloaded: a cap on abandoned calls is reached; ``job`` did not start.
        """
        return self._take(run).call(job, timeout, self.counters(run))

    def start(self, job: Callable[[], Any], notify: Callable[[], None],
              run: AbandonCounter | None = None) -> Started:
        """Start ``job()`` on a worker and return at once; ``notify()`` runs when it returns.

        Raises:
            Overloaded: a cap on abandoned calls is reached; ``job`` did not start.
        """
        worker = self._take(run)
        worker.begin(job, notify)
        return Started(worker, self.counters(run))

    def _park(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_WORKERS:
                self._idle.append(worker)
                return
        worker.stop()

    def idle(self) -> int:
        """Parked threads ready for a call."""
        return len(self._idle)

    def shutdown(self) -> None:
        """Let idle workers exit; busy ones exit when their call returns."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()


class Started:
    """A call started with :meth:`HandoffWorkers.start`."""

    __slots__ = ("_counters", "_ready", "_worker")

    def __init__(self, worker: _Worker, counters: tuple[AbandonCounter, ...]) -> None:
        self._worker = worker
        self._counters = counters
        self._ready = False

    def poll(self) -> bool:
        """True once the call returned (then take :meth:`result`); never waits."""
        if not self._ready:
            self._ready = self._worker.wait(0.0)
        return self._ready

    def result(self) -> Any:
        """The value of a call :meth:`poll` saw returned (or raise its exception)."""
        assert self._ready, "poll() first"
        return self._worker.collect()

    def abandon(self) -> bool:
        """Stop waiting for the call (it goes on, counted as abandoned); False if it
        returned meanwhile (then take :meth:`result`)."""
        if self._ready:
            return False
        if self._worker.abandon(self._counters):
            return True
        self._ready = True
        return False
