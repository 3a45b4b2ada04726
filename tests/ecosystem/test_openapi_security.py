"""OpenAPI tools as an attacker would try them: credentials sent to another
origin by a redirect, writes that run without approval, and 429/503 answers.

Two real HTTP servers on 127.0.0.1 on different ports are two origins: the
API, and "elsewhere", which must never see the API's credentials.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from toolscript.runtime.integrations.openapi import ApiKeyAuth, BearerAuth, OpenAPISource

from toolscript import Runtime

TOKEN = "tok-7f3a9c"
KEY = "key-51e0d2"
FIXED = "fixed-header-secret"
SECRETS = (TOKEN, KEY, FIXED)

Reply = tuple[int, dict[str, str], Any]


@dataclass
class Origin:
    """One local HTTP server: its routes and every request it received."""

    routes: dict[str, Callable[[], Reply]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    port: int = 0

    def hits(self, path: str) -> int:
        return sum(1 for r in self.seen if r["path"] == path)


def _serve(origin: Origin) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            origin.seen.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body.decode("utf-8", "replace"),
                }
            )
            route = origin.routes.get(self.path.split("?")[0])
            status, headers, data = route() if route else (404, {}, {"error": "no route"})
            raw = json.dumps(data).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin.port = server.server_address[1]
    origin.url = f"http://127.0.0.1:{origin.port}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def origins(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Origin, Origin]]:
    """The API and another origin, with the API's routes wired to redirect there."""
    monkeypatch.setenv("API_TOKEN", TOKEN)
    monkeypatch.setenv("API_KEY", KEY)
    api, elsewhere = Origin(), Origin()
    servers = [_serve(api), _serve(elsewhere)]
    counts: dict[str, int] = {}

    def echo() -> Reply:
        headers = api.seen[-1]["headers"]
        return 200, {}, {"auth": headers.get("authorization"), "key": headers.get("x-api-key")}

    def redirect(location: str, status: int = 302) -> Callable[[], Reply]:
        return lambda: (status, {"Location": location}, {})

    def flaky(path: str, fails: int, status: int, retry_after: str | None) -> Callable[[], Reply]:
        def reply() -> Reply:
            counts[path] = counts.get(path, 0) + 1
            if counts[path] <= fails:
                headers = {"Retry-After": retry_after} if retry_after is not None else {}
                return status, headers, {"error": "slow down"}
            return 200, {}, {"attempt": counts[path]}

        return reply

    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    api.routes.update(
        {
            "/v1/items": echo,
            "/v1/moved": redirect("/v1/items", 301),
            "/v1/away": redirect(f"{elsewhere.url}/landing"),
            "/v1/away-307": redirect(f"{elsewhere.url}/landing", 307),
            "/v1/away-localhost": redirect(f"http://localhost:{api.port}/v1/items"),
            "/v1/away-ftp": redirect(f"ftp://127.0.0.1:{elsewhere.port}/landing"),
            "/v1/hop": redirect("/v1/away"),
            "/v1/bounce": redirect(f"{elsewhere.url}/bounce-back"),
            "/v1/orders": redirect(f"{elsewhere.url}/landing", 303),
            "/v1/limited": flaky("/v1/limited", 2, 429, "0"),
            "/v1/busy": flaky("/v1/busy", 1, 503, past),
            "/v1/later": flaky("/v1/later", 99, 429, "3600"),
            "/v1/bare-429": flaky("/v1/bare-429", 1, 429, None),
            "/v1/always": flaky("/v1/always", 99, 429, "0"),
        }
    )
    elsewhere.routes.update(
        {
            "/landing": lambda: (200, {}, {"landed": True}),
            "/bounce-back": redirect(f"{api.url}/v1/items"),
        }
    )
    try:
        yield api, elsewhere
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def _get(op: str, path: str) -> dict[str, Any]:
    return {"get": {"operationId": op, "responses": {"200": {"description": "ok"}}}}


DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "paths": {
        **{
            f"/{name}": _get(name, f"/{name}")
            for name in (
                "items", "moved", "away", "away-307", "away-localhost", "away-ftp", "hop",
                "bounce", "limited", "busy", "later", "bare-429", "always",
            )
        },
        "/orders": {
            "post": {
                "operationId": "orders",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"item": {"type": "string"}},
                            }
                        }
                    }
                },
            },
            "put": {"operationId": "replace_orders"},
            "patch": {"operationId": "patch_orders"},
            "delete": {"operationId": "cancel_orders"},
            "head": {"operationId": "head_orders"},
        },
    },
}


def _source(api: Origin, **options: Any) -> OpenAPISource:
    return OpenAPISource(
        DOCUMENT,
        base_url=f"{api.url}/v1",
        auth=options.pop("auth", BearerAuth("API_TOKEN")),
        headers={"X-Fixed": FIXED},
        **options,
    )


def _no_secret_reached(elsewhere: Origin) -> None:
    text = json.dumps(elsewhere.seen)
    for secret in SECRETS:
        assert secret not in text
    for request in elsewhere.seen:
        assert not set(request["headers"]) & {"authorization", "x-api-key", "x-fixed"}, request


# --- redirects -------------------------------------------------------------------


REFUSED = ["away", "away_307", "away_localhost", "away_ftp", "hop", "bounce"]


