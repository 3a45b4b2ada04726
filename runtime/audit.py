"""A tamper-evident audit log: one JSON line per attempted tool call.

:class:`AuditLog` is an ``audit`` callback for :class:`~toolscript.Runtime`:
it receives every :class:`~toolscript.ToolCallRecord` (denied, failed and
refused calls included) with its run context and appends one line::

    {"v": 1, "seq": 7, "run_id": ..., "session_id": ..., "call_id": "c7",
     "tool": "refund", "source": "script", "args": {"order": "A1", "card": "[redacted]"},
     "approved": true, "decided_by": "hook", "reason": "...",
     "started_at": 1767225600.123, "duration_s": 0.0012,
     "outcome": "ok" | <error type>, "error": null | {"type", "message"},
     "result_bytes": 42, "prev": "<hash of line 6>", "hash": "<sha256 of this line>"}

``hash`` is the SHA-256 of the line's other fields in canonical JSON (sorted
keys, compact); ``prev`` is the previous line's ``hash`` (64 zeros for the
first line of a file). Editing, inserting, deleting or reordering lines
breaks the chain at the first changed line; :func:`verify` finds it
(``toolscript audit verify FILE``). Removing lines at the *end* cannot be
seen from the file alone: keep :attr:`AuditLog.head` (the last hash)
somewhere else to detect truncation.

Arguments pass through a per-tool redaction rule before they are written
(:class:`Redactor`): named fields, dotted paths, or a function. The result
itself is not logged, only its size.

Usage::

    log = AuditLog("audit.jsonl", redact={"charge": ["card.number"], "*": ["api_key"]})
    runtime = Runtime(tools, audit=log)
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .results import ToolCallRecord

__all__ = [
    "GENESIS", "REDACTED", "UNLOGGABLE", "AuditLog", "Redactor", "VerifyReport", "canonical",
    "verify",
]

GENESIS = "0" * 64
"""``prev`` of the first record of a file."""

REDACTED = "[redacted]"
"""What a redacted value is replaced with."""

UNLOGGABLE = "[unloggable]"
"""Key of the ``args`` placeholder when arguments cannot be written as JSON."""

FORMAT_VERSION = 1

RedactRule = Iterable[str] | Callable[[dict[str, Any]], dict[str, Any]]


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                              default=repr, allow_nan=True)
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def canonical(data: Mapping[str, Any]) -> str:
    """The canonical JSON text of a record (what its hash covers): sorted keys, compact,
    ASCII only (so no line separator other than ``\\n`` can appear in a line)."""
    return _CANONICAL.encode(data)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Redactor:
    """Per-tool redaction of arguments before they reach the log.

    ``rules`` maps a tool name (or ``"*"`` for every tool) to either a list of
    argument names / dotted paths (``"card.number"``) whose values become
    :data:`REDACTED`, or a function ``args -> args`` that returns what to
    log. The arguments of the call itself are never modified.
    """

    def __init__(self, rules: Mapping[str, RedactRule] | None = None) -> None:
        self._paths: dict[str, list[list[str]]] = {}
        self._functions: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        for tool, rule in (rules or {}).items():
            if callable(rule):
                self._functions[tool] = rule
            else:
                self._paths[tool] = [path.split(".") for path in rule]

    def __bool__(self) -> bool:
        return bool(self._paths or self._functions)

    def apply(self, tool: str, args: Any) -> Any:
        """The arguments as they should be logged."""
        if not isinstance(args, dict):
            return args
        paths = self._paths.get(tool, []) + self._paths.get("*", [])
        if paths:
            args = _copy_redacted(args, paths)
        for key in (tool, "*"):
            function = self._functions.get(key)
            if function is not None:
                args = function(dict(args))
        return args


def _copy_redacted(args: dict[str, Any], paths: list[list[str]]) -> dict[str, Any]:
    heads: dict[str, list[list[str]]] = {}
    for path in paths:
        heads.setdefault(path[0], []).append(path[1:])
    copy = dict(args)
    for key, rests in heads.items():
        if key not in copy:
            continue
        if any(not rest for rest in rests):
            copy[key] = REDACTED
        elif isinstance(copy[key], dict):
            copy[key] = _copy_redacted(copy[key], [rest for rest in rests if rest])
    return copy


class AuditLog:
    """Append-only JSON Lines audit log with a hash chain (see module docstring).

    Args:
        path: the log file; appended to if it exists (the chain continues
            from its last line).
        redact: per-tool redaction rules (see :class:`Redactor`).
        sync: ``"flush"`` (default) writes lines through to the OS as soon as
            they are written; ``"fsync"`` also forces them to disk (slow,
            durable); ``"buffer"`` leaves them in a buffer until
            :meth:`flush`/:meth:`close`.
        background: serialise, hash and write on a writer thread (default).
            The tool call then pays only for collecting the fields (a few
            microseconds, see ``benchmarks/audit_overhead.py``); lines keep
            call order. :meth:`flush` and :meth:`close` wait for the writer.
            The fields are collected during the call, so a script that later
            mutates a tool result (inprocess) cannot change what is logged.

    An instance is thread-safe and is itself the ``audit`` callback.
    """

    def __init__(self, path: str | os.PathLike[str], *,
                 redact: Mapping[str, RedactRule] | Redactor | None = None,
                 sync: str = "flush", background: bool = True) -> None:
        if sync not in ("flush", "fsync", "buffer"):
            raise ValueError("sync must be 'flush', 'fsync' or 'buffer'")
        self.path = Path(path)
        self.redactor = redact if isinstance(redact, Redactor) else Redactor(redact)
        self.sync = sync
        self.background = background
        self.error: BaseException | None = None
        """The first error of the writer thread (re-raised by flush/close)."""
        self._lock = threading.Lock()
        self.head, self.seq = _tail(self.path)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self._queue: queue.SimpleQueue[dict[str, Any] | threading.Event] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        atexit.register(self.close)

    def __call__(self, record: ToolCallRecord, ctx: Any) -> None:
        """The ``audit`` callback: log one line for ``record``."""
        fields = self.entry(record, ctx)
        if not self.background:
            self.append(fields)
            return
        if self._writer is None:
            self._start_writer()
        self._queue.put(fields)

    def _start_writer(self) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                name="toolscript-audit-writer")
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self.append(item, flush=False)
                while True:  # drain what queued up meanwhile, then flush once
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if isinstance(item, threading.Event):
                        self._flush_file()
                        item.set()
                    else:
                        self.append(item, flush=False)
                self._flush_file()
            except BaseException as exc:  # disk full, closed file: report on flush/close
                self.error = self.error or exc

    def _drain(self) -> None:
        """Wait until every line queued so far is written."""
        if self._writer is not None and self._writer.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()
        if self.error is not None:
            raise self.error

    def entry(self, record: ToolCallRecord, ctx: Any) -> dict[str, Any]:
        """The fields logged for one call (before ``seq``, ``prev`` and ``hash``)."""
        error = record.error
        return {
            "v": FORMAT_VERSION,
            "run_id": getattr(ctx, "run_id", None),
            "session_id": getattr(ctx, "session_id", None),
            "call_id": record.id,
            "tool": record.name,
            "source": record.source,
            "args": self.redactor.apply(record.name, record.args) if self.redactor else record.args,
            "approved": record.approved,
            "decided_by": record.decided_by,
            "reason": record.reason,
            "started_at": record.started_at,
            "duration_s": record.duration_s,
            "outcome": "ok" if record.ok else (error.type if error else "error"),
            "error": {"type": error.type, "message": error.message} if error else None,
            "result_bytes": _size(record.value) if record.ok else 0,
        }

    def append(self, fields: dict[str, Any], flush: bool = True) -> str:
        """Chain and write one entry now (in the calling thread); return its hash."""
        with self._lock:
            if self._file is None:
                raise ValueError("the audit log is closed")
            fields["seq"] = self.seq + 1
            fields["prev"] = self.head
            try:
                body = canonical(fields)
            except (RecursionError, ValueError, TypeError) as exc:
                # never drop a record: log that the arguments could not be written
                fields["args"] = {UNLOGGABLE: f"{type(exc).__name__}: {exc}"[:200]}
                body = canonical(fields)
            digest = _digest(body)
            self._file.write(body[:-1] + ',"hash":"' + digest + '"}\n')
            if flush:
                self._flush_locked()
            self.head = digest
            self.seq += 1
            return digest

    def _flush_file(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._file is None or self.sync == "buffer":
            return
        self._file.flush()
        if self.sync == "fsync":
            os.fsync(self._file.fileno())

    def flush(self) -> None:
        """Wait for the writer, then write buffered lines through to the OS."""
        self._drain()
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self) -> None:
        """Write everything queued, flush and close the file. Idempotent."""
        try:
            self._drain()
        finally:
            with self._lock:
                if self._file is not None:
                    self._file.close()
                    self._file = None
            atexit.unregister(self.close)

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _size(value: Any) -> int:
    kind = type(value)
    if value is None or kind is bool:
        return 4 if value is not False else 5
    if kind is int or kind is float:
        return len(repr(value))
    try:
        text = _COMPACT.encode(value)
    except (TypeError, ValueError, RecursionError):
        return -1
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _tail(path: Path) -> tuple[str, int]:
    """``(hash, seq)`` of the last line of an existing log, or the genesis values."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            chunk = b""
            position = size
            while position > 0 and chunk.count(b"\n") < 2:
                step = min(65536, position)
                position -= step
                fh.seek(position)
                chunk = fh.read(step) + chunk
    except FileNotFoundError:
        return GENESIS, 0
    lines = [line for line in chunk.splitlines() if line.strip()]
    if not lines:
        return GENESIS, 0
    try:
        last = json.loads(lines[-1])
        return str(last["hash"]), int(last["seq"])
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{path}: the last line is not an audit record; run "
                         "'toolscript audit verify' on it before appending") from None


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`.

    ``ok`` is True when every line chains to the one before; otherwise
    ``broken_line`` is the 1-based line number of the first bad line and
    ``reason`` says what is wrong with it. ``head`` is the hash of the last
    good line (compare it with a copy kept elsewhere to detect truncation).
    """

    ok: bool
    records: int
    head: str
    broken_line: int | None = None
    reason: str = ""


def verify(path: str | os.PathLike[str]) -> VerifyReport:
    """Check the hash chain of an audit log; report the first broken line."""
    head, count = GENESIS, 0
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                return VerifyReport(False, count, head, number, "empty line")
            try:
                data = json.loads(line)
            except ValueError as exc:
                return VerifyReport(False, count, head, number, f"not JSON: {exc}")
            if not isinstance(data, dict) or not isinstance(data.get("hash"), str):
                return VerifyReport(False, count, head, number, "no 'hash' field")
            claimed = data.pop("hash")
            if data.get("prev") != head:
                return VerifyReport(False, count, head, number,
                                    "'prev' does not match the previous line's hash (a line was "
                                    "removed, inserted or reordered before this one)")
            if data.get("seq") != count + 1:
                return VerifyReport(False, count, head, number,
                                    f"'seq' is {data.get('seq')!r}, expected {count + 1}")
            if _digest(canonical(data)) != claimed:
                return VerifyReport(False, count, head, number,
                                    "the line's content does not match its hash (edited)")
            head, count = claimed, count + 1
    return VerifyReport(True, count, head)
