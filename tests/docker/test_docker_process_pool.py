"""``isolation="process"``: the warm pool of forked, walled sandboxes and their end.

A session takes a sandbox that the pool forked and walled in a warm container
before it asked; it is that session's alone, and when the session closes the
sandbox is killed without the caller waiting for it to exit. These tests
check the life around that: each pooled sandbox serves one session only, a
closed session's sandbox ends and leaves nothing open on the host, idle
sandboxes die with their container and with the runtime, and a pool refill
held back for a session's first script goes ahead once it answers. Real
engine, real image; every wait is for an event (a pidfd, an exit status),
never for an amount of time.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import pytest
from dockerhelpers import container_running, process_backend
from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.backends.docker.backend import DockerBackend
from toolscript.runtime.backends.docker.process import ContainerProcessHandle

from toolscript import Limits, Runtime


def _backend(client: Any, image: str, **options: Any) -> DockerBackend:
    backend: DockerBackend = process_backend(client, image, **options)
    return backend


@pytest.fixture
def pooled(process_runtime: Runtime) -> Runtime:
    """A production runtime on ``isolation="process"`` with a warm pool of two."""
    return process_runtime


def _pool(runtime: Runtime) -> Any:
    pool = runtime.backend.warm(SandboxSpec(limits=runtime.limits))  # type: ignore[union-attr]
    assert pool is not None and pool.wait_ready(120), pool
    return pool


def _handle(session: Any) -> ContainerProcessHandle:
    handle = session.sandbox
    assert isinstance(handle, ContainerProcessHandle), handle
    return handle


def _host_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def test_a_pooled_sandbox_serves_one_session_only(pooled: Runtime) -> None:
    pool = _pool(pooled)
    seen: set[int] = set()
    for _ in range(6):
        pool.wait_ready(120)
        with pooled.session() as session:
            assert session.run("x = 41\nx + 1").value == 42
            handle = _handle(session)
            pid = handle.process.pid
            assert pid not in seen  # never a sandbox an earlier session used
            seen.add(pid)
        assert not handle.is_alive()
        assert handle.process.wait(30) == -signal.SIGKILL  # as the fork server reported it
    assert pool.stats.hits >= 6


def test_a_session_gets_a_sandbox_walled_before_it_asked(pooled: Runtime) -> None:
    pool = _pool(pooled)
    idle = pool.idle_handles()  # forked, walled and ready before any session exists
    assert idle and all(h.ready_info.get("walls") for h in idle)
    with pooled.session() as session:
        assert session.run("1").value == 1
        handle = _handle(session)
        assert handle in idle
        report = pooled.backend.handle_isolation(handle)  # type: ignore[union-attr]
        assert report.missing() == [], report.format()  # see test_docker_process_isolation


def test_closing_sessions_leaves_nothing_open_on_the_host(docker_client: Any,
                                                         image: str) -> None:
    backend = _backend(docker_client, image, pool_size=0)
    with Runtime(backend=backend) as runtime:
        assert runtime.run("1").value == 1  # the container, its fork server and socket
        before = _host_fds()
        handles = []
        for _ in range(8):
            session = runtime.session()
            assert session.run("2").value == 2
            handles.append(_handle(session))
            session.close()
        for handle in handles:
            assert handle.process.wait(30) == -signal.SIGKILL
            assert handle.process.pidfd == -1  # released once the status arrived
        assert _host_fds() <= before  # (the first run's pidfd may have closed meanwhile)
        assert [c.sessions for c in backend.containers()] == [0]
    backend.shutdown()


def test_close_does_not_wait_and_kill_after_close_is_harmless(pooled: Runtime) -> None:
    session = pooled.session()
    assert session.run("1").value == 1
    handle = _handle(session)
    session.close()
    handle.kill()  # idempotent after close
    handle.close()
    assert handle.process.wait(30) == -signal.SIGKILL
    assert handle.death_reason() == "killed"
    assert pooled.run("3").value == 3


def test_a_sandbox_that_refuses_to_die_politely_still_ends(docker_client: Any,
                                                          image: str) -> None:
    # A script that ignores SIGTERM and loops: close sends SIGKILL, which it cannot catch.
    backend = _backend(docker_client, image, pool_size=0, test_hooks=True)
    with Runtime(backend=backend) as runtime:
        session = runtime.session()
        assert session.run("1").value == 1
        handle = _handle(session)
        handle.send({"type": "test_exec", "code": "import signal\n"
                     "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass"})
        session.close()
        assert handle.process.wait(30) == -signal.SIGKILL
    backend.shutdown()


def test_idle_pooled_sandboxes_die_with_the_runtime(docker_client: Any, image: str) -> None:
    backend = _backend(docker_client, image, pool_size=2)
    runtime = Runtime(backend=backend)
    pool = _pool(runtime)
    idle = pool.idle_handles()
    ids = {c.id for c in backend.containers()}
    assert idle and ids
    runtime.close()
    for handle in idle:
        handle.process.wait(30)
        assert not handle.is_alive()
    for container_id in ids:
        assert not container_running(docker_client, container_id)
    assert backend.containers() == []


def test_idle_pooled_sandboxes_die_with_their_fork_server(docker_client: Any,
                                                         image: str) -> None:
    backend = _backend(docker_client, image, pool_size=2)
    with Runtime(backend=backend) as runtime:
        pool = _pool(runtime)
        idle = pool.idle_handles()
        (container,) = backend.containers()
        os.kill(container.zygote_pid, signal.SIGKILL)  # the container's init follows it
        for handle in idle:
            handle.process.wait(30)
            assert not handle.is_alive()
        assert runtime.run("6 * 7").value == 42  # dead ones are skipped, a new container serves
        assert pool.stats.discarded_dead >= 1
        assert container not in backend.containers()
    backend.shutdown()


def test_a_held_refill_goes_ahead_once_the_first_script_answers(pooled: Runtime) -> None:
    backend = pooled.backend
    assert isinstance(backend, DockerBackend) and backend.process_isolation is not None
    isolation = backend.process_isolation
    _pool(pooled)
    handle = backend.start(SandboxSpec(limits=pooled.limits))  # handed out, as to a session
    assert isinstance(handle, ContainerProcessHandle)
    released = threading.Event()

    def refill() -> None:
        isolation.wait_quiet(lambda: True, cap_s=600.0)
        released.set()

    waiter = threading.Thread(target=refill, daemon=True)
    waiter.start()
    assert not released.wait(0.2)  # held: the session has not run its first script
    handle.send({"type": "run", "id": 1, "code": "1"})
    assert handle.recv(30)["type"] == "result"
    assert released.wait(60)  # the answer let it go (not the ten-minute cap)
    handle.close()


def test_a_refill_is_not_held_when_the_pool_is_empty_or_the_session_ends(
        pooled: Runtime) -> None:
    backend = pooled.backend
    assert isinstance(backend, DockerBackend) and backend.process_isolation is not None
    isolation = backend.process_isolation
    _pool(pooled)
    handle = backend.start(SandboxSpec(limits=Limits()))
    assert isinstance(handle, ContainerProcessHandle)
    isolation.wait_quiet(lambda: False, cap_s=600.0)  # nothing spare: no hold at all
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (isolation.wait_quiet(lambda: True, cap_s=600.0), done.set()),
        daemon=True)
    waiter.start()
    handle.close()  # ended before any script: nothing to wait for any more
    assert done.wait(60)
