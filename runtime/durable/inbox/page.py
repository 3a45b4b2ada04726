"""The inbox's HTML: the pending calls, their arguments as run, a form for each.

Arguments are shown as their JSON, whole (never cut), with the characters
that could hide or rewrite text (control characters, bidirectional overrides,
zero-width and other invisible characters, line separators) written as
``\\uXXXX`` escapes, which is still the same JSON; then HTML-escaped. So what
the page shows is exactly what runs, and HTML or JavaScript in an argument is
text. The page has no script at all; its one stylesheet is allowed by hash in
the Content-Security-Policy (:data:`CSP`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CSP", "Row", "render_page", "shown_json"]

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#1d2330;padding:0 1em}
h1{font-size:1.4em;margin-bottom:.2em}
.sub{color:#5b6475;margin-top:0}
.call{border:1px solid #cfd5e0;border-radius:8px;padding:1em 1.2em;margin:1em 0;background:#fbfcfe}
.call h2{font-size:1.1em;margin:0 0 .4em 0}
.meta{color:#5b6475;font-size:.9em;margin:.2em 0}
pre{background:#f0f2f7;border-radius:6px;padding:.7em;overflow:auto;white-space:pre-wrap;
word-break:break-all;font:13px/1.4 ui-monospace,monospace}
form{display:flex;gap:.5em;align-items:center;flex-wrap:wrap;margin-top:.6em}
input[type=text]{flex:1;min-width:14em;padding:.35em;border:1px solid #b8c0cf;border-radius:5px}
button{padding:.4em 1em;border-radius:5px;border:1px solid #888;cursor:pointer;font-weight:600}
button.allow{background:#1f7a3d;color:#fff;border-color:#1f7a3d}
button.deny{background:#a32626;color:#fff;border-color:#a32626}
.decided{font-weight:600}
.notice{border-left:4px solid #3b6fd8;background:#eef3fd;padding:.6em 1em;margin:1em 0}
.empty{color:#5b6475;font-style:italic}
"""

_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CSP = (f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
"""The page's Content-Security-Policy: no script, no framing, forms only to itself."""

_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
_ALSO_ESCAPED = frozenset({0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x00A0, 0x2007, 0x202F})


def _visible(char: str) -> str:
    if char in "\n ":
        return char
    code = ord(char)
    if (unicodedata.category(char) in _ESCAPED_CATEGORIES or 0xFE00 <= code <= 0xFE0F
            or code in _ALSO_ESCAPED or (unicodedata.category(char) == "Zs" and char != " ")):
        if code > 0xFFFF:  # JSON escapes astral characters as a surrogate pair
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"
    return char


def shown_json(value: Any) -> str:
    """``value`` as indented JSON with invisible characters escaped: the same JSON
    data (``json.loads`` gives ``value`` back), readable by a person."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return "".join(map(_visible, text))


@dataclass(frozen=True)
class Row:
    """One pending call as the page shows it.

    Attributes:
        pending: the pending call (``id``, ``tool``, ``arguments``, ``caller``,
            ``reason``, ``run_id``).
        session_id: the run's session.
        created_at / expires_at: when the run paused, and when its
            continuation expires (UNIX times).
        decision: ``None`` while undecided, else ``(approved, reason, by)``.
    """

    pending: Any
    session_id: str
    created_at: float
    expires_at: float
    decision: tuple[bool, str, str] | None = None


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _row(row: Row, csrf: str) -> str:
    call = row.pending
    e = html.escape
    head = (f'<div class="call" id="call-{e(call.id)}">'
            f'<h2>{e(call.tool)} <span class="meta">({e(call.caller)})</span></h2>'
            f'<p class="meta">pending id <code class="pending-id">{e(call.id)}</code> · run '
            f'<code>{e(call.run_id)}</code> · session <code>{e(row.session_id)}</code></p>'
            f'<p class="meta">paused {e(_when(row.created_at))} · expires '
            f'{e(_when(row.expires_at))}</p>'
            f'<p class="meta">why it waits: <span class="reason">{e(call.reason or "-")}'
            '</span></p>'
            f'<pre class="arguments">{e(shown_json(call.arguments))}</pre>')
    if row.decision is not None:
        approved, reason, by = row.decision
        verdict = "approved" if approved else "denied"
        tail = (f'<p class="decided">{verdict}' + (f": {e(reason)}" if reason else "")
                + (f" (by {e(by)})" if by else "") + "</p></div>")
        return head + tail
    form = (f'<form method="post" action="/decide">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}">'
            f'<input type="hidden" name="pending_id" value="{e(call.id)}">'
            '<input type="text" name="reason" placeholder="reason (recorded in the audit log)" '
            'aria-label="reason">'
            '<button class="allow" type="submit" name="decision" value="allow">Approve</button>'
            '<button class="deny" type="submit" name="decision" value="deny">Deny</button>'
            "</form></div>")
    return head + form


def render_page(rows: Sequence[Row], csrf: str, notices: Sequence[str] = (),
                resumes: bool = False) -> str:
    """The whole inbox page: notices (outcomes of resumes), then one box per call."""
    e = html.escape
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>toolscript approvals</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>toolscript approvals</h1>",
        '<p class="sub">Calls that wait for a person. Arguments are shown exactly as the '
        "tool will receive them (JSON; invisible characters escaped). "
        + ("A decided run resumes here." if resumes else
           "Decisions are stored; resume with <code>toolscript approvals approve ID "
           "--resume</code> or start the inbox with <code>--tools</code>.") + "</p>",
    ]
    parts.extend(f'<div class="notice">{e(text)}</div>' for text in notices)
    if not rows:
        parts.append('<p class="empty">Nothing waits for approval.</p>')
    parts.extend(_row(row, csrf) for row in rows)
    parts.append("</body></html>")
    return "".join(parts)

