"""Continuations: the signed, expiring token that resumes a paused run.

A continuation is ``tsc1.<payload>.<mac>``: the payload is base64url JSON
(the run and session ids, the script's text and hash, the hashes of the tool
catalog, of the approval configuration and of the injected identity, the
pending call ids, when it was issued and when it expires); the mac is
HMAC-SHA256 of the payload under the continuation key. Nothing in it is
secret from the holder, but none of it can be changed without the key.

The key: ``Runtime(continuation_key=...)``, else ``$TOOLSCRIPT_CONTINUATION_KEY``
(at least 16 bytes, as for the audit key), else a random key kept in
``<state dir>/toolscript/continuation.key`` (mode 0600, made on first use),
which any process of the same user on the same machine shares.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscript.errors import ConfigurationError, ContinuationError

KEY_ENV = "TOOLSCRIPT_CONTINUATION_KEY"
"""The environment variable holding the continuation key."""

MIN_KEY_BYTES = 16
PREFIX = "tsc1"
DEFAULT_TTL_S = 7 * 24 * 3600.0
"""How long a continuation is valid by default (seven days)."""


@dataclass(frozen=True)
class Continuation:
    """The signed content of a continuation string."""

    run_id: str
    session_id: str
    script: str
    script_sha256: str
    catalog_sha256: str
    approval_sha256: str
    identity_sha256: str
    pending: tuple[str, ...]
    issued_at: float
    expires_at: float
    hash_seed: int | None = None
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (what is signed)."""
        return {"v": 1, "run_id": self.run_id, "session_id": self.session_id,
                "script": self.script, "script_sha256": self.script_sha256,
                "catalog_sha256": self.catalog_sha256, "approval_sha256": self.approval_sha256,
                "identity_sha256": self.identity_sha256, "pending": list(self.pending),
                "issued_at": self.issued_at, "expires_at": self.expires_at,
                "hash_seed": self.hash_seed, "nonce": self.nonce}


def resolve_key(key: str | bytes | None = None) -> bytes:
    """The continuation key: ``key``, else :data:`KEY_ENV`, else the per-user key file.

    Raises:
        ConfigurationError: a key shorter than :data:`MIN_KEY_BYTES`.
    """
    if key is None:
        env = os.environ.get(KEY_ENV)
        if env is not None:
            key, where = env, KEY_ENV
        else:
            return _file_key()
    else:
        where = "continuation_key="
    raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if len(raw) < MIN_KEY_BYTES:
        raise ConfigurationError(f"{where}: a continuation key needs at least {MIN_KEY_BYTES} "
                                 f"bytes (got {len(raw)})")
    return raw


def _file_key() -> bytes:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    path = Path(state) / "toolscript" / "continuation.key"
    try:
        return bytes.fromhex(path.read_text("ascii").strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = secrets.token_hex(32)
    tmp = path.with_name(f".continuation.key.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(fresh)
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(tmp, path)  # the first writer wins; everyone reads its key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text("ascii").strip())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, payload: str) -> str:
    return _b64(hmac.new(key, f"{PREFIX}.{payload}".encode("ascii"), hashlib.sha256).digest())


def sign(content: Continuation, key: bytes) -> str:
    """The continuation string of ``content``."""
    body = json.dumps(content.to_dict(), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)
    payload = _b64(body.encode("ascii"))
    return f"{PREFIX}.{payload}.{_mac(key, payload)}"


def verify(text: Any, key: bytes, *, now: float | None = None) -> Continuation:
    """Check the signature and expiry of a continuation string and decode it.

    Raises:
        ContinuationError: not a continuation, a bad signature (tampered, or
            signed under another key), or expired.
    """
    if not isinstance(text, str) or text.count(".") != 2 or not text.startswith(PREFIX + "."):
        raise ContinuationError("this is not a toolscript continuation (expected "
                                f"'{PREFIX}.<payload>.<signature>')", reason="tampered")
    _, payload, mac = text.split(".")
    if not hmac.compare_digest(_mac(key, payload), mac):
        raise ContinuationError("the continuation's signature does not match: it was changed, "
                                "or signed under another continuation key", reason="tampered")
    try:
        data = json.loads(_unb64(payload))
        content = Continuation(
            run_id=str(data["run_id"]), session_id=str(data["session_id"]),
            script=str(data["script"]), script_sha256=str(data["script_sha256"]),
            catalog_sha256=str(data["catalog_sha256"]),
            approval_sha256=str(data["approval_sha256"]),
            identity_sha256=str(data["identity_sha256"]),
            pending=tuple(str(p) for p in data["pending"]),
            issued_at=float(data["issued_at"]), expires_at=float(data["expires_at"]),
            hash_seed=data.get("hash_seed"), nonce=str(data["nonce"]))
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise ContinuationError(f"the continuation's payload is malformed: {exc}",
                                reason="tampered") from None
    when = time.time() if now is None else now
    if when >= content.expires_at:
        ago = when - content.expires_at
        raise ContinuationError(f"the continuation expired {ago:.0f} s ago (it was valid for "
                                f"{content.expires_at - content.issued_at:.0f} s); the run "
                                "cannot be resumed", reason="expired")
    return content
