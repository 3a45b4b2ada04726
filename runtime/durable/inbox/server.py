"""The inbox's HTTP server (standard library ``http.server``), bound to 127.0.0.1.

Routes (every one behind :class:`~.guard.Guard`):

* ``GET /?token=T``: stores the token in a cookie and redirects to ``/``;
* ``GET /``: the page (:func:`~.page.render_page`);
* ``GET /api/pending``: the same as JSON (``Authorization: Bearer T``);
* ``POST /decide``: a form with ``pending_id``, ``decision`` (``allow`` or
  ``deny``), ``reason`` and ``csrf``; stores the decision in the journal store
  and, when every pending call of that run is decided and the inbox was
  given a ``resume`` function, resumes the run; then redirects to ``/``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .guard import Guard, Refused, new_token
from .page import CSP, Row, render_page

__all__ = ["InboxServer", "Resume", "describe_outcome"]

MAX_BODY = 64 * 1024
"""The largest form accepted."""

Resume = Callable[[str, Mapping[str, Any]], Any]
"""``runtime.resume(continuation, decisions)``: continues a decided run."""


def describe_outcome(run_id: str, result: Any) -> str:
    """One line on what a resumed run did."""
    status = getattr(result, "status", "ok" if getattr(result, "ok", False) else "error")
    if status == "paused":
        count = len(getattr(result, "pending", ()) or ())
        return f"run {run_id} resumed and paused again: {count} call(s) wait for approval"
    if status == "ok":
        value = json.dumps(getattr(result, "value", None), ensure_ascii=False, default=str)
        if len(value) > 300:
            value = value[:300] + "…"
        return f"run {run_id} resumed and finished: value {value}"
    error = getattr(result, "error", None)
    return f"run {run_id} resumed and failed: {error}"


class InboxServer:
    """The approval inbox over one journal store.

    Args:
        store: the journal store (``paused()``, ``decisions()``, ``decide()``).
        resume: continues a run once every call of it is decided (``None``: the
            decisions are only stored).
        host / port: where to listen (port 0: any free port).
        token: the secret (default: a fresh random one).
    """

    def __init__(self, store: Any, *, resume: Resume | None = None,
                 host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        self.store = store
        self.resume = resume
        self.token = token or new_token()
        Guard(self.token, host, 1)  # a bad token is refused before the port is taken
        self.notices: list[str] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), _handler_class(self))
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self.guard = Guard(self.token, host, self.port)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The address to open (without the token)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    @property
    def login_url(self) -> str:
        """The address to open in a browser: it carries the token once."""
        return f"{self.url}?token={self.token}"

    # --- lifecycle ------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Serve until :meth:`close` (or Ctrl-C) stops it."""
        self.httpd.serve_forever()

    def start(self) -> InboxServer:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever,
                                        name="toolscript-inbox", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def __enter__(self) -> InboxServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- what the routes do -----------------------------------------------------------
    def rows(self) -> list[Row]:
        """Every pending call of every paused run, with its decision if taken."""
        rows: list[Row] = []
        for run in self.store.paused():
            decided = self.store.decisions(run.run_id)
            for call in run.pending:
                decision = decided.get(call.id)
                rows.append(Row(
                    call, run.session_id, run.created_at, run.expires_at,
                    None if decision is None
                    else (bool(decision.approved), str(decision.reason), ""),
                ))
        return rows

    def pending_json(self) -> list[dict[str, Any]]:
        """``GET /api/pending``: every row as JSON data."""
        out = []
        for row in self.rows():
            data = dict(row.pending.to_dict())
            data.update(session_id=row.session_id, created_at=row.created_at,
                        expires_at=row.expires_at,
                        decision=None if row.decision is None
                        else {"approved": row.decision[0], "reason": row.decision[1]})
            out.append(data)
        return out

    def decide(self, pending_id: str, approve: bool, reason: str) -> tuple[int, str]:
        """Store one decision (and resume its run when it was the last); returns
        the HTTP status and a notice."""
        from toolscript.runtime.approval.hooks import Decision

        with self._lock:  # two clicks on one call: the second is refused
            run = next((r for r in self.store.paused()
                        if any(c.id == pending_id for c in r.pending)), None)
            if run is None:
                return HTTPStatus.NOT_FOUND, f"no pending call {pending_id!r}"
            decided = self.store.decisions(run.run_id)
            if pending_id in decided:
                return HTTPStatus.CONFLICT, f"{pending_id} is already decided"
            decision = Decision.allow(reason) if approve else Decision.deny(reason)
            self.store.decide(pending_id, decision, by="inbox")
            decided = self.store.decisions(run.run_id)
            notice = f"{pending_id}: {'approved' if approve else 'denied'}"
            if self.resume is not None and all(c.id in decided for c in run.pending):
                try:
                    result = self.resume(run.continuation, decided)
                except Exception as exc:  # shown, not raised: the page stays up
                    notice += f"; resuming run {run.run_id} failed: {type(exc).__name__}: {exc}"
                else:
                    notice += "; " + describe_outcome(run.run_id, result)
            self.notices.append(notice)
            del self.notices[:-20]
            return HTTPStatus.SEE_OTHER, notice


