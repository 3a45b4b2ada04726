"""Tool analytics over a real audit log: ``toolscript audit stats FILE``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from toolscript.runtime.audit.log import AuditLog
from toolscript.runtime.audit.stats import add_audit_stats, compute_stats, read_calls
from toolscript.runtime.cli.main import main

from toolscript import Decision, Runtime, tool

TOOLS_FILE = '''
import time
from toolscript.tools import tool

@tool(read_only=True)
def lookup(sku: str) -> int:
    """Stock level of one unit."""
    return 3

@tool(timeout_s=0.05, blocking=True)
def slow_write(n: int) -> int:
    """A write that hangs."""
    time.sleep(0.5)
    return n

@tool
def refund(order: str) -> str:
    """Refund an order."""
    return "ok"

@tool(read_only=True)
def never_used() -> int:
    """Nobody calls this."""
    return 0
'''


@pytest.fixture
def audit_log(tmp_path: Path) -> tuple[Path, Path]:
    tools_path = tmp_path / "stats_tools.py"
    tools_path.write_text(TOOLS_FILE)
    from toolscript.tools import load_tools

    log_path = tmp_path / "audit.jsonl"
    deny_refunds = lambda r: Decision.deny("no") if r.tool == "refund" else True  # noqa: E731
    with AuditLog(log_path) as log, Runtime(load_tools(str(tools_path)), backend="inprocess",
                                            approve=deny_refunds, audit=log) as rt:
        code = ("for s in ['a', 'b', 'c']:\n    lookup(s)\n"
                "for bad in [1, 'x']:\n    try:\n        lookup(bad) if bad == 1 else "
                "lookup(sku=bad, extra=1)\n    except ToolError:\n        pass\n"
                "try:\n    slow_write(1)\nexcept ToolTimeout:\n    pass\n"
                "try:\n    refund('o1')\nexcept ToolDenied:\n    pass\n")
        assert rt.run(code).ok
        with rt.session() as s:  # a classic call to a tool that does not exist
            assert not s.call_tool("lookpu", {"sku": "a"}).ok
    return log_path, tools_path


def test_stats_per_tool(audit_log: tuple[Path, Path]):
    log_path, _ = audit_log
    entries, bad = read_calls(log_path)
    stats = compute_stats(entries, ["lookup", "slow_write", "refund", "never_used"])
    lookup, slow, refund = (stats.tools[n] for n in ("lookup", "slow_write", "refund"))
    assert (lookup.calls, lookup.ok, lookup.validation_failures) == (5, 3, 2)
    assert lookup.errors_by_type == {"invalid_arguments": 2}
    assert round(lookup.error_rate, 2) == 0.4
    assert (slow.calls, slow.timeouts, slow.errors_by_type) == (1, 1, {"timeout": 1})
    assert (refund.calls, refund.denials) == (1, 1)
    assert lookup.percentile_ms(50) is not None
    assert stats.never_called == ["never_used"]
    assert stats.unknown_names == {"lookpu": 1}
    assert bad == 0


def _stats_cli(argv: list[str]) -> int:
    """``toolscript audit stats ...``; through the CLI once the audit group registers it."""
    import importlib.util

    audit_cli = importlib.util.find_spec("toolscript.runtime.cli.audit")
    if audit_cli is not None and "_add_stats_command" in Path(str(audit_cli.origin)).read_text():
        return main(["audit", "stats", *argv])
    parser = argparse.ArgumentParser()
    add_audit_stats(parser.add_subparsers())
    args = parser.parse_args(["stats", *argv])
    return int(args.handler(args))


def test_cli_table_and_json(audit_log: tuple[Path, Path], capsys: pytest.CaptureFixture[str]):
    log_path, tools_path = audit_log
    assert _stats_cli([str(log_path), "--tools", str(tools_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("tool ")
    assert "never called: never_used" in out and "lookpu (1)" in out
    assert _stats_cli([str(log_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tools"][0]["tool"] == "lookup" and data["tools"][0]["calls"] == 5
    assert set(data["tools"][0]["latency_ms"]) == {"p50", "p90", "p99"}


def test_records_as_dicts_are_read_too(tmp_path: Path):
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    with Runtime([ping], backend="inprocess") as rt:
        records = rt.run("ping()\nping()").tool_calls
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r.to_dict()) for r in records) + "\nnot json\n")
    entries, bad = read_calls(path)
    stats = compute_stats(entries)
    assert stats.tools["ping"].calls == 2 and stats.tools["ping"].ok == 2 and bad == 1
