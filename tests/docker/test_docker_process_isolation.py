"""``isolation="process"``: sessions are processes forked inside shared, warm containers.

Real engine, real image. The attack tests run unrestricted code in a session
(the sandbox's test flag: production walls, plus the ``test_exec`` message),
as code that escaped the restricted interpreter would, and try to reach
another session of the same container: read its ``/proc`` files, signal it,
trace it, share files with it.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dockerhelpers import container_running, process_backend
from toolscript.runtime.backends.docker.backend import DockerBackend
from toolscript.runtime.backends.docker.process import ContainerProcessHandle

from tests.security.walled import ATTEMPT  # attempt() and raw(), as in the walls tests
from toolscript import Limits, Runtime
from toolscript.errors import ConfigurationError, SandboxStartError


class Session:
    """One session of a runtime, with its sandbox handle, that runs unrestricted test code."""

    def __init__(self, runtime: Runtime) -> None:
        self.session = runtime.session()
        assert self.session.run("1").value == 1  # started and configured as in production
        handle = self.session.sandbox
        assert isinstance(handle, ContainerProcessHandle), handle
        self.handle: ContainerProcessHandle = handle

    @property
    def pid(self) -> int:
        """The sandbox's pid inside its container."""
        return int(self.handle.ready_info["pid"])

    def exec(self, code: str) -> Any:
        """Run ``code`` unrestricted in the sandbox; return its ``result`` variable."""
        source = ATTEMPT + "import signal\n" + textwrap.dedent(code)
        self.handle.send({"type": "test_exec", "code": source})
        reply = self.handle.recv(30.0)
        assert reply["type"] == "test_result", reply
        assert reply["ok"], f"{reply['error']}\n{reply.get('traceback', '')}"
        return reply["value"]

    def answers(self) -> bool:
        """True if the sandbox still runs scripts."""
        return bool(self.session.run("2 + 3").value == 5)


def _backend(client: Any, image: str, **options: Any) -> DockerBackend:
    backend: DockerBackend = process_backend(client, image, **options)
    return backend


@pytest.fixture
def hooked(docker_client: Any, image: str) -> Iterator[Runtime]:
    """A runtime on ``isolation="process"`` whose sandboxes accept test code."""
    backend = _backend(docker_client, image, test_hooks=True, sessions_per_container=4)
    with Runtime(backend=backend) as runtime:
        yield runtime
    backend.shutdown()


@pytest.fixture
def plain(process_runtime: Runtime) -> Runtime:
    """A production runtime on ``isolation="process"`` (with a warm pool)."""
    return process_runtime


# ------------------------------------------------------------------ configuration


def test_process_isolation_needs_the_socket_transport(docker_client: Any, image: str) -> None:
    with pytest.raises(ConfigurationError, match="socket transport"):
        _backend(docker_client, image, transport="attach")


