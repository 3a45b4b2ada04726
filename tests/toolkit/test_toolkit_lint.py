"""The tool-set linter: a good set is clean, a bad set gets findings that say how to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolscript.runtime.cli.main import main
from toolscript.tools import Finding, lint_tools, load_tools
from toolscript.tools.schematool import SchemaTool

from toolscript.errors import DependencyParameterWarning

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


ENVIRONMENT = '''
from typing import Annotated

from pydantic import BaseModel
from toolscript.tools import tool


class Transaction(BaseModel):
    id: int
    recipient: str
    amount: float
    subject: str


class BankAccount(BaseModel):
    balance: float
    iban: str
    transactions: list[Transaction]
    scheduled_transactions: list[Transaction]


class Address(BaseModel):
    city: str
    zip_code: str


class Depends:
    def __init__(self, env_dependency: str) -> None:
        self.env_dependency = env_dependency


@tool
def get_balance(account: BankAccount) -> float:
    """The current balance of the account, in euros, after every settled transaction.

    Use get_scheduled for transactions that are not settled yet.
    """
    return account.balance


@tool
def schedule(account: BankAccount, recipient: str, amount: float) -> int:
    """Schedule a transaction of the account for tomorrow and return its id number.

    Args:
        recipient: IBAN of the recipient, e.g. "GB29NWBK60161331926819".
        amount: Amount in euros.
    """
    account.scheduled_transactions.append(
        Transaction(id=1, recipient=recipient, amount=amount, subject="")
    )
    return 1


@tool
def get_iban(account: Annotated[BankAccount, Depends("bank_account")]) -> str:
    """The IBAN of the account the session acts for, to give to someone who pays it."""
    return account.iban


@tool
def deliver(to: Address) -> str:
    """Deliver the card to an address and return the tracking number of the letter.

    Args:
        to: the delivery address.
    """
    return "T1"
'''


def test_environment_parameters_are_reported_with_the_injection_fix(tmp_path: Path):
    with pytest.warns(DependencyParameterWarning) as registration:
        tools = load_tools(_write(tmp_path, "bank_tools", ENVIRONMENT))
    assert sorted(str(w.message).split(":")[0] for w in registration) == [
        "tool 'get_balance'", "tool 'schedule'",
    ]
    findings = [f for f in lint_tools(tools) if f.code == "param-dependency"]
    assert sorted((f.tool, f.param) for f in findings) == [
        ("get_balance", "account"), ("schedule", "account"),
    ]
    by_tool = {f.tool: f for f in findings}
    schedule = by_tool["schedule"]
    assert schedule.severity == "warning"
    assert "looks like an object the host holds" in schedule.message
    assert "transactions: list of Transaction, scheduled_transactions" in schedule.message
    assert "account.scheduled_transactions.append(...)" in schedule.message
    assert "other tools take the same records too (get_balance)" in schedule.message
    assert schedule.fix.startswith("if the host holds it, inject it: Tool(schedule, "
                                   "inject={'account': 'account'}) or annotate it "
                                   "`account: Injected[BankAccount]`")


def test_schema_only_tools_get_the_structural_finding():
    record = {"type": "object", "title": "Row",
              "properties": {"id": {"type": "integer"}, "text": {"type": "string"}}}
    store = SchemaTool(
        lambda **kw: None, name="count_rows",
        description="Count the rows of a table that match a query, with deleted rows excluded.",
        input_schema={
            "type": "object",
            "properties": {
                "table": {"$ref": "#/$defs/Table", "description": "The table."},
                "query": {"type": "string", "description": "Text to match, e.g. 'late'."},
            },
            "$defs": {"Table": {
                "type": "object", "title": "Table",
                "properties": {"rows": {"type": "array", "items": record},
                               "deleted": {"type": "array", "items": record}},
            }},
        },
    )
    findings = [f for f in lint_tools([store]) if f.code == "param-dependency"]
    assert [(f.param, f.message.split(": ", 1)[1]) for f in findings] == [
        ("table", "it holds collections of other records (rows: list of Row, deleted: list of "
                  "Row)"),
    ]
    assert "Injected[Table]" in findings[0].fix


def test_cli_lint_reports_environment_parameters(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]):
    with pytest.warns(DependencyParameterWarning):
        assert main(["tools", "--lint", _write(tmp_path, "bank_cli", ENVIRONMENT)]) == 1
    out = capsys.readouterr().out
    assert "get_balance.account: [param-dependency]" in out
    assert "fix: if the host holds it, inject it" in out
    assert "get_iban.account" not in out and "deliver.to" not in out
