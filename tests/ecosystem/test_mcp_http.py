"""``toolscript mcp serve --transport http`` against the MCP SDK's real client
over real Streamable HTTP on 127.0.0.1: the bearer token, sessions that follow
the client's transport session, stolen session ids, caps and reaping.

Sandboxes are counted from outside, as the server's child processes (psutil).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
import pytest
from eco_net import free_port, wait_for_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXAMPLE_TOOLS = str(Path(__file__).resolve().parents[2] / "examples" / "store_tools.py")
TOKEN = "test-token-0123456789abcdef"
MODERN = "2026-07-28"


@dataclass
class Served:
    """A running ``toolscript mcp serve --transport http``."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def sandboxes(self) -> int:
        """The server's sandbox processes: its descendants, less the fork server
        (zygote) each subprocess backend keeps, which never runs a script (the
        sandboxes forked from it are its children and share its command line)."""
        children = psutil.Process(self.proc.pid).children(recursive=True)
        return sum(1 for child in children if not _is_zygote(child))

    def wait_for_sandboxes(self, at_most: int, timeout: float = 60.0) -> int:
        """Wait until at most ``at_most`` sandboxes are left (they are closed in the
        background); return the count."""
        deadline = time.monotonic() + timeout
        while (count := self.sandboxes()) > at_most and time.monotonic() < deadline:
            time.sleep(0.05)
        return count


def _command(port: int, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "toolscript", "mcp", "serve", "--tools", EXAMPLE_TOOLS,
        "--transport", "http", "--port", str(port), "--backend", "subprocess", *extra,
    ]


@contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[Served]:
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            _command(port, *extra),
            env={**os.environ, "TOOLSCRIPT_MCP_TOKEN": TOKEN},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, proc)
        yield Served(proc, f"http://127.0.0.1:{port}/mcp", log)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@dataclass
class Seen:
    """Transport session ids the server handed to one client."""

    transport_ids: list[str] = field(default_factory=list)


