"""Idempotency keys and the stores that remember what a key already did.

A write tool declared ``@tool(idempotent=...)`` runs at most once per key:
the first call with a key claims it, runs, and stores its result (as JSON);
a later call with the same key returns that result without acting again. A
call arriving while the first one still runs (a retry after a timeout: the
tool keeps running on its worker thread) waits for it, up to a bound.

Keys come from the script (the optional ``idempotency_key`` argument) or are
derived from the tool name and the canonical JSON of the arguments
(:func:`derive_key`). Either way a key lives in a namespace
(:func:`key_namespace`): the declared scope and its id (this run, this
session, or ``global``), the caller's tenant (the context value
:data:`TENANT_CONTEXT_KEY`, e.g. ``Runtime(context={"idempotency_tenant":
"acme"})``) and the values injected into the call (a user id, an account).
Two users - or two tenants, sessions or runs, as the scope says - never see
each other's results, even with the same script key; the stored fingerprint
covers the arguments and the injected values.

Stores are pluggable (:class:`IdempotencyStore`); two ship here:
:class:`InMemoryIdempotencyStore` (one process) and
:class:`SQLiteIdempotencyStore` (a file: survives restarts, shared by
processes on one machine). A failed call releases its key, so a retry can
act; only successful results are remembered.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "TENANT_CONTEXT_KEY",
    "Claim",
    "IdempotencyStore",
    "InMemoryIdempotencyStore",
    "SQLiteIdempotencyStore",
    "canonical_json",
    "derive_key",
    "fingerprint",
    "key_namespace",
]

ClaimStatus = Literal["acquired", "done", "conflict", "busy"]


@dataclass(frozen=True)
class Claim:
    """The answer of :meth:`IdempotencyStore.claim`.

    Attributes:
        status: ``acquired`` (the caller runs the call, then calls
            ``complete`` or ``release``), ``done`` (``value`` is the first
            result), ``conflict`` (the key was used with other arguments) or
            ``busy`` (another call still holds the key after waiting).
        value: the stored result, for ``done``.
    """

    status: ClaimStatus
    value: Any = None


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal data gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def _dump(value: Any) -> str:
    """A stored result: JSON in its own key order (a replay looks like the original),
    ASCII-escaped so that any string (a lone surrogate too) can be stored."""
    return json.dumps(value, default=str)


def fingerprint(args: Any) -> str:
    """A SHA-256 of the canonical JSON of ``args``."""
    return hashlib.sha256(canonical_json(args).encode("utf-8", "surrogatepass")).hexdigest()


TENANT_CONTEXT_KEY = "idempotency_tenant"
"""The context key whose value (any JSON data) separates tenants' idempotency keys."""


def key_namespace(scope: str, run_id: str, session_id: str, tenant: Any,
                  injected: Mapping[str, Any]) -> str:
    """The namespace of a key: a hash of the scope, its id (the run's or the
    session's; none for ``global``), the tenant and the injected values."""
    scope_id = {"run": run_id, "session": session_id}.get(scope, "")
    payload = canonical_json([scope, scope_id, tenant, dict(injected)])
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def derive_key(scope: str, tool: str, args: Any) -> str:
    """The key of a call without a script-supplied key: stable within ``scope``."""
    text = f"{scope}\x00{tool}\x00{canonical_json(args)}"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    return "ts-" + digest.hexdigest()[:40]


class IdempotencyStore(ABC):
    """Remembers, per key, whether a call ran and what it returned."""

    @abstractmethod
    def claim(self, key: str, fingerprint: str, wait_s: float) -> Claim:
        """Claim ``key`` for a call whose arguments hash to ``fingerprint``.

        If another call holds the key and has not finished, wait up to
        ``wait_s`` seconds for it to complete (then ``done``) or fail (then
        this call acquires the key).
        """

    @abstractmethod
    def complete(self, key: str, value: Any) -> None:
        """Store the result (JSON data) of the call that acquired ``key``."""

    @abstractmethod
    def release(self, key: str) -> None:
        """The call that acquired ``key`` failed: forget it, so a retry can act."""

    @abstractmethod
    def peek(self, key: str) -> tuple[str, str] | None:
        """``(state, fingerprint)`` of ``key`` (state ``pending`` or ``done``), or None."""

    def close(self) -> None:  # noqa: B027 - optional for stores holding nothing
        """Release resources (files, connections)."""


@dataclass
class _Entry:
    state: str
    fingerprint: str
    value: str | None
    at: float


