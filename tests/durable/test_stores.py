"""Both journal stores keep the JournalStore contract; PostgreSQL lets another
"host" (another runtime and store connection) resume a run."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import KEY, Counter, defer_sends
from pgcluster import cluster, server_bin
from toolscript.runtime.durable import JournalEntry, PausedRun, PendingCall, open_store

from toolscript import Decision, Runtime


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if server_bin() is None:
        pytest.skip("Debian's postgresql is not installed (scripts/install-test-packages.sh)")
    pytest.importorskip("psycopg")
    with cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/j.sqlite3"
    return str(request.getfixturevalue("postgres_url"))


def test_store_contract(store_url: str) -> None:
    store = open_store(store_url)
    run = f"run-{time.time_ns()}"
    now = time.time()
    try:
        store.record(JournalEntry(run, 2, "b", "h2", "ok", {"x": [1]}, f"{run}:2", now))
        store.record(JournalEntry(run, 1, "a", "h1", "started", None, f"{run}:1", now))
        store.record(JournalEntry(run, 1, "a", "h1", "error", {"type": "t"}, f"{run}:1", now))
        assert [(e.seq, e.status, e.result) for e in store.entries(run)] == [
            (1, "error", {"type": "t"}), (2, "ok", {"x": [1]})]
        pending = PendingCall(f"{run}:3", "send", {"to": "a"}, "script", "why", run, 3)
        store.save_pause(PausedRun(run, "s1", (pending,), "tsc1.a.b", now, now + 99))
        assert [p.pending for p in store.paused(run_id=run)] == [(pending,)]
        store.decide(pending.id, Decision.deny("no"), by="alice")
        assert store.decisions(run) == {pending.id: Decision.deny("no")}
        assert store.claim_resume("d1", run, "otherhost:1", 60) == "claimed"
        assert store.claim_resume("d1", run, "otherhost:2", 60) == "busy"
        store.mark_resumed(run, "d1")
        assert store.claim_resume("d1", run, "otherhost:2", 60) == "resumed"
        assert store.paused(run_id=run)  # another continuation's digest: still paused
        from toolscript.runtime.durable.store import continuation_digest_of

        store.mark_resumed(run, continuation_digest_of("tsc1.a.b"))
        assert store.paused(run_id=run) == []
        assert store.prune(3600) == 0  # too recent
        assert store.prune(0) >= 1
        assert store.entries(run) == []
    finally:
        store.close()


def test_claim_of_a_dead_holder_is_taken_over(store_url: str) -> None:
    import socket

    store = open_store(store_url)
    try:
        dead = f"{socket.gethostname()}:{2**22 + 12345}"  # no such pid
        assert store.claim_resume("d2", "r", dead, 3600) == "claimed"
        assert store.claim_resume("d2", "r", "me:1", 3600) == "claimed"
    finally:
        store.close()


def test_resume_through_postgres_from_another_runtime(postgres_url: str) -> None:
    counter = Counter()
    script = 'a = read(1)\nb = note("x")\nsend("pg")\n[a, b]'
    with Runtime(counter.tools(), backend="inprocess", approve=defer_sends,
                 journal=postgres_url, continuation_key=KEY) as one:
        paused = one.run(script)
    assert paused.status == "paused"
    with Runtime(counter.tools(), backend="inprocess", approve=defer_sends,
                 journal=postgres_url, continuation_key=KEY) as other:
        [listed] = other.durability.store.paused(run_id=paused.run_id)
        other.durability.store.decide(listed.pending[0].id, Decision.allow(), by="bob")
        result = other.resume(listed.continuation,
                              other.durability.store.decisions(paused.run_id))
    assert result.ok, result.error
    assert result.value == [2, "noted x"]
    assert counter.calls == [("read", 1), ("note", "x"), ("send", "pg")]
