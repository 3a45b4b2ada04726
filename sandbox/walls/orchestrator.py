"""Put up every OS wall in the calling process, then check each from inside.

:func:`apply` works in any fresh, single-threaded process: the sandbox
server at start, or a child just forked from a sandbox that has not been
walled yet. Phases, in this order because each needs what the next takes
away:

1. **prepare** while everything is still allowed: load libseccomp and
   build the filter, enter the private view (a mount namespace with only
   the read paths and a private /proc; as root, unless the fork server did
   it for all its children), open the Landlock rule paths (the uid about to
   be dropped may not reach them), enter a new network namespace (needs
   root or a user namespace);
2. **drop**: no_new_privs, the capability bounding and ambient sets, root
   to ``uid``/``gid``, the remaining capability sets, dumpable, RLIMIT_NPROC
   (the task budget: the session's own when its uid is);
3. **lock**: Landlock, then seccomp (last: it refuses what the steps above
   use);
4. **verify** from inside: ``/proc/self/status``, a ``socket()`` and a read
   of ``/`` that must fail, the parent's ``environ`` that must be unreadable.

A wall that cannot be had is reported missing with the reason; nothing here
stops the sandbox. The host decides (``require_isolation``).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
from typing import Any

from .config import WallConfig
from .report import WALL_NAMES, active, missing

Report = dict[str, dict[str, Any]]

_SYSTEM_ROOTS = frozenset({"/", "/usr", "/usr/local", "/opt"})
_STATUS_PIN: list[int] = []


class WallError(Exception):
    """Internal: the walls cannot be applied in this process state (e.g. threads already run)."""


def apply(config: WallConfig | None = None) -> Report:
    """Apply the walls ``config`` asks for; return the report of every wall."""
    config = config or WallConfig()
    if not sys.platform.startswith("linux"):
        reason = f"not Linux ({sys.platform}): only the interpreter and rlimits protect the host"
        return {name: missing(reason) for name in WALL_NAMES}
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise WallError(f"the walls must go up before any thread starts ({threads} running)")
    report: Report = {}
    seccomp_filter = _prepare_seccomp(config, report)
    # After libseccomp is loaded (the view has no /usr/lib), before the Landlock rules
    # (on the inodes of the view's /proc).
    _private_view(config, report)
    status_path = f"/proc/{os.getpid()}/status"
    for fd in _STATUS_PIN:  # a forked child's copy of its parent's (another pid)
        os.close(fd)
    # Kept open: Landlock's rule is on this file's inode, which the open file keeps alive.
    _STATUS_PIN[:] = [os.open(status_path, os.O_RDONLY | os.O_CLOEXEC)]
    ruleset = _prepare_landlock(config, status_path, report)
    _isolate_network(config, report)
    was_root = os.geteuid() == 0
    _drop_privileges(config, was_root, report)
    _limit_processes(config, was_root, report)
    _verify_view(report)
    if ruleset is not None:
        try:
            ruleset.restrict_self()
        except OSError as exc:
            report["landlock"] = missing(f"landlock_restrict_self failed: {exc}")
    if seccomp_filter is not None:
        from .seccomp import SeccompUnavailable

        try:
            seccomp_filter.load()
        except SeccompUnavailable as exc:
            report["seccomp"] = missing(str(exc))
    _verify(config, ruleset is not None, was_root, report)
    return {name: report.get(name, missing("not checked")) for name in WALL_NAMES}


def read_paths(config: WallConfig) -> list[str]:
    """What the sandbox may read under Landlock: the Python installation and packages."""
    paths: list[str] = []
    candidates = [*sys.path, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    for name in ("toolscript", "toolscript.sandbox", "RestrictedPython"):
        module = sys.modules.get(name)
        candidates.extend(getattr(module, "__path__", []) or [])
    candidates.extend(["/dev/null", "/dev/urandom", *config.read_paths])
    for path in candidates:
        if path and os.path.isabs(path) and path not in _SYSTEM_ROOTS and path not in paths:
            paths.append(path)
    return paths


# -- prepare ---------------------------------------------------------------------------


_VIEW_REFUSED: list[str] = []


def prepare_view(config: WallConfig) -> None:
    """Enter the private view of ``config`` now, for this process and every process
    forked from it (a fork server calls this once; :func:`apply` reports it)."""
    if config.private_view and os.geteuid() == 0:
        from .view import enter

        try:
            enter(read_paths(config))
        except OSError as exc:
            _VIEW_REFUSED[:] = [str(exc)]
    if os.geteuid() == 0:
        _release_view_capabilities(config)


def _release_view_capabilities(config: WallConfig) -> None:
    """What only the view needed leaves the fork server before any child is forked:
    ``CAP_SYS_CHROOT`` always, ``CAP_SYS_ADMIN`` when this is the docker fork server of a
    container without a network (``config.network_from_container``: its children have
    nothing left to unshare). Any other root fork server keeps ``CAP_SYS_ADMIN`` for its
    children's network namespaces, even on a host with only loopback (children in one
    namespace would share it); each child drops every capability before any script."""
    from . import privileges

    caps = [privileges.CAP_SYS_CHROOT]
    if config.network_from_container:
        caps.append(privileges.CAP_SYS_ADMIN)
    privileges.drop_capabilities(tuple(caps))


def _private_view(config: WallConfig, report: Report) -> None:
    from .view import enter, entered

    how = entered()
    if how is None and not config.private_view:
        report["private_view"] = missing("disabled by configuration")
        return
    if how is None and _VIEW_REFUSED:
        report["private_view"] = missing(f"refused: {_VIEW_REFUSED[0]}")
        return
    if how is None and os.geteuid() != 0:
        report["private_view"] = missing(
            "shares its parent's mount and pid namespaces: stat/readlink/access see every "
            "path there and /proc every process (a private view needs root)")
        return
    if how is None:
        try:
            how = enter(read_paths(config))
        except OSError as exc:
            report["private_view"] = missing(f"refused: {exc}")
            return
    report["private_view"] = active(how)


def _verify_view(report: Report) -> None:
    """After the uid drop, before Landlock (which refuses listing /proc): what /proc shows."""
    if not report.get("private_view", {}).get("active"):
        return
    from .view import visible_pids

    others = [pid for pid in visible_pids() if pid != os.getpid()]
    if others:
        report["private_view"] = missing(f"{len(others)} other processes are visible in /proc")
        return
    try:
        os.lstat("/etc")  # a path of every host, and never one of the read paths it names
    except OSError:
        entry = report["private_view"]
        report["private_view"] = active(f"{entry['detail']}; verified: /proc shows only "
                                        "itself, /etc does not exist")
        return
    report["private_view"] = missing("applied, but /etc exists in its view")


def _prepare_landlock(config: WallConfig, status_path: str, report: Report) -> Any:
    if not config.landlock:
        report["landlock"] = missing("disabled by configuration")
        return None
    from .landlock import LandlockUnavailable, Ruleset

    try:
        ruleset = Ruleset()
    except (LandlockUnavailable, OSError) as exc:
        report["landlock"] = missing(str(exc))
        return None
    try:
        for path in [*read_paths(config), status_path]:
            ruleset.allow_read(path)
    except OSError as exc:
        ruleset.close()
        report["landlock"] = missing(f"cannot build the Landlock ruleset: {exc}")
        return None
    report["landlock"] = active(
        f"ABI {ruleset.abi}: reads only the Python installation ({len(ruleset.paths) - 1} "
        "paths); no writes, no TCP"
        + ("; no signals or abstract sockets beyond itself" if ruleset.scoped else "")
    )
    return ruleset


_PREBUILT: dict[bool, Any] = {}


def prebuild(config: WallConfig) -> None:
    """Build the seccomp filter of ``config`` now, for every :func:`apply` in a process
    forked from this one (a fork server calls this once; each child loads its copy)."""
    if config.seccomp:
        from .seccomp import SeccompUnavailable
        from .syscalls import build_filter

        with contextlib.suppress(SeccompUnavailable):  # apply() tries again and says why
            _PREBUILT[config.allow_fork] = build_filter(allow_fork=config.allow_fork)


def _prepare_seccomp(config: WallConfig, report: Report) -> Any:
    if not config.seccomp:
        report["seccomp"] = missing("disabled by configuration")
        return None
    from .seccomp import SeccompUnavailable, library
    from .syscalls import ALLOWED, build_filter

    try:
        flt = _PREBUILT.pop(config.allow_fork, None) or build_filter(allow_fork=config.allow_fork)
    except SeccompUnavailable as exc:
        report["seccomp"] = missing(str(exc))
        return None
    known = len(ALLOWED) - len(flt.unknown)
    fork = "; TEST MODE: fork allowed" if config.allow_fork else ""
    report["seccomp"] = active(
        f"allow-list of {known} calls, threads-only clone, read-only open (libseccomp "
        f"{library().version}); the rest fail with EPERM{fork}"
    )
    return flt


def _isolate_network(config: WallConfig, report: Report) -> None:
    if not config.network:
        report["network"] = missing("disabled by configuration")
        return
    from .namespaces import interfaces, unshare_network

    how = ""
    refused = ""
    try:
        how = unshare_network()
    except OSError as exc:
        refused = str(exc)
    try:
        visible = interfaces()
    except OSError as exc:
        report["network"] = missing(f"cannot list network interfaces: {exc}")
        return
    if visible:
        report["network"] = missing(
            f"shares the host's network ({', '.join(visible[:5])}): {refused or 'not isolated'}"
            " (needs root or unprivileged user namespaces)"
        )
    elif how:
        report["network"] = active(f"{how}: no interface but loopback")
    else:
        report["network"] = active("no interface but loopback (isolated before the sandbox "
                                   "started)")


# -- drop ------------------------------------------------------------------------------


def _drop_privileges(config: WallConfig, was_root: bool, report: Report) -> None:
    from . import privileges

    try:
        privileges.set_no_new_privs()
    except OSError as exc:
        report["no_new_privs"] = missing(str(exc))
    try:
        privileges.drop_bounding_set()
        privileges.clear_ambient()
    except OSError as exc:
        report["capabilities"] = missing(str(exc))
    if was_root and config.user:
        try:
            privileges.drop_user(config.uid, config.gid)
        except OSError as exc:
            report["user"] = missing(f"could not drop root: {exc}")
    elif was_root:
        report["user"] = missing("runs as uid 0: dropping root is disabled by configuration")
    try:
        privileges.clear_capabilities()
        privileges.set_undumpable()
    except OSError as exc:
        report.setdefault("capabilities", missing(str(exc)))


def _limit_processes(config: WallConfig, was_root: bool, report: Report) -> None:
    import resource

    from .namespaces import own_user_namespace

    uid = os.getuid()
    if config.max_processes is None:
        report["process_limit"] = missing("disabled by configuration")
    elif not was_root and own_user_namespace():
        _limit_in_user_namespace(config.max_processes, uid, report)
        return
    elif not (was_root and config.user and uid == config.uid):
        report["process_limit"] = missing(
            f"not set: the sandbox runs as the host's user (uid {uid}), whose other processes "
            "it would count too; seccomp refuses new processes"
        )
    else:
        limit = config.max_processes
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
            shared = "" if config.own_uid() else " (shared by all sandboxes of that uid)"
            report["process_limit"] = active(f"RLIMIT_NPROC {limit} for uid {uid}{shared}")
        except (OSError, ValueError) as exc:
            report["process_limit"] = missing(f"setrlimit(RLIMIT_NPROC) failed: {exc}")
    report["task_budget"] = _task_budget(config, uid, report["process_limit"])


def _limit_in_user_namespace(limit: int, uid: int, report: Report) -> None:
    """Unprivileged, in a user namespace it made itself: the kernel counts ``RLIMIT_NPROC``
    (and pending signals) per user namespace and uid, so its budget counts only its own
    tasks; every namespace's tasks of the uid together stay under the limit the process
    had when it made the namespace."""
    import resource

    outer = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    outer_text = "unlimited" if outer == resource.RLIM_INFINITY else str(outer)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    except (OSError, ValueError) as exc:
        report["process_limit"] = missing(f"setrlimit(RLIMIT_NPROC) failed: {exc}")
        report["task_budget"] = missing(f"no task budget of its own: {exc}")
        return
    report["process_limit"] = active(f"RLIMIT_NPROC {limit} in its own user namespace "
                                     f"(uid {uid})")
    report["task_budget"] = active(
        f"counted in a user namespace of its own: RLIMIT_NPROC {limit} counts only its own "
        f"tasks, and its pending signals only its own; all tasks of uid {uid} together stay "
        f"under the host user's RLIMIT_NPROC ({outer_text})")


def _task_budget(config: WallConfig, uid: int, limit: dict[str, Any]) -> dict[str, Any]:
    """Whether the session's task budget (and the other per-uid counters) is its own."""
    started_unprivileged = uid != 0 and uid != config.uid
    if not limit["active"] and not (started_unprivileged and config.max_processes):
        return missing(f"no task budget of its own: {limit['detail']}")
    if not limit["active"]:
        return missing(f"shares uid {uid} with every other process of that uid here (other "
                       "sessions of a shared container, or the host user's own): its tasks "
                       "and pending signals count against one budget; a budget of its own "
                       "needs a root host (a uid per sandbox) or a user namespace of its own")
    if not config.own_uid():
        return missing(f"uid {uid} is shared by every sandbox (walls.uid_range is off): one "
                       "sandbox can use up the RLIMIT_NPROC, signal-queue and pipe-buffer "
                       "quotas of all")
    start, stop = config.uid_range or (0, 0)
    return active(f"uid {uid} is this sandbox's alone (from [{start}, {stop})): RLIMIT_NPROC "
                  f"{config.max_processes} counts only its own tasks, and the pending-signal "
                  "quota is its own")


