"""The ``run_script`` sessions of an MCP server: owned, bounded, reaped.

Every session belongs to the connection that created it (its *owner*: the
transport session of a Streamable HTTP client, the one client of a stdio
server). A run without a ``session_id`` continues its owner's session; a
``session_id`` is honoured only for its owner, so an id that leaks into
another client's conversation reaches nothing (the answer is the same as for
an id that never existed). A connection without a transport session (the
stateless 2026 protocol, an in-memory client) gets a fresh session for each
run, closed when the run ends.

Bounds: at most ``max_sessions`` are open (when a new one is needed, the
least recently used idle one is closed; if every one is running a script,
the run is refused), and a session idle for ``idle_ttl_s`` is closed by a
background reaper, which stops its sandbox.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolscript.runtime.runtime import Runtime
    from toolscript.runtime.session import Session

__all__ = ["Lease", "Refusal", "ScriptSessions"]


@dataclass
class _Entry:
    session: Session
    owner: str | None
    used: float
    busy: int = 0


@dataclass(frozen=True)
class Lease:
    """A session handed to one run; give it back with :meth:`ScriptSessions.release`.

    Attributes:
        key: the session's id (``session_id``), or None for a one-run session.
        session: the session to run in.
        new: the session was started for this run (no earlier variables).
    """

    key: str | None
    session: Session
    new: bool
    _slot: str


@dataclass(frozen=True)
class Refusal:
    """Why no session was handed out: a stable ``type`` and a message for the model."""

    type: str
    message: str


class ScriptSessions:
    """Sessions of one runtime, each bound to the connection that created it.

    Args:
        runtime: where sessions come from (``runtime.session()``).
        max_sessions: the most sessions (sandboxes) open at once.
        idle_ttl_s: a session unused this long is closed.
        clock: the time source of idle times (``time.monotonic``; tests pass their own).
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        max_sessions: int = 16,
        idle_ttl_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1 or not idle_ttl_s > 0:
            from toolscript.errors import ConfigurationError

            raise ConfigurationError("max_sessions must be >= 1 and idle_ttl_s > 0")
        self.runtime = runtime
        self.max_sessions = max_sessions
        self.idle_ttl_s = idle_ttl_s
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._by_owner: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None

    # --- leases -------------------------------------------------------------------
    def acquire(self, session_id: str | None, owner: str | None) -> Lease | Refusal:
        """The session a run of ``owner`` goes to: ``session_id`` if it is the
        owner's, else the owner's own session, else a new one."""
        self._start_reaper()
        doomed: list[Session] = []
        try:
            with self._lock:
                return self._acquire(session_id, owner, doomed)
        finally:
            _close(doomed)

    def _acquire(
        self, session_id: str | None, owner: str | None, doomed: list[Session]
    ) -> Lease | Refusal:
        now = self._clock()
        doomed.extend(self._expired(now))
        if session_id is not None:
            entry = self._entries.get(session_id)
            if entry is None or owner is None or entry.owner != owner:
                return Refusal("unknown_session", _unknown_message(session_id, owner))
            return self._lease(session_id, entry, now, new=False)
        known = self._by_owner.get(owner) if owner is not None else None
        if known is not None and known in self._entries:
            return self._lease(known, self._entries[known], now, new=False)
        while len(self._entries) >= self.max_sessions:
            idle = next((k for k, e in self._entries.items() if e.busy == 0), None)
            if idle is None:
                return Refusal(
                    "too_many_sessions",
                    f"all {self.max_sessions} sessions of this server are running scripts; "
                    "try again when one has finished",
                )
            doomed.append(self._remove(idle).session)
        slot = secrets.token_urlsafe(16)
        entry = _Entry(self.runtime.session(), owner, now)
        self._entries[slot] = entry
        if owner is not None:
            self._by_owner[owner] = slot
        return self._lease(slot, entry, now, new=True)

    def _lease(self, slot: str, entry: _Entry, now: float, new: bool) -> Lease:
        entry.busy += 1
        entry.used = now
        self._entries.move_to_end(slot)
        return Lease(slot if entry.owner is not None else None, entry.session, new, slot)

    def release(self, lease: Lease) -> None:
        """The run of ``lease`` ended; a one-run session is closed now."""
        doomed: list[Session] = []
        with self._lock:
            entry = self._entries.get(lease._slot)
            if entry is not None and entry.session is lease.session:
                entry.busy -= 1
                entry.used = self._clock()
                if entry.owner is None and entry.busy == 0:
                    doomed.append(self._remove(lease._slot).session)
        _close(doomed)

    # --- closing ------------------------------------------------------------------
    def reset(self, session_id: str | None, owner: str | None) -> bool:
        """Close ``session_id`` (default: the owner's session) if ``owner`` owns it."""
        with self._lock:
            slot = session_id if session_id is not None else self._by_owner.get(owner or "")
            entry = self._entries.get(slot) if slot is not None else None
            if slot is None or entry is None or owner is None or entry.owner != owner:
                return False
            session = self._remove(slot).session
        session.close()
        return True

    def close_owner(self, owner: str) -> int:
        """Close every session of ``owner`` (its connection ended); how many."""
        with self._lock:
            slots = [k for k, e in self._entries.items() if e.owner == owner]
            doomed = [self._remove(k).session for k in slots]
        _close(doomed)
        return len(doomed)

    def reap(self) -> int:
        """Close the sessions idle for longer than ``idle_ttl_s`` now; how many."""
        with self._lock:
            doomed = self._expired(self._clock())
        _close(doomed)
        return len(doomed)

    def close_all(self) -> None:
        """Close every session and stop the reaper."""
        self._stop.set()
        with self._lock:
            doomed = [entry.session for entry in self._entries.values()]
            self._entries.clear()
            self._by_owner.clear()
        _close(doomed)

    def __len__(self) -> int:
        """How many sessions are open."""
        return len(self._entries)

    def _expired(self, now: float) -> list[Session]:
        stale = [
            k for k, e in self._entries.items() if e.busy == 0 and now - e.used > self.idle_ttl_s
        ]
        return [self._remove(k).session for k in stale]

    def _remove(self, slot: str) -> _Entry:
        entry = self._entries.pop(slot)
        if entry.owner is not None and self._by_owner.get(entry.owner) == slot:
            del self._by_owner[entry.owner]
        return entry

    # --- reaper -------------------------------------------------------------------
    def _start_reaper(self) -> None:
        if self._reaper is not None or self._stop.is_set():
            return
        with self._lock:
            if self._reaper is None:
                self._reaper = threading.Thread(
                    target=self._reap_forever, name="toolscript-mcp-reaper", daemon=True
                )
                self._reaper.start()

    def _reap_forever(self) -> None:
        interval = min(max(self.idle_ttl_s / 4, 0.05), 30.0)
        while not self._stop.wait(interval):
            self.reap()


def _close(sessions: list[Session]) -> None:
    for session in sessions:
        session.close()


def _unknown_message(session_id: str, owner: str | None) -> str:
    if owner is None:
        return (
            f"no session {session_id!r} for this connection: it has no transport session "
            "(stateless HTTP), so each script runs in a fresh session; omit session_id"
        )
    return (
        f"no session {session_id!r} for this connection (it expired, was reset, or belongs "
        "to another connection); omit session_id to continue this connection's session"
    )
