"""Deployment profiles apply to every command: run, batch, agent and mcp serve build their
Runtime from the whole resolved profile (policy, backend, tools, context, limits, audit,
model), chosen by --profile, TOOLSCRIPT_PROFILE, default_profile or the only profile.

Each command runs as a real ``python3 -m toolscript`` process; the assertions look at
what the profile makes happen (a deny rule denies, an audit file is written, a limit
trips, an injected value arrives), not at parsed settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fakes.model_server import FakeModelServer, say, script
from mcp import Client, StdioServerParameters
from toolscript.runtime.audit.log import verify

TOOLS = '''
import os
from pathlib import Path

from toolscript.tools import Injected, tool

SENT = []


@tool(read_only=True)
def sandbox_processes() -> int:
    """How many child processes of this host run a sandbox (0 on the inprocess backend)."""
    me = os.getpid()
    children = []
    for task in Path(f"/proc/{me}/task").iterdir():
        children += (task / "children").read_text().split()
    return sum(b"toolscript.sandbox" in Path(f"/proc/{pid}/cmdline").read_bytes()
               for pid in children if Path(f"/proc/{pid}").exists())


@tool(read_only=True)
def whoami(tenant: Injected[str]) -> str:
    """The tenant this deployment serves."""
    return tenant


@tool(read_only=True)
def ping() -> str:
    """A cheap read."""
    return "pong"


@tool
def send(to: str) -> str:
    """Send a message (a write)."""
    SENT.append(to)
    return "sent to " + to
'''

CONFIG = '''
{default}
[profiles.dev]
backend = "inprocess"
approve = "allow"
tools = ["deploy_tools.py"]
[profiles.dev.context]
tenant = "dev-tenant"

[profiles.prod]
extends = "dev"
backend = "subprocess"
approve = "deny"
audit = "logs/audit.jsonl"
[profiles.prod.limits]
max_tool_calls = 3
[profiles.prod.context_env]
tenant = "DEPLOY_TENANT"
[profiles.prod.model]
provider = "openai"
model = "profile-model"
base_url = "{base_url}"
api_key_env = "DEPLOY_MODEL_KEY"
'''

AUDIT_KEY = "deploy-audit-key-0123456789abcdef"


def write_project(root: Path, *, default: str | None = None,
                  base_url: str = "http://127.0.0.1:9/v1") -> Path:
    """A project folder with tools and a toolscript.toml; returns the audit log path."""
    (root / "logs").mkdir(exist_ok=True)
    (root / "deploy_tools.py").write_text(TOOLS)
    (root / "toolscript.toml").write_text(CONFIG.format(
        default=f'default_profile = "{default}"' if default else "", base_url=base_url))
    return root / "logs" / "audit.jsonl"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TOOLSCRIPT_PROFILE", "TOOLSCRIPT_AUDIT_KEY", "OPENAI_API_KEY")}
    env.update(DEPLOY_TENANT="acme", TOOLSCRIPT_AUDIT_KEY=AUDIT_KEY)
    env.update(extra)
    return env


def toolscript(cwd: Path, *args: str, env: dict[str, str] | None = None,
               stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python3 -m toolscript ARGS`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "toolscript", *args], cwd=cwd,
                          env=env if env is not None else environment(), input=stdin,
                          capture_output=True, text=True, timeout=180)


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_project(tmp_path)
    (tmp_path / "send.py").write_text("send('boss@corp.example')\n")
    (tmp_path / "who.py").write_text("whoami()\n")
    (tmp_path / "many.py").write_text("[ping() for _ in range(5)]\n")
    (tmp_path / "where.py").write_text("sandbox_processes()\n")
    return tmp_path


# --- run --------------------------------------------------------------------------------


def test_toolscript_profile_env_applies_the_whole_profile_to_run(project: Path) -> None:
    env = environment(TOOLSCRIPT_PROFILE="prod")
    audit = project / "logs" / "audit.jsonl"
    denied = toolscript(project, "run", "send.py", "-v", env=env)
    assert denied.returncode == 1
    assert "denied" in denied.stderr  # the profile's deny policy
    assert ("profile 'prod' (chosen by TOOLSCRIPT_PROFILE)" in denied.stderr
            and "backend subprocess, approve deny" in denied.stderr)
    who = toolscript(project, "run", "who.py", env=env)
    assert who.returncode == 0 and json.loads(who.stdout) == "acme"  # context_env
    many = toolscript(project, "run", "many.py", env=env)
    assert many.returncode == 1 and "tool_call_limit" in many.stderr  # its limits
    where = toolscript(project, "run", "where.py", env=env)
    assert json.loads(where.stdout) >= 1  # its backend: a sandbox process
    dev = toolscript(project, "run", "where.py", env=environment(TOOLSCRIPT_PROFILE="dev"))
    assert json.loads(dev.stdout) == 0  # dev's: inprocess
    records = audit_lines(audit)  # its audit log, keyed by the environment's key
    assert [(r["tool"], r["outcome"]) for r in records[:2]] == [("send", "denied"),
                                                                ("whoami", "ok")]
    assert records[1]["injected"] == {"tenant": "acme"}
    assert verify(audit, key=AUDIT_KEY).ok


def test_default_profile_applies_without_any_option(project: Path) -> None:
    audit = write_project(project, default="prod")
    result = toolscript(project, "run", "send.py", "-v")
    assert result.returncode == 1 and "denied" in result.stderr
    assert "chosen by default_profile" in result.stderr
    assert audit_lines(audit)[0]["outcome"] == "denied"


def test_the_only_profile_applies(tmp_path: Path) -> None:
    (tmp_path / "deploy_tools.py").write_text(TOOLS)
    (tmp_path / "toolscript.toml").write_text(
        '[profiles.solo]\napprove = "deny"\ntools = ["deploy_tools.py"]\nbackend = "inprocess"\n'
        "[profiles.solo.context]\ntenant = 't'\n")
    (tmp_path / "send.py").write_text("send('x')\n")
    result = toolscript(tmp_path, "-v", "run", "send.py")  # -v before the command works too
    assert result.returncode == 1 and "denied" in result.stderr
    assert "profile 'solo' (chosen by the only profile)" in result.stderr


def test_options_override_the_profile(project: Path) -> None:
    env = environment(TOOLSCRIPT_PROFILE="prod")
    result = toolscript(project, "run", "send.py", "--approve", "allow", "--backend",
                        "inprocess", "--audit", "mine.jsonl", "-v", env=env)
    assert result.returncode == 0, result.stderr
    assert "backend inprocess, approve allow" in result.stderr
    assert audit_lines(project / "mine.jsonl")[0]["outcome"] == "ok"
    assert not (project / "logs" / "audit.jsonl").exists()  # --audit replaces the profile's


def test_a_profile_asked_for_without_a_configuration_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("1\n")
    result = toolscript(tmp_path, "run", "s.py", env=environment(TOOLSCRIPT_PROFILE="prod"))
    assert result.returncode == 2
    assert "TOOLSCRIPT_PROFILE asks for the profile 'prod', but no configuration" in (
        result.stderr)
    plain = toolscript(tmp_path, "run", "s.py", "-v")  # no profile anywhere: defaults
    assert plain.returncode == 0 and "no profile (no configuration file found)" in plain.stderr


def test_several_profiles_and_nothing_chooses_one(project: Path) -> None:
    result = toolscript(project, "run", "who.py")
    assert result.returncode == 2 and "choose a profile with --profile or TOOLSCRIPT_PROFILE" in (
        result.stderr)


# --- batch ------------------------------------------------------------------------------


def test_batch_applies_tools_context_policy_limits_and_audit(project: Path) -> None:
    (project / "items.jsonl").write_text('{"n": 0}\n{"n": 4}\n')
    (project / "item.py").write_text(
        "who = whoami()\n"
        "try:\n    send('x')\n    sent = True\nexcept ToolDenied:\n    sent = False\n"
        "pings = [ping() for _ in range(item['n'])]\n"
        "[who, sent, sandbox_processes() > 0]\n")
    env = environment(TOOLSCRIPT_PROFILE="prod")
    result = toolscript(project, "batch", "item.py", "--inputs", "items.jsonl",
                        "--progress", "none", "--concurrency", "1", "-v", env=env)
    assert "profile 'prod'" in result.stderr
    records = {r["index"]: r for r in map(json.loads, result.stdout.splitlines())}
    # context, deny policy, backend
    assert records[0]["ok"] and records[0]["value"] == ["acme", False, True]
    assert records[1]["error"]["type"] == "tool_call_limit"  # max_tool_calls = 3 per run
    audit = project / "logs" / "audit.jsonl"
    tools = [r["tool"] for r in audit_lines(audit)]
    assert tools.count("send") == 2 and tools.count("whoami") == 2
    assert verify(audit, key=AUDIT_KEY).ok


def test_batch_on_a_cluster_refuses_what_it_cannot_carry(project: Path) -> None:
    (project / "items.jsonl").write_text('{"n": 1}\n')
    result = toolscript(project, "batch", "who.py", "--inputs", "items.jsonl",
                        "--cluster", "tcp://127.0.0.1:9",
                        env=environment(TOOLSCRIPT_PROFILE="prod"))
    assert result.returncode == 2
    assert "--cluster workers are built from tools, backend, approval and limits only" in (
        result.stderr)
    assert "audit, context, context_env, which would be dropped" in result.stderr


# --- agent ------------------------------------------------------------------------------


def test_agent_uses_the_profiles_model_section_and_runtime(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        audit = write_project(tmp_path, base_url=server.openai_base_url)
        server.script(script("try:\n    send('ceo@corp.example')\n    r = 'sent'\n"
                             "except ToolDenied:\n    r = 'denied'\n[r, whoami()]"),
                      say("done"))
        env = environment(TOOLSCRIPT_PROFILE="prod", DEPLOY_MODEL_KEY="sk-from-profile-env")
        result = toolscript(tmp_path, "agent", "send the memo", "--json", env=env)
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        assert data["answer"] == "done"
        request = server.requests[0]
        assert request.body["model"] == "profile-model"  # no --model given
        assert request.headers.get("Authorization", request.headers.get("authorization")) == (
            "Bearer sk-from-profile-env")
    assert "acme" in data["steps"][0]["output"]  # the profile's context_env
    records = audit_lines(audit)
    assert [(r["tool"], r["outcome"]) for r in records] == [("send", "denied"), ("whoami", "ok")]


def test_agent_options_win_over_the_model_section(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        write_project(tmp_path, base_url=server.openai_base_url)
        server.script(say("hi"))
        env = environment(TOOLSCRIPT_PROFILE="prod", DEPLOY_MODEL_KEY="sk-x")
        result = toolscript(tmp_path, "agent", "hello", "--model", "cli-model", "--audit",
                            "agent-audit.jsonl", env=env)
        assert result.returncode == 0, result.stderr
        assert server.bodies()[0]["model"] == "cli-model"
    assert (tmp_path / "agent-audit.jsonl").exists()  # created even before any call


def test_agent_without_a_model_anywhere_is_a_usage_error(tmp_path: Path) -> None:
    result = toolscript(tmp_path, "agent", "hello")
    assert result.returncode == 2 and "name the model with --model" in result.stderr


# --- mcp serve --------------------------------------------------------------------------


@pytest.mark.parametrize("audit_option", [False, True])
def test_mcp_serve_applies_the_profile(project: Path, audit_option: bool) -> None:
    env = environment(TOOLSCRIPT_PROFILE="prod")
    extra = ["--audit", str(project / "mcp.jsonl")] if audit_option else []
    params = StdioServerParameters(command=sys.executable, cwd=str(project), env=env,
                                   args=["-m", "toolscript", "mcp", "serve", *extra])

    async def scenario() -> tuple[Any, Any]:
        async with Client(params) as client:
            sent = await client.call_tool("run_script", {
                "code": "try:\n    send('x')\n    r = 'sent'\nexcept ToolDenied:\n"
                        "    r = 'denied'\n[r, whoami(), sandbox_processes() > 0]"})
            many = await client.call_tool("run_script", {"code": "[ping() for _ in range(5)]"})
            return sent.structured_content, many.structured_content

    sent, many = anyio.run(scenario)
    assert sent["ok"] and sent["value"] == ["denied", "acme", True]
    assert many["error"]["type"] == "tool_call_limit"
    audit = project / ("mcp.jsonl" if audit_option else "logs/audit.jsonl")
    assert [r["tool"] for r in audit_lines(audit)][:2] == ["send", "whoami"]
    assert verify(audit, key=AUDIT_KEY).ok
