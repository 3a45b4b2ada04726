"""A session looks for its neighbours: their processes, files and mounts must not exist for it.

Two sessions of one fork server (the subprocess backend's, and one docker
container's in ``isolation="process"``, where both share the container's
kernel namespaces but for the fork server's private view): the attacker runs
unrestricted code inside its production-walled sandbox (the tests' entry
point, as code that escaped the restricted interpreter would) and goes after
the other session by every route the walls leave: ``stat``/``lstat``/
``readlink``/``access`` of its ``/proc`` entries (which Landlock does not
mediate), a scan of every pid the namespace can have, the mount table, the
paths every host has, the descriptors it holds, and the system calls that
would leave the view (``chroot``, ``unshare``, ``setns``, ``mount``,
``umount2``, ``pivot_root``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from walled import Walled

from toolscript import Runtime

KINDS = ["subprocess", pytest.param("docker-process", marks=pytest.mark.docker)]

SELF = """
import os, threading
result = {"pid": os.getpid(), "parent": os.getppid(),
          "threads": sorted(t.native_id for t in threading.enumerate() if t.native_id)}
"""

LOOK = """
import os, json
other = json.loads(OTHER)
targets = [other["pid"], other["parent"], *other["threads"], 1]
found = {}
for pid in targets:
    for name, probe in (("stat", os.stat), ("lstat", os.lstat), ("access", os.access),
                        ("readlink exe", os.readlink), ("readlink cwd", os.readlink),
                        ("readlink root", os.readlink), ("open status", open)):
        path = f"/proc/{pid}" + {"readlink exe": "/exe", "readlink cwd": "/cwd",
                                  "readlink root": "/root", "open status": "/status"
                                  }.get(name, "")
        outcome = attempt(lambda: probe(path, os.F_OK) if probe is os.access else probe(path))
        if outcome.startswith("ALLOWED") and outcome != "ALLOWED: False":
            found[f"{name} {path}"] = outcome
seen = []
# Every pid of a container, the low range of the host's, and the ones it knows of.
for pid in sorted({*range(1, 1 << 15), os.getpid(), *targets}):
    try:
        os.lstat(f"/proc/{pid}")
    except OSError:
        continue
    seen.append(pid)
mounts = {path: attempt(lambda: open(path).read(200))
          for path in ("/proc/self/mountinfo", "/proc/self/mounts", "/proc/mounts",
                       f"/proc/{other['pid']}/mountinfo", "/proc/1/mountinfo")}
paths = {path: attempt(lambda: os.lstat(path).st_mode)
         for path in ("/etc", "/tmp", "/var", "/run", "/sys", "/dev/shm",
                      "/proc/sys", "/proc/kcore", "/.host", "/opt/toolscript/../../etc")}
directories = []
for fd in range(4096):
    try:
        import stat as _stat
        if _stat.S_ISDIR(os.fstat(fd).st_mode):
            directories.append(fd)
    except OSError:
        pass
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x20000, 0x10000000, 0x20000000
_kept = []

def c(text):  # the address of a C string that stays alive for the call
    _kept.append(ctypes.create_string_buffer(text))
    return ctypes.addressof(_kept[-1])

calls = {
    "chroot": attempt(lambda: raw("chroot", c(b"/"))),
    "unshare user+mount": attempt(lambda: raw("unshare", CLONE_NEWUSER | CLONE_NEWNS)),
    "unshare mount": attempt(lambda: raw("unshare", CLONE_NEWNS)),
    "unshare pid": attempt(lambda: raw("unshare", CLONE_NEWPID)),
    "setns": attempt(lambda: raw("setns", 0, 0)),
    "umount2 /": attempt(lambda: raw("umount2", c(b"/"), 2)),
    "mount proc": attempt(lambda: raw("mount", c(b"proc"), c(b"/proc"), c(b"proc"), 0, 0)),
    "pivot_root": attempt(lambda: raw("pivot_root", c(b"/usr"), c(b"/usr"))),
    "write /": attempt(lambda: os.open("/planted", os.O_WRONLY | os.O_CREAT, 0o600)),
}
result = {"found": found, "seen": seen, "self": os.getpid(), "mounts": mounts, "paths": paths,
          "directories": directories, "calls": calls}
"""


class Pair:
    """Two walled sessions of one runtime, forked by one fork server."""

    def __init__(self, kind: str, image: str) -> None:
        if kind == "subprocess":
            from toolscript.runtime.backends.subprocess import SubprocessBackend

            backend: Any = SubprocessBackend(pool_size=0, test_hooks=True)
        else:
            from toolscript.runtime.backends.docker.backend import DockerBackend

            backend = DockerBackend(image, pool_size=0, isolation="process", test_hooks=True)
        self.kind = kind
        self.backend = backend
        self.runtime = Runtime(backend=backend)
        self.attacker = Walled(self.runtime)
        self.victim = Walled(self.runtime)

    def close(self) -> None:
        """Close both sessions and the runtime."""
        self.attacker.close()
        self.victim.close()


@pytest.fixture(params=KINDS)
def pair(request: pytest.FixtureRequest) -> Iterator[Pair]:
    """Two sessions of one fork server, on each kind of backend that forks them."""
    image = request.getfixturevalue("docker_image_tag") if request.param != "subprocess" else ""
    built = Pair(request.param, image)
    try:
        yield built
    finally:
        built.close()


def test_a_session_finds_nothing_of_its_neighbour(pair: Pair) -> None:
    if pair.kind == "docker-process":  # the two share a container, or this proves nothing
        assert len(pair.backend.containers()) == 1
    other = pair.victim.exec(SELF)
    own = pair.attacker.exec(SELF)
    assert other["parent"] == own["parent"]  # one fork server: the same namespaces but the view
    out = pair.attacker.exec(LOOK.replace("OTHER", repr(json.dumps(other))))
    assert out["found"] == {}, out["found"]
    assert out["self"] in out["seen"]  # the scan does find what it may see
    assert set(out["seen"]) <= {own["pid"], *own["threads"]}, out["seen"]
    for path, outcome in out["mounts"].items():
        assert outcome.startswith("refused"), (path, outcome)
    for path, outcome in out["paths"].items():
        assert outcome == "refused: ENOENT", (path, outcome)
    assert out["directories"] == [], "a descriptor of a directory would lead out of the view"
    for name, outcome in out["calls"].items():
        assert outcome.startswith("refused"), (name, outcome)
    assert pair.victim.session.run("40 + 2").value == 42  # and the neighbour is untouched


def test_the_view_is_reported_and_its_capabilities_are_gone(pair: Pair) -> None:
    walls = pair.attacker.walls
    assert walls["private_view"]["active"], walls["private_view"]
    assert "verified: /proc shows only itself" in walls["private_view"]["detail"]
    caps = pair.attacker.exec("""
result = {line.split(":")[0]: line.split()[1] for line in open(f"/proc/{os.getpid()}/status")
          if line.startswith("Cap")}
""")
    assert set(caps.values()) == {"0000000000000000"}, caps
    assert pair.runtime.isolation()["private_view"].active
