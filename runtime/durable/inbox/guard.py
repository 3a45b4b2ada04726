"""Who may use the approval inbox: the token, the Host, and same-origin requests only.

Every request must carry the inbox's token: in its cookie (set when the page
is first opened through the printed ``/?token=...`` address, ``HttpOnly``,
``SameSite=Strict``) or as ``Authorization: Bearer <token>``. Compared in
constant time. A missing or wrong token gets 401 and no data.

Against other pages the person has open (cross-site requests, DNS rebinding):

* ``Host`` must name the address the inbox listens on (``127.0.0.1:PORT``,
  ``localhost:PORT`` ...): a rebinding name pointing at 127.0.0.1 is refused;
* a ``POST`` whose ``Origin`` is not the inbox's own, or whose
  ``Sec-Fetch-Site`` says ``cross-site`` or ``same-site``, is refused (403);
* every form carries a CSRF token (HMAC of the inbox token), checked on ``POST``;
* responses forbid framing and inline scripts (CSP), so arguments that hold
  HTML or JavaScript are shown as text and never run.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any, Protocol

__all__ = ["COOKIE", "MIN_TOKEN_CHARS", "Guard", "Refused", "new_token"]

COOKIE = "toolscript_inbox"
"""The name of the cookie that holds the token."""
MIN_TOKEN_CHARS = 16
"""The shortest token accepted (a bearer secret)."""
_LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Headers(Protocol):
    """Request headers: a mapping or ``http.server``'s message (``get(name)``)."""

    def get(self, name: str, /) -> Any: ...


def new_token() -> str:
    """A fresh random token (URL-safe, 32 bytes of entropy)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Refused:
    """Why a request was refused: the HTTP status and a short text."""

    status: int
    message: str


class Guard:
    """The checks of one inbox: its token and the origins it answers.

    Args:
        token: the secret every request must carry.
        host: the address the inbox listens on.
        port: its port.
    """

    def __init__(self, token: str, host: str, port: int) -> None:
        if len(token) < MIN_TOKEN_CHARS:
            raise ValueError(f"the inbox token must have at least {MIN_TOKEN_CHARS} characters")
        self.token = token
        self.port = port
        names = {host, *_LOCAL_NAMES} if host in ("127.0.0.1", "localhost", "::1") else {host}
        self.hosts = frozenset(
            f"[{name}]:{port}" if ":" in name and not name.startswith("[") else f"{name}:{port}"
            for name in names
        )
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.csrf = hmac.new(token.encode(), b"toolscript-inbox-csrf", hashlib.sha256).hexdigest()

    def token_ok(self, candidate: str | None) -> bool:
        """``candidate`` is the token (constant-time comparison)."""
        return candidate is not None and hmac.compare_digest(
            candidate.encode("utf-8", "replace"), self.token.encode()
        )

    def presented_token(self, headers: Headers) -> str | None:
        """The token a request carries: its bearer header, else its cookie."""
        auth = headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            return auth[len("Bearer "):].strip()
        raw = headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        morsel = jar.get(COOKIE)
        return morsel.value if morsel is not None else None

    def check_host(self, headers: Headers) -> Refused | None:
        """Refuse a ``Host`` that is not the inbox's own address (DNS rebinding)."""
        host = (headers.get("Host") or "").lower()
        if host not in self.hosts:
            return Refused(421, "this inbox answers only at its own address")
        return None

    def check_read(self, headers: Headers) -> Refused | None:
        """The checks of a ``GET``: the address and the token."""
        return self.check_host(headers) or (
            None if self.token_ok(self.presented_token(headers))
            else Refused(401, "no valid inbox token: open the address the inbox printed")
        )

    def check_write(self, headers: Headers, csrf: str | None) -> Refused | None:
        """The checks of a ``POST``: the read checks, same origin, and the CSRF token."""
        refused = self.check_read(headers)
        if refused is not None:
            return refused
        site = (headers.get("Sec-Fetch-Site") or "").lower()
        if site in ("cross-site", "same-site"):
            return Refused(403, f"cross-site request refused (Sec-Fetch-Site: {site})")
        origin = headers.get("Origin")
        if origin is not None and origin.lower() not in self.origins:
            return Refused(403, "cross-site request refused (Origin is not this inbox)")
        if csrf is None or not hmac.compare_digest(csrf.encode("utf-8", "replace"),
                                                   self.csrf.encode()):
            return Refused(403, "missing or wrong CSRF token: reload the inbox page")
        return None

    def cookie_header(self) -> str:
        """The ``Set-Cookie`` value that stores the token in the browser."""
        return f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
