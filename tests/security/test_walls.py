"""The OS walls of the subprocess sandbox, seen from inside by unrestricted code.

These tests assume the restricted interpreter has already been escaped: they
run plain Python (the real ``exec``, ``os``, ``socket``, ``ctypes``) inside a
sandbox process started exactly as in production, through the server's
test-only ``test_exec`` message (``SubprocessBackend(test_hooks=True)``,
see ``toolscript.sandbox.walls.testing``), and try what an attacker would:
become root again, open sockets, write files, read secrets, exec, fork,
ptrace, signal other processes, leave processes behind. Each wall is also
checked with the others switched off, where that is what shows it holds on
its own. Then the host side: ``require_isolation`` fails closed, and
``toolscript doctor`` reports the walls.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backend_marks import docker_only
from toolscript.runtime.backends.base import SandboxDied
from toolscript.runtime.backends.subprocess import SubprocessBackend
from toolscript.runtime.isolation import WALL_NAMES
from toolscript.runtime.runtime import runtime_from_config
from toolscript.sandbox.walls import WallConfig
from toolscript.sandbox.walls.config import DEFAULT_UID_RANGE
from walled import ATTEMPT, Walled, walled

from toolscript import Runtime
from toolscript.errors import ConfigurationError, IsolationUnavailable, SandboxStartError

HOST_IS_ROOT = os.geteuid() == 0

@pytest.fixture(scope="module")
def sandbox() -> Iterator[Walled]:
    """One fully walled sandbox shared by the read-only probes of this module."""
    with walled() as box:
        yield box


VIEW_ERRORS = ("EPERM", "EACCES", "ENOENT", "EROFS")
"""Refusals with the private view up too: the path is not there, or on a read-only mount."""


def assert_refused(outcomes: dict[str, str], errors: tuple[str, ...] = ("EPERM", "EACCES")) -> None:
    """Every attempt must have been refused by a wall: seccomp answers EPERM, Landlock
    EACCES (the private view, where a test allows it, ENOENT or EROFS); any other error
    (EFAULT, EBADF...) would mean the call reached the kernel."""
    escaped = {k: v for k, v in outcomes.items()
               if v.removeprefix("refused: ") not in errors}
    assert not escaped, f"not refused by a wall: {json.dumps(escaped, indent=1)}"


# --- every wall is reported, and really up ---------------------------------------------


def test_every_wall_is_reported_active(sandbox: Walled) -> None:
    assert list(sandbox.walls) == list(WALL_NAMES)
    missing = {k: v["detail"] for k, v in sandbox.walls.items() if not v["active"]}
    missing.pop("audit_hook")  # test-mode sandboxes install it from test code (test_audit_hook)
    if not HOST_IS_ROOT:  # RLIMIT_NPROC needs the uid drop; a netns root or user namespaces
        missing.pop("process_limit", None)
        if "user namespaces" in missing.get("network", ""):
            missing.pop("network")
    assert not missing, missing


def test_not_root_and_no_privileges(sandbox: Walled) -> None:
    inside = sandbox.exec("""
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
        result = {"resuid": os.getresuid(), "resgid": os.getresgid(), "groups": os.getgroups(),
                  "status": {k: v.strip() for k, v in status.items()}}
    """)
    status = inside["status"]
    if HOST_IS_ROOT:
        start, stop = DEFAULT_UID_RANGE  # a uid and gid of its own
        assert len(set(inside["resuid"])) == 1 and start <= inside["resuid"][0] < stop
        assert inside["resgid"] == inside["resuid"]
        assert inside["groups"] == []
        assert status["CapBnd"] == "0000000000000000"
    assert 0 not in inside["resuid"]
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    for caps in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        assert status[caps] == "0000000000000000", caps


def test_cannot_become_root_again(sandbox: Walled) -> None:
    assert_refused(sandbox.exec("""
        result = {
            "setuid": attempt(lambda: os.setuid(0)),
            "setresuid": attempt(lambda: os.setresuid(0, 0, 0)),
            "setgid": attempt(lambda: os.setgid(0)),
            "setgroups": attempt(lambda: os.setgroups([0])),
            "raw setuid": attempt(lambda: raw("setuid", 0)),
            "capset": attempt(lambda: raw("capset", 0, 0)),
            "prctl": attempt(lambda: raw("prctl", 38, 0, 0, 0, 0)),
            "unshare user": attempt(lambda: raw("unshare", 0x10000000)),
            "setns": attempt(lambda: raw("setns", 0, 0)),
        }
    """))


def test_no_network(sandbox: Walled) -> None:
    assert_refused(sandbox.exec("""
        import socket
        result = {
            "tcp": attempt(lambda: socket.socket()),
            "udp": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
            "ipv6": attempt(lambda: socket.socket(socket.AF_INET6)),
            "unix": attempt(lambda: socket.socket(socket.AF_UNIX)),
            "socketpair": attempt(lambda: socket.socketpair()),
            "netlink": attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)),
            "raw socket": attempt(lambda: raw("socket", 2, 1, 0)),
            "raw connect": attempt(lambda: raw("connect", 0, 0, 0)),
        }
    """))
    if HOST_IS_ROOT:  # its own network namespace (the host may read the link as root)
        assert os.readlink(f"/proc/{sandbox.pid}/ns/net") != os.readlink("/proc/self/ns/net")


@pytest.mark.parametrize("walls", [{}, {"landlock": False, "private_view": False},
                                   {"seccomp": False, "private_view": False}],
                         ids=["all-walls", "seccomp-alone", "landlock-alone"])
def test_no_file_can_be_written(walls: dict[str, Any]) -> None:
    """Seccomp (no write/create flags) and Landlock (nothing writable) each hold alone."""
    with walled(**walls) as box:
        assert_refused(box.exec("""
            result = {}
            for path in ("/tmp/pwned", "/dev/shm/pwned", "pwned", "/var/tmp/pwned"):
                result["create " + path] = attempt(lambda: open(path, "w"))
                result["os.open " + path] = attempt(
                    lambda: os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
            result["append to stderr's file"] = attempt(lambda: open("/proc/self/fd/2", "a"))
            result["overwrite /dev/null"] = attempt(lambda: open("/dev/null", "w"))
            result["proc mem"] = attempt(lambda: open("/proc/self/mem", "r+b"))
            result["mkdir"] = attempt(lambda: os.mkdir("/tmp/pwned-dir"))
            result["symlink"] = attempt(lambda: os.symlink("/etc/passwd", "/tmp/pwned-link"))
            result["fifo"] = attempt(lambda: os.mkfifo("/tmp/pwned-fifo"))
        """), VIEW_ERRORS if not walls else ("EPERM", "EACCES"))
    for name in ("/tmp/pwned", "/dev/shm/pwned", "/tmp/pwned-dir", "/tmp/pwned-link"):
        assert not os.path.lexists(name), name


@pytest.mark.parametrize("walls", [{}, {"landlock": False, "private_view": False}],
                         ids=["all-walls", "without-landlock"])
def test_secrets_and_the_host_environment_are_unreadable(walls: dict[str, Any]) -> None:
    """Landlock refuses them; without it the uid drop and non-dumpability still do."""
    if walls and not HOST_IS_ROOT:
        pytest.skip("without Landlock, a non-root host's own files are its sandbox's too")
    with walled(**walls) as box:
        assert_refused(box.exec(f"""
            landlock = {not walls}
            ppid = os.getppid()
            result = {{
                "shadow": attempt(lambda: open("/etc/shadow").read()),
                "parent environ": attempt(lambda: open(f"/proc/{{ppid}}/environ").read()),
                "parent mem": attempt(lambda: open(f"/proc/{{ppid}}/mem", "rb").read(1)),
                "parent fds": attempt(lambda: os.listdir(f"/proc/{{ppid}}/fd")),
                "root home": attempt(lambda: os.listdir("/root")),
            }}
            if landlock:
                result["passwd"] = attempt(lambda: open("/etc/passwd").read())
                result["listing /"] = attempt(lambda: os.listdir("/"))
                result["host cwd"] = attempt(lambda: os.listdir({os.getcwd()!r}))
        """), VIEW_ERRORS if not walls else ("EPERM", "EACCES"))


def test_no_exec_no_fork_no_ptrace(sandbox: Walled) -> None:
    assert_refused(sandbox.exec("""
        import subprocess
        ppid = os.getppid()
        result = {
            "fork": attempt(os.fork),
            "raw fork clone": attempt(lambda: raw("clone", 17, 0, 0, 0, 0)),  # SIGCHLD only
            "clone new netns thread": attempt(lambda: raw("clone", 0x40010f00, 0, 0, 0, 0)),
            "vfork": attempt(lambda: raw("vfork")),
            "execv": attempt(lambda: os.execv("/bin/true", ["/bin/true"])),
            "raw execve": attempt(lambda: raw("execve", 0, 0, 0)),
            "raw execveat": attempt(lambda: raw("execveat", 0, 0, 0, 0, 0)),
            "posix_spawn": attempt(lambda: os.posix_spawn("/bin/true", ["true"], {})),
            "subprocess": attempt(lambda: subprocess.run(["/bin/true"])),
            "ptrace parent": attempt(lambda: raw("ptrace", 16, ppid, 0, 0)),  # PTRACE_ATTACH
            "process_vm_readv": attempt(lambda: raw("process_vm_readv", ppid, 0, 0, 0, 0, 0)),
            "kill parent": attempt(lambda: os.kill(ppid, 0)),
            "mount": attempt(lambda: raw("mount", 0, 0, 0, 0, 0)),
            "bpf": attempt(lambda: raw("bpf", 0, 0, 0)),
            "keyctl": attempt(lambda: raw("keyctl", 0, 0, 0, 0, 0)),
            "perf_event_open": attempt(lambda: raw("perf_event_open", 0, 0, -1, -1, 0)),
            "io_uring_setup": attempt(lambda: raw("io_uring_setup", 1, 0)),
            "userfaultfd": attempt(lambda: raw("userfaultfd", 0)),
            "memfd_create": attempt(lambda: os.memfd_create("x")),
            "another seccomp filter": attempt(lambda: raw("seccomp", 1, 0, 0)),
            "ioctl TIOCSTI": attempt(lambda: raw("ioctl", 2, 0x5412, 0)),
        }
    """))


def test_threads_still_work_and_clone3_falls_back(sandbox: Walled) -> None:
    outcome = sandbox.exec("""
        import threading
        seen = []
        t = threading.Thread(target=lambda: seen.append(threading.get_ident()))
        t.start(); t.join()
        result = {"thread ran": bool(seen), "clone3": attempt(lambda: raw("clone3", 0, 0))}
    """)
    assert outcome == {"thread ran": True, "clone3": "refused: ENOSYS"}


def test_other_sandboxes_of_the_same_uid_are_out_of_reach() -> None:
    """Sandboxes that share uid 65534 (no ``uid_range``), seen from the host's /proc (no
    private view): one must not signal, trace or read another."""
    shared = {"uid_range": None, "private_view": False}
    with walled(**shared) as sandbox, walled(**shared) as other:
        assert_refused(sandbox.exec(f"""
            victim = {other.pid}
            result = {{
                "kill": attempt(lambda: os.kill(victim, 9)),
                "raw kill": attempt(lambda: raw("kill", victim, 9)),
                "environ": attempt(lambda: open(f"/proc/{{victim}}/environ").read()),
                "mem": attempt(lambda: open(f"/proc/{{victim}}/mem", "rb").read(1)),
                "ptrace": attempt(lambda: raw("ptrace", 16, victim, 0, 0)),
            }}
        """))
        assert other.session.run("2").value == 2  # still alive and well


def test_rlimits_lowered_after_the_drop(sandbox: Walled) -> None:
    """``configure`` applied the memory limit after the uid drop, hard limit included,
    so nothing in the sandbox can raise it again."""
    limits = sandbox.exec("""
        import resource
        unlimited = (ctypes.c_ulong * 2)(2**64 - 1, 2**64 - 1)
        result = {
            "as": list(resource.getrlimit(resource.RLIMIT_AS)),
            "nproc": list(resource.getrlimit(resource.RLIMIT_NPROC)),
            "raise": attempt(lambda: raw("prlimit64", 0, resource.RLIMIT_AS,
                                         ctypes.addressof(unlimited), 0)),
            "other process": attempt(lambda: raw("prlimit64", os.getppid(), 9, 0, 0)),
        }
    """)
    assert limits["as"] == [512 * 1024 * 1024] * 2
    assert limits.pop("raise") == "refused: EPERM"
    assert limits.pop("other process") == "refused: EPERM"
    if HOST_IS_ROOT:
        assert limits["nproc"] == [256, 256]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32/i386 ABIs are x86_64's")
def test_foreign_syscall_abis_kill_the_sandbox() -> None:
    """An x32 system-call number (bit 30) must not slip past a filter for x86_64."""
    with walled() as box:
        box.handle.send({"type": "test_exec", "code": ATTEMPT + textwrap.dedent("""
            result = attempt(lambda: _libc.syscall(ctypes.c_long(0x40000000 | 41), 2, 1, 0))
        """)})
        try:
            reply = box.handle.recv(30.0)
        except SandboxDied as exc:
            assert "SIGSYS" in str(exc)
        else:
            assert str(reply["value"]).startswith("refused"), reply


def test_a_forked_process_dies_with_the_session() -> None:
    """With fork let through (a test-only relaxation), what the sandbox forks is in its
    process group, and closing the session kills the group."""
    with walled(allow_fork=True) as box:
        child = box.exec("""
            import time
            pid = os.fork()
            if pid == 0:
                os.setsid  # stays in the sandbox's group: setsid is refused anyway
                time.sleep(600)
                os._exit(0)
            result = {"child": pid, "pgid": os.getpgid(pid), "me": os.getpid(),
                      "setsid": attempt(os.setsid)}
        """)
        assert child["pgid"] == child["me"] == box.pid
        assert child["setsid"].startswith("refused")
        watch = os.pidfd_open(child["child"])
        try:
            assert not select.select([watch], [], [], 0)[0], "the forked child is not running"
            box.session.close()
            assert select.select([watch], [], [], 10.0)[0], "the forked child outlived the session"
        finally:
            os.close(watch)


def test_allow_fork_needs_the_test_flag() -> None:
    runtime = Runtime(backend=SubprocessBackend(pool_size=0, walls={"allow_fork": True}))
    try:
        with pytest.raises(SandboxStartError, match="tests only"):
            runtime.run("1")
    finally:
        runtime.close()


def test_production_sandboxes_refuse_the_test_message() -> None:
    with Runtime(backend=SubprocessBackend(pool_size=0)) as runtime, runtime.session() as s:
        s.run("1")
        assert s.sandbox is not None
        s.sandbox.send({"type": "test_exec", "code": "result = 1"})
        with pytest.raises(SandboxDied):
            s.sandbox.recv(10.0)


# --- the host: reports, fail closed ----------------------------------------------------


def test_a_disabled_wall_is_reported_missing() -> None:
    with Runtime(backend=SubprocessBackend(pool_size=0, walls={"landlock": False})) as runtime:
        report = runtime.isolation()
    assert not report.active("landlock")
    assert report["landlock"].detail == "disabled by configuration"
    assert report.active("seccomp")


def test_require_isolation_fails_closed_at_start() -> None:
    backend = SubprocessBackend(pool_size=0, walls={"landlock": False})
    with pytest.raises(IsolationUnavailable, match="landlock") as caught:
        Runtime(backend=backend, require_isolation=["seccomp", "landlock"])
    assert caught.value.missing == ["landlock"]
    with Runtime(backend=SubprocessBackend(pool_size=0, walls={"landlock": False}),
                 require_isolation=["seccomp"]) as runtime:
        assert runtime.run("1 + 1").value == 2


def test_require_isolation_checks_every_sandbox() -> None:
    """A sandbox that comes up with fewer walls than required never runs a script."""
    with Runtime(backend=SubprocessBackend(pool_size=0), require_isolation=["all"]) as runtime:
        assert runtime.run("1").value == 1
        assert isinstance(runtime.backend, SubprocessBackend)
        runtime.backend.walls = WallConfig(seccomp=False)  # e.g. a changed deployment
        with pytest.raises(IsolationUnavailable, match="seccomp"):
            runtime.run("1")


def test_require_isolation_on_inprocess_fails_closed() -> None:
    with pytest.raises(IsolationUnavailable, match="inprocess"):
        Runtime(backend="inprocess", require_isolation=["user"])
    assert not Runtime(backend="inprocess").isolation().active("seccomp")


def test_require_isolation_names_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="unknown wall"):
        Runtime(backend="inprocess", require_isolation=["selinux"])
    with pytest.raises(ConfigurationError, match="walls"):
        SubprocessBackend(pool_size=0, walls={"landlok": False})


def test_require_isolation_profile_key(tmp_path: Path) -> None:
    config = tmp_path / "toolscript.toml"
    config.write_text(textwrap.dedent("""
        [profiles.prod]
        backend = "subprocess"
        require_isolation = ["landlock"]
        [profiles.prod.backend_options]
        pool_size = 0
        walls = { landlock = false }
        [profiles.bad]
        require_isolation = ["landlock", "firewall"]
    """))
    with pytest.raises(IsolationUnavailable, match="landlock"):
        runtime_from_config(config, profile="prod")
    with pytest.raises(ConfigurationError, match=r"profiles\.bad\.require_isolation"):
        runtime_from_config(config, profile="bad")


def doctor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolscript", "doctor", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TOOLSCRIPT_PROFILE": ""})


def test_doctor_reports_every_wall(tmp_path: Path) -> None:
    done = doctor(cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "backend: subprocess"
    for name in WALL_NAMES:
        assert any(line.split()[:1] == [name] for line in lines), name
    assert lines[-1].endswith("walls active") or "walls active" in done.stdout
    data = json.loads(doctor("--json", cwd=tmp_path).stdout)
    assert set(data["walls"]) == set(WALL_NAMES)


def test_doctor_fails_when_a_required_wall_is_missing(tmp_path: Path) -> None:
    (tmp_path / "toolscript.toml").write_text(textwrap.dedent("""
        [profiles.p]
        require_isolation = ["landlock"]
        [profiles.p.backend_options]
        walls = { landlock = false }
    """))
    done = doctor(cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "required but missing: landlock" in done.stdout
    assert "landlock       MISSING  disabled by configuration" in done.stdout
    inprocess = doctor("--backend", "inprocess", "--require", "seccomp", cwd=tmp_path)
    assert inprocess.returncode == 1
    assert f"0 of {len(WALL_NAMES)} walls active" in inprocess.stdout


def test_the_non_root_path_gets_its_own_network_via_a_user_namespace(tmp_path: Path) -> None:
    """Started unprivileged, the walls still go up: a user + network namespace where
    the kernel allows it, no capabilities, seccomp, Landlock."""
    if not HOST_IS_ROOT:
        pytest.skip("this host already runs the unprivileged path in every other test")
    code = textwrap.dedent("""
        import json, os
        from toolscript.sandbox import walls
        walls.preload()
        os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
        print(json.dumps(walls.apply()))
    """)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          timeout=60, cwd="/", env={})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["user"] == {"active": True, "detail": "uid 65534 gid 65534 (started "
                                                        "unprivileged)"}
    assert report["network"]["active"], report["network"]
    for name in ("no_new_privs", "capabilities", "seccomp", "landlock", "host_environ"):
        assert report[name]["active"], (name, report[name])
    # The host's own uid, but counted in a user namespace of its own: a budget of its own.
    assert report["process_limit"]["active"] and report["task_budget"]["active"], report


@docker_only
def test_docker_reports_walls_inside_and_of_the_container(backend_name: str,
                                                          docker_image_tag: str) -> None:
    with Runtime(backend="docker", backend_options={"image": docker_image_tag,
                                                    "pool_size": 0}) as runtime:
        report = runtime.isolation()
    assert not report.missing(), report.format()
    assert "verified" in report["seccomp"].detail  # our filter, on top of Docker's profile
    assert "verified" in report["landlock"].detail
