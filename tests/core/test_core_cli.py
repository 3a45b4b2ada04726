"""The ``toolscript`` command line, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TOOLS = str(EXAMPLES / "store_tools.py")


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolscript.runtime.cli.main", *args],
                          input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_run_example_prints_the_value() -> None:
    done = cli("run", str(EXAMPLES / "top_stores.py"), "--tools", TOOLS)
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("ST")]) == 3
    value = json.loads(done.stdout)  # the value alone: the prints went to stderr
    assert value["week_of"] == "2026-08-24"
    assert len(value["top3"]) == 3
    totals = [row["revenue_yuan"] for row in value["top3"]]
    assert totals == sorted(totals, reverse=True)
    assert "57 tool call(s), 0 failed" in done.stderr


def test_run_json_output() -> None:
    done = cli("run", str(EXAMPLES / "top_stores.py"), "--tools", TOOLS, "--json",
               "--backend", "inprocess")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is True and data["error"] is None
    assert len(data["value"]["top3"]) == 3
    assert len(data["tool_calls"]) == 57
    assert data["tool_calls"][0]["name"] == "list_stores"
    assert all(call["ok"] for call in data["tool_calls"])


def test_failing_script_exits_1_with_typed_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("print('before')\nx = 1 / 0\n")
    done = cli("run", str(script), "--tools", TOOLS)
    assert done.returncode == 1
    assert "error [script_error]" in done.stderr
    assert "ZeroDivisionError" in done.stderr
    assert done.stdout == "" and "before\n" in done.stderr
    policy = tmp_path / "policy.py"
    policy.write_text("exec('1')\n")
    done = cli("run", str(policy))
    assert done.returncode == 1 and "error [policy_error]" in done.stderr


def test_run_from_stdin_and_timeout_option() -> None:
    done = cli("run", "-", "--timeout", "0.5", stdin="while True:\n    pass\n")
    assert done.returncode == 1
    assert "error [timeout]" in done.stderr


def _budget(answers: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    done = cli("run", str(EXAMPLES / "budget_alerts.py"), "--tools", TOOLS, "--approve", "ask",
               "--json", stdin=answers)
    assert done.returncode == 0, done.stderr
    return done, json.loads(done.stdout)


def test_approve_ask_yes_then_no() -> None:
    done, data = _budget("y\nn\n")
    assert data["value"]["over_budget"] == ["marketing", "support"]
    assert data["value"]["emails_sent"] == ["m1"]
    assert done.stderr.count("Approve send_email (") == 2
    assert "head-of-marketing@example.com" in done.stderr  # the arguments are shown
    sends = [c for c in data["tool_calls"] if c["name"] == "send_email"]
    assert [c["approved"] for c in sends] == [True, False]
    assert "denied at the terminal" in data["stdout"]


def test_approve_ask_all() -> None:
    done, data = _budget("a\n")
    assert data["value"]["emails_sent"] == ["m1", "m2"]
    assert done.stderr.count("Approve send_email (") == 1  # the second call was not asked
    reads = [c for c in data["tool_calls"] if c["name"] != "send_email"]
    assert all(c["approved"] for c in reads)


def test_approve_ask_end_of_input_denies() -> None:
    _, data = _budget("")
    assert data["value"]["emails_sent"] == []


def test_default_approval_denies_the_email() -> None:
    done = cli("run", str(EXAMPLES / "budget_alerts.py"), "--tools", TOOLS)
    assert done.returncode == 0
    assert json.loads(done.stdout)["emails_sent"] == []
    assert done.stderr.count("not sent to") == 2


def test_tools_prints_stubs() -> None:
    done = cli("tools", TOOLS)
    assert done.returncode == 0, done.stderr
    for name in ("list_stores", "get_daily_revenue", "send_email"):
        assert f"def {name}(" in done.stdout
    assert "store_id: str" in done.stdout and "Revenue of one store" in done.stdout


def test_bad_tools_path_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("1\n")
    done = cli("run", str(script), "--tools", str(tmp_path / "missing_tools.py"))
    assert done.returncode == 2
    assert "missing_tools.py" in done.stderr and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    module = cli("tools", "no_such_tools_module")
    assert module.returncode == 2
    assert "no_such_tools_module" in module.stderr and "Traceback" not in module.stderr


def test_missing_script_exits_2() -> None:
    done = cli("run", "/nonexistent/script.py")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
