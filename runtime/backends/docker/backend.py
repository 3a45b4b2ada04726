"""The docker backend: every sandbox in its own hardened, throw-away container.

The container runs the sandbox image's entrypoint (``python -s -P -m
toolscript.sandbox``) and the host speaks the wire protocol over the
container's attached stdin/stdout, demultiplexed from Docker's stream headers.
Nothing is mounted. Hardening, all on by default::

    network_mode="none"   read_only=True       tmpfs /tmp (16 MiB, noexec, nosuid)
    cap_drop=["ALL"]      no-new-privileges    default seccomp profile
    user 10001:10001      pids_limit           mem_limit == memswap_limit (no swap)
    nano_cpus             init (reaps zombies) logging driver "none" (no frames on disk)

``runtime="runsc"`` runs containers under gVisor where it is installed.

Lifecycle: every container carries the label ``org.toolscript.managed=1`` and
its owner's host, pid and process start time; it is removed when its handle is
closed or killed, when the handle is garbage-collected, and at interpreter
exit. A host killed before it could do that (``SIGKILL``, a crash) leaves
nothing running and, normally, nothing at all: each container ends itself
when its host's channel closes (the socket transport's lifeline, see
:mod:`.socket_channel`; the fork server's end of file; attached stdin is
closed when the host's attach ends, ``StdinOnce``), and the process's
undertaker (:mod:`.undertaker`) removes them. As the last net, every new
:class:`DockerBackend` removes the containers whose owner on this host is gone
(:func:`remove_orphans`), and :func:`gc` removes stale ones on demand
(``toolscript gc``). A container is never reused: a warm
pool (:class:`~toolscript.runtime.backends.pool.WarmPool`) hands out fresh
ones that have already said ``ready``. That is ``isolation="container"``;
with ``isolation="process"`` (:mod:`.process`) containers run the
sandbox's fork server and are shared: each session is a walled process forked
inside one.

The engine is whatever the Docker SDK reaches from the environment:
``DOCKER_HOST=unix:///path``, ``tcp://host:2376`` (with ``DOCKER_TLS_VERIFY=1``
and ``DOCKER_CERT_PATH``) or ``ssh://user@host`` (needs ``paramiko``). With a
remote engine the sandbox image must be built there (``toolscript image build``
with the same ``DOCKER_HOST``). If no engine answers,
:class:`~toolscript.errors.BackendUnavailable` says how to fix it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import select
import signal
import socket
import struct
import threading
import time
import uuid
import weakref
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolscript.sandbox.protocol import (
    PROTOCOL_VERSION,
    FrameDecoder,
    FrameError,
    WireBounds,
    encode_frame,
)
from toolscript.sandbox.spinwait import SpinWait
from toolscript.sandbox.zygote import ZYGOTE_FLAG

from toolscript.errors import ConfigurationError, ImageError, ProtocolError, SandboxStartError

from ..base import Backend, SandboxDied, SandboxHandle, SandboxSpec
from ..hashseed import choose_hash_seed, seed_environment
from ..pool import WarmPool
from ..subprocess import DEFAULT_SPIN_US, check_spin_us, spin_options
from . import undertaker
from .image import DEFAULT_IMAGE, check_image, docker_client
from .process import (
    ContainerProcessHandle,
    ProcessIsolation,
    ZygoteContainer,
    container_running,
    session_walls,
)
from .socket_channel import (
    BOOT_COMMAND,
    NO_SOCKET_EXIT,
    STDIO_COMMAND,
    ZYGOTE_BOOT_COMMAND,
    SocketChannel,
    SocketUnavailable,
)

if TYPE_CHECKING:
    import docker

    from ...isolation import IsolationReport

POOL_WAIT_S = 10.0
"""Longest wait for a pool start already under way before starting a container cold."""

__all__ = [
    "MANAGED_LABEL",
    "ContainerConfig",
    "DockerBackend",
    "DockerSandbox",
    "flush_removals",
    "gc",
    "remove_orphans",
    "settle",
]

log = logging.getLogger(__name__)

MANAGED_LABEL = "org.toolscript.managed"
OWNER_HOST_LABEL = "org.toolscript.owner-host"
OWNER_PID_LABEL = "org.toolscript.owner-pid"
OWNER_START_LABEL = "org.toolscript.owner-start"
"""The owner's start time (``/proc/<pid>/stat``): a reused pid is not the owner."""
SANDBOX_UID = 10001

_STDOUT, _STDERR = 1, 2
_HEADER = struct.Struct(">BxxxI")
_STDERR_KEEP = 16 * 1024
_RECV_SIZE = 64 * 1024


