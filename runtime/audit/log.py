"""A keyed, tamper-evident audit log: one JSON line per attempted tool call.

:class:`AuditLog` is an ``audit`` callback for :class:`~toolscript.Runtime`:
it receives every :class:`~toolscript.ToolCallRecord` (denied, failed and
refused calls included) with the call's
:class:`~toolscript.runtime.events.ToolCallEvent` (its run and session) and
appends one line::

    {"v": 2, "seq": 7, "run_id": ..., "session_id": ..., "call_id": "c7",
     "tool": "refund", "source": "script", "args": {"order": "A1", "card": "[redacted]"},
     "injected": {"user_id": "u-42"}, "approved": true, "decided_by": "hook",
     "reason": "...", "started_at": 1767225600.123, "duration_s": 0.0012,
     "outcome": "ok" | <error type>, "acted": "yes" | "no" | "maybe", "replayed": false,
     "error": null | {"type", "message"}, "result_bytes": 42,
     "alg": "hmac-sha256", "key_id": "...", "prev": "<hash of line 6>", "hash": "<seal>"}

* ``hash`` seals the line: HMAC-SHA256 under the audit key when there is one
  (``AuditLog(key=...)``, by default ``TOOLSCRIPT_AUDIT_KEY``), else plain
  SHA-256; ``prev`` chains it to the line before. The format, and how
  :func:`verify` (``toolscript audit verify FILE [--head HASH]``) checks it,
  are described in :mod:`toolscript.runtime.audit.chain`.
* ``acted`` says whether the tool may have acted: ``"no"`` (it never ran:
  refused, denied, or an idempotent replay answered from the store),
  ``"yes"`` (it ran to the end, ``invalid_result`` included: only its result
  was unusable) or ``"maybe"`` (it was started and did not finish normally:
  ``timeout``, ``tool_exception``, a stopped run).
* with ``sync="fsync"`` a call whose tool is about to run also gets a *start*
  line before it runs, on disk before the tool starts: the same fields up to
  ``started_at`` (no ``outcome``, ``duration_s``, ``error``, ``result_bytes``),
  ``"phase": "start"`` and ``"acted": "maybe"``; its outcome line follows
  when it ends. A host killed mid-call leaves the start line of every call
  that may have acted. (``toolscript audit stats`` skips start lines.)
* ``replayed`` marks an idempotent call answered with the stored first result;
  ``injected`` holds the values the host injected (absent for tools without
  injected parameters); a two-phase commit line also carries the ``plan`` it
  carried out, as the approver saw it.

Arguments, injected values and plans pass through per-tool redaction rules
before they are written (:class:`Redactor`). The result itself is not logged,
only its size. Every attempted call gets a line: a value that cannot be
written (too deep, a huge integer, a failing redaction function) is replaced
by an ``{"[unloggable]": why}`` placeholder, never by the unredacted value.

Several writers (threads, or processes on one host) may share a file: each
write takes an exclusive ``flock`` on it and continues the chain from the
file's real last line, so the file stays one verifiable chain. A writer
continues only a chain that still ends with its own last line (or that other
writers extended validly): a file that was cut, replaced or appended to
without the key is refused, never healed (see :class:`AuditLog`).

Usage::

    log = AuditLog("audit.jsonl", redact={"charge": ["card.number"], "*": ["api_key"]})
    runtime = Runtime(tools, audit=log)
"""

from __future__ import annotations

import atexit
import json
import math
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolscript.runtime.audit.chain import (
    ALG_HMAC,
    FROM_ENV,
    GENESIS,
    KEY_ENV,
    KeyArg,
    Sealer,
    Tail,
    VerifyReport,
    canonical,
    check_lines,
    digest,
    read_end,
    resolve_key,
    verify,
)
from toolscript.runtime.events import ToolCallEvent
from toolscript.runtime.results import ToolCallRecord

