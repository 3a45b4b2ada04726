"""``toolscript image build|status`` and ``toolscript gc``: the sandbox image and containers.

``python -m toolscript.runtime.cli.image build|status ...`` is the same as
``toolscript image ...``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolscript.runtime.backends.docker.image import (
    DEFAULT_BASE_IMAGE,
    DEFAULT_IMAGE,
    OFFLINE_BASE_IMAGE,
    build_image,
    image_status,
)

from toolscript.errors import BackendUnavailable, ImageError


def add_image_commands(subparsers: Any) -> None:
    """Add ``image build`` and ``image status`` to an argparse subparsers object."""
    image = subparsers.add_parser("image", help="build or inspect the sandbox container image")
    sub = image.add_subparsers(dest="image_command", required=True)
    build = sub.add_parser("build", help="build the sandbox image (offline: see --base-image)")
    build.add_argument(
        "--base-image",
        default=DEFAULT_BASE_IMAGE,
        help=f"base image with python3 + venv (default {DEFAULT_BASE_IMAGE}; "
        f"offline: {OFFLINE_BASE_IMAGE} from scripts/make-base-image.sh)",
    )
    build.add_argument("--tag", default=DEFAULT_IMAGE, help=f"image tag (default {DEFAULT_IMAGE})")
    build.add_argument(
        "--wheelhouse",
        type=Path,
        default=None,
        help="folder of wheels to install instead of downloading RestrictedPython",
    )
    build.add_argument("--pull", action="store_true", help="pull a newer base image first")
    build.add_argument("-q", "--quiet", action="store_true", help="print only the image id")
    build.set_defaults(handler=cmd_image_build)
    status = sub.add_parser("status", help="show whether the sandbox image exists and matches")
    status.add_argument("--tag", default=DEFAULT_IMAGE)
    status.set_defaults(handler=cmd_image_status)


def add_gc_command(subparsers: Any) -> None:
    """Add ``gc [--all]``: remove stale sandbox containers (docker backend)."""
    gc = subparsers.add_parser("gc", help="remove stale sandbox containers (docker backend)")
    gc.add_argument(
        "--all",
        action="store_true",
        help="remove every toolscript container, also those of running programs",
    )
    gc.set_defaults(handler=cmd_gc)


def cmd_gc(args: argparse.Namespace) -> int:
    """``toolscript gc [--all]``."""
    from toolscript.runtime.backends.docker.backend import gc

    removed = gc(all=args.all)
    print(f"removed {len(removed)} container(s)" + (": " + ", ".join(removed) if removed else ""))
    return 0


def cmd_image_build(args: argparse.Namespace) -> int:
    """``toolscript image build``."""
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    image_id = build_image(
        base_image=args.base_image,
        tag=args.tag,
        wheelhouse=args.wheelhouse,
        pull=args.pull,
        log=log,
    )
    print(image_id if args.quiet else f"built {args.tag} ({image_id})")
    return 0


def cmd_image_status(args: argparse.Namespace) -> int:
    """``toolscript image status``: 0 when the image exists and the host can use it."""
    st = image_status(args.tag)
    if not st.exists:
        print(f"{st.tag}: missing (run `toolscript image build --tag {st.tag}`)")
        return 1
    state = "up to date" if st.up_to_date else ("stale" if st.compatible else "INCOMPATIBLE")
    size = f"{(st.size or 0) / 1e6:.0f} MB"
    print(
        f"{st.tag}: {state}; protocol {st.protocol} (host {st.expected_protocol}); "
        f"sources {st.source_digest} (host {st.expected_digest}); {size}; {st.image_id}"
    )
    return 0 if st.compatible else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m toolscript.runtime.cli.image build|status ...``: only the image commands
    (used by ``scripts/test-setup.sh``)."""
    parser = argparse.ArgumentParser(prog="python -m toolscript.runtime.cli.image")
    add_image_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["image", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.handler(args))
    except (ImageError, BackendUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
