"""Event hooks (``Runtime(event_hooks=...)``, ``runtime.events``) on every backend: what
fires, when, with which fields; failing hooks; the audit callback's public event; and
telemetry built on the hooks instead of replaced methods."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from corehelpers import add, boom, echo
from toolscript.runtime.agent import Agent
from toolscript.runtime.calls.runcontext import RunContext
from toolscript.runtime.events import (
    EVENT_NAMES,
    EventHooks,
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
)

from toolscript import Runtime, Session
from toolscript.errors import ApprovalRequired, ConfigurationError
from toolscript.testing import FunctionModel, TestModel, run_script

TOOLS = [add, echo, boom]
SCRIPT = (
    "a = add(1, 2)\n"
    "b = parallel([(echo, {'value': 'x'}), (add, {'a': 5})])\n"
    "try:\n"
    "    boom('no')\n"
    "except ValueError:\n"
    "    pass\n"
    "a + b[1]\n"
)


class Recorder:
    """Hooks for every event, appending ``(event, thread id)`` in firing order."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, int]] = []
        self._lock = threading.Lock()

    def __call__(self, event: Any) -> None:
        with self._lock:
            self.seen.append((event, threading.get_ident()))

    def hooks(self) -> dict[str, list[Callable[[Any], None]]]:
        return {name: [self] for name in EVENT_NAMES}

    def events(self, kind: type | None = None) -> list[Any]:
        return [event for event, _ in self.seen if kind is None or isinstance(event, kind)]

    def names(self) -> list[str]:
        return [event.name for event, _ in self.seen]


def test_a_run_fires_start_its_tool_calls_then_end(make_runtime, backend_name):
    recorder = Recorder()
    runtime = make_runtime(TOOLS, event_hooks=recorder.hooks())
    with runtime.session() as session:
        result = session.run(SCRIPT)
    assert result.ok, result.error
    assert result.value == 8

    names = recorder.names()
    assert names == ["run_start", "tool_call", "tool_call", "tool_call", "tool_call", "run_end"]
    start, end = recorder.events(RunStartEvent), recorder.events(RunEndEvent)
    assert len(start) == 1 and len(end) == 1
    for event in (start[0], end[0]):
        assert event.session_id == session.id
        assert event.run_id == result.run_id
        assert event.agent_run_id is None
        assert event.backend == backend_name
        assert event.script == SCRIPT
    assert end[0].result is result and end[0].error is None
    calls = recorder.events(ToolCallEvent)
    assert sorted(e.record.id for e in calls) == sorted(r.id for r in result.tool_calls)
    for call in calls:
        assert call.session_id == session.id and call.run_id == result.run_id
        assert call.agent_run_id is None
        assert any(call.record is record for record in result.tool_calls)
    failed = next(c.record for c in calls if c.record.name == "boom")
    assert failed.error is not None and failed.error.type == "tool_exception"
    # the run's events fire on the thread that called run()
    me = threading.get_ident()
    assert [thread for event, thread in recorder.seen if event.name != "tool_call"] == [me, me]


def test_direct_calls_fire_tool_call_only(make_runtime):
    recorder = Recorder()
    runtime = make_runtime(TOOLS, event_hooks=recorder.hooks())
    with runtime.session() as session:
        record = session.call_tool("add", {"a": 2, "b": 3})
        records = session.call_tools([("echo", {"value": 1}), ("nope", {})])
    assert record.ok and record.value == 5
    assert recorder.names() == ["tool_call"] * 3
    calls = recorder.events(ToolCallEvent)
    assert calls[0].record == record  # a batch's calls fire as each ends: refusals first
    assert sorted((c.record for c in calls[1:]), key=lambda r: r.id) == records
    assert {c.run_id for c in calls} == {f"{session.id}-direct"}
    assert records[1].error is not None and records[1].error.type == "unknown_tool"


