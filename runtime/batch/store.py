"""Durable results and the checkpoint of a batch job: :class:`BatchStore`.

Two append-only JSONL files:

* the **results** file (``--out``): one line per finished run of an item, in
  completion order, each with its ``index`` (and ``attempt`` when the item
  ran before: a retry, or a rerun of an item left running);
* the **checkpoint** (default: the results path + ``.checkpoint``): a header
  naming the script (its SHA-256), then one line when an item starts
  (``{"started": index, "attempt": n, "item_sha": ...}``), one when it
  finished (``{"index": index, "attempt": n, "item_sha": ..., "ok": ...}``)
  and one when a stop was asked for (``{"stopping": "SIGINT"}``).

Ordering is what makes resume safe. For each finished item the result line
is written and ``fsync``-ed first; only then is its checkpoint line written.
On resume the checkpoint is read, and a result line without its checkpoint
line (the process died between the two writes) is adopted into it, because
its result is already durable. A torn last line in either file (the process
died mid-write) is cut off. So an item whose result was written is never run
again (unless asked to: ``retry_failed``), and its write tools never run twice.

An item that *started* but has no result (the batch was abandoned by a second
interrupt, killed, or lost its machine) is **in doubt**: it may have called
its write tools. Resume runs it again (at least once), as attempt 2, and
:attr:`BatchStore.in_doubt` names such items so the caller can say so.

When a run finishes every item, :meth:`BatchStore.close` with ``compact=True``
rewrites the results file (atomically: a new file renamed over the old) so
that it holds one line per item, the latest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolscript.errors import ConfigurationError

__all__ = ["CHECKPOINT_VERSION", "BatchStore", "item_sha", "script_sha"]

CHECKPOINT_VERSION = 1


def item_sha(item: Any) -> str:
    """A short, stable fingerprint of one input item (canonical JSON)."""
    data = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def script_sha(script: str) -> str:
    """The SHA-256 of a script's text."""
    return hashlib.sha256(script.encode()).hexdigest()


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line without its newline (the writer died mid-line) off ``path``."""
    size = path.stat().st_size
    if not size:
        return
    with path.open("r+b") as fh:
        chunk = min(size, 1 << 16)
        while True:
            fh.seek(size - chunk)
            tail = fh.read(chunk)
            newline = tail.rfind(b"\n")
            if newline >= 0 or chunk == size:
                end = size - chunk + newline + 1
                break
            chunk = min(size, chunk * 2)
        if end != size:
            fh.truncate(end)


def _json_lines(path: Path) -> Iterator[Any]:
    """The JSON lines of ``path`` (a torn last line is cut off the file first)."""
    if not path.exists():
        return
    _cut_torn_tail(path)
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield json.loads(raw)
            except ValueError as exc:
                raise ConfigurationError(
                    f"{path}: line {number} is not JSON ({exc}); this file "
                    "was not written by a batch run"
                ) from exc


def _attempt(entry: dict[str, Any]) -> int:
    value = entry.get("attempt", 1)
    return value if isinstance(value, int) else 1


class BatchStore:
    """The results file and checkpoint of one batch job (see the module docs).

    Args:
        out: the results file (JSONL).
        checkpoint: the checkpoint file (default ``out`` + ``.checkpoint``).
        script: the script's text (resuming with another script is refused).
        resume: continue an interrupted job; without it existing files are an error.
        durable: ``fsync`` every result line (on by default; off only for tests of speed).

    After :meth:`open`: :attr:`done` (finished items: index -> fingerprint),
    :attr:`failed` (finished items whose latest result is an error: index ->
    error type), :attr:`paused` (items whose latest run paused, waiting for a
    person: index -> that record), :attr:`in_doubt` (items that started and never finished),
    :attr:`last_stop` (why the last run stopped early, if it was asked to).
    """

    def __init__(
        self,
        out: str | os.PathLike[str],
        *,
        script: str,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: bool = False,
        durable: bool = True,
    ) -> None:
        self.out = Path(out)
        self.checkpoint = Path(checkpoint) if checkpoint else Path(f"{self.out}.checkpoint")
        self.script_sha = script_sha(script)
        self.resume = resume
        self.durable = durable
        self.done: dict[int, str | None] = {}
        self.failed: dict[int, str] = {}
        self.paused: dict[int, dict[str, Any]] = {}
        self.in_doubt: list[int] = []
        self.last_stop: str | None = None
        self._attempts: dict[int, int] = {}
        self._running: dict[int, int] = {}
        self._result_lines: Counter[int] = Counter()
        self._out_fd: int | None = None
        self._ckpt_fd: int | None = None

    # --- opening -----------------------------------------------------------------
    def open(self) -> dict[int, str | None]:
        """Open both files; return the finished items (index -> item fingerprint,
        ``None`` when only the result line survived)."""
        exists = [p for p in (self.out, self.checkpoint) if p.exists() and p.stat().st_size]
        if exists and not self.resume:
            raise ConfigurationError(
                f"{exists[0]} already exists: pass resume=True (--resume) to continue that "
                "batch, or choose another output file"
            )
        header, finished = self._read_checkpoint()
        adopted = self._read_results(finished)
        self.in_doubt = sorted(self._running)
        self._running.clear()
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        self._out_fd = os.open(self.out, flags, 0o644)
        self._ckpt_fd = os.open(self.checkpoint, flags, 0o644)
        if header is None:
            self._append(
                self._ckpt_fd,
                {"toolscript_batch": CHECKPOINT_VERSION, "script_sha256": self.script_sha},
            )
        for index, attempt in adopted:
            self._append(
                self._ckpt_fd, {"index": index, "attempt": attempt, "item_sha": None,
                                "adopted": True}
            )
        return dict(self.done)

    def _read_checkpoint(self) -> tuple[dict[str, Any] | None, set[tuple[int, int]]]:
        """Read the checkpoint: the header and the finished ``(index, attempt)`` pairs;
        fills :attr:`done`, the attempts and the items still marked running."""
        lines = _json_lines(self.checkpoint)
        header = next(lines, None)
        if header is None:
            return None, set()
        if not isinstance(header, dict) or header.get("toolscript_batch") != CHECKPOINT_VERSION:
            raise ConfigurationError(
                f"{self.checkpoint} is not a toolscript batch checkpoint "
                f"(version {CHECKPOINT_VERSION})"
            )
        if header.get("script_sha256") != self.script_sha:
            raise ConfigurationError(
                f"{self.checkpoint} belongs to a batch of a different script; resume it with "
                "the same script, or choose another output file"
            )
        finished: set[tuple[int, int]] = set()
        for entry in lines:
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("started"), int):
                index, attempt = entry["started"], _attempt(entry)
                self._running[index] = attempt
                self._attempts[index] = max(self._attempts.get(index, 0), attempt)
            elif isinstance(entry.get("index"), int):
                index, attempt = entry["index"], _attempt(entry)
                finished.add((index, attempt))
                self.done[index] = entry.get("item_sha")
                self._attempts[index] = max(self._attempts.get(index, 0), attempt)
                if self._running.get(index) == attempt:
                    del self._running[index]
            elif "stopping" in entry:
                self.last_stop = str(entry["stopping"])
        return header, finished

    def _read_results(self, finished: set[tuple[int, int]]) -> list[tuple[int, int]]:
        """Read the results: the latest outcome of each item; return the results
        whose checkpoint line is missing (to adopt)."""
        adopted = []
        for record in _json_lines(self.out):
            index = record.get("index") if isinstance(record, dict) else None
            if not isinstance(index, int):
                continue
            attempt = _attempt(record)
            self._result_lines[index] += 1
            self._attempts[index] = max(self._attempts.get(index, 0), attempt)
            if (index, attempt) not in finished:
                finished.add((index, attempt))
                adopted.append((index, attempt))
                self.done.setdefault(index, None)
                if self._running.get(index) == attempt:
                    del self._running[index]
            self._note(index, record)
        return adopted

    def _note(self, index: int, record: dict[str, Any]) -> None:
        """Keep the latest outcome of an item: ok, failed (by error type) or paused."""
        self.paused.pop(index, None)
        if record.get("ok"):
            self.failed.pop(index, None)
        elif record.get("status") == "paused":
            self.failed.pop(index, None)
            self.paused[index] = record
        else:
            self.failed[index] = str((record.get("error") or {}).get("type", "error"))

    # --- use ---------------------------------------------------------------------
    def is_done(self, index: int, sha: str) -> bool:
        """True if item ``index`` finished in an earlier run (ok or not).

        Raises:
            ConfigurationError: the item at ``index`` is not the one that finished
                (the inputs changed since the interrupted run).
        """
        if index not in self.done:
            return False
        recorded = self.done[index]
        if recorded is not None and recorded != sha:
            raise ConfigurationError(
                f"item {index} differs from the one the interrupted batch finished; the inputs "
                "changed, so resuming would mix results: start a new batch instead"
            )
        return True

    def started(self, index: int, sha: str) -> int:
        """Mark item ``index`` as running; return its attempt number (1, or more
        when it ran before). Not ``fsync``-ed: it only tells a later resume which
        items may have run part-way."""
        assert self._ckpt_fd is not None, "open() first"
        attempt = self._attempts.get(index, 0) + 1
        self._attempts[index] = attempt
        self._running[index] = attempt
        entry: dict[str, Any] = {"started": index, "item_sha": sha}
        if attempt > 1:
            entry["attempt"] = attempt
        self._append(self._ckpt_fd, entry, sync=False)
        return attempt

    def record(self, record: dict[str, Any], sha: str) -> None:
        """Write one result durably, then mark its item done in the checkpoint."""
        assert self._out_fd is not None and self._ckpt_fd is not None, "open() first"
        index = record["index"]
        attempt = self._running.pop(index, None) or self._attempts.get(index, 0) + 1
        self._attempts[index] = max(self._attempts.get(index, 0), attempt)
        if attempt > 1:
            record["attempt"] = attempt
        self._append(self._out_fd, record)
        entry: dict[str, Any] = {"index": index, "item_sha": sha, "ok": bool(record.get("ok"))}
        if attempt > 1:
            entry["attempt"] = attempt
        self._append(self._ckpt_fd, entry, sync=False)
        self._result_lines[index] += 1
        self.done[index] = sha
        self._note(index, record)

    def stopping(self, reason: str) -> None:
        """Note in the checkpoint that a stop was asked for (``reason``: e.g. the signal)."""
        assert self._ckpt_fd is not None, "open() first"
        self._append(self._ckpt_fd, {"stopping": reason})

    @property
    def running(self) -> list[int]:
        """Items marked running that have not finished (in this run)."""
        return sorted(self._running)

    def _append(self, fd: int, data: dict[str, Any], sync: bool = True) -> None:
        line = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
        view = memoryview(line.encode())
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync and self.durable:
            os.fsync(fd)

    # --- closing -----------------------------------------------------------------
    def close(self, compact: bool = False) -> None:
        """Close both files (``fsync``-ing the checkpoint). With ``compact``, when an
        item has several result lines, keep only its latest. Idempotent."""
        if self._ckpt_fd is not None and self.durable:
            os.fsync(self._ckpt_fd)
        for name in ("_out_fd", "_ckpt_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        if compact and any(count > 1 for count in self._result_lines.values()):
            self._compact()

    def _compact(self) -> None:
        """Rewrite the results file with one line per item (its latest), atomically."""
        remaining = Counter(self._result_lines)
        tmp = self.out.with_name(self.out.name + ".compacting")
        with self.out.open("rb") as src, tmp.open("wb") as dst:
            for raw in src:
                if not raw.strip():
                    continue
                index = json.loads(raw).get("index")
                remaining[index] -= 1
                if remaining[index] <= 0:
                    dst.write(raw)
            dst.flush()
            if self.durable:
                os.fsync(dst.fileno())
        os.replace(tmp, self.out)
        if self.durable:
            dir_fd = os.open(self.out.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        self._result_lines = Counter(dict.fromkeys(self._result_lines, 1))

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
