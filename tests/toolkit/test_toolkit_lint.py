"""The tool-set linter: a good set is clean, a bad set gets findings that say how to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolscript.runtime.cli import main
from toolscript.tools import Finding, lint_tools, load_tools
from toolscript.tools.schematool import SchemaTool

GOOD = '''
from typing import Annotated, Literal
from toolscript.tools import Field, tool

@tool(read_only=True)
def get_daily_revenue(store_id: str, date: Annotated[str, Field(format="date")]) -> dict:
    """Revenue of one store on one day, in yuan, with the number of orders.

    Use it for a single store and day; use list_stores first to get valid ids.

    Args:
        store_id: Store id, e.g. "ST001".
        date: ISO date, e.g. "2026-08-24".
    """
    return {}

@tool(read_only=True)
def list_stores(region: Literal["north", "south"] | None = None, limit: int = 50) -> list:
    """The ids and names of the stores, optionally only those of one region.

    Call it before asking for revenue; it never returns closed stores.

    Args:
        region: only stores of this region.
        limit: at most this many stores.
    """
    return []
'''

BAD = '''
from toolscript.tools import tool

@tool
def get_data(id: str, include_archived: bool, exclude_archived: bool, limit: int) -> list:
    """Gets data."""
    return []

@tool
def fetch_customer_orders(customer: str) -> list:
    """Return the orders of a customer with their totals and their delivery status for review."""
    return []

@tool
def list_customer_orders(customer: str) -> list:
    """Return the orders of a customer with their totals and their delivery status."""
    return []
'''


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return str(path)


def test_a_good_tool_set_is_clean(tmp_path: Path):
    assert lint_tools(load_tools(_write(tmp_path, "good_tools", GOOD))) == []


def test_a_bad_tool_set_gets_every_finding_with_a_fix(tmp_path: Path):
    findings = lint_tools(load_tools(_write(tmp_path, "bad_tools", BAD)))
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    assert {"description-short", "param-undescribed", "param-format", "bool-pair",
            "required-could-default", "overlap"} <= set(by_code)
    assert [f.tool for f in by_code["description-short"]] == ["get_data"]
    assert ("get_data", "id") in {(f.tool, f.param) for f in by_code["param-format"]}
    assert by_code["bool-pair"][0].param == "include_archived"
    assert {f.param for f in by_code["required-could-default"]} >= {"include_archived", "limit"}
    overlap = by_code["overlap"][0]
    assert {overlap.tool, "list_customer_orders"} == {"fetch_customer_orders",
                                                      "list_customer_orders"}
    assert all(f.fix for f in findings)  # each finding says how to fix it


def test_too_many_tools_without_namespacing():
    def make(name: str, description: str) -> SchemaTool:
        return SchemaTool(lambda **kw: None, name=name, description=description,
                          input_schema={"type": "object", "properties": {}})

    flat = [make(f"tool{i}", f"Does thing number {i} for the user when asked.") for i in range(25)]
    assert [f.code for f in lint_tools(flat) if f.code == "too-many-tools"] == ["too-many-tools"]
    spaced = [make(f"{ns}_op{i}", f"Operation {i} of the {ns} system for the user.")
              for ns in ("crm", "billing", "stock") for i in range(8)]
    assert "too-many-tools" not in {f.code for f in lint_tools(spaced)}


def test_names_that_break_provider_rules():
    class Raw:
        def __init__(self, name: str) -> None:
            self.name = name
            self.description = "A tool with a long enough description for the linter rules here."
            self.parameters_schema = {"type": "object", "properties": {}}

    findings = {f.tool: f for f in lint_tools([Raw("_hidden"), Raw("a" * 70), Raw("run_script")])
                if f.code == "name-provider"}
    assert findings["_hidden"].severity == "warning" and "bedrock" in findings["_hidden"].message
    assert findings["a" * 70].severity == "error"
    assert findings["run_script"].severity == "error"


def test_cli_lint(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["tools", "--lint", _write(tmp_path, "good_cli", GOOD)]) == 0
    assert "no findings" in capsys.readouterr().out
    assert main(["tools", "--lint", _write(tmp_path, "bad_cli", BAD)]) == 1
    out = capsys.readouterr().out
    assert "[bool-pair]" in out and "fix: replace them with one enum" in out
    assert main(["tools", "--lint", "--json", str(tmp_path / "bad_cli.py")]) == 1
    assert {f["code"] for f in json.loads(capsys.readouterr().out)} >= {"overlap"}
