"""Idempotent writes: repeated and retried calls act once; stores in memory and SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from toolkit_helpers import error_types, run_ok
from toolscript.runtime.approval.hooks import ToolCallRequest
from toolscript.runtime.calls.idempotency import (
    IdempotencyStore,
    InMemoryIdempotencyStore,
    SQLiteIdempotencyStore,
)
from toolscript.tools import IdempotencyKey

from toolscript import Injected, Runtime, tool
from toolscript.errors import ToolDefinitionError

ACTED: list[tuple[str, int, str]] = []
GATE = threading.Event()
FAIL_NEXT: list[bool] = []


@tool(idempotent=True)
def place_order(sku: str, qty: int, key: IdempotencyKey) -> dict[str, object]:
    """Place an order (acts once per key)."""
    if FAIL_NEXT:
        FAIL_NEXT.pop()
        raise RuntimeError("payment backend unavailable")
    ACTED.append((sku, qty, key))
    return {"order": len(ACTED), "sku": sku, "qty": qty}


@tool(idempotent="session")
def send_invoice(customer: str) -> str:
    """Send the invoice (once per session)."""
    ACTED.append(("invoice", 0, customer))
    return f"sent #{len(ACTED)}"


@tool(idempotent="global", timeout_s=1.0, blocking=True)
def slow_charge(account: str, cents: int) -> dict[str, object]:
    """Charge an account; the first call is slow (blocks until the retry arrives)."""
    if not ACTED:
        GATE.wait(10)
    ACTED.append((account, cents, ""))
    return {"charged": cents, "attempt": len(ACTED)}


@tool(idempotent="global")
def transfer(account: str, cents: int, key: IdempotencyKey) -> dict[str, object]:
    """Move money (acts once per key, across runs and sessions)."""
    ACTED.append((account, cents, key))
    return {"transfer": len(ACTED), "account": account, "cents": cents}


TOOLS = [place_order, send_invoice, slow_charge, transfer]


@pytest.fixture(autouse=True)
def _reset() -> None:
    ACTED.clear()
    GATE.clear()
    FAIL_NEXT.clear()


def test_key_parameter_is_hidden_and_script_key_is_optional():
    props = place_order.parameters_schema["properties"]
    assert "key" not in props and "idempotency_key" in props
    assert "idempotency_key" not in place_order.parameters_schema["required"]


def test_a_script_that_calls_the_same_write_twice_acts_once(backend):
    with Runtime(TOOLS, backend=backend) as rt:
        value = run_ok(rt, "a = place_order('X1', 2)\nb = place_order('X1', 2)\n"
                           "c = place_order('X1', 3)\n[a, b, c]")
        assert value[0] == value[1] == {"order": 1, "sku": "X1", "qty": 2}
        assert value[2]["order"] == 2
        assert len(ACTED) == 2
        assert ACTED[0][2] != ACTED[1][2] and ACTED[0][2].startswith("ts-")
        run_ok(rt, "place_order('X1', 2)")  # another run: another logical call
        assert len(ACTED) == 3


def test_a_repeated_call_is_marked_replayed_in_its_record(backend):
    with Runtime(TOOLS, backend=backend) as rt:
        result = rt.run("place_order('X2', 1)\nplace_order('X2', 1)\nplace_order('X2', 5)")
    assert result.ok, result.error
    assert [call.replayed for call in result.tool_calls] == [False, True, False]
    assert result.to_dict()["tool_calls"][1]["replayed"] is True


def test_retry_after_a_timeout_returns_the_first_result(backend):
    def approve(request: ToolCallRequest) -> bool:
        if request.tool == "slow_charge":
            approvals.append(request.args)
            if len(approvals) == 2:
                GATE.set()  # the retry is on its way: let the first attempt finish
        return True

    approvals: list[object] = []
    code = ("try:\n    r = slow_charge('acct-1', 500)\nexcept ToolTimeout:\n"
            "    r = slow_charge('acct-1', 500)\nr")
    with Runtime(TOOLS, backend=backend, approve=approve) as rt:
        result = rt.run(code)
    assert result.ok, result.error
    assert result.value == {"charged": 500, "attempt": 1}
    assert error_types(result.tool_calls) == ["timeout", None]
    assert len(ACTED) == 1  # charged once


def test_session_scope_and_classic_calls():
    with Runtime(TOOLS, backend="inprocess") as rt:
        with rt.session() as s:
            first = s.call_tool("send_invoice", {"customer": "c1"})
            again = s.call_tool("send_invoice", {"customer": "c1"})
            assert first.value == again.value == "sent #1"
            assert s.run("send_invoice('c1')").value == "sent #1"  # script, same session
            twice = [s.call_tool("place_order", {"sku": "Z", "qty": 1}) for _ in range(2)]
            assert twice[0].value == twice[1].value
        with rt.session() as other:
            assert other.call_tool("send_invoice", {"customer": "c1"}).value == "sent #3"
    assert len(ACTED) == 3


def test_script_supplied_keys(backend):
    with Runtime(TOOLS, backend=backend) as rt:
        first = run_ok(rt, "transfer('K', 1, idempotency_key='order-42')")
        assert run_ok(rt, "transfer('K', 1, idempotency_key='order-42')") == first
        assert ACTED == [("K", 1, "order-42")]
        reused = rt.run("transfer('K', 2, idempotency_key='order-42')")
        assert not reused.ok and reused.error is not None
        assert "already used with other arguments" in reused.error.message
        assert len(ACTED) == 1


def test_a_script_key_lives_in_the_declared_scope(backend):
    """``idempotent=True`` is run-scoped: the same script key in another run is another call."""
    with Runtime(TOOLS, backend=backend) as rt:
        twice = run_ok(rt, "[place_order('K', 1, idempotency_key='k-1'), "
                           "place_order('K', 1, idempotency_key='k-1')]")
        assert twice[0] == twice[1]
        assert run_ok(rt, "place_order('K', 1, idempotency_key='k-1')")["order"] == 2
    assert [a[2] for a in ACTED] == ["k-1", "k-1"]


def test_a_failed_call_releases_its_key(backend):
    FAIL_NEXT.append(True)
    with Runtime(TOOLS, backend=backend) as rt:
        value = run_ok(rt, "try:\n    place_order('F', 1)\nexcept ToolError as e:\n"
                           "    r = e.type\n[r, place_order('F', 1)]")
    assert value[0] == "tool_exception"
    assert value[1]["order"] == 1 and len(ACTED) == 1


def test_sqlite_store_survives_a_restart(tmp_path: Path, backend):
    db = tmp_path / "keys.sqlite"
    code = "transfer('S', 1, idempotency_key='nightly-2026-08-24')"
    with Runtime(TOOLS, backend=backend, idempotency_store=SQLiteIdempotencyStore(db)) as rt:
        first = run_ok(rt, code)
    with Runtime(TOOLS, backend=backend, idempotency_store=SQLiteIdempotencyStore(db)) as rt:
        assert run_ok(rt, code) == first
    assert len(ACTED) == 1


def test_idempotency_key_name_is_reserved():
    def bad(idempotency_key: str) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="reserved on idempotent tools"):
        tool(idempotent=True)(bad)
    def fine(x: int) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="idempotent must be"):
        tool(idempotent="forever")(fine)  # type: ignore[call-overload]


# --- the stores ------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> IdempotencyStore:
    if request.param == "memory":
        return InMemoryIdempotencyStore()
    return SQLiteIdempotencyStore(tmp_path / "s.sqlite", poll_s=0.005)


def test_store_claim_complete_conflict_release(store: IdempotencyStore):
    assert store.claim("k", "fp1", 0).status == "acquired"
    assert store.claim("k", "fp1", 0).status == "busy"
    assert store.claim("k", "fp2", 0).status == "conflict"
    store.complete("k", {"a": [1, 2]})
    done = store.claim("k", "fp1", 0)
    assert (done.status, done.value) == ("done", {"a": [1, 2]})
    assert store.peek("k") == ("done", "fp1")
    assert store.claim("j", "fp", 0).status == "acquired"
    store.release("j")
    assert store.peek("j") is None
    assert store.claim("j", "fp", 0).status == "acquired"


def test_store_waits_for_a_running_claim(store: IdempotencyStore):
    assert store.claim("w", "fp", 0).status == "acquired"
    finished = threading.Event()

    def finish() -> None:
        finished.wait(10)
        store.complete("w", "result")

    threading.Thread(target=finish).start()
    waiter: list[object] = []
    t = threading.Thread(target=lambda: waiter.append(store.claim("w", "fp", 10)))
    t.start()
    finished.set()
    t.join(15)
    assert waiter and waiter[0].status == "done" and waiter[0].value == "result"  # type: ignore[attr-defined]


def test_sqlite_store_takes_over_an_abandoned_claim(tmp_path: Path):
    first = SQLiteIdempotencyStore(tmp_path / "l.sqlite", lease_s=0.0)
    assert first.claim("k", "fp", 0).status == "acquired"  # then its process "dies"
    second = SQLiteIdempotencyStore(tmp_path / "l.sqlite", lease_s=0.0)
    assert second.claim("k", "fp", 0).status == "acquired"
    first.close()
    second.close()


def test_done_entries_expire_after_ttl(tmp_path: Path):
    for store in (InMemoryIdempotencyStore(ttl_s=0.0),
                  SQLiteIdempotencyStore(tmp_path / "t.sqlite", ttl_s=0.0)):
        assert store.claim("k", "fp", 0).status == "acquired"
        store.complete("k", 1)
        assert store.claim("k", "fp", 0).status == "acquired"


# --- keys never cross users, tenants or scopes ------------------------------------------


@tool(idempotent="global")
def pay_invoice(invoice: str, user_id: Injected[str], key: IdempotencyKey) -> dict[str, object]:
    """Pay an invoice from the current user's account (acts once per key)."""
    ACTED.append((invoice, 0, f"{user_id}:{key}"))
    return {"paid_by": user_id, "invoice": invoice, "payment": len(ACTED)}