def _handler_class(inbox: InboxServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_inbox = inbox

    return Handler


class _Handler(BaseHTTPRequestHandler):
    """One request to the inbox."""

    server_inbox: InboxServer
    server_version = "toolscript-inbox"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the command prints what matters."""

    # --- responses ------------------------------------------------------------------
    def _send(self, status: int, body: str, content_type: str = "text/html; charset=utf-8",
              headers: Mapping[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")  # "no-referrer" makes Origin null
        self.send_header("Cache-Control", "no-store")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, refused: Refused) -> None:
        self._send(refused.status, f"{refused.message}\n", "text/plain; charset=utf-8")

    def _redirect(self, to: str, headers: Mapping[str, str] | None = None) -> None:
        self._send(HTTPStatus.SEE_OTHER, "", "text/plain; charset=utf-8",
                   {"Location": to, **(headers or {})})

    # --- routes ---------------------------------------------------------------------
    def do_GET(self) -> None:
        """The page, the token login, and the JSON list."""
        inbox = self.server_inbox
        parts = urlsplit(self.path)
        refused = inbox.guard.check_host(self.headers)
        if refused is not None:
            return self._refuse(refused)
        token = parse_qs(parts.query).get("token", [None])[0]
        if parts.path == "/" and token is not None:
            if not inbox.guard.token_ok(token):
                return self._refuse(Refused(401, "wrong inbox token"))
            return self._redirect("/", {"Set-Cookie": inbox.guard.cookie_header()})
        refused = inbox.guard.check_read(self.headers)
        if refused is not None:
            return self._refuse(refused)
        if parts.path == "/":
            page = render_page(inbox.rows(), inbox.guard.csrf, list(inbox.notices),
                               resumes=inbox.resume is not None)
            return self._send(HTTPStatus.OK, page)
        if parts.path == "/api/pending":
            body = json.dumps(inbox.pending_json(), ensure_ascii=False, default=str)
            return self._send(HTTPStatus.OK, body, "application/json")
        return self._refuse(Refused(404, "not found"))

    def do_POST(self) -> None:
        """``/decide``: one decision."""
        inbox = self.server_inbox
        if urlsplit(self.path).path != "/decide":
            return self._refuse(Refused(404, "not found"))
        refused = inbox.guard.check_read(self.headers)
        if refused is not None:
            return self._refuse(refused)
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            return self._refuse(Refused(415, "send the decision as a form"))
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            return self._refuse(Refused(413, "form too large"))
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))

        def field(name: str) -> str | None:
            values = form.get(name)
            return values[0] if values else None

        refused = inbox.guard.check_write(self.headers, field("csrf"))
        if refused is not None:
            return self._refuse(refused)
        pending_id, verdict = field("pending_id"), field("decision")
        if not pending_id or verdict not in ("allow", "deny"):
            return self._refuse(Refused(400, "pending_id and decision (allow or deny) needed"))
        status, notice = inbox.decide(pending_id, verdict == "allow", field("reason") or "")
        if status != HTTPStatus.SEE_OTHER:
            return self._refuse(Refused(status, notice))
        return self._redirect("/")
