"""Progress display for batch jobs: a rich bar, or plain text lines.

``rich`` is optional (the ``batch`` extra). Without it, or when asked for
``plain``, progress is written as short text lines with the same facts: items
done of the total, errors, rate and ETA. Items skipped because an earlier run
finished them count as done but not towards the rate.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

__all__ = ["NullProgress", "PlainProgress", "Progress", "RichProgress", "make_progress"]


class Progress(Protocol):
    """What :func:`~toolscript.runtime.batch.run.run_batch` reports to."""

    def start(self, total: int | None, already_done: int) -> None:
        """The batch starts; ``already_done`` items were finished by an earlier run."""

    def update(self, record: dict[str, Any]) -> None:
        """One item finished (``record`` is its result line)."""

    def message(self, text: str) -> None:
        """Show a one-off message (e.g. "stopping...")."""

    def close(self) -> None:
        """The batch ended; leave the display in a clean state."""


class NullProgress:
    """Shows nothing."""

    def start(self, total: int | None, already_done: int) -> None:
        """Ignore."""

    def update(self, record: dict[str, Any]) -> None:
        """Ignore."""

    def message(self, text: str) -> None:
        """Ignore."""

    def close(self) -> None:
        """Ignore."""


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class PlainProgress:
    """Text lines: ``37/100 items, 2 errors, 4.1 items/s, ETA 0:15``.

    On a terminal the line is redrawn in place; otherwise a line is written at
    most every ``interval_s`` seconds, and once at the end.
    """

    def __init__(self, stream: TextIO | None = None, interval_s: float = 2.0) -> None:
        self.stream = stream or sys.stderr
        self.interval_s = interval_s
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total: int | None = None
        self.done = 0
        self.done_now = 0
        self.errors = 0
        self._started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def start(self, total: int | None, already_done: int) -> None:
        """Remember the totals and show the first line."""
        self.total = total
        self.done = already_done
        self._started = time.monotonic()
        self._shown = True
        if already_done:
            self.message(f"resuming: {already_done} item(s) already done")
        self._show(force=True)

    def update(self, record: dict[str, Any]) -> None:
        """Count one finished item."""
        self.done += 1
        self.done_now += 1
        if not record.get("ok"):
            self.errors += 1
        self._show()

    def line(self) -> str:
        """The current progress line."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = self.done_now / elapsed
        total = "?" if self.total is None else str(self.total)
        parts = [
            f"{self.done}/{total} items",
            f"{self.errors} errors",
            f"{rate:.1f} items/s",
            f"elapsed {_duration(elapsed)}",
        ]
        if self.total is not None and rate > 0:
            parts.append(f"ETA {_duration(max(self.total - self.done, 0) / rate)}")
        return ", ".join(parts)

    def _show(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
        elif force or now - self._last >= self.interval_s:
            self.stream.write(self.line() + "\n")
        else:
            return
        self._last = now
        self.stream.flush()

    def message(self, text: str) -> None:
        """Write ``text`` on its own line."""
        self.stream.write(("\n" if self.tty else "") + text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Write the final line."""
        if not self._shown:
            return
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()


class RichProgress:
    """A ``rich`` progress bar with rate, errors, elapsed time and ETA."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichBar
        from rich.text import Text

        class RateColumn(ProgressColumn):
            """Items per second, from this run's items only."""

            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("-- items/s" if speed is None else f"{speed:.1f} items/s")

        self.console = Console(file=stream or sys.stderr)
        self._bar = RichBar(
            TextColumn("batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[errors]} errors"),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task: Any = None
        self.errors = 0

    def start(self, total: int | None, already_done: int) -> None:
        """Show the bar."""
        self._bar.start()
        if already_done:
            self.console.print(f"resuming: {already_done} item(s) already done")
        self._task = self._bar.add_task("batch", total=total, completed=already_done, errors=0)

    def update(self, record: dict[str, Any]) -> None:
        """Advance by one item."""
        if not record.get("ok"):
            self.errors += 1
        self._bar.update(self._task, advance=1, errors=self.errors)

    def message(self, text: str) -> None:
        """Print above the bar."""
        self.console.print(text)

    def close(self) -> None:
        """Stop redrawing."""
        if self._task is not None:
            self._bar.stop()


def make_progress(
    kind: str | bool | Progress | None = "auto", stream: TextIO | None = None
) -> Progress:
    """A progress display: ``"auto"`` (rich on a terminal if installed, else
    plain), ``"rich"``, ``"plain"``, ``"none"``/``False``, or a ready object."""
    if kind is None or kind is False or kind == "none":
        return NullProgress()
    if not isinstance(kind, (str, bool)):
        return kind
    stream = stream or sys.stderr
    if kind in ("auto", True):
        if getattr(stream, "isatty", lambda: False)():
            try:
                return RichProgress(stream)
            except ImportError:
                pass
        return PlainProgress(stream)
    if kind == "rich":
        return RichProgress(stream)
    if kind == "plain":
        return PlainProgress(stream)
    raise ValueError(f"unknown progress kind {kind!r}: use auto, rich, plain or none")
