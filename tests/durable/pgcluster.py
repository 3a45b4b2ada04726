"""A throwaway PostgreSQL cluster for the journal-store tests: Debian's server
binaries, ``initdb`` + ``pg_ctl`` in a temporary directory, run as a non-root
user (``postgres``, or the current user when not root), trust auth on 127.0.0.1."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_bin() -> Path | None:
    """The directory of Debian's PostgreSQL server binaries, if installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield its ``postgresql://`` URL; stop and delete it."""
    bindir = server_bin()
    assert bindir is not None
    root = Path(tempfile.mkdtemp(prefix="toolscript-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", _free_port()
    try:
        subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust",
                        "-U", "toolscript", "--no-sync"], check=True, capture_output=True)
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l",
                        str(root / "log"), "-o",
                        f"-p {port} -k {root} -c listen_addresses=127.0.0.1", "start"],
                       check=True, capture_output=True)
        yield f"postgresql://toolscript@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
