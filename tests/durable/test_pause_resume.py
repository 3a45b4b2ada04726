"""Decision.defer pauses a run; Runtime.resume continues it without repeating a call."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import Counter, defer_sends

from toolscript import AuditLog, Decision, PendingCall, RunResult

SCRIPT = """
a = read(1)
n = note("before")
r = send("bob")
b = read(3)
[a, n, r, b]
"""


def _pause(make, counter: Counter, script: str = SCRIPT) -> RunResult:
    with make(counter.tools()) as runtime:
        return runtime.run(script)


def test_defer_pauses_at_the_call(durable_runtime) -> None:
    counter = Counter()
    result = _pause(durable_runtime, counter)
    assert result.status == "paused" and not result.ok
    assert result.error is not None and result.error.type == "paused"
    assert result.continuation and result.continuation.startswith("tsc1.")
    [pending] = result.pending
    assert isinstance(pending, PendingCall)
    assert (pending.tool, pending.arguments, pending.seq) == ("send", {"to": "bob"}, 3)
    assert pending.id == f"{result.run_id}:3" and pending.caller == "script"
    assert "approve sending to bob" in pending.reason
    assert counter.calls == [("read", 1), ("note", "before")]  # stopped at the call
    assert result.to_dict()["status"] == "paused"
    assert result.to_dict()["pending"][0]["tool"] == "send"


def test_resume_in_a_new_runtime_replays_without_executing(durable_runtime) -> None:
    counter = Counter()
    paused = _pause(durable_runtime, counter)
    later = Counter()  # a new process: the tools count from zero
    runtime = durable_runtime(later.tools())
    result = runtime.resume(paused.continuation, {paused.pending[0].id: Decision.allow("ok")})
    assert result.status == "ok", result.error
    assert result.value == [2, "noted before", "sent bob", 6]
    assert later.calls == [("send", "bob"), ("read", 3)]  # journaled calls never ran again
    assert [c.replayed for c in result.tool_calls] == [True, True, False, False]
    assert result.run_id == paused.run_id


def test_denied_on_resume_reaches_the_script(durable_runtime) -> None:
    counter = Counter()
    script = """
try:
    r = send("eve")
except ToolError as exc:
    r = "refused: " + str(exc)
