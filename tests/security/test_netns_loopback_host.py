"""Attack: on a root host whose only interface is loopback, sessions share a network.

The fork server used to give up ``CAP_SYS_ADMIN`` (which its children need for a
network namespace of their own) whenever it saw no interface but loopback, taking
that for "a docker container without a network". On a root host in such a
namespace (a CI runner, a systemd unit with ``PrivateNetwork=``, ``unshare -n``)
every sandbox then stayed in the host's namespace: each other's and the host's
loopback services (TCP on 127.0.0.1, abstract Unix sockets) in reach of any
socket the seccomp filter might one day let through, and a wall report saying
"isolated before the sandbox started". The right condition is the docker
fork server's own flag (``WallConfig.network_from_container``), which no host sets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from toolscript.sandbox.walls.config import WallConfig

PROBE = textwrap.dedent("""
    import json, os
    from toolscript import Runtime
    from toolscript.sandbox.walls.namespaces import interfaces

    def netns(pid):
        return os.readlink(f"/proc/{pid}/ns/net")

    with Runtime(backend="subprocess") as runtime:
        out = {"host": netns("self"), "interfaces": interfaces(),
               "sandboxes": [], "reports": []}
        sessions = [runtime.session() for _ in range(2)]
        for session in sessions:
            assert session.run("1").ok
            info = session.sandbox.ready_info
            out["sandboxes"].append(netns(info["pid"]))
            out["reports"].append(info["walls"]["network"])
        for session in sessions:
            session.close()
    print(json.dumps(out))
""")


def _in_loopback_only_namespace() -> dict[str, object]:
    done = subprocess.run(["unshare", "--net", sys.executable, "-c", PROBE],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.skipif(os.geteuid() != 0, reason="the fork server holds CAP_SYS_ADMIN only as "
                    "root; unprivileged, each sandbox makes a user namespace of its own")
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) (util-linux)")
def test_sandboxes_of_a_loopback_only_root_host_have_network_namespaces_of_their_own() -> None:
    seen = _in_loopback_only_namespace()
    assert seen["interfaces"] == [], seen  # the case: nothing but loopback
    host, sandboxes = seen["host"], seen["sandboxes"]
    assert isinstance(sandboxes, list) and len(sandboxes) == 2
    assert sandboxes[0] != sandboxes[1], f"two sandboxes share a network namespace: {seen}"
    assert host not in sandboxes, f"a sandbox shares the host's network namespace: {seen}"
    reports = seen["reports"]
    assert isinstance(reports, list)
    for report in reports:
        assert report["active"] and "its own network namespace" in report["detail"], report


def test_no_host_config_says_the_network_comes_from_a_container() -> None:
    """Only the docker backend's fork server sets the flag; the default and every
    mapping a user writes without it leave it off."""
    assert WallConfig().network_from_container is False
    assert WallConfig.from_mapping({"uid_range": [3000, 4000]}).network_from_container is False
    assert WallConfig.from_json(WallConfig().to_json()).network_from_container is False
    with pytest.raises(ValueError, match="network_from_container"):
        WallConfig(network_from_container="yes")  # type: ignore[arg-type]