@pytest.mark.parametrize("auth", ["bearer", "api-key"])
def test_a_redirect_to_another_origin_is_refused_and_sends_nothing_there(
    origins, backend_name, auth
):
    api, elsewhere = origins
    credential = BearerAuth("API_TOKEN") if auth == "bearer" else ApiKeyAuth("API_KEY")
    source = _source(api, auth=credential)
    with Runtime(source.tools(), backend=backend_name) as rt:
        for op in REFUSED:
            result = rt.run(
                f"try:\n    out = {op}()\nexcept ToolError as exc:\n    out = exc.message\nout"
            )
            assert result.ok, result.error
            assert "redirect refused" in result.value and "another origin" in result.value, op
        # A redirect within the API's origin keeps working, with the credential.
        moved = rt.run("moved()")
    assert moved.ok, moved.error
    expected = {"auth": f"Bearer {TOKEN}", "key": None} if auth == "bearer" else {
        "auth": None, "key": KEY}
    assert moved.value == expected
    assert elsewhere.seen == []  # refused before anything was sent
    assert api.hits("/v1/items") == 1  # localhost:PORT is another origin, never followed


def test_strip_mode_follows_without_any_credential(origins, backend_name):
    api, elsewhere = origins
    source = _source(api, cross_origin_redirects="strip")
    with Runtime(source.tools(), backend=backend_name) as rt:
        landed = rt.run("[away(), hop(), away_307()]")
        # api -> elsewhere -> back to the api: stripped once, stripped for good.
        bounced = rt.run("bounce()")
        localhost = rt.run("away_localhost()")
        ftp = rt.run("away_ftp()")
    assert landed.ok, landed.error
    assert landed.value == [{"landed": True}] * 3
    assert bounced.value == {"auth": None, "key": None}
    assert localhost.value == {"auth": None, "key": None}
    assert not ftp.ok and "redirect refused" in ftp.error.message
    assert elsewhere.hits("/landing") == 3 and elsewhere.hits("/bounce-back") == 1
    _no_secret_reached(elsewhere)
    back = [r for r in api.seen if r["path"] == "/v1/items"]
    assert len(back) == 2
    assert all("authorization" not in r["headers"] and "x-fixed" not in r["headers"]
               for r in back)


def test_a_write_redirected_to_another_origin_is_not_resent(origins):
    api, elsewhere = origins
    source = _source(api, cross_origin_redirects="strip", requires_approval=False)
    with Runtime(source.tools(), backend="inprocess") as rt:
        result = rt.run("orders(item='book')")
    # 303 turns the POST into a GET without its body; the GET carries no credential.
    assert result.ok, result.error
    assert [r["method"] for r in elsewhere.seen] == ["GET"]
    assert elsewhere.seen[0]["body"] == ""
    _no_secret_reached(elsewhere)


# --- approval of writes ------------------------------------------------------------


def test_writes_require_approval_by_default(origins, backend_name):
    api, _ = origins
    tools = {t.name: t for t in _source(api).tools()}
    for name in ("orders", "replace_orders", "patch_orders", "cancel_orders"):
        assert tools[name].requires_approval and not tools[name].read_only, name
    for name in ("items", "head_orders"):
        assert tools[name].read_only and not tools[name].requires_approval, name

    asked: list[str] = []

    def approve(request):
        asked.append(request.tool)
        return False

    with Runtime(list(tools.values()), backend=backend_name) as rt:
        default = rt.run(
            "out = []\n"
            "for call in (lambda: orders(item='x'), replace_orders, patch_orders,"
            " cancel_orders):\n"
            "    try:\n"
            "        call()\n"
            "        out.append('ran')\n"
            "    except ToolDenied as exc:\n"
            "        out.append(exc.type)\n"
            "[out, items()]"
        )
        rt.approve = approve
        hooked = rt.run(
            "try:\n    out = orders(item='x')\nexcept ToolDenied:\n    out = 'denied'\nout"
        )
    assert default.ok, default.error
    assert default.value[0] == ["denied"] * 4
    assert default.value[1]["auth"] == f"Bearer {TOKEN}"
    assert hooked.value == "denied" and asked == ["orders"]
    assert [r["method"] for r in api.seen] == ["GET"]  # no write reached the API

    opted_out = _source(api, requires_approval=False)
    assert not any(t.requires_approval for t in opted_out.tools())


# --- 429 / 503 with Retry-After ------------------------------------------------------


def test_429_and_503_with_retry_after_are_retried_within_the_timeout(origins, backend_name):
    api, _ = origins
    source = _source(api, timeout_s=20, retries=3)
    with Runtime(source.tools(), backend=backend_name) as rt:
        result = rt.run("[limited(), busy()]")
        later = rt.run("later()")
        bare = rt.run("bare_429()")
        always = rt.run("always()")
    assert result.ok, result.error
    assert result.value == [{"attempt": 3}, {"attempt": 2}]  # 429, 429, ok; 503 (a date), ok
    # Retry-After longer than the tool's timeout: fails at once, one request.
    assert not later.ok and "Retry-After 3600 s" in later.error.message
    assert api.hits("/v1/later") == 1
    # No Retry-After: not retried.
    assert not bare.ok and "HTTP 429" in bare.error.message and api.hits("/v1/bare-429") == 1
    # Retries are bounded.
    assert not always.ok and "after the retries" in always.error.message
    assert api.hits("/v1/always") == 4


def test_header_parameters_cannot_replace_the_credential(origins):
    api, _ = origins
    document = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/items": {
                "get": {
                    "operationId": "items",
                    "parameters": [
                        {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                        {"name": "X-API-Key", "in": "header", "schema": {"type": "string"}},
                    ],
                }
            }
        },
    }
    source = OpenAPISource(document, base_url=f"{api.url}/v1", auth=ApiKeyAuth("API_KEY"))
    (tool,) = source.tools()
    assert "Authorization" not in tool.parameters_schema["properties"]  # OpenAPI: ignored
    with Runtime([tool], backend="inprocess") as rt:
        result = rt.run("items(X_API_Key='chosen-by-the-script')")
    assert result.value == {"auth": None, "key": KEY}
