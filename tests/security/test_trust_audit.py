"""A running audit writer never extends a chain that no longer ends with its own last line.

The attacker can write the log file but holds no key. Cutting lines from the end
leaves a valid chain, so a writer that simply continued from the shorter file
would make ``verify --head <the writer's current head>`` report ``intact`` and
the cut would vanish. Every variant of "the file no longer ends with what this
writer wrote" (cut, cut and padded back to the same size, line rewritten,
file replaced or removed, lines appended without the key) must make the
writer refuse, say so, and leave the file as the attacker left it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.audit.chain import KEY_ENV, canonical, digest
from toolscript.runtime.audit.log import AuditLog, verify
from toolscript.runtime.cli.audit import EXIT_BROKEN
from toolscript.runtime.cli.main import main as cli_main
from toolscript.runtime.events import ToolCallEvent
from toolscript.runtime.results import ToolCallRecord
from toolscript.tools import tool

from toolscript.errors import ConfigurationError

KEY = "k" * 8 + "0123456789abcdef0123456789abcdef"


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def _record(log: AuditLog, i: int) -> None:
    record = ToolCallRecord(f"c{i}", "send_email", {"i": i}, approved=True, ok=True, value=i)
    log(record, ToolCallEvent(record, "session-1", "run-1", None))


def _cut_under_the_writer(path: Path, key: str | None, *, written: int,
                          kept: int) -> AuditLog:
    """A writer writes ``written`` records, the attacker keeps the first ``kept`` lines;
    the writer's next record must be refused as a truncation. The writer."""
    log = AuditLog(path, key=key, background=False)
    for i in range(written):
        _record(log, i)
    _cut(path, kept)
    with pytest.raises(ConfigurationError, match="truncated"):
        _record(log, written)
    return log


def _cut(path: Path, keep: int) -> bytes:
    """Keep the first ``keep`` lines (what the attacker does); return what was cut."""
    text = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(text[:keep]))
    return b"".join(text[keep:])


def _pad_to_same_size(path: Path, cut: bytes) -> None:
    """After the cut, append junk of the cut's size (a size check alone would pass)."""
    with open(path, "ab") as fh:
        fh.write(b"x" * (len(cut) - 1) + b"\n")


def _rewrite_last(path: Path, cut: bytes) -> None:
    """Rewrite the last line in place with the same length (unkeyed seal)."""
    text = path.read_bytes().splitlines(keepends=True)
    last = json.loads(text[-1])
    last.pop("hash")
    last["args"] = {"i": 10 ** (len(json.dumps(last["args"])) - 7)}
    body = canonical(last)
    text[-1] = (body[:-1] + ',"hash":"' + digest(body) + '"}\n').encode()
    path.write_bytes(b"".join(text))


def _replace(path: Path, cut: bytes) -> None:
    """Replace the file by a copy of its first lines (a new inode: a rename over it)."""
    copy = path.with_suffix(".new")
    copy.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    os.replace(copy, path)


def _remove(path: Path, cut: bytes) -> None:
    path.unlink()


def _append_forged(path: Path, cut: bytes) -> None:
    """Append an unkeyed line that links to the real last line (no key needed)."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    forged = {"v": 2, "tool": "send_email", "args": {"to": "x"}, "seq": last["seq"] + 1,
              "prev": last["hash"], "alg": "sha256"}
    body = canonical(forged)
    with open(path, "a") as fh:
        fh.write(body[:-1] + ',"hash":"' + digest(body) + '"}\n')


def _append_fake_hmac(path: Path, cut: bytes) -> None:
    """Append a line that claims the log's key but carries a guessed seal."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    forged = {k: v for k, v in last.items() if k != "hash"}
    forged.update(seq=last["seq"] + 1, prev=last["hash"], hash="f" * 64)
    with open(path, "a") as fh:
        fh.write(canonical(forged) + "\n")


ATTACKS = {
    "cut": lambda path, cut: None,
    "cut_and_pad": _pad_to_same_size,
    "rewrite_last": _rewrite_last,
    "replace": _replace,
    "remove": _remove,
    "append_unkeyed": _append_forged,
    "append_fake_seal": _append_fake_hmac,
}


