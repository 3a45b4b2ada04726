"""What the operator wrote is what is in force: policy rules that name tools, and
configuration files that are found rather than named.

* A policy rule or budget naming ``Send_Email`` never matches ``send_email``
  (names are exact): when the policy meets its tools that is an error, and a
  name matching no tool at all warns.
* A ``toolscript.toml`` found in a parent directory, or one the user does not
  own, never loosens approval or loads code, and every command says which
  configuration and profile are in force.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.approval.plan import PlanApproval, analyze
from toolscript.runtime.approval.policies import Policy, load_policy
from toolscript.tools import tool

from toolscript.errors import ConfigurationError, PolicyWarning

ROOT = Path(__file__).resolve().parents[2]
SENT: list[str] = []


@tool
def send_email(to: str) -> str:
    """Send an email."""
    SENT.append(to)
    return "sent"


@tool(read_only=True)
def lookup(user: str) -> str:
    """Look a user up."""
    return user


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


# --- policy rules name registered tools ----------------------------------------------

TYPOS = ["Send_Email", "SEND_EMAIL", "send-email", "s\u0435nd_email", "sendemail",
         "Send_*", "SEND_E?AIL"]


@pytest.mark.parametrize("name", TYPOS)
@pytest.mark.parametrize("where", ["rule", "budget"])
def test_a_policy_name_that_misses_a_tool_by_case_is_an_error(make_runtime: Any, name: str,
                                                              where: str) -> None:
    data: dict[str, Any] = {"default": "allow"}
    if where == "rule":
        data["rules"] = [{"tool": name, "action": "deny"}]
    else:
        data["budgets"] = {name: 0}
    policy = Policy.from_dict(data)
    with pytest.raises(ConfigurationError, match="did you mean 'send_email'"):
        make_runtime([send_email, lookup], approve=policy)


def test_the_typo_is_caught_however_the_policy_is_installed(make_runtime: Any,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('default = "allow"\n[[rules]]\ntool = "Send_Email"\naction = "deny"\n')
    policy = load_policy(path)
    rt = make_runtime([send_email, lookup])
    with pytest.raises(ConfigurationError, match="Send_Email"):
        rt.approve = policy
    plan = analyze("lookup('a')", rt.tools)
    with pytest.raises(ConfigurationError, match="Send_Email"):
        rt.approve = PlanApproval(plan, fallback=policy, session="s1")  # a plan's fallback, too
    assert rt.approve is None  # a refused policy is not installed


def test_a_policy_name_matching_no_tool_warns(make_runtime: Any) -> None:
    policy = Policy.from_dict({"default": "deny", "rules": [
        {"tool": "wire_money", "action": "deny"}, {"tool": "delete_*", "action": "deny"},
        {"tool": "send_email", "action": "allow"}]})
    with pytest.warns(PolicyWarning) as caught:
        rt = make_runtime([send_email, lookup], approve=policy)
    assert sorted(str(w.message).split("names ")[1].split(",")[0] for w in caught) == [
        "'delete_*'", "'wire_money'"]
    assert rt.run("send_email('a')").ok


def test_a_policy_naming_its_tools_exactly_is_quiet(make_runtime: Any) -> None:
    policy = Policy.from_dict({"default": "deny", "budgets": {"send_*": 2},
                               "rules": [{"tool": "send_email", "action": "allow"},
                                         {"tool": "*", "read_only": True, "action": "allow"}]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rt = make_runtime([send_email, lookup], approve=policy)
    assert rt.run("send_email('a')").ok
