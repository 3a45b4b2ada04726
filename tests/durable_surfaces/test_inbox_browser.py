"""The approval inbox in a real headless Chromium (selenium + Debian's chromium-driver).

A person opens the printed address, sees the pending call with its arguments
as they will run (markup and scripts in them shown as text, inert), and
approves or denies with a reason. Attacks from the browser: the page opened
without the token, a page on another port of this machine (same-site, so the
``SameSite=Strict`` cookie *is* sent) that posts a decision by itself, and
one that tries to read the list with ``fetch``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from surface_helpers import HOSTILE_ARGS, add_pause
from toolscript.runtime.durable.inbox import InboxServer
from toolscript.runtime.durable.inbox.page import shown_json
from toolscript.runtime.durable.sqlite import SQLiteJournal
from waiting import wait_until


@pytest.fixture
def inbox(journal: SQLiteJournal) -> Iterator[InboxServer]:
    add_pause(journal)
    with InboxServer(journal) as server:
        yield server


class _EvilPage:
    """Another local web server (another port: same site as the inbox) serving one page."""

    def __init__(self, html: str) -> None:
        body = html.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _EvilPage:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def text_of(browser: Any, element_id: str) -> str:
    """The text of an element, "" while the page (re)loads."""
    found = browser.find_elements("id", element_id)
    try:
        return str(found[0].text) if found else ""
    except Exception:  # went stale: the page changed under us
        return ""


def login(browser: Any, inbox: InboxServer) -> None:
    browser.get(inbox.login_url)
    wait_until(lambda: browser.title == "toolscript approvals")


def test_the_page_shows_the_call_and_approving_stores_the_decision(
        browser: Any, inbox: InboxServer, journal: SQLiteJournal) -> None:
    from selenium.webdriver.common.by import By

    login(browser, inbox)
    assert inbox.token not in browser.current_url, browser.page_source  # token left the URL
    box = browser.find_element(By.ID, "call-s1-1:1")
    assert "send_email" in box.text and "script line 3" in box.text
    shown = box.find_element(By.CSS_SELECTOR, "pre.arguments").text
    assert shown == shown_json(HOSTILE_ARGS)
    box.find_element(By.NAME, "reason").send_keys("checked with the customer")
    box.find_element(By.CSS_SELECTOR, "button.allow").click()
    wait_until(lambda: "approved" in text_of(browser, "call-s1-1:1"))
    decision = journal.decisions("s1-1")["s1-1:1"]
    assert decision.approved and decision.reason == "checked with the customer"
    assert "s1-1:1: approved" in browser.find_element(By.CLASS_NAME, "notice").text


def test_denying_in_the_browser(browser: Any, inbox: InboxServer, journal: SQLiteJournal) -> None:
    from selenium.webdriver.common.by import By

    login(browser, inbox)
    box = browser.find_element(By.ID, "call-s1-1:1")
    box.find_element(By.NAME, "reason").send_keys("wrong customer")
    box.find_element(By.CSS_SELECTOR, "button.deny").click()
    wait_until(lambda: "denied: wrong customer" in text_of(browser, "call-s1-1:1"))
    assert not journal.decisions("s1-1")["s1-1:1"].approved


def test_markup_and_scripts_in_arguments_are_inert(browser: Any, inbox: InboxServer) -> None:
    from selenium.webdriver.common.by import By

    login(browser, inbox)
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.find_elements(By.ID, "injected") == []
    assert browser.find_elements(By.CSS_SELECTOR, "pre.arguments img") == []
    assert browser.find_elements(By.TAG_NAME, "script") == []
    text = browser.find_element(By.CSS_SELECTOR, "pre.arguments").text
    assert '<img src=x onerror=\\"window.__pwned=2\\">' in text
    assert "\\u202e" in text  # the bidi override is visible as an escape, not applied


def test_without_the_token_the_browser_gets_nothing(browser: Any, inbox: InboxServer) -> None:
    browser.delete_all_cookies()
    browser.get(inbox.url)
    body = browser.find_element("tag name", "body").text
    assert "no valid inbox token" in body and "send_email" not in body


def test_a_same_site_page_cannot_post_a_decision(browser: Any, inbox: InboxServer,
                                                 journal: SQLiteJournal) -> None:
    """The attacker's page (another port of 127.0.0.1) submits a form to the inbox while
    the person is logged in: the cookie goes along, the Origin and Sec-Fetch-Site
    checks (and the unknown CSRF token) refuse it."""
    login(browser, inbox)
    guess = "0" * 64
    page = f"""<!doctype html><html><body><form id=f method=post action="{inbox.url}decide">
<input name=pending_id value="s1-1:1"><input name=decision value=allow>
<input name=csrf value="{guess}"></form>
<script>document.getElementById('f').submit()</script></body></html>"""
    with _EvilPage(page) as evil:
        browser.get(evil.url)
        wait_until(lambda: browser.current_url.startswith(inbox.url))
        body = browser.find_element("tag name", "body").text
    assert "cross-site request refused" in body
    assert journal.decisions("s1-1") == {}


def test_a_same_site_page_with_the_real_csrf_token_is_still_refused(
        browser: Any, inbox: InboxServer, journal: SQLiteJournal) -> None:
    """Even with a leaked CSRF token, a post from another origin is refused."""
    login(browser, inbox)
    page = f"""<!doctype html><html><body><form id=f method=post action="{inbox.url}decide">
<input name=pending_id value="s1-1:1"><input name=decision value=allow>
<input name=csrf value="{inbox.guard.csrf}"></form>
<script>document.getElementById('f').submit()</script></body></html>"""
    with _EvilPage(page) as evil:
        browser.get(evil.url)
        wait_until(lambda: browser.current_url.startswith(inbox.url))
        body = browser.find_element("tag name", "body").text
    assert "cross-site request refused" in body
    assert journal.decisions("s1-1") == {}


def test_a_same_site_page_cannot_read_the_list(browser: Any, inbox: InboxServer) -> None:
    login(browser, inbox)
    page = f"""<!doctype html><html><body><pre id=out>waiting</pre><script>
fetch("{inbox.url}api/pending", {{credentials: "include"}})
  .then(r => r.text()).then(t => {{document.getElementById('out').textContent = 'READ ' + t}})
  .catch(e => {{document.getElementById('out').textContent = 'BLOCKED ' + e}});
</script></body></html>"""
    with _EvilPage(page) as evil:
        browser.get(evil.url)
        wait_until(lambda: text_of(browser, "out") not in ("", "waiting"))
        outcome = browser.find_element("id", "out").text
    assert outcome.startswith("BLOCKED"), outcome
    assert "send_email" not in outcome


def test_screenshot_of_the_inbox(browser: Any, journal: SQLiteJournal, tmp_path: Path) -> None:
    """The docs' screenshot comes from this same code (tests/durable_surfaces/screenshot.py)."""
    from screenshot import take_screenshot

    out = take_screenshot(browser, journal, tmp_path / "inbox.png")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
