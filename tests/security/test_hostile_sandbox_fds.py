"""A hostile sandbox against its neighbours: descriptors, fcntl/ioctl and signals.

Unrestricted code runs inside production-walled sandboxes (the test-only
``test_exec`` entry point, see ``toolscript.sandbox.walls.testing``), as code
that escaped the restricted interpreter would, on the subprocess backend and
on docker in both isolation modes. What it must not reach:

* **an open file description of another sandbox**: each forked sandbox has a
  lifeline pipe of its own (the old one pipe per host process let one
  sandbox make every later sandbox's orphan watch fail with ``EAGAIN``, so
  no session of any runtime could start again), and no flag set on its
  descriptors shows in another sandbox;
* **signal delivery through a descriptor**: ``fcntl`` allows only the
  commands CPython uses (no ``F_SETOWN``/``F_SETSIG``/``O_ASYNC``, leases,
  locks, pipe sizes), ``ioctl`` nothing;
* **a signal to another process** by any route (``kill``, ``tkill``,
  ``tgkill``, queued signals, pidfds, process groups, ``SIGIO``), while
  ``abort()`` and ``raise()`` in the sandbox itself work (the ``tgkill`` rule
  names the forked child's pid, not the fork server's).

The ``landlock=False`` variants stand for kernels without Landlock signal
scoping (before 6.12): seccomp alone must hold there, and the ``signals``
wall is reported missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile_boxes import FORKED_KINDS, KINDS, Box, Boxes, kind_params

from toolscript import Runtime
from toolscript.errors import IsolationUnavailable

AUDIT = '''
import os, stat
def audit():
    """Every descriptor: (fd, kind, device, inode, status flags)."""
    kinds = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFREG: "file",
             stat.S_IFCHR: "chardev", stat.S_IFDIR: "dir"}
    held = []
    for fd in range(1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        held.append([fd, kinds.get(stat.S_IFMT(st.st_mode), "other"), st.st_dev, st.st_ino,
                     fcntl.fcntl(fd, fcntl.F_GETFL)])
    return held
'''

LIFELINE = AUDIT + '''
def lifeline():
    """The lifeline: the last read-only pipe (it arrives after the protocol reader)."""
    return max(fd for fd, kind, _d, _i, flags in audit()
               if kind == "fifo" and flags & os.O_ACCMODE == os.O_RDONLY)
'''

ALLOWED_FCNTL = {0, 1, 2, 3, 4, 1030}
"""F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL (without O_ASYNC), F_DUPFD_CLOEXEC."""


@pytest.fixture
def start(request: pytest.FixtureRequest) -> Iterator[Callable[..., Boxes]]:
    """``start(kind, **walls)``: a :class:`Boxes` of that kind, closed after the test."""
    made: list[Boxes] = []

    def make(kind: str, **walls: Any) -> Boxes:
        image = request.getfixturevalue("docker_image_tag") if kind.startswith("docker") else None
        boxes = Boxes(kind, image, walls)
        made.append(boxes)
        return boxes

    yield make
    for boxes in reversed(made):
        boxes.close()


def neighbours(boxes: Boxes) -> tuple[Box, Box]:
    """An attacker and a victim it can see: in docker's process mode a session of the same
    container (another container is another pid namespace), else another runtime's."""
    attacker = boxes.box()
    victim = boxes.box(attacker.runtime if boxes.kind == "docker-process" else None)
    return attacker, victim


# ------------------------------------------------------------------ descriptors


@pytest.mark.parametrize("kind", kind_params(FORKED_KINDS))
def test_nonblocking_pipes_of_one_sandbox_stop_no_other_from_starting(
        start: Callable[..., Boxes], kind: str) -> None:
    boxes = start(kind)
    attacker = boxes.box()
    touched = attacker.exec('''
import stat
touched = []
for fd in range(3, 64):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    if stat.S_ISFIFO(st.st_mode) and flags & os.O_ACCMODE == os.O_RDONLY:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        touched.append(fd)
result = touched
''')
    assert len(touched) == 2, touched  # its protocol reader and its lifeline
    # New sessions start and run: in another runtime of this kind, in the attacker's own
    # runtime, and on the subprocess backend (whose sandboxes the old shared lifeline
    # reached from a docker session too).
    assert boxes.box().answers()
    assert boxes.box(attacker.runtime).answers()
    with Runtime(backend="subprocess", backend_options={"pool_size": 0}) as other:
        for _ in range(3):
            with other.session() as session:
                assert session.run("6 * 7").value == 42