@asynccontextmanager
async def connect(
    url: str, *, token: str = TOKEN, mode: str = "auto", headers: dict[str, str] | None = None,
    seen: Seen | None = None,
) -> AsyncIterator[Client]:
    """The SDK's own client, with the bearer token (and extra headers) on every request."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}", **(headers or {})})
    if seen is not None:

        async def record(response: Any) -> None:
            transport_id = response.headers.get("mcp-session-id")
            if transport_id and transport_id not in seen.transport_ids:
                seen.transport_ids.append(transport_id)

        http.event_hooks["response"].append(record)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


async def run(client: Client, code: str, **extra: Any) -> dict[str, Any]:
    result = await client.call_tool("run_script", {"code": code, **extra})
    payload = result.structured_content
    assert payload is not None
    return payload


def _anyio(scenario: Callable[..., Any], *args: Any) -> Any:
    return anyio.run(scenario, *args)


# --- the bearer token ------------------------------------------------------------------


def test_http_serving_needs_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TOOLSCRIPT_MCP_TOKEN"}
    missing = subprocess.run(_command(free_port()), env=env, capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode != 0 and "TOOLSCRIPT_MCP_TOKEN" in missing.stderr
    short = subprocess.run(
        _command(free_port(), "--token-env", "MY_TOKEN"),
        env={**env, "MY_TOKEN": "short"}, capture_output=True, text=True, timeout=60,
    )
    assert short.returncode != 0 and "MY_TOKEN" in short.stderr


def test_requests_without_the_token_are_refused(tmp_path):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    with serving(tmp_path) as served:
        answers = {}
        for label, auth in {
            "none": None,
            "wrong": "Bearer not-the-token-at-all-000",
            "prefix": f"Bearer {TOKEN[:-1]}",
            "longer": f"Bearer {TOKEN}x",
            "basic": f"Basic {TOKEN}",
            "bare": TOKEN,
        }.items():
            sent = {**headers, **({"Authorization": auth} if auth else {})}
            answers[label] = httpx2.post(served.url, json=body, headers=sent).status_code
        ok = httpx2.post(
            served.url, json=body, headers={**headers, "Authorization": f"bearer {TOKEN}"}
        )

        async def wrong_token() -> None:
            async with connect(served.url, token="wrong-token-but-long-enough") as client:
                await run(client, "1")

        with pytest.raises(Exception):  # noqa: B017 - the SDK's own connection error
            _anyio(wrong_token)
        assert served.sandboxes() <= 1  # nothing but the warm sandbox
    assert answers == dict.fromkeys(answers, 401)
    assert ok.status_code == 200


# --- sessions follow the transport session ---------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_default_client_keeps_one_session(tmp_path, mode):
    async def scenario(served: Served) -> tuple[list[dict[str, Any]], int]:
        async with connect(served.url, mode=mode) as client:
            payloads = [await run(client, "n = 0")]
            for _ in range(30):
                payloads.append(await run(client, "n = n + 1\nn"))
            return payloads, served.sandboxes()

    with serving(tmp_path) as served:
        payloads, during = _anyio(scenario, served)
        after = served.wait_for_sandboxes(1)  # the client ended its transport session
    assert [p["value"] for p in payloads[1:]] == list(range(1, 31))
    assert len({p["session_id"] for p in payloads}) == 1
    assert [p["new_session"] for p in payloads] == [True] + [False] * 30
    assert during <= 2  # the session's sandbox and the warm one
    assert after <= 1


def test_a_stolen_session_id_reaches_nothing(tmp_path):
    async def scenario(served: Served) -> dict[str, Any]:
        seen_a = Seen()
        out: dict[str, Any] = {}
        async with connect(served.url, seen=seen_a) as victim:
            first = await run(victim, "secret = 'only for A'\nsecret")
            stolen = first["session_id"]
            async with connect(served.url) as thief:
                out["with_id"] = await run(thief, "secret", session_id=stolen)
                out["never_issued"] = await run(thief, "secret", session_id="x" * 22)
                out["own"] = await run(thief, "secret")
                reset = await thief.call_tool("reset_session", {"session_id": stolen})
                out["reset"] = reset.structured_content
            # The stateless protocol with A's transport session id as a header.
            spoofed = {"Mcp-Session-Id": seen_a.transport_ids[0]}
            async with connect(served.url, mode=MODERN, headers=spoofed) as spoofer:
                out["spoofed_with_id"] = await run(spoofer, "secret", session_id=stolen)
                out["spoofed"] = await run(spoofer, "secret")
            out["victim_after"] = await run(victim, "secret", session_id=stolen)
        return out

    with serving(tmp_path) as served:
        out = _anyio(scenario, served)
    for key in ("with_id", "never_issued", "spoofed_with_id"):
        assert out[key]["ok"] is False and out[key]["error"]["type"] == "unknown_session", key
        assert "only for A" not in str(out[key])
    for key in ("own", "spoofed"):
        assert out[key]["error"]["exception"] == "NameError", key
        assert out[key]["new_session"] is True
    assert out["reset"]["ok"] is False
    assert out["victim_after"]["value"] == "only for A"


def test_stateless_clients_get_a_fresh_session_per_run(tmp_path):
    async def scenario(served: Served) -> list[dict[str, Any]]:
        async with connect(served.url, mode=MODERN) as client:
            payloads = [await run(client, "x = 1\nx")]
            for _ in range(10):
                payloads.append(await run(client, "x"))
            return payloads

    with serving(tmp_path) as served:
        payloads = _anyio(scenario, served)
        left = served.wait_for_sandboxes(1)
    assert payloads[0]["value"] == 1
    assert all(p["session_id"] is None and p["new_session"] for p in payloads)
    assert all(p["error"]["exception"] == "NameError" for p in payloads[1:])
    assert left <= 1  # each one-run session was closed with its run


def test_sessions_are_capped_and_idle_ones_reaped(tmp_path):
    async def scenario(served: Served) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(connect(served.url)) for _ in range(4)]
            for n, client in enumerate(clients):
                await run(client, f"mine = {n}")
            out["open"] = served.sandboxes()
            # The least recently used session was closed to make room.
            out["first_again"] = await run(clients[0], "mine")
            out["last_again"] = await run(clients[3], "mine")
            # Idle past the timeout: the reaper stops every sandbox but the warm one.
            out["reaped"] = served.wait_for_sandboxes(1)
        return out

    with serving(tmp_path, "--max-sessions", "2", "--idle-timeout", "1") as served:
        out = _anyio(scenario, served)
    assert out["open"] <= 3  # two sessions and the warm sandbox
    assert out["first_again"]["error"]["exception"] == "NameError"
    assert out["first_again"]["new_session"] is True
    assert out["last_again"]["value"] == 3
    assert out["reaped"] <= 1


def _is_zygote(process: psutil.Process) -> bool:
    try:
        return ("--zygote" in process.cmdline()
                and "--zygote" not in process.parent().cmdline())
    except (psutil.Error, AttributeError):  # gone meanwhile: not counted
        return True