MODES = {"inline": {"background": False}, "background": {"background": True},
         "fsync": {"sync": "fsync"}, "buffer": {"sync": "buffer"}}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_writer_refuses_a_log_that_no_longer_ends_with_its_line(
        tmp_path: Path, attack: str, mode: str) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, **MODES[mode])
    for i in range(5):
        _record(log, i)
    log.flush()
    head = log.head
    cut = _cut(path, 3) if attack != "rewrite_last" and not attack.startswith("append") else b""
    ATTACKS[attack](path, cut)
    before = path.read_bytes() if path.exists() else None
    with pytest.raises(ConfigurationError, match="refuses to append"):
        _record(log, 5)
        log.flush()  # the background writer finds it; flush says so
    with pytest.raises(ConfigurationError, match="refuses to append"):
        _record(log, 6)  # and every later call is refused at once
    assert log.refused is not None and head in str(log.refused)
    after = path.read_bytes() if path.exists() else None
    assert after == before  # nothing was appended to the tampered file
    assert log.head == head  # the writer's head is still the seal it wrote last
    if after is not None and attack not in ("append_unkeyed", "append_fake_seal"):
        assert not verify(path, key=KEY, head=head).ok  # the cut stays visible
    with pytest.raises(ConfigurationError):
        log.close()


def test_verify_with_the_writers_head_reports_the_cut(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's reproduction: cut, keep writing, verify with the current head."""
    path = tmp_path / "audit.jsonl"
    log = _cut_under_the_writer(path, KEY, written=5, kept=3)
    monkeypatch.setenv(KEY_ENV, KEY)
    assert cli_main(["audit", "verify", str(path), "--head", log.head]) == EXIT_BROKEN
    with pytest.raises(ConfigurationError):
        log.close()


@tool
def send_email(to: str) -> str:
    """Send an email."""
    return "sent to " + to


def test_a_run_stops_when_its_audit_log_was_cut(make_runtime: Any, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, key=KEY, background=False)
    rt = make_runtime([send_email], audit=log)
    assert rt.run("send_email('a')\nsend_email('b')\nsend_email('c')").ok
    head = log.head
    _cut(path, 1)
    kept = path.read_bytes()
    with pytest.raises(ConfigurationError, match="truncated"):
        rt.run("send_email('d')\nsend_email('e')")
    assert path.read_bytes() == kept
    assert not verify(path, key=KEY, head=head).ok
    with pytest.raises(ConfigurationError):
        rt.close()  # closing the runtime closes its log, which says so once


def test_other_writers_lines_are_followed_and_checked(tmp_path: Path) -> None:
    """Two honest writers on one file keep one chain; each checks the other's lines."""
    path = tmp_path / "audit.jsonl"
    first = AuditLog(path, key=KEY, background=False)
    second = AuditLog(path, key=KEY, background=False)
    for i in range(6):
        _record(first if i % 2 else second, i)
    first.close()
    second.close()
    report = verify(path, key=KEY)
    assert report.ok and report.records == 6


def test_a_cut_of_another_writers_lines_is_refused_by_that_writer(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    first = AuditLog(path, key=KEY, background=False)
    second = AuditLog(path, key=KEY, background=False)
    _record(first, 0)
    _record(second, 1)
    _record(second, 2)
    _cut(path, 2)  # removes second's last line
    _record(first, 3)  # first's own line is still there: it continues
    with pytest.raises(ConfigurationError, match="refuses to append"):
        _record(second, 4)  # second's line is gone
    assert not verify(path, key=KEY, head=second.head).ok
    first.close()
    with pytest.raises(ConfigurationError):
        second.close()


@pytest.mark.parametrize("attack", ["append_unkeyed", "append_fake_seal"])
def test_a_new_writer_does_not_extend_a_forged_last_line(tmp_path: Path, attack: str) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, key=KEY) as log:
        for i in range(3):
            _record(log, i)
    ATTACKS[attack](path, b"")
    kept = path.read_bytes()
    with pytest.raises(ConfigurationError, match=r"last line|an unkeyed audit log"):
        AuditLog(path, key=KEY)
    assert path.read_bytes() == kept


def test_an_unkeyed_writer_also_refuses_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = _cut_under_the_writer(path, None, written=4, kept=2)
    with pytest.raises(ConfigurationError):
        log.close()


def test_a_restarted_writer_with_its_kept_head_refuses_a_cut(tmp_path: Path) -> None:
    """A cut made while no writer ran: the new writer, given the head kept elsewhere,
    verifies the file first and refuses to continue it."""
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, key=KEY) as log:
        for i in range(5):
            _record(log, i)
        log.flush()
        head = log.head
    with AuditLog(path, key=KEY, head=head) as log:  # intact: it continues
        _record(log, 5)
        log.flush()
        head = log.head
    _cut(path, 4)
    kept = path.read_bytes()
    with pytest.raises(ConfigurationError, match="not continuing this log"):
        AuditLog(path, key=KEY, head=head)
    assert path.read_bytes() == kept
    with pytest.raises(ConfigurationError, match="not continuing this log"):
        AuditLog(path, key=KEY, head=head, background=False)
