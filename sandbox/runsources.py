"""What a script reads that would differ in another process: recorded, and served again on replay.

A durable run that pauses is resumed by running its script again in a fresh
sandbox (see the host's ``runtime/durable``). Tool results come from the
journal; everything else a script can read that is not a function of its
text must come out the same too, or the replay takes another path. Besides
the string hash seed (fixed by the host for the whole interpreter), those are:

* the clocks of the ``time`` facade (``time.time()``, ``monotonic()``,
  ``perf_counter()``, the CPU clocks and their ``_ns`` forms; ``localtime()``,
  ``gmtime()``, ``ctime()``, ``asctime()`` and ``strftime()`` without a time
  argument) and ``datetime.now()``/``utcnow()``/``today()``/``date.today()``;
* ``random``'s module functions and ``uuid.uuid4()``, which draw from one
  seed per run.

:class:`RunSources` records each reading of a run, in order per kind; the
result frame carries them to the host (``sources``), which keeps them with the
run's journal when the run pauses. The resume's ``run`` message hands them back,
and the same reads return the same values in the same order. Once a kind's
recorded values are used up the reads are live again: wall clocks show the real
time, steady clocks continue from the last recorded value (they never go
back). After a call was answered ``paused`` nothing more is recorded (what the
script reads while it unwinds is not part of the replayed run), and at most
:data:`MAX_READINGS` readings are kept per run: a replay that needs more is
caught by the host as ``replay_diverged`` where it matters (a tool call's
arguments), never silently.

``random.Random()`` objects a script creates without a seed are seeded by
Python from the operating system and are not recorded. The per-run seed of
``uuid4`` is as secret as the continuation that records it (a hash in counter
mode: its outputs do not reveal it).
"""

from __future__ import annotations

import datetime as _datetime
import hashlib
import math
import os
import random as _random
import time as _time
import uuid as _uuid
from collections.abc import Callable
from typing import Any

from .policy import CLOCK_ATTRIBUTES

__all__ = ["CLOCK_ATTRIBUTES", "KINDS", "MAX_READINGS", "RunSources", "reading_ok", "sources_ok"]

WALL_CLOCKS = ("time", "time_ns")
"""Clocks that show the real time again once their recorded values are used up."""

STEADY_CLOCKS = ("monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
                 "process_time", "process_time_ns", "thread_time", "thread_time_ns")
"""Clocks that continue from their last recorded value (they never go back)."""

SEED = "seed"
"""The kind of the run's random seed (64 hex digits)."""

KINDS = frozenset(WALL_CLOCKS + STEADY_CLOCKS + (SEED,))
"""Every kind of reading a ``sources`` map may hold."""

MAX_READINGS = 10_000
"""Readings kept per run (the host refuses a ``sources`` map with more)."""

SEED_CHARS = 64


def reading_ok(kind: str, value: Any) -> bool:
    """True if ``value`` is a well-formed reading of ``kind`` (checked on both sides
    of the wire: a sandbox's frame is hostile input)."""
    if kind == SEED:
        return (type(value) is str and len(value) == SEED_CHARS
                and all(c in "0123456789abcdef" for c in value))
    if kind.endswith("_ns"):
        return type(value) is int and 0 <= value < 2**63
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


def sources_ok(sources: Any) -> bool:
    """True if ``sources`` is a ``{kind: [reading, ...]}`` map of known kinds, well-formed
    readings and at most :data:`MAX_READINGS` readings in all."""
    if type(sources) is not dict:
        return False
    total = 0
    for kind, values in sources.items():
        if type(kind) is not str or kind not in KINDS or type(values) is not list:
            return False
        total += len(values)
        if total > MAX_READINGS or not all(reading_ok(kind, value) for value in values):
            return False
    return True