def test_a_run_that_raises_still_ends_with_the_error(make_runtime):
    def stop(request: Any) -> bool:
        raise ApprovalRequired("a person must decide")

    recorder = Recorder()
    runtime = make_runtime(TOOLS, approve=stop, event_hooks=recorder.hooks())
    with runtime.session() as session, pytest.raises(ApprovalRequired):
        session.run("add(1, 2)")
    assert recorder.names() == ["run_start", "tool_call", "run_end"]
    end = recorder.events(RunEndEvent)[0]
    assert end.result is None and isinstance(end.error, ApprovalRequired)


def test_failing_hooks_are_logged_and_the_run_goes_on(make_runtime, caplog):
    def fail(event: Any) -> None:
        raise RuntimeError(f"hook failed on {event.name}")

    recorder = Recorder()
    hooks = {name: [fail, recorder] for name in EVENT_NAMES}
    runtime = make_runtime(TOOLS, event_hooks=hooks)
    with caplog.at_level(logging.ERROR, logger="toolscript"):
        result = runtime.run("add(40, 2)")
        record = runtime.session().call_tool("add", {"a": 1})
    assert result.ok and result.value == 42 and record.ok
    # the hook after the failing one still ran, for every event
    assert recorder.names() == ["run_start", "tool_call", "run_end", "tool_call"]
    failures = [r for r in caplog.records if "event hook" in r.getMessage()]
    assert len(failures) == 4
    assert all(r.exc_info and isinstance(r.exc_info[1], RuntimeError) for r in failures)


def test_hooks_are_added_and_removed(make_runtime):
    recorder = Recorder()
    runtime = make_runtime(TOOLS)
    assert isinstance(runtime.events, EventHooks)
    runtime.events.add("tool_call", recorder)
    runtime.events.add("run_end", recorder)
    runtime.run("add(1)")
    runtime.events.remove("tool_call", recorder)
    runtime.run("add(2)")
    runtime.events.remove("run_end", recorder)
    runtime.run("add(3)")
    assert recorder.names() == ["tool_call", "run_end", "run_end"]
    assert runtime.events.tool_call == () and runtime.events.run_end == ()
    with pytest.raises(ConfigurationError, match="not registered"):
        runtime.events.remove("tool_call", recorder)


def test_bad_names_and_hooks_are_refused_naming_the_valid_ones():
    with pytest.raises(ConfigurationError) as info:
        Runtime(backend="inprocess", event_hooks={"tool_called": [print]})
    for name in EVENT_NAMES:
        assert name in str(info.value)
    hooks = EventHooks()
    with pytest.raises(ConfigurationError, match="run_start, run_end, tool_call, model_call"):
        hooks.add("request", print)
    with pytest.raises(ConfigurationError, match="callable"):
        hooks.add("tool_call", "print")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="mapping"):
        EventHooks([print])  # type: ignore[arg-type]
    assert EventHooks({"run_end": print}).run_end == (print,)  # one callable is a list of one


def test_the_audit_callback_gets_the_public_event(make_runtime):
    seen: list[tuple[Any, Any]] = []
    runtime = make_runtime(TOOLS, audit=lambda record, event: seen.append((record, event)))
    with runtime.session() as session:
        result = session.run("add(1, 2)\nadd('x')")
    assert [record.name for record, _ in seen] == ["add", "add"]
    for (record, event), kept in zip(seen, result.tool_calls, strict=True):
        assert isinstance(event, ToolCallEvent) and not isinstance(event, RunContext)
        assert event.record is record is kept
        assert (event.session_id, event.run_id) == (session.id, result.run_id)
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.run_id = "forged"  # type: ignore[misc]
        # nothing of the run's own state: no budget, records, context, abort or deadline
        for internal in ("records", "context", "abort", "admit", "deadline", "retention"):
            assert not hasattr(event, internal)


def test_an_audit_callback_that_fails_still_fails_the_call(make_runtime):
    def full_disk(record: Any, event: Any) -> None:
        raise OSError("disk full")

    recorder = Recorder()
    runtime = make_runtime(TOOLS, audit=full_disk, event_hooks={"tool_call": [recorder]})
    with runtime.session() as session, pytest.raises(OSError, match="disk full"):
        session.call_tool("add", {"a": 1})
    assert recorder.names() == ["tool_call"]  # the observers saw the call all the same


