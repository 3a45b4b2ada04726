"""Facades of the data-work modules: ``time``, ``copy``, ``hashlib``, ``io``, ``csv``,
``uuid`` and ``queue`` (``zoneinfo`` lives in :mod:`.zonedata`).

Each is an explicit list of members, reviewed against the rule in
:mod:`.policy` (no member writes to objects the script did not create, reads
files, takes attribute names or blocks past the run's limits):

* time - clocks and formatting; ``sleep`` sleeps in short slices and ends
  when the run is aborted (the watchdog's wall limit); ``tzset`` (changes the
  process's time zone) is left out;
* copy - ``copy``/``deepcopy`` without a caller-supplied memo (a memo lets a
  script substitute the state that ``copy`` writes onto the new object);
  ``replace`` is left out (``dataclasses.replace`` checks field names);
* hashlib - the named constructors and ``new`` over the guaranteed algorithm
  names; ``file_digest`` (files), ``pbkdf2_hmac``/``scrypt`` (one C call of
  unbounded work or memory) are left out;
* io - ``StringIO`` and ``BytesIO`` only: in-memory, owned by the script;
* csv - readers and writers over what the script passes; the process-wide
  dialect registry and ``field_size_limit`` setter are left out;
* uuid - ``UUID``, ``uuid3``/``uuid4``/``uuid5`` and the namespaces;
  ``uuid1``/``getnode`` (read the MAC address) are left out;
* queue - single-threaded queues: nothing else can put into or take from a
  script's queue, so an operation that would block (``get`` on an empty
  queue, ``put`` on a full one, ``join`` with unfinished tasks) raises at once
  instead of waiting forever (``Empty``/``Full`` as a timeout would).
"""

from __future__ import annotations

import copy as _copy
import csv as _csv
import hashlib as _hashlib
import heapq as _heapq
import io as _io
import math as _math
import queue as _queue
import time as _time
import uuid as _uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from .guards import Guards
from .runsources import STEADY_CLOCKS, WALL_CLOCKS, RunSources
from .standins import hide_constructor

SLEEP_SLICE_S = 0.05
"""Longest single wait of ``time.sleep``: an abort is noticed within this."""

_TIME_MEMBERS = (
    "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
    "process_time", "process_time_ns", "thread_time", "thread_time_ns", "strftime",
    "strptime", "gmtime", "localtime", "mktime", "asctime", "ctime", "struct_time",
    "timezone", "altzone", "daylight", "tzname",
)


def time_members(guards: Guards) -> dict[str, Any]:
    """The ``time`` facade: the real formatters, the clocks and the formatters that read
    the current time through the run's recorded readings (:mod:`.runsources`), and a
    ``sleep`` that the run's wall limit ends."""
    members = {name: getattr(_time, name) for name in _TIME_MEMBERS if hasattr(_time, name)}
    sources = guards.sources
    for name in WALL_CLOCKS + STEADY_CLOCKS:
        if hasattr(_time, name):
            members[name] = _clock(sources, name, getattr(_time, name))
    for name in ("localtime", "gmtime", "ctime"):
        members[name] = _at_time(sources, name, getattr(_time, name))
    asctime, strftime = _time.asctime, _time.strftime

    def asctime_(t: Any = None, /) -> str:
        return asctime(_time.localtime(sources.wall_time()) if t is None else t)

    def strftime_(format: str, t: Any = None, /) -> str:
        return strftime(format, _time.localtime(sources.wall_time()) if t is None else t)

    for wrapper, real in ((asctime_, asctime), (strftime_, strftime)):
        wrapper.__name__ = wrapper.__qualname__ = real.__name__
        wrapper.__doc__ = real.__doc__
    members["asctime"], members["strftime"] = asctime_, strftime_

    def sleep(seconds: float, /) -> None:
        """``time.sleep``, in slices of at most :data:`SLEEP_SLICE_S`, ending when the
        run is aborted (e.g. at its wall-clock limit)."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an "
                            "integer or float")
        seconds = float(seconds)
        if _math.isnan(seconds):
            raise ValueError("Invalid value NaN (not a number)")
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        end = _time.monotonic() + seconds
        while True:
            guards.abort.raise_if_set()
            remaining = end - _time.monotonic()
            if remaining <= 0:
                return
            _time.sleep(min(remaining, SLEEP_SLICE_S))

    members["sleep"] = sleep
    return members


def _clock(sources: RunSources, name: str, real: Callable[[], Any]) -> Callable[[], Any]:
    """``time.<name>()`` read through the run's recorded readings."""
    def clock() -> Any:
        return sources.read(name, real)

    clock.__name__ = clock.__qualname__ = name
    clock.__doc__ = real.__doc__
    return clock


