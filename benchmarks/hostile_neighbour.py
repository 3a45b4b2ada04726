"""Host-side figures of the hostile-neighbour scene: ``python -m benchmarks.hostile_neighbour``.

Runs every attack of ``tests/security/hostile.py`` once (one production-walled
sandbox running unrestricted code; a sibling session and three other runtimes
checked while it attacks) and prints, per backend and attack, the host's RSS
growth (peak, for frame attacks), its thread count after the attack, the
hostile run's duration against its wall limit, and whether every other
session ran correctly. The figures in docs/threat-model.md ("Hostile
neighbour") come from here. Options: ``--backends subprocess,docker-process``.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "tests", "security"))

from hostile import FRAMES, HELD, HOSTILE_LIMITS, LATE, Figures, Scene  # noqa: E402


def _image() -> str:
    from toolscript.runtime.backends.docker.image import (
        DEFAULT_IMAGE,
        OFFLINE_BASE_IMAGE,
        ensure_image,
    )

    image = os.environ.get("TOOLSCRIPT_IMAGE", DEFAULT_IMAGE)
    status = ensure_image(image, base_image=os.environ.get("TOOLSCRIPT_BASE_IMAGE",
                                                           OFFLINE_BASE_IMAGE))
    if not status.up_to_date:
        raise SystemExit(f"the sandbox image is not up to date: {status}")
    return image


def measure(kind: str) -> list[tuple[str, Figures]]:
    """Every attack on backend ``kind``, each in a fresh scene."""
    image = _image() if kind != "subprocess" else ""
    rows: list[tuple[str, Figures]] = []
    attacks = [(name, "held") for name in HELD] + [(name, "frames") for name in FRAMES]
    attacks.append(("late_result", "late"))
    for name, how in attacks:
        scene = Scene(kind, image)
        try:
            if how == "held":
                figures = scene.held(name)
            elif how == "frames":
                figures = scene.frames(name)
            else:
                figures = scene.frames(name, LATE)
        finally:
            scene.close()
        rows.append((name, figures))
    return rows


def _got(detail: object) -> str:
    """What a held attack reported from inside, in a few words."""
    if isinstance(detail, dict) and detail and not any(
            str(v).startswith("ALLOWED") for v in detail.values()):
        return ", ".join(f"{k}={v}" for k, v in detail.items())[:80]
    if isinstance(detail, dict):  # flags on its own descriptors are not a route
        routes = [k for k in detail if not k.startswith(("nonblock", "flock"))]
        return f"{len(routes)} routes allowed" if routes else "no route allowed"
    return str(detail)[:80]


def main(argv: list[str] | None = None) -> int:
    """Print one table per backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="subprocess,docker-process")
    args = parser.parse_args(argv)
    wall = HOSTILE_LIMITS.wall_time_s
    for kind in args.backends.split(","):
        print(f"\n{kind} (hostile wall limit {wall:g} s)")
        print("| attack | host RSS growth (MiB) | host threads after | hostile run (s) | others "
              "| attacker got |")
        print("|---|---:|---:|---:|---|---|")
        for name, f in measure(kind):
            run = f"{f.run_s:.2f}" if f.run_s is not None else "-"
            others = "all correct" if not f.failures else f"{len(f.failures)} failed"
            got = _got(f.detail) if f.run_s is None else ""
            print(f"| {name} | {f.rss_growth_mb:.1f} | {f.thread_growth:+d} | {run} | {others} "
                  f"| {got} |")
            for failure in f.failures:
                print(f"|   | {failure[:120]} | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
