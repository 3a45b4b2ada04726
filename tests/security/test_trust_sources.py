"""``requires_approval=`` / ``read_only=`` on MCP and OpenAPI sources, as an operator
would get them wrong: naming one tool must not release the others, a name the source
does not have (a typo, the prefixed form) is an error, and both sources take the same
form of a name (the source's own: the MCP tool name, the OpenAPI operationId).

Real parts: an in-process MCP server of the MCP SDK and a real local HTTP server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from toolscript.runtime.integrations.mcp import MCPToolSource
from toolscript.runtime.integrations.openapi import OpenAPISource

from toolscript import Runtime
from toolscript.errors import ConfigurationError

SENT: list[str] = []


def _mcp_server() -> MCPServer:
    server = MCPServer("Mail", log_level="CRITICAL")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(user: str) -> str:
        """Read a user's address."""
        return user + "@example.org"

    @server.tool()
    def send_email(to: str) -> str:
        """Send an email (no hints: a write)."""
        SENT.append("send_email:" + to)
        return "sent"

    @server.tool(name="wipe-inbox", annotations=ToolAnnotations(destructive_hint=True))
    def wipe_inbox(user: str) -> str:
        """Delete every message."""
        SENT.append("wipe-inbox:" + user)
        return "wiped"

    return server


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


def _mcp(**options: Any) -> MCPToolSource:
    return MCPToolSource(_mcp_server(), prefix="mail", **options)


def _try_writes(calls: str) -> str:
    """A script that makes each call of ``calls`` (callables, comma separated) and lists
    ``'ran'`` or the type of its ``ToolDenied``."""
    return ("out = []\n"
            f"for call in ({calls},):\n"
            "    try:\n"
            "        call()\n"
            "        out.append('ran')\n"
            "    except ToolDenied as exc:\n"
            "        out.append(exc.type)\n"
            "out")


def _flags(tools: list[Any]) -> dict[str, tuple[bool, bool]]:
    return {t.name: (t.read_only, t.requires_approval) for t in tools}


# --- MCP -------------------------------------------------------------------------------


SELECTORS = {  # factories: a generator is used up once
    "list": lambda: ["lookup"], "tuple": lambda: ("lookup",), "set": lambda: {"lookup"},
    "generator": lambda: (n for n in ["lookup"]),
    "predicate": lambda: lambda tool: tool.name == "lookup",
}


@pytest.mark.parametrize("selector", sorted(SELECTORS))
def test_naming_one_mcp_tool_keeps_the_others_writes_asking(selector: str,
                                                            backend_name: str) -> None:
    with _mcp(requires_approval=SELECTORS[selector]()) as source:
        flags = _flags(source.tools())
        assert flags == {"mail_lookup": (True, True), "mail_send_email": (False, True),
                         "mail_wipe_inbox": (False, True)}
        with Runtime(source.tools(), backend=backend_name) as rt:  # approval mode: default
            result = rt.run(_try_writes("lambda: mail_send_email('x'), "
                                        "lambda: mail_wipe_inbox('x')"))
    assert result.ok, result.error
    assert result.value == ["denied", "denied"]
    assert SENT == []  # no write reached the server


def test_releasing_an_mcp_tool_is_explicit_and_only_that_tool(backend_name: str) -> None:
    with _mcp(requires_approval={"send_email": False}) as source:
        assert _flags(source.tools()) == {"mail_lookup": (True, False),
                                          "mail_send_email": (False, False),
                                          "mail_wipe_inbox": (False, True)}
        with Runtime(source.tools(), backend=backend_name) as rt:
            assert rt.run("mail_send_email('a')").ok
            assert not rt.run("mail_wipe_inbox('a')").ok
    assert SENT == ["send_email:a"]
    with _mcp(requires_approval=False) as source:
        assert all(not needs for _, needs in _flags(source.tools()).values())


@pytest.mark.parametrize("argument", ["requires_approval", "read_only", "include", "exclude"])
@pytest.mark.parametrize("name", ["send_emial", "Send_Email", "mail_send_email", "wipe_inbox"])
def test_an_unknown_mcp_tool_name_is_an_error(argument: str, name: str) -> None:
    with _mcp(**{argument: [name]}) as source, pytest.raises(ConfigurationError,
                                                               match=name) as caught:
        source.tools()
    if name == "mail_send_email":
        assert "'send_email', not 'mail_send_email'" in str(caught.value)
    if name == "wipe_inbox":  # the server's name is wipe-inbox: one form, the server's
        assert "'wipe-inbox', not 'wipe_inbox'" in str(caught.value)
    if name == "Send_Email":  # names are exact; the message points at the real one
        assert "'send_email', not 'Send_Email'" in str(caught.value)


