"""Which OS walls a backend's sandboxes really get, and failing closed without them.

Every process sandbox applies its walls at start and reports them in its
``ready`` message (``toolscript.sandbox.walls``); the docker backend adds
what its container configuration provides. :class:`IsolationReport` is that
report on the host: :meth:`Runtime.isolation` returns it, ``toolscript
doctor`` prints it, and :func:`check_required` turns a missing wall named in
``require_isolation`` into :class:`~toolscript.errors.IsolationUnavailable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolscript.sandbox.walls.report import WALL_NAMES, WALL_SUMMARIES

from toolscript.errors import ConfigurationError, IsolationUnavailable

__all__ = [
    "WALL_NAMES",
    "IsolationReport",
    "WallStatus",
    "check_required",
    "container_walls",
    "inprocess_report",
    "report_from_walls",
    "required_walls",
]


@dataclass(frozen=True)
class WallStatus:
    """One wall: active or missing, and the detail (how it holds, or why it is missing)."""

    name: str
    active: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """``{"active": ..., "detail": ...}``."""
        return {"active": self.active, "detail": self.detail}


@dataclass(frozen=True)
class IsolationReport:
    """The walls of one backend's sandboxes, in :data:`WALL_NAMES` order."""

    backend: str
    walls: Mapping[str, WallStatus]

    def __getitem__(self, name: str) -> WallStatus:
        return self.walls[name]

    def active(self, name: str) -> bool:
        """True if wall ``name`` holds."""
        wall = self.walls.get(name)
        return wall is not None and wall.active

    def missing(self) -> list[WallStatus]:
        """The walls that do not hold."""
        return [wall for wall in self.walls.values() if not wall.active]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"backend": ..., "walls": {name: {"active", "detail"}}}``."""
        return {"backend": self.backend,
                "walls": {name: wall.to_dict() for name, wall in self.walls.items()}}

    def format(self) -> str:
        """A table for people: one line per wall, then its detail."""
        lines = [f"backend: {self.backend}"]
        width = max(len(name) for name in self.walls) if self.walls else 0
        for wall in self.walls.values():
            mark = "active " if wall.active else "MISSING"
            lines.append(f"  {wall.name:<{width}}  {mark}  {wall.detail}")
        missing = self.missing()
        lines.append(f"{len(self.walls) - len(missing)} of {len(self.walls)} walls active"
                     + (f"; missing: {', '.join(w.name for w in missing)}" if missing else ""))
        return "\n".join(lines) + "\n"


def report_from_walls(backend: str, walls: Mapping[str, Any] | None) -> IsolationReport:
    """The report from a sandbox's ``ready`` message (absent walls count as missing)."""
    walls = walls if isinstance(walls, Mapping) else {}
    out = {}
    for name in WALL_NAMES:
        entry = walls.get(name)
        if isinstance(entry, Mapping):
            out[name] = WallStatus(name, entry.get("active") is True, str(entry.get("detail", "")))
        else:
            out[name] = WallStatus(name, False, "not reported by the sandbox (an older sandbox "
                                   "image? rebuild it with `toolscript image build`)")
    return IsolationReport(backend, out)


def inprocess_report() -> IsolationReport:
    """The inprocess backend: scripts run in the host process, behind the interpreter only."""
    reason = ("the inprocess backend runs scripts inside the host process: only the restricted "
              "interpreter stands between a script and the host")
    return IsolationReport("inprocess", {n: WallStatus(n, False, reason) for n in WALL_NAMES})


def unreported(backend: str) -> IsolationReport:
    """A backend that does not say what walls it has: every wall counts as missing."""
    reason = f"the {backend!r} backend does not report its isolation"
    return IsolationReport(backend, {n: WallStatus(n, False, reason) for n in WALL_NAMES})


def container_walls(config: Any) -> dict[str, str]:
    """What a docker sandbox's container configuration provides, per wall.

    ``config`` is a :class:`~toolscript.runtime.backends.docker.backend.ContainerConfig`.
    """
    walls = {
        "user": "the container runs as uid 10001",
        "no_new_privs": "container option no-new-privileges",
        "capabilities": "container drops every capability (cap_drop ALL)",
        "seccomp": "Docker's default seccomp profile",
        "process_limit": f"container pids_limit {config.pids_limit}",
        "process_group": "the container: removed with every process in it on close",
        "host_environ": "the host's processes are outside the container's pid namespace",
    }
    if config.runtime == "runsc":
        walls["seccomp"] = "gVisor (runsc) serves system calls in user space"
    if not config.network:
        walls["network"] = "container network_mode none"
    if not getattr(config, "zygote", False):  # isolation="process": sessions share the container
        walls["task_budget"] = (f"a container per session: its own pids cgroup (pids_limit "
                                f"{config.pids_limit})")
        walls["private_view"] = ("a container per session: its own mount and pid namespaces "
                                 "(the image's files, no process but its own)")
        walls["signals"] = ("a container per session: its own pid namespace, where no other "
                            "session or host process is there to signal")
    return walls


def with_container(report: IsolationReport, provided: Mapping[str, str]) -> IsolationReport:
    """``report`` (from inside the container) plus what the container provides."""
    out = {}
    for name, wall in report.walls.items():
        extra = provided.get(name)
        if extra is None:
            out[name] = wall
        elif wall.active:
            out[name] = WallStatus(name, True, f"{wall.detail}; and {extra}")
        else:
            out[name] = WallStatus(name, True, f"{extra} (inside: {wall.detail})")
    return IsolationReport(report.backend, out)


def required_walls(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """Validate ``require_isolation``: wall names, or ``"all"``.

    Raises:
        ConfigurationError: not a list of strings, or an unknown wall name.
    """
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    names = list(values)
    if not all(isinstance(v, str) for v in names):
        raise ConfigurationError(f"require_isolation must be a list of wall names, got {names!r}")
    if "all" in names:
        return WALL_NAMES
    unknown = sorted(set(names) - set(WALL_NAMES))
    if unknown:
        raise ConfigurationError(
            f"require_isolation: unknown wall(s) {unknown}; allowed: all, {', '.join(WALL_NAMES)}"
        )
    return tuple(n for n in WALL_NAMES if n in names)


def check_required(report: IsolationReport, required: Iterable[str]) -> None:
    """Raise :class:`IsolationUnavailable` if a wall in ``required`` is missing."""
    absent = [report.walls[name] for name in required
              if name in report.walls and not report.walls[name].active]
    if absent:
        reasons = "; ".join(f"{w.name}: {w.detail}" for w in absent)
        raise IsolationUnavailable(
            f"the {report.backend} backend cannot provide the required wall(s) "
            f"{', '.join(w.name for w in absent)} ({reasons}); run `toolscript doctor` for the "
            "full report, or remove them from require_isolation to run with fewer walls",
            missing=[w.name for w in absent],
        )


def describe(name: str) -> str:
    """The one-line summary of wall ``name``."""
    return WALL_SUMMARIES[name]
