"""The subprocess backend's fork server (zygote): lifecycle, clean clones, walls per child.

Real processes throughout: the zygote is killed with real signals, a fork is
made to fail with a real cgroup limit, and the end of a process is waited for
on its pidfd (an event, never a sleep).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.runtime.backends.zygote import ForkedProcess
from toolscript.runtime.limits import Limits

from toolscript import Runtime, SandboxStartError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

SPEC = SandboxSpec(limits=Limits())


def _gone(pid: int, timeout: float = 30.0) -> bool:
    """Wait (on a pidfd, not a sleep) until ``pid`` has exited; True if it has."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def _children(parent: int) -> list[int]:
    """The live child processes of ``parent``, from their ``/proc/<pid>/stat``."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        # After the ")" that ends the command name: state, then the parent's pid.
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            children.append(int(entry))
    return children


def _zygote_pid(backend: SubprocessBackend) -> int:
    assert backend.zygote is not None
    return int(backend.zygote.process.pid)


@contextlib.contextmanager
def _backend(**options: Any) -> Iterator[SubprocessBackend]:
    backend = SubprocessBackend(**{"pool_size": 0, **options})
    try:
        yield backend
    finally:
        backend.shutdown()


def test_sessions_are_forked_from_one_zygote_and_walled_each() -> None:
    with _backend() as backend:
        first = backend.start(SPEC)
        second = backend.start(SPEC)
        try:
            for handle in (first, second):
                assert isinstance(handle.process, ForkedProcess)  # type: ignore[attr-defined]
                walls = handle.ready_info["walls"]
                for wall in ("no_new_privs", "capabilities", "seccomp", "process_group"):
                    assert walls[wall]["active"], (wall, walls[wall])
            assert first.ready_info["pid"] != second.ready_info["pid"]
            assert first.ready_info["audit_hook"] is True
            zygote = _zygote_pid(backend)
            ppid = Path(f"/proc/{first.ready_info['pid']}/stat").read_text().rsplit(")", 1)[1]
            assert int(ppid.split()[1]) == zygote
        finally:
            first.kill()
            second.kill()


def test_the_zygote_itself_puts_up_no_walls_and_runs_no_script() -> None:
    with _backend() as backend:
        backend.start(SPEC).kill()
        status = Path(f"/proc/{_zygote_pid(backend)}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines())
        assert fields["Seccomp"].strip() == "0"
        assert fields["NoNewPrivs"].strip() == "0"


def test_clones_do_not_share_random_state() -> None:
    """The module generator the fork copied is re-seeded in every child."""
    from tests.security.walled import walled

    values = []
    for _ in range(2):
        with walled() as box:
            values.append(box.exec("import random\nresult = [random.random(), "
                                   "random.getrandbits(64)]", helpers=False))
    assert values[0] != values[1]
    with Runtime(backend="subprocess", backend_options={"pool_size": 0}) as runtime:
        seen = {runtime.session().run("import random\nrandom.random()").value
                for _ in range(3)}
    assert len(seen) == 3


def test_forked_children_hold_only_their_own_descriptors() -> None:
    from tests.security.walled import walled

    with walled() as box:
        fds = box.exec("""
            import os
            result = []
            for fd in range(1024):
                try:
                    os.fstat(fd)
                except OSError:
                    continue
                result.append(fd)
            """, helpers=False)
    # stdin (/dev/null), stdout and stderr (the session's file), the two protocol
    # pipes, the host's lifeline, the status file the walls pin: nothing of the zygote's.
    assert len(fds) <= 7, fds


def test_an_open_session_survives_the_zygotes_death_and_the_next_one_gets_a_new_zygote() -> None:
    with Runtime(backend="subprocess", backend_options={"pool_size": 0}) as runtime:
        session = runtime.session()
        assert session.run("1 + 1").value == 2
        backend = runtime.backend
        assert isinstance(backend, SubprocessBackend)
        old = _zygote_pid(backend)
        os.kill(old, signal.SIGKILL)
        assert _gone(old)
        assert session.run("2 + 2").value == 4  # its own pipes: no zygote needed
        with runtime.session() as fresh:
            assert fresh.run("3 + 3").value == 6
        assert _zygote_pid(backend) != old
        session.close()


def test_a_child_of_a_dead_zygote_still_reports_its_death() -> None:
    with _backend() as backend:
        handle = backend.start(SPEC)
        os.kill(_zygote_pid(backend), signal.SIGKILL)
        os.kill(handle.ready_info["pid"], signal.SIGKILL)
        with pytest.raises(Exception) as caught:
            handle.send({"type": "ping"})
            handle.recv(30.0)
        assert getattr(caught.value, "reason", None) == "sandbox_crashed"
        assert not handle.is_alive()
        handle.kill()


def test_death_reasons_arrive_through_the_zygote() -> None:
    with _backend() as backend:
        handle = backend.start(SPEC)
        handle.kill()
        assert handle.death_reason() == "killed"
        handle = backend.start(SPEC)
        os.kill(handle.ready_info["pid"], signal.SIGXCPU)
        with pytest.raises(Exception) as caught:
            handle.recv(30.0)
        assert getattr(caught.value, "reason", None) == "cpu_limit"
        handle.kill()


@contextlib.contextmanager
def _pids_cgroup(limit_to: int) -> Iterator[Path]:
    root = Path("/sys/fs/cgroup/pids")
    if os.geteuid() != 0 or not (root / "cgroup.procs").exists():
        pytest.skip("needs root and the cgroup v1 pids controller")
    group = root / f"toolscript-test-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot create a pids cgroup: {exc}")
    try:
        yield group
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(pid)
        with contextlib.suppress(OSError):
            group.rmdir()


def test_a_fork_that_fails_is_a_clear_start_error_and_the_zygote_lives_on() -> None:
    with _backend() as backend, _pids_cgroup(1) as group:
        backend.start(SPEC).kill()
        zygote = _zygote_pid(backend)
        (group / "cgroup.procs").write_text(str(zygote))
        (group / "pids.max").write_text("1")  # the zygote alone: no room for a child
        with pytest.raises(SandboxStartError, match="fork failed"):
            backend.start(SPEC)
        (group / "pids.max").write_text("max")
        handle = backend.start(SPEC)
        assert _zygote_pid(backend) == zygote
        handle.kill()


def test_closing_the_runtime_drains_the_pool_and_ends_the_zygote() -> None:
    runtime = Runtime(backend="subprocess", backend_options={"pool_size": 2})
    backend = runtime.backend
    assert isinstance(backend, SubprocessBackend)
    pool = backend.warm(SPEC)
    assert pool is not None and pool.wait_ready(60.0)
    zygote = _zygote_pid(backend)
    idle = _children(zygote)  # the pooled sandboxes: forked by the zygote, nobody holds them
    assert len(idle) >= 2, idle
    runtime.close()
    assert _gone(zygote)
    assert all(_gone(pid) for pid in idle)
    with pytest.raises(SandboxStartError):
        backend.start(SPEC)


ORPHANED_HOST = """
import sys
from toolscript import Runtime
runtime = Runtime(backend="subprocess", backend_options={"pool_size": 0})
session = runtime.session()
session.run("1")
print(session.sandbox.ready_info["pid"], runtime.backend.zygote.process.pid, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("zygote_first", [False, True], ids=["host-dies", "zygote-then-host"])
def test_forked_sandboxes_never_outlive_the_host(zygote_first: bool) -> None:
    host = subprocess.Popen([sys.executable, "-c", ORPHANED_HOST], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        sandbox, zygote = (int(x) for x in host.stdout.readline().split())
        if zygote_first:
            os.kill(zygote, signal.SIGKILL)
            assert _gone(zygote)
        host.kill()
        host.wait()
        assert _gone(sandbox)
        assert _gone(zygote)
    finally:
        host.kill()
        host.wait()


def test_the_direct_start_path_stays_available() -> None:
    with Runtime(backend="subprocess",
                 backend_options={"pool_size": 0, "zygote": False}) as runtime:
        with runtime.session() as session:
            assert session.run("6 * 7").value == 42
            assert isinstance(session.sandbox.process, subprocess.Popen)  # type: ignore
        backend = runtime.backend
        assert isinstance(backend, SubprocessBackend) and backend.zygote is None


def test_a_forked_sandbox_cannot_read_the_host_or_the_zygote() -> None:
    """Its parent is the zygote, not the host: both stay out of reach."""
    from tests.security.walled import walled

    with walled() as box:
        assert box.walls["host_environ"]["active"], box.walls["host_environ"]
        result = box.exec(f"""
            result = {{}}
            for name, pid in (("host", {os.getpid()}), ("zygote", os.getppid())):
                for what in ("environ", "mem", "cmdline"):
                    result[name + " " + what] = attempt(
                        lambda: open(f"/proc/{{pid}}/{{what}}", "rb").read(1))
                result[name + " fds"] = attempt(lambda: os.listdir(f"/proc/{{pid}}/fd"))
                result[name + " signal"] = attempt(lambda: os.kill(pid, 0))
            """)
    escaped = {name: outcome for name, outcome in result.items()
               if not outcome.startswith("refused")}
    assert not escaped, escaped


def test_close_does_not_wait_for_the_exit_and_gives_the_uid_back_once_it_is_gone() -> None:
    with _backend() as backend:
        handle = backend.start(SPEC)
        assert isinstance(handle.process, ForkedProcess)
        pid = handle.ready_info["pid"]
        lease = handle.uid_lease
        handle.close()
        assert not handle.is_alive() and handle.death_reason() == "killed"
        assert _gone(pid)
        # The fork server's exit report gives the uid back (root hosts lease one per sandbox).
        for _ in range(300):
            if lease is None or "released" in repr(lease):
                break
            select.select([], [], [], 0.1)
        assert lease is None or "released" in repr(lease)
        handle.close()  # idempotent
        handle.kill()
