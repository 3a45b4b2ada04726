"""Ends a run that exceeds its wall-clock or CPU time, from another thread.

One daemon thread per process watches the armed runs. When a run is over its
limit, the watchdog records the reason in the run's :class:`AbortState` and
raises :class:`SandboxAbort` asynchronously in the running thread
(``PyThreadState_SetAsyncExc``), repeating until the run ends, because a
script may catch it or be inside a long C call. Process backends also have a
host-side hard kill behind this; the inprocess backend has only this.

An abort still pending when the run ends is not cleared with
``PyThreadState_SetAsyncExc(thread, NULL)``: CPython keeps the "asynchronous
exception pending" flag per interpreter and lowers it only when a thread
delivers one, so that call leaves it raised with nothing to deliver, and
every thread then takes the slow path at each check; a thread with a trace
function (a debugger, coverage, in process: the host's) spins forever at the
first instruction of its next frame. Instead the run's own thread replaces
the pending abort with :class:`_Drained` and delivers that to itself
(:func:`_drain`), which lowers the flag.

In process the script's tool calls run the host's bookkeeping on the script's
own thread (records, journal, audit lines, hooks). An abort landing there would
leave a call half recorded, or be taken by host code for a failure of its own,
so that bookkeeping runs inside :func:`deferred`: the watchdog does not inject
while the thread is in it, and injects as soon as it leaves.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .guards import AbortState, SandboxAbort

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_POLL_S = 0.02
_REPEAT_S = 0.05
_NOT_ARMED: contextlib.AbstractContextManager[None] = contextlib.nullcontext()


@dataclass
class _Watch:
    thread_id: int
    abort: AbortState
    deadline: float | None
    cpu_clock: int | None
    cpu_limit_s: float | None
    cpu_start: float = 0.0
    fired_at: float | None = None
    active: bool = True
    injected: bool = field(default=False)
    deferred: int = 0
    deferral: contextlib.AbstractContextManager[None] = field(default=_NOT_ARMED, repr=False)
    """This watch's :meth:`Watchdog.deferred` (made once: it is on every call's path)."""


class Watchdog:
    """Process-wide watcher of armed runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._watches: list[_Watch] = []
        self._armed: dict[int, list[_Watch]] = {}
        """The armed watches of each thread, oldest first (read without the lock
        by :meth:`deferred`)."""
        self._thread: threading.Thread | None = None

    def arm(
        self, abort: AbortState, wall_s: float | None, cpu_s: float | None
    ) -> _Watch:
        """Start watching the calling thread; return a token for :meth:`disarm`."""
        thread_id = threading.get_ident()
        cpu_clock = None
        cpu_start = 0.0
        if cpu_s is not None:
            try:
                cpu_clock = time.pthread_getcpuclockid(thread_id)
                cpu_start = time.clock_gettime(cpu_clock)
            except (AttributeError, OSError):
                cpu_clock = None
        deadline = time.monotonic() + wall_s if wall_s is not None else None
        watch = _Watch(thread_id, abort, deadline, cpu_clock, cpu_s, cpu_start)
        watch.deferral = _Deferral(self, watch)
        with self._lock:
            self._watches.append(watch)
            self._armed[thread_id] = [*self._armed.get(thread_id, ()), watch]
            self._ensure_thread()
            self._wake.notify()
        return watch

    def disarm(self, watch: _Watch) -> None:
        """Stop watching; clears an abort still pending in the calling thread."""
        with self._lock:
            watch.active = False
            if watch in self._watches:
                self._watches.remove(watch)
                left = [w for w in self._armed.pop(watch.thread_id, ()) if w is not watch]
                if left:
                    self._armed[watch.thread_id] = left
            injected, watch.injected = watch.injected, False
        if not injected:
            return
        if watch.thread_id == threading.get_ident():
            _drain(watch.thread_id)
        else:  # not the run's thread: only clearing is possible (the flag stays raised)
            _clear_async_exc(watch.thread_id, None)

    def deferred(self) -> contextlib.AbstractContextManager[None]:
        """While the calling thread is inside, no abort is injected into it (a
        no-op in a thread that no run armed); one already on its way is taken
        back, and the watchdog injects again once the thread leaves."""
        watches = self._armed.get(threading.get_ident())
        if not watches:
            return _NOT_ARMED
        return watches[0].deferral

    def current(self) -> _Watch | None:
        """The calling thread's watch (its oldest, when runs nest), or None when no
        run armed it: the token of :meth:`enter` and :meth:`release`."""
        # Only a thread arms its own watches, so a thread with none now gets
        # none while it holds aborts off: the check needs no lock (each list is
        # replaced, never changed in place). A watch disarmed meanwhile never injects.
        watches = self._armed.get(threading.get_ident())
        return watches[0] if watches else None

    def enter(self, watch: _Watch) -> None:
        """:meth:`deferred` as two calls, for the path of every call: from now on no
        abort is injected into ``watch``'s thread (the calling one) until
        :meth:`release`; one already on its way is taken back."""
        with self._lock:
            watch.deferred += 1
            pending, watch.injected = watch.injected, False
        if pending:  # delivered here (already on its way) or taken back
            _drain(watch.thread_id)

    def release(self, watch: _Watch) -> None:
        """Leave what :meth:`enter` entered: an abort held off meanwhile is injected
        at the watchdog's next check."""
        with self._lock:
            watch.deferred -= 1
            if watch.fired_at is not None:
                watch.fired_at = 0.0  # re-inject at the next check
                self._wake.notify()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="toolscript-watchdog",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        with self._lock:
            while True:
                if not self._watches:
                    self._wake.wait()
                    continue
                now = time.monotonic()
                for watch in list(self._watches):
                    self._check(watch, now)
                self._wake.wait(timeout=self._next_wait(now))

    def _next_wait(self, now: float) -> float:
        wait = _POLL_S * 5
        for watch in self._watches:
            if watch.fired_at is not None:
                wait = min(wait, _REPEAT_S)
            elif watch.cpu_clock is not None:
                wait = min(wait, _POLL_S)
            if watch.deadline is not None:
                wait = min(wait, max(watch.deadline - now, 0.001))
        return wait

    def _check(self, watch: _Watch, now: float) -> None:
        if watch.fired_at is not None:
            if now - watch.fired_at >= _REPEAT_S:
                self._inject(watch, now)
            return
        if watch.deadline is not None and now >= watch.deadline:
            watch.abort.set("timeout", "the script exceeded its wall-clock time limit")
            self._inject(watch, now)
            return
        if watch.cpu_clock is not None and watch.cpu_limit_s is not None:
            try:
                used = time.clock_gettime(watch.cpu_clock) - watch.cpu_start
            except OSError:
                return
            if used >= watch.cpu_limit_s:
                watch.abort.set("cpu_limit", "the script exceeded its CPU time limit")
                self._inject(watch, now)

    def _inject(self, watch: _Watch, now: float) -> None:
        if not watch.active or watch.deferred:
            return
        watch.fired_at = now
        watch.injected = True
        _set_async_exc(watch.thread_id, SandboxAbort)


