"""Approval policies over namespaced tools: rules name tools by their dotted names
(``github.merge_pr``, ``github.*``, ``*.merge_pr``), a script's call and a classic
model's wire-name call (``slack__send_message``) meet the same rule, and a rule
that names a namespaced tool by its short or wire name is a configuration error
instead of a rule that silently never applies (it would fail open)."""

from __future__ import annotations

import json
import warnings

import catalog_tools
import pytest
from agent_helpers import DIALECTS, client_for
from fakes.model_server import Call, Turn, say
from toolscript.runtime.agent import Agent, Endpoint
from toolscript.runtime.approval.policies import Policy

from toolscript import Runtime
from toolscript.errors import ConfigurationError, PolicyWarning

MERGE = "github.merge_pr('acme/app', 7)"
LIST = "slack.list_channels()"


def _policy(tool: str, action: str = "deny", default: str = "allow", extra: str = "") -> Policy:
    return Policy.from_toml(
        f'default = "{default}"\n[[rules]]\ntool = "{tool}"\naction = "{action}"\n{extra}')


@pytest.mark.parametrize("pattern", ["github.merge_pr", "github.*", "*.merge_pr", "*merge*"])
def test_a_deny_rule_on_the_dotted_name_or_a_pattern_stops_the_call(backend_name, pattern):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PolicyWarning)
        runtime = Runtime(tools=catalog_tools.catalog(), backend=backend_name,
                          approve=_policy(pattern))
    with runtime:
        merged = runtime.run(MERGE)
        listed = runtime.run(LIST)
        caught = runtime.run(f"try:\n    {MERGE}\nexcept ToolDenied as e:\n    r = 'denied'\nr")
    assert not merged.ok and merged.error.details["tool_error_type"] == "denied", merged.error
    assert listed.ok, listed.error
    assert caught.ok and caught.value == "denied"


@pytest.mark.parametrize("name", ["merge_pr", "merge_*", "github__merge_pr", "github__*",
                                  "Merge_PR", "GitHub.merge_pr"])
def test_a_rule_naming_a_namespaced_tool_by_another_name_is_refused(name):
    with pytest.raises(ConfigurationError, match=r"github\.merge_pr"):
        Runtime(tools=catalog_tools.catalog(), backend="inprocess", approve=_policy(name))


def test_a_budget_naming_a_namespaced_tool_by_its_short_name_is_refused():
    policy = Policy.from_toml('default = "allow"\n[budgets]\nsend_message = 1\n')
    with pytest.raises(ConfigurationError, match=r"slack\.send_message"):
        Runtime(tools=catalog_tools.catalog(), backend="inprocess", approve=policy)


def test_a_budget_on_a_namespace_pattern_counts_its_calls():
    policy = Policy.from_toml('default = "allow"\n[budgets]\n"slack.*" = 2\n')
    catalog_tools.SENT.clear()
    with Runtime(tools=catalog_tools.catalog(), backend="inprocess", approve=policy) as runtime:
        result = runtime.run("for i in range(3):\n    slack.send_message('dev', str(i))\n")
    assert not result.ok
    assert catalog_tools.SENT == ["dev:0", "dev:1"]


def test_conditions_see_the_arguments_of_a_namespaced_call():
    policy = _policy("slack.send_message", "allow", "deny",
                     'when = { channel = "dev" }')
    catalog_tools.SENT.clear()
    with Runtime(tools=catalog_tools.catalog(), backend="inprocess", approve=policy) as runtime:
        ok = runtime.run("slack.send_message('dev', 'hi')")
        refused = runtime.run("slack.send_message('general', 'hi')")
    assert ok.ok, ok.error
    assert not refused.ok and refused.error.details["tool_error_type"] == "denied"
    assert catalog_tools.SENT == ["dev:hi"]


@pytest.mark.parametrize("provider", DIALECTS)
def test_a_classic_models_wire_name_call_meets_the_dotted_rule(server, provider):
    server.script(
        Turn(tool_calls=[Call("search_tools", {"query": "send a message to a slack channel"})]),
        Turn(tool_calls=[Call("slack__send_message", {"channel": "dev", "text": "hi"})]),
        say("could not"),
    )
    catalog_tools.SENT.clear()
    with Runtime(tools=catalog_tools.catalog(), backend="inprocess",
                 approve=_policy("slack.*")) as runtime:
        agent = Agent(runtime, provider=provider, mode="classic", model="fake-model",
                      endpoint=Endpoint(client=client_for(provider, server)))
        result = agent.run("tell dev hi")
    assert result.answer == "could not"
    assert catalog_tools.SENT == []
    assert "denied" in json.dumps(server.bodies()[2])