@pytest.mark.parametrize("kind", kind_params(KINDS))
def test_no_descriptor_is_shared_and_no_flag_crosses_to_a_neighbour(
        start: Callable[..., Boxes], kind: str) -> None:
    boxes = start(kind)
    attacker, same_runtime = boxes.box(), None
    others = [boxes.box()]
    if kind != "docker-container":
        same_runtime = boxes.box(attacker.runtime)
        others.append(same_runtime)
    audit = AUDIT + "result = audit()"
    mine = attacker.exec(audit)
    before = [other.exec(audit) for other in others]
    kinds = sorted(kind_ for _fd, kind_, *_ in mine)
    if kind in FORKED_KINDS:
        # /dev/null, the stderr file twice, the status file the walls pin, and three
        # pipes: protocol in, protocol out, its own lifeline. Nothing of the fork server.
        assert kinds == ["chardev", "fifo", "fifo", "fifo", "file", "file", "file"], mine
    else:
        assert len(mine) <= 8 and "dir" not in kinds, mine
    channels = {(dev, ino) for _fd, kind_, dev, ino, _fl in mine if kind_ in ("fifo", "socket")}
    for held in before:
        theirs = {(dev, ino) for _fd, kind_, dev, ino, _fl in held if kind_ in ("fifo", "socket")}
        assert not channels & theirs, (mine, held)  # no pipe or socket in common
    # Every status flag F_SETFL may change, on every descriptor it holds.
    flipped = attacker.exec(AUDIT + '''
flipped = []
for fd, kind, _d, _i, flags in audit():
    if fd > 2:  # not stderr: the test still needs to read the attacker's replies
        for extra in (os.O_NONBLOCK, os.O_APPEND):
            if attempt(lambda: fcntl.fcntl(fd, fcntl.F_SETFL, flags | extra)).startswith("ALLOWED"):
                flipped.append(fd)
result = sorted(set(flipped))
''')
    assert flipped, "F_SETFL(O_NONBLOCK) is one CPython needs: it must stay allowed"
    for other, held in zip(others, before, strict=True):
        assert other.exec(audit) == held  # nothing the attacker set shows here
        assert other.answers()


@pytest.mark.parametrize("kind", kind_params(FORKED_KINDS))
def test_the_orphan_watch_takes_eagain_and_eintr_for_what_they_are(
        start: Callable[..., Boxes], kind: str) -> None:
    box = start(kind).box()
    # Its own lifeline made non-blocking, the watch's blocked read interrupted: it reads
    # again, gets EAGAIN, and must not take that for the host's death.
    box.exec(LIFELINE + '''
import threading, time
fd = lifeline()
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
signal.signal(signal.SIGUSR1, lambda *_: None)
watch = next(t for t in threading.enumerate() if t.name == "toolscript-orphan-watch")
for _ in range(3):
    signal.pthread_kill(watch.ident, signal.SIGUSR1)
    time.sleep(0.1)
result = fd
''')
    assert box.answers()
    assert box.handle.is_alive()
    # Only the end of file is the host's death, non-blocking or not.
    box.handle.process.cut_lifeline()
    assert box.handle.process.wait(30) == 3


# ------------------------------------------------------------------ fcntl and ioctl


