"""Agent runs that pause on a deferred call and resume later, in every dialect, through
the real SDKs against the fake model server; the resumed run is built anew (a new
Runtime and Agent, the state through JSON), as after a restart."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))  # agent_helpers

import refund_tools
from agent_helpers import DIALECTS, client_for
from fakes.model_server import Call, FakeModelServer, Turn, call, say, script
from refund_tools import executions
from toolscript.runtime.agent import Agent, Endpoint
from toolscript.runtime.approval.hooks import defer_all

from toolscript import Decision, Runtime
from toolscript.errors import ConfigurationError, ContinuationError

TOOLS = [refund_tools.get_order, refund_tools.issue_refund]
REFUND = ('order = get_order("A-1042")\n'
          'issue_refund(order["order_id"], order["amount_eur"], note="late")')


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("REFUND_LOG", str(tmp_path / "executions.jsonl"))
    monkeypatch.setenv("TOOLSCRIPT_CONTINUATION_KEY", "agent-test-key-" * 3)
    monkeypatch.setenv("TOOLSCRIPT_JOURNAL", str(tmp_path / "journal.sqlite3"))
    return str(tmp_path / "executions.jsonl")


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def agent(server: FakeModelServer, provider: str, mode: str = "programmatic") -> Agent:
    """A new runtime and agent (what a restarted process builds)."""
    return Agent(provider=provider, model="fake-model", mode=mode, tools=TOOLS,
                 runtime_options={"approve": defer_all, "backend": "subprocess"},
                 endpoint=Endpoint(client=client_for(provider, server)))


def tools_of(log: str) -> list[object]:
    return [e["tool"] for e in executions(log)]


def allow_all(result: Any, reason: str = "ok") -> dict[str, Decision]:
    return {p.id: Decision.allow(reason) for p in result.pending}


def last_request_text(server: FakeModelServer) -> str:
    return json.dumps(server.bodies()[-1], ensure_ascii=False)


@pytest.mark.parametrize("provider", DIALECTS)
def test_a_paused_script_resumes_after_a_restart(server: FakeModelServer, provider: str,
                                                 log: str) -> None:
    server.script(script(REFUND), say("refunded"))
    with agent(server, provider) as first:
        paused = first.run("refund order A-1042")
    assert paused.paused and paused.answer == ""
    [pending] = paused.pending
    assert pending.tool == "issue_refund" and pending.arguments["amount_eur"] == 1250.0
    assert tools_of(log) == ["get_order"]
    stored = json.loads(json.dumps(paused.state.to_dict()))  # kept as JSON anywhere
    with agent(server, provider) as second:
        done = second.resume(stored, allow_all(paused))
    assert done.status == "done" and done.answer == "refunded"
    assert tools_of(log) == ["get_order", "issue_refund"]  # get_order not run again
    assert "refund of 1250.00 EUR for A-1042 issued" in last_request_text(server)
    assert done.turns == 2 and len(server.bodies()) == 2  # the model was not asked again
    assert done.messages[: len(paused.messages)] == paused.messages


@pytest.mark.parametrize("provider", DIALECTS)
def test_a_deferred_classic_call_resumes(server: FakeModelServer, provider: str,
                                         log: str) -> None:
    server.script(call("get_order", {"order_id": "A-1042"}),
                  call("issue_refund", {"order_id": "A-1042", "amount_eur": 1250.0}),
                  say("refunded"))
    with agent(server, provider, "classic") as first:
        paused = first.run("refund order A-1042")
    assert paused.paused and [p.tool for p in paused.pending] == ["issue_refund"]
    assert tools_of(log) == ["get_order"]
    with agent(server, provider, "classic") as second:
        done = second.resume(paused.state.to_json(), allow_all(paused))
    assert done.answer == "refunded" and tools_of(log) == ["get_order", "issue_refund"]
    assert "refund of 1250.00 EUR for A-1042 issued" in last_request_text(server)


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_a_denial_reaches_the_model(server: FakeModelServer, provider: str, log: str) -> None:
    server.script(script(REFUND), say("could not refund"))
    with agent(server, provider) as first:
        paused = first.run("refund order A-1042")
    with agent(server, provider) as second:
        done = second.resume(paused.state,
                             {paused.pending[0].id: Decision.deny("refunds need a manager")})
    assert done.answer == "could not refund" and tools_of(log) == ["get_order"]
    assert "refunds need a manager" in last_request_text(server)


def test_two_pauses_in_one_script(server: FakeModelServer, log: str) -> None:
    code = (REFUND + '\nissue_refund("A-7", 5.0, note="second")')
    server.script(script(code), say("both refunded"))
    with agent(server, "openai") as first:
        one = first.run("refund both")
    with agent(server, "openai") as second:
        two = second.resume(one.state, allow_all(one))
    assert two.paused and two.pending[0].arguments["order_id"] == "A-7"
    with agent(server, "openai") as third:
        done = third.resume(two.state, allow_all(two))
    assert done.answer == "both refunded"
    assert tools_of(log) == ["get_order", "issue_refund", "issue_refund"]


def test_the_rest_of_the_turn_runs_after_the_resume(server: FakeModelServer, log: str) -> None:
    """Two calls in one turn: the write pauses, the call after it runs once resumed."""
    server.script(Turn(tool_calls=[Call("issue_refund", {"order_id": "A-1", "amount_eur": 1.0}),
                                   Call("get_order", {"order_id": "A-1"})]), say("done"))
    with agent(server, "openai", "classic") as first:
        paused = first.run("refund and look")
    assert tools_of(log) == []
    with agent(server, "openai", "classic") as second:
        done = second.resume(paused.state, allow_all(paused))
    assert done.answer == "done" and tools_of(log) == ["issue_refund", "get_order"]


def test_resume_async(server: FakeModelServer, log: str) -> None:
    server.script(script(REFUND), say("refunded"))
    with agent(server, "anthropic") as first:
        paused = first.run("refund order A-1042")

    async def go() -> Any:
        async_agent = Agent(Runtime(tools=TOOLS, approve=defer_all, backend="subprocess"),
                            provider="anthropic", model="fake-model",
                            endpoint=Endpoint(client=client_for("anthropic", server),
                                              async_client=_async_anthropic(server)))
        try:
            return await async_agent.resume_async(paused.state, allow_all(paused))
        finally:
            async_agent.runtime.close()  # type: ignore[attr-defined]

    done = asyncio.run(go())
    assert done.answer == "refunded" and tools_of(log) == ["get_order", "issue_refund"]


def _async_anthropic(server: FakeModelServer) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(api_key="test-key", base_url=server.base_url)


def test_a_state_is_resumed_once(server: FakeModelServer, log: str) -> None:
    server.script(script(REFUND), say("refunded"), say("again"))
    with agent(server, "openai") as first:
        paused = first.run("refund order A-1042")
        first.resume(paused.state, allow_all(paused))
        with pytest.raises(ContinuationError, match="already resumed"):
            first.resume(paused.state, allow_all(paused))
    assert tools_of(log) == ["get_order", "issue_refund"]


def test_a_tampered_continuation_is_refused(server: FakeModelServer, log: str) -> None:
    server.script(script(REFUND), say("refunded"))
    with agent(server, "openai") as first:
        paused = first.run("refund order A-1042")
    data = paused.state.to_dict()
    cont = data["paused"][0]["continuation"]
    data["paused"][0]["continuation"] = cont[:-2] + ("AA" if cont[-2:] != "AA" else "BB")
    with agent(server, "openai") as second, pytest.raises(ContinuationError):
        second.resume(data, allow_all(paused))
    assert tools_of(log) == ["get_order"]


def test_a_state_of_another_provider_is_refused(server: FakeModelServer, log: str) -> None:
    server.script(script(REFUND))
    with agent(server, "openai") as first:
        paused = first.run("refund order A-1042")
    with agent(server, "anthropic") as other, pytest.raises(ConfigurationError,
                                                             match="same provider"):
        other.resume(paused.state, allow_all(paused))
    with agent(server, "openai") as same, pytest.raises(ConfigurationError):
        same.resume("{}", {})
