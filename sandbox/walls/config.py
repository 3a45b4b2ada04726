"""What walls a sandbox process puts up, as sent by the host on its command line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

DEFAULT_UID = 65534
"""``nobody`` on most Linux systems."""
DEFAULT_GID = 65534
"""``nogroup`` / ``nobody``."""
DEFAULT_UID_RANGE = (2_000_000_000, 2_000_065_536)
"""Where a root host takes each sandbox's own uid (and gid) from: above the ranges
systems hand out to users and to containers (systemd-nspawn's end at 1879048191)."""
_MAX_ID = 2**32 - 1
TEST_HOOKS_FLAG = "--test-hooks"
"""Sandbox command-line flag of the test suite (see :mod:`.testing`); never in production."""


@dataclass(frozen=True)
class WallConfig:
    """Settings of :func:`~toolscript.sandbox.walls.apply`; every wall is on by default.

    Attributes:
        uid: user the sandbox becomes when it starts as root.
        gid: its group (supplementary groups are dropped).
        uid_range: ``(start, stop)``: a root host gives every live sandbox a uid
            (and the same gid) of its own from ``range(start, stop)``, instead
            of ``uid``/``gid``, so that the kernel's per-uid counters
            (``RLIMIT_NPROC``'s tasks, pending signals, message queues, pipe
            buffers) are per session. ``None``: every sandbox is ``uid``.
            Setting ``uid`` or ``gid`` without ``uid_range`` in
            :meth:`from_mapping` means ``None``.
        user: drop root to ``uid``/``gid`` (off: a root sandbox stays uid 0,
            still without capabilities).
        seccomp: install the system-call allow-list.
        landlock: restrict file access to reading the Python installation.
        network: enter a network namespace of its own where root or
            unprivileged user namespaces allow it.
        max_processes: ``RLIMIT_NPROC`` for the dropped uid: the sandbox's task
            budget (threads included; seccomp refuses new processes). It counts
            every task of that uid, so it is the session's own only with a uid
            of its own (``uid_range``), or unprivileged in a user namespace of
            its own (the kernel counts per namespace). ``None``: not set.
        private_view: as root, enter a mount namespace of its own whose root
            holds only the paths the sandbox may read (read-only) and a
            ``/proc`` that shows no other user's process, so ``stat``,
            ``readlink`` and ``access`` find nothing of the host.
        read_paths: further paths the sandbox may read under Landlock.
        network_from_container: the sandbox runs in a container without a network
            (the docker backend's fork server in a ``network_mode="none"`` container
            sets it): the container's empty network namespace is the network wall of
            every session forked in it, so the fork server gives up ``CAP_SYS_ADMIN``
            right after its private view. Off (every host): a root fork server keeps
            it for its children, each of which enters a network namespace of its own
            and then drops every capability, whatever interfaces the host has.
        allow_fork: tests only: let the seccomp filter allow ``fork`` so a
            test can show that the process group dies with the session. The
            sandbox refuses it unless started with its test flag.
    """

    uid: int = DEFAULT_UID
    gid: int = DEFAULT_GID
    user: bool = True
    seccomp: bool = True
    landlock: bool = True
    network: bool = True
    uid_range: tuple[int, int] | None = DEFAULT_UID_RANGE
    max_processes: int | None = 256
    private_view: bool = True
    read_paths: tuple[str, ...] = ()
    allow_fork: bool = False
    network_from_container: bool = False

    def __post_init__(self) -> None:
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**32 - 1:
                raise ValueError(f"walls.{name} must be a positive integer id, got {value!r}")
        if self.uid_range is not None:
            bounds = tuple(self.uid_range)
            if (len(bounds) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                            for v in bounds)
                    or not 0 < bounds[0] < bounds[1] <= _MAX_ID):
                raise ValueError(f"walls.uid_range must be [start, stop) with 0 < start < stop "
                                 f"<= {_MAX_ID}, got {self.uid_range!r}")
            object.__setattr__(self, "uid_range", bounds)
        if self.max_processes is not None and (
            isinstance(self.max_processes, bool) or not isinstance(self.max_processes, int)
            or self.max_processes < 16
        ):
            raise ValueError(f"walls.max_processes must be an integer >= 16 or None, "
                             f"got {self.max_processes!r}")
        for name in ("user", "seccomp", "landlock", "network", "private_view", "allow_fork",
                     "network_from_container"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"walls.{name} must be true or false")
        if isinstance(self.read_paths, str) or not all(
            isinstance(p, str) and p.startswith("/") for p in self.read_paths
        ):
            raise ValueError("walls.read_paths must be a list of absolute paths")
        object.__setattr__(self, "read_paths", tuple(self.read_paths))

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> WallConfig:
        """From a dictionary (a backend option, a profile table); unknown keys are refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown walls setting(s) {unknown}; allowed: {sorted(known)}")
        values = dict(data)
        if "read_paths" in values:
            values["read_paths"] = tuple(values["read_paths"])
        if ("uid" in values or "gid" in values) and "uid_range" not in values:
            values["uid_range"] = None  # one fixed identity was asked for
        if isinstance(values.get("uid_range"), list):
            values["uid_range"] = tuple(values["uid_range"])
        return cls(**values)

    def own_uid(self) -> bool:
        """True if ``uid`` comes from ``uid_range``: the host gave it to this sandbox alone."""
        return self.uid_range is not None and self.uid_range[0] <= self.uid < self.uid_range[1]

    def for_session(self, session: Mapping[str, Any]) -> WallConfig:
        """This config with the identity the host allocated for one sandbox
        (``{"uid": N, "gid": N}``, from a fork server's ``spawn`` request)."""
        unknown = sorted(set(session) - {"uid", "gid"})
        if unknown:
            raise ValueError(f"unknown session setting(s) {unknown}")
        return replace(self, **dict(session)) if session else self

    def to_json(self) -> str:
        """The command-line form the host passes to the sandbox."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> WallConfig:
        """Parse :meth:`to_json`'s output."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the walls setting must be a JSON object")
        return cls.from_mapping(data)