@tool(idempotent="global")
def publish(text: str) -> int:
    """Publish a notice (once per text, across runs)."""
    ACTED.append(("publish", 0, text))
    return len(ACTED)


def _shared_store(kind: str, tmp_path: Path) -> IdempotencyStore:
    return InMemoryIdempotencyStore() if kind == "memory" else SQLiteIdempotencyStore(
        tmp_path / "keys.sqlite")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_two_users_never_see_each_others_results(backend, kind: str, tmp_path: Path):
    store = _shared_store(kind, tmp_path)
    with Runtime([pay_invoice], backend=backend, idempotency_store=store) as rt:
        keyed = "pay_invoice('inv-1', idempotency_key='pay-1')"
        derived = "pay_invoice('inv-2')"
        alice = rt.run(keyed, context={"user_id": "alice"})
        bob = rt.run(keyed, context={"user_id": "bob"})
        assert alice.ok and bob.ok, (alice.error, bob.error)
        assert alice.value["paid_by"] == "alice" and bob.value["paid_by"] == "bob"
        assert [c.replayed for c in alice.tool_calls + bob.tool_calls] == [False, False]
        # Bob's own derived key (same arguments) runs Bob's call, not a replay of Alice's.
        assert run_ok(rt, derived, context={"user_id": "alice"})["paid_by"] == "alice"
        assert run_ok(rt, derived, context={"user_id": "bob"})["paid_by"] == "bob"
        # Each user's retry is still answered from that user's own first call.
        again = rt.run(keyed, context={"user_id": "alice"})
        assert again.value == alice.value and again.tool_calls[0].replayed
    payers = [(invoice, who.split(":")[0]) for invoice, _, who in ACTED]
    assert payers == [("inv-1", "alice"), ("inv-1", "bob"), ("inv-2", "alice"), ("inv-2", "bob")]
    store.close()


