"""Host processes SIGKILLed at each crash point, then resumed: no journaled call and no
idempotent call runs twice (the driver is ``benchmarks/durable_faults.py``, whose default
run, 200 scripts on every backend, is the full sweep; the suite runs a smaller one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IN_SUITE = {"inprocess": 30, "subprocess": 10, "docker": 5}
"""Scripts per backend in the suite (a forked host per step; process backends start
sandboxes too); ``python -m benchmarks.durable_faults`` runs 200 on every backend."""


def _sweep(tmp_path: Path, backend: str, scripts: int) -> dict:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.durable_faults", str(out),
                           "--scripts", str(scripts), "--backends", backend],
                          capture_output=True, text=True, timeout=580, cwd=ROOT)
    assert out.exists(), proc.stdout + proc.stderr
    report = json.loads(out.read_text())[backend]
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

