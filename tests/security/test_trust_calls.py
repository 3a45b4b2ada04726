"""What runs is what was decided: Ctrl-C, plan approval and the audit of a batch.

* **Ctrl-C stops every call.** Once ``KeyboardInterrupt`` reaches the caller
  of a run (or of direct calls), no further tool call of that run starts, on
  every backend, whatever the shape of the calls: a ``parallel()`` batch of
  writes, writes mixed with reads, a loop of single calls, direct
  ``call_tools`` batches, async tools, ``run_async`` cancelled by its loop,
  an agent turn of classic tool calls or of one script, sync or async.
  The interrupt is a real SIGINT to the main thread, sent by the call whose
  start completes the calls the run starts at once (every read of the batch
  and its first write); from arming until the caller has caught
  ``KeyboardInterrupt``, every call holds instead of returning, so no call is
  between its start check and its first line when the test takes its count:
  a later start is the runtime's, never the scheduler's. The writes count
  their own starts.
* **A plan is spent only by the session and user it was approved for.**
  Another session running the identical script (for another injected user)
  goes to the fallback and uses up nothing; a call injecting another value
  than the plan's is outside it.
* **An expired two-phase plan is never committed**, however long the approval
  of its commit took.
* **Each call of a batch is audited as it ends.** A real child host process
  runs a ``parallel()`` batch of writes (each appends to a file, then
  returns) under ``AuditLog(sync="fsync")`` and is SIGKILLed mid-batch:
  every write that acted has its start line, every write that returned its
  outcome line, and the chain verifies.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backend_marks import host_backends
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.approval.plan import PlanApproval, analyze
from toolscript.runtime.audit.log import verify
from toolscript.tools import Injected
from waiting import wait_until

from toolscript import Decision, Limits, Runtime, tool, two_phase

WRITE_S = 0.3
"""How long each write takes when no interrupt is armed."""
HOLD_S = 30.0
"""Longest an armed call holds for the caller to catch its ``KeyboardInterrupt``."""

Ready = Callable[[list[int]], bool]
"""Given the calls started so far (in order): is it time for the Ctrl-C?"""


def first_call(started: list[int]) -> bool:
    """Ctrl-C as soon as one call runs (batches whose calls run one at a time)."""
    return len(started) >= 1


class Writes:
    """Starts and ends of the test's write tools, in order (thread-safe appends).

    :meth:`interrupt_once` arms a real Ctrl-C: the call whose start makes
    ``ready(started)`` true sends SIGINT to the main thread, and every call holds
    (instead of sleeping :data:`WRITE_S`) until :meth:`caught` says the caller
    has the ``KeyboardInterrupt``. So a call that passed the runtime's start check
    before the stop has its start counted before the caller's count is taken,
    however the threads are scheduled: the calls running when the caller gets the
    interrupt are exactly ``ready``'s, and any later start is one the runtime let
    through after the stop.
    """

    def __init__(self) -> None:
        self.started: list[int] = []
        self.finished: list[int] = []
        self._lock = threading.Lock()
        self._ready: Ready | None = None
        self._fired = False
        self._caught = threading.Event()
        self._main = threading.main_thread().ident

    def interrupt_once(self, ready: Ready = first_call) -> None:
        """Arm the Ctrl-C (see the class docstring); call it from the main thread."""
        assert threading.current_thread() is threading.main_thread()
        self._ready = ready

    def caught(self) -> list[int]:
        """The caller has its ``KeyboardInterrupt``: the calls started by then (the
        count is taken before any held call returns), and the held calls go on."""
        with self._lock:
            seen = list(self.started)
        self._caught.set()
        return seen

    def _start(self, n: int) -> None:
        with self._lock:
            self.started.append(n)
            fire = (self._ready is not None and not self._fired
                    and self._ready(list(self.started)))
            self._fired = self._fired or fire
        if fire:
            assert self._main is not None
            signal.pthread_kill(self._main, signal.SIGINT)  # as Ctrl-C does

    def _hold(self) -> None:
        if self._ready is None:
            time.sleep(WRITE_S)
        else:
            self._caught.wait(HOLD_S)

    async def _hold_async(self) -> None:
        if self._ready is None:
            await asyncio.sleep(WRITE_S)
        else:
            await asyncio.to_thread(self._caught.wait, HOLD_S)

    def tools(self) -> list[Any]:
        """A write tool, an async write tool and a read tool that count their runs."""

        @tool
        def write(n: int) -> int:
            """Write item n."""
            self._start(n)
            self._hold()
            self.finished.append(n)
            return n

        @tool
        async def write_async(n: int) -> int:
            """Write item n (async)."""
            self._start(n)
            await self._hold_async()
            self.finished.append(n)
            return n

        @tool(read_only=True)
        def read(n: int) -> int:
            """Read item n."""
            self._start(n)
            self._hold()
            self.finished.append(n)
            return n

        return [write, write_async, read]


def _assert_nothing_started_after(writes: Writes, seen: list[int]) -> None:
    """The calls running at the interrupt end; none starts after it (for several
    call durations)."""
    wait_until(lambda: len(writes.finished) >= len(seen), what="the running calls ended")
    time.sleep(WRITE_S * 5)
    assert writes.started == seen, (
        f"calls started after Ctrl-C reached the caller: {writes.started[len(seen):]}")


SCRIPTS = {  # each with the calls that run at once, before the first write returns
    "parallel writes": "parallel(write, [{'n': i} for i in range(8)])",
    "parallel async writes": "parallel(write_async, [{'n': i} for i in range(8)])",
    "parallel writes and reads": (
        "parallel([(write, {'n': 0}), (write, {'n': 1}), (read, {'n': 2}), (write, {'n': 3}),"
        " (write, {'n': 4}), (write, {'n': 5}), (read, {'n': 6}), (write, {'n': 7})])"),
    "a loop of writes": "for i in range(8):\n    write(n=i)",
    "a loop of parallel batches": "for i in range(8):\n    parallel(write, [{'n': i}])",
}
READY: dict[str, Ready] = {
    # both reads start on workers with the batch, the writes one by one from write 0
    "parallel writes and reads": lambda started: {0, 2, 6} <= set(started),
}


@pytest.mark.parametrize("shape", sorted(SCRIPTS))
def test_ctrl_c_stops_the_calls_of_a_run(backend_name: str, make_runtime: Any,
                                         shape: str) -> None:
    """A real SIGINT while a write of the run is running: ``KeyboardInterrupt``
    reaches the caller, and no call of the run starts after that."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))
    with runtime.session() as session:
        assert session.run("x = 1").ok
        writes.interrupt_once(READY.get(shape, first_call))
        with pytest.raises(KeyboardInterrupt):
            session.run(SCRIPTS[shape])
        seen = writes.caught()
        _assert_nothing_started_after(writes, seen)
        assert session.run("1 + 1").value == 2  # the session goes on with a fresh sandbox


