"""Two-phase writes: the approval hook sees exactly the plan that is then committed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from toolkit_helpers import error_types, run_ok
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.tools import Injected, load_tools, render_stubs, two_phase

from toolscript import Decision, Runtime
from toolscript.errors import ToolDefinitionError

COMMITTED: list[Any] = []


def transfer(src: str, dst: str, amount_cents: int, user_id: Injected[str]) -> dict[str, Any]:
    """Plan a transfer between two accounts of the current user, fee included."""
    return {"from": src, "to": dst, "amount_cents": amount_cents, "fee_cents": 30,
            "by": user_id}


@dataclass
class Plan:
    """The plan as the commit function wants it."""

    to: str
    amount_cents: int
    fee_cents: int
    by: str


def execute_transfer(plan: dict[str, Any]) -> dict[str, Any]:
    """Move the money."""
    COMMITTED.append(plan)
    return {"status": "done", "transfer_no": len(COMMITTED)}


PAIR = two_phase(transfer, execute_transfer)


class Hook:
    """An approval hook that records what it saw and refuses big transfers."""

    def __init__(self) -> None:
        self.seen: list[ToolCallRequest] = []

    def __call__(self, request: ToolCallRequest) -> Decision:
        self.seen.append(request)
        if request.tool == "commit_transfer" and request.args["plan"]["amount_cents"] > 10_000:
            return Decision.deny("transfers over 100.00 need a person")
        return Decision.allow()


@pytest.fixture(autouse=True)
def _reset() -> None:
    COMMITTED.clear()


def _runtime(backend: str, hook: Hook | None) -> Runtime:
    return Runtime([*PAIR], backend=backend, approve=hook, context={"user_id": "u1"})


def test_the_pair_as_the_model_sees_it():
    assert [t.name for t in PAIR] == ["prepare_transfer", "commit_transfer"]
    assert PAIR.prepare.read_only and not PAIR.prepare.requires_approval
    assert PAIR.commit.requires_approval and not PAIR.commit.read_only
    assert list(PAIR.commit.parameters_schema["properties"]) == ["plan_id"]
    stubs = render_stubs(PAIR)
    assert "def prepare_transfer(src: str, dst: str, amount_cents: int) -> PreparedTransfer:" in (
        stubs
    )
    assert "def commit_transfer(plan_id: str)" in stubs
    assert "Nothing changes yet" in stubs


def test_script_prepares_hook_sees_the_plan_then_commit_runs_it(backend):
    hook = Hook()
    with _runtime(backend, hook) as rt:
        value = run_ok(rt, "p = prepare_transfer('A', 'B', 500)\n"
                           "assert p['plan']['fee_cents'] == 30\n"
                           "c = commit_transfer(p['plan_id'])\n[p, c]")
    prepared, committed = value
    assert committed == {"status": "done", "transfer_no": 1}
    commit_request = next(r for r in hook.seen if r.tool == "commit_transfer")
    assert commit_request.args == {"plan_id": prepared["plan_id"], "plan": prepared["plan"]}
    assert [prepared["plan"]] == COMMITTED  # exactly what the hook was shown
    assert prepared["plan"]["by"] == "u1"  # prepare got the injected user


def test_a_denied_commit_changes_nothing(backend):
    with _runtime(backend, Hook()) as rt:
        result = rt.run("p = prepare_transfer('A', 'B', 50_000)\n"
                        "try:\n    commit_transfer(p['plan_id'])\nexcept ToolDenied as e:\n"
                        "    r = str(e)\nr")
    assert result.ok and "need a person" in result.value
    assert COMMITTED == []
    assert error_types(result.tool_calls) == [None, "denied"]


def test_without_a_hook_commits_are_denied_by_default(backend):
    with _runtime(backend, None) as rt:
        result = rt.run("commit_transfer(prepare_transfer('A', 'B', 5)['plan_id'])")
    assert not result.ok and COMMITTED == []


def test_a_plan_cannot_be_forged_or_replayed_elsewhere(backend):
    with _runtime(backend, Hook()) as rt:
        with rt.session() as s:
            plan_id = s.run("prepare_transfer('A', 'B', 5)['plan_id']").value
            # The script can only pass an id; editing its copy of the plan changes nothing.
            value = s.run(f"p = prepare_transfer('A', 'B', 5)\np['plan']['amount_cents'] = 1\n"
                          f"commit_transfer('{plan_id}')").value
            assert value == {"status": "done", "transfer_no": 1}
            assert COMMITTED[0]["amount_cents"] == 5
            again = s.run(f"commit_transfer('{plan_id}')").value
            assert again == value and len(COMMITTED) == 1  # committed at most once
        with rt.session() as other:
            stolen = other.run(f"commit_transfer('{plan_id}')")
            assert not stolen.ok and "unknown or expired plan_id" in stolen.error.message
            forged = other.run("commit_transfer('plan_made_up')")
            assert not forged.ok
    assert len(COMMITTED) == 1


def test_classic_mode_prepare_and_commit():
    hook = Hook()
    with _runtime("inprocess", hook) as rt, rt.session() as s:
        prepared = s.call_tool("prepare_transfer", {"src": "A", "dst": "B", "amount_cents": 7})
        assert prepared.ok and prepared.value["next"].startswith("nothing has changed yet")
        committed = s.call_tool("commit_transfer", {"plan_id": prepared.value["plan_id"]})
        assert committed.ok and committed.value["transfer_no"] == 1
    assert hook.seen[-1].args["plan"] == prepared.value["plan"] == COMMITTED[0]


def test_commit_converts_the_plan_to_its_annotation():
    seen: list[Any] = []

    def plan_refund(order: str, cents: int) -> dict[str, Any]:
        return {"to": order, "amount_cents": cents, "fee_cents": 0, "by": "system"}

    def refund(plan: Plan) -> str:
        seen.append(plan)
        return "ok"

    pair = two_phase(plan_refund, refund, name="refund")
    with Runtime([*pair], backend="inprocess", approve=lambda r: True) as rt:
        assert run_ok(rt, "commit_refund(prepare_refund('o1', 99)['plan_id'])") == "ok"
    assert seen == [Plan(to="o1", amount_cents=99, fee_cents=0, by="system")]


def test_two_phase_definition_errors(tmp_path):
    with pytest.raises(ToolDefinitionError, match="exactly one required argument"):
        two_phase(transfer, lambda a, b: None)
    module = tmp_path / "pair_tools.py"
    module.write_text(
        "from toolscript.tools import two_phase\n"
        "def plan(x: int) -> dict:\n    return {'x': x}\n"
        "def do(p: dict) -> int:\n    return 1\n"
        "PAIR = two_phase(plan, do, name='thing')\n"
    )
    assert [t.name for t in load_tools(str(module))] == ["prepare_thing", "commit_thing"]
