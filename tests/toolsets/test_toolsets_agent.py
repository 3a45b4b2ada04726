"""The model searches, finds and calls a deferred tool, in programmatic and classic
mode, for every dialect (real SDKs against the fake model server); the approval
hook, the audit callback and the namespaced names apply to the found tool."""

from __future__ import annotations

import json
from typing import Any

import catalog_tools
import pytest
from agent_helpers import DIALECTS, client_for
from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.agent import Agent, Endpoint
from toolscript.runtime.approval.hooks import Decision

from toolscript import Runtime


def offered(body: dict[str, Any]) -> list[str]:
    """The function names one request offered, whatever the dialect."""
    names = []
    for tool in body.get("tools") or []:
        if "functionDeclarations" in tool:
            names.extend(d["name"] for d in tool["functionDeclarations"])
        elif "function" in tool:
            names.append(tool["function"]["name"])
        elif "name" in tool:
            names.append(tool["name"])
    return names


def _runtime(seen: list[str], audited: list[str]) -> Runtime:
    def approve(request: Any) -> Decision:
        seen.append(request.tool)
        if request.tool == "github.merge_pr":
            return Decision.deny("merging needs a human")
        return Decision.allow()

    return Runtime(tools=catalog_tools.catalog(), backend="inprocess", approve=approve,
                   audit=lambda record, event: audited.append(record.name))


def _agent(provider: str, server: Any, runtime: Runtime, mode: str) -> Agent:
    return Agent(runtime, provider=provider, mode=mode, model="fake-model",
                 endpoint=Endpoint(client=client_for(provider, server)))


@pytest.mark.parametrize("provider", DIALECTS)
def test_programmatic_search_then_call_in_the_same_script(server, provider):
    seen: list[str] = []
    audited: list[str] = []
    code = (
        "hits = search_tools('list pull requests of a repository', k=3)\n"
        "prs = github.list_prs('acme/app')\n"
        "try:\n"
        "    github.merge_pr('acme/app', 7)\n"
        "    merged = 'yes'\n"
        "except ToolDenied as e:\n"
        "    merged = e.message\n"
        "{'first': hits[0]['name'], 'prs': prs, 'merged': merged}"
    )
    server.script(script(code), say("done"))
    with _runtime(seen, audited) as runtime:
        result = _agent(provider, server, runtime, "programmatic").run("list the PRs")
    assert result.answer == "done"
    first = server.bodies()[0]
    assert offered(first)[0] == "run_script"
    text = json.dumps(first)
    assert "github: GitHub pull requests" in text  # the namespace line
    assert "def list_prs" not in text  # deferred: not in the prompt
    value = result.tool_calls  # records of the script's calls
    assert [r.name for r in value] == ["search_tools", "github.list_prs", "github.merge_pr"]
    assert seen == ["search_tools", "github.list_prs", "github.merge_pr"]
    assert audited.count("github.list_prs") >= 1 and "github.merge_pr" in audited
    reply = json.dumps(server.bodies()[1])
    assert "github.list_prs" in reply and "merging needs a human" in reply


@pytest.mark.parametrize("provider", DIALECTS)
def test_classic_found_tool_is_offered_next_turn(server, provider):
    seen: list[str] = []
    audited: list[str] = []
    server.script(
        Turn(tool_calls=[Call("search_tools", {"query": "send a message to a slack channel"})]),
        Turn(tool_calls=[Call("slack__send_message", {"channel": "dev", "text": "hi"})]),
        say("sent it"),
    )
    catalog_tools.SENT.clear()
    with _runtime(seen, audited) as runtime:
        result = _agent(provider, server, runtime, "classic").run("tell dev hi")
    assert result.answer == "sent it"
    bodies = server.bodies()
    before, after = offered(bodies[0]), offered(bodies[1])
    assert "slack__send_message" not in before
    assert set(before) == {"describe_tool", "get_weather", "search_tools"}
    assert after[:len(before)] == before  # the prefix stays: prompt caches still hit
    assert "slack__send_message" in after
    assert catalog_tools.SENT == ["dev:hi"]
    assert seen == ["search_tools", "slack.send_message"]
    assert "slack.send_message" in audited
    assert [r.name for r in result.tool_calls] == ["search_tools", "slack.send_message"]


@pytest.mark.parametrize("provider", DIALECTS)
def test_classic_deferred_tool_not_found_is_not_callable(server, provider):
    server.script(
        Turn(tool_calls=[Call("github__merge_pr", {"repo": "a/b", "number": 1})]),
        say("k"),
    )
    with _runtime([], []) as runtime:
        _agent(provider, server, runtime, "classic").run("merge")
    reply = json.dumps(server.bodies()[1])
    assert "unknown_tool" in reply