class SlowStartRecords:
    """An audit whose start record of a read takes a while (an ``AuditLog(sync="fsync")``
    on a slow disk): the runtime writes it after its start check and before the tool's
    first line, so each read of a batch is in that window for a moment."""

    def __call__(self, record: Any, event: Any) -> None:
        """Outcome records: nothing to keep."""

    def call_started(self, record: Any, event: Any) -> None:
        """A start record: slow for reads."""
        if record.name == "read":
            time.sleep(WRITE_S / 2)


def test_ctrl_c_with_calls_between_their_start_check_and_their_first_line(
        backend_name: str, make_runtime: Any) -> None:
    """Reads are past the runtime's start check but not yet in their tool when write 0
    starts: the interrupt waits for them (they started before Ctrl-C; a count taken as
    write 0 starts missed them, and a loaded machine made that window by itself), and
    no call starts after it."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0),
                                    audit=SlowStartRecords())
    with runtime.session() as session:
        writes.interrupt_once(READY["parallel writes and reads"])
        with pytest.raises(KeyboardInterrupt):
            session.run(SCRIPTS["parallel writes and reads"])
        seen = writes.caught()
        _assert_nothing_started_after(writes, seen)
    assert sorted(seen) == [0, 2, 6]


@pytest.mark.parametrize("tool_name", ["write", "read"])
def test_ctrl_c_stops_direct_calls(backend_name: str, make_runtime: Any,
                                   tool_name: str) -> None:
    """Direct (classic) batches: writes run on the caller's thread, reads on workers;
    Ctrl-C in either stops the rest of the batch."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0,
                                                                   max_parallel=2))
    with runtime.session() as session:
        # reads: two at once on workers (max_parallel=2); writes: one by one
        writes.interrupt_once((lambda started: {0, 1} <= set(started)) if tool_name == "read"
                              else first_call)
        with pytest.raises(KeyboardInterrupt):
            session.call_tools([(tool_name, {"n": i}) for i in range(8)])
        seen = writes.caught()
        _assert_nothing_started_after(writes, seen)
        assert session.call_tool(tool_name, {"n": 99}).ok