def test_process_isolation_is_refused_for_a_remote_engine(docker_client: Any, image: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # "auto" picks attached stdio for a DOCKER_HOST that is not unix://: no descriptor passing.
    monkeypatch.setenv("DOCKER_HOST", "tcp://engine.invalid:2376")
    with pytest.raises(ConfigurationError, match="isolation='container'"):
        _backend(docker_client, image)


@pytest.mark.parametrize("bad", [{"isolation": "vm"}, {"sessions_per_container": 0}])
def test_bad_isolation_settings_are_refused(docker_client: Any, image: str,
                                            bad: dict[str, Any]) -> None:
    options = {"isolation": "process", **bad}
    with pytest.raises(ConfigurationError):
        DockerBackend(image, docker_client=docker_client, pool_size=0, **options)


def test_container_isolation_stays_the_default(docker_client: Any, image: str) -> None:
    backend = DockerBackend(image, docker_client=docker_client, pool_size=0)
    try:
        assert backend.isolation_mode == "container"
        assert backend.containers() == []
    finally:
        backend.shutdown()


# ------------------------------------------------------------------ walls


def test_forked_session_is_walled(plain: Runtime) -> None:
    report = plain.isolation()
    assert report.missing() == [], report.format()
    # The fork server's view, shared by its sessions: Docker's seccomp profile refuses
    # pivot_root, so the new root was moved onto / and chrooted into; checked from inside.
    assert "chrooted" in report["private_view"].detail, report.format()
    assert "verified: /proc shows only itself" in report["private_view"].detail
    assert "is this sandbox's alone" in report["task_budget"].detail  # a uid of its own
    assert "all five capability sets are empty" in report["capabilities"].detail
    assert "verified" in report["seccomp"].detail  # our filter, on top of Docker's profile
    assert "verified" in report["landlock"].detail
    assert "beyond itself" in report["landlock"].detail  # signal scoping
    assert "sessions x" in report["process_limit"].detail  # the sum of their budgets
    assert plain.run("sum(range(10))").value == 45


SESSION_IDENTITY = """
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    caps = {name: int(fields[name], 16) for name in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                                                     "CapAmb")}
    regain = {}
    for name, call in (("setuid", lambda: os.setuid(0)), ("setgid", lambda: os.setgid(0)),
                       ("setresuid", lambda: os.setresuid(0, 0, 0))):
        try:
            call()
            regain[name] = "done"
        except OSError as exc:
            regain[name] = errno.errorcode.get(exc.errno or 0, str(exc))
    result = {"caps": caps, "uids": os.getresuid(), "gids": os.getresgid(),
              "groups": os.getgroups(), "regain": regain}
"""


def test_sessions_have_distinct_uids_and_no_capability(hooked: Runtime) -> None:
    """Root in the container hands out its uids and keeps its capabilities to itself: a
    session holds none in any set, cannot become root again, and no two live sessions of
    a container share a uid (nor one with the fork server)."""
    sessions = [Session(hooked) for _ in range(3)]
    seen = [s.exec(SESSION_IDENTITY) for s in sessions]
    containers = {s.handle.container.name for s in sessions}
    assert len(containers) == 1, containers  # siblings of one container
    block = sessions[0].handle.container.uids
    for identity in seen:
        assert identity["caps"] == dict.fromkeys(identity["caps"], 0), identity
        uid = identity["uids"][0]
        assert identity["uids"] == [uid] * 3 and identity["gids"] == [uid] * 3, identity
        assert identity["groups"] == [], identity
        assert block.start <= uid < block.stop and uid != 0, (identity, block)
        assert "done" not in identity["regain"].values(), identity
    assert len({identity["uids"][0] for identity in seen}) == 3, seen


@pytest.mark.parametrize("max_pids", [1, 64])
def test_the_container_pids_limit_covers_every_session_budget(
        docker_client: Any, image: str, max_pids: int) -> None:
    """The container's pids limit is the sum of its sessions' RLIMIT_NPROC plus the fork
    server's room, also when ``Limits.max_pids`` is below the least budget a sandbox takes."""
    backend = _backend(docker_client, image, sessions_per_container=3)
    with Runtime(backend=backend, limits=Limits(max_pids=max_pids)) as runtime:
        assert runtime.run("1").value == 1
        (container,) = backend.containers()
        budget = max(max_pids, 16)
        assert container.task_budget == budget
        assert container.config.pids_limit == 3 * budget + 8
        report = runtime.isolation()
        assert f"RLIMIT_NPROC {budget} " in report["process_limit"].detail, report.format()
    backend.shutdown()


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        return {k: v.strip() for k, v in (line.split(":", 1) for line in f)}


def test_the_fork_server_is_root_with_only_its_three_capabilities(
        docker_client: Any, hooked: Runtime) -> None:
    """The container's fork server (this host sees its pid) holds SETUID, SETGID and
    SETPCAP and nothing else, under no_new_privs: the container's SYS_ADMIN and SYS_CHROOT
    were for its private view alone, and are gone from every set, the bounding set too;
    every other container setting is a sandbox container's."""
    session = Session(hooked)
    container = session.handle.container
    status = _status(container.zygote_pid)
    wanted = (1 << 6) | (1 << 7) | (1 << 8)  # CAP_SETGID, CAP_SETUID, CAP_SETPCAP
    assert status["Uid"].split() == ["0"] * 4, status["Uid"]
    for name in ("CapPrm", "CapEff", "CapBnd"):
        assert int(status[name], 16) == wanted, (name, status[name])
    assert int(status["CapInh"], 16) == 0 and int(status["CapAmb"], 16) == 0
    assert status["NoNewPrivs"] == "1"
    host = docker_client.api.inspect_container(container.id)["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and sorted(host["CapAdd"]) == [
        "SETGID", "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_CHROOT"]
    assert host["ReadonlyRootfs"] and host["NetworkMode"] == "none"
    assert host["SecurityOpt"] == ["no-new-privileges"]  # Docker's default seccomp profile
    assert not host["Privileged"] and host["PidsLimit"] == container.config.pids_limit


def test_sessions_share_a_container_as_separate_processes(hooked: Runtime) -> None:
    a, b = Session(hooked), Session(hooked)
    assert a.handle.container is b.handle.container
    assert a.pid != b.pid
    assert a.exec("result = os.getsid(0) == os.getpid()")  # each leads its own session
    assert a.exec("import random; result = random.getrandbits(64)") != b.exec(
        "import random; result = random.getrandbits(64)")


def test_a_session_cannot_read_another_sessions_proc(hooked: Runtime) -> None:
    a, b = Session(hooked), Session(hooked)
    for path in ("status", "environ", "cmdline", "maps", "mem", "fd"):
        outcome = a.exec(f"result = attempt(lambda: os.listdir('/proc/{b.pid}/{path}') "
                         f"if '{path}' == 'fd' else open('/proc/{b.pid}/{path}', 'rb').read(1))")
        assert outcome.startswith("refused"), (path, outcome)
    assert a.exec("result = attempt(lambda: os.listdir('/proc'))").startswith("refused")
    assert a.exec("result = attempt(lambda: os.listdir('/tmp'))").startswith("refused")
    # Nothing written by one session for another: no writes anywhere.
    assert a.exec("result = attempt(lambda: open('/tmp/drop', 'w'))").startswith("refused")
    assert b.answers()


@pytest.mark.parametrize("how", [
    "os.kill({pid}, signal.SIGKILL)",
    "raw('kill', {pid}, 9)",
    "raw('tgkill', {pid}, {pid}, 9)",
    "raw('tkill', {pid}, 9)",
    "os.killpg({pid}, signal.SIGKILL)",
    "raw('kill', -1, 9)",
    "raw('kill', 1, 9)",
    "raw('pidfd_open', {pid}, 0)",
    "raw('ptrace', 16, {pid}, 0, 0)",
    "raw('process_vm_readv', {pid}, 0, 0, 0, 0, 0)",
])
def test_a_session_cannot_signal_or_trace_another(hooked: Runtime, how: str) -> None:
    a, b = Session(hooked), Session(hooked)
    call = how.format(pid=b.pid)
    outcome = a.exec(f"result = attempt(lambda: {call})")
    assert outcome.startswith("refused"), (call, outcome)
    assert b.answers()
    assert a.answers()


def test_a_crashing_session_leaves_the_others_running(hooked: Runtime) -> None:
    a, b = Session(hooked), Session(hooked)
    container = a.handle.container
    a.handle.send({"type": "test_exec", "code": "import ctypes; ctypes.string_at(0)"})
    with pytest.raises(Exception):  # noqa: B017 - the sandbox is gone, whatever the wording
        a.handle.recv(30.0)
    assert a.handle.process.poll() == -signal.SIGSEGV
    assert a.handle.death_reason() is not None
    assert b.answers()
    assert container.alive
    c = Session(hooked)
    assert c.handle.container is container
    assert c.answers()


def test_death_reasons_arrive(docker_client: Any, image: str, hooked: Runtime) -> None:
    backend = _backend(docker_client, image)
    with Runtime(backend=backend, limits=Limits(memory_mb=256)) as limited:
        result = limited.run("x = 'a' * (1024 * 1024 * 1024)\nlen(x)")
        assert not result.ok
        assert result.error is not None and result.error.type == "memory_limit", result.error
    a = Session(hooked)
    a.handle.kill()
    assert a.handle.death_reason() == "killed"
    b = Session(hooked)
    b.handle.send({"type": "test_exec", "code": "import os; os._exit(3)"})
    with pytest.raises(Exception):  # noqa: B017
        b.handle.recv(30.0)
    assert b.handle.death_reason() == "sandbox_crashed"
    assert b.handle.process.poll() == 3  # the exit status forwarded by the fork server


def test_sessions_per_container_caps_a_container(docker_client: Any, image: str) -> None:
    backend = _backend(docker_client, image, sessions_per_container=2)
    try:
        with Runtime(backend=backend) as runtime:
            sessions = [runtime.session() for _ in range(3)]
            for session in sessions:
                assert session.run("1").value == 1
            containers = {id(s.sandbox.container) for s in sessions}  # type: ignore[union-attr]
            assert len(containers) == 2
            assert len(backend.containers()) == 2
            for session in sessions:
                session.close()
            # Emptied, a container that is not the last one with room is removed.
            assert len(backend.containers()) == 1
    finally:
        backend.shutdown()


def test_pool_drain_kills_everything(docker_client: Any, image: str) -> None:
    backend = _backend(docker_client, image, pool_size=1, sessions_per_container=2)
    runtime = Runtime(backend=backend)
    held = [runtime.session() for _ in range(3)]
    for session in held:
        assert session.run("1").value == 1
    handles = [s.sandbox for s in held]
    ids = {c.id for c in backend.containers()}
    assert len(ids) == 2
    backend.shutdown()
    for container_id in ids:
        assert not container_running(docker_client, container_id)
    for handle in handles:
        assert isinstance(handle, ContainerProcessHandle)
        handle.process.wait(30)  # the pidfd says it ended (no wall clock involved)
        assert not handle.is_alive()
    assert backend.containers() == []
    with pytest.raises(SandboxStartError, match="shut down"):  # no new container either
        held[0].run("1")
    runtime.close()


def test_fork_server_death_takes_its_sessions_and_a_new_container_follows(
        hooked: Runtime) -> None:
    a = Session(hooked)
    container = a.handle.container
    # The fork server is the container's init's only child: killing it ends the container.
    os.kill(container.zygote_pid, signal.SIGKILL)
    a.handle.process.wait(30)
    assert not a.handle.is_alive()
    b = Session(hooked)
    assert b.handle.container is not container
    assert b.answers()


# ------------------------------------------------------------------ conformance


def test_corpus_matches_cpython_in_process_isolation(plain: Runtime) -> None:
    corpus = Path(__file__).parent.parent / "corpus"
    sys.path.insert(0, str(corpus))
    try:
        import corpus_tools
        import reference
    finally:
        sys.path.remove(str(corpus))
    runtime = Runtime(corpus_tools.ALL_TOOLS, backend=plain.backend, approve=lambda _r: True,
                      limits=Limits(wall_time_s=60, max_output_chars=1_000_000))
    mismatches = []
    for path in reference.script_paths():
        corpus_tools.reset_outbox()
        want = reference.run_file(path)
        corpus_tools.reset_outbox()
        result = runtime.run(path.read_text("utf-8"))
        if not result.ok:
            mismatches.append(f"{path.name}: {result.error}")
        elif (result.value, result.stdout) != want:
            mismatches.append(f"{path.name}: {result.value!r:.200} != {want[0]!r:.200}")
    assert not mismatches, "\n".join(mismatches)


def test_doctor_reports_the_private_view_of_process_mode(image: str, tmp_path: Path) -> None:
    """``toolscript doctor`` with a profile in ``isolation="process"``: the view is the
    fork server's, verified from inside a session, and can be required."""
    import json
    import subprocess

    (tmp_path / "toolscript.toml").write_text(
        '[profiles.p]\nbackend = "docker"\nrequire_isolation = ["private_view", "task_budget"]\n'
        f'[profiles.p.backend_options]\nisolation = "process"\nimage = "{image}"\n')
    done = subprocess.run([sys.executable, "-m", "toolscript", "doctor", "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TOOLSCRIPT_PROFILE": "p"})
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["required_missing"] == []
    view = out["walls"]["private_view"]
    assert view["active"] and "chrooted" in view["detail"], view
    assert "verified: /proc shows only itself" in view["detail"], view
