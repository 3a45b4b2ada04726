"""The conformance corpus: every model-style script gives the same value and
output in the sandbox as under plain CPython, on every backend."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from toolscript import Limits, Runtime

CORPUS = Path(__file__).parent / "corpus"
sys.path.insert(0, str(CORPUS))
import corpus_tools  # noqa: E402
import reference  # noqa: E402

SCRIPTS = reference.script_paths()
TARGET_SHARE = 0.98


def _approve_writes(request: Any) -> bool:
    return True


@pytest.fixture(scope="module")
def expected() -> dict[str, tuple[Any, str]]:
    results = {}
    for path in SCRIPTS:
        corpus_tools.reset_outbox()
        results[path.name] = reference.run_file(path)
    return results


def test_corpus_is_large_enough() -> None:
    assert len(SCRIPTS) >= 100


def test_corpus_matches_cpython(backend_name: str, make_runtime: Any,
                                expected: dict[str, tuple[Any, str]]) -> None:
    runtime: Runtime = make_runtime(
        corpus_tools.ALL_TOOLS, approve=_approve_writes, pool_size=2,
        limits=Limits(wall_time_s=60, max_output_chars=1_000_000),
    )
    mismatches = []
    for path in SCRIPTS:
        corpus_tools.reset_outbox()
        result = runtime.run(path.read_text("utf-8"))
        want_value, want_stdout = expected[path.name]
        if not result.ok:
            mismatches.append(f"{path.name}: {result.error}")
        elif (result.value, result.stdout) != (want_value, want_stdout):
            mismatches.append(f"{path.name}: value/stdout differ: {result.value!r:.300} "
                              f"!= {want_value!r:.300}")
    share = 1 - len(mismatches) / len(SCRIPTS)
    report = "\n".join(mismatches)
    assert share >= TARGET_SHARE, f"{share:.1%} identical on {backend_name}:\n{report}"
    # Below 100 %, every difference must be a known, documented one.
    assert not mismatches, f"{share:.1%} identical on {backend_name}; differences:\n{report}"