async def _cancel_once_writing(writes: Writes, run: Any) -> list[int]:
    """Start ``run`` (a coroutine), cancel it once its first write started, check that the
    cancellation reaches the caller and that no write starts after; the writes started."""
    task = asyncio.ensure_future(run)
    while not writes.started:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    seen = list(writes.started)
    await asyncio.to_thread(_assert_nothing_started_after, writes, seen)
    return seen


def test_cancelled_run_async_stops_the_run(backend_name: str, make_runtime: Any) -> None:
    """``run_async`` cancelled (what ``asyncio.run`` does on Ctrl-C): the run in its
    worker thread is stopped before the cancellation reaches the caller."""
    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))

    async def main() -> None:
        with runtime.session() as session:
            await _cancel_once_writing(writes, session.run_async(
                "parallel(write, [{'n': i} for i in range(8)])"))

    asyncio.run(main())


# --- plan approval: bound to its session and its injected user ------------------------

MAILED: list[tuple[str, str]] = []


@tool
def send_report(to: str, user_id: Injected[str]) -> str:
    """Mail the report, as the injected user."""
    MAILED.append((user_id, to))
    return to


REPORT = "send_report(to='boss@corp.example')\nsend_report(to='team@corp.example')"


def _report_sessions(make_runtime: Any) -> tuple[Runtime, Any, Any]:
    runtime = make_runtime([send_report], limits=Limits(tool_timeout_s=5.0))
    return (runtime, runtime.session(context={"user_id": "alice"}),
            runtime.session(context={"user_id": "mallory"}))


def test_another_session_cannot_spend_the_plan(backend_name: str, make_runtime: Any) -> None:
    """Mallory's session runs the identical script first: it is refused and spends
    nothing, and alice's run, the one approved, still passes whole."""
    MAILED.clear()
    runtime, alice, mallory = _report_sessions(make_runtime)
    with alice, mallory:
        runtime.approve = PlanApproval(analyze(REPORT, runtime.tools), session=alice)
        stolen = mallory.run(REPORT)
        mine = alice.run(REPORT)
    assert not stolen.ok and "approved for session" in stolen.tool_calls[0].reason
    assert mine.ok, mine.to_dict()
    assert all("inside the approved plan" in c.reason for c in mine.tool_calls)
    assert MAILED == [("alice", "boss@corp.example"), ("alice", "team@corp.example")]


def test_another_session_is_asked_not_passed(backend_name: str, make_runtime: Any) -> None:
    """With a fallback, another session's identical script reaches the fallback (a
    human), never the plan; a session id string binds like the session."""
    MAILED.clear()
    asked: list[str] = []

    def human(request: ToolCallRequest) -> Decision:
        asked.append(request.session_id)
        return Decision.deny("no")

    runtime, alice, mallory = _report_sessions(make_runtime)
    with alice, mallory:
        runtime.approve = PlanApproval(analyze(REPORT, runtime.tools), fallback=human,
                                       session=alice.id)
        assert not mallory.run(REPORT).ok
        assert alice.run(REPORT).ok
    assert asked == [mallory.id]  # the first call was denied and stopped the script
    assert [user for user, _ in MAILED] == ["alice", "alice"]


def test_a_plan_is_bound_to_its_injected_user(backend_name: str, make_runtime: Any) -> None:
    """A plan approved for user alice passes nothing in a session that injects another
    user, even the session it names."""
    MAILED.clear()
    runtime, _alice, mallory = _report_sessions(make_runtime)
    with mallory:
        runtime.approve = PlanApproval(analyze(REPORT, runtime.tools), session=mallory,
                                       injected={"user_id": "alice"})
        result = mallory.run(REPORT)
    assert not result.ok and "injects user_id" in result.tool_calls[0].reason
    assert MAILED == []
    approval = PlanApproval(analyze(REPORT, runtime.tools), session="s1",
                            injected={"user_id": "alice"})
    assert "session s1" in approval.describe() and "alice" in approval.describe()


def test_a_plan_needs_the_session_it_is_for() -> None:
    plan = analyze(REPORT, [send_report])
    with pytest.raises(TypeError):
        PlanApproval(plan)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="session"):
        PlanApproval(plan, session=42)  # type: ignore[arg-type]


# --- two-phase plans expire, even while their commit waits for approval --------------

COMMITTED: list[Any] = []


def _plan_refund(order: str) -> dict[str, Any]:
    """Plan a refund of one order."""
    return {"order": order}


