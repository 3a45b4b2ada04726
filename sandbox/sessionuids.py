"""The fork server's own uid per child: a task budget per session inside one container.

A docker fork server (``isolation="process"``) runs as root inside its
container, with no capability but ``CAP_SETUID``/``CAP_SETGID`` (and
``CAP_SETPCAP``, to empty its children's bounding sets). The host gives each
container a block of uids that no other live sandbox of the machine holds
(:meth:`~toolscript.runtime.backends.uids.UidAllocator.acquire_block`), as
the fork server's ``walls.uid_range``, twice as many as it has sessions; the
fork server hands one uid of it to each child it forks and takes it back when
it reaps that child (a request that finds all held waits for a reap). The kernel
reaps a thread-group leader only after its last thread, so a uid is free
again only once no task of it is left: ``RLIMIT_NPROC`` then counts that
session's tasks alone, and one session that fills its budget leaves every
sibling in the container its own.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["SessionUids"]


class SessionUids:
    """The uids of ``walls.uid_range`` not held by a live child (root fork servers only)."""

    def __init__(self, config: Any) -> None:
        """``config``: the fork server's :class:`~.walls.WallConfig`."""
        start, stop = config.uid_range or (0, 0)
        self.enabled = bool(config.user and config.uid_range and os.geteuid() == 0)
        self._range = range(start, stop) if self.enabled else range(0)
        self._free = list(self._range)
        self._held: dict[int, int] = {}

    def exhausted(self) -> bool:
        """True if this fork server allocates and every uid is held by a live child."""
        return self.enabled and not self._free

    def take(self, session: dict[str, Any]) -> dict[str, Any] | str:
        """``session`` with a uid/gid of its own (unchanged if the host chose one or this
        fork server does not allocate), or the reason why none is free."""
        if not self.enabled or "uid" in session:
            return session
        if not self._free:
            return f"every uid of this fork server's {len(self._held)} sessions is in use"
        uid = self._free.pop(0)
        return {**session, "uid": uid, "gid": uid}

    def bind(self, pid: int, session: dict[str, Any]) -> None:
        """Record that child ``pid`` holds the uid :meth:`take` gave ``session``."""
        if session.get("uid") in self._range:
            self._held[pid] = int(session["uid"])

    def give_back(self, session: dict[str, Any]) -> None:
        """The fork failed: ``session``'s uid is free again."""
        if session.get("uid") in self._range:
            self._free.insert(0, int(session["uid"]))

    def reaped(self, pid: int) -> None:
        """Child ``pid`` and all its threads are gone: its uid goes to the back of the line."""
        uid = self._held.pop(pid, None)
        if uid is not None:
            self._free.append(uid)
