"""Sandbox interpreters run with the string hash seed the host chose (issue 30).

A set of strings iterates in the order its interpreter's seed gives it. Each
launch path (a new interpreter, a zygote's clone, a container over the socket
or attached stdio, a fork server in a container) must run the script with the
seed its backend names, the same as plain CPython with that ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from backend_marks import DOCKER_BACKENDS, backend_options
from toolscript.runtime.backends.base import SandboxSpec
from toolscript.runtime.backends.hashseed import (
    MAX_SEED,
    check_hash_seed,
    host_hash_seed,
    new_hash_seed,
    seed_environment,
)
from toolscript.runtime.backends.subprocess import SubprocessBackend, sandbox_command
from toolscript.runtime.limits import Limits

from toolscript import Runtime
from toolscript.errors import ConfigurationError

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
SCRIPT = f"list({set(WORDS)!r})"


def cpython_order(seed: int) -> list[str]:
    """The order plain CPython iterates the set in with ``seed``."""
    out = subprocess.run([sys.executable, "-c", f"print(repr({SCRIPT}))"], check=True,
                         env={"PYTHONHASHSEED": str(seed)}, capture_output=True, text=True)
    order: list[str] = eval(out.stdout)
    return order


def run_with(backend: Any) -> list[str]:
    with Runtime(backend=backend) as runtime:
        result = runtime.run(SCRIPT)
    assert result.ok, result.error
    order: list[str] = result.value
    return order


def test_two_seeds_give_two_orders() -> None:
    """The check below can fail: these seeds order the set differently."""
    assert cpython_order(7) != cpython_order(8)


@pytest.mark.parametrize("zygote", [True, False], ids=["zygote", "new-interpreter"])
@pytest.mark.parametrize("seed", [7, 8, MAX_SEED])
def test_subprocess_sandboxes_run_with_the_backend_seed(zygote: bool, seed: int) -> None:
    backend = SubprocessBackend(hash_seed=seed, zygote=zygote, pool_size=0)
    assert backend.hash_seed == seed
    assert run_with(backend) == cpython_order(seed)


def test_a_spec_with_another_seed_gets_a_sandbox_with_that_seed() -> None:
    """What a resume asks for: not the zygote's seed, nor a pooled sandbox's."""
    backend = SubprocessBackend(hash_seed=7, pool_size=1)
    try:
        handle = backend.start(SandboxSpec(limits=Limits(), hash_seed=8))
        try:
            assert handle.hash_seed == 8
        finally:
            handle.kill()
        pooled = backend.start(SandboxSpec(limits=Limits()))
        try:
            assert pooled.hash_seed == 7
        finally:
            pooled.kill()
    finally:
        backend.shutdown()


def test_each_backend_draws_its_own_random_seed() -> None:
    seeds = {SubprocessBackend(pool_size=0, zygote=False).hash_seed for _ in range(4)}
    assert len(seeds) == 4 and all(0 < s <= MAX_SEED for s in seeds)
    assert 0 < new_hash_seed() <= MAX_SEED


def test_the_interpreter_gets_nothing_but_the_seed() -> None:
    """-I would ignore PYTHONHASHSEED: its other parts stay (no user site, no script
    directory on sys.path), and the environment holds only the seed."""
    command = sandbox_command()
    assert "-I" not in command and {"-s", "-P"} <= set(command[1:3])
    assert seed_environment(5) == {"PYTHONHASHSEED": "5"}


@pytest.mark.parametrize("bad", [-1, MAX_SEED + 1, "7", 7.0, True, None])
def test_a_bad_seed_is_a_configuration_error(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="hash_seed must be an int"):
        check_hash_seed(bad)
    if bad is not None:
        with pytest.raises(ConfigurationError, match="hash_seed"):
            SubprocessBackend(hash_seed=bad, pool_size=0)


def test_the_host_seed_is_known_only_when_its_environment_pins_it() -> None:
    code = ("from toolscript.runtime.backends.hashseed import host_hash_seed\n"
            "print(host_hash_seed())")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    for value, expected in (("123", "123"), ("random", "None"), (None, "None")):
        run_env = env if value is None else {**env, "PYTHONHASHSEED": value}
        out = subprocess.run([sys.executable, "-c", code], env=run_env, cwd="/",
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected
    assert host_hash_seed() == (int(os.environ["PYTHONHASHSEED"]) if os.environ.get(
        "PYTHONHASHSEED", "").isdigit() else None)


@pytest.mark.docker
@pytest.mark.parametrize("backend_name", DOCKER_BACKENDS)
@pytest.mark.parametrize("options", [
    {"transport": "socket"},
    {"transport": "attach"},
    {"transport": "socket", "isolation": "process"},
], ids=["socket", "attach", "process"])
def test_containers_run_with_the_backend_seed(backend_name: str, options: dict[str, Any]) -> None:
    from toolscript.runtime.backends.docker.backend import DockerBackend

    opts = {**backend_options(backend_name, 0), **options}
    assert run_with(DockerBackend(hash_seed=8, **opts)) == cpython_order(8)  # closed with it
    # (a resumed run's container with the paused run's seed: tests/durable/test_pause_resume.py)


def test_python_variables_of_an_image_environment() -> None:
    from toolscript.runtime.backends.docker.image import python_variables

    env = ["PATH=/bin", "LANG=C.UTF-8", "PYTHONHASHSEED=3", "PYTHON_VERSION=3.11.2",
           "PYTHONPATH=/tmp", "PYTHONSTARTUP=/x", "PYTHON_CPU_COUNT=64", "PYTHONINSPECT"]
    assert python_variables(env) == ("PYTHONINSPECT", "PYTHONPATH", "PYTHONSTARTUP",
                                     "PYTHON_CPU_COUNT")


@pytest.mark.docker
@pytest.mark.parametrize("backend_name", DOCKER_BACKENDS)
def test_an_image_that_sets_pythonpath_is_refused(backend_name: str) -> None:
    """Without -E an image's ENV PYTHONPATH would put its folders first on the
    sandbox's sys.path: the backend refuses such an image before any container."""
    import io

    from toolscript.runtime.backends.docker.backend import DockerBackend
    from toolscript.runtime.backends.docker.image import docker_client

    from toolscript.errors import ImageError

    client = docker_client()
    base = backend_options(backend_name)["image"]
    tag = f"toolscript-test-pythonpath:{os.getpid()}"
    dockerfile = f"FROM {base}\nENV PYTHONPATH=/tmp PYTHONSTARTUP=/tmp/s.py\n".encode()
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    try:
        with pytest.raises(ImageError, match="PYTHONPATH, PYTHONSTARTUP"):
            DockerBackend(image=tag, pool_size=0)
    finally:
        client.images.remove(tag, force=True)