class _Deferral:
    """The context manager of :meth:`Watchdog.deferred` for an armed thread."""

    __slots__ = ("_dog", "_watch")

    def __init__(self, dog: Watchdog, watch: _Watch) -> None:
        self._dog = dog
        self._watch = watch

    def __enter__(self) -> None:
        self._dog.enter(self._watch)

    def __exit__(self, *exc: object) -> None:
        self._dog.release(self._watch)


class _Drained(BaseException):
    """What :func:`_drain` delivers in place of a pending abort (never leaves it)."""


def _drain(thread_id: int) -> None:
    """Deliver whatever asynchronous exception is pending in the calling thread, as
    :class:`_Drained`, so that the interpreter lowers its pending flag (module docstring).
    Called only once the watchdog no longer injects into this thread."""
    try:  # it may land as soon as the call that sets it returns
        _set_async_exc(thread_id, _Drained)
        for _ in range(1_000_000):  # each backward jump checks for it: the first one
            pass
    except _Drained:
        return


WATCHDOG = Watchdog()
"""The process's watchdog."""


deferred = WATCHDOG.deferred
"""Hold the process watchdog's aborts off the calling thread (see the module
docstring): host bookkeeping of an inprocess run's tool calls runs inside."""
current = WATCHDOG.current
"""The calling thread's watch, or None (see :meth:`Watchdog.current`)."""
enter = WATCHDOG.enter
""":func:`deferred` entered for a watch from :func:`current`; leave with :func:`release`."""
release = WATCHDOG.release
"""Leave what :func:`enter` entered."""


def arm(abort: AbortState, wall_s: float | None, cpu_s: float | None) -> Any:
    """Arm the process watchdog for the calling thread."""
    return WATCHDOG.arm(abort, wall_s, cpu_s)


def disarm(token: Any) -> None:
    """Disarm a token from :func:`arm`, even if an abort arrives meanwhile."""
    while True:
        try:
            WATCHDOG.disarm(token)
            return
        except SandboxAbort:
            continue
