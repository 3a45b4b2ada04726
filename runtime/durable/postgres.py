"""A journal store on PostgreSQL (``psycopg`` 3): for several hosts resuming each
other's runs.

Same tables and semantics as :mod:`.sqlite`; every write is a committed
transaction (PostgreSQL's ``synchronous_commit`` makes it durable), and the
resume claim takes a row lock (``SELECT ... FOR UPDATE``). Install with
``pip install 'toolscript[postgres]'``.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from toolscript.runtime.approval.hooks import Decision

from toolscript.errors import ConfigurationError

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
CREATE TABLE IF NOT EXISTS toolscript_entries (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, tool TEXT NOT NULL, args_hash TEXT NOT NULL,
    status TEXT NOT NULL, result TEXT, idempotency_key TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE IF NOT EXISTS toolscript_pauses (
    run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, pending TEXT NOT NULL,
    continuation TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL, active BOOLEAN NOT NULL DEFAULT TRUE);
CREATE TABLE IF NOT EXISTS toolscript_decisions (
    pending_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, decision TEXT NOT NULL,
    decided_by TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS toolscript_resumes (
    digest TEXT PRIMARY KEY, run_id TEXT NOT NULL, holder TEXT NOT NULL,
    lease_until DOUBLE PRECISION NOT NULL, done BOOLEAN NOT NULL DEFAULT FALSE);
"""


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, default=repr)


