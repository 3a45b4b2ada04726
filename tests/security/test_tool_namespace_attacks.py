"""Attacks on the tool namespace objects of issue 28 (``github.list_prs`` in scripts):
no route from one to a real class, its stubs or a callback; nothing can be set."""

from __future__ import annotations

import pytest
from toolscript.tools import Tool
from toolscript.tools.catalog import Namespace

from toolscript import Runtime

CALLS: list[str] = []


def list_prs(repo: str) -> list[str]:
    """List pull requests."""
    CALLS.append(repo)
    return [repo]


@pytest.fixture
def runtime(backend_name: str):
    rt = Runtime(tools=[Namespace("gh", [Tool(list_prs, read_only=True)])], backend=backend_name)
    yield rt
    rt.close()


@pytest.mark.parametrize("code", [
    "gh._stubs",
    "gh._name",
    "gh.__dict__",
    "gh.__class__.__getattr__",
    "gh.__getattr__('list_prs')",
    "getattr(gh, '_stubs')",
    "type(gh)('gh', {})",
    "type(gh).__init__",
    "object.__getattribute__(gh, '_stubs')",
    "vars(gh)",
    "gh.__slots__",
    "type(gh.list_prs)('x', [], True, '', print)",
    "gh.list_prs._call_host",
])
def test_no_route_to_internals(runtime, code):
    result = runtime.run(code)
    assert not result.ok, (code, result.value)


@pytest.mark.parametrize("code", [
    "gh.list_prs = print",
    "gh.other = 1",
    "del gh.list_prs",
    "setattr(gh, 'list_prs', None)",
])
def test_namespace_is_read_only(runtime, code):
    result = runtime.run(code + "\ngh.list_prs('a/b')")
    assert not result.ok
    assert runtime.run("gh.list_prs('x')").value == ["x"]


def test_unknown_and_private_member_is_tool_not_found(runtime):
    result = runtime.run(
        "out = []\n"
        "for name in ['nope', 'list_prs_']:\n"
        "    try:\n"
        "        getattr(gh, name)\n"
        "    except ToolNotFound as e:\n"
        "        out.append(e.type)\n"
        "out, dir(gh), repr(gh), type(gh).__name__")
    assert result.ok, result.error
    assert result.value == [["unknown_tool", "unknown_tool"], ["list_prs"],
                            "<tool namespace gh: 1 tools>", "tool_namespace"]


def test_calls_go_through_the_host_path_with_the_qualified_name(runtime):
    result = runtime.run("gh.list_prs('acme/app')")
    assert result.ok and result.value == ["acme/app"]
    assert [r.name for r in result.tool_calls] == ["gh.list_prs"]
