"""MCP servers as a tool source, against a small real MCP server
(``eco_mcp_server.py``) over stdio, Streamable HTTP and in process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from backend_marks import backend_options
from eco_net import free_port, wait_for_port
from toolscript.runtime.integrations.mcp import MCPToolSource

from toolscript import Decision, Runtime
from toolscript.errors import ConfigurationError

SERVER = str(Path(__file__).with_name("eco_mcp_server.py"))


@pytest.fixture(scope="module")
def stdio_source():
    with MCPToolSource.stdio(sys.executable, [SERVER]) as source:
        yield source


def test_tools_are_namespaced_with_schemas_and_hints(stdio_source):
    tools = {t.name: t for t in stdio_source.tools()}
    assert set(tools) == {
        "weather_server_forecast",
        "weather_server_add",
        "weather_server_set_alarm",
        "weather_server_failing",
        "weather_server_calls_seen",
        "weather_server_auth_header",
        "weather_server_bank_transfer",
        "weather_server_purge",
        "weather_server_unmarked",
        "weather_server_meet",
    }
    forecast = tools["weather_server_forecast"]
    assert forecast.read_only and not forecast.requires_approval
    assert all(t.blocking for t in tools.values())  # requests to another process
    assert forecast.parameters_schema["properties"]["days"]["type"] == "integer"
    assert forecast.parameters_schema["required"] == ["city"]
    assert forecast.description.startswith("Forecast for a city.")
    alarm = tools["weather_server_set_alarm"]  # 'set-alarm' on the server
    assert not alarm.read_only and alarm.requires_approval  # destructiveHint
    with Runtime(stdio_source.tools(), backend="inprocess") as rt:
        stubs = rt.render_stubs()
    assert "def weather_server_forecast(city: str, days: int = 1)" in stubs
    assert "def weather_server_add(a: int, b: int) -> int:" in stubs


def test_scripts_call_mcp_tools_through_validation_approval_and_audit(backend_name):
    # its own server: the calls it counts are this backend's only
    own_source = MCPToolSource.stdio(sys.executable, [SERVER])
    audited = []
    asked = []

    def approve(request):
        asked.append(request.tool)
        if request.tool == "weather_server_set_alarm" and request.args["city"] != "Oslo":
            return Decision.deny("only Oslo")
        return Decision.allow()

    with own_source, Runtime(
        own_source.tools(),
        backend=backend_name,
        backend_options=backend_options(backend_name),
        approve=approve,
        audit=lambda record, ctx: audited.append(record),
    ) as rt:
        result = rt.run(
            "f = weather_server_forecast('Paris', days=2)\n"
            "total = weather_server_add(f['temp_c'], 1)\n"
            "both = parallel(weather_server_add, [{'a': 1, 'b': 2}, {'a': 3, 'b': 4}])\n"
            "ok = weather_server_set_alarm('Oslo', -5)\n"
            "try:\n"
            "    weather_server_set_alarm('Rome', 0)\n"
            "    denied = None\n"
            "except ToolDenied as exc:\n"
            "    denied = exc.type\n"
            "try:\n"
            "    weather_server_add('1', 2)\n"
            "except ToolArgumentError as exc:\n"
            "    invalid = exc.type\n"
            "try:\n"
            "    weather_server_failing('the sky fell')\n"
            "except ToolError as exc:\n"
            "    failed = exc.message\n"
            "[f, total, both, ok, denied, invalid, failed, weather_server_calls_seen()]\n"
        )
    assert result.ok, result.error
    f, total, both, ok, denied, invalid, failed, seen = result.value
    assert f == {"city": "Paris", "days": 2, "temp_c": 22}
    assert total == 23 and both == [3, 7]
    assert ok == "alarm set for Oslo below -5.0"
    assert (denied, invalid) == ("denied", "invalid_arguments")
    assert "MCPToolError" in failed
    # Denied and invalid calls never reached the server.
    assert seen.count("set-alarm") == 1 and seen.count("add") == 3
    assert [r.name for r in audited][-1] == "weather_server_calls_seen"
    assert len(audited) == len(result.tool_calls) == 9
    assert asked.count("weather_server_set_alarm") == 2


def test_classic_mode_calls_go_through_the_same_dispatcher(stdio_source):
    with Runtime(stdio_source.tools(), backend="inprocess") as rt, rt.session() as session:
        record = session.call_tool("weather_server_add", '{"a": 2, "b": 40}')
        assert record.ok and record.value == 42
        bad = session.call_tool("weather_server_add", {"a": 2})
        assert not bad.ok and bad.error.type == "invalid_arguments"


def test_streamable_http_source_sends_configured_headers():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        source = MCPToolSource.http(
            f"http://127.0.0.1:{port}/mcp",
            prefix="wx",
            headers={"Authorization": "Bearer s3cret"},
            include=["add", "auth_header"],
        )
        with source, Runtime(source.tools(), backend="inprocess") as rt:
            assert rt.tools.names() == ["wx_add", "wx_auth_header"]
            result = rt.run("[wx_add(1, 2), wx_auth_header()]")
        assert result.ok, result.error
        assert result.value == [3, "Bearer s3cret"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_in_process_server_and_connection_errors():
    import eco_mcp_server

    with MCPToolSource(
        eco_mcp_server.server, prefix="", include=["add", "calls_seen", "forecast", "set-alarm"]
    ) as source:
        names = sorted(t.name for t in source.tools())
        assert names == ["add", "calls_seen", "forecast", "set_alarm"]
        with Runtime(source.tools(), backend="inprocess") as rt:
            assert rt.run("add(20, 22)").value == 42
    with pytest.raises(ConfigurationError, match="cannot connect"):
        MCPToolSource.stdio(
            sys.executable, ["-c", "import sys; sys.exit(3)"], connect_timeout_s=20
        ).connect()


def test_cli_lists_a_servers_tools_as_stubs():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolscript",
            "mcp",
            "tools",
            "--stdio",
            f"{sys.executable} {SERVER}",
            "--prefix",
            "wx",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "def wx_add(a: int, b: int) -> int:" in proc.stdout
    assert "def wx_set_alarm(city: str, below_c: float) -> str:" in proc.stdout