@dataclass(frozen=True)
class ContainerConfig:
    """The container-level settings of a sandbox; a warm pool holds one config.

    ``memory_bytes`` is both the memory and the memory+swap limit (no swap).
    """

    image: str = DEFAULT_IMAGE
    memory_bytes: int = 512 * 1024 * 1024
    nano_cpus: int = 1_000_000_000
    pids_limit: int = 64
    tmpfs_size: str = "16m"
    network: bool = False
    runtime: str | None = None
    transport: str = "socket"
    test_hooks: bool = False
    zygote: bool = False
    """The container runs the fork server (``isolation="process"``), not one sandbox."""
    spin_us: int = DEFAULT_SPIN_US
    """How long each side of a call polls for the other's frame before it blocks (the
    backend's ``spin_us``)."""
    hash_seed: int | None = None
    """The string hash seed of the container's interpreters (``PYTHONHASHSEED``;
    None: random, CPython's own)."""

    def create_kwargs(self, name: str, channel: SocketChannel | None = None) -> dict[str, Any]:
        """Keyword arguments of ``APIClient.create_host_config`` / ``create_container``.

        With a socket ``channel`` its folder is the one (read-only) mount and the
        entrypoint is the boot command; without, the protocol runs over stdio.
        """
        kwargs: dict[str, Any] = {
            "host_config": {
                "network_mode": "bridge" if self.network else "none",
                "read_only": True,
                "tmpfs": {"/tmp": f"rw,size={self.tmpfs_size},noexec,nosuid,nodev,mode=1777"},
                "cap_drop": ["ALL"],
                "security_opt": ["no-new-privileges"],
                "pids_limit": self.pids_limit,
                "mem_limit": self.memory_bytes,
                "memswap_limit": self.memory_bytes,
                "nano_cpus": self.nano_cpus,
                "init": True,
                "ipc_mode": "none" if not self.network else "private",
                "log_config": {"Type": "none", "Config": {}},
                "runtime": self.runtime,
                "auto_remove": False,
            },
            "container": {
                "name": name,
                "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
                "environment": ({} if self.hash_seed is None
                                else seed_environment(self.hash_seed)),
                "entrypoint": STDIO_COMMAND,
                "stdin_open": True,
                "tty": False,
                "network_disabled": not self.network,
                "hostname": "sandbox",
                "labels": {MANAGED_LABEL: "1", **owner_labels()},
            },
        }
        if channel is not None:
            # stderr only (stdout is unused): kept small, read when the sandbox dies
            kwargs["host_config"]["log_config"] = {
                "Type": "local",
                "Config": {"max-size": "256k", "max-file": "1", "compress": "false"},
            }
            kwargs["host_config"]["mounts"] = [channel.mount()]
            kwargs["container"]["stdin_open"] = False
            kwargs["container"]["entrypoint"] = ZYGOTE_BOOT_COMMAND if self.zygote else BOOT_COMMAND
            kwargs["container"]["command"] = []
        command: list[str] = [ZYGOTE_FLAG] if self.zygote else []  # arguments of the entrypoint
        command += spin_options(self.spin_us)
        if self.test_hooks:
            from toolscript.sandbox.walls.config import TEST_HOOKS_FLAG

            command.append(TEST_HOOKS_FLAG)
        if command:
            kwargs["container"]["command"] = command
        return kwargs


def owner_labels() -> dict[str, str]:
    """The labels that name this process as a container's owner."""
    pid = os.getpid()
    labels = {OWNER_HOST_LABEL: socket.gethostname(), OWNER_PID_LABEL: str(pid)}
    stat = _process_stat(pid)
    if stat is not None:
        labels[OWNER_START_LABEL] = stat[1]
    return labels