r
"""
    paused = _pause(durable_runtime, counter, script)
    runtime = durable_runtime(counter.tools())
    result = runtime.resume(paused.continuation, {paused.pending[0].id: Decision.deny("no")})
    assert result.ok, result.error
    assert result.value.startswith("refused:") and "no" in result.value
    assert counter.count("send") == 0


def test_a_run_pauses_again_and_resumes_twice(durable_runtime) -> None:
    counter = Counter()
    script = 'x = send("a")\ny = read(2)\nz = send("b")\n[x, y, z]'
    first = _pause(durable_runtime, counter, script)
    second = durable_runtime(counter.tools()).resume(
        first.continuation, {first.pending[0].id: Decision.allow()})
    assert second.status == "paused"
    assert second.pending[0].arguments == {"to": "b"} and second.pending[0].seq == 3
    assert second.continuation != first.continuation
    third = durable_runtime(counter.tools()).resume(
        second.continuation, {second.pending[0].id: Decision.allow()})
    assert third.ok, third.error
    assert third.value == ["sent a", 4, "sent b"]
    assert counter.calls == [("send", "a"), ("read", 2), ("send", "b")]


def test_parallel_batch_defers_one_call(durable_runtime) -> None:
    counter = Counter()
    script = 'r = parallel([(read, {"x": 1}), (send, {"to": "c"}), (read, {"x": 2})])\nr'
    paused = _pause(durable_runtime, counter, script)
    assert paused.status == "paused"
    assert [p.tool for p in paused.pending] == ["send"]
    result = durable_runtime(counter.tools()).resume(
        paused.continuation, {paused.pending[0].id: Decision.allow()})
    assert result.ok, result.error
    assert counter.count("send", "c") == 1


def test_divergent_script_ends_as_replay_diverged(durable_runtime) -> None:
    counter = Counter()
    script = "import random\nv = read(random.randint(0, 10**12))\nsend('x')\nv"
    paused = _pause(durable_runtime, counter, script)
    result = durable_runtime(counter.tools()).resume(
        paused.continuation, {paused.pending[0].id: Decision.allow()})
    assert result.status == "error"
    assert result.error is not None and result.error.type == "replay_diverged"
    assert "call 1" in result.error.message
    assert counter.count("send") == 0  # nothing past the divergence ran


def test_journal_holds_every_call_before_the_pause(durable_runtime, journal_url) -> None:
    counter = Counter()
    paused = _pause(durable_runtime, counter)
    path = journal_url[len("sqlite://"):]
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seq, tool, status, result, idempotency_key FROM entries "
                          "WHERE run_id=? ORDER BY seq", (paused.run_id,)).fetchall()
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    assert [(r[0], r[1], r[2]) for r in rows] == [(1, "read", "ok"), (2, "note", "ok"),
                                                  (3, "send", "deferred")]
    assert json.loads(rows[0][3]) == 2
    assert rows[2][4] == f"{paused.run_id}:3"


def test_store_lists_pause_and_decisions(durable_runtime) -> None:
    counter = Counter()
    paused = _pause(durable_runtime, counter)
    runtime = durable_runtime(counter.tools())
    store = runtime.durability.store
    [listed] = store.paused()
    assert listed.run_id == paused.run_id and listed.continuation == paused.continuation
    store.decide(paused.pending[0].id, Decision.allow("from the inbox"), by="alice")
    decisions = store.decisions(paused.run_id)
    assert decisions[paused.pending[0].id].approved
    result = runtime.resume(paused.continuation, decisions)
    assert result.ok, result.error
    assert store.paused() == []


def test_audit_records_pause_decision_resume_and_replays(durable_runtime, tmp_path: Path) -> None:
    counter = Counter()
    with durable_runtime(counter.tools(), audit=AuditLog(tmp_path / "a.log", key=None)) as rt:
        paused = rt.run(SCRIPT)
    with durable_runtime(counter.tools(), audit=AuditLog(tmp_path / "a.log", key=None)) as rt:
        rt.resume(paused.continuation, {paused.pending[0].id: Decision.allow("fine")})
    lines = [json.loads(line) for line in (tmp_path / "a.log").read_text().splitlines()]
    events = [line.get("event") for line in lines if line.get("event")]
    assert events == ["durable_pause", "durable_decision", "durable_resume",
                      "durable_replayed", "durable_replayed"]
    replayed_calls = [line for line in lines if line.get("tool") and line.get("replayed")]
    assert len(replayed_calls) == 2


def test_without_a_configured_journal_the_pause_writes_the_default(
        backend_name, tmp_path: Path, monkeypatch) -> None:
    from toolscript import Runtime

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.delenv("TOOLSCRIPT_JOURNAL", raising=False)
    monkeypatch.delenv("TOOLSCRIPT_CONTINUATION_KEY", raising=False)
    counter = Counter()
    with Runtime(counter.tools(), backend=backend_name, approve=defer_sends) as runtime:
        paused = runtime.run(SCRIPT)
    assert paused.status == "paused"
    assert (tmp_path / "toolscript" / "journal.sqlite3").exists()
    assert (tmp_path / "toolscript" / "continuation.key").stat().st_mode & 0o777 == 0o600
    with Runtime(counter.tools(), backend=backend_name, approve=defer_sends) as runtime:
        result = runtime.resume(paused.continuation, {paused.pending[0].id: Decision.allow()})
    assert result.ok, result.error
    assert counter.count("read", 1) == 1 and counter.count("note") == 1


def test_decision_defer_is_falsy_and_marked() -> None:
    decision = Decision.defer("later")
    assert not decision and decision.deferred and not decision.approved
    assert Decision.allow().deferred is False


def test_set_iteration_order_on_resume_is_never_replayed_silently(
        durable_runtime, backend_name) -> None:
    """The string hash seed is not pinned for process sandboxes (docs/design.md, durable
    runs): a resume in another host process may iterate a set in another order. It
    must then end as replay_diverged, never answer a call with another call's result."""
    counter = Counter()
    script = ("for s in {'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta'}:\n"
              "    note(s)\nsend('z')\n'done'")
    paused = _pause(durable_runtime, counter, script)
    assert paused.status == "paused"
    result = durable_runtime(counter.tools()).resume(
        paused.continuation, {paused.pending[0].id: Decision.allow()})
    if backend_name == "inprocess":  # the host process's seed: the same order
        assert result.ok, result.error
    assert result.status == "ok" or result.error.type == "replay_diverged", result.error
    notes = [text for name, text in counter.calls if name == "note"]
    assert sorted(notes) == sorted(set(notes)) and len(notes) == 8  # none ran twice
    assert counter.count("send") == (1 if result.ok else 0)
