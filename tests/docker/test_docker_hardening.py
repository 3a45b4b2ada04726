"""The sandbox container is hardened: asserted from the host and from inside."""

from __future__ import annotations

import os
from typing import Any

from dockerhelpers import exec_python, spec
from toolscript.runtime.backends.docker.backend import DockerBackend


def test_container_hardening_seen_from_the_host(backend: DockerBackend) -> None:
    os.environ["TOOLSCRIPT_TEST_SECRET"] = "do-not-leak"
    try:
        h = backend.start(spec(memory_mb=200, cpus=0.5, max_pids=40))
    finally:
        del os.environ["TOOLSCRIPT_TEST_SECRET"]
    try:
        attrs = h.attrs()
        hc, cfg = attrs["HostConfig"], attrs["Config"]
        assert hc["NetworkMode"] == "none"
        assert set(attrs["NetworkSettings"]["Networks"] or {}) <= {"none"}
        assert hc["ReadonlyRootfs"] is True
        assert hc["CapDrop"] == ["ALL"] and not hc["CapAdd"]
        assert "no-new-privileges" in hc["SecurityOpt"]
        assert not any("seccomp=unconfined" in o for o in hc["SecurityOpt"])
        assert hc["Privileged"] is False
        assert cfg["User"] == "10001:10001"
        assert hc["Memory"] == 200 * 1024 * 1024
        assert hc["MemorySwap"] == hc["Memory"]  # no swap
        assert hc["NanoCpus"] == 500_000_000
        assert hc["PidsLimit"] == 40
        assert "noexec" in hc["Tmpfs"]["/tmp"] and "nosuid" in hc["Tmpfs"]["/tmp"]
        assert not hc.get("Binds")
        if backend.transport == "socket":  # the one mount: the protocol channel, read-only
            (mount,) = attrs["Mounts"]
            assert mount["Destination"] == "/run/toolscript" and mount["RW"] is False
            assert mount["Type"] == "bind" and not os.path.exists(mount["Source"])
            assert hc["LogConfig"]["Type"] == "local"  # stderr only, for crash reports
        else:
            assert not attrs["Mounts"]
            assert hc["LogConfig"]["Type"] == "none"
        assert hc["AutoRemove"] is False
        assert cfg["Labels"]["org.toolscript.managed"] == "1"
        env = " ".join(cfg["Env"] or [])
        assert "do-not-leak" not in env and "TOOLSCRIPT_TEST_SECRET" not in env
        assert cfg["Entrypoint"][0] == "/opt/toolscript/venv/bin/python"
    finally:
        h.close()


def test_container_hardening_seen_from_inside(backend: DockerBackend, docker_client: Any) -> None:
    h = backend.start(None)
    try:
        code, out = exec_python(
            docker_client,
            h.id,
            "import os, socket\n"
            "st = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()"
            " if ':\\t' in l)\n"
            "print('uid', os.getuid(), os.getgid())\n"
            "print('capeff', st['CapEff'].strip(), 'capbnd', st['CapBnd'].strip())\n"
            "print('nonewprivs', st['NoNewPrivs'].strip(), 'seccomp', st['Seccomp'].strip())\n"
            "print('ifaces', sorted(l.split(':')[0].strip()"
            " for l in open('/proc/net/dev').read().splitlines()[2:]))\n"
            "for path in ('/etc/x', '/opt/toolscript/x', '/tmp/x'):\n"
            "    try:\n"
            "        open(path, 'w').write('x'); print('writable', path)\n"
            "    except OSError as e:\n"
            "        print('readonly', path, e.errno)\n"
            "try:\n"
            "    socket.create_connection(('1.1.1.1', 53), timeout=2); print('network yes')\n"
            "except OSError:\n"
            "    print('network no')\n",
        )
    finally:
        h.close()
    assert code == 0, out
    assert "uid 10001 10001" in out
    assert "capeff 0000000000000000 capbnd 0000000000000000" in out
    assert "nonewprivs 1 seccomp 2" in out
    assert "ifaces ['lo']" in out
    assert "readonly /etc/x" in out and "readonly /opt/toolscript/x" in out
    assert "writable /tmp/x" in out  # scratch tmpfs only
    assert "network no" in out


def test_image_holds_only_the_sandbox(backend: DockerBackend, docker_client: Any) -> None:
    h = backend.start(None)
    try:
        code, out = exec_python(
            docker_client,
            h.id,
            "import importlib.util as u\n"
            "for m in ('toolscript.sandbox', 'RestrictedPython', 'toolscript.runtime',"
            " 'toolscript.tools', 'pip', 'docker', 'jsonschema'):\n"
            "    print(m, u.find_spec(m) is not None)\n"
            "import os, shutil\n"
            "print('programs', sorted(p for p in ('sh', 'bash', 'dash', 'ls', 'cat', 'apt-get',"
            " 'dpkg', 'perl', 'pip', 'pip3', 'curl', 'find') if shutil.which(p, path='/bin:/sbin:"
            "/usr/bin:/usr/sbin:/usr/local/bin:/usr/local/sbin')))\n"
            "print('setuid', [p for d in ('/bin', '/usr/bin', '/sbin', '/usr/sbin')"
            " for p in (os.path.join(d, f) for f in os.listdir(d))"
            " if os.path.isfile(p) and os.stat(p).st_mode & 0o6000])\n",
        )
    finally:
        h.close()
    assert code == 0, out
    assert "toolscript.sandbox True" in out and "RestrictedPython True" in out
    for absent in ("toolscript.runtime", "toolscript.tools", "pip", "docker", "jsonschema"):
        assert f"{absent} False" in out
    assert "setuid []" in out
    assert "programs []" in out
