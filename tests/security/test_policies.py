"""Declarative approval policies (``runtime/approval/policies.py``) and the CLI's
"approve all calls of this tool for this run"."""

from __future__ import annotations

import decimal
import io
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, field_validator
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.approval.policies import Policy, Rule, load_policy
from toolscript.runtime.cli.main import TerminalApproval

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
    assert text.count("Approve refund (") == 1  # asked once, then 'all'
    assert "Approve delete_order (" in text and "Approve send_email (" in text
    assert "lookup_order" not in text  # read-only: not asked
    reasons = [c.reason for c in result.tool_calls]
    assert reasons[0] == "approved at the terminal for all calls of this tool"
    assert reasons[1] == reasons[2] == "approved for all calls of this tool in this run"
    assert reasons[4] == "no answer (end of input)"


# --- attacks on policies -------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "docs" / "guide" / "approval.md"
"""The approval guide, whose first TOML block is the example policy (once the README's)."""


def readme_policy() -> str:
    """The example policy of the approval guide (its first TOML block), as written there."""
    text = README.read_text("utf-8")
    start = text.index("```toml\n") + len("```toml\n")
    block = text[start:text.index("```", start)]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in block.splitlines())


def readme_request(tool: str, **args: Any) -> ToolCallRequest:
    return ToolCallRequest(tool=tool, args=args, read_only=False, requires_approval=False,
                           call_id="c1", run_id="s1-1", session_id="s1")


@pytest.mark.parametrize("amount, allowed", [
    (20, True), (99.995, True), (99.99999, True), (0.01, True),
    (100, False), (100.0, False), (-50, False), (-0.01, False), (0, False), (1e9, False),
])
def test_the_readme_policy_means_what_it_says(amount: float, allowed: bool) -> None:
    policy = Policy.from_toml(readme_policy())
    decision = policy(readme_request("refund", order="A", amount=amount))
    assert decision.approved is allowed, decision.reason


SPOOFED_CEO = [
    "ceo@corp.example", "CEO@corp.example", "ceo@Corp.Example", "ceo@corp.example ",
    " ceo@corp.example", "ceo@corp.example.", "ceo@corp.example. ", "\tceo@corp.example\n",
    "ceo\u200b@corp.example", "c\u200deo@corp.example", "\ufeffceo@corp.example",
    "ceo@corp.example\u202e", "\u0441\u0435\u043e@corp.example",  # Cyrillic с е о
    "ce\u03bf@corp.example",  # Greek omicron
    "\uff43\uff45\uff4f@corp.example",  # full-width
    "\U0001d41c\U0001d41e\U0001d428@corp.example",  # mathematical bold
    "ceo@corp\u3002example",
]


@pytest.mark.parametrize("to", SPOOFED_CEO)
def test_deny_rules_see_through_lookalikes(make_runtime: Any, to: str) -> None:
    policy = Policy.from_toml(readme_policy() + '\n[[rules]]\ntool = "send_email"\n'
                              'action = "allow"\n')
    runtime = make_runtime(TOOLS, approve=policy, limits=Limits(tool_timeout_s=5.0))
    result = runtime.run(f"try:\n    r = send_email({to!r}, 'the numbers')\n"
                         "except ToolDenied:\n    r = 'denied'\nr")
    assert result.ok and result.value == "denied", (to, result.to_dict())


@pytest.mark.parametrize("to", SPOOFED_CEO[1:])
def test_allow_rules_need_the_exact_string(to: str) -> None:
    policy = Policy([{"tool": "send_email", "action": "allow",
                      "when": {"to": {"eq": "ceo@corp.example"}}}], default="deny")
    assert policy(readme_request("send_email", to="ceo@corp.example", body="x")).approved
    assert not policy(readme_request("send_email", to=to, body="x")).approved


def test_negated_conditions_fail_closed_in_deny_rules() -> None:
    """'deny mail to anyone but the boss': a look-alike of the boss is not the boss."""
    policy = Policy([{"tool": "send_email", "action": "deny",
                      "when": {"to": {"ne": "boss@corp.example"}}},
                     {"tool": "send_email", "action": "deny",
                      "when": {"to": {"not_in": ["boss@corp.example"]}}}], default="allow")
    assert policy(readme_request("send_email", to="boss@corp.example", body="x")).approved
    for spoof in ("BOSS@corp.example", "boss@corp.example.", "b\u043ess@corp.example"):
        assert not policy(readme_request("send_email", to=spoof, body="x")).approved, spoof
    uncheckable = Policy([{"tool": "refund", "action": "deny", "when": {"amount": {"ge": 100}}}],
                         default="allow")
    assert not uncheckable(readme_request("refund", order="A", amount="lots")).approved
    assert not uncheckable(readme_request("refund", order="A", amount=True)).approved


