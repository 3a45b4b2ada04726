"""A short, bounded run of each atheris harness in ``fuzz/`` (coverage-guided).

Each harness runs a fixed number of inputs from a copy of the seed corpus
in a subprocess; a crash, a hang or an assertion inside a target fails the
test. The long run is documented in ``fuzz/README.md``. Skipped when atheris
is not installed (``pip install atheris``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # excluded by the fast loop: -m 'not slow'

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
RUNS = {"protocol": 8_000, "schema": 2_000, "policy": 1_000}


@pytest.mark.parametrize("target", sorted(RUNS))
def test_bounded_atheris_run(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(FUZZ / "corpus" / target, corpus)
    env = {**os.environ, "PYTHONPATH": str(FUZZ)}
    proc = subprocess.run(
        [sys.executable, str(FUZZ / f"fuzz_{target}.py"), f"-runs={RUNS[target]}", "-timeout=10",
         "-rss_limit_mb=2048", f"-artifact_prefix={tmp_path}/", str(corpus)],
        capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path,
    )
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, tail
    assert "Done" in tail, tail
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*")), tail
