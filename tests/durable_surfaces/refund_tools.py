"""Tools of the durable-approval surface tests: every execution is appended to the
file named by ``$REFUND_LOG`` (one JSON line each), so a test counts executions
across processes: a call answered from the journal must not add a line."""

from __future__ import annotations

import json
import os

from toolscript.tools import tool


def _log(tool_name: str, **args: object) -> None:
    path = os.environ.get("REFUND_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool_name, **args}) + "\n")
            out.flush()
            os.fsync(out.fileno())


@tool(read_only=True)
def get_order(order_id: str) -> dict[str, object]:
    """An order: its customer and amount (read-only).

    Args:
        order_id: e.g. "A-1042".
    """
    _log("get_order", order_id=order_id)
    return {"order_id": order_id, "customer": "customer@example.com", "amount_eur": 1250.0}


@tool(requires_approval=True)
def issue_refund(order_id: str, amount_eur: float, note: str = "") -> str:
    """Refund an order (a write that needs a person's approval).

    Args:
        order_id: the order.
        amount_eur: how much to refund.
        note: a note for the ledger.
    """
    _log("issue_refund", order_id=order_id, amount_eur=amount_eur, note=note)
    return f"refund of {amount_eur:.2f} EUR for {order_id} issued"


def executions(path: str) -> list[dict[str, object]]:
    """The executions logged so far."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
