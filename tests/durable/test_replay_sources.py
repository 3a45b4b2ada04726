"""A resumed run reads the same clocks, random numbers and UUIDs as the run that paused.

The resume runs the script again in a fresh sandbox. Without recorded readings,
``time.time()``, ``datetime.now()``, ``random.random()`` and ``uuid.uuid4()``
return new values there: a call whose arguments hold one of them would end the
resume as ``replay_diverged``, and a value the script kept would silently change.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import Counter
from toolscript.runtime.durable.journal import SOURCES_SEQ, SOURCES_TOOL
from toolscript.sandbox.protocol import ProtocolViolation
from toolscript.sandbox.runsources import MAX_READINGS, sources_ok
from toolscript.sandbox.wirecheck import result_message

from toolscript import Decision, tool

READINGS = """
import time, random, uuid, datetime
stamp = {
    "time": time.time(), "time_ns": time.time_ns(), "mono": time.monotonic(),
    "perf": time.perf_counter(), "random": random.random(), "choice": random.choice("abcdefgh"),
    "uuid": str(uuid.uuid4()), "now": datetime.datetime.now().isoformat(),
    "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    "today": datetime.date.today().isoformat(), "ctime": time.ctime(),
    "strftime": time.strftime("%Y-%m-%d %H:%M:%S"),
}
"""

SCRIPT = READINGS + """
record(stamp)
r = send("bob")
after = {"mono": time.monotonic(), "time": time.time(), "random": random.random()}
[stamp, r, after]
"""


def _tools(counter: Counter) -> list[Any]:
    """``send`` from the counter, and ``record``: a write whose arguments are the readings."""
    seen = counter.calls

    @tool
    def record(values: dict[str, Any]) -> str:
        """Store values."""
        seen.append(("record", values))
        return "recorded"

    return [*counter.tools(), record]


def _resume(durable_runtime: Any, tools: list[Any], paused: Any) -> Any:
    return durable_runtime(tools).resume(
        paused.continuation, {paused.pending[0].id: Decision.allow("ok")})


def test_a_resume_reads_what_the_paused_run_read(durable_runtime: Any) -> None:
    counter = Counter()
    with durable_runtime(_tools(counter)) as runtime:
        paused = runtime.run(SCRIPT)
    assert paused.status == "paused", paused.error
    [(_, original)] = [c for c in counter.calls if c[0] == "record"]
    later = Counter()  # a new process
    result = _resume(durable_runtime, _tools(later), paused)
    assert result.status == "ok", result.error
    stamp, sent, after = result.value
    assert stamp == original  # every reading before the pause, as the first run saw it
    assert sent == "sent bob"
    assert later.calls == [("send", "bob")]  # record() was replayed, never ran again
    assert after["mono"] >= stamp["mono"]  # steady clocks never go back across a resume
    assert after["time"] >= stamp["time"]  # wall clocks are live again after the pause


def test_readings_after_the_pause_point_are_new(durable_runtime: Any) -> None:
    """The replay ends at the paused call: what follows it is read live in each resume."""
    counter = Counter()
    script = "import random\na = random.random()\nsend('x')\nb = random.random()\n[a, b]"
    with durable_runtime(counter.tools()) as runtime:
        paused = runtime.run(script)
    first = _resume(durable_runtime, counter.tools(), paused)
    assert first.ok, first.error
    a, b = first.value
    assert a != b


def test_a_run_paused_twice_replays_both_stretches(durable_runtime: Any) -> None:
    counter = Counter()
    script = READINGS + """
record(stamp)
send("a")
second = {"uuid": str(uuid.uuid4()), "time": time.time(), "random": random.random()}
record(second)
send("b")
[stamp, second]
"""
    with durable_runtime(_tools(counter)) as runtime:
        first = runtime.run(script)
    again = _resume(durable_runtime, _tools(counter), first)
    assert again.status == "paused", again.error
    done = _resume(durable_runtime, _tools(counter), again)
    assert done.ok, done.error
    recorded = [args for name, args in counter.calls if name == "record"]
    assert recorded == done.value  # each record() ran once, with the values the end sees
    assert counter.count("send", "a") == 1 and counter.count("send", "b") == 1


def test_the_readings_are_kept_with_the_journal(durable_runtime: Any, journal_url: str) -> None:
    counter = Counter()
    with durable_runtime(_tools(counter)) as runtime:
        paused = runtime.run(SCRIPT)
    path = journal_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seq, tool FROM entries WHERE run_id = ? ORDER BY seq",
                          (paused.run_id,)).fetchall()
    assert rows[0] == (SOURCES_SEQ, SOURCES_TOOL)
    assert [seq for seq, _ in rows[1:]] == [1, 2]


def test_without_recorded_readings_the_resume_diverges(durable_runtime: Any,
                                                        journal_url: str) -> None:
    """What the recording prevents: the same resume with the readings deleted from the
    journal ends as replay_diverged (the record() arguments differ), loudly."""
    counter = Counter()
    with durable_runtime(_tools(counter)) as runtime:
        paused = runtime.run(SCRIPT)
    with sqlite3.connect(journal_url.removeprefix("sqlite:///")) as db:
        db.execute("DELETE FROM entries WHERE run_id = ? AND seq = ?",
                   (paused.run_id, SOURCES_SEQ))
    result = _resume(durable_runtime, _tools(Counter()), paused)
    assert result.error is not None and result.error.type == "replay_diverged"


@pytest.mark.parametrize("sources", [
    {"time": ["1.0"]}, {"time": [float("nan")]}, {"time": [-1.0]}, {"time_ns": [1.5]},
    {"time_ns": [True]}, {"seed": ["short"]}, {"seed": ["Z" * 64]}, {"rm -rf": [1.0]},
    {"time": 1.0}, ["time", 1.0], {"monotonic": [1.0] * (MAX_READINGS + 1)},
])
def test_a_sandbox_cannot_send_malformed_readings(sources: Any) -> None:
    """A hostile sandbox's ``sources`` is a protocol error, not data for the journal."""
    assert not sources_ok(sources)
    message = {"type": "result", "id": "r1", "ok": True, "value": 1, "stdout": "",
               "stdout_truncated": False, "error": None, "sources": sources}
    with pytest.raises(ProtocolViolation):
        result_message(message, "r1")


def test_well_formed_readings_pass_the_wire_check() -> None:
    sources = {"time": [1.5, 2], "time_ns": [10**18], "seed": ["ab" * 32], "monotonic": [3.0]}
    message = {"type": "result", "id": "r1", "ok": True, "value": 1, "stdout": "",
               "stdout_truncated": False, "error": None, "sources": sources}
    assert result_message(message, "r1")["sources"] == sources


def test_a_fresh_run_reads_fresh_values(durable_runtime: Any, tmp_path: Path) -> None:
    """Recording changes nothing for runs that are not resumed: two runs draw apart."""
    counter = Counter()
    with durable_runtime(counter.tools()) as runtime:
        code = "import random, uuid\n[random.random(), str(uuid.uuid4())]"
        first, second = runtime.run(code), runtime.run(code)
    assert first.ok and second.ok
    assert first.value[0] != second.value[0] and first.value[1] != second.value[1]