@pytest.mark.parametrize("kind", kind_params(KINDS))
def test_only_the_fcntl_commands_cpython_needs_pass_on_any_descriptor(
        start: Callable[..., Boxes], kind: str) -> None:
    box = start(kind).box()
    passed = box.exec(AUDIT + '''
commands = [*range(0, 64), *range(1024, 1100), (1 << 32) | 4, (1 << 32) | 8, 1 << 40]
passed = {}
for fd, kind, _d, _i, flags in audit():
    fd_flags = fcntl.fcntl(fd, fcntl.F_GETFD)
    for command in commands:
        try:
            value = raw("fcntl", fd, command, 0)
        except OSError as exc:
            if exc.errno == errno.EPERM:
                continue
            value = None
        passed.setdefault(command, []).append(fd)
        if command in (0, 1030) and value is not None:
            os.close(value)  # a new descriptor (F_DUPFD, F_DUPFD_CLOEXEC)
    raw("fcntl", fd, 4, flags)  # undo F_SETFL(0) and F_SETFD(0)
    raw("fcntl", fd, 2, fd_flags)
result = sorted(passed)
''')
    assert set(passed) <= ALLOWED_FCNTL, sorted(set(passed) - ALLOWED_FCNTL)
    assert {1, 3, 1030} <= set(passed)  # what CPython calls once started
    setfl = box.exec(AUDIT + '''
fd = audit()[-1][0]
flags = fcntl.fcntl(fd, fcntl.F_GETFL)
result = {name: attempt(lambda: raw("fcntl", fd, fcntl.F_SETFL, flags | value))
          for name, value in [("O_NONBLOCK", os.O_NONBLOCK), ("O_ASYNC", os.O_ASYNC),
                              ("O_DIRECT", os.O_DIRECT), ("O_NOATIME", os.O_NOATIME),
                              ("all", 0xFFFFFFFF)]}
raw("fcntl", fd, fcntl.F_SETFL, flags)
''')
    assert setfl.pop("O_NONBLOCK").startswith("ALLOWED"), setfl
    assert all(v == "refused: EPERM" for v in setfl.values()), setfl
    assert box.answers()


IOCTLS = {
    "TCGETS": 0x5401, "TCSETS": 0x5402, "TIOCSCTTY": 0x540E, "TIOCGPGRP": 0x540F,
    "TIOCSPGRP": 0x5410, "TIOCSTI": 0x5412, "TIOCGWINSZ": 0x5413, "FIONREAD": 0x541B,
    "TIOCLINUX": 0x541C, "FIONBIO": 0x5421, "TIOCNOTTY": 0x5422, "TIOCSETD": 0x5423,
    "FIONCLEX": 0x5450, "FIOCLEX": 0x5451, "FIOASYNC": 0x5452, "FIOSETOWN": 0x8901,
    "SIOCSPGRP": 0x8902, "FIOGETOWN": 0x8903, "FIGETBSZ": 2, "FS_IOC_GETFLAGS": 0x80086601,
    "FS_IOC_SETFLAGS": 0x40086602, "FICLONE": 0x40049409, "BLKGETSIZE64": 0x80081272,
    "SECCOMP_IOCTL_NOTIF_RECV": 0xC0502100,
}
"""Common ioctl requests: terminals, descriptor ownership and async I/O, files, devices."""


@pytest.mark.parametrize("kind", kind_params(KINDS))
def test_no_ioctl_passes_on_any_descriptor(start: Callable[..., Boxes], kind: str) -> None:
    box = start(kind).box()
    outcomes = box.exec(AUDIT + f'''
import ctypes
buf = ctypes.create_string_buffer(256)
ctypes.c_int.from_buffer(buf).value = os.getpid()
result = {{}}
for fd, *_ in audit():
    for name, request in {IOCTLS!r}.items():
        outcome = attempt(lambda: raw("ioctl", fd, request, ctypes.addressof(buf)))
        if outcome != "refused: EPERM":
            result[f"{{name}} on {{fd}}"] = outcome
''')
    assert outcomes == {}
    assert box.answers()


# ------------------------------------------------------------------ signals