from toolscript.errors import ConfigurationError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one writer process per file
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FROM_ENV", "GENESIS", "KEY_ENV", "REDACTED", "UNLOGGABLE", "AuditLog", "Redactor",
    "VerifyReport", "canonical", "verify",
]

REDACTED = "[redacted]"
"""What a redacted value is replaced with."""

UNLOGGABLE = "[unloggable]"
"""Key of the placeholder written instead of a value that cannot be logged."""

FORMAT_VERSION = 2
BUFFER_MAX = 1024
"""``sync="buffer"`` writes its pending lines once this many have queued up."""

RedactRule = Iterable[str] | Callable[[dict[str, Any]], dict[str, Any]]

_digest = digest  # the unkeyed seal, under its former name
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=True)


class Redactor:
    """Per-tool redaction of what reaches the log.

    ``rules`` maps a tool name (or ``"*"`` for every tool) to either a list of
    argument names / dotted paths (``"card.number"``) whose values become
    :data:`REDACTED`, or a function ``args -> args`` that returns what to
    log. Name and path rules also apply to injected values (by parameter
    name) and to a commit's plan (paths starting with ``plan.``); a function
    rule sees the arguments only. The values of the call itself are never
    modified.
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
        args = self.apply_paths(tool, args)
        for key in (tool, "*"):
            function = self._functions.get(key)
            if function is not None:
                args = function(dict(args))
        return args

    def apply_paths(self, tool: str, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with the name and path rules of ``tool`` (and ``"*"``) applied."""
        paths = self._paths.get(tool, []) + self._paths.get("*", [])
        return _copy_redacted(values, paths) if paths else values


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


