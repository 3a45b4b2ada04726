"""``ScriptSessions``: every session bound to its owner, capped, reaped — on a
real runtime, with a clock the test moves instead of waiting."""

from __future__ import annotations

import pytest
from toolscript.runtime.integrations.mcp.sessions import Lease, Refusal, ScriptSessions

from toolscript import Runtime
from toolscript.errors import ConfigurationError


class Clock:
    """A monotonic clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def runtime(backend_name):
    with Runtime([], backend=backend_name) as rt:
        yield rt


def _lease(sessions: ScriptSessions, session_id: str | None, owner: str | None) -> Lease:
    lease = sessions.acquire(session_id, owner)
    assert isinstance(lease, Lease), lease
    return lease


def _run(sessions: ScriptSessions, code: str, owner: str | None, session_id: str | None = None):
    lease = _lease(sessions, session_id, owner)
    try:
        return lease, lease.session.run(code)
    finally:
        sessions.release(lease)


def test_a_session_belongs_to_its_owner(runtime):
    sessions = ScriptSessions(runtime)
    try:
        lease, _ = _run(sessions, "secret = 42", "alice")
        assert lease.new and lease.key is not None
        again, result = _run(sessions, "secret", "alice", lease.key)
        assert result.value == 42 and not again.new
        for thief in ("mallory", None):
            refusal = sessions.acquire(lease.key, thief)
            assert isinstance(refusal, Refusal) and refusal.type == "unknown_session"
            assert not sessions.reset(lease.key, thief)
        never = sessions.acquire("never-issued", "mallory")
        assert isinstance(never, Refusal) and never.type == "unknown_session"
        _, own = _run(sessions, "secret", "mallory")  # mallory's own, new session
        assert own.error.details["exception"] == "NameError"
        assert sessions.reset(None, "alice")
        gone = sessions.acquire(lease.key, "alice")
        assert isinstance(gone, Refusal)
    finally:
        sessions.close_all()


def test_runs_without_an_owner_get_a_session_closed_after_the_run(runtime):
    sessions = ScriptSessions(runtime)
    lease, result = _run(sessions, "x = 1\nx", None)
    assert result.value == 1 and lease.key is None and lease.new
    assert lease.session.closed and len(sessions) == 0
    sessions.close_all()


def test_the_cap_closes_the_least_recently_used_idle_session(runtime):
    sessions = ScriptSessions(runtime, max_sessions=2)
    try:
        first, _ = _run(sessions, "x = 1", "a")
        busy = _lease(sessions, None, "b")  # running a script: never evicted
        _run(sessions, "x = 3", "c")
        assert first.session.closed and not busy.session.closed and len(sessions) == 2
        full = sessions.acquire(None, "d")  # c is idle: evicted for d
        assert isinstance(full, Lease)
        refused = sessions.acquire(None, "e")  # b and d are both running
        assert isinstance(refused, Refusal) and refused.type == "too_many_sessions"
        sessions.release(full)
        sessions.release(busy)
    finally:
        sessions.close_all()


def test_idle_sessions_are_reaped_and_running_ones_are_not(runtime):
    clock = Clock()
    sessions = ScriptSessions(runtime, idle_ttl_s=60, clock=clock)
    try:
        idle, _ = _run(sessions, "x = 1", "a")
        running = _lease(sessions, None, "b")
        clock.now += 61
        assert sessions.reap() == 1
        assert idle.session.closed and not running.session.closed
        sessions.release(running)
        clock.now += 30
        assert sessions.reap() == 0
        clock.now += 31
        assert sessions.reap() == 1 and len(sessions) == 0
    finally:
        sessions.close_all()


def test_an_owner_that_leaves_takes_its_sessions_along(runtime):
    sessions = ScriptSessions(runtime)
    mine, _ = _run(sessions, "x = 1", "http:abc")
    other, _ = _run(sessions, "x = 1", "http:def")
    assert sessions.close_owner("http:abc") == 1
    assert mine.session.closed and not other.session.closed
    sessions.close_all()
    assert other.session.closed


def test_bounds_are_checked():
    with Runtime([], backend="inprocess") as rt:
        with pytest.raises(ConfigurationError):
            ScriptSessions(rt, max_sessions=0)
        with pytest.raises(ConfigurationError):
            ScriptSessions(rt, idle_ttl_s=0)