def _process_stat(pid: int) -> tuple[str, str] | None:
    """State and start time (clock ticks since boot) of process ``pid``, from
    ``/proc``; ``None`` if it does not exist or there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # Fields 3 and 22; the command name (field 2) may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2:].split()
    return (fields[0].decode(), fields[19].decode()) if len(fields) > 19 else None


def owner_gone(labels: dict[str, str], host: str | None = None) -> bool:
    """Whether the labels name an owner process on this host that no longer runs.

    Containers of other hosts sharing the engine, and labels that name no pid,
    are never judged gone. A killed owner that is not reaped yet (a zombie) is
    gone, and so is a pid that runs again as another process (its start time
    differs from the label's).
    """
    if labels.get(OWNER_HOST_LABEL) != (host or socket.gethostname()):
        return False
    pid = labels.get(OWNER_PID_LABEL, "")
    if not pid.isdigit():
        return False
    if not _pid_alive(int(pid)):
        return True
    stat = _process_stat(int(pid))
    if stat is None:  # no /proc: the pid runs, assume it is the owner
        return False
    state, start = stat
    return state == "Z" or start != labels.get(OWNER_START_LABEL, start)


# ------------------------------------------------------------ cleanup registry


class _Registry:
    """Every container this process created and has not removed yet.

    Removal (``docker rm -f``, tens of ms) runs on a reaper thread so that
    closing a session does not wait for it; :meth:`flush` waits, and at
    interpreter exit everything left is removed synchronously.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._live: dict[str, docker.APIClient] = {}
        self._queue: deque[str] = deque()
        self._busy = 0
        self._reaper: threading.Thread | None = None
        self._exiting = False

    def add(self, container_id: str, api: docker.APIClient) -> None:
        with self._lock:
            if not self._exiting:
                self._live[container_id] = api
                return
        _force_remove(api, container_id)  # created while the interpreter exits

    def remove(self, container_id: str) -> None:
        """Force-remove the container now (idempotent; errors are logged, not raised)."""
        with self._lock:
            api = self._live.pop(container_id, None)
        if api is not None:
            _force_remove(api, container_id)

    def remove_soon(self, container_id: str) -> None:
        """Force-remove the container on the reaper thread."""
        with self._lock:
            if container_id not in self._live:
                return
            if self._exiting:
                api = self._live.pop(container_id)
            else:
                self._queue.append(container_id)
                if self._reaper is None or not self._reaper.is_alive():
                    self._reaper = threading.Thread(
                        target=self._reap, name="toolscript-docker-reaper", daemon=True
                    )
                    self._reaper.start()
                self._lock.notify_all()
                return
        _force_remove(api, container_id)

    def _reap(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._lock.wait()
                container_id = self._queue.popleft()
                self._busy += 1
            try:
                self.remove(container_id)
            finally:
                with self._lock:
                    self._busy -= 1
                    self._lock.notify_all()

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until every removal handed to the reaper is done."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._queue or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(remaining)
        return True

    def remove_all(self, exiting: bool = False) -> None:
        with self._lock:
            self._exiting = self._exiting or exiting
            items = list(self._live.items())
            self._live.clear()
            self._queue.clear()
        for container_id, api in items:
            _force_remove(api, container_id)

    def __len__(self) -> int:
        return len(self._live)


def flush_removals(timeout: float = 60.0) -> bool:
    """Wait until the containers of closed sandboxes are removed (True if all are)."""
    return _REGISTRY.flush(timeout)


def settle(timeout: float = 120.0) -> bool:
    """Wait until no docker backend of this process has background work under way:
    every warm pool full and every removal done (True if so within ``timeout``).

    For measurements: a container started or removed for one backend's pool
    loads the engine and the CPUs while another backend's session is timed.
    """
    deadline = time.monotonic() + timeout
    for backend in list(_BACKENDS):
        with backend._lock:
            pools = list(backend._pools.values())
        for pool in pools:
            if not pool.wait_ready(max(deadline - time.monotonic(), 0.0)):
                return False
    return _REGISTRY.flush(max(deadline - time.monotonic(), 0.0))


def _force_remove(api: docker.APIClient, container_id: str) -> None:
    try:
        api.remove_container(container_id, force=True, v=True)
    except Exception as exc:
        if getattr(getattr(exc, "response", None), "status_code", None) != 404:
            log.warning("could not remove sandbox container %s: %s", container_id[:12], exc)


_REGISTRY = _Registry()
_BACKENDS: weakref.WeakSet[DockerBackend] = weakref.WeakSet()


@atexit.register
def _remove_everything_at_exit() -> None:
    for backend in list(_BACKENDS):
        backend.shutdown()  # stops the pool threads first: no container starts after this
    _REGISTRY.remove_all(exiting=True)
    undertaker.dismiss()  # everything is removed: it need not ask the engine


# --------------------------------------------------------------------- handle


class DockerSandbox(SandboxHandle):
    """One started sandbox container, spoken to over its attached stdio.

    Not shared between sessions. ``recv`` raises ``TimeoutError`` when no
    message arrives in time and ``SandboxDied`` when the container's output
    ends; :meth:`death_reason` then tells ``"memory_limit"`` (kernel OOM kill),
    ``"cpu_limit"``, ``"killed"``, ``"closed"`` (by us), ``"exited"`` or
    ``"sandbox_crashed"``.
    """

    def __init__(self, api: docker.APIClient, config: ContainerConfig, start_timeout: float = 60.0):
        self.config = config
        self._api = api
        self._decoder = FrameDecoder()
        self._messages: deque[dict[str, Any]] = deque()
        self._raw = bytearray()
        self._buf = bytearray(_RECV_SIZE)  # reused: no large allocation per recv
        self._view = memoryview(self._buf)
        self._stderr = bytearray()
        self._send_lock = threading.Lock()
        self._dead = False
        self._reason: str | None = None
        self._exit_code: int | None = None
        self.name = f"toolscript-{uuid.uuid4().hex[:12]}"
        self.transport = config.transport
        self._demux = config.transport != "socket"  # attached stdio carries stream headers
        channel = SocketChannel(SANDBOX_UID) if config.transport == "socket" else None
        kwargs = config.create_kwargs(self.name, channel)
        t0 = time.perf_counter()
        try:
            host_config = api.create_host_config(**kwargs["host_config"])
            created = api.create_container(
                config.image, host_config=host_config, **kwargs["container"]
            )
        except Exception as exc:
            if channel is not None:
                channel.close()
            raise SandboxStartError(
                f"creating a sandbox container from {config.image!r} failed: {exc}"
            ) from exc
        self.id: str = created["Id"]
        _REGISTRY.add(self.id, api)
        self._finalizer = weakref.finalize(self, _REGISTRY.remove_soon, self.id)
        try:
            if channel is None:
                # Keep the SDK's object alive too: dropping it would close the socket.
                self._attach = api.attach_socket(
                    self.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
                )
                self._sock = _raw_socket(self._attach)
                api.start(self.id)
            else:
                api.start(self.id)
                self._sock = channel.accept(self.id, start_timeout,
                                            functools.partial(container_running, self._api,
                                                              self.id))
            self._spin = SpinWait(self._sock.fileno(), config.spin_us / 1e6)
            self.ready_info: dict[str, Any] = self.recv(start_timeout)
        except SocketUnavailable as exc:
            self._collect_exit()
            code = self._exit_code
            self.kill()
            if code == NO_SOCKET_EXIT:
                raise
            raise SandboxStartError(self._start_failure(exc)) from exc
        except Exception as exc:
            self._collect_exit()
            message = self._start_failure(exc)
            self.kill()
            raise SandboxStartError(message) from exc
        if self.ready_info.get("type") != "ready":
            self.kill()
            raise ProtocolError(f"sandbox's first message is not 'ready': {self.ready_info!r:.200}")
        if self.ready_info.get("protocol") != PROTOCOL_VERSION:
            self.kill()
            raise ImageError(
                f"image {config.image!r} speaks protocol {self.ready_info.get('protocol')}, "
                f"this host {PROTOCOL_VERSION}: rebuild it with `toolscript image build`"
            )
        self.start_seconds = time.perf_counter() - t0

    # ---------------------------------------------------------- protocol
    def set_wire_bounds(self, bounds: WireBounds) -> None:
        """Bound the frames decoded from now on (see :class:`SandboxHandle`)."""
        self._decoder.bounds = bounds

    def send(self, message: dict[str, Any]) -> None:
        """Send one protocol message (raises ``SandboxDied`` if the container is gone)."""
        data = encode_frame(message)
        with self._send_lock:
            if self._dead:
                raise SandboxDied(self._reason, self._died_message())
            try:
                self._sock.sendall(data)
            except OSError as exc:
                self._on_eof()
                raise SandboxDied(self._reason, self._died_message()) from exc

    def recv(self, timeout: float | None) -> dict[str, Any]:
        """Return the next message; ``TimeoutError`` after ``timeout`` seconds."""
        if self._messages:
            return self._messages.popleft()
        if self._dead:
            raise SandboxDied(self._reason, self._died_message())
        deadline = None if timeout is None else time.monotonic() + timeout
        sock = self._sock
        if sock.gettimeout() is not None:  # blocking: the wait is the select below
            sock.settimeout(None)
        # The next call of a chain comes before a wake-up would land (spinwait.py): then
        # one recv, no select, no timeout change on the socket per frame.
        ready = self._spin.wait()
        while not self._messages:
            if not ready:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no message from the sandbox container in time")
                try:
                    readable, _, _ = select.select([sock], [], [], remaining)
                except (OSError, ValueError):
                    readable = [sock]  # closed under us: the recv says so
                if not readable:
                    continue
            ready = False
            try:
                n = sock.recv_into(self._buf)
            except OSError:
                n = 0
            if not n:
                self._on_eof()
                raise SandboxDied(self._reason, self._died_message())
            self._feed(self._view[:n])
        return self._messages.popleft()

    def _feed(self, data: bytes | memoryview) -> None:
        if not self._demux:
            try:
                self._messages.extend(self._decoder.feed(bytes(data)))
            except FrameError as exc:
                self.kill()
                raise ProtocolError(f"sandbox container sent a bad frame: {exc}") from exc
            return
        raw = self._raw
        raw += data
        pos, end = 0, len(raw)
        while end - pos >= 8:
            kind, size = _HEADER.unpack_from(raw, pos)
            if end - pos - 8 < size:
                break
            payload = bytes(raw[pos + 8 : pos + 8 + size])
            pos += 8 + size
            if kind == _STDOUT:
                try:
                    self._messages.extend(self._decoder.feed(payload))
                except FrameError as exc:
                    self.kill()
                    raise ProtocolError(f"sandbox container sent a bad frame: {exc}") from exc
            else:
                self._stderr += payload
                if len(self._stderr) > _STDERR_KEEP:
                    del self._stderr[: len(self._stderr) - _STDERR_KEEP]
        del raw[:pos]

    # --------------------------------------------------------- lifecycle
    def is_alive(self) -> bool:
        """Cheap liveness check: has the container's output stream ended?"""
        if self._dead:
            return False
        try:
            readable, _, _ = select.select([self._sock], [], [], 0)
            if readable:
                self._sock.settimeout(0)
                n = self._sock.recv_into(self._buf)
                if not n:
                    self._on_eof()
                    return False
                self._feed(self._view[:n])
        except (OSError, ProtocolError):
            self._on_eof()
            return False
        return True

    def interrupt(self) -> None:
        """Kill the container's process through the engine (thread-safe: the socket
        stays open for its reader, which sees the end of the stream and calls
        :meth:`kill`, removing the container)."""
        if not self._dead:
            with contextlib.suppress(Exception):  # gone already, or the engine is away
                self._api.kill(self.id)

    def kill(self) -> None:
        """Stop and remove the container now (``docker rm -f``); idempotent."""
        was_alive = not self._dead
        if was_alive:
            self._dead = True
            self._reason = "killed"
        self._close_socket()
        if was_alive and self._finalizer.detach() is not None:
            _REGISTRY.remove(self.id)
        else:
            self._finalizer()

    def close(self) -> None:
        """Ask the sandbox to shut down; the container is removed in the background.

        Idempotent. :func:`flush_removals` (or the backend's ``shutdown``) waits
        for the removal.
        """
        if not self._dead:
            with contextlib.suppress(Exception):
                self.send({"type": "shutdown"})
            self._dead = True
            self._reason = self._reason or "closed"
        self._close_socket()
        self._finalizer()

    def death_reason(self) -> str | None:
        """``None`` while alive; else ``memory_limit``, ``killed``, ``sandbox_crashed``..."""
        return self._reason if self._dead else None

    @property
    def exit_code(self) -> int | None:
        """The container's exit code once it died on its own (else ``None``)."""
        return self._exit_code

    @property
    def stderr(self) -> str:
        """The last 16 KiB the sandbox wrote to stderr (diagnostics only)."""
        return self._stderr.decode("utf-8", "replace")

    def attrs(self) -> dict[str, Any]:
        """``docker inspect`` of the container (for tests and diagnostics)."""
        result: dict[str, Any] = self._api.inspect_container(self.id)
        return result

    # ------------------------------------------------------------ details
    def _collect_exit(self) -> None:
        """After the container stopped: exit code, death reason, stderr tail."""
        try:
            state = self._api.inspect_container(self.id)["State"]
            if state.get("Running"):
                self._api.wait(self.id, timeout=10)
                state = self._api.inspect_container(self.id)["State"]
            if state.get("Status") not in ("exited", "dead"):
                return  # never started: no exit to collect
            self._exit_code = code = int(state.get("ExitCode", -1))
            if not self._demux:
                logs = self._api.logs(self.id, stdout=False, stderr=True, tail=100)
                self._stderr += logs[-_STDERR_KEEP:]
            self._reason = _reason_of_exit(code, bool(state.get("OOMKilled")), self.stderr)
        except Exception as exc:
            log.debug("inspecting dead sandbox %s failed: %s", self.name, exc)

    def _start_failure(self, exc: BaseException) -> str:
        detail = self.stderr.strip()[-2000:]
        code = f" (exit code {self._exit_code})" if self._exit_code is not None else ""
        return f"sandbox container from {self.config.image!r} did not start{code}: {exc}" + (
            f"\n{detail}" if detail else ""
        )

    def _on_eof(self) -> None:
        if self._dead:
            return
        self._dead = True
        self._close_socket()
        self._reason = "sandbox_crashed"
        self._collect_exit()
        self._finalizer()

    def _died_message(self) -> str:
        reason = self._reason or "died"
        text = f"sandbox container {self.name} is gone ({reason}"
        if self._exit_code is not None:
            text += f", exit code {self._exit_code}"
        text += ")"
        tail = self.stderr.strip()[-1000:]
        return text + (f"; stderr: {tail}" if tail else "")

    def _close_socket(self) -> None:
        with contextlib.suppress(Exception):
            self._sock.close()
        with contextlib.suppress(Exception):
            self._attach.close()

    def __repr__(self) -> str:
        state = "alive" if not self._dead else f"dead: {self._reason}"
        return f"<DockerSandbox {self.name} {state}>"


def _reason_of_exit(code: int, oom_killed: bool, stderr: str) -> str:
    """Name why a container ended on its own, as the subprocess backend does."""
    if oom_killed or "MemoryError" in stderr[-2000:]:
        return "memory_limit"
    if code == 128 + signal.SIGXCPU:
        return "cpu_limit"
    if code == 128 + signal.SIGKILL:
        return "killed"
    if code == 0:
        return "exited"
    return "sandbox_crashed"


def _raw_socket(sock: Any) -> socket.socket:
    """The plain socket under the SDK's attach object (SocketIO for unix/tcp)."""
    inner = getattr(sock, "_sock", sock)
    if isinstance(inner, socket.socket):
        return inner
    raise SandboxStartError(
        f"cannot speak to the container over {type(sock).__name__}: "
        "the docker backend needs a unix or tcp DOCKER_HOST"
    )


# -------------------------------------------------------------------- backend


class DockerBackend(Backend):
    """Run each sandbox in a fresh hardened container, from a warm pool if any.

    ``pool_size`` idle containers (default 2) are kept started for the default
    limits, so a new session normally waits a few milliseconds, not a
    container start. A spec with other container limits starts its own
    container. ``runtime="runsc"`` selects gVisor; ``network=True`` gives the
    container a network (off by default; only for tools that run inside).

    ``isolation`` says what a session gets to itself: ``"container"`` (the
    default) a container of its own, as above; ``"process"`` a process forked
    inside a warm container that up to ``sessions_per_container`` sessions
    share (:mod:`.process`): a new session costs a fork, not a
    container start, and each is walled from the others by its own seccomp
    filter, Landlock domain, rlimits and uid (so its task budget is its own),
    while the container's cgroup limits
    (memory and pids scaled by ``sessions_per_container``, CPU shared) bound
    them together. ``"process"`` passes descriptors over the socket transport,
    so it needs an engine on this machine: with ``transport="attach"`` (or
    ``"auto"`` resolving to it for a remote ``DOCKER_HOST``) it is refused with
    :class:`~toolscript.errors.ConfigurationError`.

    Creating a backend first removes the containers that owners on this host
    left behind when they were killed (:func:`remove_orphans`; names in
    :attr:`orphans_removed`). ``test_hooks``: tests only, containers start with
    the sandbox's test flag (unrestricted test code, see
    ``toolscript.sandbox.walls.testing``); never in production. ``spin_us``: how
    long each side of a tool call polls for the other's next frame before it
    blocks, as for :class:`~toolscript.runtime.backends.subprocess.SubprocessBackend`
    (default 50; 0 turns it off). ``hash_seed``: the string hash seed of the
    containers' interpreters, as for the subprocess backend (default: random, one
    per backend; a resumed durable run gets a container with its original seed).
    """

    name = "docker"

    def __init__(
        self,
        image: str = DEFAULT_IMAGE,
        *,
        pool_size: int = 2,
        docker_client: docker.DockerClient | None = None,
        runtime: str | None = None,
        network: bool = False,
        pids_limit: int = 64,
        cpus: float = 1.0,
        tmpfs_size: str = "16m",
        transport: str = "auto",
        start_timeout: float = 60.0,
        check: bool = True,
        test_hooks: bool = False,
        isolation: str = "container",
        sessions_per_container: int = 8,
        spin_us: int = DEFAULT_SPIN_US,
        hash_seed: int | None = None,
    ) -> None:
        if transport not in ("auto", "socket", "attach"):
            raise ConfigurationError(
                f"transport must be 'auto', 'socket' or 'attach', not {transport!r}"
            )
        _check_isolation(isolation, _pick_transport(transport), sessions_per_container)
        self._client = docker_client if docker_client is not None else _connect()
        self._api: docker.APIClient = self._client.api
        if check:
            check_image(image, client=self._client)
        self.orphans_removed: list[str] = remove_orphans(self._api)
        """Containers left behind by owners on this host that are gone, removed at start."""
        # before this process creates any container
        undertaker.ensure_started({MANAGED_LABEL: "1", **owner_labels()})
        self.image = image
        self.hash_seed: int = choose_hash_seed(hash_seed)
        self.pool_size = pool_size
        self.start_timeout = start_timeout
        self._base = ContainerConfig(
            image=image,
            nano_cpus=int(cpus * 1e9),
            pids_limit=pids_limit,
            tmpfs_size=tmpfs_size,
            network=network,
            runtime=runtime,
            transport=_pick_transport(transport),
            test_hooks=test_hooks,
            spin_us=check_spin_us(spin_us),
            hash_seed=self.hash_seed,
        )
        self._auto_transport = transport == "auto"
        self.isolation_mode = isolation
        """``"container"`` or ``"process"`` (see the class docstring)."""
        self._process: ProcessIsolation | None = None
        if isolation == "process":
            self._process = ProcessIsolation(self._api, sessions_per_container, start_timeout,
                                             _REGISTRY)
        self._pools: dict[ContainerConfig, WarmPool[Any]] = {}
        self._lock = threading.Lock()
        self._closed = False
        _BACKENDS.add(self)

    def config_for(self, spec: SandboxSpec | None) -> ContainerConfig:
        """The container settings ``spec`` asks for (its memory, CPU and pids limits,
        and its string hash seed if it names one)."""
        if spec is None:
            return self._base
        limits = spec.limits
        return replace(
            self._base,
            memory_bytes=int(limits.memory_mb) * 1024 * 1024,
            nano_cpus=int(float(limits.cpus) * 1e9),
            pids_limit=int(limits.max_pids),
            hash_seed=self.hash_seed if spec.hash_seed is None else spec.hash_seed,
        )

    def start(self, spec: SandboxSpec | None = None) -> DockerSandbox | ContainerProcessHandle:
        """A started sandbox that said ``ready``: from the warm pool if one waits (a
        spec with another ``hash_seed`` than the backend's gets a container of its own)."""
        cfg = self.config_for(spec)
        pool = self._pool(cfg) if cfg.hash_seed == self.hash_seed else None
        timeout = spec.startup_timeout_s if spec is not None else self.start_timeout
        if pool is not None:
            handle = pool.acquire(wait_s=min(timeout, POOL_WAIT_S))
            if handle is not None:
                if isinstance(handle, ContainerProcessHandle):
                    if spec is not None:
                        handle.spec = spec
                    assert self._process is not None
                    self._process.handed_out(handle)
                handle.hash_seed = cfg.hash_seed
                return handle  # type: ignore[no-any-return]
        started = self._start_cold(cfg, max(timeout, 1.0), spec)
        started.hash_seed = cfg.hash_seed
        return started

    def handle_isolation(self, handle: SandboxHandle) -> IsolationReport:
        """The walls the sandbox put up inside its container, plus the container's own."""
        from ...isolation import container_walls, with_container

        config = getattr(handle, "config", None)
        if not isinstance(config, ContainerConfig):
            config = self._base
        provided = container_walls(config)
        if isinstance(handle, ContainerProcessHandle):
            # Shared with the container's other sessions: these are the process's own.
            provided["process_group"] = ("its own session and process group, killed by the host "
                                         "(the container is removed with the pool)")
            provided.update(session_walls(handle.container))
        return with_container(super().handle_isolation(handle), provided)

    @property
    def transport(self) -> str:
        """``"socket"`` (a Unix socket per container) or ``"attach"`` (attached stdio)."""
        return self._base.transport

    def _start_cold(self, cfg: ContainerConfig, timeout: float,
                    spec: SandboxSpec | None = None) -> DockerSandbox | ContainerProcessHandle:
        if self._process is not None:
            return self._start_process(cfg, timeout, spec)
        if cfg.transport == "socket" and self._base.transport == "attach":
            cfg = replace(cfg, transport="attach")  # fell back earlier
        try:
            return DockerSandbox(self._api, cfg, timeout)
        except SocketUnavailable:
            if not self._auto_transport:
                raise SandboxStartError(
                    "the sandbox container cannot reach the protocol socket: the engine "
                    "does not share this machine's filesystem; use transport='attach'"
                ) from None
            log.info("docker engine cannot mount the protocol socket; using attached stdio")
            self._base = replace(self._base, transport="attach")
            return DockerSandbox(self._api, replace(cfg, transport="attach"), timeout)

    def _start_process(self, cfg: ContainerConfig, timeout: float,
                       spec: SandboxSpec | None) -> ContainerProcessHandle:
        assert self._process is not None
        if spec is None:
            from ...limits import Limits

            spec = SandboxSpec(limits=Limits(), startup_timeout_s=timeout)
        try:
            return self._process.start(cfg, spec)
        except SocketUnavailable:
            raise SandboxStartError(
                "isolation='process' passes descriptors over the protocol socket, but the "
                "container cannot reach it (the engine does not share this machine's "
                "filesystem); use isolation='container'") from None

    @property
    def process_isolation(self) -> ProcessIsolation | None:
        """The warm containers and fork servers of ``isolation="process"`` (None in
        container-per-session mode), for diagnostics and tuning."""
        return self._process

    def containers(self) -> list[ZygoteContainer]:
        """The containers of ``isolation="process"`` running now (tests and diagnostics)."""
        return self._process.containers() if self._process is not None else []

    def warm(self, spec: SandboxSpec | None = None) -> WarmPool[Any] | None:
        """Start filling the pool for ``spec``'s container settings now."""
        return self._pool(self.config_for(spec))

    def _pool(self, cfg: ContainerConfig) -> WarmPool[Any] | None:
        if self.pool_size <= 0:
            return None
        with self._lock:
            if self._closed:
                return None
            pool = self._pools.get(cfg)
            if pool is None:
                made: list[WarmPool[Any]] = []
                pool = WarmPool(
                    lambda: self._refill(cfg, made),
                    self.pool_size,
                    name=f"docker-{len(self._pools)}",
                    # Forked sessions are cheap to keep idle: size from demand, as subprocess.
                    max_size=max(self.pool_size, 4) if self._process is not None else None,
                )
                made.append(pool)
                self._pools[cfg] = pool
            return pool

    def _refill(self, cfg: ContainerConfig,
                made: list[WarmPool[Any]]) -> DockerSandbox | ContainerProcessHandle:
        """One sandbox for the pool of ``cfg`` (``made`` holds that pool once built)."""
        if self._process is not None and made:
            pool = made[0]
            self._process.wait_quiet(lambda: pool.idle > 0)
        return self._start_cold(cfg, self.start_timeout)

    def shutdown(self) -> None:
        """Stop the warm pools and remove their idle containers (idempotent)."""
        with self._lock:
            self._closed = True
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.shutdown()
        if self._process is not None:
            self._process.shutdown()
        _REGISTRY.flush()

    def __enter__(self) -> DockerBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


ISOLATION_MODES = ("container", "process")
"""What a docker session gets to itself: a container, or a process in a shared container."""


def _check_isolation(isolation: str, transport: str, sessions_per_container: int) -> None:
    """Refuse an unknown mode, and ``"process"`` where descriptors cannot be passed."""
    if isolation not in ISOLATION_MODES:
        raise ConfigurationError(
            f"isolation must be 'container' or 'process', not {isolation!r}")
    if isolation != "process":
        return
    if transport != "socket":
        raise ConfigurationError(
            "isolation='process' needs the socket transport (the host passes each session's "
            "pipes into the container over it), so an engine on this machine; with "
            "transport='attach' or a remote DOCKER_HOST use isolation='container'")
    if not isinstance(sessions_per_container, int) or sessions_per_container < 1:
        raise ConfigurationError(
            f"sessions_per_container must be a positive integer, not {sessions_per_container!r}")


def _pick_transport(requested: str) -> str:
    """``socket`` needs an engine on this machine; ``auto`` assumes one for unix sockets."""
    if requested != "auto":
        return requested
    host = os.environ.get("DOCKER_HOST", "")
    return "socket" if not host or host.startswith("unix://") else "attach"


def _connect() -> docker.DockerClient:
    return docker_client()


# ------------------------------------------------------------------------- gc


def gc(all: bool = False, *, client: docker.DockerClient | None = None) -> list[str]:
    """Remove stale sandbox containers (by label); return their names.

    Stale: exited, or created by a process on this host that no longer runs.
    ``all=True`` removes every container labelled as ours, including those of
    running programs and of other hosts sharing the engine.
    """
    client = client or docker_client()
    api = client.api
    me = socket.gethostname()
    removed: list[str] = []
    for info in api.containers(all=True, filters={"label": f"{MANAGED_LABEL}=1"}):
        labels = info.get("Labels") or {}
        stale = all or info.get("State") != "running"
        if not stale and labels.get(OWNER_HOST_LABEL) == me:
            stale = not labels.get(OWNER_PID_LABEL, "").isdigit() or owner_gone(labels, me)
        if stale:
            _force_remove(api, info["Id"])
            removed.append((info.get("Names") or [info["Id"][:12]])[0].lstrip("/"))
    return removed


def remove_orphans(api: docker.APIClient) -> list[str]:
    """Remove the containers whose owner process on this host is gone; return their names.

    Whatever their state (created, running, exited): a host process killed
    while its warm pool was creating and starting containers never removed
    them. Containers of running processes and of other hosts sharing the
    engine are left alone. Engine errors are logged, never raised.
    """
    me = socket.gethostname()
    try:
        infos = api.containers(all=True, filters={"label": f"{MANAGED_LABEL}=1"})
    except Exception as exc:
        log.warning("could not list sandbox containers to remove orphans: %s", exc)
        return []
    removed: list[str] = []
    for info in infos:
        if owner_gone(info.get("Labels") or {}, me):
            _force_remove(api, info["Id"])
            removed.append((info.get("Names") or [info["Id"][:12]])[0].lstrip("/"))
    if removed:
        log.info("removed %d sandbox container(s) of processes that are gone: %s",
                 len(removed), ", ".join(removed))
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