class PostgresJournal:
    """A :class:`~toolscript.runtime.durable.store.JournalStore` on PostgreSQL.

    Args:
        dsn: a ``postgresql://`` URL (or libpq connection string).
    """

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise ConfigurationError("a PostgreSQL journal needs psycopg 3: "
                                     "pip install 'toolscript[postgres]'") from None
        self.dsn = dsn
        self._lock = threading.Lock()
        self._db = psycopg.connect(dsn, autocommit=False)
        with self._lock, self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(7301130)")  # one schema creator
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
        self._db.commit()

    def __repr__(self) -> str:
        return "PostgresJournal(...)"

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            with self._db.transaction():
                cursor = self._db.execute(sql, params)
                rows = cursor.fetchall() if cursor.description is not None else []
            self._db.commit()
            return list(rows)

    def record(self, entry: JournalEntry) -> None:
        """Write (or replace) one entry; committed before returning."""
        self._run("INSERT INTO toolscript_entries VALUES (%s,%s,%s,%s,%s,%s,%s,%s) "
                  "ON CONFLICT (run_id, seq) DO UPDATE SET tool=EXCLUDED.tool, "
                  "args_hash=EXCLUDED.args_hash, status=EXCLUDED.status, "
                  "result=EXCLUDED.result, idempotency_key=EXCLUDED.idempotency_key, "
                  "at=EXCLUDED.at",
                  (entry.run_id, entry.seq, entry.tool, entry.args_hash, entry.status,
                   _dump(entry.result), entry.idempotency_key, entry.at))

    def entries(self, run_id: str) -> list[JournalEntry]:
        """The run's entries, by seq."""
        rows = self._run("SELECT run_id, seq, tool, args_hash, status, result, idempotency_key, "
                         "at FROM toolscript_entries WHERE run_id=%s ORDER BY seq", (run_id,))
        return [JournalEntry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]) if r[5] else None,
                             r[6], r[7]) for r in rows]

    def save_pause(self, run: PausedRun) -> None:
        """Store a pause (replacing an earlier one of the run)."""
        self._run("INSERT INTO toolscript_pauses VALUES (%s,%s,%s,%s,%s,%s,TRUE) "
                  "ON CONFLICT (run_id) DO UPDATE SET session_id=EXCLUDED.session_id, "
                  "pending=EXCLUDED.pending, continuation=EXCLUDED.continuation, "
                  "created_at=EXCLUDED.created_at, expires_at=EXCLUDED.expires_at, active=TRUE",
                  (run.run_id, run.session_id, _dump([p.to_dict() for p in run.pending]),
                   run.continuation, run.created_at, run.expires_at))

    def paused(self, *, run_id: str | None = None) -> list[PausedRun]:
        """Pauses not resumed yet, oldest first."""
        sql = ("SELECT run_id, session_id, pending, continuation, created_at, expires_at "
               "FROM toolscript_pauses WHERE active")
        params: tuple[Any, ...] = ()
        if run_id is not None:
            sql += " AND run_id=%s"
            params = (run_id,)
        rows = self._run(sql + " ORDER BY created_at", params)
        return [PausedRun(r[0], r[1], tuple(PendingCall.from_dict(p) for p in json.loads(r[2])),
                          r[3], r[4], r[5]) for r in rows]

    def decide(self, pending_id: str, decision: Decision, *, by: str = "") -> None:
        """Store a decision on a pending call (a later one replaces it)."""
        self._run("INSERT INTO toolscript_decisions VALUES (%s,%s,%s,%s,%s) "
                  "ON CONFLICT (pending_id) DO UPDATE SET decision=EXCLUDED.decision, "
                  "decided_by=EXCLUDED.decided_by, at=EXCLUDED.at",
                  (pending_id, pending_id.rpartition(":")[0],
                   _dump(decision_to_dict(decision)), by, time.time()))

    def decisions(self, run_id: str) -> dict[str, Decision]:
        """The stored decisions of the run, by pending id."""
        rows = self._run("SELECT pending_id, decision FROM toolscript_decisions WHERE run_id=%s",
                         (run_id,))
        return {r[0]: decision_from_dict(json.loads(r[1])) for r in rows}

    def claim_resume(self, digest: str, run_id: str, holder: str, lease_s: float) -> str:
        """Claim the resume of a continuation (see the protocol)."""
        now = time.time()
        with self._lock:
            with self._db.transaction():
                self._db.execute("INSERT INTO toolscript_resumes VALUES (%s,%s,'',0,FALSE) "
                                 "ON CONFLICT (digest) DO NOTHING", (digest, run_id))
                row = self._db.execute("SELECT holder, lease_until, done FROM toolscript_resumes"
                                       " WHERE digest=%s FOR UPDATE", (digest,)).fetchone()
                assert row is not None
                if row[2]:
                    status = "resumed"
                elif row[0] and row[1] > now and not holder_gone(row[0]):
                    status = "busy"
                else:
                    self._db.execute("UPDATE toolscript_resumes SET holder=%s, lease_until=%s "
                                     "WHERE digest=%s", (holder, now + lease_s, digest))
                    status = "claimed"
            self._db.commit()
            return status

    def mark_resumed(self, run_id: str, continuation_digest: str) -> None:
        """The resume ended: the continuation is spent and its pause is over."""
        with self._lock:
            with self._db.transaction():
                self._db.execute("INSERT INTO toolscript_resumes VALUES (%s,%s,'',0,TRUE) "
                                 "ON CONFLICT (digest) DO UPDATE SET done=TRUE",
                                 (continuation_digest, run_id))
                row = self._db.execute("SELECT continuation FROM toolscript_pauses WHERE "
                                       "run_id=%s AND active", (run_id,)).fetchone()
                if row is not None and continuation_digest_of(row[0]) == continuation_digest:
                    self._db.execute("UPDATE toolscript_pauses SET active=FALSE WHERE run_id=%s",
                                     (run_id,))
            self._db.commit()

    def prune(self, older_than_s: float) -> int:
        """Delete the journals of runs not paused whose last entry is older than
        ``older_than_s`` seconds; return how many runs went."""
        cutoff = time.time() - older_than_s
        with self._lock:
            with self._db.transaction():
                runs = [r[0] for r in self._db.execute(
                    "SELECT run_id FROM toolscript_entries GROUP BY run_id HAVING MAX(at) < %s "
                    "AND run_id NOT IN (SELECT run_id FROM toolscript_pauses WHERE active)",
                    (cutoff,)).fetchall()]
                for table in ("toolscript_entries", "toolscript_decisions",
                              "toolscript_resumes", "toolscript_pauses"):
                    self._db.execute(f"DELETE FROM {table} WHERE run_id = ANY(%s)",
                                     (runs,))
                self._db.execute("DELETE FROM toolscript_pauses WHERE NOT active AND "
                                 "created_at < %s", (cutoff,))
            self._db.commit()
        return len(runs)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