MISTYPED = [
    ("yaml", "rules:\n  - tool: refund\n    action: deny\n    when: {amount: {ge: 1e3}}\n",
     "rules[0].when.amount.ge must be a number, got the string '1e3'"),
    ("json", '{"rules": [{"tool": "lookup_*", "action": "allow", "read_only": "false"}]}',
     "rules[0].read_only must be true or false"),
    ("yaml", "rules:\n  - tool: [refund, delete_order]\n    action: deny\n",
     "rules[0].tool must be a tool name or fnmatch pattern"),
    ("json", '{"rules": [{"tool": "refund", "action": "deny", '
             '"when": {"note": {"exists": "false"}}}]}',
     "rules[0].when.note.exists must be true or false"),
    ("json", '{"rules": [{"tool": "refund", "action": "allow", "when": {"amount": {}}}]}',
     "rules[0].when.amount has no operators"),
    ("yaml", "rules:\n  - tool: refund\n    action: allow\n    when:\n",
     "rules[0].when is empty"),
    ("toml", '[[rules]]\ntool = "send_email"\naction = "deny"\nwhen = { to = { in = "admin" } }',
     "rules[0].when.to.in must be a list of values"),
    ("toml", '[[rules]]\ntool = "refund"\naction = "deny"\nwhen = { amount = { gt = "100" } }',
     "rules[0].when.amount.gt must be a number"),
    ("toml", '[[rules]]\ntool = "x"\naction = "deny"\nwhen = { a = { matches = "(" } }',
     "rules[0].when.a.matches is not a valid regular expression"),
    ("toml", '[budgets]\nsend_email = "3"', "budgets.send_email must be a whole number"),
    ("toml", '[budgets]\nsend_email = { limit = 3, per = "day" }',
     "budgets.send_email.per must be one of run, session, agent_run, runtime"),
    ("toml", '[budgets]\nsend_email = { limit = 3 }', "needs both limit and per"),
    ("toml", 'default = "allw"', "policy.default must be one of allow, deny, ask"),
    ("toml", '[[rules]]\ntool = "x"\nacton = "deny"', "unknown key(s) ['acton']"),
    ("toml", '[[rules]]\ntool = "x"\naction = "deny"\ncompare = "fuzzy"',
     "rules[0].compare must be one of normalized, exact"),
    ("json", '{"rules": [{"tool": "refund", "action": "deny", "when": {"amount": {"ge": NaN}}}]}',
     "NaN"),
]


@pytest.mark.parametrize("suffix, text, message", MISTYPED)
def test_mistyped_policy_files_are_refused_naming_the_key(tmp_path: Path, suffix: str,
                                                          text: str, message: str) -> None:
    path = tmp_path / f"policy.{suffix}"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as caught:
        load_policy(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_rules_made_in_python_are_checked_too() -> None:
    with pytest.raises(ConfigurationError, match="must be a number"):
        Rule("refund", "deny", when={"amount": {"ge": "1e3"}})
    with pytest.raises(ConfigurationError, match="true or false"):
        Rule("x", "allow", read_only="false")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"rules\[1\]\.when\.amount\.in"):
        Policy([{"tool": "a", "action": "allow"},
                {"tool": "refund", "action": "deny", "when": {"amount": {"in": "5"}}}])


@tool(requires_approval=True)
def wire_money(to: str, cents: int) -> str:
    """Wire money: requires approval."""
    return to


def test_policy_honours_requires_approval(make_runtime: Any) -> None:
    cases = {
        "default allow": Policy(default="allow"),
        "pattern allow": Policy([{"tool": "*", "action": "allow"}]),
        "prefix pattern": Policy([{"tool": "wire_*", "action": "allow"}]),
    }
    for name, policy in cases.items():
        runtime = make_runtime([wire_money], approve=policy, limits=Limits(tool_timeout_s=5.0))
        result = runtime.run("wire_money('x', 100)")
        assert not result.ok, name
        assert "requires approval" in result.tool_calls[0].reason, name
    asked: list[str] = []
    human = Policy(default="allow", ask=lambda request: asked.append(request.tool) or True)
    assert make_runtime([wire_money], approve=human).run("wire_money('x', 1)").ok
    assert asked == ["wire_money"]
    named = Policy([{"tool": "wire_money", "action": "allow", "when": {"cents": {"le": 500}}}],
                   default="deny")
    runtime = make_runtime([wire_money], approve=named, limits=Limits(tool_timeout_s=5.0))
    assert runtime.run("wire_money('x', 100)").ok
    assert not runtime.run("wire_money('x', 501)").ok


def budget_request(session: str, run: str, agent: str | None = None,
                   source: str = "script") -> ToolCallRequest:
    return ToolCallRequest(tool="send_email", args={"to": "a@corp.example", "body": "x"},
                           read_only=False, requires_approval=False, call_id="c",
                           run_id=run, session_id=session, source=source,
                           agent_run_id=agent, runtime_id="rt")


