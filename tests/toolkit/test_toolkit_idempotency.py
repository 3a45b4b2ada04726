"""Idempotent writes: repeated and retried calls act once; stores in memory and SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from toolkit_helpers import error_types, run_ok
from toolscript.runtime.approval import ToolCallRequest
from toolscript.runtime.idempotency import (
    IdempotencyStore,
    InMemoryIdempotencyStore,
    SQLiteIdempotencyStore,
)
from toolscript.tools import IdempotencyKey

from toolscript import Runtime, tool
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


@tool(idempotent="global", timeout_s=1.0)
def slow_charge(account: str, cents: int) -> dict[str, object]:
    """Charge an account; the first call is slow (blocks until the retry arrives)."""
    if not ACTED:
        GATE.wait(10)
    ACTED.append((account, cents, ""))
    return {"charged": cents, "attempt": len(ACTED)}


TOOLS = [place_order, send_invoice, slow_charge]


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
        first = run_ok(rt, "place_order('K', 1, idempotency_key='order-42')")
        assert run_ok(rt, "place_order('K', 1, idempotency_key='order-42')") == first
        assert ACTED == [("K", 1, "order-42")]
        reused = rt.run("place_order('K', 2, idempotency_key='order-42')")
        assert not reused.ok and reused.error is not None
        assert "already used with other arguments" in reused.error.message
        assert len(ACTED) == 1


def test_a_failed_call_releases_its_key(backend):
    FAIL_NEXT.append(True)
    with Runtime(TOOLS, backend=backend) as rt:
        value = run_ok(rt, "try:\n    place_order('F', 1)\nexcept ToolError as e:\n"
                           "    r = e.type\n[r, place_order('F', 1)]")
    assert value[0] == "tool_exception"
    assert value[1]["order"] == 1 and len(ACTED) == 1


def test_sqlite_store_survives_a_restart(tmp_path: Path, backend):
    db = tmp_path / "keys.sqlite"
    code = "place_order('S', 1, idempotency_key='nightly-2026-08-24')"
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
