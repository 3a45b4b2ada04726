"""The warm pool: fast acquire, refill, dead idle containers replaced."""

from __future__ import annotations

import time
from typing import Any

from dockerhelpers import spec
from toolscript.runtime.backends.docker import DockerBackend


def test_warm_acquire_is_fast_and_the_pool_refills(docker_client: Any, image: str) -> None:
    with DockerBackend(image, pool_size=2, docker_client=docker_client) as backend:
        pool = backend.warm(None)
        assert pool is not None and pool.wait_ready(60)
        t0 = time.perf_counter()
        h = backend.start(None)
        waited = time.perf_counter() - t0
        try:
            assert waited < 0.05, f"warm acquire took {waited * 1e3:.1f} ms"
            assert pool.stats.hits == 1
            h.send({"type": "ping"})
            assert h.recv(5) == {"type": "pong"}
            assert pool.wait_ready(60)  # refilled to 2 in the background
            assert pool.idle == 2
        finally:
            h.close()
        # never reused: a new session gets another container
        h2 = backend.start(None)
        assert h2.id != h.id
        h2.close()


def test_containers_dying_while_idle_are_replaced(docker_client: Any, image: str) -> None:
    with DockerBackend(image, pool_size=2, docker_client=docker_client) as backend:
        pool = backend.warm(None)
        assert pool is not None and pool.wait_ready(60)
        idle = list(pool._idle)
        docker_client.api.kill(idle[0].id)  # dies while idle
        time.sleep(0.3)
        h = backend.start(None)
        try:
            assert h.id == idle[1].id
            assert pool.stats.discarded_dead == 1
            h.send({"type": "ping"})
            assert h.recv(5) == {"type": "pong"}
            assert pool.wait_ready(60)
        finally:
            h.close()
        gone = [c for c in docker_client.api.containers(all=True) if c["Id"] == idle[0].id]
        assert gone == []


def test_shutdown_removes_idle_containers(docker_client: Any, image: str) -> None:
    backend = DockerBackend(image, pool_size=3, docker_client=docker_client)
    pool = backend.warm(None)
    assert pool is not None and pool.wait_ready(60)
    ids = [h.id for h in pool._idle]
    backend.shutdown()
    backend.shutdown()
    left = {c["Id"] for c in docker_client.api.containers(all=True)}
    assert not set(ids) & left
    # after shutdown, starts are cold and still work
    h = backend.start(None)
    h.close()


def test_other_limits_get_their_own_pool(docker_client: Any, image: str) -> None:
    with DockerBackend(image, pool_size=1, docker_client=docker_client) as backend:
        a = backend.warm(spec(memory_mb=128))
        b = backend.warm(None)
        assert a is not None and b is not None and a is not b
        assert a.wait_ready(60)
        h = backend.start(spec(memory_mb=128))
        try:
            assert h.attrs()["HostConfig"]["Memory"] == 128 * 1024 * 1024
        finally:
            h.close()