def test_budgets_have_explicit_scopes() -> None:
    scopes = {"run": 1, "session": 1, "agent_run": 1, "runtime": 1}
    policies = {scope: Policy(default="allow", budgets={"send_email": {"limit": 1, "per": scope}})
                for scope in scopes}
    calls = [("s1", "s1-1", "A"), ("s1", "s1-2", "A"), ("s1", "s1-direct", "A"),
             ("s2", "s2-1", "A"), ("s2", "s2-2", "B"), ("s3", "s3-1", None)]
    approved = {scope: [policy(budget_request(*call)).approved for call in calls]
                for scope, policy in policies.items()}
    assert approved == {
        "run": [True, True, True, True, True, True],
        "session": [True, False, False, True, False, True],
        "agent_run": [True, False, False, False, True, True],
        "runtime": [True, False, False, False, False, False],
    }
    denial = policies["agent_run"](budget_request("s1", "s1-3", "A")).reason
    assert "at most 1 call(s) of 'send_email' per agent run" in denial


def test_budgets_do_not_expire_while_their_scope_lives() -> None:
    policy = Policy(default="allow", budgets={"send_email": {"limit": 2, "per": "session"},
                                              "send_*": 3})
    assert policy(budget_request("victim", "victim-1")).approved
    assert policy(budget_request("victim", "victim-1")).approved
    for i in range(20_000):  # other sessions and runs: nothing of the victim's is forgotten
        policy(budget_request(f"other{i}", f"other{i}-1"))
    assert not policy(budget_request("victim", "victim-2")).approved
    per_run = Policy(default="allow", budgets={"send_email": 1})
    assert per_run(budget_request("s", "s-7")).approved
    for i in range(20_000):
        per_run(budget_request(f"x{i}", f"x{i}-1"))
    assert not per_run(budget_request("s", "s-7")).approved  # the run is still going


def test_a_budget_per_agent_run_holds_across_scripts(make_runtime: Any) -> None:
    """Four scripts in one agent run, one email allowed: budgets per run reset for
    every script; per agent run they do not."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import openai
    from fakes.model_server import FakeModelServer, say, script
    from toolscript.runtime.agent import Agent, Endpoint

    policy = Policy(default="allow", budgets={"send_email": {"limit": 1, "per": "agent_run"}})
    runtime = make_runtime(TOOLS, approve=policy, limits=Limits(tool_timeout_s=5.0))
    code = ("try:\n    r = send_email('team@corp.example', 'update')\n"
            "except ToolDenied:\n    r = 'denied'\nr")
    with FakeModelServer() as server:
        server.script(script(code), script(code), script(code), script(code), say("done"),
                      script(code), say("done"))
        client = openai.OpenAI(api_key="test-key", base_url=server.openai_base_url)
        agent = Agent(runtime, provider="openai", model="fake",
                      mode="programmatic", endpoint=Endpoint(client=client))
        first = agent.run("mail the team four times")
        second = agent.run("mail the team again")
    sent = [c for c in first.tool_calls if c.name == "send_email"]
    assert [c.approved for c in sent] == [True, False, False, False]
    assert "per agent run" in sent[1].reason
    assert [c.approved for c in second.tool_calls if c.name == "send_email"] == [True]


class Money(BaseModel):
    """A refund amount rounded half-up to cents by its own type."""

    amount: decimal.Decimal

    @field_validator("amount")
    @classmethod
    def cents(cls, value: decimal.Decimal) -> decimal.Decimal:
        return value.quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP)


REFUNDED: list[decimal.Decimal] = []


@tool
def refund_exact(order: str, money: Money) -> str:
    """Refund an exact amount."""
    REFUNDED.append(money.amount)
    return str(money.amount)


def test_no_rounding_gap_between_the_rule_and_the_tool(make_runtime: Any) -> None:
    """99.995 is below 100, but this tool rounds it to 100.00: the rule sees 100.00."""
    REFUNDED.clear()
    policy = Policy([{"tool": "refund_exact", "action": "allow",
                      "when": {"money.amount": {"gt": 0, "lt": 100}}}], default="deny")
    runtime = make_runtime([refund_exact], approve=policy, limits=Limits(tool_timeout_s=5.0))
    out = runtime.run("r = []\nfor a in [99.99, 99.994, 99.995, 99.999, '99.995']:\n    try:\n"
                      "        r.append(refund_exact('A', {'amount': a}))\n"
                      "    except ToolDenied:\n        r.append('denied')\nr")
    assert out.ok, out.to_dict()
    assert out.value == ["99.99", "99.99", "denied", "denied", "denied"]
    assert [decimal.Decimal("99.99"), decimal.Decimal("99.99")] == REFUNDED
    assert [c.args["money"]["amount"] for c in out.tool_calls][2] == "100.00"
