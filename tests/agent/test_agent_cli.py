"""``toolscript agent`` end to end: real CLI, real SDK, fake endpoint."""

from __future__ import annotations

import json
from pathlib import Path

from fakes.model_server import Call, Turn, say, script
from toolscript.runtime.cli.main import main

TOOLS_FILE = str(Path(__file__).with_name("sample_tools.py"))


def _argv(server, *extra: str) -> list[str]:
    return ["agent", "Which store earned most on 2026-08-24?", "--tools", TOOLS_FILE,
            "--backend", "inprocess", "--model", "fake-model", "--base-url",
            server.openai_base_url, *extra]


def test_agent_command_prints_answer_and_trace(server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server.script(
        script("rows = [get_daily_revenue(s, '2026-08-24') for s in list_stores()]\n"
               "max(rows, key=lambda r: r['revenue_yuan'])['store_id']"),
        say("ST005"),
    )
    assert main(_argv(server)) == 0
    out, err = capsys.readouterr()
    assert out == "ST005\n"
    assert "run_script [ok]: list_stores x1, get_daily_revenue x5" in err
    assert "-- 2 turn(s), 6 tool call(s)" in err
    assert server.bodies()[0]["model"] == "fake-model"


def test_agent_command_classic_json(server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server.script(Turn(tool_calls=[Call("list_stores", {})]), say("5 stores"))
    assert main(_argv(server, "--mode", "classic", "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "5 stores" and data["turns"] == 2
    assert data["steps"][0]["name"] == "list_stores" and data["steps"][0]["ok"]


def test_agent_command_endpoint_error_exits_2(server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    server.fail(401, message="bad key")
    assert main(_argv(server)) == 2
    assert "HTTP 401: bad key" in capsys.readouterr().err


def test_agent_command_without_key_exits_2(server, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(_argv(server)) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
