"""The warm pool sizes itself from observed demand, in its refill thread.

The pool is generic over what it keeps; here it keeps small real objects
(their "start" is instant) and reads time from a clock the test moves, so
demand is exact and nothing depends on how fast the machine is. The pool
of the subprocess backend is checked with real sandboxes at the end.
"""

from __future__ import annotations

from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.backends.pool import WarmPool
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.runtime.limits import Limits
from waiting import wait_until


class Box:
    """A poolable object that records whether it was killed."""

    def __init__(self) -> None:
        self.alive = True

    def is_alive(self) -> bool:
        return self.alive

    def kill(self) -> None:
        self.alive = False


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _pool(clock: Clock, started: list[Box], *, size: int = 1, max_size: int = 6,
          window_s: float = 10.0) -> WarmPool[Box]:
    """A pool that sizes itself for starts of 0.5 s (real starts here are instant)."""
    def start() -> Box:
        box = Box()
        started.append(box)
        return box

    return WarmPool(start, size, name="test", max_size=max_size, window_s=window_s,
                    start_s=0.5, clock=clock)


def test_a_fixed_pool_stays_fixed() -> None:
    pool = WarmPool(Box, 2, name="fixed")
    try:
        assert not pool.adaptive and pool.target() == 2
        assert pool.wait_ready(30.0)
        for _ in range(20):
            pool.acquire()
        assert pool.target() == 2
    finally:
        pool.shutdown()


def test_the_pool_grows_with_demand_and_stays_within_its_bounds() -> None:
    clock = Clock()
    started: list[Box] = []
    pool = _pool(clock, started)
    try:
        assert pool.wait_ready(30.0) and pool.target() == 1
        for _ in range(10):  # 10 sessions in the window: 1/s x 0.5 s start x 2 = 1
            pool.acquire(wait_s=5.0)
        assert pool.target() == 1
        for _ in range(30):  # 40 in the window: 4/s x 0.5 s x 2 = 4
            pool.acquire(wait_s=5.0)
        assert pool.target() == 4
        assert pool.wait_ready(30.0, count=4)
        assert pool.idle == 4
        for _ in range(200):
            pool.acquire(wait_s=5.0)
        assert pool.target() == 6  # max_size
    finally:
        pool.shutdown()


def test_when_demand_falls_the_surplus_is_killed_off_the_callers_path() -> None:
    clock = Clock()
    started: list[Box] = []
    # A short window: the refill thread wakes every window_s / 4 real seconds to shrink.
    pool = _pool(clock, started, window_s=2.0)
    try:
        for _ in range(8):  # 4/s x 0.5 s start x 2 = 4
            pool.acquire(wait_s=5.0)
        assert pool.target() == 4
        assert pool.wait_ready(30.0, count=4)
        clock.now += 60.0  # a quiet minute: no acquisition in the window
        assert pool.target() == 1
        wait_until(lambda: pool.stats.trimmed == 3, what="the surplus trimmed")
        assert pool.idle == 1
        # Only the pool kills: the boxes it handed out belong to the caller and stay alive.
        assert sum(not box.alive for box in started) == 3
    finally:
        pool.shutdown()


def test_the_subprocess_pool_sizes_itself_with_the_zygote() -> None:
    spec = SandboxSpec(limits=Limits())
    backend = SubprocessBackend(pool_size=1)
    try:
        pool = backend.warm(spec)
        assert pool is not None and pool.adaptive
        assert pool.max_size == 4
    finally:
        backend.shutdown()
    direct = SubprocessBackend(pool_size=1, zygote=False)
    try:
        pool = direct.warm(spec)
        assert pool is not None and not pool.adaptive
    finally:
        direct.shutdown()
    empty = SubprocessBackend(pool_size=0)
    try:
        assert empty.warm(spec) is None
    finally:
        empty.shutdown()


def test_a_start_that_fails_wakes_the_caller_waiting_for_it() -> None:
    """A caller waiting on the pool's start learns of its failure at once and starts its
    own sandbox (which reports the real error), instead of waiting out ``wait_s``."""
    import threading

    release = threading.Event()
    attempts: list[int] = []

    def start() -> Box:
        attempts.append(1)
        release.wait()
        raise RuntimeError("the sandbox failed its first run")

    pool: WarmPool[Box] = WarmPool(start, 1, name="failing")
    got: list[Box | None] = []
    try:
        wait_until(lambda: attempts)
        caller = threading.Thread(target=lambda: got.append(pool.acquire(wait_s=3600.0)))
        caller.start()
        wait_until(lambda: pool._waiters == 1)
        release.set()
        caller.join(60.0)
        assert not caller.is_alive(), "the caller still waits for a start that failed"
        assert got == [None]
        assert pool.stats.misses == 1 and pool.stats.start_failures >= 1
    finally:
        release.set()
        pool.shutdown()