SIGNAL_ROUTES = '''
import ctypes
info = ctypes.create_string_buffer(128)  # a siginfo_t
def routes(target, sig):
    """Every way to send sig to target that needs no descriptor of it."""
    yield "kill", lambda: raw("kill", target, sig)
    yield "killpg", lambda: os.killpg(abs(target), sig)
    yield "tkill", lambda: raw("tkill", target, sig)
    yield "tgkill", lambda: raw("tgkill", target, target, sig)
    yield "rt_sigqueueinfo", lambda: raw("rt_sigqueueinfo", target, sig, ctypes.addressof(info))
    yield "rt_tgsigqueueinfo", lambda: raw("rt_tgsigqueueinfo", target, target, sig,
                                           ctypes.addressof(info))
    yield "pidfd_open", lambda: raw("pidfd_open", target, 0)
    yield "pidfd_send_signal", lambda: raw("pidfd_send_signal", 0, sig, 0, 0)
    yield "setpgid", lambda: raw("setpgid", 0, target)

def owner_routes(fd, target, sig):
    """Arming fd to signal target when its I/O is ready (SIGIO of the owner)."""
    own = ctypes.create_string_buffer(8)
    ctypes.c_int.from_buffer(own).value = 2 if target < 0 else 1  # F_OWNER_PGRP / F_OWNER_PID
    ctypes.c_int.from_buffer(own, 4).value = abs(target)
    pid = ctypes.c_int(target)
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    yield "F_SETOWN", lambda: raw("fcntl", fd, 8, target)
    yield "F_SETOWN_EX", lambda: raw("fcntl", fd, 15, ctypes.addressof(own))
    yield "F_SETSIG", lambda: raw("fcntl", fd, 10, sig)
    yield "O_ASYNC", lambda: raw("fcntl", fd, 4, flags | os.O_ASYNC)
    yield "FIOSETOWN", lambda: raw("ioctl", fd, 0x8901, ctypes.addressof(pid))
    yield "SIOCSPGRP", lambda: raw("ioctl", fd, 0x8902, ctypes.addressof(pid))
    yield "FIOASYNC", lambda: raw("ioctl", fd, 0x5452, ctypes.addressof(ctypes.c_int(1)))
    yield "F_SETLEASE", lambda: raw("fcntl", fd, 1024, 0)
    yield "F_NOTIFY", lambda: raw("fcntl", fd, 1026, 0x80000000 | 0x3F)

def attack(targets, fds):
    """Try every route to every target; the routes that were not refused."""
    through = []
    for target in targets:
        for sig in (signal.SIGKILL, signal.SIGSTOP):
            for name, call in routes(target, sig):
                if target in (0, -1) and name not in ("kill", "setpgid"):
                    continue
                outcome = attempt(call)
                if not outcome.startswith("refused"):
                    through.append(f"{name}({target}, {sig}): {outcome}")
            for fd in fds if target else ():
                for name, call in owner_routes(fd, target, sig):
                    outcome = attempt(call)
                    if not outcome.startswith("refused"):
                        through.append(f"{name}(fd {fd}, {target}, {sig}): {outcome}")
    for name, call in [("setsid", lambda: raw("setsid")), ("kill(0)", lambda: raw("kill", 0, 0)),
                       ("kill(-1)", lambda: raw("kill", -1, 0))]:
        outcome = attempt(call)
        if not outcome.startswith("refused"):
            through.append(f"{name}: {outcome}")
    return through
'''


def _fifos(box: Box) -> list[int]:
    fds: list[int] = box.exec(AUDIT + "result = [fd for fd, kind, *_ in audit() if fd > 2]")
    return fds


@pytest.mark.parametrize(("kind", "walls"), [
    *[pytest.param(p.values[0], {}, marks=p.marks, id=p.values[0])
      for p in kind_params(FORKED_KINDS)],
    pytest.param("subprocess", {"landlock": False}, id="subprocess-no-landlock-scope"),
])
def test_no_signal_route_reaches_a_neighbour_the_fork_server_or_the_host(
        start: Callable[..., Boxes], kind: str, walls: dict[str, Any]) -> None:
    boxes = start(kind, **walls)
    attacker, victim = neighbours(boxes)
    fork_server = attacker.exec("result = os.getppid()")
    targets = [victim.pid, -victim.pid, fork_server, -fork_server, 1, -1, 0]
    if kind == "subprocess":
        targets.append(os.getpid())  # the host (the fork server's parent)
    through = attacker.exec(SIGNAL_ROUTES + f"result = attack({targets!r}, {_fifos(attacker)!r})")
    assert through == []
    # Had a descriptor been armed, the host's next messages would fire it now.
    assert attacker.answers()
    assert victim.answers()
    if kind == "subprocess":
        os.kill(fork_server, 0)  # still there (raises if not)
    else:
        assert attacker.handle.container.alive


@pytest.mark.parametrize(("kind", "walls"), [
    *[pytest.param(p.values[0], {}, marks=p.marks, id=p.values[0])
      for p in kind_params(FORKED_KINDS)],
    pytest.param("subprocess", {"landlock": False}, id="subprocess-no-landlock-scope"),
])
def test_a_descriptor_armed_to_signal_a_neighbour_fires_nothing(
        start: Callable[..., Boxes], kind: str, walls: dict[str, Any]) -> None:
    boxes = start(kind, **walls)
    attacker, victim = neighbours(boxes)
    # Owner: the victim; signal: SIGKILL; O_ASYNC on: every protocol message the host sends
    # the attacker (and every reply it reads) would then kill the victim.
    attacker.exec(SIGNAL_ROUTES + f"""
for fd in {_fifos(attacker)!r}:
    for name, call in owner_routes(fd, {victim.pid}, signal.SIGKILL):
        if name in ("F_SETOWN", "F_SETSIG", "O_ASYNC"):
            attempt(call)
result = None
""")
    for _ in range(3):
        assert attacker.answers()
    assert victim.answers()
    assert victim.handle.is_alive()


