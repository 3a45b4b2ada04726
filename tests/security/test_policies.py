"""Declarative approval policies (``runtime/policies.py``) and the CLI's
"approve all calls of this tool for this run"."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.approval import ToolCallRequest
from toolscript.runtime.cli import TerminalApproval
from toolscript.runtime.policies import Policy, Rule, load_policy

from toolscript import ConfigurationError, Decision, Limits, tool

POLICY_TOML = """
default = "deny"

[budgets]
send_email = 2

[[rules]]
tool = "refund"
action = "allow"
when = { amount = { lt = 100 } }
reason = "small refunds are automatic"

[[rules]]
tool = "refund"
action = "ask"
reason = "refunds of 100 or more need a human"

[[rules]]
tool = "lookup_*"
action = "allow"

[[rules]]
tool = "send_email"
action = "allow"
when = { to = { endswith = "@corp.example" } }

[[rules]]
tool = "delete_*"
action = "deny"
reason = "never from a script"
"""


@tool
def refund(order: str, amount: float) -> dict[str, Any]:
    """Refund an order."""
    return {"refunded": amount}


@tool(read_only=True)
def lookup_order(order: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order": order}


@tool
def send_email(to: str, body: str) -> bool:
    """Send an email."""
    return True


@tool
def delete_order(order: str) -> bool:
    """Delete an order."""
    return True


TOOLS = [refund, lookup_order, send_email, delete_order]


def request(tool: str, run_id: str = "r1", **args: Any) -> ToolCallRequest:
    return ToolCallRequest(tool=tool, args=args, read_only=False, requires_approval=False,
                           call_id="c1", run_id=run_id, session_id="s1")


def test_rules_decide_in_order_with_reasons() -> None:
    policy = Policy.from_toml(POLICY_TOML)
    small = policy(request("refund", order="A", amount=20))
    assert small.approved and "rule 1" in small.reason and "automatic" in small.reason
    big = policy(request("refund", order="A", amount=500))
    assert not big.approved and "rule 2" in big.reason and "needs a human" in big.reason
    assert policy(request("lookup_order", order="A")).approved
    assert not policy(request("delete_order", order="A")).approved
    unknown = policy(request("transfer", amount=1))
    assert not unknown.approved and "default (deny)" in unknown.reason
    assert not policy(request("refund", order="A", amount="lots")).approved  # type mismatch


def test_ask_delegates_to_a_hook() -> None:
    asked: list[str] = []

    def human(req: ToolCallRequest) -> Decision:
        asked.append(req.tool)
        return Decision.allow("ok by Ann")

    policy = Policy.from_toml(POLICY_TOML, ask=human)
    decision = policy(request("refund", order="A", amount=500))
    assert decision.approved and "ok by Ann" in decision.reason and asked == ["refund"]


def test_budgets_are_per_run() -> None:
    policy = Policy.from_toml(POLICY_TOML)
    to = "a@corp.example"
    assert [policy(request("send_email", to=to, body="x")).approved for _ in range(3)] == [
        True, True, False]
    assert "at most 2" in policy(request("send_email", to=to, body="x")).reason
    assert policy(request("send_email", run_id="r2", to=to, body="x")).approved


def test_conditions_and_validation() -> None:
    rule = Rule("t", "allow", when={"customer.tier": {"in": ["gold"]}, "note": {"exists": False}})
    assert rule.matches(request("t", customer={"tier": "gold"}))
    assert not rule.matches(request("t", customer={"tier": "gold"}, note="x"))
    assert not rule.matches(request("t", customer="gold"))
    with pytest.raises(ConfigurationError):
        Rule("t", "maybe")
    with pytest.raises(ConfigurationError):
        Rule("t", "allow", when={"x": {"approx": 1}})
    with pytest.raises(ConfigurationError):
        Policy.from_dict({"rules": [{"tool": "t", "acton": "allow"}]})
    with pytest.raises(ConfigurationError):
        Policy.from_toml("rules = [")


def test_load_from_files(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(POLICY_TOML)
    assert load_policy(tmp_path / "p.toml").default == "deny"
    import yaml

    data = {"default": "allow", "rules": [{"tool": "refund", "action": "deny",
                                           "when": {"amount": {"ge": 1000}}}]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    policy = load_policy(tmp_path / "p.yaml")
    assert not policy(request("refund", order="A", amount=5000)).approved
    assert policy(request("refund", order="A", amount=5)).approved


def test_policy_as_approve_hook_end_to_end(make_runtime: Any) -> None:
    runtime = make_runtime(TOOLS, approve=Policy.from_toml(POLICY_TOML),
                           limits=Limits(tool_timeout_s=5.0))
    result = runtime.run(
        "out = []\n"
        "for amount in [20, 500]:\n"
        "    try:\n"
        "        out.append(refund('A1', amount)['refunded'])\n"
        "    except ToolDenied as e:\n"
        "        out.append('denied')\n"
        "for i in range(3):\n"
        "    try:\n"
        "        out.append(send_email('a@corp.example', 'hi'))\n"
        "    except ToolDenied:\n"
        "        out.append('over budget')\n"
        "out")
    assert result.ok, result.to_dict()
    assert result.value == [20, "denied", True, True, "over budget"]
    reasons = [c.reason for c in result.tool_calls]
    assert "rule 1" in reasons[0] and "rule 2" in reasons[1] and "at most 2" in reasons[-1]


def test_terminal_approval_all_calls_of_a_tool(make_runtime: Any) -> None:
    """Answering ``a`` approves every later call of that tool in the run; other
    tools are still asked; ``n`` denies; end of input denies."""
    prompts = io.StringIO()
    hook = TerminalApproval(stdin=io.StringIO("a\nn\n"), stderr=prompts)
    runtime = make_runtime(TOOLS, approve=hook, limits=Limits(tool_timeout_s=5.0))
    result = runtime.run(
        "r = [refund('A', i)['refunded'] for i in range(3)]\n"
        "try:\n    delete_order('A')\nexcept ToolDenied:\n    r.append('no delete')\n"
        "try:\n    send_email('x', 'y')\nexcept ToolDenied:\n    r.append('no email')\n"
        "r.append(lookup_order('A')['order'])\nr")
    assert result.ok, result.to_dict()
    assert result.value == [0, 1, 2, "no delete", "no email", "A"]
    text = prompts.getvalue()
    assert text.count("Approve refund(") == 1  # asked once, then 'all'
    assert "Approve delete_order(" in text and "Approve send_email(" in text
    assert "lookup_order" not in text  # read-only: not asked
    reasons = [c.reason for c in result.tool_calls]
    assert reasons[0] == "approved at the terminal for all calls of this tool"
    assert reasons[1] == reasons[2] == "approved for all calls of this tool in this run"
    assert reasons[4] == "no answer (end of input)"
