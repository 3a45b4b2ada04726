"""The built wheel holds every module of the three mapped packages."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAPPED = {"runtime": "toolscript/runtime", "sandbox": "toolscript/sandbox",
          "tools": "toolscript/tools", "toolscript": "toolscript"}


def test_wheel_contains_every_module(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = tmp_path.glob("toolscript-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"toolscript/py.typed", "toolscript/runtime/sandbox.Dockerfile"}
    for folder, target in MAPPED.items():
        for path in (ROOT / folder).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            expected.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    missing = sorted(expected - names)
    assert not missing, f"modules missing from the wheel (add the package to pyproject): {missing}"
