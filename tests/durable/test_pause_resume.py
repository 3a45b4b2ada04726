"""Decision.defer pauses a run; Runtime.resume continues it without repeating a call."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest
from backend_marks import backend_options, process_backends
from conftest import KEY, Counter, defer_sends
from toolscript.runtime.backends.hashseed import MAX_SEED, host_hash_seed

from toolscript import AuditLog, Decision, PendingCall, RunResult, Runtime, tool
from toolscript.errors import ContinuationError

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
    # a generator the script seeds from the OS is not recorded (random's own functions are)
    script = "import random\nv = read(random.Random().randint(0, 10**12))\nsend('x')\nv"
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


SET_SCRIPT = ("for s in {'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta'}:\n"
              "    note(s)\nsend('z')\n'done'")


def _seed_of(continuation: str) -> int | None:
    """The hash seed a continuation carries (its payload is readable, only not forgeable)."""
    payload = continuation.split(".")[1]
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    seed: int | None = data["hash_seed"]
    return seed


def test_a_resume_iterates_a_set_of_strings_as_the_paused_run_did(
        durable_runtime, backend_name) -> None:
    """Every runtime built here is a new backend with a seed of its own, as a new host
    process has; the resume runs its script with the paused run's seed, so a loop over
    a set of strings calls in the same order and is answered from the journal."""
    counter = Counter()
    paused = _pause(durable_runtime, counter, SET_SCRIPT)
    assert paused.status == "paused"
    later = Counter()
    runtime = durable_runtime(later.tools())
    if backend_name != "inprocess":
        assert _seed_of(paused.continuation) not in (None, runtime.backend.hash_seed)
    result = runtime.resume(paused.continuation, {paused.pending[0].id: Decision.allow()})
    assert result.ok, result.error
    assert later.calls == [("send", "z")]  # the 8 notes came from the journal
    assert [c.replayed for c in result.tool_calls] == [True] * 8 + [False]


def test_a_run_paused_twice_keeps_its_seed_through_both_resumes(durable_runtime) -> None:
    counter = Counter()
    script = SET_SCRIPT.replace("'done'", "send('y')\n'done'")
    first = _pause(durable_runtime, counter, script)
    seed = _seed_of(first.continuation)
    second = durable_runtime(counter.tools()).resume(
        first.continuation, {first.pending[0].id: Decision.allow()})
    assert second.status == "paused", second.error
    assert _seed_of(second.continuation) == seed
    done = durable_runtime(counter.tools()).resume(
        second.continuation, {second.pending[0].id: Decision.allow()})
    assert done.ok, done.error
    assert counter.count("note") == 8 and counter.count("send") == 2


@process_backends
def test_a_pinned_seed_resumes_in_the_warm_sandboxes(backend_name, journal_url) -> None:
    """With the same ``hash_seed`` in every host process the resume needs no sandbox
    of its own: the sandbox it gets is the backend's kind (pooled or forked)."""
    options = {**backend_options(backend_name, 1), "hash_seed": 4242}
    counter = Counter()
    made = [Runtime(counter.tools(), backend=backend_name, backend_options=options,
                    approve=defer_sends, journal=journal_url, continuation_key=KEY)
            for _ in range(2)]
    try:
        paused = made[0].run(SET_SCRIPT)
        assert _seed_of(paused.continuation) == 4242 == made[1].backend.hash_seed
        result = made[1].resume(paused.continuation, {paused.pending[0].id: Decision.allow()})
        assert result.ok, result.error
        assert counter.count("note") == 8
    finally:
        for runtime in made:
            runtime.close()


def test_the_paused_run_records_its_sandbox_seed(durable_runtime, backend_name) -> None:
    paused = _pause(durable_runtime, Counter(), SET_SCRIPT)
    seed = _seed_of(paused.continuation)
    if backend_name == "inprocess":
        assert seed == host_hash_seed()  # None unless the host's PYTHONHASHSEED pins it
    else:
        assert isinstance(seed, int) and 0 < seed <= MAX_SEED


def test_variables_bound_before_a_resume_survive_in_a_session_made_for_it(
        durable_runtime, backend_name) -> None:
    """A batch binds its item, an application its inputs, before resuming: the session
    from ``runtime.session(resuming=...)`` starts its sandbox with the paused run's
    seed (and session id), so the resume does not replace it and lose them."""
    counter = Counter()
    script = "for s in {'alpha', 'beta', 'gamma', 'delta'}:\n    note(s)\nsend(item)\nitem"
    with durable_runtime(counter.tools()) as first, first.session() as bound:
        assert bound.run("item = 'x-1'").ok
        paused = bound.run(script)
    assert paused.status == "paused", paused.error
    later = Counter()
    runtime = durable_runtime(later.tools())
    with runtime.session(resuming=paused.continuation) as session:
        assert session.id == bound.id
        assert session.run("item = 'x-1'").ok
        result = runtime.resume(paused.continuation, {paused.pending[0].id: Decision.allow()},
                                session=session)
        assert result.ok, result.error
        assert result.value == "x-1" and not result.session_restarted
        assert later.calls == [("send", "x-1")]
        assert session.run("item").value == "x-1"  # the same sandbox goes on


def test_a_session_for_a_forged_continuation_is_refused(durable_runtime) -> None:
    paused = _pause(durable_runtime, Counter())
    head, payload, mac = paused.continuation.split(".")
    forged = ".".join((head, payload, mac[::-1]))
    with durable_runtime(Counter().tools()) as runtime, pytest.raises(ContinuationError):
        runtime.session(resuming=forged)


def test_a_hook_set_while_a_run_goes_on_cannot_pause_it() -> None:
    """A run that starts with no approval hook and no journal configured keeps no
    journal: nothing can defer its calls. A deferring hook set while it goes on
    cannot pause it (a journal begun halfway could not replay the calls made
    before it), so the deferred call fails ``paused`` saying why, nothing runs,
    and the run ends as the script decides, not paused."""
    sent: list[str] = []
    holder: dict[str, Runtime] = {}

    @tool(read_only=True)
    def arm() -> str:
        """Set the deferring hook (what another thread of the host might do)."""
        holder["runtime"].approve = defer_sends
        return "armed"

    @tool(requires_approval=True)
    def send(to: str) -> str:
        """Send to someone."""
        sent.append(to)
        return f"sent {to}"

    script = "arm()\ntry:\n    r = send('bob')\nexcept Exception as exc:\n    r = str(exc)\nr"
    with Runtime([arm, send], continuation_key=KEY) as runtime:
        holder["runtime"] = runtime
        result = runtime.run(script)
        assert result.status == "ok", result.error
        assert "cannot pause" in result.value and "no approval hook" in result.value
        assert sent == [] and not result.pending
        again = runtime.run("send('bob')")  # set before this run starts: it pauses
    assert again.status == "paused", again.error
    assert [p.tool for p in again.pending] == ["send"] and sent == []
