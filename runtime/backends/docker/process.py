"""``isolation="process"`` for the docker backend: warm containers, a forked sandbox per session.

Starting a container costs hundreds of milliseconds; forking a prepared
process costs a few. So in this mode a container is not a session's but a
pool's: it runs the sandbox fork server (``toolscript.sandbox.zygote``) with
its protocol socket (a ``SOCK_SEQPACKET`` one, see :mod:`.socket_channel`) as
the control socket, and each session is a process forked inside it. The
session's protocol pipes, stderr file and lifeline (a pipe of its own, whose
write end stays on the host) are created on the host and passed in over that
socket (``SCM_RIGHTS``: one kernel, so descriptors cross the container
boundary); no two sessions share a descriptor. The zygote answers with a pidfd of
the child, which the host uses for liveness and signals. The child puts up
the same walls as any sandbox (seccomp allow-list, Landlock with signal and
abstract-socket scoping, no_new_privs, no capabilities, rlimits) before its
first script, inside a container that adds its own (no network, read-only
root, cgroup limits).

Each session has a uid of its own, and so a task budget of its own: the
fork server runs as root in its container with no capability but
:data:`FORK_SERVER_CAPS`, the host gives each container a block of
``2 * sessions_per_container`` uids that no other live sandbox of this machine
holds (:meth:`~..uids.UidAllocator.acquire_block`, as the fork server's
``walls.uid_range``), and the fork server gives each child one of them
(:mod:`toolscript.sandbox.sessionuids`); the child drops to it, with every
capability, before any script, under ``RLIMIT_NPROC`` of its share of the
container's ``pids_limit`` (the container's limit is the sum of its sessions'
budgets plus :data:`_ZYGOTE_PIDS` for the fork server and init).

A session does not wait for any of that: the backend's warm pool forks,
walls and starts sandboxes ahead of demand, so a new session takes one that
has already said ``ready`` (a pool hit makes no docker API call and no
request to the fork server). Each serves one session and is never reused.
Refilling the pool costs a fork and the walls of a new child, a few
milliseconds of CPU; a refill therefore waits, while the pool still holds a
spare sandbox, until the sessions just handed out have answered their first
script (at most :data:`REFILL_HOLD_S`), so it does not compete with them.
Closing a session sends ``SIGKILL`` to its sandbox's process group and does
not wait for the exit; the host's descriptors of it close at once, its pidfd
when the fork server reports the exit.

What the sessions of one container share: the container's cgroup limits
(memory, CPU), which are therefore sized for ``sessions_per_container``
sessions, and the fork server's private view (``private_view``: a mount
namespace whose root holds only the read paths, read-only, and a ``/proc``
with ``hidepid=invisible``; made once by the fork server with
:data:`VIEW_CAPS`, which it drops from every set, the bounding set included,
before it forks anything). What keeps them apart: each is its own process,
session and uid, so that ``/proc`` shows it no other session's process; its
view has no writable path, so no file of another session; its Landlock domain
lets it read only the Python installation and signal only itself, its seccomp
filter admits no ``kill``/``ptrace``/``process_vm_*`` of others, and its
rlimits bound its own memory and CPU.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import struct
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from toolscript.sandbox.walls.config import DEFAULT_UID_RANGE

from toolscript.errors import SandboxStartError

from ..base import SandboxSpec
from ..subprocess import ProcessHandle, wait_ready
from ..uids import UidBlock, allocator_for
from ..zygote import Zygote, ZygoteDied
from .socket_channel import NO_SOCKET_EXIT, SocketChannel, SocketUnavailable

if TYPE_CHECKING:
    import docker

ContainerConfig = Any
"""A :class:`~.backend.ContainerConfig` (named loosely: :mod:`.backend` imports this module)."""


def container_running(api: Any, container_id: str) -> bool:
    """Whether the engine reports the container running (False if it cannot say)."""
    try:
        return bool(api.inspect_container(container_id)["State"]["Running"])
    except Exception:
        return False


class Registry(Protocol):
    """The docker backend's record of the containers to remove (``_Registry`` there)."""

    def add(self, container_id: str, api: docker.APIClient) -> None:
        """Record a created container."""

    def remove_soon(self, container_id: str) -> None:
        """Remove it on the reaper thread."""