class RunSources:
    """The readings of one interpreter's current run (see the module docstring)."""

    def __init__(self) -> None:
        self.generator = _random.Random()
        """The generator behind ``random``'s module functions."""
        self._replay: dict[str, list[Any]] = {}
        self._position: dict[str, int] = {}
        self._offset: dict[str, int | float] = {}
        self._recorded: dict[str, list[Any]] = {}
        self._count = 0
        self._frozen = False
        self._seed: str | None = None
        self._reseeds = 0
        self._uuids = 0

    def start(self, replay: dict[str, list[Any]] | None = None) -> None:
        """A run begins: forget the last run's readings; serve ``replay`` first."""
        self._replay = dict(replay) if replay and sources_ok(replay) else {}
        self._position = {}
        self._offset = {}
        self._recorded = {}
        self._count = 0
        self._frozen = False
        self._seed = None
        self._uuids = 0
        self._reseeds = 0

    def freeze(self) -> None:
        """A call was answered ``paused``: the replayed run ends here, record no more."""
        self._frozen = True

    def recorded(self) -> dict[str, list[Any]]:
        """This run's readings so far, by kind (empty if it read none)."""
        return {kind: list(values) for kind, values in self._recorded.items()}

    def read(self, kind: str, live: Callable[[], Any]) -> Any:
        """The next reading of ``kind``: the recorded one on replay, else ``live()``."""
        if not self._frozen:
            replay = self._replay.get(kind)
            position = self._position.get(kind, 0)
            if replay is not None and position < len(replay):
                self._position[kind] = position + 1
                value = replay[position]
                self._keep(kind, value)
                return value
        value = live()
        if kind in STEADY_CLOCKS:
            value = self._steady(kind, value)
        self._keep(kind, value)
        return value

    def _steady(self, kind: str, value: Any) -> Any:
        offset = self._offset.get(kind)
        if offset is None:
            replay = self._replay.get(kind)
            last = replay[-1] if replay else None
            offset = self._offset[kind] = (last - value if last is not None and last > value
                                           else type(value)(0))
        return value + offset

    def _keep(self, kind: str, value: Any) -> None:
        if self._frozen or self._count >= MAX_READINGS:
            return
        self._count += 1
        self._recorded.setdefault(kind, []).append(value)

    # --- the seed: random's module functions, uuid4 ---------------------------------------
    def seed(self) -> str:
        """The run's seed, drawn (or replayed) on first use; seeds :attr:`generator`."""
        if self._seed is None:
            self._seed = self.read(SEED, lambda: os.urandom(SEED_CHARS // 2).hex())
            self.generator.seed(self._seed, version=2)
        return self._seed

    def seeded(self) -> None:
        """The script seeded the generator itself (``random.seed(x)``)."""
        if self._seed is None:
            self._seed = self.read(SEED, lambda: os.urandom(SEED_CHARS // 2).hex())

    def reseed(self) -> None:
        """``random.seed()`` without an argument: a fresh state, derived from the run's seed."""
        seed = self.seed()
        self._reseeds += 1
        self.generator.seed(hashlib.sha256(f"{seed}:reseed:{self._reseeds}".encode()).hexdigest(),
                            version=2)

    def uuid4(self) -> _uuid.UUID:
        """A version-4 UUID: 122 bits of SHA-256 of the run's seed and a counter."""
        seed = self.seed()
        self._uuids += 1
        digest = hashlib.sha256(f"{seed}:uuid4:{self._uuids}".encode()).digest()
        return _uuid.UUID(bytes=digest[:16], version=4)

    def wall_time(self) -> float:
        """``time.time()`` as the script sees it."""
        value: float = self.read("time", _time.time)
        return value

    # --- datetime.now() and friends ---------------------------------------------------------
    def clock_attribute(self, obj: Any, name: str) -> Any:
        """``obj.<name>`` for a name of :data:`CLOCK_ATTRIBUTES`: on a ``date`` or
        ``datetime`` (class or instance) a method reading the recorded wall clock,
        on anything else the attribute itself."""
        cls = obj if isinstance(obj, type) else type(obj)
        if not (isinstance(cls, type) and issubclass(cls, _datetime.date)):
            return getattr(obj, name)
        getattr(obj, name)  # the same AttributeError as CPython for a name cls lacks
        if name == "today":
            def today() -> Any:
                """The current local date (or date and time), as recorded for replay."""
                return cls.fromtimestamp(self.wall_time())
            return today
        if name == "utcnow":
            def utcnow() -> Any:
                """The current UTC date and time (naive), as recorded for replay."""
                return cls.utcfromtimestamp(self.wall_time())  # type: ignore[attr-defined]
            return utcnow

        def now(tz: Any = None) -> Any:
            """The current date and time (in ``tz`` if given), as recorded for replay."""
            return cls.fromtimestamp(self.wall_time(), tz)  # type: ignore[call-arg]
        return now

