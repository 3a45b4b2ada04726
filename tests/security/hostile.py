"""The hostile-neighbour scene: one walled sandbox attacks, other sessions must not notice.

Shared by ``test_hostile_neighbour.py`` and ``benchmarks/hostile_neighbour.py``.

A :class:`Scene` holds, on one backend kind (``"subprocess"`` or
``"docker-process"``):

* the **hostile** runtime: a production-walled sandbox that also runs
  unrestricted code (``test_hooks=True``, see ``walled.py``), i.e. code that
  escaped the restricted interpreter;
* a **sibling**: another session of the hostile runtime (same fork server,
  same container on docker), opened before the attack;
* **neighbours**: ``n`` other runtimes (one production backend), each with a
  session opened before the attack.

An attack is either *held* (unrestricted code grabs what it can - threads,
descriptors, memory - or tries to signal the others, and keeps it while the
others are checked) or a *frame* attack (the hostile sandbox answers its next
``run`` with frames an attacker chose: huge, deep, malformed, out of order,
late). :meth:`Scene.check_others` then runs a tool-calling script in every
session opened before, in a new session of every runtime, and (subprocess)
in a runtime created after the attack; every result must be right.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from walled import ATTEMPT, arm, fill_threads

from toolscript import Limits, RunResult, Runtime, tool

HOSTILE_LIMITS = Limits(wall_time_s=3.0, memory_mb=4096)
"""The hostile tenant's own limits: room for thousands of threads (each reserves address
space); its run duration is measured against the wall limit."""
SIBLING = "sibling (the attacker's own runtime)"
"""How failures of the attacker's own runtime's sessions are named."""
CHECK = "sum(double(i) for i in range(10))"
CHECK_VALUE = 90


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


# ------------------------------------------------------------------ host figures


def host_rss_mb() -> float:
    """This process's resident set size (MiB)."""
    return _status("VmRSS") / 1024


def host_threads() -> int:
    """This process's thread count (the kernel's, not only Python's threads)."""
    return _status("Threads")