# -- verify ----------------------------------------------------------------------------


def _status() -> dict[str, str]:
    fd = _STATUS_PIN[0]
    text = os.pread(fd, 65536, 0).decode("ascii", "replace")
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _verify(config: WallConfig, landlocked: bool, was_root: bool, report: Report) -> None:
    status = _status()
    uids = status.get("Uid", "").split()
    gid = status.get("Gid", "0").split()[0]
    if "user" not in report:
        if uids and all(u != "0" for u in uids):
            how = "dropped from root" if was_root else "started unprivileged"
            report["user"] = active(f"uid {uids[0]} gid {gid} ({how})")
        else:
            report["user"] = missing(f"runs as uid {uids[0] if uids else '?'}")
    if "no_new_privs" not in report:
        nnp = status.get("NoNewPrivs") == "1"
        report["no_new_privs"] = (active("verified: NoNewPrivs 1") if nnp
                                  else missing("NoNewPrivs is not 1"))
    _verify_capabilities(status, report)
    if report.get("seccomp", {}).get("active"):
        _verify_seccomp(status, report)
    if landlocked and report.get("landlock", {}).get("active"):
        _verify_refused("landlock", lambda: os.open("/", os.O_RDONLY | os.O_DIRECTORY),
                        "/ is unreadable", report)
    own_group = os.getpgrp() == os.getpid() and os.getsid(0) == os.getpid()
    report["process_group"] = (
        active(f"its own session and process group ({os.getpid()})") if own_group
        else missing("shares its parent's process group: the host cannot kill it as a group")
    )
    try:
        fd = os.open(f"/proc/{os.getppid()}/environ", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        report["host_environ"] = active(f"verified: /proc/<parent>/environ is unreadable "
                                        f"({errno.errorcode.get(exc.errno or 0, exc.errno)})")
    else:
        os.close(fd)
        report["host_environ"] = missing("/proc/<parent>/environ is readable")


def _verify_capabilities(status: dict[str, str], report: Report) -> None:
    sets = {name: int(status.get(name, "1"), 16)
            for name in ("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd")}
    held = [name for name in ("CapInh", "CapPrm", "CapEff", "CapAmb") if sets[name]]
    if held:
        report["capabilities"] = missing(f"still held: {', '.join(held)}")
    elif sets["CapBnd"] == 0:
        report["capabilities"] = active("verified: all five capability sets are empty")
    elif status.get("NoNewPrivs") == "1":
        report["capabilities"] = active(
            "verified: CapEff, CapPrm, CapInh, CapAmb all 0; the bounding set stays (only "
            "root may shrink it) but no_new_privs keeps it unusable"
        )
    else:
        report["capabilities"] = missing("the bounding set is not empty and no_new_privs is off")


def _verify_seccomp(status: dict[str, str], report: Report) -> None:
    if status.get("Seccomp") != "2":
        mode = status.get("Seccomp")
        report["seccomp"] = missing(f"loaded, but /proc/self/status says Seccomp {mode}")
        return
    from .libc import function

    socket_call = function("socket", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
    _verify_refused("seccomp", lambda: _socket_fd(socket_call), "socket() refused", report)


def _socket_fd(socket_call: Any) -> int:
    fd = int(socket_call(2, 1, 0))  # AF_INET, SOCK_STREAM
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return fd


def _verify_refused(wall: str, attempt: Any, what: str, report: Report) -> None:
    try:
        fd = attempt()
    except OSError:
        entry = report[wall]
        report[wall] = active(f"{entry['detail']}; verified: {what}")
        return
    os.close(fd)
    report[wall] = missing(f"applied, but the check failed: {what.split(' ')[0]} was allowed")