def _at_time(sources: RunSources, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    """``time.<name>(secs=None)``: without ``secs``, at the recorded current time."""
    def at(secs: Any = None, /) -> Any:
        return real(sources.wall_time() if secs is None else secs)

    at.__name__ = at.__qualname__ = name
    at.__doc__ = real.__doc__
    return at


def copy_members() -> dict[str, Any]:
    """The ``copy`` facade (see the module docstring)."""

    def copy(x: Any, /) -> Any:
        """A shallow copy of ``x``."""
        return _copy.copy(x)

    def deepcopy(x: Any, memo: Any = None, /) -> Any:
        """A deep copy of ``x`` (``memo`` is not available in the sandbox)."""
        if memo is not None:
            raise TypeError("copy.deepcopy: the memo argument is not available in the sandbox; "
                            "call copy.deepcopy(x)")
        return _copy.deepcopy(x)

    return {"copy": copy, "deepcopy": deepcopy, "Error": _copy.Error, "error": _copy.Error}


HASH_ALGORITHMS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224",
                   "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
                   "blake2b", "blake2s")
"""The algorithms of the ``hashlib`` facade (Python's guaranteed set)."""


def hashlib_members() -> dict[str, Any]:
    """The ``hashlib`` facade: the named constructors and ``new`` over them."""
    members: dict[str, Any] = {name: getattr(_hashlib, name) for name in HASH_ALGORITHMS}

    def new(name: str, data: Any = b"", **kwargs: Any) -> Any:
        """``hashlib.new`` for the algorithms in ``algorithms_available``."""
        if type(name) is not str or name.lower() not in members:
            raise ValueError(f"unsupported hash type {name!r}; available in the sandbox: "
                             f"{', '.join(HASH_ALGORITHMS)}")
        return members[name.lower()](data, **kwargs)

    members.update(new=new, algorithms_guaranteed=frozenset(HASH_ALGORITHMS),
                   algorithms_available=frozenset(HASH_ALGORITHMS))
    return members


def io_members() -> dict[str, Any]:
    """The ``io`` facade: in-memory text and byte streams."""
    return {"StringIO": _io.StringIO, "BytesIO": _io.BytesIO,
            "UnsupportedOperation": _io.UnsupportedOperation}


_CSV_MEMBERS = (
    "reader", "writer", "DictReader", "DictWriter", "Dialect", "excel", "excel_tab",
    "unix_dialect", "Sniffer", "Error", "QUOTE_ALL", "QUOTE_MINIMAL", "QUOTE_NONE",
    "QUOTE_NONNUMERIC", "QUOTE_STRINGS", "QUOTE_NOTNULL", "get_dialect", "list_dialects",
)


# Python 3.11 before 3.11.4 (the Debian image's 3.11.2) lets the reader and writer types
# be called directly: the object has no input or output, and iterating or using it crashes
# the process. ``type(reader)`` is a stand-in (found by the reachability crawler).
hide_constructor(type(_csv.reader([])), "call csv.reader(lines)")
hide_constructor(type(_csv.writer(_io.StringIO())), "call csv.writer(stream)")


def csv_members(guards: Guards) -> dict[str, Any]:
    """The ``csv`` facade: readers and writers; no process-wide settings."""
    members = {name: getattr(_csv, name) for name in _CSV_MEMBERS if hasattr(_csv, name)}

    def field_size_limit(*limit: Any) -> int:
        """The current field size limit (setting it is process-wide: not available)."""
        if limit:
            raise TypeError("csv.field_size_limit(new_limit) changes a process-wide setting "
                            "and is not available in the sandbox")
        value: int = _csv.field_size_limit()
        return value

    members["field_size_limit"] = field_size_limit
    # every DictReader/DictWriter/Sniffer a script can reach is one it created
    guards.writable_instances += (_csv.DictReader, _csv.DictWriter, _csv.Sniffer)
    return members