def test_an_agent_run_fires_model_calls_around_its_script_run(make_runtime):
    recorder = Recorder()
    runtime = make_runtime(TOOLS, event_hooks=recorder.hooks())
    model = TestModel(run_script("add(20, 22)"), "It is 42.")
    agent = Agent(runtime, provider=model, mode="programmatic")
    result = agent.run("What is 20 + 22?")
    assert result.answer == "It is 42."

    assert recorder.names() == ["model_call", "run_start", "tool_call", "run_end", "model_call"]
    first, second = recorder.events(ModelCallEvent)
    start = recorder.events(RunStartEvent)[0]
    assert (first.turn, second.turn) == (1, 2)
    for event in (first, second):
        assert event.provider == model.name
        assert event.model == agent.request.model
        assert event.error is None and event.usage is not None
        assert event.usage.input_tokens > 0 and event.duration_s >= 0
        assert event.session_id == start.session_id
        assert event.agent_run_id is not None and event.agent_run_id == start.agent_run_id
    assert (first.finish_reason, second.finish_reason) == ("tool_calls", "stop")
    call = recorder.events(ToolCallEvent)[0]
    assert call.agent_run_id == start.agent_run_id


def test_a_failed_model_call_fires_with_its_error(make_runtime):
    def down(info: Any) -> Any:
        raise ConnectionError("endpoint down")

    recorder = Recorder()
    runtime = make_runtime(TOOLS, event_hooks={"model_call": [recorder]})
    agent = Agent(runtime, provider=FunctionModel(down), mode="programmatic")
    with pytest.raises(ConnectionError):
        agent.run("Anyone there?")
    (event,) = recorder.events(ModelCallEvent)
    assert isinstance(event.error, ConnectionError)
    assert event.usage is None and event.finish_reason is None and event.turn == 1


# --- telemetry on the hooks ------------------------------------------------------------
def test_telemetry_uses_hooks_and_replaces_no_method(make_runtime):
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode
    from toolscript.runtime.integrations.telemetry import instrument

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def audit(record: Any, event: Any) -> None:
        return None

    runtime = make_runtime(TOOLS, audit=audit)
    early = runtime.session()  # opened before instrument(): traced all the same
    instrumentation = instrument(runtime, tracer_provider=provider)
    assert instrument(runtime) is instrumentation
    assert runtime.dispatcher.audit is audit
    assert "session" not in vars(runtime) and type(runtime).session is Runtime.session
    session = runtime.session()
    for one in (early, session):
        assert type(one).run is Session.run
        assert one.run.__func__ is Session.run
        assert "run" not in vars(one)
    assert len(runtime.events.run_start) == len(runtime.events.tool_call) == 1

    early.run("add(1)")
    result = session.run("add(2)\nadd('bad')")
    spans = exporter.get_finished_spans()
    runs = [s for s in spans if s.name == "execute_script"]
    tools = [s for s in spans if s.name == "execute_tool add"]
    assert len(runs) == 2 and len(tools) == 3
    last = runs[1]
    assert last.attributes["toolscript.run.id"] == result.run_id
    assert [t.parent.span_id for t in tools[1:]] == [last.context.span_id] * 2
    assert trace.get_current_span() is trace.INVALID_SPAN  # current during the run only

    def stop(request: Any) -> bool:
        raise ApprovalRequired("ask first")

    runtime.approve = stop
    with pytest.raises(ApprovalRequired):
        session.run("add(3)")
    failed = [s for s in exporter.get_finished_spans() if s.name == "execute_script"][-1]
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["error.type"] == "ApprovalRequired"
    assert trace.get_current_span() is trace.INVALID_SPAN

    instrumentation.uninstrument()
    assert runtime.events.run_start == runtime.events.run_end == runtime.events.tool_call == ()
    runtime.approve = None
    count = len(exporter.get_finished_spans())
    session.run("add(4)")
    assert len(exporter.get_finished_spans()) == count
    early.close()
    session.close()
