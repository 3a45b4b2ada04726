"""The adversarial script suite in docker's ``isolation="process"`` mode.

The red-team tables of ``tests/security`` (escape walks, computed names, format
strings, frames, facades, builtins recovery, the escape classes, the data
facades, shared tool results and boundary arguments) run on every backend
through the ``probe`` fixture; that covers a container per session. This file
runs the same attacks, with the same expected outcomes, in a session forked
inside a shared warm container, where the interpreter, the walls and the
audit hook are set up by the fork server instead: a difference in that
start-up must not open anything the other modes refuse.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dockerhelpers import process_backend

# The security modules import their helpers by name (their conftest does this too), and
# pytest imports them by name as well: the same module objects either way.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "security"))

import test_boundary
import test_escape_classes
import test_escapes
import test_facades_data
import test_shared_state
from security_helpers import SECURITY_TOOLS, Attack, Probe

from tests.security.conftest import SUITE_LIMITS
from toolscript import Runtime

TABLES: dict[str, list[Attack]] = {
    "escapes": list(test_escapes.ALL),
    "classes": list(test_escape_classes.ALL_DEFAULT),
    "facades": list(test_facades_data.ALL),
    "shared": list(test_shared_state.SHARED_WRITES),
    "boundary": list(test_boundary.ARGUMENTS),
}
GUARDED = frozenset({"escapes", "classes"})
"""Tables whose attacks a guard refuses: the sandbox must survive them."""
CASES = [pytest.param(table, attack, id=f"{table}-{attack.id}")
         for table, attacks in TABLES.items() for attack in attacks]


@pytest.fixture(scope="module")
def forked_probe(docker_client: Any, image: str) -> Iterator[Probe]:
    """One long-lived probe on a process-isolated runtime (reset before each attack)."""
    backend = process_backend(docker_client, image, pool_size=2)
    runtime = Runtime(tools=SECURITY_TOOLS, backend=backend, limits=SUITE_LIMITS)
    probe = Probe(runtime)
    try:
        yield probe
    finally:
        probe.close()
        runtime.close()
        backend.shutdown()


def test_the_tables_are_all_here() -> None:
    """Every table is non-empty (a renamed table must not silently drop out)."""
    assert all(TABLES.values()), {name: len(rows) for name, rows in TABLES.items()}


@pytest.mark.parametrize(("table", "attack"), CASES)
def test_attack_in_a_forked_session(table: str, attack: Attack, forked_probe: Probe) -> None:
    result = forked_probe.run(attack.code)
    attack.expect.check(result, attack.code)
    if table in GUARDED:
        assert not result.session_restarted, "a refused attack must not kill the sandbox"