@contextmanager
def _file_lock(fd: int) -> Iterator[None]:
    """An exclusive ``flock`` on ``fd`` (shared by every writer process of the file)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class AuditLog:
    """Append-only JSON Lines audit log with a keyed seal chain (see module docstring).

    Args:
        path: the log file (created with mode 0600); appended to if it
            exists (the chain continues from its last line).
        key: the audit key (``str`` or ``bytes``, at least 16 bytes); by
            default read from ``TOOLSCRIPT_AUDIT_KEY``; ``None`` writes an
            unkeyed log even when the variable is set.
        redact: per-tool redaction rules (see :class:`Redactor`).
        sync: ``"flush"`` (default) hands lines to the OS as soon as they are
            written; ``"fsync"`` writes each line in the calling thread and
            forces it to disk before the call goes on, and writes start lines
            (slow, durable: a record of every attempt survives a crash);
            ``"buffer"`` keeps them in memory until :meth:`flush`,
            :meth:`close` or :data:`BUFFER_MAX` lines.
        background: seal and write on a writer thread (default; not with
            ``sync="fsync"``, whose lines are on disk when the call returns). The tool
            call then pays only for collecting the fields (a few
            microseconds, see ``benchmarks/audit_overhead.py``);
            lines keep call order. :meth:`flush` and :meth:`close` wait for
            the writer. The fields are collected during the call, so a script
            that later mutates a tool result (inprocess) cannot change what is
            logged.
        head: a seal kept from an earlier writer (its :attr:`head`): the
            whole file is verified first and must still hold that record, so
            a writer restarted with its kept head refuses a log cut while it
            was down (without it, a new writer checks only the last line).

    Raises:
        ConfigurationError: the key is too short, or the file is a log of the
            other kind (keyed vs unkeyed, or keyed with another key), or its
            last line is not a whole record that links to the line before and
            carries a seal this key (or, unkeyed, SHA-256) reproduces, or
            ``head`` is given and the file does not verify up to it.

    An instance is thread-safe and is itself the ``audit`` callback. After
    :meth:`close`, a late call is still written (the file is reopened for it).

    A writer extends only the chain it vouches for: before each append it
    checks (one ``fstat``, one ``stat``, one read of its own last line) that
    the file at ``path`` is still the one it opened, is no shorter, and still
    holds its last line where it wrote it; lines other writers appended since
    must continue that line's chain under the same key. Otherwise (the file
    was truncated, replaced, removed or appended to by someone without the
    key) it refuses for good: :attr:`refused` says why, the refused lines stay
    in memory, unwritten, and every later call, :meth:`flush` and
    :meth:`close` raise that ``ConfigurationError`` (from the dispatcher: the
    run fails).
    """

    def __init__(self, path: str | os.PathLike[str], *, key: KeyArg = FROM_ENV,
                 redact: Mapping[str, RedactRule] | Redactor | None = None,
                 sync: str = "flush", background: bool = True,
                 head: str | None = None) -> None:
        if sync not in ("flush", "fsync", "buffer"):
            raise ValueError("sync must be 'flush', 'fsync' or 'buffer'")
        self.path = Path(path)
        self.redactor = redact if isinstance(redact, Redactor) else Redactor(redact)
        self.sync = sync
        self.background = background
        self.error: BaseException | None = None
        """The first error of a background or buffered write (re-raised by flush/close)."""
        self.head = GENESIS
        """The seal of the last line this log wrote (or found): keep a copy elsewhere and
        pass it to ``verify(..., head=...)`` to detect truncation."""
        self.seq = 0
        raw_key = resolve_key(key)
        self._sealer = Sealer(raw_key)
        self._lock = threading.Lock()
        self._own_end = 0  # where the last line this log wrote (or checked) ends
        self._own_line = b""  # that line, as written
        self._refused: ConfigurationError | None = None
        self._fd: int | None = None
        self._pending: list[dict[str, Any]] = []
        self._queue: queue.SimpleQueue[dict[str, Any] | threading.Event] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._pid = os.getpid()
        self._open()
        try:
            assert self._fd is not None
            with _file_lock(self._fd):
                self._adopt_end()
                if head is not None:
                    self._check_kept_head(head, raw_key)
        except BaseException:
            self._close_fd()
            raise
        atexit.register(self._close_at_exit)

    @property
    def keyed(self) -> bool:
        """True when lines are sealed with HMAC-SHA256 under a key."""
        return self._sealer.keyed

    @property
    def key_id(self) -> str | None:
        """The id of the key (a one-way value written in every keyed line)."""
        return self._sealer.key_id

    @property
    def refused(self) -> ConfigurationError | None:
        """Why this writer refuses to append (the file no longer ends with its chain),
        or ``None``."""
        return self._refused

    def _check_kept_head(self, head: str, key: bytes | None) -> None:
        """Refuse a file that does not verify, under ``key``, up to ``head`` (lock held)."""
        report = verify(self.path, key=key, head=head)
        if not report.ok:
            raise ConfigurationError(
                f"{self.path}: not continuing this log: {report.reason or report.status}"
                + (f" (line {report.broken_line})" if report.broken_line else "")
                + "; keep the file, and write to a new one")

    def _adopt_end(self) -> None:
        """Take the file's last line as the chain to extend, once it checks (lock held)."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        end = read_end(self._fd, size, self.path)
        if end.line:
            self._check_kind(end.tail)
            _, problem = check_lines([end.line], end.before, self._sealer)
            if problem is not None:
                raise ConfigurationError(
                    f"{self.path}: the last line does not continue the chain or its seal does "
                    f"not check ({problem}); run 'toolscript audit verify' on it and write "
                    "to a new file")
        self.head, self.seq = end.tail.head, end.tail.seq
        self._own_end, self._own_line = size, end.line

    def _check_kind(self, tail: Tail) -> None:
        if tail.alg is None:
            return
        if tail.alg == ALG_HMAC and not self.keyed:
            raise ConfigurationError(
                f"{self.path} is a keyed audit log: set {KEY_ENV} (the key it was written "
                "with) to append to it"
            )
        if tail.alg == ALG_HMAC and tail.key_id != self.key_id:
            raise ConfigurationError(
                f"{self.path} was written with another audit key (key id {tail.key_id}, this "
                f"key's is {self.key_id}); write to a new file when the key changes"
            )
        if tail.alg != ALG_HMAC and self.keyed:
            raise ConfigurationError(
                f"{self.path} is an unkeyed audit log; a keyed log is keyed from its first "
                "line: write to a new file (the old one stays verifiable without the key)"
            )

    # --- the callback ---------------------------------------------------------------
    def __call__(self, record: ToolCallRecord, event: ToolCallEvent | None = None) -> None:
        """The ``audit`` callback: log one line for ``record``, with the run and
        session of ``event`` (never raises for a value it cannot write; a write
        error is kept in :attr:`error`)."""
        fields = self.entry(record, event)
        if self._pid != os.getpid():
            self._after_fork()
        refused = self._refused
        if refused is not None:
            with self._lock:
                self._pending.append(fields)
            raise refused
        if self.background and self.sync != "fsync":
            if self._writer is None:
                self._start_writer()
            self._queue.put(fields)
            return
        try:
            with self._lock:
                self._pending.append(fields)
                if self.sync != "buffer" or len(self._pending) >= BUFFER_MAX:
                    self._write_pending()
        except Exception as exc:  # disk full: report on flush/close
            self.error = self.error or exc
            if exc is self._refused:
                raise

    def call_started(self, record: ToolCallRecord, event: ToolCallEvent | None = None) -> None:
        """Called by the dispatcher just before a call's tool runs: with
        ``sync="fsync"``, write its start line now, on disk before this returns
        (other modes write none).

        Raises:
            Exception: the line could not be written (the call must then not run).
        """
        if self.sync != "fsync":
            return
        fields = self.entry(record, event)
        for name in ("duration_s", "outcome", "replayed", "error", "result_bytes"):
            fields.pop(name, None)
        fields["phase"], fields["acted"] = "start", "maybe"
        if self._pid != os.getpid():
            self._after_fork()
        if self._refused is not None:
            raise self._refused
        self.append(fields)

    def _after_fork(self) -> None:
        """In a forked child: own file description (``flock`` is per description), a
        lock and queue of its own, no writer thread yet; the parent's queued lines
        are the parent's to write."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._queue = queue.SimpleQueue()
        self._writer = None
        self._pending = []
        if self._fd is not None:
            os.close(self._fd)
            self._open()

    def entry(self, record: ToolCallRecord, event: ToolCallEvent | None = None
              ) -> dict[str, Any]:
        """The fields logged for one call (before ``seq``, ``prev`` and the seal).

        Never raises: a field that cannot be computed becomes a placeholder,
        and if even the basic fields fail a minimal line names the call.
        """
        try:
            return self._entry(record, event, _direct)
        except Exception:  # the slow path: find the field that failed
            try:
                return self._entry(record, event, _guarded)
            except Exception as exc:
                return {"v": FORMAT_VERSION, "call_id": _text(getattr(record, "id", None)),
                        "tool": _text(getattr(record, "name", None)), "outcome": "unknown",
                        "acted": "maybe", "args": _unloggable(exc)}

    def _entry(self, record: ToolCallRecord, event: ToolCallEvent | None,
               field: Callable[[Callable[[Any], Any], Any], Any]) -> dict[str, Any]:
        error = record.error
        fields: dict[str, Any] = {
            "v": FORMAT_VERSION,
            "run_id": None if event is None else event.run_id,
            "session_id": None if event is None else event.session_id,
            "call_id": record.id,
            "tool": record.name,
            "source": record.source,
            "args": field(self._args, record),
            "approved": record.approved,
            "decided_by": record.decided_by,
            "reason": field(_text, record.reason),
            "started_at": record.started_at,
            "duration_s": record.duration_s,
            "outcome": "ok" if record.ok else field(_error_type, error),
            "acted": _acted(record),
            "replayed": bool(record.replayed),
            "error": field(_error_fields, error) if error else None,
            "result_bytes": field(_size, record.value) if record.ok else 0,
        }
        if getattr(record, "injected", None) is not None:
            fields["injected"] = field(self._injected, record)
        if getattr(record, "plan", None) is not None:
            fields["plan"] = field(self._plan, record)
        return fields

    def _args(self, record: ToolCallRecord) -> Any:
        return self.redactor.apply(record.name, record.args) if self.redactor else record.args

    def _injected(self, record: ToolCallRecord) -> Any:
        return self.redactor.apply_paths(record.name, dict(record.injected or {}))

    def _plan(self, record: ToolCallRecord) -> Any:
        return self.redactor.apply_paths(record.name, {"plan": record.plan})["plan"]

    # --- writing ----------------------------------------------------------------------
    def append(self, fields: dict[str, Any]) -> str:
        """Seal and write one entry now (in the calling thread), after any lines still
        buffered; return its seal. Lines reach the OS when written."""
        with self._lock:
            self._pending.append(fields)
            self._write_pending()
            return self.head

    def _open(self) -> None:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.path, flags, 0o600)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _follow(self) -> None:
        """Refuse, for good, unless the file still ends with the chain this log vouches
        for (lock held); adopt what other writers appended to it."""
        if self._refused is not None:
            raise self._refused
        problem = self._check_end()
        if problem is not None:
            self._refused = ConfigurationError(
                f"{self.path}: {problem}; this writer refuses to append to it (its last line "
                f"is seq {self.seq}, hash {self.head}): keep the file, check it with "
                f"'toolscript audit verify {self.path} --head {self.head}', and write to a "
                "new file")
            raise self._refused

    def _check_end(self) -> str | None:
        """What is wrong with the file's end, or None (then ``head``/``seq`` follow it)."""
        assert self._fd is not None
        opened = os.fstat(self._fd)
        try:
            named = os.stat(self.path)
        except OSError:
            return "the log file was removed or renamed"
        if (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
            return "the log file was replaced by another file"
        size, length = opened.st_size, len(self._own_line)
        if size < self._own_end:
            return (f"the log was truncated: it has {size} bytes, and this writer's last "
                    f"line ended at byte {self._own_end}")
        if length and os.pread(self._fd, length, self._own_end - length) != self._own_line:
            return "the last line this writer wrote was changed or removed"
        if size == self._own_end:
            return None
        data = os.pread(self._fd, size - self._own_end, self._own_end)
        if len(data) != size - self._own_end or not data.endswith(b"\n"):
            return "the log does not end with a whole line"
        lines = data.split(b"\n")[:-1]
        tail, problem = check_lines(lines, Tail(self.head, self.seq), self._sealer)
        if problem is not None:
            return f"what follows this writer's last line does not continue its chain ({problem})"
        self.head, self.seq = tail.head, tail.seq
        self._own_end, self._own_line = size, lines[-1] + b"\n"
        return None

    def _write_pending(self) -> None:
        """Seal and write every pending entry in one locked append (``_lock`` held)."""
        if not self._pending:
            return
        entries, self._pending = self._pending, []
        reopened = self._fd is None
        if reopened:
            self._open()
        assert self._fd is not None
        try:
            with _file_lock(self._fd):
                try:
                    self._follow()
                except ConfigurationError:
                    self._pending = entries + self._pending  # kept, never written
                    raise
                seq, head, parts = self.seq, self.head, []
                for fields in entries:
                    seq += 1
                    fields["seq"], fields["prev"] = seq, head
                    self._sealer.stamp(fields)
                    body = _encode(fields)
                    head = self._sealer.seal(body)
                    parts.append(body[:-1] + ',"hash":"' + head + '"}\n')
                data = "".join(parts).encode("ascii")
                _write_all(self._fd, data)
                if self.sync == "fsync":
                    os.fsync(self._fd)
                self._own_end += len(data)
                self._own_line = parts[-1].encode("ascii")
                self.seq, self.head = seq, head
        finally:
            if reopened:
                self._close_fd()

    def _start_writer(self) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                name="toolscript-audit-writer")
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            batch: list[dict[str, Any]] = []
            events: list[threading.Event] = []
            item = self._queue.get()
            while True:  # take what queued up meanwhile, then write it in one append
                if isinstance(item, threading.Event):
                    events.append(item)
                else:
                    batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch or events:
                try:
                    with self._lock:
                        self._pending.extend(batch)
                        if (events or self.sync != "buffer"
                                or len(self._pending) >= BUFFER_MAX):
                            self._write_pending()
                except BaseException as exc:  # disk full: report on flush/close
                    self.error = self.error or exc
            for event in events:
                event.set()

    def _drain(self) -> None:
        """Wait until every line queued so far is written."""
        if self._writer is not None and self._writer.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()
        with self._lock:
            self._write_pending()
        if self.error is not None:
            raise self.error

    def flush(self) -> None:
        """Write every queued and buffered line (waiting for the writer thread)."""
        self._drain()

    def close(self) -> None:
        """Write everything queued, and close the file. Idempotent: a refusal
        (:attr:`refused`) is raised by the first close only."""
        try:
            if self._refused is None or self._fd is not None:
                self._drain()
        finally:
            with self._lock:
                self._close_fd()
            atexit.unregister(self._close_at_exit)

    def _close_at_exit(self) -> None:
        """:meth:`close` at interpreter exit: a failure is one line on stderr."""
        try:
            self.close()
        except Exception as exc:
            sys.stderr.write(f"toolscript: audit log {self.path}: {exc}\n")

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- fields ---------------------------------------------------------------------------
def _text(value: Any) -> str:
    if type(value) is str:
        return value
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _unloggable(exc: BaseException) -> dict[str, str]:
    return {UNLOGGABLE: f"{type(exc).__name__}: {_text(exc)}"[:200]}


