"""``toolscript run --approve defer`` and ``toolscript approvals``, as a user runs them:
each step a new process (the one that paused is gone when the run resumes)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from refund_tools import executions

TOOLS = str(Path(__file__).with_name("refund_tools.py"))
SCRIPT = """order = get_order("A-1042")
print("refunding", order["order_id"])
result = issue_refund(order["order_id"], order["amount_eur"], note="late delivery")
result
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: own HOME, journal, continuation key and execution log."""
    return {**os.environ, "HOME": str(tmp_path / "home"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "TOOLSCRIPT_JOURNAL": str(tmp_path / "journal.sqlite3"),
            "TOOLSCRIPT_CONTINUATION_KEY": "k" * 32,
            "REFUND_LOG": str(tmp_path / "executions.jsonl")}


def toolscript(env: dict[str, str], *args: str, cwd: Path | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolscript", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def pause(env: dict[str, str], tmp_path: Path) -> str:
    """Run the refund script under --approve defer; the id of its pending call."""
    script = tmp_path / "refund.py"
    script.write_text(SCRIPT)
    run = toolscript(env, "run", str(script), "--tools", TOOLS, "--approve", "defer",
                     "--backend", "subprocess")
    assert run.returncode == 3, run.stderr
    assert "paused: 1 call(s) wait for approval" in run.stderr
    assert "continuation: tsc1." in run.stderr and run.stdout == ""
    listed = toolscript(env, "approvals", "list", "--json")
    [pending] = json.loads(listed.stdout)
    assert pending["tool"] == "issue_refund"
    assert pending["arguments"] == {"order_id": "A-1042", "amount_eur": 1250.0,
                                    "note": "late delivery"}
    return str(pending["id"])


def test_pause_then_approve_and_resume_in_new_processes(env: dict[str, str],
                                                        tmp_path: Path) -> None:
    log = env["REFUND_LOG"]
    pending_id = pause(env, tmp_path)
    assert [e["tool"] for e in executions(log)] == ["get_order"]  # the refund waits
    shown = toolscript(env, "approvals", "show", pending_id)
    assert '"note": "late delivery"' in shown.stdout and "undecided" in shown.stdout
    table = toolscript(env, "approvals", "list")
    assert pending_id in table.stdout and "issue_refund" in table.stdout
    done = toolscript(env, "approvals", "approve", pending_id, "--reason", "checked",
                      "--resume", "--tools", TOOLS, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] and result["value"] == "refund of 1250.00 EUR for A-1042 issued"
    # get_order was answered from the journal; the refund ran once
    assert [e["tool"] for e in executions(log)] == ["get_order", "issue_refund"]
    assert toolscript(env, "approvals", "list").stdout.strip() == "nothing waits for approval"
    again = toolscript(env, "approvals", "approve", pending_id, "--resume", "--tools", TOOLS)
    assert again.returncode == 2 and "no pending call" in again.stderr
    assert len(executions(log)) == 2


def test_deny_reaches_the_script_and_nothing_runs(env: dict[str, str], tmp_path: Path) -> None:
    pending_id = pause(env, tmp_path)
    denied = toolscript(env, "approvals", "deny", pending_id, "--reason", "not this customer",
                        "--resume", "--tools", TOOLS, "--json")
    assert denied.returncode == 1, denied.stderr
    result = json.loads(denied.stdout)
    assert result["error"]["type"] == "tool_error", result["error"]  # uncaught ToolDenied
    assert "ToolDenied" in result["error"]["message"], result["error"]
    assert "not this customer" in result["error"]["message"]
    [_, refund] = result["tool_calls"]
    assert refund["approved"] is False and refund["reason"] == "not this customer"
    assert [e["tool"] for e in executions(env["REFUND_LOG"])] == ["get_order"]


def test_deciding_without_resume_keeps_the_run_for_later(env: dict[str, str],
                                                         tmp_path: Path) -> None:
    pending_id = pause(env, tmp_path)
    stored = toolscript(env, "approvals", "approve", pending_id)
    assert stored.returncode == 0 and "every call of run" in stored.stderr
    assert "approved" in toolscript(env, "approvals", "show", pending_id).stdout
    twice = toolscript(env, "approvals", "deny", pending_id, "--reason", "x")
    assert twice.returncode == 2 and "already decided" in twice.stderr


def test_resume_with_other_tools_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    pending_id = pause(env, tmp_path)
    other = tmp_path / "other_tools.py"
    other.write_text(Path(TOOLS).read_text().replace('"""An order: its', '"""An ORDER: its'))
    refused = toolscript(env, "approvals", "approve", pending_id, "--resume",
                         "--tools", str(other))
    assert refused.returncode == 2 and "tool catalog differs" in refused.stderr
    assert [e["tool"] for e in executions(env["REFUND_LOG"])] == ["get_order"]


@pytest.fixture
def served(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``toolscript approvals serve --port 0 --tools ...`` and the address it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolscript", "approvals", "serve", "--port", "0",
         "--tools", TOOLS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("approval inbox: http://127.0.0.1:"), line
        yield process, line.split(": ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_inbox_process_resumes_a_decided_run(env: dict[str, str], tmp_path: Path,
                                                  served: tuple[subprocess.Popen[str], str]
                                                  ) -> None:
    pending_id = pause(env, tmp_path)
    _, address = served
    parts = urlsplit(address)
    token = parts.query.split("=", 1)[1]
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    headers = {"Cookie": f"toolscript_inbox={token}"}
    connection.request("GET", "/", headers=headers)
    page = connection.getresponse().read().decode()
    assert pending_id in page
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    body = urlencode({"csrf": csrf, "pending_id": pending_id, "decision": "allow",
                      "reason": "ok by phone"})
    connection.request("POST", "/decide", body=body, headers={
        **headers, "Content-Type": "application/x-www-form-urlencoded",
        "Origin": f"http://{parts.netloc}"})
    assert connection.getresponse().status == 303
    connection.request("GET", "/", headers=headers)
    page = connection.getresponse().read().decode()
    connection.close()
    assert "resumed and finished" in page and "refund of 1250.00 EUR" in page
    assert [e["tool"] for e in executions(env["REFUND_LOG"])] == ["get_order", "issue_refund"]