@pytest.mark.parametrize("kind", kind_params(["docker-container"] if "docker-container" in KINDS
                                             else []))
def test_a_container_sandbox_signals_nothing_around_it(start: Callable[..., Boxes],
                                                      kind: str) -> None:
    box = start(kind).box()
    parent = box.exec("result = os.getppid()")
    through = box.exec(SIGNAL_ROUTES + f"result = attack({[1, -1, parent]!r}, "
                                       f"{_fifos(box)!r})")
    assert through == []
    assert box.answers()


@pytest.mark.parametrize("kind", kind_params(KINDS))
def test_a_sandbox_signals_itself_and_aborts(start: Callable[..., Boxes], kind: str) -> None:
    box = start(kind).box()
    caught = box.exec('''
import threading
seen = []
signal.signal(signal.SIGUSR1, lambda signum, _frame: seen.append(signum))
signal.signal(signal.SIGUSR2, lambda signum, _frame: seen.append(signum))
signal.raise_signal(signal.SIGUSR1)                              # raise(): tgkill(self)
signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR2)  # its own thread
result = seen
''')
    assert caught == [signal.SIGUSR1, signal.SIGUSR2]
    box.handle.send({"type": "test_exec", "code": "import os\nos.abort()"})
    with pytest.raises(Exception):  # noqa: B017 - the sandbox is gone, whatever the wording
        box.handle.recv(30.0)
    if kind in FORKED_KINDS:
        assert box.handle.process.wait(30) == -signal.SIGABRT
    else:
        assert not box.handle.is_alive()


# ------------------------------------------------------------------ the wall report


@pytest.mark.parametrize("kind", kind_params(KINDS))
def test_signal_isolation_is_reported_where_landlock_scopes_signals(
        start: Callable[..., Boxes], kind: str) -> None:
    box = start(kind).box()
    report = box.runtime.isolation()
    from toolscript.sandbox.walls.landlock import abi_version

    assert report.active("signals") == (abi_version() >= 6 or kind == "docker-container"), \
        report["signals"]


def test_without_landlock_signal_isolation_is_missing_and_can_be_required() -> None:
    from toolscript.runtime.backends.subprocess import SubprocessBackend

    walls = {"landlock": False}
    with Runtime(backend=SubprocessBackend(pool_size=0, walls=walls)) as runtime:
        wall = runtime.isolation()["signals"]
    assert not wall.active
    assert "disabled by configuration" in wall.detail and "seccomp refuses" in wall.detail
    backend = SubprocessBackend(pool_size=0, walls=walls)
    try:
        with pytest.raises(IsolationUnavailable) as caught:
            Runtime(backend=backend, require_isolation=["signals"])
    finally:
        backend.shutdown()
    assert caught.value.missing == ["signals"]


def test_doctor_reports_signal_isolation_and_fails_when_it_is_required(tmp_path: Path) -> None:
    (tmp_path / "toolscript.toml").write_text(textwrap.dedent("""
        [profiles.p]
        [profiles.p.backend_options]
        walls = { landlock = false }
    """))

    def doctor(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "toolscript", "doctor", *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "TOOLSCRIPT_PROFILE": ""})

    done = doctor("--require", "signals", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["required_missing"] == ["signals"]
    assert "needs Linux 6.12+" in report["walls"]["signals"]["detail"]
    assert report["walls"]["landlock"]["active"] is False
    (tmp_path / "toolscript.toml").unlink()
    from toolscript.sandbox.walls.landlock import abi_version

    scoped = doctor("--require", "signals")
    assert scoped.returncode == (0 if abi_version() >= 6 else 1), scoped.stdout + scoped.stderr
    line = next(line for line in scoped.stdout.splitlines() if line.split()[:1] == ["signals"])
    assert ("active" if abi_version() >= 6 else "MISSING") in line.split()[1]
