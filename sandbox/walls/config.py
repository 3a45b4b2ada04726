"""What walls a sandbox process puts up, as sent by the host on its command line."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

DEFAULT_UID = 65534
"""``nobody`` on most Linux systems."""
DEFAULT_GID = 65534
"""``nogroup`` / ``nobody``."""
TEST_HOOKS_FLAG = "--test-hooks"
"""Sandbox command-line flag of the test suite (see :mod:`.testing`); never in production."""


@dataclass(frozen=True)
class WallConfig:
    """Settings of :func:`~toolscript.sandbox.walls.apply`; every wall is on by default.

    Attributes:
        uid: user the sandbox becomes when it starts as root.
        gid: its group (supplementary groups are dropped).
        user: drop root to ``uid``/``gid`` (off: a root sandbox stays uid 0,
            still without capabilities).
        seccomp: install the system-call allow-list.
        landlock: restrict file access to reading the Python installation.
        network: enter a network namespace of its own where root or
            unprivileged user namespaces allow it.
        max_processes: ``RLIMIT_NPROC`` for the dropped uid (it counts every
            task of that uid, threads included, across all sandboxes sharing
            it, so it is a backstop; seccomp is what refuses new processes).
            ``None``: not set.
        read_paths: further paths the sandbox may read under Landlock.
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
    max_processes: int | None = 4096
    read_paths: tuple[str, ...] = ()
    allow_fork: bool = False

    def __post_init__(self) -> None:
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**32 - 1:
                raise ValueError(f"walls.{name} must be a positive integer id, got {value!r}")
        if self.max_processes is not None and (
            isinstance(self.max_processes, bool) or not isinstance(self.max_processes, int)
            or self.max_processes < 16
        ):
            raise ValueError(f"walls.max_processes must be an integer >= 16 or None, "
                             f"got {self.max_processes!r}")
        for name in ("user", "seccomp", "landlock", "network", "allow_fork"):
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
        return cls(**values)

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
