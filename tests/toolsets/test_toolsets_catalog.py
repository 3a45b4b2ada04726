"""Namespaces, deferred loading and the tool block: deterministic, bounded, searchable."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import catalog_tools
import pytest
from toolscript.runtime.agent.offer import build_offer
from toolscript.tools import ToolRegistry
from toolscript.tools.catalog import Namespace

from toolscript.errors import ToolDefinitionError


def _block(extra: int = 0) -> str:
    offer = build_offer(ToolRegistry(catalog_tools.catalog(extra)), "programmatic",
                        max_result_chars=20_000)
    return json.dumps([(s.name, s.description, s.parameters) for s in offer.specs])


def test_tool_block_is_byte_identical_across_processes():
    """Same catalog, fresh interpreters with different hash seeds: the same bytes."""
    code = textwrap.dedent("""
        import sys; sys.path.insert(0, 'tests/toolsets')
        from test_toolsets_catalog import _block
        print(_block(50))
    """)
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
               for seed in ("1", "2", "3")}
    assert len(outputs) == 1
    assert outputs.pop().strip() == _block(50)


def test_tool_block_ignores_registration_order():
    items = catalog_tools.catalog(5)
    a = build_offer(ToolRegistry(items), "programmatic", max_result_chars=100).specs
    b = build_offer(ToolRegistry(list(reversed(catalog_tools.catalog(5)))), "programmatic",
                    max_result_chars=100).specs
    assert a == b


def test_prompt_size_is_bounded_as_deferred_tools_grow():
    small, big = _block(20), _block(5_000)
    assert "inventory_item" not in big
    assert abs(len(big) - len(small)) / len(small) < 0.02


def test_search_finds_deferred_tools_and_describe_gives_the_stub():
    registry = ToolRegistry(catalog_tools.catalog(200))
    assert registry.search is not None
    hits = registry.search.search("send a message to a slack channel", k=3)
    assert hits[0]["name"] == "slack.send_message"
    assert hits[0]["function"] == "slack__send_message"
    assert "def send_message(channel: str, text: str)" in registry.search.describe(
        "slack.send_message")
    assert registry.search.search("zzzz qqqq") == []
    assert registry.is_deferred("github.list_prs") and not registry.is_deferred("get_weather")


def test_namespace_name_clashes_are_refused():
    with pytest.raises(ToolDefinitionError, match="namespace"):
        ToolRegistry([Namespace("print", [catalog_tools.get_weather])])
    with pytest.raises(ToolDefinitionError, match="given twice"):
        ToolRegistry([Namespace("a", [catalog_tools.get_weather]),
                      Namespace("a", [catalog_tools.list_channels])])
    with pytest.raises(ToolDefinitionError):
        Namespace("bad__name", [])


def test_linter_scales_and_reports_name_twins_across_namespaces():
    from toolscript.tools import Tool
    from toolscript.tools.lint import lint_tools

    def send(channel: str) -> str:
        """Send a message to a channel of the team chat."""
        return channel

    fillers = [Tool(lambda: None, name=f"record_{i:05d}",
                    description=f"Inventory record number {i:05d} of the warehouse stock.")
               for i in range(3_000)]
    registry = ToolRegistry([Namespace("slack", [send]), Namespace("teams", [send]),
                             Namespace("stock", fillers)])
    findings = lint_tools(list(registry))
    twins = [f for f in findings if f.code == "name-twin"]
    assert [f.message for f in twins] == [
        "near-duplicate names across namespaces: slack.send, teams.send"]
    # identical descriptions in different namespaces: no overlap warning (the
    # namespace tells them apart); the 3,000 fillers share only common words
    assert not [f for f in findings if f.code == "overlap" and "send" in f.tool]