def uuid_members(guards: Guards) -> dict[str, Any]:
    """The ``uuid`` facade: random (from the run's seed, :mod:`.runsources`) and
    name-based UUIDs and parsing."""
    names = ("UUID", "uuid3", "uuid5", "NAMESPACE_DNS", "NAMESPACE_URL",
             "NAMESPACE_OID", "NAMESPACE_X500", "RESERVED_NCS", "RFC_4122",
             "RESERVED_MICROSOFT", "RESERVED_FUTURE", "SafeUUID")
    members = {name: getattr(_uuid, name) for name in names}
    sources = guards.sources

    def uuid4() -> _uuid.UUID:
        """Generate a random UUID."""
        return sources.uuid4()

    members["uuid4"] = uuid4
    return members


def _would_block(what: str) -> str:
    return (f"{what}: a script runs in one thread, so nothing else could change this queue "
            "while it waited")


class Queue:
    """``queue.Queue`` for one thread: ``get`` on an empty queue and ``put`` on a
    full one raise ``Empty``/``Full`` at once instead of waiting forever."""

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self.unfinished_tasks = 0
        self._init(maxsize)

    def _init(self, maxsize: int) -> None:
        self.queue: Any = deque()

    def _qsize(self) -> int:
        return len(self.queue)

    def _put(self, item: Any) -> None:
        self.queue.append(item)

    def _get(self) -> Any:
        return self.queue.popleft()

    def qsize(self) -> int:
        """The number of items."""
        return self._qsize()

    def empty(self) -> bool:
        """True if the queue holds no item."""
        return not self._qsize()

    def full(self) -> bool:
        """True if a ``maxsize`` is set and reached."""
        return 0 < self.maxsize <= self._qsize()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Add ``item``; ``Full`` if the queue is full."""
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        if self.full():
            raise _queue.Full(_would_block("put() on a full queue") if block else "")
        self._put(item)
        self.unfinished_tasks += 1

    def put_nowait(self, item: Any) -> None:
        """``put(item, block=False)``."""
        self.put(item, False)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Remove and return an item; ``Empty`` if there is none."""
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        if not self._qsize():
            raise _queue.Empty(_would_block("get() on an empty queue") if block else "")
        return self._get()

    def get_nowait(self) -> Any:
        """``get(block=False)``."""
        return self.get(False)

    def task_done(self) -> None:
        """Mark one item taken with ``get`` as processed."""
        if self.unfinished_tasks <= 0:
            raise ValueError("task_done() called too many times")
        self.unfinished_tasks -= 1

    def join(self) -> None:
        """Return if every item put was marked done; otherwise raise (it would wait forever)."""
        if self.unfinished_tasks:
            raise RuntimeError(_would_block(
                f"join() with {self.unfinished_tasks} unfinished task(s)") +
                "; call task_done() for each item first")


class LifoQueue(Queue):
    """Last in, first out."""

    def _init(self, maxsize: int) -> None:
        self.queue = []

    def _get(self) -> Any:
        return self.queue.pop()


class PriorityQueue(Queue):
    """Smallest item first (``heapq`` order)."""

    def _init(self, maxsize: int) -> None:
        self.queue = []

    def _put(self, item: Any) -> None:
        _heapq.heappush(self.queue, item)

    def _get(self) -> Any:
        return _heapq.heappop(self.queue)


class SimpleQueue:
    """``queue.SimpleQueue`` for one thread (``get`` on an empty queue raises ``Empty``)."""

    def __init__(self) -> None:
        self._items: deque[Any] = deque()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Add ``item``."""
        self._items.append(item)

    def put_nowait(self, item: Any) -> None:
        """``put(item)``."""
        self._items.append(item)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Remove and return the oldest item; ``Empty`` if there is none."""
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        if not self._items:
            raise _queue.Empty(_would_block("get() on an empty queue") if block else "")
        return self._items.popleft()

    def get_nowait(self) -> Any:
        """``get(block=False)``."""
        return self.get(False)

    def empty(self) -> bool:
        """True if the queue holds no item."""
        return not self._items

    def qsize(self) -> int:
        """The number of items."""
        return len(self._items)


for _cls in (Queue, LifoQueue, PriorityQueue, SimpleQueue):
    _cls.__module__ = "queue"


def queue_members(guards: Guards) -> dict[str, Any]:
    """The ``queue`` facade (single-threaded queues, see the module docstring)."""
    guards.writable_instances += (Queue, SimpleQueue)
    return {"Queue": Queue, "LifoQueue": LifoQueue, "PriorityQueue": PriorityQueue,
            "SimpleQueue": SimpleQueue, "Empty": _queue.Empty, "Full": _queue.Full}