__all__ = [
    "FORK_SERVER_CAPS",
    "REFILL_HOLD_S",
    "VIEW_CAPS",
    "ContainerProcessHandle",
    "ProcessIsolation",
    "ZygoteContainer",
    "fork_server_kwargs",
    "session_walls",
]

log = logging.getLogger(__name__)

_LOGS_TAIL = 100
_UCRED = struct.Struct("3i")
_ZYGOTE_MEMORY = 128 * 1024 * 1024
_ZYGOTE_PIDS = 8
_MIN_TASK_BUDGET = 16  # the least walls.max_processes a sandbox accepts

FORK_SERVER_CAPS = ("SETUID", "SETGID", "SETPCAP")
"""The only capabilities of a fork server's container: to give each child its own uid
(``SETUID``/``SETGID``) and an empty bounding set (``SETPCAP``). A child drops all three
with its uid, before its walls go up."""

VIEW_CAPS = ("SYS_ADMIN", "SYS_CHROOT")
"""What a fork server's container also gets, for its private view alone (a mount
namespace, and ``chroot``, since Docker's seccomp profile refuses ``pivot_root``): the
fork server drops both from every capability set, the bounding set included, right after
making the view, before it forks a session (``walls.orchestrator.prepare_view``)."""

REFILL_HOLD_S = 0.02
"""Longest a pool refill waits for the sessions just handed out to answer their first run."""