def test_a_user_cannot_probe_another_users_key_with_other_arguments(backend):
    with Runtime([pay_invoice], backend=backend) as rt:
        run_ok(rt, "pay_invoice('inv-1', idempotency_key='k')", context={"user_id": "alice"})
        # Same key, other arguments, other user: a call of its own, not a conflict report.
        probe = rt.run("pay_invoice('inv-9', idempotency_key='k')", context={"user_id": "bob"})
    assert probe.ok, probe.error
    assert probe.value["paid_by"] == "bob" and probe.value["invoice"] == "inv-9"


def test_tenants_are_separate_namespaces(backend):
    with Runtime([publish], backend=backend) as rt:
        acme = run_ok(rt, "publish('maintenance tonight')",
                      context={"idempotency_tenant": "acme"})
        other = run_ok(rt, "publish('maintenance tonight')",
                       context={"idempotency_tenant": "globex"})
        assert acme != other and len(ACTED) == 2
        with rt.session(context={"idempotency_tenant": "acme"}) as session:
            replay = session.run("publish('maintenance tonight')")
        assert replay.value == acme and replay.tool_calls[0].replayed
    assert len(ACTED) == 2


def test_a_script_key_of_one_session_is_not_seen_by_another(backend):
    with Runtime(TOOLS, backend=backend) as rt:
        code = "send_invoice('c9', idempotency_key='inv-c9')"
        with rt.session() as first, rt.session() as second:
            a = first.run(code)
            b = second.run(code)
            again = first.run(code)
    assert a.ok and b.ok and again.ok, (a.error, b.error, again.error)
    assert a.value != b.value and again.value == a.value
    assert [r.tool_calls[0].replayed for r in (a, b, again)] == [False, False, True]
