"""A hostile sandbox against the kernel's shared counters and the host's metadata.

Unrestricted code runs in a production-walled sandbox (the test-only entry
point, see ``walled.py``), as code that escaped the restricted interpreter
would, and tries to hurt *other* sessions through what the kernel counts per
uid or per machine, or to learn about them and the host through metadata that
Landlock does not cover:

* it fills its task budget (threads with the smallest stacks, forks where the
  test flag allows them): a session of another Runtime still starts, runs a
  script and starts threads;
* it fills the per-uid pending-signal quota: another sandbox still queues
  signals;
* every other per-uid or per-machine counter it could reach (pipes, inotify,
  epoll, eventfd, SysV IPC, POSIX message queues, keys, memfd, locked memory,
  pipe sizes) is refused outright, or per process;
* ``stat``/``readlink``/``access`` find neither another session's ``/proc``
  entries nor host processes, nor a root-only host file.

The host side: every live sandbox gets a uid of its own from
``walls.uid_range``, kept apart between host processes too, freed when the
sandbox ends or its host dies; the wall report, ``require_isolation`` and
``toolscript doctor`` say whether the task budget is per session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.backends.base import SandboxDied
from toolscript.runtime.backends.subprocess import ProcessHandle, SubprocessBackend
from toolscript.runtime.backends.uids import allocator_for
from toolscript.sandbox.walls import WallConfig
from toolscript.sandbox.walls.config import DEFAULT_UID_RANGE
from walled import ATTEMPT, Walled, fill_threads, walled

from toolscript import Runtime
from toolscript.errors import IsolationUnavailable, SandboxStartError

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"),
                                reason="a uid per sandbox and the private view need a root host")

FILL_THREADS = fill_threads(100_000) + 'result = {"threads": len(held), "error": error}\n'

FILL_FORKS = """
    import time
    count, error = 0, ""
    while count < 100_000:
        try:
            pid = os.fork()
        except OSError as exc:
            error = errno.errorcode.get(exc.errno or 0, str(exc))
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        count += 1
    result = {"forks": count, "error": error}
"""

START_THREADS = """
    import threading
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(1)) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result = len(seen)
"""

QUEUE_SIGNALS = """
    import signal, threading
    from toolscript.sandbox.walls.seccomp import library
    tgkill = library().resolve(b"tgkill")
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})  # pending until unblocked
    me, thread = os.getpid(), threading.get_native_id()
    args = [ctypes.c_long(v) for v in (tgkill, me, thread, int(signal.SIGRTMIN))]
    queued, error = 0, ""
    while queued < LIMIT:
        if _libc.syscall(*args) != 0:
            error = errno.errorcode.get(ctypes.get_errno(), "?")
            break
        queued += 1
    result = {"queued": queued, "error": error}
