"""``toolscript batch --approve defer``: paused items are recorded as ``paused``, the rest
of the job goes on; once decided, ``--resume`` finishes them without running their
earlier calls again. Each step is a new process."""

from __future__ import annotations

import json
from pathlib import Path

from refund_tools import executions
from test_cli_approvals import TOOLS, env, toolscript  # noqa: F401  (env: the fixture)

SCRIPT = """order = get_order(item["order_id"])
if item["amount"] > 100:
    result = issue_refund(item["order_id"], item["amount"])
else:
    result = "small"
result
"""
ITEMS = [{"order_id": "A-1", "amount": 5}, {"order_id": "A-2", "amount": 500},
         {"order_id": "A-3", "amount": 7}, {"order_id": "A-4", "amount": 900}]


def records(path: Path) -> dict[int, dict[str, object]]:
    latest: dict[int, dict[str, object]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        latest[int(record["index"])] = record
    return latest


def test_paused_items_wait_and_resume_finishes_them(env: dict[str, str],  # noqa: F811
                                                    tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(SCRIPT)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    out = tmp_path / "out.jsonl"
    batch = ["batch", str(tmp_path / "s.py"), "--inputs", str(tmp_path / "items.jsonl"),
             "--tools", TOOLS, "--approve", "defer", "--out", str(out), "--progress", "none",
             "--concurrency", "2"]
    first = toolscript(env, *batch)
    assert first.returncode == 1, first.stderr
    assert "2 ok, 0 failed, 2 paused" in first.stderr
    latest = records(out)
    assert [latest[i]["status"] for i in range(4)] == ["ok", "paused", "ok", "paused"]
    assert latest[0]["value"] == "small"
    paused = latest[1]
    assert paused["pending"][0]["tool"] == "issue_refund"  # type: ignore[index]
    assert str(paused["continuation"]).startswith("tsc1.")
    log = env["REFUND_LOG"]
    assert sorted(e["order_id"] for e in executions(log)) == ["A-1", "A-2", "A-3", "A-4"]

    # nothing decided yet: --resume keeps them paused and runs nothing
    waiting = toolscript(env, *batch, "--resume")
    assert waiting.returncode == 1 and "2 paused" in waiting.stderr
    assert len(executions(log)) == 4

    # one approved, one denied: --resume finishes both
    ids = {p["arguments"]["order_id"]: p["id"]
           for p in json.loads(toolscript(env, "approvals", "list", "--json").stdout)}
    assert toolscript(env, "approvals", "approve", ids["A-2"]).returncode == 0
    assert toolscript(env, "approvals", "deny", ids["A-4"], "--reason", "too much").returncode == 0
    done = toolscript(env, *batch, "--resume")
    latest = records(out)
    assert latest[1]["status"] == "ok"
    assert latest[1]["value"] == "refund of 500.00 EUR for A-2 issued"
    assert latest[3]["status"] == "error" and "too much" in str(latest[3]["error"])
    assert done.returncode == 1  # the denied item failed
    refunds = [e for e in executions(log) if e["tool"] == "issue_refund"]
    assert [e["order_id"] for e in refunds] == ["A-2"]
    assert len(executions(log)) == 5  # get_order of answered from the journal
