"""The warm pool: fast acquire, refill, dead idle containers replaced."""

from __future__ import annotations

from typing import Any

from dockerhelpers import container_running, my_running_containers, spec
from toolscript.runtime.backends.docker.backend import DockerBackend
from waiting import wait_until


def test_warm_acquire_is_a_pool_hit_and_the_pool_refills(docker_client: Any, image: str) -> None:
    before = my_running_containers(docker_client)
    with DockerBackend(image, pool_size=2, docker_client=docker_client) as backend:
        pool = backend.warm(None)
        assert pool is not None and pool.wait_ready(60)
        warm = my_running_containers(docker_client) - before
        h = backend.start(None)
        try:
            assert pool.stats.hits == 1 and h.id in warm  # handed out, not started
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
    before = my_running_containers(docker_client)
    with DockerBackend(image, pool_size=2, docker_client=docker_client) as backend:
        pool = backend.warm(None)
        assert pool is not None and pool.wait_ready(60)
        victim, survivor = sorted(my_running_containers(docker_client) - before)
        docker_client.api.kill(victim)  # dies while idle
        wait_until(lambda: not container_running(docker_client, victim), what="container dead")
        # The victim's place in the idle queue is the pool's business: within two
        # acquisitions it is found dead and discarded, and never handed out.
        first = backend.start(None)
        second = backend.start(None)
        try:
            assert first.id == survivor and second.id != victim
            assert pool.stats.discarded_dead == 1
            for h in (first, second):
                h.send({"type": "ping"})
                assert h.recv(5) == {"type": "pong"}
            assert pool.wait_ready(60)
        finally:
            first.close()
            second.close()
        gone = [c for c in docker_client.api.containers(all=True) if c["Id"] == victim]
        assert gone == []


def test_shutdown_removes_idle_containers(docker_client: Any, image: str) -> None:
    before = my_running_containers(docker_client)
    backend = DockerBackend(image, pool_size=3, docker_client=docker_client)
    pool = backend.warm(None)
    assert pool is not None and pool.wait_ready(60)
    ids = my_running_containers(docker_client) - before
    assert len(ids) == 3
    backend.shutdown()
    backend.shutdown()
    left = {c["Id"] for c in docker_client.api.containers(all=True)}
    assert not ids & left
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