"""


def exec_in(handle: Any, code: str) -> Any:
    """Run ``code`` unrestricted in the sandbox behind ``handle`` (a pooled session's)."""
    handle.send({"type": "test_exec", "code": ATTEMPT + textwrap.dedent(code)})
    reply = handle.recv(30.0)
    assert reply["type"] == "test_result" and reply["ok"], reply
    return reply["value"]


def other_runtime_is_fine(walls: dict[str, Any] | None = None) -> None:
    """A session of a new Runtime starts, runs a script and starts threads."""
    with walled(**(walls or {})) as other:
        assert other.session.run("sum(range(10))").value == 45
        assert other.exec(START_THREADS) == 16


@pytest.fixture(params=[True, False], ids=["zygote", "fresh-interpreter"])
def zygote(request: pytest.FixtureRequest) -> bool:
    """Sandboxes forked from the fork server, and sandboxes started as new interpreters."""
    return bool(request.param)


@pytest.fixture
def hostile(zygote: bool) -> Iterator[Walled]:
    """A production-walled sandbox of its own Runtime, for the attacker."""
    backend = SubprocessBackend(pool_size=0, test_hooks=True, zygote=zygote)
    box = Walled(Runtime(backend=backend))
    try:
        yield box
    finally:
        box.close()


# --- the task budget -------------------------------------------------------------------


def test_a_sandbox_that_fills_its_task_budget_leaves_others_theirs(hostile: Walled) -> None:
    filled = hostile.exec(FILL_THREADS)
    assert "can't start new thread" in filled["error"], filled
    assert filled["threads"] <= WallConfig().max_processes  # its own budget, no more
    other_runtime_is_fine()
    other_runtime_is_fine()  # and again: the budget is not used up by the first either
    assert hostile.session.run("2 * 21").value == 42  # the attacker's session goes on too


def test_forks_count_against_the_same_own_budget() -> None:
    with walled(allow_fork=True) as box:
        filled = box.exec(FILL_FORKS)
        assert filled["error"] == "EAGAIN", filled
        assert filled["forks"] < WallConfig().max_processes
        other_runtime_is_fine()


def test_a_budget_filled_in_a_pooled_sandbox_spares_its_pool_siblings() -> None:
    """Sandboxes of the same Runtime (one fork server, one warm pool) have uids of their own."""
    backend = SubprocessBackend(pool_size=2, test_hooks=True)
    with Runtime(backend=backend) as runtime:
        first = runtime.session()
        assert first.run("1").value == 1
        assert isinstance(first.sandbox, ProcessHandle)
        assert "can't start new thread" in exec_in(first.sandbox, FILL_THREADS)["error"]
        sibling = runtime.session()
        assert sibling.run("3").value == 3
        assert exec_in(sibling.sandbox, START_THREADS) == 16
        sibling.close()
        first.close()


# --- the other per-uid counters ----------------------------------------------------------


def test_a_full_pending_signal_quota_is_that_sandbox_s_alone(hostile: Walled,
                                                             zygote: bool) -> None:
    """``RLIMIT_SIGPENDING`` counts the queued signals of every process of a uid."""
    full = hostile.exec(QUEUE_SIGNALS.replace("LIMIT", "2_000_000"))
    assert full["error"] == "EAGAIN" and full["queued"] > 0, full
    backend = SubprocessBackend(pool_size=0, test_hooks=True, zygote=zygote)
    other = Walled(Runtime(backend=backend))
    try:
        assert other.exec(QUEUE_SIGNALS.replace("LIMIT", "16")) == {"queued": 16, "error": ""}
    finally:
        other.close()


PER_UID_OR_MACHINE = """
    import resource
    MAP_LOCKED, PROT, FLAGS = 0x2000, 3, 0x22  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
    buf = ctypes.create_string_buffer(64)
    import stat
    pipe = next(fd for fd in range(64) if attempt(lambda: stat.S_ISFIFO(os.fstat(fd).st_mode))
                == "ALLOWED: True")
    result = {
        "pipe2 (pipe buffer pages)": attempt(lambda: raw("pipe2", ctypes.addressof(buf), 0)),
        "F_SETPIPE_SZ on its own pipe": attempt(lambda: raw("fcntl", pipe, 1031, 1 << 20)),
        "inotify_init1": attempt(lambda: raw("inotify_init1", 0)),
        "epoll_create1 (epoll watches)": attempt(lambda: raw("epoll_create1", 0)),
        "eventfd2": attempt(lambda: raw("eventfd2", 0, 0)),
        "signalfd4": attempt(lambda: raw("signalfd4", -1, ctypes.addressof(buf), 8, 0)),
        "timerfd_create": attempt(lambda: raw("timerfd_create", 1, 0)),
        "shmget (SysV IPC)": attempt(lambda: raw("shmget", 0, 4096, 0o1600)),
        "msgget": attempt(lambda: raw("msgget", 0, 0o1600)),
        "semget": attempt(lambda: raw("semget", 0, 1, 0o1600)),
        "mq_open (RLIMIT_MSGQUEUE)": attempt(
            lambda: raw("mq_open", ctypes.addressof(ctypes.create_string_buffer(b"q")),
                        0o100 | 2, 0o600, 0)),
        "add_key (key quota)": attempt(lambda: raw("add_key", 0, 0, 0, 0, 0)),
        "memfd_create": attempt(lambda: raw("memfd_create", ctypes.addressof(buf), 0)),
        "mlock": attempt(lambda: raw("mlock", ctypes.addressof(buf), 64)),
        "mlockall": attempt(lambda: raw("mlockall", 1)),
        "io_uring_setup": attempt(lambda: raw("io_uring_setup", 1, ctypes.addressof(buf))),
        "fanotify_init": attempt(lambda: raw("fanotify_init", 0, 0)),
        "userfaultfd": attempt(lambda: raw("userfaultfd", 0)),
        "socket (socket buffers)": attempt(lambda: raw("socket", 1, 1, 0)),
    }
    # Per process, not per uid: what MAP_LOCKED may pin is this process's RLIMIT_MEMLOCK.
    locked = 0
    while locked < (64 << 20):
        if _libc.mmap(None, ctypes.c_size_t(1 << 20), PROT, FLAGS | MAP_LOCKED, -1, 0) in (
                None, ctypes.c_void_p(-1).value):
            break
        locked += 1 << 20
    result["locked bytes"] = locked
    result["memlock limit"] = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    result["open files limit"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
"""


def test_every_other_shared_counter_is_refused_or_per_process() -> None:
    """Holds on the old code too (seccomp refuses them): kept so that it stays so."""
    with walled() as box:
        box_libc = "_libc.mmap.restype = ctypes.c_void_p\n"
        outcome = box.exec(box_libc + textwrap.dedent(PER_UID_OR_MACHINE))
        locked = outcome.pop("locked bytes")
        memlock = outcome.pop("memlock limit")
        open_files = outcome.pop("open files limit")
        refused = {k: v for k, v in outcome.items() if v != "refused: EPERM"}
        assert not refused, refused
        assert locked <= memlock  # bounded by its own process's limit
        assert 0 < open_files <= 1024  # RLIMIT_NOFILE, per process
        with walled() as other:  # and another sandbox can still lock its own
            again = other.exec(box_libc + textwrap.dedent(PER_UID_OR_MACHINE))
            assert again["locked bytes"] == locked


# --- metadata past Landlock -------------------------------------------------------------


SCAN_PIDS = """
    visible = []
    with open("/proc/self/status") as f:  # its own /proc entry is there
        own = dict(line.split(":", 1) for line in f.read().splitlines())
    for pid in range(1, PID_MAX):
        try:
            os.stat(f"/proc/{pid}")
        except OSError:
            continue
        visible.append(pid)
    result = {"visible": visible, "tgid": int(own["Tgid"]),
              "victim task": attempt(lambda: os.stat(f"/proc/{VICTIM}/task").st_nlink),
              "victim status": attempt(lambda: os.stat(f"/proc/{VICTIM}/status").st_uid),
              "victim exe": attempt(lambda: os.readlink(f"/proc/{VICTIM}/exe")),
              "victim access": os.access(f"/proc/{VICTIM}", os.F_OK),
              "host pid 1": attempt(lambda: os.stat("/proc/1").st_uid),
              "parent": attempt(lambda: os.stat(f"/proc/{os.getppid()}").st_uid)}
"""


def test_other_sessions_and_host_processes_are_invisible(hostile: Walled) -> None:
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    with walled() as victim:
        victim.exec("import threading; threading.Thread(target=threading.Event().wait, "
                    "daemon=True).start()")
        seen = hostile.exec(SCAN_PIDS.replace("PID_MAX", str(pid_max))
                            .replace("VICTIM", str(victim.pid)))
    assert seen["tgid"] == hostile.pid
    # Its own pid (and its own threads' ids, which a lookup finds): nothing else.
    others = [p for p in seen["visible"] if p != hostile.pid]
    assert len(others) <= 4 and victim.pid not in others and os.getpid() not in others, seen
    assert 1 not in seen["visible"]
    for key in ("victim task", "victim status", "victim exe", "host pid 1", "parent"):
        assert seen[key] == "refused: ENOENT", (key, seen)
    assert seen["victim access"] is False


def test_root_only_host_files_have_no_metadata(hostile: Walled) -> None:
    secret = Path("/tmp") / f"toolscript-secret-{uuid.uuid4().hex}"
    secret.write_bytes(b"x" * 12345)
    secret.chmod(0o600)
    link = secret.with_suffix(".link")
    link.symlink_to("/etc/shadow")
    try:
        seen = hostile.exec(f"""
            result = {{}}
            for path in ({str(secret)!r}, {str(link)!r}, "/etc/shadow", "/etc/passwd", "/root",
                         "/home", "/var/log", "/usr/bin/env", "/dev/shm", "/sys/fs/cgroup"):
                result["stat " + path] = attempt(lambda: os.stat(path).st_size)
                result["lstat " + path] = attempt(lambda: os.lstat(path).st_mtime)
                result["access " + path] = os.access(path, os.F_OK)
            result["readlink"] = attempt(lambda: os.readlink({str(link)!r}))
            result["statx"] = attempt(lambda: raw("statx", -100, ctypes.addressof(
                ctypes.create_string_buffer({str(secret).encode()!r})), 0, 0xfff,
                ctypes.addressof(ctypes.create_string_buffer(256))))
        """)
    finally:
        secret.unlink()
        link.unlink()
    shown = {k: v for k, v in seen.items()
             if (k.startswith("access") and v is not False)
             or (not k.startswith("access") and v != "refused: ENOENT")}
    # /root leads to the Python installation here; that path is meant to be seen.
    shown = {k: v for k, v in shown.items() if not (k.endswith(" /root")
                                                   and sys.prefix.startswith("/root/"))}
    assert not shown, shown


def test_its_view_is_read_only_and_holds_the_installation() -> None:
    with walled(seccomp=False, landlock=False) as box:  # the view alone
        seen = box.exec(f"""
            result = {{
                "listing /": sorted(os.listdir("/")),
                "prefix": os.path.isdir({sys.prefix!r}),
                "write in the installation": attempt(
                    lambda: os.open({sys.prefix!r} + "/pwned", os.O_WRONLY | os.O_CREAT)),
                "mkdir /": attempt(lambda: os.mkdir("/pwned")),
            }}
        """)
    assert seen["prefix"] is True
    assert set(seen["listing /"]) <= {"proc", "dev", *{p.split("/")[1] for p in sys.path if p}}
    assert seen["write in the installation"] in ("refused: EROFS", "refused: EACCES")
    assert seen["mkdir /"] == "refused: EROFS"
    assert not Path(sys.prefix, "pwned").exists()


# --- uids: allocation and reporting ----------------------------------------------------


def test_every_live_sandbox_has_a_uid_of_its_own() -> None:
    start, stop = DEFAULT_UID_RANGE
    uids = []
    with walled() as a, walled() as b, Runtime(
            backend=SubprocessBackend(pool_size=2, test_hooks=True)) as pooled:
        sessions = [pooled.session() for _ in range(3)]
        for s in sessions:
            assert s.run("1").value == 1
        handles = [a.handle, b.handle, *(s.sandbox for s in sessions)]
        for handle in handles:
            uids.append(exec_in(handle, "result = [os.getuid(), os.getgid()]"))
        held = allocator_for(DEFAULT_UID_RANGE).held()
        for s in sessions:
            s.close()
    assert len({uid for uid, _ in uids}) == len(uids), uids
    assert all(start <= uid < stop and gid == uid for uid, gid in uids), uids
    assert {uid for uid, _ in uids} <= held
    assert not {uid for uid, _ in uids} & allocator_for(DEFAULT_UID_RANGE).held()  # given back


def test_a_sandbox_that_dies_gives_its_uid_back() -> None:
    with walled() as box:
        uid = exec_in(box.handle, "result = os.getuid()")
        assert uid in allocator_for(DEFAULT_UID_RANGE).held()
        box.handle.send({"type": "test_exec", "code": "import os; os._exit(3)"})
        with pytest.raises(SandboxDied):
            box.handle.recv(30.0)
        assert box.session.run("1 + 1").value == 2  # a new sandbox, with a new uid
        assert exec_in(box.session.sandbox, "result = os.getuid()") != uid
    assert uid not in allocator_for(DEFAULT_UID_RANGE).held()


HOLD_UIDS = """
import json, sys, time
from toolscript.runtime.backends.uids import allocator_for
from toolscript.errors import SandboxStartError
allocator = allocator_for(({start}, {stop}))
got = []
while True:
    try:
        got.append(allocator.acquire().uid)
    except SandboxStartError:
        break
print(json.dumps(got), flush=True)
sys.stdin.readline()
"""


def test_uids_are_kept_apart_between_host_processes() -> None:
    """Another host process (another runtime on this machine) never gets a uid held here,
    and a host that is killed gives its uids back."""
    start = DEFAULT_UID_RANGE[1] + 1000  # a small range of its own, beyond the default
    allocator = allocator_for((start, start + 6))
    mine = [allocator.acquire(), allocator.acquire()]
    code = HOLD_UIDS.format(start=start, stop=start + 6)
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        theirs = json.loads(child.stdout.readline())
        assert sorted(theirs) == sorted(set(range(start, start + 6)) - {m.uid for m in mine})
        with pytest.raises(SandboxStartError, match="in use"):
            allocator.acquire()  # the child holds the rest
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        freed = [allocator.acquire() for _ in theirs]  # the kernel dropped its locks
        assert sorted(lease.uid for lease in freed) == sorted(theirs)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
        for lease in [*mine, *locals().get("freed", [])]:
            lease.release()


def test_a_container_s_uid_block_overlaps_no_other_sandbox_s_uid() -> None:
    """A docker fork server's block (its sessions' uids) holds no uid of a live sandbox
    of this or another host process, and no uid of it goes to anyone else while held."""
    start = DEFAULT_UID_RANGE[1] + 2000  # a small range of its own, beyond the default
    allocator = allocator_for((start, start + 8))
    single = allocator.acquire()
    code = HOLD_UIDS.format(start=start, stop=start + 8).replace(
        "allocator.acquire().uid", "allocator.acquire_block(2).start")
    block = allocator.acquire_block(4)
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert single.uid not in range(block.start, block.stop)
        assert child.stdout is not None
        theirs = json.loads(child.stdout.readline())  # every 2-block left to another host
        taken = {single.uid, *range(block.start, block.stop)}
        for first in theirs:
            assert not taken & {first, first + 1}, (theirs, taken)
        with pytest.raises(SandboxStartError, match="no block"):
            allocator.acquire_block(4)
        block.release()
        assert not set(range(block.start, block.stop)) & allocator.held()
    finally:
        child.kill()
        child.wait(30)
        single.release()
        block.release()


def test_a_fork_server_gives_each_live_child_its_own_uid() -> None:
    """The docker fork server's side: a uid per live child from its block, back only once
    that child is reaped (to the back of the line), none twice, a clear refusal when all
    are held; a uid the host chose passes through."""
    from toolscript.sandbox.sessionuids import SessionUids

    uids = SessionUids(WallConfig(uid_range=(5000, 5003)))
    taken = [uids.take({}) for _ in range(3)]
    assert [t["uid"] for t in taken] == [5000, 5001, 5002]
    assert all(t["gid"] == t["uid"] for t in taken)
    for pid, session in enumerate(taken, start=100):
        uids.bind(pid, session)
    assert uids.exhausted() and "in use" in str(uids.take({}))
    uids.reaped(999)  # not a child of it: nothing comes free
    assert uids.exhausted()
    uids.reaped(101)
    assert uids.take({}) == {"uid": 5001, "gid": 5001}
    assert uids.take({"uid": 7, "gid": 7}) == {"uid": 7, "gid": 7}  # the host's choice
    uids.give_back({"uid": 7, "gid": 7})  # not of its block: not handed out later
    assert "in use" in str(uids.take({}))
    off = SessionUids(WallConfig(uid_range=None))
    assert off.take({}) == {} and not off.exhausted()


def test_the_wall_report_says_whether_the_task_budget_is_per_session() -> None:
    with walled() as box:
        budget, view = box.walls["task_budget"], box.walls["private_view"]
    assert budget["active"] and "alone" in budget["detail"], budget
    assert view["active"] and "verified" in view["detail"], view
    with walled(uid_range=None) as shared:
        assert not shared.walls["task_budget"]["active"]
        assert "shared by every sandbox" in shared.walls["task_budget"]["detail"]
    with walled(private_view=False) as seen:
        assert seen.walls["private_view"] == {"active": False,
                                              "detail": "disabled by configuration"}


@pytest.mark.parametrize(("walls", "wall"), [({"uid_range": None}, "task_budget"),
                                             ({"uid": 990, "gid": 990}, "task_budget"),
                                             ({"max_processes": None}, "task_budget"),
                                             ({"private_view": False}, "private_view")])
def test_require_isolation_can_demand_them(walls: dict[str, Any], wall: str) -> None:
    with pytest.raises(IsolationUnavailable, match=wall):
        Runtime(backend=SubprocessBackend(pool_size=0, walls=walls), require_isolation=[wall])
    with Runtime(backend=SubprocessBackend(pool_size=0),
                 require_isolation=["task_budget", "private_view"]) as runtime:
        assert runtime.run("1 + 1").value == 2


def test_doctor_reports_the_per_session_budget(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolscript", "doctor", "--json",
                           "--require", "task_budget", "--require", "private_view"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TOOLSCRIPT_PROFILE": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    walls = json.loads(done.stdout)["walls"]
    assert walls["task_budget"]["active"] and walls["private_view"]["active"]
    text = subprocess.run([sys.executable, "-m", "toolscript", "doctor"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TOOLSCRIPT_PROFILE": ""}).stdout
    assert any(line.split()[:2] == ["task_budget", "active"] for line in text.splitlines())


@pytest.mark.parametrize("bad", [{"uid_range": [5, 5]}, {"uid_range": [0, 10]},
                                 {"uid_range": [1, 2**32]}, {"uid_range": [1]},
                                 {"uid_range": [True, 9]}, {"private_view": "yes"}])
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="walls"):
        WallConfig.from_mapping(bad)


# --- docker -----------------------------------------------------------------------------


def docker_process_backend(image: str) -> Any:
    """A docker backend on ``isolation="process"`` whose sandboxes accept test code."""
    from toolscript.runtime.backends.docker.backend import DockerBackend

    return DockerBackend(image, pool_size=0, isolation="process", test_hooks=True,
                         sessions_per_container=4)


def docker_process_runtime(image: str) -> Runtime:
    """A runtime on :func:`docker_process_backend`."""
    return Runtime(backend=docker_process_backend(image))


def test_docker_process_mode_says_what_its_sessions_share(docker_image_tag: str) -> None:
    """A shared container: a uid and a task budget per session, and one private view (mount
    namespace, hidepid /proc) that the fork server makes for all of its sessions. The report
    says so and verified it from inside (/proc shows only the session itself), and
    ``require_isolation`` can demand both."""
    with Runtime(backend=docker_process_backend(docker_image_tag),
                 require_isolation=["task_budget", "private_view"]) as runtime:
        report = runtime.isolation()
        assert report.active("task_budget") and report.active("private_view")
        assert "is this sandbox's alone" in report["task_budget"].detail
        assert "/proc shows only itself" in report["private_view"].detail
        assert runtime.run("1 + 1").value == 2
    from toolscript.runtime.backends.docker.backend import DockerBackend

    with Runtime(backend=DockerBackend(docker_image_tag, pool_size=0),
                 require_isolation=["task_budget", "private_view"]) as own:
        assert own.isolation().active("task_budget")  # a container per session
        assert own.run("1 + 1").value == 2


def test_a_full_docker_session_spares_the_sessions_of_other_runtimes(
        docker_image_tag: str) -> None:
    """Another Runtime's sessions live in another container (another pids cgroup)."""
    with docker_process_runtime(docker_image_tag) as attacker:
        session = attacker.session()
        assert session.run("1").value == 1
        filled = exec_in(session.sandbox, FILL_THREADS)
        assert "can't start new thread" in filled["error"], filled
        with docker_process_runtime(docker_image_tag) as other:
            neighbour = other.session()
            assert neighbour.run("sum(range(10))").value == 45
            assert exec_in(neighbour.sandbox, START_THREADS) == 16
            neighbour.close()
        session.close()


def test_a_full_docker_session_spares_its_container_siblings(docker_image_tag: str) -> None:
    """Sessions of ONE container: each fills only its own budget (its uid's RLIMIT_NPROC,
    its share of the container's pids limit); a sibling started before or after still
    starts threads, fills its own budget to the same size, and runs."""
    with docker_process_runtime(docker_image_tag) as runtime:
        first, sibling = runtime.session(), runtime.session()
        assert first.run("1").value == 1 and sibling.run("2").value == 2
        container = first.sandbox.container
        assert sibling.sandbox.container is container
        budget = container.task_budget
        try:
            filled = exec_in(first.sandbox, FILL_THREADS)
            assert "can't start new thread" in filled["error"], filled
            assert budget // 2 < filled["threads"] < budget, (filled, budget)
            assert exec_in(sibling.sandbox, START_THREADS) == 16
            assert sibling.run("sum(range(10))").value == 45
            late = runtime.session()  # forked after the first filled its budget
            assert late.run("3").value == 3 and late.sandbox.container is container
            assert exec_in(late.sandbox, START_THREADS) == 16
            again = exec_in(sibling.sandbox, FILL_THREADS)  # its own budget, as large
            assert "can't start new thread" in again["error"], again
            assert abs(again["threads"] - filled["threads"]) <= 4, (again, filled)
            assert exec_in(late.sandbox, START_THREADS) == 16
            late.close()
        finally:
            first.close()
            sibling.close()


def test_a_full_pending_signal_quota_spares_its_container_siblings(
        docker_image_tag: str) -> None:
    """``RLIMIT_SIGPENDING`` counts per uid too: with a uid per session, one session that
    queues signals until the kernel refuses leaves its container siblings their quota."""
    with docker_process_runtime(docker_image_tag) as runtime:
        first, sibling = runtime.session(), runtime.session()
        assert first.run("1").value == 1 and sibling.run("2").value == 2
        assert sibling.sandbox.container is first.sandbox.container
        try:
            full = exec_in(first.sandbox, QUEUE_SIGNALS.replace("LIMIT", "2_000_000"))
            assert full["error"] == "EAGAIN" and full["queued"] > 0, full
            assert exec_in(sibling.sandbox, QUEUE_SIGNALS.replace("LIMIT", "16")) == {
                "queued": 16, "error": ""}
        finally:
            first.close()
            sibling.close()


def test_a_closed_full_docker_session_gives_its_budget_to_the_next(
        docker_image_tag: str) -> None:
    """Churn in one container: sessions that fill their budgets and are closed, again and
    again, more times than the container has uids; each next session still gets a whole
    budget of its own (a uid comes back only once its last thread is gone)."""
    backend = docker_process_backend(docker_image_tag)
    with Runtime(backend=backend) as runtime:
        keeper = runtime.session()  # keeps the container alive between the others
        assert keeper.run("0").value == 0
        container = keeper.sandbox.container
        counts = []
        for _ in range(container.uids.stop - container.uids.start + 2):
            session = runtime.session()
            assert session.run("1").value == 1 and session.sandbox.container is container
            filled = exec_in(session.sandbox, FILL_THREADS)
            assert "can't start new thread" in filled["error"], filled
            counts.append(filled["threads"])
            session.close()
        assert max(counts) - min(counts) <= 4, counts
        assert exec_in(keeper.sandbox, START_THREADS) == 16
        keeper.close()


def test_the_unprivileged_path_keeps_its_uid_in_its_user_namespace() -> None:
    """Started unprivileged by a root process that dropped without an exec (not dumpable):
    it still maps its own uid in its new user namespace, instead of staying there as the
    overflow uid with the network wall saying it was isolated before it started."""
    code = textwrap.dedent("""
        import json, os
        from toolscript.sandbox import walls
        walls.preload()
        os.setgroups([]); os.setresgid(10001, 10001, 10001); os.setresuid(10001, 10001, 10001)
        report = walls.apply()
        with open("/proc/self/status") as f:
            uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
        print(json.dumps({"report": report, "uids": uids}))
    """)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                          timeout=60, cwd="/", env={})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["uids"] == ["10001"] * 4
    assert out["report"]["network"]["detail"].startswith("its own user and network namespace")
    assert out["report"]["user"]["detail"] == "uid 10001 gid 10001 (started unprivileged)"
    budget = out["report"]["task_budget"]
    assert budget["active"] and "user namespace of its own" in budget["detail"], budget
    assert not out["report"]["private_view"]["active"]


UNPRIVILEGED_FILL = """
import json, os, sys
from toolscript.sandbox import walls
walls.preload()
os.setgroups([]); os.setresgid(10001, 10001, 10001); os.setresuid(10001, 10001, 10001)
report = walls.apply()
""" + fill_threads(1000) + """
print(json.dumps({"threads": len(held), "error": error, "budget": report["task_budget"]}),
      flush=True)
sys.stdin.readline()
"""


def test_unprivileged_sandboxes_of_one_uid_have_budgets_of_their_own() -> None:
    """A non-root host's sandboxes all run as its uid; each in a user namespace of its own,
    where the kernel counts RLIMIT_NPROC per namespace: one that fills its budget leaves
    the next one its own."""
    children = []
    try:
        outcomes = []
        for _ in range(2):  # the first stays alive, its threads with it
            child = subprocess.Popen([sys.executable, "-I", "-c", UNPRIVILEGED_FILL],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd="/", env={})
            children.append(child)
            assert child.stdout is not None
            outcomes.append(json.loads(child.stdout.readline()))
        for outcome in outcomes:
            assert outcome["budget"]["active"], outcome
            assert "can't start new thread" in outcome["error"], outcome
            assert 200 < outcome["threads"] <= WallConfig().max_processes, outcome
    finally:
        for child in children:
            child.kill()
            child.wait(30)