class ZygoteContainer:
    """One started container running the fork server, and the sessions forked in it.

    Also the :class:`~.zygote.ZygoteProcess` of its :class:`~.zygote.Zygote`:
    ``poll`` is ``None`` while the container has not been removed, ``kill``
    removes it (and every session in it).
    """

    def __init__(self, api: docker.APIClient, config: ContainerConfig, max_sessions: int,
                 timeout: float, registry: Registry) -> None:
        self.config = config
        self.max_sessions = max_sessions
        self.sessions = 0
        """Sessions forked here and not ended yet (guarded by the owner's lock)."""
        self._api = api
        self._code: int | None = None
        self.name = f"toolscript-{uuid.uuid4().hex[:12]}"
        # Twice its sessions: a session just closed may still be exiting, its uid held.
        self.uids: UidBlock = allocator_for(DEFAULT_UID_RANGE).acquire_block(2 * max_sessions)
        """The uids of its sessions, one each (held until the container is removed)."""
        self.task_budget = max((config.pids_limit - _ZYGOTE_PIDS) // max_sessions,
                               _MIN_TASK_BUDGET)
        """``RLIMIT_NPROC`` of each session: its share of the container's pids limit."""
        channel = SocketChannel(0, kind=socket.SOCK_SEQPACKET)  # the fork server is root
        kwargs = fork_server_kwargs(config.create_kwargs(self.name, channel), self.uids,
                                    self.task_budget)
        try:
            host_config = api.create_host_config(**kwargs["host_config"])
            created = api.create_container(config.image, host_config=host_config,
                                           **kwargs["container"])
        except Exception as exc:
            channel.close()
            self.uids.release()
            raise SandboxStartError(
                f"creating a sandbox container from {config.image!r} failed: {exc}") from exc
        self.id: str = created["Id"]
        registry.add(self.id, api)
        self._finalizer = weakref.finalize(self, _remove, registry, self.id, self.uids)
        try:
            api.start(self.id)
            control = channel.accept(self.id, timeout,
                                     functools.partial(container_running, self._api, self.id))
            pid, _uid, _gid = _UCRED.unpack(
                control.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
            self.zygote_pid = pid
            """The fork server's pid as this host sees it (diagnostics and tests)."""
            self.zygote = Zygote(["docker", self.name], timeout, connected=(control, self))
        except SocketUnavailable:
            code = self._exit_code()
            self.kill()
            if code == NO_SOCKET_EXIT:
                raise
            raise SandboxStartError(
                f"the fork server container did not start: {self.stderr_tail()}") from None
        except BaseException as exc:
            tail = self.stderr_tail()
            self.kill()
            if isinstance(exc, SandboxStartError):
                raise
            raise SandboxStartError(f"the fork server container did not start: {exc}"
                                    + (f"\n{tail}" if tail else "")) from exc

    # ------------------------------------------------------- ZygoteProcess
    def poll(self) -> int | None:
        """``None`` until the container is removed (the zygote's death shows on its socket)."""
        return self._code

    def kill(self) -> None:
        """Remove the container, with every session forked in it (idempotent)."""
        if self._code is None:
            self._code = -9
        self._finalizer()  # removal on the reaper thread; the backend's shutdown waits for it

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the container to stop (its zygote exited); its exit code."""
        if self._code is None:
            try:
                result = self._api.wait(self.id, timeout=timeout)
                self._code = int(result.get("StatusCode", -1))
            except Exception:
                import subprocess

                raise subprocess.TimeoutExpired(self.name, timeout or 0.0) from None
        return self._code

    def stderr_tail(self) -> str:
        """The end of the container's stderr (the zygote's, and children's before set-up)."""
        try:
            logs: bytes = self._api.logs(self.id, stdout=False, stderr=True, tail=_LOGS_TAIL)
        except Exception:
            return ""
        return logs.decode("utf-8", "replace").strip()[-2000:]

    # ------------------------------------------------------------ sessions
    @property
    def alive(self) -> bool:
        """True while the container's fork server answers."""
        return self._code is None and self.zygote.alive

    def fork(self, spec: SandboxSpec) -> ContainerProcessHandle:
        """A new sandbox process in this container, after its ``ready``."""
        process, errfile, fds = self.zygote.spawn_session(spec.startup_timeout_s)
        handle = ContainerProcessHandle(process, spec, errfile, fds, self)
        wait_ready(handle, spec.startup_timeout_s)
        return handle

    def _exit_code(self) -> int | None:
        try:
            state = self._api.inspect_container(self.id)["State"]
            if state.get("Running"):
                self._api.wait(self.id, timeout=10)
                state = self._api.inspect_container(self.id)["State"]
            return int(state.get("ExitCode", -1))
        except Exception:
            return None

    def __repr__(self) -> str:
        return f"<ZygoteContainer {self.name} sessions={self.sessions}/{self.max_sessions}>"


class ContainerProcessHandle(ProcessHandle):
    """A session's sandbox: a process forked inside a :class:`ZygoteContainer`.

    Spoken to over host pipes like a subprocess sandbox; killing it kills its
    process group (by its pid as this host sees it, from the pidfd) and frees
    its place in the container.
    """

    def __init__(self, process: Any, spec: SandboxSpec, errfile: Any, fds: tuple[int, int],
                 container: ZygoteContainer) -> None:
        super().__init__(process, spec, errfile, fds=fds,
                         spin_s=container.config.spin_us / 1e6)
        self.container = container
        self.config = container.config
        self._released = False
        self._on_release: Any = None
        self._on_settled: Any = None
        """Called once when the session's first run has answered (or it ended)."""

    def recv(self, timeout: float | None) -> dict[str, Any]:
        """Receive one message (see :class:`ProcessHandle`); the first ``result``
        settles the session (see :meth:`ProcessIsolation.wait_quiet`)."""
        message = super().recv(timeout)
        if self._on_settled is not None and message.get("type") == "result":
            self._settle()
        return message

    def _settle(self) -> None:
        callback, self._on_settled = self._on_settled, None
        if callback is not None:
            callback()

    def kill(self) -> None:
        """Kill the sandbox process and its group and wait for it to end; its container
        stays for other sessions."""
        if not self._closed:
            super().kill()
        self._release()

    def close(self) -> None:
        """End the session's sandbox without waiting for it to exit (see
        :meth:`ProcessHandle.close`), and free its place in the container."""
        super().close()
        self._release()

    def _release(self) -> None:
        """Free its place in the container (once)."""
        self._settle()
        if not self._released:
            self._released = True
            if self._on_release is not None:
                self._on_release(self)

    def __repr__(self) -> str:
        return f"<ContainerProcessHandle pid={self.process.pid} in {self.container.name}>"


class ProcessIsolation:
    """The docker backend's sessions as forked processes in shared, warm containers.

    Containers are kept per container configuration; a session goes to the
    first live container with room (fewer than ``sessions_per_container``
    sessions), a new container is started when none has room, and a
    container left empty is removed while another one has room. ``shutdown``
    removes every container, and with it every session.
    """

    def __init__(self, api: docker.APIClient, sessions_per_container: int,
                 start_timeout: float, registry: Registry) -> None:
        self._api = api
        self._registry = registry
        self.sessions_per_container = sessions_per_container
        self.start_timeout = start_timeout
        self._containers: dict[ContainerConfig, list[ZygoteContainer]] = {}
        self._lock = threading.Lock()
        self._starting = threading.Lock()  # one container start at a time
        self._closed = False
        self._settling = 0
        self._quiet = threading.Condition()

    def handed_out(self, handle: ContainerProcessHandle) -> None:
        """A session took ``handle``: until its first run answers, forking another
        sandbox would compete with it for the CPUs (see :meth:`wait_quiet`)."""
        if handle._on_settled is not None:
            return
        with self._quiet:
            self._settling += 1
            self._quiet.notify_all()
        handle._on_settled = self._settled

    def _settled(self) -> None:
        with self._quiet:
            self._settling -= 1
            self._quiet.notify_all()

    def wait_quiet(self, spare: Callable[[], bool], cap_s: float = REFILL_HOLD_S) -> None:
        """Hold a pool refill while a session handed out is before its first answer and
        ``spare()`` (the pool still has a sandbox for the next caller), at most ``cap_s``.

        A fork and its walls take a few milliseconds of CPU; on a small machine a
        refill that starts the moment a session takes its sandbox slows that
        session's first script. Held this way, it runs once the script has answered,
        or at once when the pool has nothing left to hand out.
        """
        deadline = time.monotonic() + cap_s
        with self._quiet:
            while self._settling > 0 and not self._closed and spare():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._quiet.wait(remaining)

    def start(self, cfg: ContainerConfig, spec: SandboxSpec) -> ContainerProcessHandle:
        """A forked sandbox for ``spec`` in a container of ``cfg`` (started if none has room)."""
        cfg = shared_config(cfg, self.sessions_per_container)
        for attempt in range(2):
            container = self._place(cfg, spec.startup_timeout_s)
            try:
                handle = container.fork(spec)
            except ZygoteDied:
                self._release_slot(container, dead=True)
                if attempt:
                    raise SandboxStartError(
                        "the fork server container died twice in a row while starting a "
                        f"sandbox: {container.stderr_tail()}") from None
                continue
            except BaseException:
                self._release_slot(container)
                raise
            handle._on_release = lambda h: self._release_slot(h.container)
            return handle
        raise AssertionError("unreachable")  # pragma: no cover

    def containers(self) -> list[ZygoteContainer]:
        """The live containers (tests and diagnostics)."""
        with self._lock:
            return [c for group in self._containers.values() for c in group]

    def shutdown(self) -> None:
        """Remove every container and every session in them (idempotent)."""
        with self._lock:
            self._closed = True
            containers = [c for group in self._containers.values() for c in group]
            self._containers.clear()
        with self._quiet:
            self._quiet.notify_all()
        for container in containers:
            _retire(container)

    # ------------------------------------------------------------ details
    def _place(self, cfg: ContainerConfig, timeout: float) -> ZygoteContainer:
        """A live container with room for one more session, its place taken."""
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxStartError("the backend was shut down")
                group = self._containers.setdefault(cfg, [])
                for container in list(group):
                    if not container.alive:
                        group.remove(container)
                        _retire(container)
                    elif container.sessions < container.max_sessions:
                        container.sessions += 1
                        return container
            # Full (or none yet): start one, and only one at a time; others wait for it.
            with self._starting:
                with self._lock:
                    room = any(c.alive and c.sessions < c.max_sessions
                               for c in self._containers.get(cfg, []))
                if room:
                    continue
                container = ZygoteContainer(self._api, cfg, self.sessions_per_container,
                                            max(timeout, self.start_timeout),
                                            self._registry)
                with self._lock:
                    if self._closed:
                        _retire(container)
                        raise SandboxStartError("the backend was shut down")
                    self._containers.setdefault(cfg, []).append(container)

    def _release_slot(self, container: ZygoteContainer, dead: bool = False) -> None:
        retire = False
        with self._lock:
            container.sessions = max(container.sessions - 1, 0)
            group = self._containers.get(container.config, [])
            if container in group and (dead or not container.alive or (
                    container.sessions == 0
                    and any(c is not container and c.alive and c.sessions < c.max_sessions
                            for c in group))):
                group.remove(container)
                retire = True
        if retire:
            _retire(container)


def shared_config(cfg: ContainerConfig, sessions: int) -> ContainerConfig:
    """The settings of a container shared by ``sessions`` sessions of ``cfg``'s limits.

    Memory and pids are the per-session limits times ``sessions`` (plus room for the
    fork server and init; pids at least :data:`_MIN_TASK_BUDGET` a session, each
    session's ``RLIMIT_NPROC``); the CPU quota is the per-session one times ``sessions``, at
    most this machine's CPUs (the engine refuses more).
    """
    cpus = os.cpu_count() or 1
    return replace(
        cfg, zygote=True,
        memory_bytes=cfg.memory_bytes * sessions + _ZYGOTE_MEMORY,
        pids_limit=max(cfg.pids_limit, _MIN_TASK_BUDGET) * sessions + _ZYGOTE_PIDS,
        nano_cpus=min(cfg.nano_cpus * sessions, cpus * 1_000_000_000),
    )


def session_walls(container: ZygoteContainer) -> dict[str, str]:
    """What the container adds to the walls of a session forked in it (its report's
    ``provided`` part, see :func:`~toolscript.runtime.isolation.with_container`)."""
    return {
        "user": (f"a uid of its own from the container's block [{container.uids.start}, "
                 f"{container.uids.stop}), given by its fork server"),
        "capabilities": ("the container drops every capability but "
                         f"{', '.join(FORK_SERVER_CAPS)} (its fork server's), which each "
                         "session drops with its uid, and "
                         f"{', '.join(VIEW_CAPS)} (its private view's), which the fork "
                         "server drops before it forks a session"),
        "process_limit": (f"container pids_limit {container.config.pids_limit} = "
                          f"{container.max_sessions} sessions x {container.task_budget} "
                          f"+ {_ZYGOTE_PIDS}"),
    }


def fork_server_kwargs(kwargs: dict[str, Any], uids: UidBlock, budget: int) -> dict[str, Any]:
    """``kwargs`` of :meth:`~.backend.ContainerConfig.create_kwargs` for a fork server's
    container: root inside it with only :data:`FORK_SERVER_CAPS` and, for as long as it
    makes its private view, :data:`VIEW_CAPS` (every other setting as for any sandbox
    container), ``uids`` to give its sessions and ``budget`` as their ``RLIMIT_NPROC``."""
    kwargs["container"]["user"] = "0:0"
    kwargs["host_config"]["cap_add"] = [*FORK_SERVER_CAPS, *VIEW_CAPS]
    walls: dict[str, Any] = {"uid_range": [uids.start, uids.stop], "max_processes": budget}
    if kwargs["host_config"].get("network_mode") == "none":
        # The container's empty network namespace is every session's network wall: the
        # fork server gives up SYS_ADMIN with its view (else its children each unshare).
        walls["network_from_container"] = True
    command = list(kwargs["container"].get("command") or [])
    kwargs["container"]["command"] = [*command, "--walls", json.dumps(walls)]
    return kwargs


def _remove(registry: Registry, container_id: str, uids: UidBlock) -> None:
    """Remove the container (on the reaper thread) and give its uids back: its processes
    are being killed; a random block is picked next, so these are unlikely to be reused
    before they are gone."""
    registry.remove_soon(container_id)
    uids.release()


def _retire(container: ZygoteContainer) -> None:
    """Remove the container (every session in it dies) and close its fork server."""
    container.zygote.kill()
