"""Host processes SIGKILLed at each crash point, then resumed: no journaled call and no
idempotent call runs twice (the harness is ``faultharness.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).with_name("faultharness.py")
IN_SUITE = {"inprocess": 200, "subprocess": 25, "docker": 10}
"""Scripts per backend in the suite (a forked host per step; process backends start
sandboxes too); the ``slow`` sweep runs 200 on every backend."""


def _sweep(tmp_path: Path, backend: str, scripts: int) -> dict:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(HARNESS), str(out), "--scripts", str(scripts),
                           "--backend", backend], capture_output=True, text=True, timeout=580)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    print(json.dumps({k: v for k, v in report.items() if k != "failures"}))  # the figures
    return report


def _check(report: dict, scripts: int) -> None:
    assert report["failures"] == []
    assert report["completed"] == scripts
    kills = report["kills"]
    assert all(kills[kind] >= scripts // 5 for kind in kills), kills  # every point was hit
    assert report["duplicates_journaled"] == 0
    assert report["duplicates_idempotent"] == 0
    # Plain writes in flight at a crash ran again: reported, at most one per such crash.
    assert report["at_least_once_plain"] <= report["in_flight_crashes"]


def test_crash_points_never_duplicate_journaled_or_idempotent_calls(
        backend_name: str, tmp_path: Path) -> None:
    scripts = IN_SUITE[backend_name]
    _check(_sweep(tmp_path, backend_name, scripts), scripts)


@pytest.mark.slow
def test_crash_points_full_sweep(backend_name: str, tmp_path: Path) -> None:
    _check(_sweep(tmp_path, backend_name, 200), 200)
