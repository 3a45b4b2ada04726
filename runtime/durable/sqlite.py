"""The default journal store: one SQLite file (stdlib ``sqlite3``), WAL, ``synchronous=FULL``.

Every write commits before the method returns; with ``synchronous=FULL`` in
WAL mode SQLite fsyncs the log on each commit, so an entry survives a crash of
the host (and of the machine) once :meth:`SQLiteJournal.record` returned.
Several processes on one machine may share the file (``busy_timeout``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolscript.runtime.approval.hooks import Decision

from .holders import holder_gone
from .pending import PendingCall
from .store import (
    JournalEntry,
    PausedRun,
    continuation_digest_of,
    decision_from_dict,
    decision_to_dict,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, tool TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL, result TEXT, idempotency_key TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (run_id, seq));
CREATE TABLE IF NOT EXISTS pauses (
    run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, pending TEXT NOT NULL,
    continuation TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL,
    active INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS decisions (
    pending_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, decision TEXT NOT NULL,
    decided_by TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS resumes (
    digest TEXT PRIMARY KEY, run_id TEXT NOT NULL, holder TEXT NOT NULL,
    lease_until REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0);
"""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, default=repr)


class SQLiteJournal:
    """A :class:`~toolscript.runtime.durable.store.JournalStore` in one SQLite file.

    Args:
        path: the database file (its directory is created, mode 0700).
        busy_timeout_s: how long a write waits for another process's lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=busy_timeout_s,
                                   isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        with self._lock:
            self._db.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"SQLiteJournal({str(self.path)!r})"

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._db.execute(sql, params).fetchall())

    # --- entries --------------------------------------------------------------------
    def record(self, entry: JournalEntry) -> None:
        """Write (or replace) one entry; committed (fsynced) before returning."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?,?)",
                       (entry.run_id, entry.seq, entry.tool, entry.args_hash, entry.status,
                        _dump(entry.result), entry.idempotency_key, entry.at))

    def entries(self, run_id: str) -> list[JournalEntry]:
        """The run's entries, by seq."""
        rows = self._query("SELECT run_id, seq, tool, args_hash, status, result, "
                           "idempotency_key, at FROM entries WHERE run_id=? ORDER BY seq",
                           (run_id,))
        return [JournalEntry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]) if r[5] else None,
                             r[6], r[7]) for r in rows]

    # --- pauses and decisions ---------------------------------------------------------
    def save_pause(self, run: PausedRun) -> None:
        """Store a pause (replacing an earlier one of the run)."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO pauses VALUES (?,?,?,?,?,?,1)",
                       (run.run_id, run.session_id, _dump([p.to_dict() for p in run.pending]),
                        run.continuation, run.created_at, run.expires_at))

    def paused(self, *, run_id: str | None = None) -> list[PausedRun]:
        """Pauses not resumed yet, oldest first."""
        sql = ("SELECT run_id, session_id, pending, continuation, created_at, expires_at "
               "FROM pauses WHERE active=1")
        params: tuple[Any, ...] = ()
        if run_id is not None:
            sql += " AND run_id=?"
            params = (run_id,)
        rows = self._query(sql + " ORDER BY created_at", params)
        return [PausedRun(r[0], r[1], tuple(PendingCall.from_dict(p) for p in json.loads(r[2])),
                          r[3], r[4], r[5]) for r in rows]

    def decide(self, pending_id: str, decision: Decision, *, by: str = "") -> None:
        """Store a decision on a pending call (a later one replaces it)."""
        run_id = pending_id.rpartition(":")[0]
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO decisions VALUES (?,?,?,?,?)",
                       (pending_id, run_id, _dump(decision_to_dict(decision)), by, time.time()))

    def decisions(self, run_id: str) -> dict[str, Decision]:
        """The stored decisions of the run, by pending id."""
        rows = self._query("SELECT pending_id, decision FROM decisions WHERE run_id=?",
                           (run_id,))
        return {r[0]: decision_from_dict(json.loads(r[1])) for r in rows}

    # --- resumes ------------------------------------------------------------------------
    def claim_resume(self, digest: str, run_id: str, holder: str, lease_s: float) -> str:
        """Claim the resume of a continuation (see the protocol)."""
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT holder, lease_until, done FROM resumes WHERE digest=?",
                             (digest,)).fetchone()
            if row is not None:
                if row[2]:
                    return "resumed"
                if row[1] > now and not holder_gone(row[0]):
                    return "busy"
            db.execute("INSERT OR REPLACE INTO resumes VALUES (?,?,?,?,0)",
                       (digest, run_id, holder, now + lease_s))
            return "claimed"

    def mark_resumed(self, run_id: str, continuation_digest: str) -> None:
        """The resume ended: the continuation is spent and the pause is over."""
        with self._tx() as db:
            db.execute("INSERT INTO resumes VALUES (?,?,?,?,1) ON CONFLICT(digest) "
                       "DO UPDATE SET done=1", (continuation_digest, run_id, "", 0.0))
            row = db.execute("SELECT continuation FROM pauses WHERE run_id=? AND active=1",
                             (run_id,)).fetchone()
            if row is not None and continuation_digest_of(row[0]) == continuation_digest:
                db.execute("UPDATE pauses SET active=0 WHERE run_id=?", (run_id,))

    def prune(self, older_than_s: float) -> int:
        """Delete the journals of runs not paused whose last entry is older than
        ``older_than_s`` seconds; return how many runs went."""
        cutoff = time.time() - older_than_s
        with self._tx() as db:
            runs = [r[0] for r in db.execute(
                "SELECT run_id FROM entries GROUP BY run_id HAVING MAX(at) < ? AND run_id NOT IN "
                "(SELECT run_id FROM pauses WHERE active=1)", (cutoff,)).fetchall()]
            for run_id in runs:
                for table in ("entries", "decisions", "resumes"):
                    db.execute(f"DELETE FROM {table} WHERE run_id=?", (run_id,))
                db.execute("DELETE FROM pauses WHERE run_id=?", (run_id,))
            db.execute("DELETE FROM pauses WHERE active=0 AND created_at < ?", (cutoff,))
        return len(runs)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
