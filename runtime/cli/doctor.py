"""``toolscript doctor``: which OS walls the sandboxes get here, and why not the others.

It starts one sandbox of the chosen backend (the profile's, else
``subprocess``) with the profile's backend options, prints the wall report
that sandbox sent (:class:`~toolscript.runtime.isolation.IsolationReport`),
with the configuration and profile in force (and how far it is trusted),
and exits 1 if a wall named in ``require_isolation`` (the profile's, plus
``--require``) is missing, else 0.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from typing import Any

from toolscript.runtime.isolation import IsolationReport, inprocess_report, required_walls
from toolscript.runtime.names import BACKEND_NAMES

EXIT_OK = 0
EXIT_MISSING = 1


def isolation_report(backend: str,
                     backend_options: dict[str, Any] | None = None) -> IsolationReport:
    """The walls a sandbox of ``backend`` gets with these options (one sandbox is started)."""
    if backend == "inprocess":
        return inprocess_report()
    from toolscript.runtime.runtime import Runtime

    options = {**(backend_options or {}), "pool_size": 0}
    with Runtime(backend=backend, backend_options=options) as runtime:
        return runtime.isolation()


def host_line() -> str:
    """Where the report was made: OS, kernel, machine, Python."""
    return (f"host: {platform.system()} {platform.release()} {platform.machine()}, "
            f"Python {platform.python_version()}")


def config_line(profile: Any) -> str:
    """Which configuration and profile are in force (and how far they are trusted)."""
    if profile is None:
        return "config: none found (defaults: backend subprocess, approve default)"
    return str(profile.describe())


def cmd_doctor(args: argparse.Namespace) -> int:
    """``toolscript doctor [--backend B] [--require WALL]... [--json]``."""
    profile = getattr(args, "profile_settings", None)
    backend = args.backend or (profile.backend if profile is not None else "subprocess")
    options: dict[str, Any] = {}
    required: list[str] = list(args.require)
    if profile is not None:
        if profile.backend == backend:
            options = dict(profile.backend_options)
        required = [*profile.require_isolation, *required]
    names = required_walls(required)
    report = isolation_report(backend, options)
    absent = [name for name in names if not report.active(name)]
    if args.json:
        out = {**report.to_dict(), "required": list(names), "required_missing": absent,
               "config": None if profile is None else profile.to_dict()}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write(host_line() + "\n" + report.format())
        sys.stdout.write(config_line(profile) + "\n")
        if absent:
            sys.stdout.write(f"required but missing: {', '.join(absent)}\n")
        elif report.missing() and not names:
            sys.stdout.write("to refuse to run without a wall: require_isolation = [...] "
                             "(Runtime argument or profile key)\n")
    return EXIT_MISSING if absent else EXIT_OK


def add_doctor_command(sub: Any) -> None:
    """Register ``toolscript doctor``."""
    parser = sub.add_parser("doctor", help="show which OS walls sandboxes get on this machine")
    parser.add_argument("--backend", default=None, choices=BACKEND_NAMES,
                        help="backend to check (default: the profile's, else subprocess)")
    parser.add_argument("--require", action="append", default=[], metavar="WALL",
                        help="exit 1 if this wall is missing (repeatable; 'all' for every "
                        "wall); added to the profile's require_isolation")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=cmd_doctor, builds_runtime=True)  # the profile in force