def _do_refund(plan: dict[str, Any]) -> str:
    COMMITTED.append(plan)
    return "refunded"


def test_an_expired_plan_is_not_committed_after_a_slow_approval(
        backend_name: str, make_runtime: Any) -> None:
    """The commit's approval outlasts the plan's lifetime: the commit is refused, the
    commit function never runs, and the record says the tool did not start."""
    COMMITTED.clear()
    pair = two_phase(_plan_refund, _do_refund, name="refund", ttl_s=0.5)
    seen = threading.Event()

    def slow_human(request: ToolCallRequest) -> Decision:
        if request.tool == "commit_refund":
            time.sleep(1.5)  # the plan expires while the human reads it
            seen.set()
        return Decision.allow("yes")

    runtime = make_runtime(list(pair), approve=slow_human,
                           limits=Limits(wall_time_s=30.0, tool_timeout_s=10.0))
    result = runtime.run("p = prepare_refund(order='A1')\ncommit_refund(plan_id=p['plan_id'])")
    assert seen.is_set()
    assert not result.ok and COMMITTED == []
    commit = result.tool_calls[-1]
    assert commit.approved is True and commit.error is not None
    assert commit.error.type == "invalid_arguments" and "expired" in commit.error.message
    assert commit.error.details.get("started") is False


def test_a_live_plan_is_committed_once(backend_name: str, make_runtime: Any) -> None:
    """The same approval path, in time: committed exactly once."""
    COMMITTED.clear()
    pair = two_phase(_plan_refund, _do_refund, name="refund", ttl_s=60.0)
    runtime = make_runtime(list(pair), approve=lambda request: Decision.allow("yes"),
                           limits=Limits(wall_time_s=30.0, tool_timeout_s=10.0))
    result = runtime.run("p = prepare_refund(order='A1')\n"
                         "[commit_refund(plan_id=p['plan_id']) for _ in range(2)]")
    assert result.ok, result.to_dict()
    assert COMMITTED == [{"order": "A1"}]


# --- the audit of a batch: each call as it ends, its start before it runs -------------

HOST = textwrap.dedent("""
    import sys, time
    from toolscript import Limits, Runtime, tool
    from toolscript.runtime.audit.log import AuditLog

    backend, log_path, effects, sync, background = sys.argv[1:6]

    @tool
    def write(n: int) -> int:
        "Write item n: the effect lands before the call returns."
        with open(effects, "a") as fh:
            fh.write(f"{n}\\n")
        time.sleep(0.2)
        return n

    @tool(read_only=True)
    def read(n: int) -> int:
        "Read item n."
        return n

    log = AuditLog(log_path, key=None, sync=sync, background=background == "1")
    runtime = Runtime([write, read], backend=backend, audit=log,
                      limits=Limits(wall_time_s=300.0, tool_timeout_s=60.0, max_tool_calls=500))
    calls = ", ".join(f"(write, {{'n': {i}}}), (read, {{'n': {i}}})" for i in range(200))
    runtime.run(f"parallel([{calls}])")
""")


