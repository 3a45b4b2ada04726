"""Approval: the default policy, hooks returning bool or Decision, hooks that
fail (closed), ApprovalRequired reaching the programmer, denials in scripts."""

from __future__ import annotations

from typing import Any

import pytest
from corehelpers import ALL_TOOLS

from toolscript import ApprovalRequired, Decision, ToolCallRequest


def test_default_policy_denies_only_requires_approval(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS)
    result = runtime.run(
        "ok = [add(1, 2), write_stamp('w', 0)]\n"
        "try:\n    send('bob', 'hi')\nexcept ToolDenied as e:\n    ok.append(['denied', str(e)])\n"
        "ok"
    )
    assert result.ok, result.error
    assert result.value[:2] == [3, {"tag": "w"}]
    assert result.value[2][0] == "denied" and "requires approval" in result.value[2][1]
    add_rec, write_rec, send_rec = result.tool_calls
    assert (add_rec.approved, add_rec.decided_by) == (True, "policy")
    assert (write_rec.approved, write_rec.decided_by) == (True, "policy")
    assert (send_rec.approved, send_rec.decided_by, send_rec.ok) == (False, "policy", False)
    assert "requires approval" in send_rec.reason
    assert send_rec.error.type == "denied"


def test_uncaught_denial_ends_the_run_as_tool_error(make_runtime: Any) -> None:
    result = make_runtime(ALL_TOOLS).run("send('bob')\n'not reached'")
    assert not result.ok
    assert result.error.type == "tool_error"
    assert result.error.message.startswith("ToolDenied: ")
    assert result.error.details.get("tool_error_type") == "denied"


def test_denial_is_a_permission_error_in_the_script(make_runtime: Any) -> None:
    result = make_runtime(ALL_TOOLS).run(
        "try:\n    send('bob')\nexcept PermissionError as e:\n    r = [e.type, e.tool]\nr")
    assert result.value == ["denied", "send"]


def test_hook_sees_every_call_with_validated_args(make_runtime: Any) -> None:
    seen: list[ToolCallRequest] = []

    def hook(request: ToolCallRequest) -> bool:
        seen.append(request)
        return True

    runtime = make_runtime(ALL_TOOLS, approve=hook)
    result = runtime.run("[add(1, b=2), send('bob', body='x'), add('bad')]")
    assert not result.ok  # add('bad') fails validation
    # Invalid arguments never reach the hook; approved ones do, with their context.
    assert [(r.tool, r.args) for r in seen] == [
        ("add", {"a": 1, "b": 2}), ("send", {"to": "bob", "body": "x"})]
    assert seen[1].requires_approval is True and seen[1].read_only is False
    assert seen[0].read_only is True
    assert seen[0].call_id == result.tool_calls[0].id
    assert seen[0].run_id == result.run_id
    assert result.tool_calls[1].approved is True and result.tool_calls[1].decided_by == "hook"


def test_hook_returning_bool(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS, approve=lambda request: request.tool != "add")
    result = runtime.run(
        "out = []\nfor f in [lambda: add(1), lambda: send('x'), lambda: echo(3)]:\n"
        "    try:\n        out.append(f())\n    except ToolDenied as e:\n"
        "        out.append('denied')\nout"
    )
    assert result.value == ["denied", {"status": "sent", "to": "x"}, 3]
    assert [r.approved for r in result.tool_calls] == [False, True, True]
    assert all(r.decided_by == "hook" for r in result.tool_calls)


def test_hook_decision_reason_is_recorded_and_reaches_the_script(make_runtime: Any) -> None:
    def hook(request: ToolCallRequest) -> Decision:
        if request.args.get("to") == "ceo":
            return Decision.deny("not the CEO, ever")
        return Decision.allow("whitelisted recipient")

    runtime = make_runtime(ALL_TOOLS, approve=hook)
    result = runtime.run(
        "r = [send('team')['status']]\n"
        "try:\n    send('ceo')\nexcept ToolDenied as e:\n    r.append(str(e))\nr"
    )
    assert result.ok, result.error
    assert result.value[0] == "sent"
    assert "not the CEO, ever" in result.value[1]
    allowed, denied = result.tool_calls
    assert (allowed.approved, allowed.reason) == (True, "whitelisted recipient")
    assert (denied.approved, denied.reason, denied.ok) == (False, "not the CEO, ever", False)


@pytest.mark.parametrize("answer", [None, "yes", 1, Decision], ids=repr)
def test_hook_returning_a_non_decision_denies(make_runtime: Any, answer: Any) -> None:
    runtime = make_runtime(ALL_TOOLS, approve=lambda request: answer)
    result = runtime.run("add(1)")
    assert result.error.type == "tool_error"
    record = result.tool_calls[0]
    assert record.approved is False and record.ok is False
    assert "not bool or Decision" in record.reason


def test_hook_raising_denies_fail_closed(make_runtime: Any) -> None:
    def hook(request: ToolCallRequest) -> bool:
        raise RuntimeError("policy service unreachable")

    runtime = make_runtime(ALL_TOOLS, approve=hook)
    result = runtime.run("try:\n    add(1)\nexcept ToolDenied as e:\n    r = str(e)\nr")
    assert result.ok, result.error
    assert "policy service unreachable" in result.value
    record = result.tool_calls[0]
    assert (record.approved, record.ok, record.error.type) == (False, False, "denied")
    assert "RuntimeError" in record.reason


def test_approval_required_propagates_to_the_programmer(make_runtime: Any) -> None:
    ran: list[str] = []

    def hook(request: ToolCallRequest) -> bool:
        if request.tool == "send":
            raise ApprovalRequired(f"a human must approve {request.tool}")
        ran.append(request.tool)
        return True

    runtime = make_runtime(ALL_TOOLS, approve=hook)
    with runtime.session() as session:
        with pytest.raises(ApprovalRequired, match="a human must approve send"):
            # Not even except BaseException keeps the run going.
            session.run(
                "add(1)\n"
                "try:\n    send('bob')\nexcept BaseException:\n    pass\n"
                "add(2)\n"
            )
        assert ran == ["add"]
        # The session is still usable afterwards.
        assert session.run("add(40, 2)").value == 42


def test_approval_required_from_parallel(make_runtime: Any) -> None:
    def hook(request: ToolCallRequest) -> bool:
        if request.tool == "send":
            raise ApprovalRequired("stop")
        return True

    runtime = make_runtime(ALL_TOOLS, approve=hook)
    with pytest.raises(ApprovalRequired):
        runtime.run("parallel([(add, [1]), (send, ['x'])], return_exceptions=True)")


def test_hook_applies_to_direct_calls(make_runtime: Any) -> None:
    runtime = make_runtime(ALL_TOOLS, approve=lambda request: Decision.deny("read-only mode"))
    with runtime.session() as session:
        record = session.call_tool("add", {"a": 1})
        assert (record.approved, record.reason, record.error.type) == (
            False, "read-only mode", "denied")
