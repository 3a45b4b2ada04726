"""A uid of its own for every live sandbox: per-session kernel counters.

The kernel counts several resources per uid: tasks (``RLIMIT_NPROC``, threads
included), pending signals (``RLIMIT_SIGPENDING``), POSIX message queue bytes,
pipe buffer pages, inotify instances. Sandboxes that share a uid share those
budgets, so one of them could exhaust them for all the others. A root host
therefore gives each sandbox a uid (and the same gid) that no other live
sandbox has, from :attr:`~toolscript.sandbox.walls.WallConfig.uid_range`.

:class:`UidAllocator` hands them out. Inside one host process a set of held
uids keeps them apart; between host processes (other runtimes on the same
machine) a byte-range lock per uid on one lock file does (``lockf``: the
kernel drops a process's locks when it dies, so a killed host frees its uids).
Candidates are taken round-robin from a random point of the range, so a uid
just freed (its sandbox's last threads may still be exiting) is the last to be
handed out again.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import random
import stat
import tempfile
import threading

from toolscript.errors import SandboxStartError

__all__ = ["UidAllocator", "UidBlock", "UidLease", "allocator_for"]

log = logging.getLogger(__name__)

_LOCK_NAME = "toolscript-sandbox-uids.lock"
_HELD: set[int] = set()
_HELD_LOCK = threading.Lock()


class UidLease:
    """One uid held for one sandbox until :meth:`release` (idempotent)."""

    def __init__(self, allocator: UidAllocator, uid: int) -> None:
        self.uid = uid
        self._allocator: UidAllocator | None = allocator

    def release(self) -> None:
        """Give the uid back (once the sandbox's processes are gone)."""
        allocator, self._allocator = self._allocator, None
        if allocator is not None:
            allocator.free(self.uid)

    def __repr__(self) -> str:
        return f"<UidLease {self.uid}{'' if self._allocator else ' released'}>"


class UidBlock:
    """``size`` consecutive uids held together until :meth:`release` (idempotent): the
    uids a docker fork server hands to its sessions, one each (see
    :meth:`UidAllocator.acquire_block`)."""

    def __init__(self, allocator: UidAllocator, start: int, size: int) -> None:
        self.start, self.stop = start, start + size
        self._allocator: UidAllocator | None = allocator

    def release(self) -> None:
        """Give every uid of the block back (once no process of it is left)."""
        allocator, self._allocator = self._allocator, None
        if allocator is not None:
            allocator.free_block(self.start, self.stop - self.start)

    def __repr__(self) -> str:
        return f"<UidBlock [{self.start}, {self.stop}){'' if self._allocator else ' released'}>"


class UidAllocator:
    """Hands out the uids of ``range(start, stop)``, each to one sandbox at a time."""

    def __init__(self, start: int, stop: int, lock_path: str | None = None) -> None:
        self.start, self.stop = start, stop
        # One process's POSIX locks never conflict with each other: the uids this
        # process holds are one set, whichever allocator (range) took them.
        self._held = _HELD
        self._lock = _HELD_LOCK
        self._next = random.randrange(start, stop)
        self._fd = _lock_file(lock_path)

    @property
    def shared(self) -> bool:
        """True if other host processes see the uids this one holds (the lock file)."""
        return self._fd >= 0

    def acquire(self) -> UidLease:
        """A uid no other live sandbox of this machine's hosts holds.

        Raises :class:`~toolscript.errors.SandboxStartError` when the whole range is taken.
        """
        size = self.stop - self.start
        with self._lock:
            for _ in range(size):
                uid = self._next
                self._next = self.start + (uid + 1 - self.start) % size
                if uid in self._held or not self._lock_uid(uid):
                    continue
                self._held.add(uid)
                return UidLease(self, uid)
        raise SandboxStartError(
            f"every sandbox uid of walls.uid_range [{self.start}, {self.stop}) is in use: "
            "widen the range or close sessions")

    def acquire_block(self, size: int) -> UidBlock:
        """``size`` consecutive uids (aligned to ``size``) that no other live sandbox of
        this machine's hosts holds, locked as one byte range.

        Raises :class:`~toolscript.errors.SandboxStartError` when no such block is free.
        """
        starts = list(range(self.start, self.stop - size + 1, size))
        if size < 1 or not starts:
            raise SandboxStartError(f"walls.uid_range [{self.start}, {self.stop}) has no room "
                                    f"for a block of {size} uids")
        first = random.randrange(len(starts))
        with self._lock:
            for start in starts[first:] + starts[:first]:
                uids = range(start, start + size)
                if any(uid in self._held for uid in uids) or not self._lock_uid(start, size):
                    continue
                self._held.update(uids)
                return UidBlock(self, start, size)
        raise SandboxStartError(
            f"no block of {size} free uids left in walls.uid_range [{self.start}, {self.stop}): "
            "close sessions or containers")

    def free_block(self, start: int, size: int) -> None:
        """Give back a block of :meth:`acquire_block` (:meth:`UidBlock.release` calls this)."""
        with self._lock:
            self._held.difference_update(range(start, start + size))
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    fcntl.lockf(self._fd, fcntl.LOCK_UN, size, start, os.SEEK_SET)

    def free(self, uid: int) -> None:
        """Give ``uid`` back (:meth:`UidLease.release` calls this)."""
        with self._lock:
            if uid not in self._held:
                return
            self._held.discard(uid)
            if self._fd >= 0:
                with contextlib.suppress(OSError):
                    fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, uid, os.SEEK_SET)

    def held(self) -> set[int]:
        """The uids of this range this host process holds now (tests and diagnostics)."""
        with self._lock:
            return {uid for uid in self._held if self.start <= uid < self.stop}

    def _lock_uid(self, uid: int, size: int = 1) -> bool:
        if self._fd < 0:
            return True
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, size, uid, os.SEEK_SET)
        except OSError:
            return False
        return True


_LOCK_FDS: dict[str | None, int] = {}


def _lock_file(path: str | None) -> int:
    """The lock file's descriptor, opened once per process: closing any descriptor of
    it would drop every lock this process holds on it."""
    with _HELD_LOCK:
        if path not in _LOCK_FDS:
            _LOCK_FDS[path] = _open_lock_file(path)
        return _LOCK_FDS[path]


def _open_lock_file(path: str | None) -> int:
    """The lock file, owned by this user and by nobody else (-1: none could be had)."""
    candidates = [path] if path else [os.path.join(d, _LOCK_NAME)
                                      for d in ("/run", tempfile.gettempdir())]
    for candidate in candidates:
        try:
            fd = os.open(candidate, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
            return fd
        os.close(fd)  # someone else's file: its locks would mean nothing
    log.warning("no sandbox uid lock file could be opened (%s): sandbox uids are kept apart "
                "within this process only", ", ".join(c for c in candidates if c))
    return -1


_ALLOCATORS: dict[tuple[int, int], UidAllocator] = {}
_ALLOCATORS_LOCK = threading.Lock()


def allocator_for(uid_range: tuple[int, int]) -> UidAllocator:
    """The process-wide allocator of ``uid_range`` (every backend of the host shares it)."""
    with _ALLOCATORS_LOCK:
        allocator = _ALLOCATORS.get(uid_range)
        if allocator is None:
            allocator = _ALLOCATORS[uid_range] = UidAllocator(*uid_range)
        return allocator
