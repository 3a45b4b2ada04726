"""Fixtures of the adversarial suite.

``probe`` runs attacks on the current backend (``backend_name`` from the
top-level conftest) in one long-lived session per backend; ``host_intact``
asserts that a test left the host process's shared state as it found it. At
the end of the suite no sandbox process or container of this process may
remain.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from security_helpers import (
    SECURITY_TOOLS,
    Probe,
    host_fingerprint,
    my_containers,
    new_sandbox_children,
    sandbox_children,
)

from toolscript import Limits, Runtime

SUITE_LIMITS = Limits(wall_time_s=5.0, memory_mb=256, max_output_chars=10_000,
                      max_tool_calls=200, tool_timeout_s=5.0)
"""Limits of the probe runtimes: short enough that contained attacks end quickly."""


def backend_options(name: str, pool_size: int = 1) -> dict[str, object]:
    """Constructor options of a backend in these tests (as in ``tests/conftest.py``)."""
    if name == "docker":
        from toolscript.runtime.backends.docker.image import DEFAULT_IMAGE

        return {"image": os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE), "pool_size": pool_size}
    return {}


@pytest.fixture(scope="session")
def _probes() -> Iterator[dict[str, Probe]]:
    probes: dict[str, Probe] = {}
    yield probes
    for probe in probes.values():
        probe.close()
        probe.runtime.close()


@pytest.fixture
def probe(backend_name: str, _probes: dict[str, Probe]) -> Probe:
    """A :class:`Probe` on the current backend (shared by all tests of the backend)."""
    if backend_name not in _probes:
        runtime = Runtime(tools=SECURITY_TOOLS, backend=backend_name, limits=SUITE_LIMITS,
                          backend_options=backend_options(backend_name, pool_size=2))
        _probes[backend_name] = Probe(runtime)
    return _probes[backend_name]


@pytest.fixture
def host_intact() -> Iterator[None]:
    """Fail if the test changed process-wide state of the host."""
    before = host_fingerprint()
    yield
    after = host_fingerprint()
    changed = sorted(k for k in before if before[k] != after[k])
    assert not changed, f"host state changed by the sandbox: {changed}"


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running() -> Iterator[None]:
    """At the end of the suite: no sandbox child process, no sandbox container
    (none of those started since this suite began; other suites' long-lived
    fixtures are theirs to check)."""
    processes_before = {pid for pid, _ in sandbox_children()}
    containers_before = set(my_containers())
    yield
    deadline = time.monotonic() + 10
    while new_sandbox_children(processes_before) and time.monotonic() < deadline:
        time.sleep(0.2)
    leftovers = new_sandbox_children(processes_before)
    containers = sorted(set(my_containers()) - containers_before)
    assert not leftovers, f"sandbox processes left running: {leftovers}"
    assert not containers, f"sandbox containers left behind: {containers}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what each reachability crawl visited (counts by type), also under ``-q``."""
    from reachability import SUMMARIES

    if SUMMARIES:
        terminalreporter.section("reachability crawl")
        for line in SUMMARIES:
            terminalreporter.write_line(line)
