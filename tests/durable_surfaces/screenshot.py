"""The screenshot of the approval inbox in the docs, taken in a real headless Chromium.

``python3 tests/durable_surfaces/screenshot.py docs/assets/approval-inbox.png``
writes it again (the test ``test_screenshot_of_the_inbox`` takes one the same way).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolscript.runtime.durable.inbox import InboxServer
from toolscript.runtime.durable.pending import PendingCall
from toolscript.runtime.durable.store import PausedRun

EXAMPLE = (
    PendingCall(id="3f9c2a71d0e4-1:2", tool="issue_refund",
                arguments={"order_id": "A-1042", "amount_eur": 1250.0,
                           "note": "<b>VIP</b> customer, approve fast \u202eplease"},
                caller="script line 4", reason="issue_refund requires approval",
                run_id="3f9c2a71d0e4-1", seq=2),
    PendingCall(id="3f9c2a71d0e4-1:3", tool="send_email",
                arguments={"to": "customer@example.com", "subject": "Your refund",
                           "body": "We refunded 1250.00 EUR for order A-1042."},
                caller="script line 5", reason="send_email requires approval",
                run_id="3f9c2a71d0e4-1", seq=3),
)


def take_screenshot(browser: Any, store: Any, out: Path) -> Path:
    """Store the example pause in ``store``, open the inbox in ``browser``, save a PNG."""
    now = time.time()
    store.save_pause(PausedRun("3f9c2a71d0e4-1", "3f9c2a71d0e4", EXAMPLE, "tsc1.example.x",
                               now - 300, now + 7 * 86400))
    with InboxServer(store) as inbox:
        browser.set_window_size(1100, 900)
        browser.get(inbox.login_url)
        browser.find_element("css selector", "pre.arguments")
        out.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(out))
    return out


def main(argv: list[str]) -> int:
    """Write the screenshot to ``argv[0]``."""
    from surface_helpers import start_chrome
    from toolscript.runtime.durable.sqlite import SQLiteJournal

    browser = start_chrome()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteJournal(Path(tmp) / "journal.sqlite3")
            try:
                print(take_screenshot(browser, store, Path(argv[0])))
            finally:
                store.close()
    finally:
        browser.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["docs/assets/approval-inbox.png"]))