def _killed_mid_batch(tmp_path: Path, backend: str, sync: str,
                      background: bool) -> tuple[list[int], list[dict[str, Any]]]:
    """Run HOST, SIGKILL it once some writes acted; (writes that acted, log lines)."""
    script, log_path, effects = tmp_path / "host.py", tmp_path / "audit.jsonl", tmp_path / "fx"
    script.write_text(HOST)
    effects.touch()
    child = subprocess.Popen([sys.executable, str(script), backend, str(log_path), str(effects),
                              sync, "1" if background else "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: len(effects.read_text().split()) >= 4 or child.poll() is not None,
                   timeout=120.0, what="four writes acted")
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
        if child.stderr is not None:
            child.stderr.close()
    acted = [int(n) for n in effects.read_text().split()]
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    assert verify(log_path, key=None).ok  # the kill left a whole, valid chain
    return acted, lines


@host_backends
def test_a_killed_host_logged_every_write_that_acted(backend_name: str,
                                                     tmp_path: Path) -> None:
    acted, lines = _killed_mid_batch(tmp_path, backend_name, "fsync", background=True)
    starts = {line["args"]["n"] for line in lines
              if line.get("phase") == "start" and line["tool"] == "write"}
    ends = {line["args"]["n"]: line for line in lines
            if "phase" not in line and line["tool"] == "write"}
    assert 4 <= len(acted) < 200
    missing = [n for n in acted if n not in starts]
    assert not missing, f"writes that acted without a start line: {missing}"
    # every write but the last one that acted returned (the next one started after it)
    unended = [n for n in acted[:-1] if n not in ends]
    assert not unended, f"writes that returned without their outcome line: {unended}"
    assert all(ends[n]["outcome"] == "ok" and ends[n]["acted"] == "yes" for n in acted[:-1])
    assert all(line.get("acted") == "maybe" for line in lines if line.get("phase") == "start")


@host_backends
def test_each_call_of_a_batch_is_written_as_it_ends(backend_name: str, tmp_path: Path) -> None:
    """Without start lines (``sync="flush"``, written in the calling thread): the
    outcome line of every write that returned is in the file when the host dies."""
    acted, lines = _killed_mid_batch(tmp_path, backend_name, "flush", background=False)
    assert not [line for line in lines if line.get("phase") == "start"]
    ended = {line["args"]["n"] for line in lines if line["tool"] == "write"}
    assert [n for n in acted[:-1] if n not in ended] == []


# --- an agent turn: classic tool calls or a script ------------------------------------

AGENT_CALLS = [("write", {"n": i}) for i in range(6)]


def _agent(runtime: Runtime, server: Any, mode: str) -> Any:
    import openai
    from toolscript.runtime.agent import Agent, Endpoint

    client = openai.OpenAI(api_key="test-key", base_url=server.openai_base_url)
    return Agent(runtime, provider="openai", model="fake-model", mode=mode,
                 endpoint=Endpoint(client=client))


def _agent_turns(mode: str) -> list[Any]:
    from fakes.model_server import Call, Turn, say, script

    if mode == "classic":
        first = Turn(tool_calls=[Call(name, args) for name, args in AGENT_CALLS])
    else:
        first = script("parallel(write, [{'n': i} for i in range(6)])")
    return [first, say("done")]


@pytest.mark.parametrize("mode", ["classic", "programmatic"])
def test_ctrl_c_stops_the_calls_of_an_agent_turn(backend_name: str, make_runtime: Any,
                                                  mode: str) -> None:
    """One model turn asks for six writes (classic tool calls, or one script):
    Ctrl-C during the first stops the agent run, and no other write starts."""
    from fakes.model_server import FakeModelServer

    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))
    with FakeModelServer() as server:
        server.script(*_agent_turns(mode))
        agent = _agent(runtime, server, mode)
        writes.interrupt_once()
        with pytest.raises(KeyboardInterrupt):
            agent.run("write them")
        seen = writes.caught()
        _assert_nothing_started_after(writes, seen)
    assert len(seen) == 1


@pytest.mark.parametrize("mode", ["classic", "programmatic"])
def test_a_cancelled_async_agent_run_stops_its_calls(backend_name: str, make_runtime: Any,
                                                     mode: str) -> None:
    """``Agent.run_async`` cancelled while a write of the turn runs: no later write
    of the turn starts (classic calls run one by one in a worker thread)."""
    from fakes.model_server import FakeModelServer

    writes = Writes()
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0))

    async def main(server: Any) -> list[int]:
        return await _cancel_once_writing(writes, _agent(runtime, server, mode).run_async(
            "write them"))

    with FakeModelServer() as server:
        server.script(*_agent_turns(mode))
        seen = asyncio.run(main(server))
    assert len(seen) == 1


def test_writes_stopped_by_ctrl_c_are_logged_as_not_acted(backend_name: str, make_runtime: Any,
                                                          tmp_path: Path) -> None:
    """The rest of a batch Ctrl-C stopped is in the audit log as never started
    (``acted: "no"``), the writes that ran as ``"yes"``."""
    from toolscript.runtime.audit.log import AuditLog

    writes = Writes()
    log = AuditLog(tmp_path / "audit.jsonl", key=None, background=False)
    runtime: Runtime = make_runtime(writes.tools(), limits=Limits(wall_time_s=60.0), audit=log)
    with runtime.session() as session:
        writes.interrupt_once()
        with pytest.raises(KeyboardInterrupt):
            session.run("parallel(write, [{'n': i} for i in range(6)])")
        seen = writes.caught()
        _assert_nothing_started_after(writes, seen)

    def lines() -> list[dict[str, Any]]:
        return [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]

    wait_until(lambda: len(lines()) >= 6, what="a line for each call of the batch")
    acted = {line["args"]["n"]: line["acted"] for line in lines()}
    assert acted == {n: "yes" if n in seen else "no" for n in range(6)}
