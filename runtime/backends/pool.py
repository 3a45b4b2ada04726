"""A warm pool of started, idle sandboxes for any process backend.

Starting a sandbox (a process, and even more a container) is the slow part of
a new session. :class:`WarmPool` keeps ``size`` sandboxes that have already
said ``ready`` and refills itself in a background thread, so
:meth:`WarmPool.acquire` usually hands one out in microseconds. A sandbox
leaves the pool for good: the caller owns it and must close it. Sandboxes
that die while idle are noticed on acquire (``is_alive()``) and replaced.

With ``max_size`` above ``size`` the pool sizes itself from observed demand:
by Little's law, the sandboxes taken while one is being started are
``rate x start time``; the pool aims at twice that (bursts), between
``size`` and ``max_size``, measuring the rate over the last ``window_s``
seconds and the start time as a moving average. It grows when acquisitions
come faster than single starts, and when demand falls it kills the idle
sandboxes above the new target. All of this happens in the refill thread,
never on the caller's path.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["PoolStats", "Poolable", "WarmPool"]

log = logging.getLogger(__name__)


_exiting = False


def mark_exiting() -> None:
    """The interpreter is exiting: sandboxes being killed now are not failures
    worth a warning (called first by the backends' exit handlers)."""
    global _exiting
    _exiting = True


class Poolable(Protocol):
    """What the pool needs from a started sandbox."""

    def is_alive(self) -> bool: ...

    def kill(self) -> None: ...


H = TypeVar("H", bound=Poolable)


class PoolStats:
    """Counters of a pool's life, for tests and benchmarks."""

    def __init__(self) -> None:
        self.started = 0
        self.start_failures = 0
        self.hits = 0
        self.misses = 0
        self.discarded_dead = 0
        self.trimmed = 0
        self.last_error: BaseException | None = None

    def __repr__(self) -> str:
        return (
            f"PoolStats(started={self.started}, hits={self.hits}, misses={self.misses}, "
            f"discarded_dead={self.discarded_dead}, trimmed={self.trimmed}, "
            f"start_failures={self.start_failures})"
        )


class WarmPool(Generic[H]):
    """Keep ``size`` started sandboxes ready; refill in a daemon thread.

    ``start`` makes one started sandbox (it may block for a while and may
    raise; failures are retried with a growing back-off, and the last error is
    kept in :attr:`stats`). The pool starts filling on construction.
    ``max_size`` (above ``size``) turns on sizing from demand (see the module
    docstring); :attr:`size` is then the current target. ``start_s`` fixes the
    start time that sizing uses (by default it is measured: a moving average
    of the starts, 0.1 s before the first). ``cancel``, if given, is called
    once by :meth:`shutdown` after refilling stopped: it ends a start under
    way (a sandbox that hangs in its first run), so closing does not wait for
    it. ``clock`` is for tests.
    """

    def __init__(self, start: Callable[[], H], size: int, *, name: str = "pool",
                 max_size: int | None = None, window_s: float = 10.0,
                 start_s: float | None = None,
                 cancel: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if size < 1:
            raise ValueError("a warm pool needs size >= 1")
        self._start = start
        self._cancel = cancel
        self.size = size
        self.min_size = size
        self.max_size = max(size, max_size or size)
        self.window_s = window_s
        self._clock = clock
        self._taken: deque[float] = deque()
        self._start_s: float | None = start_s
        self._fixed_start_s = start_s is not None
        self.name = name
        self.stats = PoolStats()
        self._idle: deque[H] = deque()
        self._starting = 0
        self._waiters = 0
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(
            target=self._fill, name=f"toolscript-pool-{name}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------ public
    def acquire(self, wait_s: float = 0.0) -> H | None:
        """Take a live idle sandbox out of the pool, or ``None`` if none is ready.

        With ``wait_s``, a caller that finds the pool empty while a start is
        already under way waits up to that long for it: the pool's start began
        earlier, so it usually beats a cold start (and no process is wasted).
        On ``None`` the caller starts one itself; the pool keeps refilling.
        """
        dead: list[H] = []
        found: H | None = None
        deadline = time.monotonic() + wait_s
        with self._cond:
            while True:
                while self._idle:
                    handle = self._idle.popleft()
                    if handle.is_alive():
                        found = handle
                        break
                    dead.append(handle)
                # Wait only for a start that no other waiter has claimed;
                # otherwise a burst of callers would queue behind one refill
                # thread instead of starting sandboxes side by side.
                if found is not None or self._closed or self._waiters >= self._starting:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._waiters += 1
                try:
                    self._cond.wait(remaining)
                finally:
                    self._waiters -= 1
            if found is not None:
                self.stats.hits += 1
            else:
                self.stats.misses += 1
            if self.adaptive:
                self._taken.append(self._clock())
            self.stats.discarded_dead += len(dead)
            self._cond.notify_all()
        for handle in dead:
            _kill_quietly(handle)
        return found

    def wait_ready(self, timeout: float, count: int | None = None) -> bool:
        """Block until ``count`` (default: ``size``) sandboxes are idle, or timeout."""
        want = self.size if count is None else min(count, self.max_size)
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._idle) < want and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return len(self._idle) >= want

    @property
    def adaptive(self) -> bool:
        """True when the pool sizes itself from demand (``max_size`` > ``size``)."""
        return self.max_size > self.min_size

    def target(self) -> int:
        """The size demand calls for now (the fixed size unless :attr:`adaptive`)."""
        if not self.adaptive:
            return self.min_size
        horizon = self._clock() - self.window_s
        while self._taken and self._taken[0] < horizon:
            self._taken.popleft()
        rate = len(self._taken) / self.window_s
        start_s = self._start_s if self._start_s is not None else 0.1
        need = math.ceil(2 * rate * start_s)
        return max(self.min_size, min(self.max_size, need))

    @property
    def idle(self) -> int:
        """Number of sandboxes waiting in the pool (alive or not yet checked)."""
        return len(self._idle)

    def idle_handles(self) -> list[H]:
        """The sandboxes waiting in the pool now, oldest first (a snapshot, for
        diagnostics: taking one from the list does not take it from the pool)."""
        with self._cond:
            return list(self._idle)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Stop refilling and kill every idle sandbox (idempotent)."""
        with self._cond:
            self._closed = True
            handles = list(self._idle)
            self._idle.clear()
            self._cond.notify_all()
        for handle in handles:
            _kill_quietly(handle)
        if self._cancel is not None:
            try:
                self._cancel()
            except Exception:  # pragma: no cover - best effort cleanup
                log.debug("cancelling the pool's start failed", exc_info=True)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # ---------------------------------------------------------- refilling
    def _record_start_time(self, seconds: float) -> None:
        """Fold one start's duration into the moving average that sizing uses."""
        if self._fixed_start_s:
            return
        previous = self._start_s
        self._start_s = seconds if previous is None else 0.8 * previous + 0.2 * seconds

    def _fill(self) -> None:
        backoff = 0.0
        while True:
            surplus: list[H] = []
            with self._cond:
                while not self._closed:
                    if self.adaptive:
                        self.size = self.target()
                        while len(self._idle) > self.size:
                            surplus.append(self._idle.pop())
                    if surplus or len(self._idle) + self._starting < self.size:
                        break
                    # Adaptive: wake now and then to let a fallen demand shrink the pool.
                    self._cond.wait(self.window_s / 4 if self.adaptive else None)
                if self._closed:
                    return
                if not surplus:
                    self._starting += 1
            if surplus:
                for extra in surplus:
                    _kill_quietly(extra)
                with self._cond:
                    self.stats.trimmed += len(surplus)
                    self._cond.notify_all()
                continue
            handle: H | None = None
            began = self._clock()
            try:
                handle = self._start()
            except BaseException as exc:  # keep the pool alive whatever a start does
                self.stats.start_failures += 1
                self.stats.last_error = exc
                if self._closed or _exiting:
                    return
                log.warning("warm pool %s: starting a sandbox failed: %s", self.name, exc)
                backoff = min(max(backoff * 2, 0.25), 10.0)
            else:
                backoff = 0.0
                self._record_start_time(self._clock() - began)
            with self._cond:
                self._starting -= 1
                if handle is not None:
                    if self._closed:
                        _kill_quietly(handle)
                        return
                    self.stats.started += 1
                    self._idle.append(handle)
                # A new sandbox, or a failed start: its waiters stop waiting for it (the
                # caller then starts its own and reports the real error at once).
                self._cond.notify_all()
                if backoff:
                    self._cond.wait(backoff)


def _kill_quietly(handle: Poolable) -> None:
    try:
        handle.kill()
    except Exception:  # pragma: no cover - best effort cleanup
        log.debug("killing a pooled sandbox failed", exc_info=True)
