"""End to end through the public Runtime with backend="docker"."""

from __future__ import annotations

from typing import Any

from toolscript.runtime.backends.docker.backend import flush_removals
from toolscript.runtime.limits import Limits
from toolscript.runtime.runtime import Runtime


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _ours(client: Any) -> list[str]:
    flush_removals()
    import os

    labels = ["org.toolscript.managed=1", f"org.toolscript.owner-pid={os.getpid()}"]
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": labels})]


def test_runtime_on_docker(docker_client: Any, image: str) -> None:
    limits = Limits(memory_mb=128, wall_time_s=3)
    opts = {"image": image, "pool_size": 1, "docker_client": docker_client}
    with Runtime(tools=[add], backend="docker", backend_options=opts, limits=limits) as rt:
        res = rt.run("total = sum(add(i, 1) for i in range(10))\nprint(total)\ntotal")
        assert res.ok and res.value == 55 and res.stdout == "55\n"
        assert len(res.tool_calls) == 10
        with rt.session() as s:
            assert s.run("x = 5").ok
            assert s.run("x * 2").value == 10
            bomb = s.run("x = []\nwhile True:\n    x.append('a' * 10_000_000)")
            assert not bomb.ok and bomb.error is not None
            assert bomb.error.type == "memory_limit"
            loop = s.run("while True:\n    pass")
            assert not loop.ok and loop.error is not None and loop.error.type == "timeout"
            assert s.run("1 + 1").value == 2  # the session goes on
    assert _ours(docker_client) == []
