"""The approval inbox over plain HTTP: what it refuses, and what it stores.

Attack tests: requests without the token or with a wrong one, another Host
(DNS rebinding), cross-site POSTs (Origin, Sec-Fetch-Site), a POST without
the CSRF token; none of them sees data or stores a decision.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from surface_helpers import HOSTILE_ARGS, add_pause
from toolscript.runtime.durable.inbox import InboxServer
from toolscript.runtime.durable.inbox.page import shown_json
from toolscript.runtime.durable.sqlite import SQLiteJournal


@pytest.fixture
def inbox(journal: SQLiteJournal) -> Iterator[InboxServer]:
    add_pause(journal)
    with InboxServer(journal) as server:
        yield server


def request(inbox: InboxServer, method: str, path: str, body: str | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", inbox.port, timeout=10)
    try:
        sent = {"Host": f"127.0.0.1:{inbox.port}", **(headers or {})}
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read().decode())
    finally:
        connection.close()


def auth(inbox: InboxServer) -> dict[str, str]:
    return {"Cookie": f"toolscript_inbox={inbox.token}"}


def form(inbox: InboxServer, **fields: str) -> str:
    return urlencode({"csrf": inbox.guard.csrf, "pending_id": "s1-1:1", "decision": "allow",
                      "reason": "ok", **fields})


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def test_without_the_token_nothing_is_shown(inbox: InboxServer) -> None:
    for path in ("/", "/api/pending"):
        status, _, body = request(inbox, "GET", path)
        assert status == 401
        assert "send_email" not in body and "ops@example.com" not in body


def test_a_wrong_token_is_refused_everywhere(inbox: InboxServer) -> None:
    wrong = "x" * len(inbox.token)
    assert request(inbox, "GET", f"/?token={wrong}")[0] == 401
    assert request(inbox, "GET", "/", headers={"Cookie": f"toolscript_inbox={wrong}"})[0] == 401
    assert request(inbox, "GET", "/api/pending",
                   headers={"Authorization": f"Bearer {wrong}"})[0] == 401


def test_the_login_address_sets_a_strict_httponly_cookie(inbox: InboxServer) -> None:
    status, headers, _ = request(inbox, "GET", f"/?token={inbox.token}")
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"toolscript_inbox={inbox.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_the_page_lists_the_call_with_its_arguments_escaped(inbox: InboxServer) -> None:
    status, headers, body = request(inbox, "GET", "/", headers=auth(inbox))
    assert status == 200
    assert "script-src" not in headers["content-security-policy"]  # default-src 'none'
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert "<script>" not in body and "<b id=" not in body and "onerror=\"" not in body
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in body
    assert "\u202e" not in body and "\\u202e" in body  # the bidi override is shown, escaped


def test_the_json_list_carries_the_arguments_exactly(inbox: InboxServer) -> None:
    status, headers, body = request(inbox, "GET", "/api/pending",
                                    headers={"Authorization": f"Bearer {inbox.token}"})
    assert status == 200 and headers["content-type"] == "application/json"
    [row] = json.loads(body)
    assert row["id"] == "s1-1:1" and row["tool"] == "send_email"
    assert row["arguments"] == HOSTILE_ARGS and row["decision"] is None


def test_shown_json_is_the_same_json_data() -> None:
    tricky: dict[str, Any] = {"a": "\u200b\u2028\u00a0\U000e0041\x7f\x85", "b": [1, "\ufe0f"]}
    text = shown_json(tricky)
    assert json.loads(text) == tricky
    assert all(ord(ch) < 0x7f or ch.isprintable() for ch in text if ch != "\n")


def test_a_decision_is_stored(inbox: InboxServer, journal: SQLiteJournal) -> None:
    status, headers, _ = request(inbox, "POST", "/decide", form(inbox, reason="looks right"),
                                 {**auth(inbox), **FORM, "Origin": inbox.url.rstrip("/"),
                                  "Sec-Fetch-Site": "same-origin"})
    assert status == 303 and headers["location"] == "/"
    decision = journal.decisions("s1-1")["s1-1:1"]
    assert decision.approved and decision.reason == "looks right"
    again = request(inbox, "POST", "/decide", form(inbox, decision="deny"), {**auth(inbox), **FORM})
    assert again[0] == 409 and journal.decisions("s1-1")["s1-1:1"].approved


def test_a_denial_is_stored_with_its_reason(inbox: InboxServer, journal: SQLiteJournal) -> None:
    status, _, _ = request(inbox, "POST", "/decide", form(inbox, decision="deny", reason="no"),
                           {**auth(inbox), **FORM})
    assert status == 303
    decision = journal.decisions("s1-1")["s1-1:1"]
    assert not decision.approved and not decision.deferred and decision.reason == "no"


@pytest.mark.parametrize("extra", [
    {"Origin": "http://evil.example"},
    {"Origin": "http://127.0.0.1:1"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
])
def test_a_cross_site_post_is_refused(inbox: InboxServer, journal: SQLiteJournal,
                                      extra: dict[str, str]) -> None:
    status, _, body = request(inbox, "POST", "/decide", form(inbox), {**auth(inbox), **FORM,
                                                                      **extra})
    assert status == 403, body
    assert journal.decisions("s1-1") == {}


def test_a_post_without_the_csrf_token_is_refused(inbox: InboxServer,
                                                  journal: SQLiteJournal) -> None:
    for csrf in ("", "0" * 64):
        status, _, _ = request(inbox, "POST", "/decide", form(inbox, csrf=csrf),
                               {**auth(inbox), **FORM})
        assert status == 403
    assert journal.decisions("s1-1") == {}


def test_a_post_without_the_token_is_refused(inbox: InboxServer, journal: SQLiteJournal) -> None:
    assert request(inbox, "POST", "/decide", form(inbox), FORM)[0] == 401
    assert journal.decisions("s1-1") == {}


def test_another_host_name_is_refused(inbox: InboxServer, journal: SQLiteJournal) -> None:
    """DNS rebinding: a page of attacker.example resolved to 127.0.0.1 sends its own Host."""
    headers = {**auth(inbox), "Host": f"attacker.example:{inbox.port}"}
    status, _, body = request(inbox, "GET", "/api/pending", headers=headers)
    assert status == 421 and "send_email" not in body
    status, _, _ = request(inbox, "POST", "/decide", form(inbox), {**headers, **FORM})
    assert status == 421 and journal.decisions("s1-1") == {}


def test_only_forms_are_taken(inbox: InboxServer, journal: SQLiteJournal) -> None:
    body = json.dumps({"pending_id": "s1-1:1", "decision": "allow", "csrf": inbox.guard.csrf})
    status, _, _ = request(inbox, "POST", "/decide", body,
                           {**auth(inbox), "Content-Type": "application/json"})
    assert status == 415 and journal.decisions("s1-1") == {}


def test_an_unknown_pending_id_is_404(inbox: InboxServer) -> None:
    status, _, _ = request(inbox, "POST", "/decide", form(inbox, pending_id="s9-9:1"),
                           {**auth(inbox), **FORM})
    assert status == 404


def test_a_short_token_is_refused(journal: SQLiteJournal) -> None:
    with pytest.raises(ValueError, match="at least 16"):
        InboxServer(journal, token="short")