class InMemoryIdempotencyStore(IdempotencyStore):
    """A thread-safe store in this process's memory.

    Args:
        ttl_s: forget finished entries older than this (None: keep them).
    """

    def __init__(self, ttl_s: float | None = None) -> None:
        self.ttl_s = ttl_s
        self._entries: dict[str, _Entry] = {}
        self._cond = threading.Condition()

    def _live(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if (
            entry is not None
            and entry.state == "done"
            and self.ttl_s is not None
            and time.time() - entry.at > self.ttl_s
        ):
            del self._entries[key]
            return None
        return entry

    def claim(self, key: str, fingerprint: str, wait_s: float) -> Claim:
        """See :meth:`IdempotencyStore.claim`."""
        deadline = time.monotonic() + wait_s
        with self._cond:
            while True:
                entry = self._live(key)
                if entry is None:
                    self._entries[key] = _Entry("pending", fingerprint, None, time.time())
                    return Claim("acquired")
                if entry.fingerprint != fingerprint:
                    return Claim("conflict")
                if entry.state == "done":
                    return Claim("done", json.loads(entry.value or "null"))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return Claim("busy")
                self._cond.wait(remaining)

    def complete(self, key: str, value: Any) -> None:
        """See :meth:`IdempotencyStore.complete`."""
        with self._cond:
            entry = self._entries.get(key)
            fp = entry.fingerprint if entry is not None else ""
            self._entries[key] = _Entry("done", fp, _dump(value), time.time())
            self._cond.notify_all()

    def release(self, key: str) -> None:
        """See :meth:`IdempotencyStore.release`."""
        with self._cond:
            entry = self._entries.get(key)
            if entry is not None and entry.state == "pending":
                del self._entries[key]
            self._cond.notify_all()

    def peek(self, key: str) -> tuple[str, str] | None:
        """See :meth:`IdempotencyStore.peek`."""
        with self._cond:
            entry = self._live(key)
            return (entry.state, entry.fingerprint) if entry is not None else None


class SQLiteIdempotencyStore(IdempotencyStore):
    """A store in an SQLite file, shared by threads and processes of one machine.

    Args:
        path: the database file (created if missing); ``":memory:"`` works too.
        ttl_s: forget finished entries older than this (None: keep them).
        lease_s: a pending claim older than this is considered abandoned (its
            process died) and may be taken over.
        poll_s: how often a waiting claim looks again.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        ttl_s: float | None = None,
        lease_s: float = 300.0,
        poll_s: float = 0.02,
    ) -> None:
        self.path = str(path)
        self.ttl_s = ttl_s
        self.lease_s = lease_s
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS toolscript_idempotency ("
            " key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL,"
            " value TEXT, at REAL NOT NULL)"
        )

    def _try_claim(self, key: str, fp: str) -> Claim | None:
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT fingerprint, state, value, at FROM toolscript_idempotency "
                    "WHERE key = ?", (key,)
                ).fetchone()
                stale = row is not None and (
                    (row[1] == "pending" and now - row[3] > self.lease_s)
                    or (row[1] == "done" and self.ttl_s is not None and now - row[3] > self.ttl_s)
                )
                if row is None or stale:
                    self._db.execute(
                        "INSERT OR REPLACE INTO toolscript_idempotency VALUES (?, ?, 'pending', "
                        "NULL, ?)", (key, fp, now)
                    )
                    return Claim("acquired")
                if row[0] != fp:
                    return Claim("conflict")
                if row[1] == "done":
                    return Claim("done", json.loads(row[2] or "null"))
                return None
            finally:
                self._db.execute("COMMIT")

    def claim(self, key: str, fingerprint: str, wait_s: float) -> Claim:
        """See :meth:`IdempotencyStore.claim` (waiting polls every ``poll_s``)."""
        deadline = time.monotonic() + wait_s
        while True:
            claim = self._try_claim(key, fingerprint)
            if claim is not None:
                return claim
            if time.monotonic() >= deadline:
                return Claim("busy")
            time.sleep(self.poll_s)

    def complete(self, key: str, value: Any) -> None:
        """See :meth:`IdempotencyStore.complete`."""
        with self._lock:
            self._db.execute(
                "UPDATE toolscript_idempotency SET state = 'done', value = ?, at = ? "
                "WHERE key = ?", (_dump(value), time.time(), key)
            )

    def release(self, key: str) -> None:
        """See :meth:`IdempotencyStore.release`."""
        with self._lock:
            self._db.execute(
                "DELETE FROM toolscript_idempotency WHERE key = ? AND state = 'pending'", (key,)
            )

    def peek(self, key: str) -> tuple[str, str] | None:
        """See :meth:`IdempotencyStore.peek`."""
        with self._lock:
            row = self._db.execute(
                "SELECT state, fingerprint FROM toolscript_idempotency WHERE key = ?", (key,)
            ).fetchone()
        return (str(row[0]), str(row[1])) if row is not None else None

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()
