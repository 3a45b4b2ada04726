"""Durable results and the checkpoint of a batch job: :class:`BatchStore`.

Two append-only JSONL files:

* the **results** file (``--out``): one line per finished item, in completion
  order, each with its ``index``;
* the **checkpoint** (default: the results path + ``.checkpoint``): a header
  naming the script (its SHA-256) and one ``{"index", "item_sha"}`` line per
  finished item.

Ordering is what makes resume safe. For each item the result line is written
and ``fsync``-ed first; only then is its checkpoint line written and
``fsync``-ed. On resume the checkpoint is read, and any result line without a
checkpoint line (the process died between the two writes) is adopted into it,
because its result is already durable. A torn last line in either file (the
process died mid-write) is cut off. So an item whose result was written is
never run again, and in particular its write tools never run twice.

The remaining at-least-once window: an item that was *running* when the
process died has no result line, so it runs again on resume, and any write
tool it had already called runs again. Tools that write should therefore be
idempotent per item (e.g. keyed on an id from the item).
"""

from __future__ import annotations

import hashlib
import json
import os
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


def _read_lines(path: Path) -> list[Any]:
    """The JSON lines of ``path``; a torn last line (no newline) is cut off the file."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with path.open("r+b") as fh:
            fh.truncate(end)
    lines = []
    for number, raw in enumerate(data[:end].splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(json.loads(raw))
        except ValueError as exc:
            raise ConfigurationError(
                f"{path}: line {number} is not JSON ({exc}); this file "
                "was not written by a batch run"
            ) from exc
    return lines


class BatchStore:
    """The results file and checkpoint of one batch job (see the module docs).

    Args:
        out: the results file (JSONL).
        checkpoint: the checkpoint file (default ``out`` + ``.checkpoint``).
        script: the script's text (resuming with another script is refused).
        resume: continue an interrupted job; without it existing files are an error.
        durable: ``fsync`` after every line (on by default; off only for tests of speed).
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
        header, entries = self._read_checkpoint()
        if header is not None and header.get("script_sha256") != self.script_sha:
            raise ConfigurationError(
                f"{self.checkpoint} belongs to a batch of a different script; resume it with "
                "the same script, or choose another output file"
            )
        for entry in entries:
            self.done[int(entry["index"])] = entry.get("item_sha")
        adopted = []
        for record in _read_lines(self.out):
            index = record.get("index") if isinstance(record, dict) else None
            if isinstance(index, int) and index not in self.done:
                self.done[index] = None
                adopted.append(index)
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
        for index in adopted:
            self._append(self._ckpt_fd, {"index": index, "item_sha": None, "adopted": True})
        return dict(self.done)

    def _read_checkpoint(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        lines = _read_lines(self.checkpoint)
        if not lines:
            return None, []
        header = lines[0]
        if not isinstance(header, dict) or header.get("toolscript_batch") != CHECKPOINT_VERSION:
            raise ConfigurationError(
                f"{self.checkpoint} is not a toolscript batch checkpoint "
                f"(version {CHECKPOINT_VERSION})"
            )
        return header, [e for e in lines[1:] if isinstance(e, dict) and "index" in e]

    # --- use ---------------------------------------------------------------------
    def is_done(self, index: int, sha: str) -> bool:
        """True if item ``index`` finished in an earlier run.

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

    def record(self, record: dict[str, Any], sha: str) -> None:
        """Write one result durably, then mark its item done in the checkpoint."""
        assert self._out_fd is not None and self._ckpt_fd is not None, "open() first"
        self._append(self._out_fd, record)
        self._append(self._ckpt_fd, {"index": record["index"], "item_sha": sha})
        self.done[record["index"]] = sha

    def _append(self, fd: int, data: dict[str, Any]) -> None:
        line = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
        payload = line.encode()
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if self.durable:
            os.fsync(fd)

    def close(self) -> None:
        """Close both files. Idempotent."""
        for name in ("_out_fd", "_ckpt_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    def __enter__(self) -> BatchStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