def test_mcp_names_are_the_servers_in_every_argument() -> None:
    with _mcp(include=["wipe-inbox", "send_email"], read_only={"send_email": False},
              requires_approval=["wipe-inbox"]) as source:
        assert _flags(source.tools()) == {"mail_send_email": (False, True),
                                          "mail_wipe_inbox": (False, True)}


def test_read_only_lists_pin_exactly_the_named_tools() -> None:
    with _mcp(read_only=["send_email"]) as source:  # the server's hint for lookup is ignored
        assert _flags(source.tools()) == {"mail_lookup": (False, True),
                                          "mail_send_email": (True, False),
                                          "mail_wipe_inbox": (False, True)}
    with _mcp(read_only={"send_email": True}) as source:  # a mapping leaves the rest to hints
        assert _flags(source.tools())["mail_lookup"] == (True, False)


@pytest.mark.parametrize("argument", ["requires_approval", "read_only"])
@pytest.mark.parametrize("bad", ["send_email", {"send_email": "no"}])
def test_a_selector_of_the_wrong_shape_is_an_error(argument: str, bad: Any) -> None:
    with pytest.raises(ConfigurationError), _mcp(**{argument: bad}) as source:
        source.tools()


@pytest.mark.parametrize("argument", ["include", "exclude"])
@pytest.mark.parametrize("bad", ["send_email", True, {"send_email": True}, [1]])
def test_include_and_exclude_take_lists_of_names(argument: str, bad: Any) -> None:
    with pytest.raises(ConfigurationError, match=argument):
        _mcp(**{argument: bad})
    with pytest.raises(ConfigurationError, match="include"):
        OpenAPISource(DOCUMENT, base_url="http://127.0.0.1:9", include=bad)


# --- OpenAPI ---------------------------------------------------------------------------

DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Mail", "version": "1"},
    "paths": {
        "/users/{user}": {"get": {"operationId": "lookup", "parameters": [
            {"name": "user", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        "/mail": {"post": {"operationId": "send_email", "requestBody": {
            "required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": {"to": {"type": "string"}},
                "required": ["to"]}}}}}},
        "/inbox": {"delete": {}},  # no operationId: its name is delete_inbox
    },
}


@pytest.fixture
def api() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            SENT.append(f"{self.command} {self.path}")
            raw = json.dumps("done").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_DELETE = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _openapi(url: str, **options: Any) -> OpenAPISource:
    return OpenAPISource(DOCUMENT, base_url=url, prefix="mail", **options)


@pytest.mark.parametrize("selector", [["lookup"], lambda method, path: path.startswith("/users")])
def test_naming_one_operation_keeps_the_others_writes_asking(api: str, selector: Any,
                                                             backend_name: str) -> None:
    source = _openapi(api, requires_approval=selector)
    assert _flags(source.tools()) == {"mail_lookup": (True, True),
                                      "mail_send_email": (False, True),
                                      "mail_delete_inbox": (False, True)}
    with Runtime(source.tools(), backend=backend_name) as rt:
        result = rt.run(_try_writes("lambda: mail_send_email(to='x'), mail_delete_inbox"))
    assert result.ok, result.error
    assert result.value == ["denied", "denied"]
    assert SENT == []


@pytest.mark.parametrize("argument", ["requires_approval", "include"])
@pytest.mark.parametrize("name", ["Send_Email", "mail_send_email", "sendEmail"])
def test_an_unknown_operation_name_is_an_error(api: str, argument: str, name: str) -> None:
    with pytest.raises(ConfigurationError, match=name) as caught:
        _openapi(api, **{argument: [name]}).tools()
    if name == "mail_send_email":
        assert "'send_email', not 'mail_send_email'" in str(caught.value)


def test_releasing_an_operation_is_explicit(api: str) -> None:
    source = _openapi(api, requires_approval={"send_email": False, "delete_inbox": True})
    assert _flags(source.tools()) == {"mail_lookup": (True, False),
                                      "mail_send_email": (False, False),
                                      "mail_delete_inbox": (False, True)}