def _status(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


# ----------------------------------------------------------------------- attacks

# Held attacks: unrestricted code, run with ``test_exec``; what they grab is kept in
# ``builtins`` until the sandbox is killed. ``VICTIMS`` is replaced by the others' pids.
HELD: dict[str, str] = {
    "threads": fill_threads(200_000) + """
import builtins
builtins.held_threads = (forever, held)
result = {"threads": len(held), "stopped_by": stopped_by}
""",
    "descriptors": """
import builtins, fcntl, os
held, why = [], {}
for name, make in (("dup", lambda: [os.dup(0)]), ("pipe", lambda: list(os.pipe())),
                   ("dup2", lambda: [os.dup(2)])):
    while len(held) < 1_000_000:
        try:
            fds = make()
        except OSError as exc:
            why[name] = exc.strerror
            break
        held += fds
        if name == "pipe":
            attempt(lambda: fcntl.fcntl(fds[1], 1031, 1 << 20))  # F_SETPIPE_SZ: kernel memory
builtins.held_fds = held
result = {"descriptors": len(held), "stopped_by": why}
""",
    "memory": """
import builtins
held, total = [], 0
while total < 1024:  # 1 GiB: the machine is shared
    try:
        held.append(bytearray(b"\\x01") * (8 << 20))  # touched, not only reserved
    except MemoryError:
        break
    total += 8
if held:
    held.pop()  # room for the reply
    total -= 8
builtins.held_memory = held
result = {"mib": total}
""",
    "signals": """
import fcntl, os, resource, signal
out = {}
victims = [pid for pid in VICTIMS + [os.getppid(), 1] if pid != os.getpid()]
for pid in victims:
    out[f"kill {pid}"] = attempt(lambda: os.kill(pid, signal.SIGKILL))
    out[f"tgkill {pid}"] = attempt(lambda: raw("tgkill", pid, pid, 9))
    out[f"tkill {pid}"] = attempt(lambda: raw("tkill", pid, 9))
    out[f"sigqueue {pid}"] = attempt(lambda: raw("rt_sigqueueinfo", pid, 9, 0))
    out[f"pidfd {pid}"] = attempt(lambda: raw("pidfd_open", pid, 0))
    out[f"prlimit cpu {pid}"] = attempt(
        lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1)))
    out[f"prlimit nofile {pid}"] = attempt(
        lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3)))
    out[f"setpriority {pid}"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
    def sigio(pid=pid):
        r, w = os.pipe()
        fcntl.fcntl(r, fcntl.F_SETOWN, pid)
        fcntl.fcntl(r, 10, signal.SIGKILL)  # F_SETSIG
        fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
        os.write(w, b"x")
    out[f"sigio {pid}"] = attempt(sigio)
out["kill -1"] = attempt(lambda: os.kill(-1, signal.SIGKILL))
out["kill -1 raw"] = attempt(lambda: raw("kill", -1 & 0xFFFFFFFF, 9))
result = {k: v for k, v in out.items() if v.startswith("ALLOWED")}
""",
    "shared_descriptors": """
import fcntl, os
out = {}
def add_flag(fd, flag):
    return fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | flag)
for fd in range(3, 1024):
    try:
        fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        continue
    out[f"setown {fd}"] = attempt(lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, os.getppid()))
    out[f"async {fd}"] = attempt(lambda: add_flag(fd, os.O_ASYNC))
    out[f"nonblock {fd}"] = attempt(lambda: add_flag(fd, os.O_NONBLOCK))
    out[f"lease {fd}"] = attempt(lambda: fcntl.fcntl(fd, 1024, fcntl.F_WRLCK))  # F_SETLEASE
    out[f"flock {fd}"] = attempt(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
result = {k: v for k, v in out.items() if v.startswith("ALLOWED")}
""",
}
HELD["everything"] = "\n".join(  # memory last: what is left of it after the others
    f"exec({HELD[name]!r}, dict(globals()))"
    for name in ("threads", "descriptors", "signals", "shared_descriptors", "memory")
) + "\nresult = 'held'\n"

# Frame attacks: the hostile sandbox (``walled.arm``: its next ``run`` is plain Python,
# see ``walled.HOSTILE_SERVER``) answers that run with ATTACK (bytes written raw on its
# protocol pipe), then stays silent: the host must end the run by itself.
_FRAMES_PRELUDE = """
run_id = run
send = send_raw  # the attacks write raw bytes

def result_frame(run_id, value_json):
    return frame(b'{"type":"result","id":' + json.dumps(run_id).encode() +
                 b',"ok":true,"value":' + value_json +
                 b',"stdout":"","stdout_truncated":false,"error":null}')

def stream(head, piece, count, tail):
    # one frame of head + piece * count + tail, written in chunks (never all in memory)
    send_raw(struct.pack(">I", len(head) + len(piece) * count + len(tail)) + head)
    chunk = piece * 65536
    for _ in range(count // 65536):
        send_raw(chunk)
    send_raw(piece * (count % 65536) + tail)

def result_head(run_id):
    return b'{"type":"result","id":' + json.dumps(run_id).encode() + b',"ok":true,"value":'

RESULT_TAIL = b',"stdout":"","stdout_truncated":false,"error":null}'
ATTACK
hold()
"""

FRAMES: dict[str, str] = {
    # 60 MiB of empty lists: under the frame cap, tens of millions of objects to build
    "huge_result": "stream(result_head(run_id) + b'[', b'[],', 20_000_000, b'[]]' + RESULT_TAIL)",
    "deep_result": "send(result_frame(run_id, b'[' * 200_000 + b']' * 200_000))",
    "deep_call": ("send(frame(b'{\"type\":\"call\",\"id\":1,\"tool\":\"double\",\"args\":{\"x\":'"
                  " + b'[' * 200_000 + b']' * 200_000 + b'}}'))"),
    "huge_call_many": ("stream(b'{\"type\":\"call_many\",\"id\":1,\"calls\":[', "
                       "b'{\"tool\":\"double\",\"args\":{\"x\":1}},', 999_999, "
                       "b'{\"tool\":\"double\",\"args\":{\"x\":1}}]}')"),
    "call_many_not_a_list": "send(frame(b'{\"type\":\"call_many\",\"id\":1,\"calls\":5}'))",
    "not_json": "send(frame(b'{\"type\": \"result\", '))",
    "bad_utf8": "send(frame(b'\\xff\\xfe\\xfd\\xfc'))",
    "header_past_cap": "send(struct.pack('>I', 2**31) + b'{}')",
    "truncated": "send(struct.pack('>I', 1000) + b'{\"type\":')",
    "not_an_object": "send(frame(b'[1, 2, 3]'))",
    "unknown_type": "send(frame(b'{\"type\":\"pwn\",\"id\":1}'))",
    "reply_from_sandbox": ("send(frame(b'{\"type\":\"reply\",\"id\":1,\"ok\":true,"
                           "\"value\":\"forged\"}'))"),
    "result_of_another_run": "send(result_frame(12345, b'\"forged\"'))",
    "non_finite_result": "send(result_frame(run_id, b'NaN'))",
    "garbage_flood": "send(b'\\x00\\x00\\x00\\x08' + b'\\x00' * 8 + bytes(range(256)) * 4096)",
}

# The late result: the run is answered properly, then a forged result follows it,
# meant for the next run (which the host must not take as its own).
LATE = """
import threading

def forge(run_id):
    time.sleep(0.3)
    for guess in (run_id, (run_id or 0) + 1, 1, 2):
        send_raw(frame(b'{"type":"result","id":' + json.dumps(guess).encode() +
                       b',"ok":true,"value":"forged","stdout":"","stdout_truncated":false,'
                       b'"error":null}'))

threading.Thread(target=forge, args=(run,), daemon=True).start()
"""


def frames_code(attack: str) -> str:
    """The plain Python that the armed hostile server runs as its next run: attack
    ``attack``."""
    return _FRAMES_PRELUDE.replace("ATTACK", FRAMES[attack])


# ------------------------------------------------------------------------- scene


def _backend(kind: str, image: str, *, hostile: bool) -> Any:
    if kind == "subprocess":
        from toolscript.runtime.backends.subprocess import SubprocessBackend

        return SubprocessBackend(pool_size=0, test_hooks=hostile)
    from toolscript.runtime.backends.docker.backend import DockerBackend

    return DockerBackend(image, pool_size=0, isolation="process", test_hooks=hostile)


@dataclass
class Figures:
    """Host-side figures of one attack."""

    rss_growth_mb: float = 0.0
    thread_growth: int = 0
    run_s: float | None = None
    """The hostile run's duration (frame attacks), against ``HOSTILE_LIMITS.wall_time_s``."""
    failures: list[str] = field(default_factory=list)
    """What went wrong for the others (empty: every check passed)."""
    detail: Any = None
    """What the attack reported from inside, or the hostile run's result."""


class Scene:
    """The hostile runtime, a sibling session and ``n`` neighbour runtimes (module docstring)."""

    def __init__(self, kind: str, image: str = "", n: int = 3) -> None:
        self.kind = kind
        self.image = image
        self.hostile = Runtime([double], backend=_backend(kind, image, hostile=True),
                               limits=HOSTILE_LIMITS)
        shared = _backend(kind, image, hostile=False)
        self.neighbours = [Runtime([double], backend=shared) for _ in range(n)]
        self.sibling = self.hostile.session()
        self.sessions = [self.sibling] + [rt.session() for rt in self.neighbours]
        for session in self.sessions:
            assert session.run(CHECK).value == CHECK_VALUE
        self.attacker: Any = None

    def victims(self) -> list[int]:
        """The pids an attacker would aim at: every other session's sandbox (as it sees them)."""
        return [int(s.sandbox.ready_info["pid"]) for s in self.sessions if s.sandbox is not None]

    def arm(self, code: str) -> Any:
        """Open a fresh hostile session and run ``code`` unrestricted in it; its result.

        An attacker that hurt itself (died, went silent) answers with a string
        saying so: what matters is what happened to the others.
        """
        self.attacker = self.hostile.session()
        assert self.attacker.run("1").value == 1
        handle = self.attacker.sandbox
        source = ATTEMPT + code.replace("VICTIMS", repr(self.victims()))
        try:
            handle.send({"type": "test_exec", "code": source})
            reply = handle.recv(30.0)
        except Exception as exc:
            return f"the attacker did not answer: {type(exc).__name__}: {exc}"
        assert reply["type"] == "test_result", reply
        assert reply["ok"], f"{reply['error']}\n{reply.get('traceback', '')}"
        return reply["value"]

    def check_others(self) -> list[str]:
        """Run the check in every other session, old and new; what went wrong."""
        failures: list[str] = []

        def check(name: str, result: RunResult) -> None:
            if not result.ok or result.value != CHECK_VALUE:
                failures.append(f"{name}: {result.error or result.value!r}")

        names = [SIBLING, *(f"neighbour {i}" for i in range(1, len(self.sessions)))]
        for name, session in zip(names, self.sessions, strict=True):
            check(f"{name}, opened before", session.run(CHECK))
        for name, runtime in zip(names, [self.hostile, *self.neighbours], strict=True):
            try:
                with runtime.session() as session:
                    check(f"{name}, a new session", session.run(CHECK))
            except Exception as exc:
                failures.append(f"{name}, a new session: {type(exc).__name__}: {exc}")
        if self.kind == "subprocess":
            try:
                with Runtime([double], backend=_backend(self.kind, self.image,
                                                        hostile=False)) as fresh:
                    check("a runtime created after", fresh.run(CHECK))
            except Exception as exc:
                failures.append(f"a runtime created after: {type(exc).__name__}: {exc}")
        return failures

    def held(self, attack: str) -> Figures:
        """Held attack ``attack``: arm it, check the others while it holds, disarm."""
        rss, threads = host_rss_mb(), host_threads()
        figures = Figures(detail=self.arm(HELD[attack]))
        figures.failures = self.check_others()
        figures.rss_growth_mb = host_rss_mb() - rss
        figures.thread_growth = host_threads() - threads
        self.disarm()
        return figures

    def frames(self, attack: str, code: str | None = None) -> Figures:
        """Frame attack ``attack``: the hostile run meets it; measure, then check the others."""
        rss, threads = host_rss_mb(), host_threads()
        self.attacker = self.hostile.session()
        assert self.attacker.run("1").value == 1
        arm(self.attacker.sandbox)
        peak = _PeakRss()
        t0 = time.monotonic()
        try:
            result: Any = self.attacker.run(code or frames_code(attack))
        except Exception as exc:  # the rule: never raised out of run(); reported as failure
            result = exc
        figures = Figures(run_s=time.monotonic() - t0, detail=result)
        figures.rss_growth_mb = peak.stop() - rss
        figures.thread_growth = host_threads() - threads
        if attack == "late_result" and isinstance(result, RunResult):
            time.sleep(0.6)  # the forged frames are on their way
            second = self.attacker.run("2")
            figures.detail = second
            if second.ok and second.value != 2:
                figures.failures.append(f"the next run took a forged result: {second.value!r}")
        elif not isinstance(result, RunResult):
            figures.failures.append(f"run() raised {type(result).__name__}: {result}")
        elif result.ok:
            figures.failures.append(f"the hostile frames became a result: {result.value!r:.80}")
        self.disarm()
        figures.failures += self.check_others()
        return figures

    def disarm(self) -> None:
        """Close the hostile session (its sandbox is killed with what it holds)."""
        if self.attacker is not None:
            self.attacker.close()
            self.attacker = None

    def close(self) -> None:
        """Close every session and runtime."""
        self.disarm()
        for session in self.sessions:
            session.close()
        for runtime in [self.hostile, *self.neighbours]:
            runtime.close()


class _PeakRss:
    """Samples this process's RSS every 20 ms until stopped; the peak (MiB)."""

    def __init__(self) -> None:
        self.peak = host_rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, host_rss_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, host_rss_mb())

