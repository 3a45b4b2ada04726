"""Helpers of the durable-approval surface tests (a uniquely named module: ``conftest``
is ambiguous across test folders): a pause in a real journal store, a real
headless Chromium (Debian's ``chromium`` + ``chromium-driver``, through selenium)."""

from __future__ import annotations

import os
import shutil
import time
from typing import Any

from toolscript.runtime.durable.pending import PendingCall
from toolscript.runtime.durable.sqlite import SQLiteJournal
from toolscript.runtime.durable.store import PausedRun

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

HOSTILE_ARGS: dict[str, Any] = {
    "to": "ops@example.com",
    "subject": "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned=2\">",
    "body": "Refund \u202eapproved\u202c for order 17</pre><b id=\"injected\">bold</b>",
}
"""Arguments a prompt-injected script might send: markup, a script, a bidi override."""


def add_pause(store: SQLiteJournal, run_id: str = "s1-1", *, calls: int = 1,
              arguments: dict[str, Any] | None = None, continuation: str = "tsc1.unused.x"
              ) -> PausedRun:
    """Store a pause of ``calls`` pending calls of ``send_email`` (the inbox only reads it)."""
    now = time.time()
    pending = tuple(
        PendingCall(id=f"{run_id}:{seq}", tool="send_email",
                    arguments=dict(arguments if arguments is not None else HOSTILE_ARGS),
                    caller=f"script line {seq + 2}", reason="send_email requires approval",
                    run_id=run_id, seq=seq)
        for seq in range(1, calls + 1))
    run = PausedRun(run_id, "s1", pending, continuation, now, now + 3600)
    store.save_pause(run)
    return run


def have_browser() -> bool:
    """Chromium and its driver are installed."""
    return os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)


def start_chrome() -> Any:
    """A real headless Chromium driven by chromedriver (``quit()`` it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,760", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    return driver
