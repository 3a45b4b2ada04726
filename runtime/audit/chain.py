"""The audit log's file format: keys, seals, the tail of a file, and :func:`verify`.

Each line of an audit log is one JSON object in canonical form (sorted keys,
compact, ASCII) followed by its seal::

    {..., "alg": "hmac-sha256", "key_id": "3f1c...", "prev": "<seal of the line before>",
     "seq": 7, "hash": "<seal of this line>"}

* ``alg = "hmac-sha256"`` (a keyed log): ``hash`` is HMAC-SHA256 of the line's
  other fields under the audit key (``TOOLSCRIPT_AUDIT_KEY``). Only a holder
  of the key can write a line that verifies, so rewriting a record and
  recomputing the chain is detected. ``key_id`` names the key (a one-way
  value derived from it) so that a wrong key is reported as such.
* ``alg = "sha256"`` (an unkeyed log), or no ``alg`` (format version 1):
  ``hash`` is the plain SHA-256. This detects accidents and edits by someone
  who does not know the format, not an attacker who can write the file.

``prev`` chains each line to the one before (:data:`GENESIS` for the first
line) and ``seq`` counts lines from 1. A file is either keyed or unkeyed:
:class:`~toolscript.runtime.audit.log.AuditLog` refuses to append to a file of the
other kind, and :func:`verify` reports an unkeyed line in a keyed log, or any
unkeyed line when it is given a key, as broken. Without the key, a keyed log
is never reported valid (:attr:`VerifyReport.status` ``"unverified"``).

Lines removed from the *end* leave a valid chain. The seal of the last line
(:attr:`AuditLog.head`) commits to every line before it: keep a copy
elsewhere and pass it as ``head`` (``toolscript audit verify FILE --head
HASH``) to detect truncation, or any change up to that line even in an
unkeyed log. A running writer never extends a chain that no longer ends
with the last line it wrote or checked (:func:`read_end`,
:func:`check_lines`): it refuses, so a cut cannot be papered over by the
next line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from toolscript.errors import ConfigurationError

__all__ = [
    "ALG_HMAC",
    "ALG_SHA256",
    "FROM_ENV",
    "GENESIS",
    "KEY_ENV",
    "MIN_KEY_BYTES",
    "KeyArg",
    "Sealer",
    "Tail",
    "TailEnd",
    "VerifyReport",
    "canonical",
    "check_lines",
    "digest",
    "read_end",
    "read_tail",
    "resolve_key",
    "verify",
]

GENESIS = "0" * 64
"""``prev`` of the first record of a file."""

KEY_ENV = "TOOLSCRIPT_AUDIT_KEY"
"""The environment variable holding the audit key (writers and ``verify`` read it)."""

MIN_KEY_BYTES = 16
"""The shortest key accepted (a key is secret random bytes, not a password)."""

ALG_HMAC = "hmac-sha256"
ALG_SHA256 = "sha256"
_KEY_ID_LABEL = b"toolscript audit key id"


class _FromEnv:
    """Type of :data:`FROM_ENV`."""

    def __repr__(self) -> str:
        return "FROM_ENV"


FROM_ENV: Final = _FromEnv()
"""Default of every ``key=`` argument: read the key from :data:`KEY_ENV` (unset: no key)."""

KeyArg = str | bytes | None | _FromEnv
"""A key argument: the key itself, ``None`` (explicitly no key) or :data:`FROM_ENV`."""

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                              default=repr, allow_nan=True)


def canonical(data: Mapping[str, Any]) -> str:
    """The canonical JSON text of a record (what its seal covers): sorted keys, compact,
    ASCII only (so no line separator other than ``\\n`` can appear in a line)."""
    return _CANONICAL.encode(data)


def digest(text: str) -> str:
    """SHA-256 of ``text`` (the seal of an unkeyed record)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_key(key: KeyArg = FROM_ENV) -> bytes | None:
    """The key as bytes (``None``: no key).

    Raises:
        ConfigurationError: the key is shorter than :data:`MIN_KEY_BYTES`
            (an empty ``TOOLSCRIPT_AUDIT_KEY`` included: a set but empty
            variable is a mistake, not a request for an unkeyed log).
    """
    where = "key="
    if isinstance(key, _FromEnv):
        value = os.environ.get(KEY_ENV)
        if value is None:
            return None
        key, where = value, KEY_ENV
    if key is None:
        return None
    raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if len(raw) < MIN_KEY_BYTES:
        raise ConfigurationError(
            f"the audit key ({where}) has {len(raw)} byte(s); use at least {MIN_KEY_BYTES} "
            "random bytes, e.g. python3 -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return raw


class Sealer:
    """Computes the seal (``hash``) of records: HMAC-SHA256 with a key, SHA-256 without."""

    def __init__(self, key: bytes | None) -> None:
        self.keyed = key is not None
        self.alg = ALG_HMAC if key is not None else ALG_SHA256
        self.key_id: str | None = None
        self._mac: hmac.HMAC | None = None
        if key is not None:
            self.key_id = hmac.new(key, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]
            self._mac = hmac.new(key, digestmod=hashlib.sha256)

    def stamp(self, fields: dict[str, Any]) -> None:
        """Add ``alg`` (and ``key_id``) to the fields of a record about to be sealed."""
        fields["alg"] = self.alg
        if self.key_id is not None:
            fields["key_id"] = self.key_id

    def seal(self, body: str) -> str:
        """The seal of a record's canonical text."""
        if self._mac is None:
            return digest(body)
        mac = self._mac.copy()
        mac.update(body.encode("utf-8"))
        return mac.hexdigest()


@dataclass(frozen=True)
class Tail:
    """The last record of a file: its seal, ``seq``, ``alg`` and ``key_id``."""

    head: str = GENESIS
    seq: int = 0
    alg: str | None = None
    key_id: str | None = None


@dataclass(frozen=True)
class TailEnd:
    """The end of a file as :func:`read_end` found it.

    Attributes:
        tail: the last record (genesis for an empty file).
        before: the record before it (genesis when there is none).
        line: the last line's bytes, ``\n`` included (``b""`` for an empty file).
    """

    tail: Tail
    before: Tail
    line: bytes


def _tail_of(line: bytes, path: Path) -> Tail:
    try:
        data = json.loads(line)
        return Tail(str(data["hash"]), int(data["seq"]), data.get("alg", ALG_SHA256),
                    data.get("key_id"))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ConfigurationError(f"{path}: the last line is not an audit record; run "
                                 "'toolscript audit verify' on it before appending") from None


def read_end(fd: int, size: int, path: Path) -> TailEnd:
    """The last two records of the open file ``fd`` of ``size`` bytes.

    Raises:
        ConfigurationError: the file does not end with a whole audit record.
    """
    chunk = b""
    position = size
    while position > 0 and chunk.count(b"\n") < 3:
        step = min(65536, position)
        position -= step
        chunk = os.pread(fd, step, position) + chunk
    if not chunk.strip():
        return TailEnd(Tail(), Tail(), b"")
    if not chunk.endswith(b"\n"):
        raise ConfigurationError(f"{path}: the last line is incomplete (a writer stopped "
                                 "mid-line); run 'toolscript audit verify' on it and start a "
                                 "new file")
    whole = chunk.split(b"\n")[:-1]
    if position > 0:
        whole = whole[1:]  # the first piece may be the end of a longer line
    found = [line for line in whole if line.strip()]
    last = found[-1] + b"\n"
    before = _tail_of(found[-2], path) if len(found) > 1 else Tail()
    return TailEnd(_tail_of(last, path), before, last)


def read_tail(fd: int, size: int, path: Path) -> Tail:
    """The last record of the open file ``fd`` of ``size`` bytes (genesis if empty).

    Raises:
        ConfigurationError: the file does not end with a whole audit record.
    """
    return read_end(fd, size, path).tail


def check_lines(lines: list[bytes], start: Tail, sealer: Sealer) -> tuple[Tail, str | None]:
    """Check that ``lines`` continue the chain from ``start``, each sealed by ``sealer``.

    A writer calls this on what other writers appended after its own last line
    (and a new writer on the file's last line): a line that does not link to
    the one before, or whose seal ``sealer`` does not reproduce, is not part of
    a chain the writer may extend.

    Returns:
        The last good record and ``None``, or the last good record and what is
        wrong with the line after it.
    """
    check = _Check(sealer if sealer.keyed else None, start)
    check.keyed, check.key_id = sealer.keyed, sealer.key_id
    tail = start
    for raw in lines:
        try:
            problem = check.line(raw.decode("ascii"))
        except UnicodeDecodeError:
            problem = "not an ASCII line (audit lines are ASCII)"
        if problem is None and check.unchecked:
            problem = "a keyed line in an unkeyed log"
        if problem is not None:
            return tail, f"line {check.count + 1}: {problem}"
        tail = Tail(check.head, check.count, sealer.alg, sealer.key_id)
    return tail, None


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`.

    Attributes:
        ok: True only when every line is intact and, for a keyed log, every
            seal was checked with the key (and ``head``, if given, was found).
        records: lines checked and found good (before the first bad one).
        head: the seal of the last good line.
        broken_line: 1-based number of the first bad line, if one is bad.
        reason: what is wrong (or, when ``ok``, a caveat such as "unkeyed").
        status: ``"intact"``, ``"broken"`` (a line is bad or ``head`` is
            missing) or ``"unverified"`` (a keyed log checked without its key:
            the links were checked, the seals could not be).
        keyed: the log's records carry HMAC seals.
        key_id: the key id the log's records name (keyed logs).
        head_found: ``None`` without ``head``; else whether the file holds it.
    """

    ok: bool
    records: int
    head: str
    broken_line: int | None = None
    reason: str = ""
    status: str = "intact"
    keyed: bool = False
    key_id: str | None = None
    head_found: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``toolscript audit verify --json``)."""
        return {"ok": self.ok, "status": self.status, "records": self.records,
                "head": self.head, "broken_line": self.broken_line, "reason": self.reason,
                "keyed": self.keyed, "key_id": self.key_id, "head_found": self.head_found}


class _Check:
    """State of one :func:`verify` pass."""

    def __init__(self, sealer: Sealer | None, start: Tail | None = None) -> None:
        self.keyed_sealer = sealer
        self.plain = Sealer(None)
        self.head, self.count = (GENESIS, 0) if start is None else (start.head, start.seq)
        self.keyed = False
        self.key_id: str | None = None
        self.unchecked = False  # keyed lines whose seals could not be checked

    def line(self, line: str) -> str | None:
        """Check one line; return why it is bad, or None."""
        if not line.strip():
            return "empty line"
        try:
            data = json.loads(line)
        except ValueError as exc:
            return f"not JSON: {exc}"
        if not isinstance(data, dict) or not isinstance(data.get("hash"), str):
            return "no 'hash' field"
        claimed = data.pop("hash")
        if data.get("prev") != self.head:
            return ("'prev' does not match the previous line's hash (a line was removed, "
                    "inserted or reordered before this one)")
        if data.get("seq") != self.count + 1:
            return f"'seq' is {data.get('seq')!r}, expected {self.count + 1}"
        problem = self._seal(data, claimed)
        if problem is None:
            self.head, self.count = claimed, self.count + 1
        return problem

    def _seal(self, data: dict[str, Any], claimed: str) -> str | None:
        alg = data.get("alg", ALG_SHA256)
        body = canonical(data)
        if alg == ALG_HMAC:
            key_id = data.get("key_id")
            if self.key_id is not None and key_id != self.key_id:
                return f"'key_id' is {key_id!r}, but earlier lines name {self.key_id!r}"
            self.keyed, self.key_id = True, key_id if isinstance(key_id, str) else None
            if self.keyed_sealer is None:
                self.unchecked = True
                return None
            if key_id != self.keyed_sealer.key_id:
                return (f"written with another key (key id {key_id!r}; the key given has "
                        f"{self.keyed_sealer.key_id!r})")
            ok = hmac.compare_digest(self.keyed_sealer.seal(body), claimed)
            return None if ok else "the line's content does not match its HMAC (edited)"
        if alg != ALG_SHA256:
            return f"unknown 'alg' {alg!r}"
        if self.keyed:
            return ("an unkeyed line in a keyed log: it was written (or rewritten) without "
                    "the key")
        if self.keyed_sealer is not None:
            return ("the line is not keyed, but a key was given: a log written with the key "
                    "has only keyed lines, so this one was written (or rewritten) without it; "
                    "to check an old unkeyed log, verify it without a key")
        return None if self.plain.seal(body) == claimed else (
            "the line's content does not match its hash (edited)")


def verify(path: str | os.PathLike[str], *, key: KeyArg = FROM_ENV,
           head: str | None = None) -> VerifyReport:
    """Check an audit log: the chain, every seal, and (optionally) that ``head`` is in it.

    Args:
        path: the log file.
        key: the audit key; by default ``TOOLSCRIPT_AUDIT_KEY``. ``None``
            checks an unkeyed log (a keyed one is then ``"unverified"``).
        head: a seal kept elsewhere (an earlier :attr:`AuditLog.head`); the
            log must still contain the record it belongs to.

    Raises:
        OSError, UnicodeDecodeError: the file cannot be read.
        ConfigurationError: the key is too short.
    """
    raw_key = resolve_key(key)
    check = _Check(None if raw_key is None else Sealer(raw_key))
    found = head is None

    def report(status: str, reason: str = "", line: int | None = None) -> VerifyReport:
        return VerifyReport(status == "intact", check.count, check.head, line, reason, status,
                            check.keyed, check.key_id, None if head is None else found)

    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            problem = check.line(line)
            if problem is not None:
                return report("broken", problem, number)
            found = found or check.head == head
    if not found:
        return report("broken", f"no record has the hash {head}: records were removed from the "
                      "end (truncated) or the file was replaced")
    if check.unchecked:
        return report("unverified", "the log is keyed (HMAC-SHA256), and its seals cannot be "
                      f"checked without the key: set {KEY_ENV}")
    if check.keyed or check.count == 0:
        return report("intact")
    return report("intact", "unkeyed (SHA-256): anyone who can write the file can rewrite it "
                  f"undetected; set {KEY_ENV} for the writers")