def _direct(build: Callable[[Any], Any], value: Any) -> Any:
    return build(value)


def _guarded(build: Callable[[Any], Any], value: Any) -> Any:
    try:
        return build(value)
    except Exception as exc:
        return _unloggable(exc)


def _error_type(error: Any) -> str:
    return "error" if error is None else _text(error.type)


def _error_fields(error: Any) -> dict[str, str]:
    return {"type": _text(error.type), "message": _text(error.message)}


def _acted(record: ToolCallRecord) -> str:
    """Whether the tool may have acted: ``"no"``, ``"yes"`` or ``"maybe"``."""
    if record.approved is not True or record.replayed:
        return "no"
    if record.error is not None and record.error.details.get("started") is False:
        return "no"  # approved, but the dispatcher never started it (a stopped batch)
    if record.ok or (record.error is not None and record.error.type == "invalid_result"):
        return "yes"
    return "maybe"


def _encode(fields: dict[str, Any]) -> str:
    """Canonical text of ``fields``; a value that cannot be encoded becomes a placeholder
    (inside ``args``-like tables, only the entries that fail)."""
    try:
        return canonical(fields)
    except Exception:
        return canonical(_loggable(fields, 4))


def _loggable(value: Any, depth: int) -> Any:
    """``value`` if it encodes, else a copy with the failing parts replaced."""
    try:
        canonical({"": value})
        return value
    except Exception as exc:
        if depth > 0 and type(value) is dict:
            return {_text(k): _loggable(v, depth - 1) for k, v in value.items()}
        return _unloggable(exc)


def _size(value: Any) -> int:
    """Bytes of the value as compact JSON (-1 when it is not JSON data)."""
    kind = type(value)
    if value is None or kind is bool:
        return 4 if value is not False else 5
    if kind is int:
        assert isinstance(value, int)
        if value.bit_length() < 10_000:
            return len(repr(value))
        return int(value.bit_length() * math.log10(2)) + 1 + int(value < 0)  # ≈ digits
    if kind is float:
        return len(repr(value))
    try:
        text = _COMPACT.encode(value)
    except (TypeError, ValueError, RecursionError):
        return -1
    return len(text) if text.isascii() else len(text.encode("utf-8"))
